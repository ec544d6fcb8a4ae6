package unidiff

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnifiedDiffGitApply: git is the oracle. For random old/new pairs
// (line edits, CRLF, missing final newlines, empty files, creates), the
// diff Unified returns must make `git apply` turn the old file into
// the new one exactly.
func TestUnifiedDiffGitApply(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is required (CI installs it)")
	}
	rng := rand.New(rand.NewSource(1))
	dir := t.TempDir()
	words := []string{"alpha", "beta", "gamma", "delta", "", "x", "beta"}
	randText := func() string {
		var b strings.Builder
		for range rng.Intn(40) {
			b.WriteString(words[rng.Intn(len(words))])
			if rng.Intn(10) == 0 {
				b.WriteString("\r")
			}
			b.WriteString("\n")
		}
		s := b.String()
		if len(s) > 0 && rng.Intn(4) == 0 {
			s = s[:len(s)-1] // no final newline
		}
		return s
	}
	mutate := func(s string) string {
		lines := strings.SplitAfter(s, "\n")
		for range 1 + rng.Intn(5) {
			i := rng.Intn(len(lines) + 1)
			switch rng.Intn(3) {
			case 0:
				lines = append(lines[:i], append([]string{words[rng.Intn(len(words))] + "\n"}, lines[i:]...)...)
			case 1:
				if i < len(lines) {
					lines = append(lines[:i], lines[i+1:]...)
				}
			case 2:
				if i < len(lines) {
					lines[i] = "changed " + lines[i]
				}
			}
		}
		return strings.Join(lines, "")
	}
	for n := range 150 {
		old := randText()
		var new string
		switch n % 5 {
		case 0:
			new = randText()
		default:
			new = mutate(old)
		}
		created := n%17 == 0
		if created {
			old = ""
		}
		d, cut := Unified("sub/f.txt", []byte(old), []byte(new), created, 1<<20)
		if old == new {
			if d != "" {
				t.Fatalf("case %d: no change, diff %q", n, d)
			}
			continue
		}
		if cut {
			t.Fatal("cut under a 1 MiB cap")
		}
		work := filepath.Join(dir, fmt.Sprint(n))
		os.MkdirAll(filepath.Join(work, "sub"), 0o755)
		if !created {
			os.WriteFile(filepath.Join(work, "sub/f.txt"), []byte(old), 0o644)
		}
		os.WriteFile(filepath.Join(work, "p.diff"), []byte(d), 0o644)
		cmd := exec.Command(git, "apply", "--whitespace=nowarn", "p.diff")
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("case %d: git apply: %v\n%s\nold %q\nnew %q\ndiff:\n%s", n, err, out, old, new, d)
		}
		got, _ := os.ReadFile(filepath.Join(work, "sub/f.txt"))
		if string(got) != new {
			t.Fatalf("case %d: git apply gave %q, want %q\ndiff:\n%s", n, got, new, d)
		}
	}
}

func TestUnifiedDiffBounds(t *testing.T) {
	if d, cut := Unified("f", []byte("a\n"), []byte("a\n"), false, 100); d != "" || cut {
		t.Fatalf("identical: %q %v", d, cut)
	}
	// Far more changes than the Myers bound: still a correct replacement.
	var a, b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&a, "a%d\n", i)
		fmt.Fprintf(&b, "b%d\n", i)
	}
	d, cut := Unified("f", []byte(a.String()), []byte(b.String()), false, 1<<30)
	if cut || !strings.Contains(d, "@@ -1,5000 +1,5000 @@\n") {
		t.Fatalf("fallback hunk missing: %.200q", d)
	}
	d, cut = Unified("f", []byte(a.String()), []byte(b.String()), false, 1000)
	if !cut || len(d) > 1000 || !strings.HasSuffix(d, "\n") {
		t.Fatalf("cap: %d bytes, cut %v", len(d), cut)
	}
}

func TestHunksBounded(t *testing.T) {
	var a, b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&a, "line %d\n", i)
		fmt.Fprintf(&b, "line %d%s\n", i, strings.Repeat("!", i%2))
	}
	old, new := []byte(a.String()), []byte(b.String())
	full := Hunks(old, new)
	if h, cut, err := HunksBounded(context.Background(), old, new, len(full), nil); h != full || cut || err != nil {
		t.Fatalf("within the budget: %d bytes, cut %v, %v; want %d bytes", len(h), cut, err, len(full))
	}
	if h, cut, err := HunksBounded(context.Background(), old, new, 1000, nil); !cut || err != nil || len(h) <= 1000 || !strings.HasPrefix(full, h) {
		t.Fatalf("over the budget: %d bytes, cut %v, %v", len(h), cut, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := HunksBounded(ctx, old, new, 1<<20, nil); err != context.Canceled {
		t.Fatalf("canceled: %v", err)
	}
}
