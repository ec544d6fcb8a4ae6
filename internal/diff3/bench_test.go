package diff3

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the user+system CPU time of this process (who =
// RUSAGE_SELF) or of its waited-for children (RUSAGE_CHILDREN): under a
// loaded machine, the number to compare.
func cpuTime(who int) time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(who, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchCase is a 1,000 to 3,000-line case of the differential test's large
// kind (numbered lines, moved blocks, edits on both sides).
func benchCase() (base, ours, theirs []byte) {
	for seed := int64(1); ; seed++ {
		b, o, t := genCase(seed)
		if len(b) > 10000 && len(b) < 100000 {
			return b, o, t
		}
	}
}

// BenchmarkMerge: diff3.Merge in process (cpu-ns/op: this process's CPU).
// go test -run '^$' -bench . -benchtime 50x ./diff3
func BenchmarkMerge(b *testing.B) {
	base, ours, theirs := benchCase()
	b.SetBytes(int64(len(base) + len(ours) + len(theirs)))
	start := cpuTime(syscall.RUSAGE_SELF)
	for b.Loop() {
		if _, err := Merge(base, ours, theirs, Options{Ours: "ours", Theirs: "theirs"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime(syscall.RUSAGE_SELF)-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkGitMergeFile: the same merge by git merge-file -p (files
// written once; each iteration one process; cpu-ns/op: the processes' CPU).
func BenchmarkGitMergeFile(b *testing.B) {
	base, ours, theirs := benchCase()
	dir := b.TempDir()
	for name, c := range map[string][]byte{"base": base, "ours": ours, "theirs": theirs} {
		if err := os.WriteFile(filepath.Join(dir, name), c, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(base) + len(ours) + len(theirs)))
	start := cpuTime(syscall.RUSAGE_CHILDREN)
	for b.Loop() {
		gitMergeFileRun(b, dir)
	}
	b.ReportMetric(float64(cpuTime(syscall.RUSAGE_CHILDREN)-start)/float64(b.N), "cpu-ns/op")
}
