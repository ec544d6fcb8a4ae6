package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/serverfs/serverfs/internal/errs"
)

// followRepo is queueRepo with symlinks, an executable and an unrelated
// file in the base; it returns the repository, the base, the patch of a
// workspace that changes all of them (a text edit, a retargeted symlink,
// a deleted symlink, a new one in a new directory, a file that becomes a
// symlink, an executable bit, a deleted file emptying its directory),
// and the repository opened.
func followRepo(t *testing.T) (string, string, *Patch, *Repo) {
	t.Helper()
	dir, _ := queueRepo(t)
	os.Symlink("a.txt", filepath.Join(dir, "link"))
	os.Symlink("b.txt", filepath.Join(dir, "ldel"))
	write(t, filepath.Join(dir, "kind.txt"), "a regular file\n")
	write(t, filepath.Join(dir, "run.sh"), "echo run\n")
	write(t, filepath.Join(dir, "notes.txt"), "the operator's notes\n")
	gitCLI(t, dir, "add", "-A")
	gitCLI(t, dir, "commit", "-qm", "symlinks")
	base := strings.TrimSpace(gitCLI(t, dir, "rev-parse", "HEAD"))
	ws := checkoutTo(t, dir, base)
	write(t, filepath.Join(ws, "a.txt"), "a1\nA2\na3\na4\na5\na6\na7\na8\n")
	os.Remove(filepath.Join(ws, "link"))
	os.Symlink("b.txt", filepath.Join(ws, "link"))
	os.Remove(filepath.Join(ws, "ldel"))
	os.MkdirAll(filepath.Join(ws, "new"), 0o755)
	os.Symlink("../a.txt", filepath.Join(ws, "new/l2"))
	os.Remove(filepath.Join(ws, "kind.txt"))
	os.Symlink("a.txt", filepath.Join(ws, "kind.txt"))
	os.Chmod(filepath.Join(ws, "run.sh"), 0o755)
	os.RemoveAll(filepath.Join(ws, "src"))
	r, w := openQueueRepo(t, dir, ws)
	p, err := r.CommitWorkspace(context.Background(), w, base, "ws: symlinks and more")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.FilesChanged, ","); got != "a.txt,kind.txt,ldel,link,new/l2,run.sh,src/c.go" {
		t.Fatalf("patch files %s", got)
	}
	t.Cleanup(func() {
		if out, err := gitOut(dir, "fsck", "--strict", "--no-progress"); err != nil || strings.Contains(out, "error") {
			t.Errorf("git fsck --strict: %v\n%s", err, out)
		}
		if out := gitCLI(t, dir, "ls-files", "--others", "--exclude-standard"); strings.Contains(out, ".serverfs-tmp-") {
			t.Errorf("temporaries left in the live tree: %s", out)
		}
	})
	return dir, base, p, r
}

