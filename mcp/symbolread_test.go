package mcp

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReadSymbol: a definition read whole by its name, in a file and
// below a directory, with the window header and the other definitions
// of the name; a file's outline; the refusals.
func TestReadSymbol(t *testing.T) {
	e := newEnv(t)
	dial := "package net\n\n// Dialer dials.\ntype Dialer struct{}\n\n// DialContext dials with a context.\nfunc (d *Dialer) DialContext() error {\n\treturn nil\n}\n\nfunc Dial() {}\n"
	writeFile(t, filepath.Join(e.root, "net", "dial.go"), []byte(dial))
	writeFile(t, filepath.Join(e.root, "net", "other.go"), []byte("package net\n\n// DialContext here too.\nfunc DialContext() {}\n"))
	writeFile(t, filepath.Join(e.root, "py", "app.py"), []byte("class App:\n    def run(self):\n        return 1\n"))
	cs := e.client(t, e.serveHTTP(t))
	read := func(args map[string]any) string {
		t.Helper()
		args["workdir"] = "wd"
		res := e.call(t, cs, "read_text_file", args)
		if res.IsError {
			t.Fatalf("%v: %s", args, resultText(res))
		}
		return resultText(res)
	}
	got := read(map[string]any{"path": "net/dial.go", "symbol": "Dialer.DialContext"})
	want := "==> wd:net/dial.go lines 6-9 next start_line 10 definition method Dialer.DialContext <==\n// DialContext dials with a context.\nfunc (d *Dialer) DialContext() error {\n\treturn nil\n}\n"
	if got != want {
		t.Errorf("in a file:\n%q\nwant\n%q", got, want)
	}
	got = read(map[string]any{"path": "net", "symbol": "DialContext"})
	if !strings.HasPrefix(got, "==> wd:net/") || !strings.Contains(got, "definition ") || !strings.Contains(got, " also at net/") {
		t.Errorf("below a directory:\n%s", got)
	}
	got = read(map[string]any{"path": "", "symbol": "App.run"})
	if want := "==> wd:py/app.py lines 2-3 of 3 definition method App.run <==\n    def run(self):\n        return 1\n"; got != want {
		t.Errorf("below the root:\n%q\nwant\n%q", got, want)
	}
	got = read(map[string]any{"path": "net/dial.go", "symbol": "*"})
	if want := "==> wd:net/dial.go outline, 3 definitions <==\n3-4 struct Dialer\n6-9 method Dialer.DialContext\n11-11 func Dial\n"; got != want {
		t.Errorf("outline:\n%q\nwant\n%q", got, want)
	}
	for _, c := range []struct {
		args map[string]any
		code string
	}{
		{map[string]any{"path": "net/dial.go", "symbol": "Nope"}, "INVALID_ARGUMENT"},
		{map[string]any{"path": "net/dial.go", "symbol": "Dial", "tail": 3}, "INVALID_ARGUMENT"},
		{map[string]any{"path": "net", "symbol": "*"}, "INVALID_ARGUMENT"},
		{map[string]any{"path": "README.md", "symbol": "x"}, "INVALID_ARGUMENT"},
		{map[string]any{"path": "../outside/canary.txt", "symbol": "x"}, "PATH_OUTSIDE_WORKDIR"},
	} {
		c.args["workdir"] = "wd"
		toolErr(t, e.call(t, cs, "read_text_file", c.args), c.code)
	}
}
