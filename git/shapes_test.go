package git

// Regression tests of the repository shapes real work trees
// have (backslash names, files replaced by directories, git rm --cached,
// submodules, staged hidden files), each checked against the git CLI.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sfs "github.com/serverfs/serverfs/fs"
)

// fsckStrict fails the test unless git fsck --strict finds nothing.
func fsckStrict(t *testing.T, dir string) {
	t.Helper()
	out, err := gitOut(dir, "fsck", "--strict", "--no-dangling")
	if err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

// TestBackslashNames: on Linux a backslash is an ordinary byte of a name;
// status lists such a file, and diff, staged diff and commit act on it.
func TestBackslashNames(t *testing.T) {
	dir, r := newCommitRepo(t)
	ctx := context.Background()
	name := `a\b.txt`
	write(t, filepath.Join(dir, name), "one\n")
	gitCLI(t, dir, "add", "--", name)
	gitCLI(t, dir, "commit", "-qm", "backslash")
	write(t, filepath.Join(dir, name), "two\n")
	st, err := r.Status(ctx, 100)
	if err != nil || len(st.Entries) != 1 || st.Entries[0] != (Entry{name, ".", "M"}) {
		t.Fatalf("status: %+v %v", st, err)
	}
	d, err := r.Diff(ctx, false, []string{name}, 0)
	if err != nil || len(d.Files) != 1 || d.Files[0].Change != "modified" || !strings.Contains(d.Patch, `"a/a\\b.txt"`) {
		t.Fatalf("diff: %+v %v", d, err)
	}
	if out, err := gitApplyCheck(dir, d.Patch); err != nil {
		t.Fatalf("git apply --cached --check: %v\n%s", err, out)
	}
	if _, err := r.Commit(ctx, []string{name}, "edit"); err != nil {
		t.Fatal(err)
	}
	fsckStrict(t, dir)
	if s := gitCLI(t, dir, "status", "--porcelain"); s != "" {
		t.Fatalf("git status after commit: %q", s)
	}
	// What Windows reads as absolute stays refused.
	for _, bad := range []string{`\\host\share\x`, `\x`, `C:\x`, `C:/x`} {
		if _, err := r.Diff(ctx, false, []string{bad}, 0); err == nil {
			t.Errorf("diff of %q accepted", bad)
		}
	}
}

func gitApplyCheck(dir, patch string) (string, error) {
	cmd := exec.Command("git", "apply", "--cached", "--check", "-")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(patch)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// commitBoth commits paths with our Commit in dir and with `git add --
// paths && git commit` in an exact copy, and checks that both made the
// same tree, that ours passes git fsck --strict and that git status of
// the two agrees. It returns our result.
func commitBoth(t *testing.T, dir string, r *Repo, paths []string) *CommitResult {
	t.Helper()
	b := filepath.Join(t.TempDir(), "b")
	if out, err := exec.Command("cp", "-a", dir, b).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	res, err := r.Commit(context.Background(), paths, "m")
	if err != nil {
		t.Fatalf("our commit of %q: %v", paths, err)
	}
	gitCLI(t, b, append([]string{"add", "--"}, paths...)...)
	gitCLI(t, b, "commit", "-qm", "m")
	fsckStrict(t, dir)
	ours, theirs := gitCLI(t, dir, "rev-parse", "HEAD^{tree}"), gitCLI(t, b, "rev-parse", "HEAD^{tree}")
	if ours != theirs {
		t.Fatalf("commit of %q: tree %s, git made %s\nours:\n%s\ngit's:\n%s", paths, ours, theirs,
			gitCLI(t, dir, "ls-tree", "-r", "-t", "HEAD"), gitCLI(t, b, "ls-tree", "-r", "-t", "HEAD"))
	}
	if wt := gitCLI(t, dir, "write-tree"); wt != ours {
		t.Fatalf("git write-tree of our index %s, HEAD's tree %s", wt, ours)
	}
	sa, sb := gitCLI(t, dir, "status", "--porcelain=v2", "-uall"), gitCLI(t, b, "status", "--porcelain=v2", "-uall")
	if sa != sb {
		t.Fatalf("git status after our commit:\n%s\nafter git's:\n%s", sa, sb)
	}
	return res
}

// TestCommitFileBecameDirectory: a tracked file x replaced by a directory
// x/ and committed by naming x/inside.txt (with another path) gives git's
// tree: the blob x is deleted, never left beside the tree x.
func TestCommitFileBecameDirectory(t *testing.T) {
	dir, r := newCommitRepo(t)
	write(t, filepath.Join(dir, "x"), "file\n")
	write(t, filepath.Join(dir, "y.txt"), "y\n")
	gitCLI(t, dir, "add", "x", "y.txt")
	gitCLI(t, dir, "commit", "-qm", "x is a file")
	gitCLI(t, dir, "rm", "-q", "--cached", "x") // not needed: git add resolves it too
	gitCLI(t, dir, "reset", "-q")
	if err := os.Remove(filepath.Join(dir, "x")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "x/inside.txt"), "inside\n")
	write(t, filepath.Join(dir, "y.txt"), "y2\n")

	// Naming the directory itself would be `git add x`, the whole
	// directory: refused, changing nothing, saying what to name.
	head := headOf(t, dir)
	if _, err := r.Commit(context.Background(), []string{"x"}, "m"); err == nil || !strings.Contains(err.Error(), `"x/..."`) {
		t.Fatalf("naming the new directory: %v", err)
	}
	if headOf(t, dir) != head || gitCLI(t, dir, "diff", "--cached", "--name-only") != "" {
		t.Fatal("the refusal changed HEAD or the index")
	}

	res := commitBoth(t, dir, r, []string{"x/inside.txt", "y.txt"})
	if strings.Join(res.Added, ",") != "x/inside.txt" || strings.Join(res.Modified, ",") != "y.txt" || strings.Join(res.Deleted, ",") != "x" {
		t.Fatalf("result %+v", res)
	}
}

// TestCommitDirectoryBecameFile: a tracked directory replaced by a file
// and committed by naming the file: the entries beneath it are deleted as
// git add deletes them; a hidden one is counted, not named.
func TestCommitDirectoryBecameFile(t *testing.T) {
	dir, r := newCommitRepo(t)
	for _, p := range []string{"x/a.txt", "x/deep/b.txt", "x/.secret", "xy.txt"} {
		write(t, filepath.Join(dir, p), p+"\n")
	}
	gitCLI(t, dir, "add", "-A")
	gitCLI(t, dir, "commit", "-qm", "x is a directory")
	if err := os.RemoveAll(filepath.Join(dir, "x")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "x"), "now a file\n")
	write(t, filepath.Join(dir, "xy.txt"), "changed\n")
	res := commitBoth(t, dir, r, []string{"x", "xy.txt"})
	if strings.Join(res.Added, ",") != "x" || strings.Join(res.Deleted, ",") != "x/a.txt,x/deep/b.txt" || res.HiddenDeleted != 1 {
		t.Fatalf("result %+v", res)
	}
}

