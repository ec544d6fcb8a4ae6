package mcp

import (
	"strings"
	"testing"
)

// TestResultPathsWorkdirRelative: find_files and search_text below a
// path print workdir-relative paths, which read_text_file takes as they
// are.
func TestResultPathsWorkdirRelative(t *testing.T) {
	e := newEnv(t)
	cs := e.client(t, e.serveHTTP(t))
	find := resultText(e.call(t, cs, "find_files", map[string]any{"workdir": "wd", "path": "sub", "pattern": "*.txt"}))
	search := resultText(e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "path": "sub", "query": "beta"}))
	for what, text := range map[string]string{"find_files": find, "search_text": search} {
		lines := strings.Split(text, "\n")
		if len(lines) < 2 || lines[1] != "sub/a.txt" {
			t.Fatalf("%s text %q: want its second line sub/a.txt", what, text)
		}
		if res := e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": lines[1]}); res.IsError {
			t.Errorf("%s: read_text_file(%q): %s", what, lines[1], resultText(res))
		}
	}
}
