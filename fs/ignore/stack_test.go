package ignore

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	sfs "github.com/serverfs/serverfs/fs"
)

// workdir makes a real workdir holding files (path -> content).
func workdir(t *testing.T, files map[string]string) *sfs.Workdir {
	t.Helper()
	root := t.TempDir()
	for p, data := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := sfs.LoadConfig(nil, []string{"wd=" + root})
	if err != nil {
		t.Fatal(err)
	}
	f, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	w, err := f.Workdir("wd")
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// kept walks w from start with s and returns the files it does not
// ignore (the walk itself hides .gitignore and .git, as the policy does).
func kept(t *testing.T, w *sfs.Workdir, start string, s *Stack) []string {
	t.Helper()
	var out []string
	_, err := w.Walk(context.Background(), start, sfs.WalkOptions{MaxEntries: 1000, Enter: s.Enter,
		Visit: func(e *sfs.WalkEntry) sfs.WalkAction {
			if e.Name == ".git" || s.Ignored(e.Path, e.Type == sfs.TypeDirectory, e.Depth) {
				if e.Type == sfs.TypeDirectory {
					return sfs.WalkSkipDir
				}
				return sfs.WalkContinue
			}
			if e.Type == sfs.TypeFile {
				out = append(out, e.Path)
			}
			return sfs.WalkContinue
		}})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestStackOptions: the two ways of reading the same tree. Ripgrep's stops
// at a nested repository and reads .git/info/exclude; git's applies the
// root's rules all the way down, over the base the caller passes.
func TestStackOptions(t *testing.T) {
	w := workdir(t, map[string]string{
		".git/info/exclude": "*.tmp\n",
		".gitignore":        "*.log\n",
		"a.log":             "", "a.tmp": "", "a.txt": "",
		"sub/.git/HEAD": "",
		"sub/b.log":     "", "sub/b.txt": "",
		"dir/.gitignore": "!keep.log\n",
		"dir/keep.log":   "", "dir/drop.log": "",
	})
	rg := kept(t, w, "", New(context.Background(), Ripgrep()))
	if want := []string{"a.txt", "dir/keep.log", "sub/b.log", "sub/b.txt"}; !slices.Equal(rg, want) {
		t.Errorf("ripgrep's reading kept %q, want %q", rg, want)
	}
	gitOpts := Options{Nested: true, Base: [][]byte{[]byte("*.txt\n")}, MaxFileBytes: 1 << 20}
	gt := kept(t, w, "", New(context.Background(), gitOpts))
	if want := []string{"a.tmp", "dir/keep.log"}; !slices.Equal(gt, want) {
		t.Errorf("git's reading kept %q, want %q", gt, want)
	}
	// A walk below the root honours the rules above it.
	if got, want := kept(t, w, "dir", Filter(context.Background(), w)), []string{"dir/keep.log"}; !slices.Equal(got, want) {
		t.Errorf("a walk of dir kept %q, want %q", got, want)
	}
	// Outside a repository ripgrep's reading ignores nothing.
	plain := workdir(t, map[string]string{".gitignore": "*.log\n", "a.log": ""})
	if got, want := kept(t, plain, "", New(context.Background(), Ripgrep())), []string{"a.log"}; !slices.Equal(got, want) {
		t.Errorf("outside a repository kept %q, want %q", got, want)
	}
}