// TestCommitRefusalNamesNoHiddenPath: changes staged on paths the commit
// does not name are refused; the message names the visible ones and only
// counts those the policy hides (hidden, denied).
func TestCommitRefusalNamesNoHiddenPath(t *testing.T) {
	dir, r := newCommitRepo(t)
	for _, p := range []string{".cache-secret/token", "x.key", "id_rsa", "seen.txt"} {
		write(t, filepath.Join(dir, p), "s\n")
		gitCLI(t, dir, "add", "-f", "--", p)
	}
	write(t, filepath.Join(dir, "a.txt"), "changed\n")
	head := headOf(t, dir)
	_, err := r.Commit(context.Background(), []string{"a.txt"}, "m")
	if sfsCode(err) != "REPO_STAGED_CHANGES" {
		t.Fatalf("want REPO_STAGED_CHANGES, got %v", err)
	}
	msg := err.Error()
	for _, bad := range []string{".cache-secret", "token", "x.key", "id_rsa"} {
		if strings.Contains(msg, bad) {
			t.Errorf("refusal names the hidden path %q: %s", bad, msg)
		}
	}
	if !strings.Contains(msg, `"seen.txt"`) || !strings.Contains(msg, "3 path(s) hidden") || !strings.Contains(msg, "4 change(s)") {
		t.Errorf("refusal does not name the visible path and count the others: %s", msg)
	}
	if headOf(t, dir) != head {
		t.Fatal("the refusal moved HEAD")
	}
}

