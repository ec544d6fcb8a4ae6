package mcp

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/search"
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

// headingRevision is the revision on path's heading line of a search_text
// text ("path revision R"), "" when it has none.
func headingRevision(t *testing.T, text, path string) string {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if l == path {
			return ""
		}
		if rest, ok := strings.CutPrefix(l, path+" revision "); ok {
			return rest
		}
	}
	t.Fatalf("no heading line for %s in %q", path, text)
	return ""
}

// TestSearchThenEdit: in a rw workdir search_text gives each file with
// matching lines its revision (text heading and structured revisions),
// which edit_text_file takes as it is; once the file changed, the same
// revision is refused as stale. A read-only workdir's answer has none.
func TestSearchThenEdit(t *testing.T) {
	e := newRWEnv(t)
	cs := e.client(t, e.serveHTTP(t))
	res := e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "path": "sub", "query": "beta", "context": 1})
	text := resultText(res)
	rev := headingRevision(t, text, "sub/a.txt")
	want := structured[map[string]any](t, e.call(t, cs, "stat_file", map[string]any{"workdir": "wd", "path": "sub/a.txt"}))["revision"]
	if rev == "" || rev != want {
		t.Fatalf("heading revision %q, stat_file's %v:\n%s", rev, want, text)
	}
	if o := structured[searchTextOut](t, res); o.Revisions["a.txt"] != rev || len(o.Revisions) != 1 {
		t.Errorf("structured revisions %v, want a.txt: %s", o.Revisions, rev)
	}
	// Lines mode without context too.
	if r2 := headingRevision(t, resultText(e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "query": "alpha"})), "sub/a.txt"); r2 != rev {
		t.Errorf("lines mode revision %q, want %q", r2, rev)
	}
	edit := map[string]any{"workdir": "wd", "path": "sub/a.txt", "edits": []map[string]any{{"old_text": "beta", "new_text": "gamma"}}, "expected_revision": rev}
	if res := e.call(t, cs, "edit_text_file", edit); res.IsError {
		t.Fatalf("edit with the search's revision: %s", resultText(res))
	}
	edit["edits"] = []map[string]any{{"old_text": "alpha", "new_text": "delta"}}
	toolErr(t, e.call(t, cs, "edit_text_file", edit), "REVISION_MISMATCH: ")

	// Read-only: no revision, no revisions.
	res = e.call(t, cs, "search_text", map[string]any{"workdir": "ro", "query": "read"})
	if rev := headingRevision(t, resultText(res), "ro.txt"); rev != "" {
		t.Errorf("ro workdir heading has revision %q", rev)
	}
	if o := structured[map[string]any](t, res); o["revisions"] != nil {
		t.Errorf("ro workdir revisions %v", o["revisions"])
	}
}

// newDirEnv serves dir as the workdir "wd" (flag suffix, e.g. ":rw") with
// the environment settings env.
func newDirEnv(t *testing.T, dir, suffix string, env ...string) *testEnv {
	t.Helper()
	cfg, err := sfs.LoadConfig(env, []string{"wd=" + dir + suffix})
	if err != nil {
		t.Fatal(err)
	}
	f, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	e := &testEnv{parent: dir, root: dir, log: &syncBuffer{}}
	e.deps = &Deps{FS: f, Search: search.New(f), Log: &Logger{Logger: slog.New(slog.NewJSONHandler(e.log, nil))}}
	return e
}

