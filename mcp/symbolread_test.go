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

// TestSearchDefinitionContext: search_text's definition shows each hit
// inside its enclosing definition, whole, one block per definition; a hit
// outside any definition gets lines around it; the refusals.
func TestSearchDefinitionContext(t *testing.T) {
	e := newEnv(t)
	src := "package p\n\nvar needle = 1\n\nfunc A() {\n\tx := 1\n\tuse(needle)\n\tuse(needle)\n}\n\nfunc B() {}\n"
	writeFile(t, filepath.Join(e.root, "code", "p.go"), []byte(src))
	cs := e.client(t, e.serveHTTP(t))
	res := e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "path": "code", "query": "use(needle)", "definition": true})
	got := resultText(res)
	want := "code/p.go\n5-func A() {\n6-\tx := 1\n7:\tuse(needle)\n8:\tuse(needle)\n9-}\n"
	if res.IsError || !strings.Contains(got, want) {
		t.Errorf("got:\n%s\nwant it to hold:\n%s", got, want)
	}
	got = resultText(e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "path": "code", "query": "var needle", "definition": true}))
	if !strings.Contains(got, "1-package p\n2-\n3:var needle = 1\n4-\n5-func A() {\n6-\tx := 1\n") {
		t.Errorf("outside a definition:\n%s", got)
	}
	toolErr(t, e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "query": "needle", "definition": true, "context": 2}), "INVALID_ARGUMENT")
}

// TestSearchReferences: output references keeps the uses of an identifier
// in code (not comments, strings or longer words) and names where it is
// defined; a query that is no identifier is refused.
func TestSearchReferences(t *testing.T) {
	e := newEnv(t)
	src := "package p\n\n// Dial dials.\nfunc Dial() {}\n\nfunc use() {\n\tDial() // Dial\n\t_ = \"Dial\"\n\tRedial()\n}\n"
	writeFile(t, filepath.Join(e.root, "code", "p.go"), []byte(src))
	writeFile(t, filepath.Join(e.root, "code", "notes.txt"), []byte("Dial here\n"))
	cs := e.client(t, e.serveHTTP(t))
	got := resultText(e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "path": "code", "query": "Dial", "output": "references"}))
	for _, want := range []string{"definitions: code/p.go:3-4 func Dial\n", "code/p.go\n4:func Dial() {}\n7:\tDial() // Dial\n", "code/notes.txt\n1:Dial here\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"3:// Dial", "8:", "9:"} {
		if strings.Contains(got, bad) {
			t.Errorf("holds %q:\n%s", bad, got)
		}
	}
	toolErr(t, e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "query": "Dial(", "output": "references"}), "INVALID_ARGUMENT")
}
