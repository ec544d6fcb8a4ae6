package mcp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/serverfs/serverfs/git"
)

// TestRepoHistoryTool: read_repo_history over HTTP answers git's log,
// never names a hidden or credential path, and refuses the hostile
// corpus with codes and no effect.
func TestRepoHistoryTool(t *testing.T) {
	e := newRepoEnv(t)
	writeFile(t, filepath.Join(e.root, "sub", "a.txt"), []byte("alpha\ngamma\n"))
	writeFile(t, filepath.Join(e.root, "id_rsa"), []byte("PRIVATE "+canaryText+" changed\n"))
	writeFile(t, filepath.Join(e.root, ".hidden.txt"), []byte("hidden changed\n"))
	gitIn(t, e.root, "add", "-A")
	gitIn(t, e.root, "commit", "-qm", "second\n\nwith a body")
	cs := e.client(t, e.serveHTTP(t))

	out := structured[readRepoHistoryOut](t, e.call(t, cs, "read_repo_history", map[string]any{"workdir": "wd", "view": "log", "files": true}))
	if out.Log == nil || len(out.Log.Commits) != 2 {
		t.Fatalf("log: %+v", out.Log)
	}
	// A limit above the maximum is clamped, with a note.
	if res := e.call(t, cs, "read_repo_history", map[string]any{"workdir": "wd", "view": "log", "limit": 1 << 40}); !strings.Contains(resultText(res), fmt.Sprintf("limit clamped to %d", git.MaxLogCommits)) {
		t.Errorf("log limit 1<<40: %s", resultText(res))
	}
	c := out.Log.Commits[0]
	if head := strings.TrimSpace(gitIn(t, e.root, "rev-parse", "HEAD")); c.ID != head || c.Subject != "second" || c.Body != "with a body" || c.HiddenFiles != 2 ||
		len(c.Files) != 1 || c.Files[0].Path != "sub/a.txt" || c.Files[0].Status != "M" {
		t.Fatalf("newest commit: %+v", c)
	}
	show := structured[readRepoHistoryOut](t, e.call(t, cs, "read_repo_history", map[string]any{"workdir": "wd", "view": "show", "rev": c.ID[:7]}))
	if show.Show == nil || show.Show.Commit.ID != c.ID || len(show.Show.Files) != 1 || show.Show.Files[0].Added != 1 || show.Show.Files[0].Deleted != 1 ||
		show.Show.HiddenFiles != 2 || !strings.Contains(show.Show.Patch, "-beta\n+gamma\n") {
		t.Fatalf("show: %+v", show.Show)
	}
	res := e.call(t, cs, "read_repo_history", map[string]any{"workdir": "wd", "view": "show"})
	if text := resultText(res); strings.Contains(text, "id_rsa") || strings.Contains(text, ".hidden") || strings.Contains(text, canaryText) {
		t.Fatalf("a hidden path or its content in %s", text)
	}
	bl := structured[readRepoHistoryOut](t, e.call(t, cs, "read_repo_history", map[string]any{"workdir": "wd", "view": "blame", "path": "sub/a.txt"}))
	if bl.Blame == nil || len(bl.Blame.Runs) != 2 || bl.Blame.Runs[0].Commit == c.ID || bl.Blame.Runs[1].Commit != c.ID || bl.Blame.Runs[1].StartLine != 2 ||
		bl.Blame.Commits[c.ID].Subject != "second" {
		t.Fatalf("blame: %+v", bl.Blame)
	}
	res = e.call(t, cs, "read_repo_history", map[string]any{"workdir": "wd", "view": "log", "limit": 1})
	if text := resultText(res); strings.Contains(text, "id_rsa") || strings.Contains(text, ".hidden") || strings.Contains(text, e.root) {
		t.Fatalf("a hidden path or the host path in %s", text)
	}
	refsBefore := gitIn(t, e.root, "for-each-ref")
	for _, c := range []struct {
		args   map[string]any
		prefix string
	}{
		{map[string]any{"workdir": "ro", "view": "log"}, "REPO_OPS_DISABLED: "},
		{map[string]any{"workdir": "wd", "view": "log", "rev": "--output=probe-out"}, "INVALID_ARGUMENT: "},
		{map[string]any{"workdir": "wd", "view": "log", "rev": "-p"}, "INVALID_ARGUMENT: "},
		{map[string]any{"workdir": "wd", "view": "log", "rev": "HEAD@{0}"}, "INVALID_ARGUMENT: "},
		{map[string]any{"workdir": "wd", "view": "log", "rev": "main..main"}, "INVALID_ARGUMENT: "},
		{map[string]any{"workdir": "wd", "view": "log", "rev": "refs/remotes/origin/main"}, "INVALID_ARGUMENT: "},
		{map[string]any{"workdir": "wd", "view": "log", "rev": "nosuchbranch"}, "REV_NOT_FOUND: "},
		{map[string]any{"workdir": "wd", "view": "log", "limit": 0}, "INVALID_ARGUMENT: "},
		{map[string]any{"workdir": "wd", "view": "log", "paths": []string{"id_rsa"}}, "DENIED_PATH: "},
		{map[string]any{"workdir": "wd", "view": "log", "paths": []string{".hidden.txt"}}, "HIDDEN_PATH_NOT_ALLOWED: "},
		{map[string]any{"workdir": "wd", "view": "log", "paths": []string{".git/config"}}, "HIDDEN_PATH_NOT_ALLOWED: "},
		{map[string]any{"workdir": "wd", "view": "status"}, "INVALID_ARGUMENT: "},
		{map[string]any{"workdir": "wd", "view": "show", "rev": "--output=probe-out"}, "INVALID_ARGUMENT: "},
		{map[string]any{"workdir": "wd", "view": "show", "rev": "HEAD~1"}, "INVALID_ARGUMENT: "},
		{map[string]any{"workdir": "wd", "view": "show", "paths": []string{"id_rsa"}}, "DENIED_PATH: "},
		{map[string]any{"workdir": "wd", "view": "show", "max_bytes": 1}, "INVALID_ARGUMENT: "},
		{map[string]any{"workdir": "wd", "view": "blame"}, "INVALID_ARGUMENT: "},
		{map[string]any{"workdir": "wd", "view": "show", "files": true}, "INVALID_ARGUMENT: "},
		{map[string]any{"workdir": "wd", "view": "blame", "path": "id_rsa"}, "DENIED_PATH: "},
		{map[string]any{"workdir": "wd", "view": "blame", "path": ".hidden.txt"}, "HIDDEN_PATH_NOT_ALLOWED: "},
		{map[string]any{"workdir": "wd", "view": "blame", "path": "sub/a.txt", "rev": "-p"}, "INVALID_ARGUMENT: "},
		{map[string]any{"workdir": "wd", "view": "blame", "path": "sub/a.txt", "start_line": 1, "max_lines": 0}, "INVALID_ARGUMENT: "},
	} {
		toolErr(t, e.call(t, cs, "read_repo_history", c.args), c.prefix)
	}
	if after := gitIn(t, e.root, "for-each-ref"); after != refsBefore {
		t.Fatalf("refs changed: %s", after)
	}
	if _, err := os.Stat(filepath.Join(e.root, "probe-out")); err == nil {
		t.Fatal("--output wrote a file")
	}
}