// TestCountTotalComplete: count mode's total is every file's when only
// the page's file limit cut the answer, and says it is a lower bound, and
// why, when the walk limit stopped the scan or it started at a cursor.
func TestCountTotalComplete(t *testing.T) {
	dir := t.TempDir()
	want := 0
	for i := range 12 {
		n := 1 + i%3
		writeFile(t, filepath.Join(dir, fmt.Sprintf("d%d/f%02d.txt", i/3, i)), []byte(strings.Repeat("TODO x\n", n)))
		want += n
	}
	e := newDirEnv(t, dir, "")
	cs := e.client(t, e.serveHTTP(t))
	res := e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "query": "TODO", "output": "count", "limit": 2})
	o := structured[map[string]any](t, res)
	text := resultText(res)
	if o["total"] != float64(want) || o["total_incomplete"] != nil || o["truncated_reason"] != "limit" || len(o["files"].(map[string]any)) != 2 {
		t.Fatalf("count page: %v", o)
	}
	if !strings.Contains(text, fmt.Sprintf("\ntotal: %d\n", want)) {
		t.Errorf("text does not say total: %d:\n%s", want, text)
	}
	// A full page from a cursor counts its own files only (the first
	// page aggregated the rest): a lower bound.
	res = e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "query": "TODO", "output": "count", "limit": 2, "cursor": o["next_cursor"]})
	o = structured[map[string]any](t, res)
	if o["total_incomplete"] != search.TotalPageOnly || o["total"] != float64(3+1) || o["more_files"] != nil ||
		!strings.Contains(resultText(res), "(incomplete: "+search.TotalPageOnly+")") {
		t.Errorf("cursor page: %v\n%s", o, resultText(res))
	}
	// The last page, from a cursor, counts from it to the end.
	res = e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "query": "TODO", "output": "count", "limit": 10, "cursor": o["next_cursor"]})
	o = structured[map[string]any](t, res)
	if o["total_incomplete"] != search.TotalFromCursor || o["truncated"] != nil || !strings.Contains(resultText(res), "total: at least ") ||
		!strings.Contains(resultText(res), "(incomplete: "+search.TotalFromCursor+")") {
		t.Errorf("last cursor page: %v\n%s", o, resultText(res))
	}

	// The walk stops after 9 entries: the total is of those read.
	e = newDirEnv(t, dir, "", "SERVERFS_MAX_WALK_ENTRIES=9")
	cs = e.client(t, e.serveHTTP(t))
	res = e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "query": "TODO", "output": "count", "limit": 2})
	o = structured[map[string]any](t, res)
	if tot, _ := o["total"].(float64); o["total_incomplete"] != sfs.TruncatedWalkLimit || tot == 0 || tot >= float64(want) || !strings.Contains(resultText(res), "(incomplete: walk_limit)") {
		t.Errorf("walk limit: %v\n%s", o, resultText(res))
	}
}

// TestFindIgnoresCase: find_files matches either case unless
// case_sensitive, and an empty answer says "0 matches" and why it may be.
func TestFindIgnoresCase(t *testing.T) {
	e := newEnv(t)
	cs := e.client(t, e.serveHTTP(t))
	res := e.call(t, cs, "find_files", map[string]any{"workdir": "wd", "pattern": "*COMPOSE*"})
	if got := strings.Split(strings.TrimSpace(resultText(res)), "\n"); len(got) != 3 || got[1] != "compose.yml" || got[2] != "sub/docker-compose.yml" {
		t.Errorf("*COMPOSE*: %q", got)
	}
	fo := structured[findOut](t, e.call(t, cs, "find_files", map[string]any{"workdir": "wd", "pattern": "SUB/*.TXT"}))
	if got := fo.paths(); len(got) != 1 || got[0] != "sub/a.txt" {
		t.Errorf("SUB/*.TXT: %v", got)
	}
	res = e.call(t, cs, "find_files", map[string]any{"workdir": "wd", "pattern": "*COMPOSE*", "case_sensitive": true})
	text := resultText(res)
	if !strings.Contains(text, "\n0 matches; ") || !strings.Contains(text, "case_sensitive false ignores case") || !strings.Contains(text, "hidden entries") {
		t.Errorf("empty case-sensitive find: %q", text)
	}
	if o := structured[findOut](t, res); !strings.HasPrefix(o.Hint, "0 matches") || o.Returned != 0 {
		t.Errorf("empty find structured: %+v", o)
	}
	// Not case-sensitive: the hint does not blame the case.
	text = resultText(e.call(t, cs, "find_files", map[string]any{"workdir": "wd", "pattern": "nothing-like-this*"}))
	if !strings.Contains(text, "0 matches") || strings.Contains(text, "case_sensitive") {
		t.Errorf("empty find: %q", text)
	}
	if text := resultText(e.call(t, cs, "find_files", map[string]any{"workdir": "wd", "pattern": "*.yml"})); strings.Contains(text, "0 matches") {
		t.Errorf("a find with matches says 0 matches: %q", text)
	}
}

