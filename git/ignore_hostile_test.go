package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/serverfs/serverfs/internal/errs"
)

// TestStatusHostileIgnore: a 1 MiB .gitignore of distinct wildcard
// patterns leaves status equal to git's and quick (with a regexp compiled
// per pattern its parse alone took ~0.8 s, ~2.7 s under -race, and each
// untracked path about as long to match); a cancelled status stops; rules
// in force past gitignore.MaxCostInForce (two nested 1 MiB files of
// one-byte patterns) fail with READ_LIMIT_EXCEEDED rather than answer
// with part of them.
func TestStatusHostileIgnore(t *testing.T) {
	dir := t.TempDir()
	gitCLI(t, dir, "init", "-q", "-b", "main")
	var b strings.Builder
	for i := 0; b.Len() < 1<<20-128; i++ {
		fmt.Fprintf(&b, "**/a*b*c*d*e*f*g*h*i*j*k*l*m*n*o*p*q*r*s*t*u*v*w*x*y*z%d*\n", i)
	}
	b.WriteString("*.log\n!keep.log\n")
	write(t, filepath.Join(dir, ".gitignore"), b.String())
	write(t, filepath.Join(dir, "t.txt"), "t\n")
	gitCLI(t, dir, "add", "-A")
	gitCLI(t, dir, "commit", "-qm", "one")
	long := strings.Repeat("a", 100) + "-abcdefghijklmnopqrstuvwxy"
	for _, p := range []string{"x.log", "keep.log", "q/abcdefghijklmnopqrstuvwxyz7", "q/" + long, long + "/f", "sub/n.txt"} {
		write(t, filepath.Join(dir, p), "u\n")
	}
	var want []string
	for _, l := range strings.Split(gitCLI(t, dir, "status", "--porcelain=v2", "-uall", "--no-renames"), "\n") {
		if p, ok := strings.CutPrefix(l, "? "); ok {
			want = append(want, p)
		}
	}
	r, err := openDir(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	st, err := r.Status(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("status took %v", d)
	}
	var got []string
	for _, e := range st.Entries {
		if e.Staged+e.Unstaged == "??" {
			got = append(got, e.Path)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("untracked\n got %q\nwant %q (git)", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t0 = time.Now()
	if _, err := r.Status(ctx, 100); err == nil {
		t.Error("a cancelled status answered")
	}
	if d := time.Since(t0); d > time.Second {
		t.Errorf("cancelled status took %v", d)
	}

	tiny := strings.Repeat("a\n", 1<<19)
	write(t, filepath.Join(dir, ".gitignore"), tiny)
	write(t, filepath.Join(dir, "sub/.gitignore"), tiny)
	_, err = r.Status(context.Background(), 100)
	if errs.CodeOf(err) != errs.ReadLimitExceeded || !strings.Contains(err.Error(), "sub") {
		t.Errorf("rules over the bound: %v", err)
	}
	os.Remove(filepath.Join(dir, "sub/.gitignore"))
	if _, err := r.Status(context.Background(), 100); err != nil {
		t.Errorf("one 1 MiB file is within the bound: %v", err)
	}
}
