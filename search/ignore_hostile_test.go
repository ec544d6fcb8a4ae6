package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/serverfs/serverfs/internal/errs"
)

// hostileIgnore is ~1 MiB of distinct wildcard-heavy patterns, the kind
// an agent can write into a .gitignore of a rw workdir.
func hostileIgnore() []byte {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20-128; i++ {
		fmt.Fprintf(&b, "**/a*b*c*d*e*f*g*h*i*j*k*l*m*n*o*p*q*r*s*t*u*v*w*x*y*z%d*\n", i)
	}
	return []byte(b.String())
}

// TestSearchHostileIgnoreStopsAtDeadline: a search in a tree whose
// .gitignore files (root and three nested levels) hold 1 MiB of wildcard
// patterns each ends soon after its deadline, without a goroutine left.
// With a regexp compiled per pattern, parsing one such file took ~1 s
// (~10 s under -race) that no deadline could cut, and each entry about as
// long again to match.
func TestSearchHostileIgnoreStopsAtDeadline(t *testing.T) {
	e := newTenv(t)
	if err := os.Mkdir(filepath.Join(e.root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	ign := hostileIgnore()
	dir := ""
	for level := 0; level < 4; level++ {
		e.write(t, filepath.Join(dir, ".gitignore"), ign)
		for i := 0; i < 20; i++ {
			e.write(t, filepath.Join(dir, fmt.Sprintf("%s-abcdefghijklmnopqrstuvwxy-%d.txt", strings.Repeat("a", 100), i)), []byte("hit\n"))
		}
		dir = filepath.Join(dir, "abcdefghijklmnopqrstuvwxy")
	}
	base := runtime.NumGoroutine()
	for _, cancelled := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		if cancelled {
			cancel()
		}
		t0 := time.Now()
		res, err := e.eng.Search(ctx, Request{Workdir: "wd", Query: "hit"})
		d := time.Since(t0)
		cancel()
		if err == nil && res.TruncatedReason != "timeout" {
			// Finishing in time is fine too, if it really did (with
			// room for a loaded machine between its last check and
			// the return).
			if d > time.Second {
				t.Errorf("cancelled=%v: answered after %v without saying timeout", cancelled, d)
			}
		} else if err != nil {
			if c := errs.CodeOf(err); c != errs.SearchTimeout && c != errs.Canceled {
				t.Errorf("cancelled=%v: %v", cancelled, err)
			}
		}
		if d > time.Second { // the old matcher: 2.3-2.9 s under -race
			t.Errorf("cancelled=%v: the search took %v, deadline 200ms", cancelled, d)
		}
		for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() != base && time.Now().Before(deadline); {
			runtime.Gosched()
		}
		if n := runtime.NumGoroutine(); n != base {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, baseline %d\n%s", n, base, buf[:runtime.Stack(buf, true)])
		}
	}
}

// TestSearchIgnoreRulesOverBudget: ignore files nested deeper than the
// memory bound allows (each 1 MiB of one-byte patterns, ~21 MiB parsed)
// make the search fail with READ_LIMIT_EXCEEDED naming the file, rather
// than hold them all (once ~25 MiB per level, without bound) or apply
// some; include_ignored still searches, and so does a search below.
func TestSearchIgnoreRulesOverBudget(t *testing.T) {
	e := newTenv(t)
	if err := os.Mkdir(filepath.Join(e.root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	tiny := []byte(strings.Repeat("a\n", 1<<19))
	e.write(t, ".gitignore", tiny)
	e.write(t, "d/.gitignore", tiny)
	e.write(t, "d/f.txt", []byte("hit\n"))
	_, err := e.eng.Search(context.Background(), Request{Workdir: "wd", Query: "hit"})
	wantCode(t, err, errs.ReadLimitExceeded)
	if se, ok := err.(*errs.Error); !ok || se.Path != "d" {
		t.Errorf("error %v: want the path of the directory whose .gitignore broke the bound", err)
	}
	if res := e.search(t, Request{Query: "hit", IncludeIgnored: true}); res.Returned != 1 {
		t.Errorf("include_ignored: %d matches", res.Returned)
	}
	// One such file is within the bound; two at the root (with
	// .git/info/exclude) are not, and the error names the root.
	os.Remove(filepath.Join(e.root, "d", ".gitignore"))
	if res := e.search(t, Request{Query: "hit"}); res.Returned != 1 {
		t.Errorf("one 1 MiB file: %d matches", res.Returned)
	}
	e.write(t, ".git/info/exclude", tiny)
	_, err = e.eng.Search(context.Background(), Request{Workdir: "wd", Query: "hit"})
	wantCode(t, err, errs.ReadLimitExceeded)
	if se, ok := err.(*errs.Error); !ok || se.Path != "" {
		t.Errorf("error %v: want the root", err)
	}
}