// TestPathEchoedAsSent: an absolute path or one climbing out of the
// workdir is named in the error exactly as it was sent, never as a
// workdir path ("wd://etc/passwd") nor a host path.
func TestPathEchoedAsSent(t *testing.T) {
	e := newEnv(t)
	cs := e.client(t, e.serveHTTP(t))
	for path, code := range map[string]string{
		"/etc/passwd":   "INVALID_PATH",
		"../secret.txt": "PATH_OUTSIDE_WORKDIR",
		"sub/../../x":   "PATH_OUTSIDE_WORKDIR",
		`C:\Windows\x`:  "INVALID_PATH",
	} {
		res := e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": path})
		text := resultText(res)
		if want := code + ": " + path + " "; !res.IsError || !strings.HasPrefix(text, want) {
			t.Errorf("%s: %q, want prefix %q", path, text, want)
		}
		if strings.Contains(text, "wd:/") {
			t.Errorf("%s: %q names a workdir path", path, text)
		}
	}
}

// TestNotFoundNearMisses: PATH_NOT_FOUND names up to three entries near
// the missing component (the same but for case first, then one edit
// away), never a hidden or denied one.
func TestNotFoundNearMisses(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"sub/A.txt", "sub/a.TXT", "sub/A.TXT", "sub/a.Txt", "app.log", "id_rsa", ".env"} {
		writeFile(t, filepath.Join(e.root, n), []byte("x\n"))
	}
	cs := e.client(t, e.serveHTTP(t))
	for _, c := range []struct {
		tool, path, want string
	}{
		{"read_text_file", "readme.md", "PATH_NOT_FOUND: wd:/readme.md does not exist; similar: README.md"},
		{"stat_file", "SUB/a.txt", "PATH_NOT_FOUND: wd:/SUB/a.txt does not exist; similar: sub/a.txt"},
		{"list_directory", "Config", "PATH_NOT_FOUND: wd:/Config does not exist; similar: config"},
		// Five names differ only in case: three are named.
		{"stat_file", "sub/a.txT", "PATH_NOT_FOUND: wd:/sub/a.txT does not exist; similar: sub/A.TXT, sub/A.txt, sub/a.TXT"},
		// One edit away: a letter added, dropped, swapped.
		{"read_text_file", "apps.log", "PATH_NOT_FOUND: wd:/apps.log does not exist; similar: app.log"},
		{"read_text_file", "sub/b.txt", "PATH_NOT_FOUND: wd:/sub/b.txt does not exist; similar: sub/A.TXT, sub/A.txt, sub/a.TXT"},
		{"stat_file", "confgi", "PATH_NOT_FOUND: wd:/confgi does not exist; similar: config"},
		// No near miss: the message is as before.
		{"stat_file", "nothing.md", "PATH_NOT_FOUND: wd:/nothing.md does not exist"},
	} {
		args := map[string]any{"workdir": "wd", "path": c.path}
		if text := toolErr(t, e.call(t, cs, c.tool, args), "PATH_NOT_FOUND: "); text != c.want {
			t.Errorf("%s %s: %q, want %q", c.tool, c.path, text, c.want)
		}
	}
	// "id_rſa" (a long s) is not denied, and folds to id_rsa, which is:
	// the denied name is not named. Hidden names start with ".", which
	// has no other case, so no visible name folds to one.
	text := toolErr(t, e.call(t, cs, "stat_file", map[string]any{"workdir": "wd", "path": "id_r\u017fa"}), "PATH_NOT_FOUND: ")
	if strings.Contains(text, "similar") || strings.Contains(text, "id_rsa") {
		t.Errorf("a denied sibling is named: %q", text)
	}
	// One edit from a denied (id_rsa) and a hidden (.env) name: neither
	// is named.
	for _, p := range []string{"id_rs", "env", ".envv"} {
		text := toolErr(t, e.call(t, cs, "stat_file", map[string]any{"workdir": "wd", "path": p}), "")
		if strings.Contains(text, "similar") || strings.Contains(text, "id_rsa") || strings.Contains(text, ".env") && p != ".envv" {
			t.Errorf("%s: a denied or hidden sibling is named: %q", p, text)
		}
	}
}

