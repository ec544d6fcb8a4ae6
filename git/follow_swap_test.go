package git

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A merge where a file replaces a directory (or a directory a file)
// brings the clean live tree and index to the merge, as git would.
func TestSubmitFollowFileDirSwap(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(ws string)
	}{
		{"file replaces dir", func(ws string) {
			os.RemoveAll(filepath.Join(ws, "src"))
			os.WriteFile(filepath.Join(ws, "src"), []byte("now a file\n"), 0o644)
		}},
		{"dir replaces file", func(ws string) {
			os.Remove(filepath.Join(ws, "b.txt"))
			os.MkdirAll(filepath.Join(ws, "b.txt"), 0o755)
			os.WriteFile(filepath.Join(ws, "b.txt", "x"), []byte("now below\n"), 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, base := queueRepo(t)
			ws := checkoutTo(t, dir, base)
			os.WriteFile(filepath.Join(ws, "a.txt"), []byte("changed\n"), 0o644)
			tc.edit(ws)
			f := newWorkdirFS(t, "wd="+dir+":rw:repo", "ws="+ws+":rw")
			r, err := Open(f, "wd")
			if err != nil {
				t.Fatal(err)
			}
			w, _ := f.Workdir("ws")
			p, err := r.CommitWorkspace(context.Background(), w, base, "x")
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Submit(context.Background(), "main", p, MergeStrict, "")
			if err != nil {
				t.Fatal(err)
			}
			if res.Checkout != "updated" {
				t.Fatalf("checkout = %q", res.Checkout)
			}
			if st := gitCLI(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Fatalf("updated but git status: %s", st)
			}
			if diff := gitCLI(t, dir, "diff", "--name-only", p.Head); diff != "" {
				t.Fatalf("the work tree is not the merge: %s", diff)
			}
		})
	}
}
