package search

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// rankTerms are the 4 terms of the ranked-search benchmark: what
// QueryTerms makes of "how does the context deadline timeout cancel".
var rankTerms = []string{"context", "deadline", "timeout", "cancel"}

// cpuTime is the user+system CPU time of who (this process, or its
// finished children), in nanoseconds: on a shared machine it says more
// than the wall clock. Go's own background work (GC) counts in ours.
func cpuTime(who int) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// copyGoroot copies $(go env GOROOT)/src into a temporary directory
// removed when b ends.
func copyGoroot(b *testing.B) string {
	b.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "src")
	if err := exec.Command("cp", "-R", "--no-preserve=all", "--", filepath.Join(strings.TrimSpace(string(out)), "src"), dir).Run(); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkRankGoroot times 4-term ranked searches (ChatGPT's search tool)
// over a copy of GOROOT/src beside ripgrep listing the files that hold any
// of the terms (rg -l -i -e ×4, as bench/mcpalt/search.sh), in one run:
//
//	go test -run '^$' -bench RankGoroot -benchtime 10x ./search
//
// ripgrep stops reading a file at its first match (-l); the ranked search
// reads every file to its end to count each term, its lines and density.
func BenchmarkRankGoroot(b *testing.B) {
	dir := copyGoroot(b)
	e := newTenvAt(b, "go", dir, "SERVERFS_MAX_SEARCH_RESULTS=10000").eng
	for _, q := range rankQueries {
		b.Run("serverfs-search-"+q.name, func(b *testing.B) {
			files := 0
			cpu := cpuTime(syscall.RUSAGE_SELF)
			for b.Loop() {
				r, err := e.Rank(context.Background(), RankRequest{Workdirs: []string{"go"}, Terms: QueryTerms(q.query)})
				if err != nil {
					b.Fatal(err)
				}
				files = r.FilesScanned
				if len(r.Files) == 0 || r.Truncated {
					b.Fatalf("%d results, truncated %v", len(r.Files), r.Truncated)
				}
			}
			b.ReportMetric(float64(files), "files")
			b.ReportMetric(float64(cpuTime(syscall.RUSAGE_SELF)-cpu)/float64(b.N)/1e6, "cpu-ms/op")
		})
		b.Run("rg-l-i-"+q.name, func(b *testing.B) {
			args := []string{"-l", "-i"}
			for _, t := range strings.Fields(q.query) {
				args = append(args, "-e", t)
			}
			rgList(b, append(args, dir))
		})
	}
	// The engine of search_text on one of the terms, counting every
	// matching line (so reading every file to its end, as a ranked
	// search does): the cost of the walk and one term.
	b.Run("search_text-count-1-term", func(b *testing.B) {
		cpu := cpuTime(syscall.RUSAGE_SELF)
		for b.Loop() {
			if _, err := e.Search(context.Background(), Request{Workdir: "go", Query: rankTerms[0], Output: OutputCount, Limit: 10000}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpuTime(syscall.RUSAGE_SELF)-cpu)/float64(b.N)/1e6, "cpu-ms/op")
	})
	for _, variant := range []struct{ name, flag string }{{"rg-l", ""}, {"rg-l-i", "-i"}} {
		b.Run(variant.name, func(b *testing.B) {
			args := []string{"-l"}
			if variant.flag != "" {
				args = append(args, variant.flag)
			}
			for _, t := range rankTerms {
				args = append(args, "-e", t)
			}
			rgList(b, append(args, dir))
		})
	}
}

// rankQueries are the queries of bench/mcpalt/search.sh's ChatGPT search
// cells besides rankTerms': four frequent words (397,623 of 3.3 million
// lines hold one) and four rare ones.
var rankQueries = []struct{ name, query string }{
	{"context", strings.Join(rankTerms, " ")},
	{"frequent", "func return error string"},
	{"rare", "kelvin quokka deadline exceeded"},
}

// rgList times rg with args, as a whole process, with its CPU.
func rgList(b *testing.B, args []string) {
	lines := 0
	cpu := cpuTime(syscall.RUSAGE_CHILDREN)
	for b.Loop() {
		out, err := exec.Command("rg", args...).Output()
		if err != nil {
			b.Fatal(err)
		}
		lines = strings.Count(string(out), "\n")
	}
	b.ReportMetric(float64(lines), "files-listed")
	b.ReportMetric(float64(cpuTime(syscall.RUSAGE_CHILDREN)-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}