// TestCountAggregate: one count call covers the whole tree: the files past
// the limit are aggregated (more_files, more_lines, and the text's "… and
// N more files with M matching lines") and the total is every file's, as
// rg -c summed; where the walk limit cut the scan the aggregate says "at
// least".
func TestCountAggregate(t *testing.T) {
	dir := t.TempDir()
	files, lines := 0, 0
	perFile := map[string]int{}
	for i := range 30 {
		n := i % 4 // a quarter of the files have no match
		writeFile(t, filepath.Join(dir, fmt.Sprintf("d%d/f%02d.txt", i%5, i)), []byte(strings.Repeat("func x\nother\n", n)))
		if n > 0 {
			files, lines = files+1, lines+n
			perFile[fmt.Sprintf("d%d/f%02d.txt", i%5, i)] = n
		}
	}
	e := newDirEnv(t, dir, "")
	cs := e.client(t, e.serveHTTP(t))
	res := e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "query": "func", "output": "count", "limit": 4})
	o := structured[map[string]any](t, res)
	listed, listedLines := 0, 0
	for p, n := range o["files"].(map[string]any) {
		if float64(perFile[p]) != n {
			t.Errorf("%s: count %v, want %d", p, n, perFile[p])
		}
		listed, listedLines = listed+1, listedLines+int(n.(float64))
	}
	more := fmt.Sprintf("\n… and %d more files with %d matching lines\ntotal: %d\n", files-listed, lines-listedLines, lines)
	if listed != 4 || o["more_files"] != float64(files-listed) || o["more_lines"] != float64(lines-listedLines) || o["total"] != float64(lines) ||
		!strings.Contains(resultText(res), more) {
		t.Errorf("count: %v\n%s\nwant %q", o, resultText(res), more)
	}
	// A limit the files fit in: no aggregate.
	res = e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "query": "func", "output": "count", "limit": 100})
	if o := structured[map[string]any](t, res); o["more_files"] != nil || o["more_lines"] != nil || strings.Contains(resultText(res), "more file") {
		t.Errorf("complete count: %v\n%s", o, resultText(res))
	}

	// Files mode: the files past the list, no lines.
	res = e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "query": "func", "output": "files", "limit": 4})
	if o := structured[map[string]any](t, res); o["more_files"] != float64(files-4) || o["more_lines"] != nil ||
		!strings.Contains(resultText(res), fmt.Sprintf("\n… and %d more files\n", files-4)) || strings.Contains(resultText(res), "total:") {
		t.Errorf("files: %v\n%s", o, resultText(res))
	}

	e = newDirEnv(t, dir, "", "SERVERFS_MAX_WALK_ENTRIES=25")
	cs = e.client(t, e.serveHTTP(t))
	res = e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "query": "func", "output": "count", "limit": 1})
	if o := structured[map[string]any](t, res); o["more_files"] == nil || !strings.Contains(resultText(res), "… and at least ") {
		t.Errorf("walk limit: %v\n%s", o, resultText(res))
	}
}
