package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepoToolsOnBorrowedObjects: a work tree whose objects all live in
// another repository outside the workdir (what git clone --shared
// leaves: objects/info/alternates) answers REPO_INCOMPLETE, saying so,
// from every repository tool and view, never INTERNAL_ERROR: the
// objects are out of ServerFS's reach.
func TestRepoToolsOnBorrowedObjects(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	e := newRWEnv(t)
	src := filepath.Join(t.TempDir(), "src")
	os.MkdirAll(filepath.Join(src, "sub"), 0o755)
	gitIn(t, src, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(src, "sub", "a.txt"), []byte(aText))
	gitIn(t, src, "add", "-A")
	gitIn(t, src, "-c", "user.name=S", "-c", "user.email=s@example.invalid", "commit", "-qm", "borrowed")
	gitIn(t, e.root, "init", "-q", "-b", "main")
	gitIn(t, e.root, "config", "user.name", "Agent Via ServerFS")
	gitIn(t, e.root, "config", "user.email", "agent@example.invalid")
	writeFile(t, filepath.Join(e.root, ".git", "objects", "info", "alternates"), []byte(filepath.Join(src, ".git", "objects")+"\n"))
	gitIn(t, e.root, "update-ref", "refs/heads/main", strings.TrimSpace(gitIn(t, src, "rev-parse", "HEAD")))
	gitIn(t, e.root, "read-tree", "HEAD")
	if st := gitIn(t, e.root, "status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Fatalf("git status of the borrowing work tree: %q", st)
	}
	cs := e.client(t, e.serveHTTP(t))
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"inspect_repo", map[string]any{"workdir": "wd", "view": "status"}},
		{"inspect_repo", map[string]any{"workdir": "wd", "view": "diff", "paths": []string{"sub/a.txt"}}},
		{"inspect_repo", map[string]any{"workdir": "wd", "view": "staged_diff", "paths": []string{"sub/a.txt"}}},
		{"read_repo_history", map[string]any{"workdir": "wd", "view": "log"}},
		{"read_repo_history", map[string]any{"workdir": "wd", "view": "show"}},
		{"read_repo_history", map[string]any{"workdir": "wd", "view": "blame", "path": "sub/a.txt"}},
		{"commit_repo_changes", map[string]any{"workdir": "wd", "paths": []string{"README.md"}, "message": "m"}},
	} {
		if text := toolErr(t, e.call(t, cs, c.tool, c.args), "REPO_INCOMPLETE: wd:/ "); !strings.Contains(text, "alternates") {
			t.Errorf("%s %v: %q does not say the objects are borrowed", c.tool, c.args["view"], text)
		}
	}
}
