package mcp

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestListSkipIgnoredOverBound: ignore rules in force past
// gitignore.MaxCostInForce (two nested 1 MiB .gitignore files of one-byte
// patterns) make list_directory with skip_ignored fail with
// READ_LIMIT_EXCEEDED naming the directory, instead of a listing with
// everything below it hidden; without skip_ignored it lists.
func TestListSkipIgnoredOverBound(t *testing.T) {
	e := newEnv(t)
	tiny := []byte(strings.Repeat("a\n", 1<<19))
	writeFile(t, filepath.Join(e.root, "repo", ".gitignore"), tiny)
	writeFile(t, filepath.Join(e.root, "repo", "d", ".gitignore"), tiny)
	writeFile(t, filepath.Join(e.root, "repo", "d", "f.txt"), []byte("x\n"))
	gitRun(t, filepath.Join(e.root, "repo"), "", "init", "-q")
	cs := e.client(t, e.serveHTTP(t))
	text := toolErr(t, e.call(t, cs, "list_directory", map[string]any{"workdir": "wd", "path": "repo", "depth": 3, "skip_ignored": true}), "READ_LIMIT_EXCEEDED")
	if !strings.Contains(text, "repo/d") {
		t.Errorf("error %q does not name repo/d", text)
	}
	if _, all := listed(t, e.call(t, cs, "list_directory", map[string]any{"workdir": "wd", "path": "repo", "depth": 3})); all["d/f.txt"] == nil {
		t.Errorf("without skip_ignored: %v", all)
	}
}
