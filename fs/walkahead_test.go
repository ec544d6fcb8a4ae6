package fs

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// oddNames sort around '/' and '.', mix cases and scripts, and hold spaces
// and a line break; "sub" repeats to make names that are prefixes of others.
var oddNames = []string{"a", "a b", "a-b", "a.b", "a0", "A", "Z", "_x", "sub", "sub-1", "sübdir", "日本", "x\ny", "~t", ".hidden"}

// genTree builds a random tree of directories, files and symlinks (to
// directories, files, outside and dangling) below root.
func genTree(t *testing.T, e *testEnv, rng *rand.Rand) {
	t.Helper()
	var dirs []string
	var gen func(dir string, depth int)
	gen = func(dir string, depth int) {
		dirs = append(dirs, dir)
		for _, n := range rng.Perm(len(oddNames))[:3+rng.Intn(6)] {
			name := oddNames[n]
			p := name
			if dir != "" {
				p = dir + "/" + name
			}
			switch k := rng.Intn(10); {
			case (k < 4 || depth < 2 && k < 7) && depth < 5:
				e.mkdir(t, p)
				gen(p, depth+1)
			case k < 8:
				e.write(t, p, "x\n")
			case k == 8 && len(dirs) > 1:
				e.symlink(t, e.path(dirs[rng.Intn(len(dirs))]), p) // a directory link: listed, never descended
			default:
				e.symlink(t, "../../nowhere", p)
			}
		}
		if rng.Intn(3) == 0 {
			e.write(t, dir+"/.gitignore", "*.log\n")
		}
	}
	gen("", 0)
}

// walkTranscript runs one walk and returns every Enter and Visit call in
// order and the result. Visit skips some directories and may stop.
func walkTranscript(w *Workdir, opts WalkOptions, stopAt int, cancelAt int) (string, WalkResult) {
	var b strings.Builder
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	opts.Enter = func(d *Dir) { fmt.Fprintf(&b, "E %q %d git=%v\n", d.Path, d.Depth, d.Has(".gitignore")) }
	opts.Visit = func(e *WalkEntry) WalkAction {
		n++
		fmt.Fprintf(&b, "V %q %v %d\n", e.Path, e.Type, e.Depth)
		if n == cancelAt {
			cancel()
		}
		if n == stopAt {
			return WalkStop
		}
		if e.Type == TypeDirectory && skipHash(e.Path) {
			return WalkSkipDir
		}
		return WalkContinue
	}
	res, err := w.Walk(ctx, "", opts)
	fmt.Fprintf(&b, "err %v\n", err)
	return b.String(), res
}

// upToVisit cuts a transcript after its n-th visit.
func upToVisit(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "V ") {
			if n--; n == 0 {
				return strings.Join(lines[:i+1], "")
			}
		}
	}
	return s
}

func skipHash(p string) bool {
	h := fnv.New32a()
	h.Write([]byte(p))
	return h.Sum32()%5 == 0
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestWalkReadAheadSameWalk: with directories read ahead by 1 to 4
// goroutines, a walk makes exactly the Enter and Visit calls (same order,
// same depths, same Dir answers) and returns the result of the sequential
// walk, whatever the entry budget (cutting inside and between directories,
// with and without StopAtLimit), skipped directories, a Visit that stops
// or a context cancelled midway, and an Ahead hint that is right, wrong
// or absent. Every goroutine and descriptor is gone after each walk.
func TestWalkReadAheadSameWalk(t *testing.T) {
	e := newEnv(t, ResolverOpenat2)
	genTree(t, e, rand.New(rand.NewSource(16)))
	w, err := e.fs.Workdir("wd")
	if err != nil {
		t.Fatal(err)
	}
	full, fullRes := walkTranscript(w, WalkOptions{MaxEntries: 1 << 30}, 0, 0)
	if strings.Count(full, "\nE ") < 20 || fullRes.Truncated {
		t.Fatalf("tree too small or truncated: %d directories, %+v", strings.Count(full, "\nE "), fullRes)
	}
	total := strings.Count(full, "\nV ")
	baseG, baseFD := runtime.NumGoroutine(), openFDs(t)
	hints := map[string]func(path, name string, depth int) bool{
		"nil":   nil,
		"right": func(path, name string, depth int) bool { return !skipHash(path) },
		"wrong": func(path, name string, depth int) bool { return skipHash(path) || len(name)%2 == 0 },
	}
	cases := 0
	for _, maxEntries := range []int{1 << 30, 1, 4, 9, 23, 57, fullRes.Entries - 1, fullRes.Entries} {
		for _, stopAtLimit := range []bool{false, true} {
			for _, stop := range [][2]int{{0, 0}, {total / 3, 0}, {0, total / 2}} {
				seq, seqRes := walkTranscript(w, WalkOptions{MaxEntries: maxEntries, StopAtLimit: stopAtLimit}, stop[0], stop[1])
				for readers := 1; readers <= 4; readers += 3 {
					for hname, hint := range hints {
						cases++
						opts := WalkOptions{MaxEntries: maxEntries, StopAtLimit: stopAtLimit, ReadAhead: readers, Ahead: hint}
						got, gotRes := walkTranscript(w, opts, stop[0], stop[1])
						what := fmt.Sprintf("max %d stopAtLimit %v stop %v readers %d hint %s", maxEntries, stopAtLimit, stop, readers, hname)
						if stop[1] > 0 {
							// Cancelled: what follows the cancelling visit
							// depends on when each side notices.
							got, seq = upToVisit(got, stop[1]), upToVisit(seq, stop[1])
							gotRes.Entries, seqRes.Entries = 0, 0
						}
						if got != seq || gotRes != seqRes {
							t.Fatalf("%s: read ahead walk differs\n got %+v\n%.3000s\nwant %+v\n%.3000s", what, gotRes, got, seqRes, seq)
						}
						for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() != baseG && time.Now().Before(deadline); {
							runtime.Gosched()
						}
						if g, fd := runtime.NumGoroutine(), openFDs(t); g != baseG || fd != baseFD {
							t.Fatalf("%s: %d goroutines, %d descriptors after the walk; baseline %d, %d", what, g, fd, baseG, baseFD)
						}
					}
				}
			}
		}
	}
	t.Logf("%d walks of %d entries compared", cases, fullRes.Entries)
}
