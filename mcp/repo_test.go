package mcp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git"
)

// fsckStrict fails the test unless git fsck --strict finds nothing wrong
// in dir's repository (every commit the tools write must pass it).
func fsckStrict(t *testing.T, dir string) {
	t.Helper()
	if out := gitIn(t, dir, "fsck", "--strict", "--no-dangling", "--no-progress"); strings.TrimSpace(out) != "" {
		t.Fatalf("git fsck --strict: %s", out)
	}
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// newRepoEnv is newRWEnv's tree made a git repository with one commit
// ("base"), under a HOME of its own so that no user configuration leaks
// in.
func newRepoEnv(t *testing.T) *testEnv {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	e := newRWEnv(t)
	gitInitBase(t, e.root)
	return e
}

// gitInitBase makes dir a repository on branch main whose one commit
// ("base") holds everything in it, committer "Agent Via ServerFS".
func gitInitBase(t *testing.T, dir string) {
	t.Helper()
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "config", "user.name", "Agent Via ServerFS")
	gitIn(t, dir, "config", "user.email", "agent@example.invalid")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "base")
}

// TestRepoTools: the repository flow an agent goes through, over HTTP:
// actions, status, an edit, diff, commit, clean status — and refusals.
func TestRepoTools(t *testing.T) {
	e := newRepoEnv(t)
	cs := e.client(t, e.serveHTTP(t))

	out := structured[inspectRepoOut](t, e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "actions"}))
	if out.Actions == nil || len(out.Actions) != 0 {
		t.Fatalf("actions: %+v", out)
	}
	out = structured[inspectRepoOut](t, e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "status"}))
	if out.Status == nil || out.Status.Branch != "main" || len(out.Status.Head) != 40 || len(out.Status.Entries) != 0 {
		t.Fatalf("clean status: %+v", out.Status)
	}

	win := structured[sfs.TextWindow](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt"}))
	structured[sfs.WriteResult](t, e.call(t, cs, "edit_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt", "expected_revision": win.Revision,
		"edits": []map[string]any{{"old_text": "beta", "new_text": "gamma"}}}))
	writeFile(t, filepath.Join(e.root, "id_rsa"), []byte("PRIVATE "+canaryText+" changed\n"))
	writeFile(t, filepath.Join(e.root, ".hidden.txt"), []byte("hidden changed\n"))

	out = structured[inspectRepoOut](t, e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "status"}))
	if len(out.Status.Entries) != 1 || out.Status.Entries[0] != (git.Entry{Path: "sub/a.txt", Staged: ".", Unstaged: "M"}) {
		t.Fatalf("status after the edit (hidden and denied paths must not appear): %+v", out.Status.Entries)
	}
	out = structured[inspectRepoOut](t, e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "diff", "paths": []string{"sub/a.txt"}}))
	if out.Diff == nil || !strings.Contains(out.Diff.Patch, "diff --git a/sub/a.txt b/sub/a.txt\n") || !strings.Contains(out.Diff.Patch, "-beta\n+gamma\n") {
		t.Fatalf("diff: %+v", out.Diff)
	}
	res := structured[git.CommitResult](t, e.call(t, cs, "commit_repo_changes", map[string]any{"workdir": "wd", "paths": []string{"sub/a.txt"}, "message": "Rename beta to gamma"}))
	if head := strings.TrimSpace(gitIn(t, e.root, "rev-parse", "HEAD")); head != res.Commit || len(res.Modified) != 1 {
		t.Fatalf("commit %+v, HEAD %s", res, head)
	}
	fsckStrict(t, e.root)
	if log := gitIn(t, e.root, "log", "-1", "--format=%an <%ae>%n%s"); log != "Agent Via ServerFS <agent@example.invalid>\nRename beta to gamma\n" {
		t.Fatalf("log %q", log)
	}
	if st := gitIn(t, e.root, "status", "--porcelain"); st != " M .hidden.txt\n M id_rsa\n" {
		t.Fatalf("git status after the commit: %q", st)
	}
	out = structured[inspectRepoOut](t, e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "status"}))
	if len(out.Status.Entries) != 0 {
		t.Fatalf("status after the commit: %+v", out.Status.Entries)
	}

	for _, c := range []struct {
		tool   string
		args   map[string]any
		prefix string
	}{
		{"inspect_repo", map[string]any{"workdir": "ro", "view": "status"}, "REPO_OPS_DISABLED: ro:/ "},
		{"inspect_repo", map[string]any{"workdir": "ro", "view": "actions"}, "REPO_OPS_DISABLED: "},
		{"commit_repo_changes", map[string]any{"workdir": "ro", "paths": []string{"ro.txt"}, "message": "m"}, "REPO_OPS_DISABLED: "},
		{"inspect_repo", map[string]any{"workdir": "wd", "view": "status", "paths": []string{"x"}}, "INVALID_ARGUMENT: "},
		{"inspect_repo", map[string]any{"workdir": "wd", "view": "diff"}, "INVALID_ARGUMENT: "},
		{"inspect_repo", map[string]any{"workdir": "wd", "view": "log"}, "INVALID_ARGUMENT: "},
		{"inspect_repo", map[string]any{"workdir": "wd", "view": "diff", "paths": []string{"id_rsa"}}, "DENIED_PATH: "},
		{"inspect_repo", map[string]any{"workdir": "wd", "view": "diff", "paths": []string{"--output=/tmp/x"}}, "INVALID_ARGUMENT: "},
		{"commit_repo_changes", map[string]any{"workdir": "wd", "paths": []string{".hidden.txt"}, "message": "m"}, "HIDDEN_PATH_NOT_ALLOWED: "},
		{"commit_repo_changes", map[string]any{"workdir": "wd", "paths": []string{":(top)README.md"}, "message": "m"}, "INVALID_ARGUMENT: "},
		{"commit_repo_changes", map[string]any{"workdir": "wd", "paths": []string{"README.md"}, "message": "m"}, "NOTHING_TO_COMMIT: "},
		{"commit_repo_changes", map[string]any{"workdir": "wd", "paths": []string{}, "message": "m"}, "INVALID_ARGUMENT: "},
	} {
		toolErr(t, e.call(t, cs, c.tool, c.args), c.prefix)
	}
	if n := strings.Count(gitIn(t, e.root, "log", "--oneline"), "\n"); n != 2 {
		t.Fatalf("%d commits after the refusals, want 2", n)
	}
}