// TestSubmitIntoDirtyCheckout: a submit into the checked-out branch while
// the operator has a modified file, a staged one and an untracked one,
// none of them submitted. The submitted paths (symlinks among them) move
// in the index and the work tree with the branch; git shows only the
// operator's changes, nothing of the merge staged in reverse; and the
// operator's next git add && git commit keeps the merge.
func TestSubmitIntoDirtyCheckout(t *testing.T) {
	dir, base, p, r := followRepo(t)
	write(t, filepath.Join(dir, "notes.txt"), "the operator's notes, edited\n")
	write(t, filepath.Join(dir, "b.txt"), "b1\nstaged by the operator\nb3\n")
	gitCLI(t, dir, "add", "b.txt")
	write(t, filepath.Join(dir, "scratch.txt"), "untracked\n")

	res, err := r.Submit(context.Background(), "main", p, MergeStrict, "")
	if err != nil || res.Status != StatusMerged {
		t.Fatalf("submit: %+v %v", res, err)
	}
	if head := strings.TrimSpace(gitCLI(t, dir, "rev-parse", "main")); head != p.Head || res.From != base {
		t.Fatalf("main at %s, want %s", head, p.Head)
	}
	args := append([]string{"diff", "--cached", "--name-only", "HEAD", "--"}, p.FilesChanged...)
	if staged := gitCLI(t, dir, args...); staged != "" {
		t.Fatalf("submitted paths staged against HEAD (the merge reversed):\n%s", staged)
	}
	if res.Checkout != "updated" {
		t.Fatalf("checkout %q", res.Checkout)
	}
	if st := gitCLI(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "M  b.txt\n M notes.txt\n?? scratch.txt\n" {
		t.Fatalf("git status:\n%s", st)
	}
	// The work tree holds the merge, symlinks as symlinks.
	for name, want := range map[string]string{"link": "b.txt", "new/l2": "../a.txt", "kind.txt": "a.txt"} {
		if got, err := os.Readlink(filepath.Join(dir, name)); err != nil || got != want {
			t.Errorf("%s -> %q (%v), want -> %q", name, got, err, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil || fi.Mode()&0o100 == 0 {
		t.Errorf("run.sh not executable: %v %v", fi, err)
	}
	for _, gone := range []string{"ldel", "src"} {
		if _, err := os.Lstat(filepath.Join(dir, gone)); !os.IsNotExist(err) {
			t.Errorf("%s still in the work tree (%v)", gone, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "the operator's notes, edited\n" {
		t.Errorf("the operator's edit was touched: %q", b)
	}
	if out, err := gitOut(dir, "fsck", "--strict", "--no-progress", "--no-dangling"); err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}

	// The operator's next commit keeps the merge: it differs from the
	// merge only by their own files.
	gitCLI(t, dir, "add", "notes.txt")
	gitCLI(t, dir, "commit", "-qm", "the operator's commit")
	if diff := gitCLI(t, dir, "diff", "--name-only", p.Head, "HEAD"); diff != "b.txt\nnotes.txt\n" {
		t.Fatalf("the operator's commit changed %q against the merge", diff)
	}
	if st := gitCLI(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "?? scratch.txt\n" {
		t.Fatalf("git status after the commit:\n%s", st)
	}
}

// TestSubmitIntoDirtyCheckoutRefused: what the live checkout cannot take
// without losing or reversing something refuses the submit with a code,
// the branch, index and files as they were; once the operator clears
// it, the same patch merges and the checkout follows.
func TestSubmitIntoDirtyCheckoutRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		code  errs.Code
		make  func(t *testing.T, dir string)
		clear func(t *testing.T, dir string)
	}{
		{"modified submitted file", errs.RepoDirty, func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "a.txt"), "the operator's a\n")
		}, func(t *testing.T, dir string) {
			gitCLI(t, dir, "checkout", "--", "a.txt")
		}},
		{"modified submitted symlink", errs.RepoDirty, func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "link"))
			os.Symlink("elsewhere", filepath.Join(dir, "link"))
		}, func(t *testing.T, dir string) {
			gitCLI(t, dir, "checkout", "--", "link")
		}},
		{"deleted submitted file", errs.RepoDirty, func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "run.sh"))
		}, func(t *testing.T, dir string) {
			gitCLI(t, dir, "checkout", "--", "run.sh")
		}},
		{"untracked where the merge adds", errs.RepoDirty, func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "new/l2"), "the operator's file\n")
		}, func(t *testing.T, dir string) {
			os.RemoveAll(filepath.Join(dir, "new"))
		}},
		{"untracked file where the merge adds a directory", errs.RepoDirty, func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "new"), "the operator's file\n")
		}, func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "new"))
		}},
		{"untracked symlink where the merge adds a directory", errs.RepoDirty, func(t *testing.T, dir string) {
			os.Symlink("src", filepath.Join(dir, "new"))
		}, func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "new"))
			if _, err := os.Stat(filepath.Join(dir, "src/l2")); err == nil {
				t.Fatal("written through the symlink")
			}
		}},
		{"staged submitted file", errs.RepoStagedChanges, func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "a.txt"), "the operator's a\n")
			gitCLI(t, dir, "add", "a.txt")
		}, func(t *testing.T, dir string) {
			gitCLI(t, dir, "reset", "-q", "--", "a.txt")
			gitCLI(t, dir, "checkout", "--", "a.txt")
		}},
		{"staged file where the merge adds a directory", errs.RepoStagedChanges, func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "new"), "the operator's file\n")
			gitCLI(t, dir, "add", "new")
		}, func(t *testing.T, dir string) {
			gitCLI(t, dir, "rm", "-q", "--cached", "new")
			os.Remove(filepath.Join(dir, "new"))
		}},
		{"index locked", errs.RepoLocked, func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, ".git/index.lock"), "another git's\n")
		}, func(t *testing.T, dir string) {
			if b, _ := os.ReadFile(filepath.Join(dir, ".git/index.lock")); string(b) != "another git's\n" {
				t.Fatalf("another git's index.lock was touched: %q", b)
			}
			os.Remove(filepath.Join(dir, ".git/index.lock"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, base, p, r := followRepo(t)
			write(t, filepath.Join(dir, "notes.txt"), "unrelated edit\n")
			tc.make(t, dir)
			before := gitCLI(t, dir, "status", "--porcelain", "--untracked-files=all")
			res, err := r.Submit(context.Background(), "main", p, MergeStrict, "")
			if errs.CodeOf(err) != tc.code || res != nil {
				t.Fatalf("submit: %+v %v; want %s", res, err, tc.code)
			}
			if !strings.Contains(err.Error(), "the branch did not move") {
				t.Fatalf("the refusal does not say what happened: %v", err)
			}
			if head := strings.TrimSpace(gitCLI(t, dir, "rev-parse", "main")); head != base {
				t.Fatalf("main moved to %s", head)
			}
			if tc.code != errs.RepoLocked {
				if after := gitCLI(t, dir, "status", "--porcelain", "--untracked-files=all"); after != before {
					t.Fatalf("status changed:\n%s\nwas:\n%s", after, before)
				}
				if _, err := os.Stat(filepath.Join(dir, ".git/index.lock")); err == nil {
					t.Fatal("index.lock left")
				}
			}
			tc.clear(t, dir)
			res, err = r.Submit(context.Background(), "main", p, MergeStrict, "")
			if err != nil || res.Status != StatusMerged || res.Checkout != "updated" {
				t.Fatalf("submit once cleared: %+v %v", res, err)
			}
			if st := gitCLI(t, dir, "status", "--porcelain", "--untracked-files=all"); st != " M notes.txt\n" {
				t.Fatalf("git status after the merge:\n%s", st)
			}
		})
	}
}

