package git

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A merge where a file replaces a directory (or a directory a file) leaves
// the live tree exactly at the old commit, reported behind, never half
// updated: a.txt not rewritten while the index is old.
func TestSubmitFollowFileDirSwapNotMixed(t *testing.T) {
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
			st := gitCLI(t, dir, "status", "--porcelain", "--untracked-files=all")
			switch res.Checkout {
			case "behind":
				// Exactly the old tree: status against the old commit is clean.
				if diff := gitCLI(t, dir, "diff", "--stat", base); diff != "" || gitCLI(t, dir, "ls-files", "--others") != "" {
					t.Fatalf("behind but the tree is not the old commit: %s", diff)
				}
				if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) == "changed\n" {
					t.Fatal("behind but a.txt was rewritten")
				}
			case "updated":
				if st != "" {
					t.Fatalf("updated but git status: %s", st)
				}
			default:
				t.Fatalf("checkout = %q", res.Checkout)
			}
		})
	}
}