// TestCommitFileBecameDirectory: through commit_repo_changes over HTTP, a
// tracked file replaced by a directory (committed by naming the file in
// it) and a tracked directory replaced by a file, in one call with another
// path, make the commit `git add -- paths && git commit` makes of the
// same paths in a copy: git fsck --strict is clean, the trees and git
// status agree.
func TestCommitFileBecameDirectory(t *testing.T) {
	e := newRepoEnv(t)
	if err := os.Remove(filepath.Join(e.root, "marker.txt")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(e.root, "marker.txt", "inside.txt"), []byte("now a directory\n"))
	if err := os.RemoveAll(filepath.Join(e.root, "config")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(e.root, "config"), []byte("now a file\n"))
	writeFile(t, filepath.Join(e.root, "README.md"), []byte("changed\n"))
	paths := []string{"marker.txt/inside.txt", "config", "README.md"}

	copyDir := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", e.root, copyDir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	gitIn(t, copyDir, append([]string{"add", "--"}, paths...)...)
	gitIn(t, copyDir, "commit", "-qm", "replace")

	cs := e.client(t, e.serveHTTP(t))
	res := structured[git.CommitResult](t, e.call(t, cs, "commit_repo_changes", map[string]any{"workdir": "wd", "paths": paths, "message": "replace"}))
	if strings.Join(res.Added, ",") != "config,marker.txt/inside.txt" || strings.Join(res.Deleted, ",") != "config/settings.ini,marker.txt" || strings.Join(res.Modified, ",") != "README.md" {
		t.Fatalf("commit result %+v", res)
	}
	fsckStrict(t, e.root)
	if ours, theirs := gitIn(t, e.root, "ls-tree", "-r", "-t", "HEAD"), gitIn(t, copyDir, "ls-tree", "-r", "-t", "HEAD"); ours != theirs {
		t.Fatalf("our tree:\n%s\ngit's:\n%s", ours, theirs)
	}
	if ours, theirs := gitIn(t, e.root, "status", "--porcelain=v2", "-uall"), gitIn(t, copyDir, "status", "--porcelain=v2", "-uall"); ours != theirs {
		t.Fatalf("git status after our commit:\n%s\nafter git's:\n%s", ours, theirs)
	}
}