// TestCommitOverStagedDeletion: after `git rm --cached F` (a staged
// deletion, F untracked in the work tree), status shows both entries, and
// a commit naming F (with another path) does what git add does.
func TestCommitOverStagedDeletion(t *testing.T) {
	dir, r := newCommitRepo(t)
	write(t, filepath.Join(dir, "d/f.txt"), "f\n")
	gitCLI(t, dir, "add", "d/f.txt")
	gitCLI(t, dir, "commit", "-qm", "f")
	gitCLI(t, dir, "rm", "-q", "--cached", "d/f.txt", "a.txt")
	st, err := r.Status(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{"a.txt", "D", "."}, {"a.txt", "?", "?"}, {"d/f.txt", "D", "."}, {"d/f.txt", "?", "?"}}
	if d := orcEntryDiff(want, st.Entries); d != "" {
		t.Fatalf("status:\n%s", d)
	}
	write(t, filepath.Join(dir, "n.txt"), "n\n")
	// The deletion of d/f.txt is staged and not named: refused, naming it.
	if _, err := r.Commit(context.Background(), []string{"a.txt", "n.txt"}, "m"); sfsCode(err) != "REPO_STAGED_CHANGES" || !strings.Contains(err.Error(), `"d/f.txt"`) {
		t.Fatalf("want REPO_STAGED_CHANGES naming d/f.txt, got %v", err)
	}
	// Named, the staged paths are staged again from the work tree, as
	// git add does.
	res := commitBoth(t, dir, r, []string{"a.txt", "d/f.txt", "n.txt"})
	if strings.Join(res.Added, ",") != "n.txt" || len(res.Modified)+len(res.Deleted) != 0 {
		t.Fatalf("result %+v", res)
	}
}

func sfsCode(err error) string {
	if err == nil {
		return ""
	}
	code, _, _ := strings.Cut(err.Error(), ":")
	return code
}