// A directory the merge replaces by a file must hold nothing untracked:
// the operator's file in it refuses the submit, and nothing is removed.
func TestSubmitFollowKeepsUntrackedInReplacedDir(t *testing.T) {
	dir, base := queueRepo(t)
	ws := checkoutTo(t, dir, base)
	os.RemoveAll(filepath.Join(ws, "src"))
	write(t, filepath.Join(ws, "src"), "now a file\n")
	r, w := openQueueRepo(t, dir, ws)
	p, err := r.CommitWorkspace(context.Background(), w, base, "src becomes a file")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "src/mine.txt"), "the operator's\n")
	if _, err := r.Submit(context.Background(), "main", p, MergeStrict, ""); errs.CodeOf(err) != errs.RepoDirty {
		t.Fatalf("submit: %v; want REPO_DIRTY", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "src/mine.txt")); err != nil || string(b) != "the operator's\n" {
		t.Fatalf("the untracked file: %q %v", b, err)
	}
	if st := gitCLI(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "?? src/mine.txt\n" {
		t.Fatalf("git status:\n%s", st)
	}
}

// TestStagedReversalAdvice: where the branch moved without its checkout
// (the index still at the old commit, here by git update-ref), a commit
// naming another path is refused, and the advice is not to name the
// reversed paths (that would commit the reversal) but to bring them to
// HEAD; following it, the commit keeps HEAD's change. An ordinary staged
// change keeps the ordinary advice.
func TestStagedReversalAdvice(t *testing.T) {
	dir, base := queueRepo(t)
	gitCLI(t, dir, "checkout", "-q", "-b", "elsewhere")
	write(t, filepath.Join(dir, "a.txt"), "merged elsewhere\n")
	gitCLI(t, dir, "commit", "-qam", "the change the branch gets")
	merged := strings.TrimSpace(gitCLI(t, dir, "rev-parse", "HEAD"))
	gitCLI(t, dir, "checkout", "-q", "main")
	gitCLI(t, dir, "update-ref", "refs/heads/main", merged, base)
	if st := gitCLI(t, dir, "status", "--porcelain"); st != "M  a.txt\n" {
		t.Fatalf("not a staged reversal: %q", st)
	}
	write(t, filepath.Join(dir, "b.txt"), "the operator's b\n")
	f := newWorkdirFS(t, "wd="+dir+":rw:repo")
	r, err := Open(f, "wd")
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Commit(context.Background(), []string{"b.txt"}, "b")
	if errs.CodeOf(err) != errs.RepoStagedChanges || strings.Contains(err.Error(), "name them too") ||
		!strings.Contains(err.Error(), "would undo HEAD's own change") || !strings.Contains(err.Error(), "git restore --source=HEAD --staged --worktree") {
		t.Fatalf("commit over a staged reversal: %v", err)
	}
	gitCLI(t, dir, "restore", "--source=HEAD", "--staged", "--worktree", "--", "a.txt")
	if _, err := r.Commit(context.Background(), []string{"b.txt"}, "b"); err != nil {
		t.Fatal(err)
	}
	if got := gitCLI(t, dir, "show", "HEAD:a.txt"); got != "merged elsewhere\n" {
		t.Fatalf("the commit undid HEAD's change: a.txt %q", got)
	}

	// An ordinary staged change: name it too.
	write(t, filepath.Join(dir, "a.txt"), "staged by the operator\n")
	gitCLI(t, dir, "add", "a.txt")
	write(t, filepath.Join(dir, "b.txt"), "b again\n")
	if _, err := r.Commit(context.Background(), []string{"b.txt"}, "b"); errs.CodeOf(err) != errs.RepoStagedChanges || !strings.Contains(err.Error(), "name them too") {
		t.Fatalf("commit over a staged change: %v", err)
	}
}

// A directory the merge replaces by a file, whose files the operator
// already deleted (the empty directory left): the file takes its place.
func TestSubmitFollowEmptiedDir(t *testing.T) {
	dir, base := queueRepo(t)
	ws := checkoutTo(t, dir, base)
	os.RemoveAll(filepath.Join(ws, "src"))
	write(t, filepath.Join(ws, "src"), "now a file\n")
	r, w := openQueueRepo(t, dir, ws)
	p, err := r.CommitWorkspace(context.Background(), w, base, "src becomes a file")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "src/c.go"))
	res, err := r.Submit(context.Background(), "main", p, MergeStrict, "")
	if err != nil || res.Checkout != "updated" {
		t.Fatalf("submit: %+v %v", res, err)
	}
	if st := gitCLI(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status:\n%s", st)
	}
}