// TestRepoChangesWithFIFOs: an untracked FIFO and a tracked file replaced
// by one. inspect_repo's status and changes answer without opening either
// (a FIFO nobody writes would block the call): the status is git's (the
// untracked FIFO is not listed, the replaced file is modified), and the
// patch holds the regular files only, saying why the FIFO has none.
func TestRepoChangesWithFIFOs(t *testing.T) {
	e := newRepoEnv(t)
	if err := os.Remove(filepath.Join(e.root, "marker.txt")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"marker.txt", "pipe"} {
		if err := syscall.Mkfifo(filepath.Join(e.root, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(e.root, "new.txt"), []byte("new\n"))
	want := gitIn(t, e.root, "status", "--porcelain")
	if want != " M marker.txt\n?? new.txt\n" {
		t.Fatalf("git status --porcelain:\n%s", want)
	}
	cs := e.client(t, e.serveHTTP(t))
	st := resultText(e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "status"}))
	if _, rest, _ := strings.Cut(st, "\n"); rest != want {
		t.Fatalf("status:\n%s\ngit status --porcelain:\n%s", st, want)
	}
	res := e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "changes"})
	ch := resultText(res)
	if !strings.Contains(ch, "+new\n") || strings.Contains(ch, "a/marker.txt") || !strings.Contains(ch, "no patch: marker.txt (special_file)") {
		t.Fatalf("changes:\n%s", ch)
	}
	out := structured[inspectRepoOut](t, res)
	if out.Diff == nil || len(out.Diff.Files) != 2 || out.Diff.Files[0] != (git.DiffFile{Path: "marker.txt", Change: "special_file"}) {
		t.Fatalf("changes' files: %+v", out.Diff)
	}
	// Committing it is refused as git add refuses it; nothing changes.
	head := gitIn(t, e.root, "rev-parse", "HEAD")
	toolErr(t, e.call(t, cs, "commit_repo_changes", map[string]any{"workdir": "wd", "paths": []string{"marker.txt"}, "message": "m"}), "UNSUPPORTED_FILE_TYPE")
	if gitIn(t, e.root, "rev-parse", "HEAD") != head {
		t.Fatal("a refused commit moved HEAD")
	}
}

// TestRepoDiffLatin1: a change to a Latin-1 file (not UTF-8) has its
// patch, written in Latin-1 (each character one byte) and named on a
// latin1 line; encoded back to bytes it is what git diff writes.
func TestRepoDiffLatin1(t *testing.T) {
	e := newRepoEnv(t)
	writeFile(t, filepath.Join(e.root, "legacy.c"), []byte("/* caf\xe9 */\nint a;\n"))
	gitIn(t, e.root, "add", "legacy.c")
	gitIn(t, e.root, "commit", "-qm", "latin-1 source")
	writeFile(t, filepath.Join(e.root, "legacy.c"), []byte("/* caf\xe9 cr\xe8me */\nint a;\n"))
	cs := e.client(t, e.serveHTTP(t))
	res := e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "diff", "paths": []string{"legacy.c"}})
	text := resultText(res)
	out := structured[inspectRepoOut](t, res)
	if !strings.Contains(text, "-/* café */\n+/* café crème */\n") || !strings.Contains(text, "latin1 (not UTF-8; each character of the section is one byte): legacy.c") {
		t.Fatalf("diff of a Latin-1 file:\n%s", text)
	}
	var raw []byte
	for _, r := range out.Diff.Patch {
		raw = append(raw, byte(r))
	}
	want := gitIn(t, e.root, "diff", "--", "legacy.c")
	if got := string(raw); !strings.HasSuffix(strings.TrimSpace(want), strings.TrimSpace(got[strings.Index(got, "@@"):])) {
		t.Fatalf("encoded back:\n%q\ngit diff:\n%q", got, want)
	}
}