// statusLikeGit fails unless our status of dir is git's, filtered by the
// policy.
func statusLikeGit(t *testing.T, dir string, f *sfs.FS) {
	t.Helper()
	r, err := Open(f, "wd")
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.Status(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	want := gitStatusV2(t, dir).filtered(f.Policy())
	if !orcSame(want, st) {
		t.Fatalf("status differs from git's:\n%s\n%s", orcStatusDiff(want, st), want.Raw)
	}
}

// submoduleSource makes src, a repository of one commit (s.txt) to add
// as a submodule, and dir, an empty repository beside it, both on main.
func submoduleSource(t *testing.T) (src, dir string) {
	t.Helper()
	base := t.TempDir()
	src, dir = filepath.Join(base, "src"), filepath.Join(base, "wd")
	orcGit(t, base, "init", "-q", "-b", "main", src)
	write(t, filepath.Join(src, "s.txt"), "s\n")
	orcGit(t, src, "add", "s.txt")
	orcGit(t, src, "commit", "-qm", "s1")
	orcGit(t, base, "init", "-q", "-b", "main", dir)
	return src, dir
}

// TestSubmodules: gitlinks in status, diff, staged diff and commit, with
// the checkout's repository in a .git directory (an embedded repository
// added with git add) and behind a .git file (git submodule add, the
// usual layout), agree with git.
func TestSubmodules(t *testing.T) {
	orcNeedGit(t)
	orcSetHome(t)
	src, dir := submoduleSource(t)
	orcGit(t, dir, "config", "user.name", "Serv Er")
	orcGit(t, dir, "config", "user.email", "s@example.invalid")
	orcGit(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "mod")
	orcGit(t, dir, "clone", "-q", src, "emb")
	orcGit(t, dir, "add", "emb")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	orcGit(t, dir, "add", "a.txt")
	orcGit(t, dir, "commit", "-qm", "base")
	if fi, err := os.Lstat(filepath.Join(dir, "mod/.git")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("mod/.git should be a .git file: %v", err)
	}
	f := newWorkdirFS(t, "wd="+dir+":rw:repo")
	statusLikeGit(t, dir, f)

	// Both checkouts move to a new commit: .M in git.
	for _, sub := range []string{"mod", "emb"} {
		write(t, filepath.Join(dir, sub, "s.txt"), "s2 "+sub+"\n")
		orcGit(t, filepath.Join(dir, sub), "commit", "-qam", "s2")
	}
	statusLikeGit(t, dir, f)
	r, err := Open(f, "wd")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := r.Diff(ctx, false, []string{"mod", "emb"}, 0)
	if err != nil || len(d.Files) != 2 || d.Files[0].Change != "modified" || d.Files[1].Change != "modified" {
		t.Fatalf("diff: %+v %v", d, err)
	}
	if want := orcGit(t, dir, "diff", "--no-color", "--", "emb", "mod"); d.Patch != want {
		t.Fatalf("work-tree diff:\n%s\ngit diff:\n%s", d.Patch, want)
	}
	if out, err := gitApplyCheck(dir, d.Patch); err != nil {
		t.Fatalf("git apply --cached --check: %v\n%s\n%s", err, out, d.Patch)
	}

	// Staged: one of them, and a new gitlink.
	orcGit(t, dir, "add", "mod")
	orcGit(t, dir, "clone", "-q", src, "new")
	orcGit(t, dir, "add", "new")
	statusLikeGit(t, dir, f)
	d, err = r.Diff(ctx, true, []string{"mod", "new"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := orcGit(t, dir, "diff", "--cached", "--no-color", "--", "mod", "new"); d.Patch != want {
		t.Fatalf("staged diff:\n%s\ngit diff --cached:\n%s", d.Patch, want)
	}

	// Committed through ServerFS, naming the moved, unstaged one too.
	write(t, filepath.Join(dir, "a.txt"), "a2\n")
	res := commitBoth(t, dir, r, []string{"a.txt", "emb", "mod", "new"})
	if strings.Join(res.Modified, ",") != "a.txt,emb,mod" || strings.Join(res.Added, ",") != "new" {
		t.Fatalf("result %+v", res)
	}
	// A path inside a submodule is refused, saying why.
	write(t, filepath.Join(dir, "mod/s.txt"), "inside\n")
	if _, err := r.Commit(ctx, []string{"mod/s.txt"}, "m"); err == nil || !strings.Contains(err.Error(), "submodule") {
		t.Fatalf("path inside a submodule: %v", err)
	}
	// (Changes inside a submodule's work tree are not looked for: git
	// calls them "modified content"; put it back.)
	orcGit(t, filepath.Join(dir, "mod"), "checkout", "-q", "--", "s.txt")
	// A submodule's directory removed: deleted, as git says.
	if err := os.RemoveAll(filepath.Join(dir, "emb")); err != nil {
		t.Fatal(err)
	}
	statusLikeGit(t, dir, f)
}

// TestDiffBeneathSymlink: a path beneath a symlink is no file (git's
// has_symlink_leading_path), not an error, in the work-tree diff.
func TestDiffBeneathSymlink(t *testing.T) {
	dir, r := newCommitRepo(t)
	if err := os.Symlink("a.txt", filepath.Join(dir, "x.sh")); err != nil {
		t.Fatal(err)
	}
	gitCLI(t, dir, "add", "x.sh")
	d, err := r.Diff(context.Background(), false, []string{"x.sh/inside.txt"}, 0)
	if err != nil || len(d.Files) != 1 || d.Files[0].Change != "unchanged" || d.Patch != "" {
		t.Fatalf("diff beneath a symlink: %+v %v", d, err)
	}
}

// TestSubmoduleReplacedBySymlink: a submodule's checkout replaced by a
// file is a type change (.T), as git says; replaced by a symlink it is the
// same for ServerFS, where git 2.39's status dies ("expected submodule
// path 'mod' not to be a symbolic link"), so that shape has no oracle and
// the generated trees of TestStatusMatchesGit never make it.
func TestSubmoduleReplacedBySymlink(t *testing.T) {
	orcNeedGit(t)
	orcSetHome(t)
	src, dir := submoduleSource(t)
	orcGit(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "mod")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	orcGit(t, dir, "add", "a.txt")
	orcGit(t, dir, "-c", "user.name=S", "-c", "user.email=s@example.invalid", "commit", "-qm", "base")
	if err := os.RemoveAll(filepath.Join(dir, "mod")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "mod"), "file\n")
	f := newWorkdirFS(t, "wd="+dir+":rw:repo")
	statusLikeGit(t, dir, f)
	if err := os.Remove(filepath.Join(dir, "mod")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(dir, "mod")); err != nil {
		t.Fatal(err)
	}
	r, err := Open(f, "wd")
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.Status(context.Background(), 100)
	if err != nil || len(st.Entries) != 1 || st.Entries[0] != (Entry{Path: "mod", Staged: ".", Unstaged: "T"}) {
		t.Fatalf("status of a submodule replaced by a symlink: %+v %v", st, err)
	}
}
