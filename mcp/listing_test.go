package mcp

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/serverfs/serverfs/search"
)

// flatten turns a compact listing's nested entries into path -> value
// (a listed directory's value is "dir/").
func flatten(prefix string, m map[string]any, out map[string]any) {
	for name, v := range m {
		p := prefix + name
		if sub, ok := v.(map[string]any); ok {
			out[p] = "dir/"
			flatten(p+"/", sub, out)
			continue
		}
		out[p] = v
	}
}

func listed(t *testing.T, res *sdk.CallToolResult) (*listOut, map[string]any) {
	t.Helper()
	l := structured[listOut](t, res)
	flat := map[string]any{}
	flatten("", l.Entries, flat)
	if l.Returned != len(flat) {
		t.Errorf("returned %d, %d entries", l.Returned, len(flat))
	}
	return &l, flat
}

func gitRun(t *testing.T, dir string, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil && !(len(args) > 0 && args[0] == "check-ignore") {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// TestListTree: list_directory with depth, dirs_only and skip_ignored
// through the real tool; the ignored entries are git's (git check-ignore is
// the oracle); the text content is the same listing as indented lines.
func TestListTree(t *testing.T) {
	e := newEnv(t)
	w := func(rel, s string) { writeFile(t, filepath.Join(e.root, filepath.FromSlash(rel)), []byte(s)) }
	w("repo/.gitignore", "*.log\n!keep.log\nnode_modules/\nbuild/**\n/top.txt\n")
	w("repo/a.log", "x\n")
	w("repo/keep.log", "x\n")
	w("repo/top.txt", "x\n")
	w("repo/src/top.txt", "x\n")
	w("repo/src/main.go", "package main\n")
	w("repo/src/.gitignore", "gen/\n!b.log\n")
	w("repo/src/gen/x.go", "x\n")
	w("repo/src/b.log", "x\n")
	w("repo/node_modules/m/index.js", "x\n")
	w("repo/build/out/bin", "x\n")
	w("repo/docs/guide.md", "x\n")
	if err := os.Symlink("src", filepath.Join(e.root, "repo", "srclink")); err != nil {
		t.Fatal(err)
	}
	gitRun(t, filepath.Join(e.root, "repo"), "", "init", "-q")
	cs := e.client(t, e.serveHTTP(t))

	// Everything, three levels down.
	l, all := listed(t, e.call(t, cs, "list_directory", map[string]any{"workdir": "wd", "path": "repo", "depth": 3}))
	want := map[string]any{"a.log": 2.0, "keep.log": 2.0, "top.txt": 2.0, "src": "dir/", "src/top.txt": 2.0, "src/main.go": 13.0, "src/gen": "dir/", "src/gen/x.go": 2.0, "src/b.log": 2.0,
		"node_modules": "dir/", "node_modules/m": "dir/", "node_modules/m/index.js": 2.0, "build": "dir/", "build/out": "dir/", "build/out/bin": 2.0, "docs": "dir/", "docs/guide.md": 2.0, "srclink": "symlink"}
	if fmt.Sprint(all) != fmt.Sprint(want) || l.Path != "repo" || l.HasMore || l.Total != 0 {
		t.Fatalf("depth 3: %v\nwant %v", all, want)
	}
	// skip_ignored leaves out exactly what git ignores (a directory git
	// ignores takes its contents with it).
	_, kept := listed(t, e.call(t, cs, "list_directory", map[string]any{"workdir": "wd", "path": "repo", "depth": 3, "skip_ignored": true}))
	var paths []string
	for p := range all {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	ignored := map[string]bool{}
	for _, p := range strings.Fields(gitRun(t, filepath.Join(e.root, "repo"), strings.Join(paths, "\n")+"\n", "check-ignore", "--stdin")) {
		ignored[p] = true
	}
	for _, p := range paths {
		gone := false
		for q := p; q != "." && !gone; q = filepath.Dir(q) {
			gone = ignored[q]
		}
		if _, ok := kept[p]; ok == gone {
			t.Errorf("%s: listed %v, git check-ignore says ignored %v", p, ok, gone)
		}
	}
	if len(ignored) == 0 || len(kept) == len(all) {
		t.Fatalf("the oracle ignored nothing: %v", ignored)
	}
	// dirs_only, two levels; values of unlisted directories are "dir".
	_, dirs := listed(t, e.call(t, cs, "list_directory", map[string]any{"workdir": "wd", "path": "repo", "depth": 2, "dirs_only": true}))
	if fmt.Sprint(dirs) != fmt.Sprint(map[string]any{"src": "dir/", "src/gen": "dir", "node_modules": "dir/", "node_modules/m": "dir", "build": "dir/", "build/out": "dir", "docs": "dir/"}) {
		t.Errorf("dirs_only: %v", dirs)
	}
	// Pages: the second starts inside src; its text shows src as context.
	res := e.call(t, cs, "list_directory", map[string]any{"workdir": "wd", "path": "repo", "depth": 2, "offset": 9, "limit": 2})
	text := resultText(res)
	l = ptr(structured[listOut](t, res))
	if !l.HasMore || l.NextOffset != 11 || l.Returned != 2 || l.Total != 15 {
		t.Errorf("page: %+v", l)
	}
	// The page knows the tree's total (15 entries two levels down).
	if want := "wd:/repo\nsrc/\n  b.log 2\n  gen/\nhas_more: next_offset 11 of 15\n"; text != want {
		t.Errorf("page text %q, want %q", text, want)
	}
	// The text of a whole tree.
	res = e.call(t, cs, "list_directory", map[string]any{"workdir": "wd", "path": "repo/src", "depth": 2, "times": true})
	l = ptr(structured[listOut](t, res))
	lines := strings.Split(strings.TrimSuffix(resultText(res), "\n"), "\n")
	if len(lines) != 6 || lines[0] != "wd:/repo/src" || !strings.HasPrefix(lines[1], "b.log 2 20") || !strings.HasPrefix(lines[2], "gen/ ") || !strings.HasPrefix(lines[3], "  x.go 2 ") || l.ModifiedAt["gen/x.go"] == "" {
		t.Errorf("tree text %q, %+v", lines, l)
	}
	for _, args := range []map[string]any{{"depth": 0}, {"depth": 2, "limit": 0}, {"depth": 2, "offset": -1}, {"depth": "2"}, {"dirs_only": "yes"}} {
		args["workdir"] = "wd"
		toolErr(t, e.call(t, cs, "list_directory", args), "INVALID_ARGUMENT: ")
	}
}

// TestListNames: names a line could misread are quoted in the text; the
// JSON has them as they are.
func TestListNames(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{" lead", "trail ", "new\nline", `"quoted`, "a 5", "ok@"} {
		writeFile(t, filepath.Join(e.root, "names", n), []byte("x"))
	}
	cs := e.client(t, e.serveHTTP(t))
	res := e.call(t, cs, "list_directory", map[string]any{"workdir": "wd", "path": "names"})
	want := "wd:/names\n\" lead\" 1\n\"\\\"quoted\" 1\na 5 1\n\"new\\nline\" 1\nok@ 1\n\"trail \" 1\n"
	if text := resultText(res); text != want {
		t.Errorf("text %q, want %q", text, want)
	}
	l := structured[listOut](t, res)
	if l.Entries["new\nline"] != 1.0 || l.Entries[" lead"] != 1.0 {
		t.Errorf("entries %v", l.Entries)
	}
}

// TestNewArgumentsHostilePaths runs hostile paths through every new
// argument (list_directory with depth, read_text_file with tail,
// read_text_files' paths): each answers with the error (or success) the
// old form gives for the same path, and nothing leaks (call checks).
func TestNewArgumentsHostilePaths(t *testing.T) {
	e := newEnv(t)
	cs := e.client(t, e.serveHTTP(t))
	hostile := []string{"../", "../secret.txt", "../../outside/canary.txt", "/etc/passwd", "/", "README.md\x00.png", "sub\xffdir", `C:\x`, `\\host\share`,
		strings.Repeat("a/", 2048), strings.Repeat("n", 300), "link.txt", "link.txt/x", ".hidden.txt", "id_rsa", "sub/../../secret.txt", "sub/../README.md",
		"./sub//a.txt", "~", "README.md/", "sub/", "logs/app.log.1.gz", "-x", "@file", "KEY=value", "host:path", "sub/a.txt\n"}
	answer := func(res *sdk.CallToolResult) string {
		if res.IsError {
			code, _, _ := strings.Cut(resultText(res), ":")
			return code
		}
		return "ok"
	}
	for _, p := range hostile {
		list := answer(e.call(t, cs, "list_directory", map[string]any{"workdir": "wd", "path": p}))
		for _, args := range []map[string]any{{"depth": 3}, {"depth": 2, "dirs_only": true, "skip_ignored": true, "times": true}} {
			args["workdir"], args["path"] = "wd", p
			if got := answer(e.call(t, cs, "list_directory", args)); got != list {
				t.Errorf("list_directory %q %v: %s, one level says %s", p, args, got, list)
			}
		}
		single := e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": p})
		read := answer(single)
		if got := answer(e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": p, "tail": 3})); got != read {
			t.Errorf("read_text_file %q tail: %s, a read says %s", p, got, read)
		}
		m := structured[readTextFilesOut](t, e.call(t, cs, "read_text_files", map[string]any{"workdir": "wd", "paths": []string{p, "README.md"}}))
		got := "ok"
		if m.Files[0].Error != "" {
			got, _, _ = strings.Cut(m.Files[0].Error, ":")
			if m.Files[0].Error != resultText(single) {
				t.Errorf("read_text_files %q: %q, read_text_file says %q", p, m.Files[0].Error, resultText(single))
			}
		}
		if got != read || m.Files[1].Content != readmeText {
			t.Errorf("read_text_files %q: %s, a read says %s; README.md %+v", p, got, read, m.Files[1])
		}
	}
}

// TestListingBytesPerEntry measures what a model reads of a listing (text
// content plus structured content) per entry, now and in the former
// format (each entry's name, path, type, size and modified_at, as JSON in
// both), on directories of GOROOT/src. It logs the figures the closing
// note quotes, holds GOROOT/src's one-level listing to at most 40 bytes
// per entry, and net/http's (long Go file names: the name and size are
// read twice, once per channel) to 45; a find of net/http's *.go files to
// 42 bytes per match, a search of net/http for func (the line's text is
// the part that cannot be cut) to 130.
func TestListingBytesPerEntry(t *testing.T) {
	goroot := filepath.Join(goEnv(t, "GOROOT"), "src")
	if _, err := os.Stat(goroot); err != nil {
		t.Fatalf("GOROOT/src: %v", err)
	}
	e := newEnv(t)
	e.reconfigure(t, []string{"go=" + goroot}, []string{"SERVERFS_MAX_LIST_ENTRIES=5000"}, nil)
	cs := e.client(t, e.serveHTTP(t))
	measure := func(args map[string]any) (now, before float64, n int) {
		args["workdir"], args["limit"] = "go", 5000
		res := e.call(t, cs, "list_directory", args)
		b, _ := json.Marshal(res.StructuredContent)
		l := structured[listOut](t, res)
		n = l.Returned
		now = float64(len(b)+len(resultText(res))) / float64(n)
		// The former answer of the same entries (depth 1 only).
		if args["depth"] == nil {
			old, err := e.deps.FS.List("go", args["path"].(string), 0, 5000)
			if err != nil {
				t.Fatal(err)
			}
			ob, _ := json.Marshal(old)
			before = 2 * float64(len(ob)) / float64(n)
		}
		return now, before, n
	}
	for _, c := range []struct {
		name string
		args map[string]any
		max  float64
	}{
		{"net/http", map[string]any{"path": "net/http"}, 45},
		{"GOROOT/src", map[string]any{"path": ""}, 40},
		{"cmd/compile/internal/ssa", map[string]any{"path": "cmd/compile/internal/ssa"}, 0},
		{"GOROOT/src depth 2", map[string]any{"path": "", "depth": 2}, 0},
	} {
		now, before, n := measure(c.args)
		t.Logf("%s: %d entries, %.1f bytes per entry (text + structured), before %.1f", c.name, n, now, before)
		if c.max > 0 && now > c.max {
			t.Errorf("%s: %.1f bytes per entry, want <= %.0f", c.name, now, c.max)
		}
	}
	// find and search: bytes per match, text + structured, now and in the
	// former format (each match's workdir-relative path and type, or path,
	// line and text, as JSON in both channels).
	for _, c := range []struct {
		tool string
		args map[string]any
		max  float64
	}{
		// The text's lines are workdir-relative (net/http/...: 9 bytes
		// a match more than relative to path, 48.3 measured), so that
		// each can be passed to another tool as it is.
		{"find_files", map[string]any{"workdir": "go", "path": "net/http", "pattern": "*.go", "limit": 100}, 52},
		{"search_text", map[string]any{"workdir": "go", "path": "net/http", "query": "func", "limit": 100}, 130},
	} {
		res := e.call(t, cs, c.tool, c.args)
		b, _ := json.Marshal(res.StructuredContent)
		var r struct {
			Returned int `json:"returned"`
		}
		json.Unmarshal(b, &r)
		if r.Returned == 0 {
			t.Fatalf("%s %v: no matches", c.tool, c.args)
		}
		now, before := float64(len(b)+len(resultText(res)))/float64(r.Returned), 0.0
		if c.tool == "find_files" {
			old, err := e.deps.FS.Find(t.Context(), "go", "net/http", "*.go", 100)
			if err != nil {
				t.Fatal(err)
			}
			ob, _ := json.Marshal(old)
			before = 2 * float64(len(ob)) / float64(r.Returned)
		} else {
			old, err := e.deps.Search.Search(t.Context(), search.Request{Workdir: "go", Path: "net/http", Query: "func", CaseSensitive: true, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			ob, _ := json.Marshal(old)
			before = 2 * float64(len(ob)) / float64(r.Returned)
		}
		t.Logf("%s: %d matches, %.1f bytes per match (text + structured), before %.1f", c.tool, r.Returned, now, before)
		if c.max > 0 && now > c.max {
			t.Errorf("%s: %.1f bytes per match, want <= %.0f", c.tool, now, c.max)
		}
	}
}

// goEnv is a variable of the go command on PATH (the toolchain running the
// test), as go env prints it.
func goEnv(t testing.TB, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}
