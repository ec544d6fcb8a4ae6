package diff3

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// gitMergeFile runs git merge-file -p with the labels Merge is given and
// returns its output and the number of conflicts (its exit status).
func gitMergeFile(t *testing.T, dir string, base, ours, theirs []byte) ([]byte, int) {
	t.Helper()
	for name, b := range map[string][]byte{"base": base, "ours": ours, "theirs": theirs} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errb, err := runMergeFile(dir)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.Bytes(), 0
	case errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 128:
		return out.Bytes(), ee.ExitCode()
	}
	t.Fatalf("git merge-file: %v: %s", err, errb.String())
	return nil, 0
}

// runMergeFile runs git merge-file -p on the files ours, base and theirs
// in dir, outside any repository and configuration.
func runMergeFile(dir string) (out, errb bytes.Buffer, err error) {
	cmd := exec.Command("git", "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs", "ours", "base", "theirs")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir), "LC_ALL=C"}
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out, errb, err
}

// gitMergeFileRun is one run for the benchmark (conflicts are fine).
func gitMergeFileRun(b *testing.B, dir string) {
	if _, errb, err := runMergeFile(dir); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			b.Fatalf("%v: %s", err, errb.String())
		}
	}
}

// genCase makes a base and two edited versions from seed: lines from a
// small vocabulary (so that lines repeat and the diff has choices to
// make), edits that insert, delete and change, near each other and
// overlapping, some made identically on both sides, CRLF files, files
// without a final newline, empty files.
func genCase(seed int64) (base, ours, theirs []byte) {
	r := rand.New(rand.NewSource(seed))
	vocab := []string{"a", "b", "c", "d", "x", "}", "", "  return", "{", "foo()", "bar", "1", "-"}
	vocab = vocab[:2+r.Intn(len(vocab)-1)]
	eol := "\n"
	if r.Intn(8) == 0 {
		eol = "\r\n"
	}
	line := func() string {
		s := vocab[r.Intn(len(vocab))]
		if r.Intn(4) == 0 {
			s += fmt.Sprint(r.Intn(5))
		}
		e := eol
		if r.Intn(30) == 0 {
			e = "\r\n"
		}
		return s + e
	}
	n, edits := r.Intn(25), 4
	switch r.Intn(20) {
	case 0:
		n = 0
	case 1: // large: the cost heuristics of the diff come into play
		n, edits = 500+r.Intn(2500), 400
	}
	var b []string
	for range n {
		b = append(b, line())
	}
	edit := func(in []string) []string {
		out := append([]string(nil), in...)
		for range r.Intn(edits) {
			pos := 0
			if len(out) > 0 {
				pos = r.Intn(len(out) + 1)
			}
			switch k := r.Intn(3); {
			case k == 0 || len(out) == 0 || pos == len(out): // insert
				var ins []string
				for range 1 + r.Intn(3) {
					ins = append(ins, line())
				}
				out = append(out[:pos], append(ins, out[pos:]...)...)
			case k == 1: // delete
				end := min(len(out), pos+1+r.Intn(3))
				out = append(out[:pos], out[end:]...)
			default: // change
				end := min(len(out), pos+1+r.Intn(3))
				for i := pos; i < end; i++ {
					out[i] = line()
				}
			}
		}
		return out
	}
	join := func(ls []string) []byte {
		s := strings.Join(ls, "")
		if len(s) > 0 && r.Intn(6) == 0 { // no newline at the end
			s = strings.TrimRight(s, "\r\n")
		}
		return []byte(s)
	}
	shuffle := func(in []string) []string {
		// Blocks of lines that all occur on the other side, moved: a
		// long edit script with long snakes, where xdiff's cost
		// heuristics pick the path.
		bl := 20 + r.Intn(20)
		var blocks [][]string
		for i := 0; i < len(in); i += bl {
			blocks = append(blocks, in[i:min(len(in), i+bl)])
		}
		for range len(blocks) / 3 {
			i, j := r.Intn(len(blocks)), r.Intn(len(blocks))
			blocks[i], blocks[j] = blocks[j], blocks[i]
		}
		var out []string
		for _, b := range blocks {
			out = append(out, b...)
		}
		return out
	}
	if big := seed%500 == 0; big || r.Intn(40) == 0 { // numbered lines, moved blocks
		b = b[:0]
		n := 1000 + r.Intn(2000)
		if big { // past 32k lines xdiff's snake heuristic applies
			n = 33000 + r.Intn(2000)
		}
		for i := range n {
			b = append(b, fmt.Sprintf("L%d%s", i/(1+r.Intn(3)), eol))
		}
		o, t := shuffle(b), edit(shuffle(b))
		if r.Intn(2) == 0 {
			t = edit(b)
		}
		return join(b), join(o), join(t)
	}
	o := edit(b)
	var t []string
	switch r.Intn(6) {
	case 0: // the same change on both sides
		t = append([]string(nil), o...)
	case 1: // the same change and one more
		t = edit(o)
	default:
		t = edit(b)
	}
	return join(b), join(o), join(t)
}

// TestMergeAgreesWithGit is the differential test: on generated cases,
// Merge writes what git merge-file -p writes (clean or conflicted) and
// finds as many conflicts. Each mismatch names its seed
// (DIFF3_SEED=<seed> reruns one).
func TestMergeAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed as the oracle")
	}
	dir := t.TempDir()
	first, cases := int64(1), int64(600)
	if s := os.Getenv("DIFF3_SEED"); s != "" {
		fmt.Sscan(s, &first)
		cases = 1
	}
	if s := os.Getenv("DIFF3_CASES"); s != "" {
		fmt.Sscan(s, &cases)
	}
	var gitTime, ourTime time.Duration
	var clean, conflicted, identicalClean, identicalConflict, mismatches int
	for seed := first; seed < first+cases; seed++ {
		base, ours, theirs := genCase(seed)
		t0 := time.Now()
		want, wantN := gitMergeFile(t, dir, base, ours, theirs)
		t1 := time.Now()
		res, err := Merge(base, ours, theirs, Options{Ours: "ours", Theirs: "theirs"})
		gitTime, ourTime = gitTime+t1.Sub(t0), ourTime+time.Since(t1)
		if err != nil {
			t.Errorf("seed %d: %v", seed, err)
			mismatches++
			continue
		}
		got, gotN := res.Merged, len(res.Conflicts)
		if wantN == 127 { // git's exit status stops at 127: count its markers
			wantN = bytes.Count(append([]byte("\n"), want...), []byte("\n<<<<<<< ours"))
		}
		if wantN == 0 {
			clean++
		} else {
			conflicted++
		}
		if gotN != wantN || !bytes.Equal(got, want) {
			mismatches++
			t.Errorf("seed %d: %d conflicts, git %d; merged equal: %v\nbase:%q\nours:%q\ntheirs:%q\ngot:%q\ngit:%q",
				seed, gotN, wantN, bytes.Equal(got, want), base, ours, theirs, got, want)
			continue
		}
		if wantN == 0 {
			identicalClean++
		} else {
			identicalConflict++
		}
	}
	t.Logf("%d cases (git merge-file %v, Merge %v): %d clean, %d conflicted in git; byte-identical output and conflict count: %d clean, %d conflicted; %d mismatches",
		cases, gitTime.Round(time.Millisecond), ourTime.Round(time.Millisecond), clean, conflicted, identicalClean, identicalConflict, mismatches)
	if conflicted < int(cases)/10 || clean < int(cases)/10 {
		t.Errorf("the generator made %d clean and %d conflicted cases: too few of one kind to test", clean, conflicted)
	}
}

// TestMergeConflictRegions: the regions name the lines of each side.
func TestMergeConflictRegions(t *testing.T) {
	base := []byte("a\nb\nc\nd\ne\nf\ng\n")
	ours := []byte("a\nB1\nc\nd\ne\nf\ng\n")
	theirs := []byte("a\nB2\nc\nd\ne\nf\nG\n")
	res, err := Merge(base, ours, theirs, Options{Ours: "ws", Theirs: "main"})
	if err != nil {
		t.Fatal(err)
	}
	want := "a\n<<<<<<< ws\nB1\n=======\nB2\n>>>>>>> main\nc\nd\ne\nf\nG\n"
	if string(res.Merged) != want {
		t.Fatalf("merged %q, want %q", res.Merged, want)
	}
	if len(res.Conflicts) != 1 {
		t.Fatalf("conflicts %+v", res.Conflicts)
	}
	c := res.Conflicts[0]
	if c.Line != 1 || c.OursStart != 1 || c.OursLines != 1 || c.TheirsStart != 1 || c.BaseStart != 1 || c.BaseLines != 1 ||
		string(c.Base) != "b\n" || string(c.Ours) != "B1\n" || string(c.Theirs) != "B2\n" {
		t.Fatalf("conflict %+v", c)
	}
}

// TestMergeRefusals: binary content and inputs over the limits.
func TestMergeRefusals(t *testing.T) {
	if _, err := Merge([]byte("a\x00"), nil, nil, Options{}); err != ErrBinary {
		t.Fatalf("binary: %v", err)
	}
	big := bytes.Repeat([]byte("x\n"), 11)
	if _, err := Merge(nil, big, nil, Options{MaxLines: 10}); err != ErrTooLarge {
		t.Fatalf("lines: %v", err)
	}
	if _, err := Merge(nil, nil, big, Options{MaxBytes: 21}); err != ErrTooLarge {
		t.Fatalf("bytes: %v", err)
	}
}

// hostile is a merge that costs the diff most: many lines that occur
// many times on every side, interleaved differently.
func hostile(lines int) (base, ours, theirs []byte) {
	var b, o, th bytes.Buffer
	for i := range lines {
		b.WriteString([]string{"x\n", "y\n"}[i%2])
		o.WriteString([]string{"x\n", "y\n", "z\n"}[i%3])
		th.WriteString([]string{"y\n", "x\n", "x\n", "z\n"}[i%4])
	}
	return b.Bytes(), o.Bytes(), th.Bytes()
}

// TestMergeHostileBounded: inputs of many repeated lines past the line
// limit are refused at once. Without the limit this merge runs for
// seconds (2 to 9 s and 180 MB for 400k lines on a loaded 2-core
// machine; 0.5 s for 99k, just under the default limit), and the test
// fails.
func TestMergeHostileBounded(t *testing.T) {
	base, ours, theirs := hostile(400_000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := Merge(base, ours, theirs, Options{})
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if err != ErrTooLarge {
		t.Fatalf("400k lines: %v, want ErrTooLarge", err)
	}
	if took > time.Second || after.TotalAlloc-before.TotalAlloc > 16<<20 {
		t.Fatalf("refusing took %v and %d bytes", took, after.TotalAlloc-before.TotalAlloc)
	}
}
