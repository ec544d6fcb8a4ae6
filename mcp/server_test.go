package mcp

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/mcp/transport"
	"github.com/serverfs/serverfs/search"
)

// Integration tests: go-sdk's client against transport.NewHandler over real HTTP
// (httptest), and against NewServer over in-memory transports for stdio.

const (
	canaryText = "CANARY-OUTSIDE-THE-WORKDIR"
	// markerText is in marker.txt; the call log must never contain it.
	markerText = "MARKER-7f3c9a1e-file-content-never-logged"
	testVer    = "test"
)

// syncBuffer is the server log: slog writes from many goroutines while a
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testEnv is workdir "wd" (a real temporary directory) with a canary file
// next to it and one in a directory outside it.
type testEnv struct {
	parent string // temporary directory holding wd, secret.txt and outside/
	root   string // host path of workdir "wd"
	deps   *Deps
	log    *syncBuffer
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func gzipped(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := io.WriteString(zw, s); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The workdir's files.
const (
	readmeText   = "# Demo project\nThis is the demo.\n"
	composeText  = "services:\n  app:\n    environment:\n      DATABASE_URL: postgres://db/app\n"
	settingsText = "[db]\nhost = db\nDATABASE_URL = postgres://db/settings\n"
	gzLogText    = "line one\nconnecting with DATABASE_URL from env\nline three\n"
	aText        = "alpha\nbeta\n"
)

// bigLines is more than one read window (MaxReadLines is 500 by default).
const bigLines = 600

// bigText is big.txt's content.
func bigText() string {
	var big strings.Builder
	for i := 1; i <= bigLines; i++ {
		fmt.Fprintf(&big, "big line %d\n", i)
	}
	return big.String()
}

func newEnv(t *testing.T) *testEnv {
	t.Helper()
	return newEnvMode(t, false)
}

// newRWEnv is newEnv with "wd" read-write with repo ops and a second,
// read-only workdir "ro" (holding ro.txt) beside it: the write and repo
// tools are served.
func newRWEnv(t *testing.T) *testEnv {
	t.Helper()
	return newEnvMode(t, true)
}

func newEnvMode(t testing.TB, rw bool) *testEnv {
	t.Helper()
	parent := t.TempDir()
	e := &testEnv{parent: parent, root: filepath.Join(parent, "wd"), log: &syncBuffer{}}
	w := func(rel string, data []byte) { writeFile(t, filepath.Join(e.root, filepath.FromSlash(rel)), data) }
	w("README.md", []byte(readmeText))
	w("compose.yml", []byte(composeText))
	w("config/settings.ini", []byte(settingsText))
	w("logs/app.log.1.gz", gzipped(t, gzLogText))
	w("sub/a.txt", []byte(aText))
	w("sub/docker-compose.yml", []byte("services: {}\n"))
	w("marker.txt", []byte(markerText+"\n"))
	w(".hidden.txt", []byte("hidden "+canaryText+"\n"))
	w("id_rsa", []byte("PRIVATE "+canaryText+"\n"))
	w("big.txt", []byte(bigText()))
	// Canaries outside the workdir: where ../secret.txt and an escape to
	// a sibling directory would land.
	writeFile(t, filepath.Join(parent, "secret.txt"), []byte(canaryText+"\n"))
	writeFile(t, filepath.Join(parent, "outside", "canary.txt"), []byte(canaryText+"\n"))
	if err := os.Symlink("../secret.txt", filepath.Join(e.root, "link.txt")); err != nil {
		t.Fatal(err)
	}

	flags := []string{"wd=" + e.root}
	if rw {
		roDir := filepath.Join(parent, "ro")
		writeFile(t, filepath.Join(roDir, "ro.txt"), []byte("read only\n"))
		flags = []string{"wd=" + e.root + ":rw:repo", "ro=" + roDir}
	}
	cfg, err := sfs.LoadConfig(nil, flags)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.deps = &Deps{FS: f, Search: search.New(f), Log: &Logger{Logger: slog.New(slog.NewJSONHandler(e.log, nil))}}
	// Registered first, so it runs last: after every server and session
	// registered later has shut down.
	t.Cleanup(func() {
		f.Close()
		e.assertNoLeak(t, "server log", e.log.String())
	})
	return e
}

// assertNoLeak fails when s holds a host path or outside content.
func (e *testEnv) assertNoLeak(t testing.TB, what, s string) {
	t.Helper()
	for _, bad := range []string{e.parent, e.root, canaryText, "root:x:0:0"} {
		if strings.Contains(s, bad) {
			t.Errorf("%s contains %q:\n%s", what, bad, s)
		}
	}
}

// serveHTTP starts transport.NewHandler with the default HTTP configuration on a real
// listener and returns the MCP endpoint's URL.
func (e *testEnv) serveHTTP(t testing.TB) string {
	t.Helper()
	cfg, probs := loadHTTPConfig(nil)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	ts := httptest.NewServer(newHandler(e.deps, cfg, testVer))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL + transport.Path
}

func connectHTTP(ctx context.Context, url string) (*sdk.ClientSession, error) {
	c := sdk.NewClient(&sdk.Implementation{Name: "serverfs-test", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err == nil {
		err = listForHeaders(ctx, cs)
	}
	return cs, err
}

// listForHeaders lists the tools once on a 2026-07-28 session, as a host
// does before its model calls one: go-sdk's client mirrors a tool's
// x-mcp-header arguments (Mcp-Param-Workdir) only for tools it has
// listed, and without the header the stateless lane refuses the call
// (-32020, tools.go workdirHeader).
func listForHeaders(ctx context.Context, cs *sdk.ClientSession) error {
	if ir := cs.InitializeResult(); ir == nil || ir.ProtocolVersion < statelessVersion {
		return nil
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		cs.Close()
		return fmt.Errorf("tools/list: %w", err)
	}
	return nil
}

func (e *testEnv) client(t testing.TB, url string) *sdk.ClientSession {
	t.Helper()
	cs, err := connectHTTP(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool; a protocol error fails the test, a tool error does not.
func (e *testEnv) call(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	b, _ := json.Marshal(res)
	e.assertNoLeak(t, name+" result", string(b))
	return res
}

// structured decodes a successful result's structured content.
func structured[T any](t testing.TB, res *sdk.CallToolResult) T {
	t.Helper()
	var v T
	if res.IsError {
		t.Fatalf("unexpected tool error: %s", resultText(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return v
}

func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// toolErr asserts res is a tool error whose text starts with prefix.
func toolErr(t testing.TB, res *sdk.CallToolResult, prefix string) string {
	t.Helper()
	text := resultText(res)
	if !res.IsError {
		t.Fatalf("want tool error %q, got success: %s", prefix, text)
	}
	if !strings.HasPrefix(text, prefix) {
		t.Fatalf("tool error %q, want prefix %q", text, prefix)
	}
	if res.StructuredContent != nil {
		t.Errorf("tool error carries structured content %v", res.StructuredContent)
	}
	return text
}

var toolNames = []string{"list_workdirs", "list_directory", "find_files", "search_text", "read_text_file", "read_text_files", "stat_file"}

// toolSnap is one tool as tools/list serves it.
type toolSnap struct {
	Name         string               `json:"name"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description"`
	Annotations  *sdk.ToolAnnotations `json:"annotations"`
	InputSchema  any                  `json:"inputSchema"`
	OutputSchema any                  `json:"outputSchema"`
}

func listTools(t *testing.T, cs *sdk.ClientSession) []*sdk.Tool {
	t.Helper()
	var tools []*sdk.Tool
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tool)
	}
	return tools
}

// TestToolSnapshot compares the served tool surface with
// testdata/tools.json; UPDATE_TOOLSNAPS=true rewrites it.
func TestToolSnapshot(t *testing.T) {
	e := newRWEnv(t) // the whole surface: read, write, repo and bridge tools, search and fetch
	wholeSurface(t, e)
	cs := e.client(t, e.serveHTTP(t))
	var snaps []toolSnap
	for _, tool := range listTools(t, cs) {
		snaps = append(snaps, toolSnap{tool.Name, tool.Title, tool.Description, tool.Annotations, tool.InputSchema, tool.OutputSchema})
	}
	// Inventory order, so a reordering shows in review too.
	order := ToolNamesFor(e.deps)
	slices.SortStableFunc(snaps, func(a, b toolSnap) int { return slices.Index(order, a.Name) - slices.Index(order, b.Name) })
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(snaps); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	const file = "testdata/tools.json"
	if os.Getenv("UPDATE_TOOLSNAPS") == "true" {
		writeFile(t, file, got)
		t.Logf("wrote %s", file)
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run UPDATE_TOOLSNAPS=true go test ./mcp -run 'TestToolSnapshot|TestToolsReference')", err)
	}
	if !bytes.Equal(got, want) {
		if i, g, w := firstDiffLine(string(got), string(want)); i > 0 {
			t.Fatalf("the tool surface differs from %s at line %d:\n got: %s\nwant: %s\nIf the change is intended, run UPDATE_TOOLSNAPS=true go test ./mcp -run 'TestToolSnapshot|TestServedTextsAreTrue|TestToolsReference' and review the diff.", file, i, g, w)
		}
	}
}

// schemaProp returns inputSchema.properties[name] of a tool as served.
func schemaProp(t *testing.T, tool *sdk.Tool, name string) map[string]any {
	t.Helper()
	s, ok := tool.InputSchema.(map[string]any)
	if !ok {
		t.Fatalf("%s: input schema is %T", tool.Name, tool.InputSchema)
	}
	props, _ := s["properties"].(map[string]any)
	p, ok := props[name].(map[string]any)
	if !ok {
		t.Fatalf("%s: no property %q in %v", tool.Name, name, s)
	}
	return p
}

func TestToolsList(t *testing.T) {
	e := newEnv(t)
	cs := e.client(t, e.serveHTTP(t))
	tools := listTools(t, cs)
	var names []string
	byName := map[string]*sdk.Tool{}
	for _, tool := range tools {
		names = append(names, tool.Name)
		byName[tool.Name] = tool
	}
	if !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(toolNames))) {
		t.Fatalf("tools/list = %v, want exactly %v", names, toolNames)
	}
	if inv := ToolNames(e.deps.FS, e.deps.Bridge != nil); !slices.Equal(inv, toolNames) {
		t.Errorf("ToolNames = %v, want %v", inv, toolNames)
	}
	for _, tool := range tools {
		a := tool.Annotations
		if a == nil {
			t.Errorf("%s: no annotations", tool.Name)
			continue
		}
		// The pointers are non-nil only when the hint was on the wire.
		if !a.ReadOnlyHint || !a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint || a.DestructiveHint == nil || *a.DestructiveHint {
			t.Errorf("%s: annotations %+v, want readOnly, idempotent, openWorld=false, destructive=false all present", tool.Name, a)
		}
		if a.Title == "" || len(tool.Description) < 80 {
			t.Errorf("%s: title %q, description %q: want both, the description written for a model", tool.Name, a.Title, tool.Description)
		}
		// structuredContent comes without an output schema: MCP allows
		// it, and the schemas would cost more than the descriptions.
		if tool.OutputSchema != nil {
			t.Errorf("%s: an output schema in tools/list", tool.Name)
		}
	}
	lim := e.deps.FS.Limits()
	for _, c := range []struct {
		tool, prop    string
		min, max, def float64
	}{
		{"list_directory", "offset", 0, 1 << 30, 0},
		{"list_directory", "limit", 1, float64(lim.MaxListEntries), float64(lim.DefaultListLimit)},
		{"find_files", "limit", 1, float64(lim.MaxSearchResults), float64(lim.DefaultSearchResults)},
		{"search_text", "limit", 1, float64(lim.MaxSearchResults), float64(lim.DefaultSearchResults)},
		{"read_text_file", "start_line", 1, 1 << 30, 1},
		{"read_text_file", "max_lines", 1, float64(lim.MaxReadLines), float64(min(sfs.DefaultReadLines, lim.MaxReadLines))},
	} {
		p := schemaProp(t, byName[c.tool], c.prop)
		if p["minimum"] != c.min || p["maximum"] != c.max || p["default"] != c.def {
			t.Errorf("%s.%s: minimum %v maximum %v default %v, want %v %v %v", c.tool, c.prop, p["minimum"], p["maximum"], p["default"], c.min, c.max, c.def)
		}
	}
	if p := schemaProp(t, byName["search_text"], "case_sensitive"); p["default"] != true {
		t.Errorf("search_text.case_sensitive default %v, want true", p["default"])
	}
	// The bounds are enforced, not only advertised.
	for _, args := range []map[string]any{
		{"workdir": "wd", "path": "big.txt", "start_line": 0},
		{"workdir": "wd", "path": 5},
		{"workdir": "wd"},
	} {
		toolErr(t, e.call(t, cs, "read_text_file", args), "INVALID_ARGUMENT: ")
	}
	toolErr(t, e.call(t, cs, "list_directory", map[string]any{"workdir": "wd", "limit": 0}), "INVALID_ARGUMENT: ")
	toolErr(t, e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "query": "x", "limit": 0}), "INVALID_ARGUMENT: ")
	if _, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{}}); err == nil {
		t.Error("an unknown tool was called")
	}
	if ins := cs.InitializeResult().Instructions; !strings.Contains(ins, "read-only") || !strings.Contains(ins, "untrusted") {
		t.Errorf("instructions %q", ins)
	}
}

// TestChain is the read acceptance chain (list, find, search, read, stat,
// refusals) end to end over HTTP.
func TestChain(t *testing.T) {
	e := newEnv(t)
	readChain(t, e, e.client(t, e.serveHTTP(t)))
}

// readChain is the read tools' chain on an environment of newEnv: list,
// find, search, read (plain and .gz) and stat.
func readChain(t *testing.T, e *testEnv, cs *sdk.ClientSession) {
	t.Helper()
	wds := structured[struct {
		Workdirs []sfs.WorkdirInfo `json:"workdirs"`
	}](t, e.call(t, cs, "list_workdirs", nil))
	if len(wds.Workdirs) != 1 || wds.Workdirs[0].Alias != "wd" || wds.Workdirs[0].Mode != sfs.ModeReadOnly {
		t.Fatalf("list_workdirs = %+v", wds)
	}

	l := structured[listOut](t, e.call(t, cs, "list_directory", map[string]any{"workdir": "wd"}))
	wantEntries := map[string]any{"README.md": float64(len(readmeText)), "big.txt": float64(len(bigText())), "compose.yml": float64(len(composeText)),
		"config": "dir", "link.txt": "symlink", "logs": "dir", "marker.txt": float64(len(markerText) + 1), "sub": "dir"}
	if !reflect.DeepEqual(l.Entries, wantEntries) || l.Total != len(wantEntries) || l.Returned != len(wantEntries) || l.HasMore || l.Workdir != "wd" || l.Path != "" || l.ModifiedAt != nil {
		t.Fatalf("list_directory = %+v, want entries %v", l, wantEntries)
	}
	timed := structured[listOut](t, e.call(t, cs, "list_directory", map[string]any{"workdir": "wd", "times": true}))
	if len(timed.ModifiedAt) != len(wantEntries) || timed.ModifiedAt["README.md"] == "" {
		t.Errorf("list_directory with times: %+v", timed)
	}
	res := e.call(t, cs, "list_directory", map[string]any{"workdir": "wd", "offset": 2, "limit": 3})
	page := structured[listOut](t, res)
	if len(page.Entries) != 3 || page.Entries["compose.yml"] == nil || !page.HasMore || page.NextOffset != 5 {
		t.Errorf("list_directory page = %+v", page)
	}
	if text, want := resultText(res), fmt.Sprintf("wd:/\ncompose.yml %d\nconfig/\nlink.txt@\nhas_more: next_offset 5 of %d\n", len(composeText), len(wantEntries)); text != want {
		t.Errorf("list_directory text %q, want %q", text, want)
	}

	findRes := e.call(t, cs, "find_files", map[string]any{"workdir": "wd", "pattern": "*compose*.yml"})
	found := structured[findOut](t, findRes)
	if paths := found.paths(); !slices.Equal(paths, []string{"compose.yml", "sub/docker-compose.yml"}) || found.Truncated || found.Returned != 2 {
		t.Fatalf("find_files = %+v", found)
	}
	if text, want := resultText(findRes), "wd:/ *compose*.yml\ncompose.yml\nsub/docker-compose.yml\n"; text != want {
		t.Errorf("find_files text %q, want %q", text, want)
	}

	sr := searchResult(t, e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "query": "DATABASE_URL"}))
	type hit struct {
		path       string
		line       int
		compressed bool
	}
	var hits []hit
	for _, m := range sr.Matches {
		hits = append(hits, hit{m.Path, m.Line, m.Compressed})
	}
	wantHits := []hit{{"compose.yml", 4, false}, {"config/settings.ini", 3, false}, {"logs/app.log.1.gz", 2, true}}
	if !slices.Equal(hits, wantHits) || sr.Truncated || sr.Returned != 3 {
		t.Fatalf("search_text = %+v, want %v", sr, wantHits)
	}
	if sr.Matches[1].Text != "DATABASE_URL = postgres://db/settings" {
		t.Errorf("search_text line text %q", sr.Matches[1].Text)
	}
	// The text content is rg --heading's lines, paths workdir-relative.
	res = e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "path": "config", "query": "DATABASE_URL", "context": 1})
	if text, want := resultText(res), "wd:/config DATABASE_URL\nconfig/settings.ini\n2-host = db\n3:DATABASE_URL = postgres://db/settings\n\nfiles_scanned: 1\n"; text != want {
		t.Errorf("search_text text %q, want %q", text, want)
	}
	if so := structured[searchTextOut](t, res); fmt.Sprint(so.Blocks) != "map[settings.ini:[{2 [host = db DATABASE_URL = postgres://db/settings] [3]}]]" || so.Matches != nil {
		t.Errorf("search_text context: %+v", so)
	}
	// The total is every file's, though the page holds one: the others
	// are aggregated.
	res = e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "query": "DATABASE_URL", "output": "count", "limit": 1})
	if text, want := resultText(res), "wd:/ DATABASE_URL\ncompose.yml:1\n… and 2 more files with 2 matching lines\ntotal: 3\ntruncated: limit; next_cursor "; !strings.HasPrefix(text, want) {
		t.Errorf("search_text count text %q, want %q...", text, want)
	}
	ci := searchResult(t, e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "query": "database_url", "case_sensitive": false, "glob": "*.ini"}))
	if len(ci.Matches) != 1 || ci.Matches[0].Path != "config/settings.ini" {
		t.Errorf("case-insensitive search_text = %+v", ci)
	}

	rd := structured[readTextFileOut](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "config/settings.ini", "start_line": 2, "max_lines": 2}))
	if rd.Content != "host = db\nDATABASE_URL = postgres://db/settings\n" || rd.StartLine != 2 || rd.EndLine != 3 || rd.HasMore || rd.NextStartLine != nil || rd.Compressed || rd.Path != "config/settings.ini" {
		t.Fatalf("read_text_file = %+v", rd)
	}
	first := structured[readTextFileOut](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "config/settings.ini", "max_lines": 1}))
	if first.Content != "[db]\n" || !first.HasMore || first.NextStartLine == nil || *first.NextStartLine != 2 {
		t.Errorf("read_text_file first line = %+v", first)
	}

	st := structured[sfs.FileInfo](t, e.call(t, cs, "stat_file", map[string]any{"workdir": "wd", "path": "config/settings.ini"}))
	if st.Type != sfs.TypeFile || st.Size == nil || *st.Size != int64(len(settingsText)) || st.Workdir != "wd" || st.Path != "config/settings.ini" || st.ModifiedAt == "" || st.MIMEType == "" {
		t.Fatalf("stat_file = %+v", st)
	}
	if _, err := time.Parse(time.RFC3339, st.ModifiedAt); err != nil {
		t.Errorf("modified_at %q: %v", st.ModifiedAt, err)
	}
	lst := structured[sfs.FileInfo](t, e.call(t, cs, "stat_file", map[string]any{"workdir": "wd", "path": "link.txt"}))
	if lst.Type != sfs.TypeSymlink {
		t.Errorf("stat_file on a symlink = %+v", lst)
	}

	gz := structured[readTextFileOut](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "logs/app.log.1.gz"}))
	if gz.Content != gzLogText || !gz.Compressed || gz.StartLine != 1 || gz.EndLine != 3 || gz.HasMore || gz.BytesReturned != len(gzLogText) {
		t.Fatalf("read_text_file .gz = %+v", gz)
	}
	gz2 := structured[readTextFileOut](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "logs/app.log.1.gz", "start_line": 2, "max_lines": 1}))
	if gz2.Content != "connecting with DATABASE_URL from env\n" || !gz2.Compressed || !gz2.HasMore {
		t.Errorf("read_text_file .gz window = %+v", gz2)
	}
}

func TestToolErrors(t *testing.T) {
	e := newEnv(t)
	cs := e.client(t, e.serveHTTP(t))
	for _, c := range []struct {
		tool   string
		args   map[string]any
		prefix string
	}{
		{"read_text_file", map[string]any{"workdir": "wd", "path": "../x"}, "PATH_OUTSIDE_WORKDIR: ../x "},
		{"read_text_file", map[string]any{"workdir": "wd", "path": "sub/../../secret.txt"}, "PATH_OUTSIDE_WORKDIR: sub/../../secret.txt "},
		{"read_text_file", map[string]any{"workdir": "wd", "path": "missing.txt"}, "PATH_NOT_FOUND: wd:/missing.txt"},
		{"read_text_file", map[string]any{"workdir": "nope", "path": "a.txt"}, "WORKDIR_NOT_FOUND: "},
		{"read_text_file", map[string]any{"workdir": "wd", "path": ".hidden.txt"}, "HIDDEN_PATH_NOT_ALLOWED: wd:/.hidden.txt"},
		{"read_text_file", map[string]any{"workdir": "wd", "path": "id_rsa"}, "DENIED_PATH: wd:/id_rsa"},
		{"read_text_file", map[string]any{"workdir": "wd", "path": "link.txt"}, "SYMLINK_NOT_ALLOWED: wd:/link.txt"},
		{"read_text_file", map[string]any{"workdir": "wd", "path": "/etc/passwd"}, "INVALID_PATH: "},
		{"read_text_file", map[string]any{"workdir": "wd", "path": "sub"}, "NOT_A_FILE: wd:/sub"},
		{"read_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt", "start_line": 99}, "LINE_OUT_OF_RANGE: wd:/sub/a.txt"},
		{"list_directory", map[string]any{"workdir": "wd", "path": "README.md"}, "NOT_A_DIRECTORY: wd:/README.md"},
		{"list_directory", map[string]any{"workdir": "wd", "path": ".."}, "PATH_OUTSIDE_WORKDIR: .. "},
		{"stat_file", map[string]any{"workdir": "wd", "path": ".hidden.txt"}, "HIDDEN_PATH_NOT_ALLOWED: wd:/.hidden.txt"},
		{"stat_file", map[string]any{"workdir": "wd", "path": "sub\\a.txt"}, "PATH_NOT_FOUND: "}, // one name, not sub/a.txt
		{"stat_file", map[string]any{"workdir": "wd", "path": "\\\\host\\share"}, "INVALID_PATH: "},
		{"stat_file", map[string]any{"workdir": "wd", "path": "C:\\x"}, "INVALID_PATH: "},
		{"find_files", map[string]any{"workdir": "wd", "pattern": "[z-a"}, "INVALID_PATTERN: "},
		{"search_text", map[string]any{"workdir": "nope", "query": "x"}, "WORKDIR_NOT_FOUND: "},
	} {
		text := toolErr(t, e.call(t, cs, c.tool, c.args), c.prefix)
		if strings.Contains(text, "goroutine") || strings.Contains(text, ".go:") {
			t.Errorf("%s(%v): error with a stack: %q", c.tool, c.args, text)
		}
	}
	// Hidden, credential and outside files are not found by any tool.
	fr := structured[findOut](t, e.call(t, cs, "find_files", map[string]any{"workdir": "wd", "pattern": "*"}))
	for _, p := range fr.paths() {
		if p == ".hidden.txt" || p == "id_rsa" {
			t.Errorf("find_files returned %s", p)
		}
	}
	// (Not the whole canary text: the result echoes the query.)
	sr := searchResult(t, e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "query": "OUTSIDE-THE-WORK", "include_ignored": true}))
	if len(sr.Matches) != 0 {
		t.Errorf("search_text found the canary: %+v", sr.Matches)
	}
}

func TestResourceTemplate(t *testing.T) {
	e := newEnv(t)
	cs := e.client(t, e.serveHTTP(t))
	ctx := t.Context()

	tl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].URITemplate != "serverfs://{workdir}/{+path}" {
		t.Fatalf("resources/templates/list = %+v", tl.ResourceTemplates)
	}
	rl, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rl.Resources) != 0 {
		t.Fatalf("resources/list enumerates %d resources", len(rl.Resources))
	}

	read := func(uri string) (*sdk.ReadResourceResult, error) {
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if res != nil {
			b, _ := json.Marshal(res)
			e.assertNoLeak(t, uri, string(b))
		}
		if err != nil {
			e.assertNoLeak(t, uri+" error", err.Error())
		}
		return res, err
	}
	for _, uri := range []string{
		"serverfs://wd/sub/a.txt",
		// %2F decodes, once, to "/": the same file, through the same
		// resolver and policy as any other path.
		"serverfs://wd/sub%2Fa.txt",
		"serverfs://wd/sub%2fa%2Etxt",
	} {
		res, err := read(uri)
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		if len(res.Contents) != 1 || res.Contents[0].Text != aText || res.Contents[0].URI != uri || res.Contents[0].MIMEType != "text/plain" {
			t.Errorf("%s = %+v", uri, res.Contents)
		}
	}
	res, err := read("serverfs://wd/logs/app.log.1.gz")
	if err != nil || res.Contents[0].Text != gzLogText {
		t.Errorf("compressed resource: %v %+v", err, res)
	}

	for _, c := range []struct {
		uri  string
		want string // a substring of the error
	}{
		{"serverfs://wd/%2e%2e%2fsecret.txt", "PATH_OUTSIDE_WORKDIR"},
		{"serverfs://wd/..%2Fsecret.txt", "PATH_OUTSIDE_WORKDIR"},
		{"serverfs://wd/..%2F..%2Fetc%2Fpasswd", "PATH_OUTSIDE_WORKDIR"},
		{"serverfs://wd/../secret.txt", "PATH_OUTSIDE_WORKDIR"},
		{"serverfs://wd/sub/../../secret.txt", "PATH_OUTSIDE_WORKDIR"},
		{"serverfs://wd/%2e%2e/outside/canary.txt", "PATH_OUTSIDE_WORKDIR"},
		// Decoded exactly once: the literal name "%2e%2e", which does not exist.
		{"serverfs://wd/%252e%252e/x", "PATH_NOT_FOUND"},
		{"serverfs://wd/%252e%252e%252fsecret.txt", "PATH_NOT_FOUND"},
		{"serverfs://wd/a%00.txt", "INVALID_PATH"},
		{"serverfs://wd/sub%00/a.txt", "INVALID_PATH"},
		// go-sdk's template match refuses a raw backslash and a bad escape.
		{`serverfs://wd/sub\a.txt`, "Resource not found"},
		{"serverfs://wd/sub%5Ca.txt", "PATH_NOT_FOUND"}, // one name, sub\a.txt, not sub/a.txt
		{"serverfs://wd/%5C%5Chost%5Cshare%5Cx", "INVALID_PATH"},
		{"serverfs://wd/C:%5Csecret.txt", "INVALID_PATH"},
		{"serverfs://wd/%2Fetc%2Fpasswd", "INVALID_PATH"},
		{"serverfs://wd//etc/passwd", "INVALID_PATH"},
		{"serverfs://wd/%zz", "Resource not found"},
		{"serverfs://wd/sub/a.txt?x=1", "INVALID_PATH"},
		{"serverfs://wd/sub/a.txt#frag", "INVALID_PATH"},
		{"serverfs://nope/a.txt", "WORKDIR_NOT_FOUND"},
		{"serverfs://wd%2F..%2F/secret.txt", "WORKDIR_NOT_FOUND"},
		{"serverfs://wd/.hidden.txt", "HIDDEN_PATH_NOT_ALLOWED"},
		{"serverfs://wd/%2ehidden.txt", "HIDDEN_PATH_NOT_ALLOWED"},
		{"serverfs://wd/id_rsa", "DENIED_PATH"},
		{"serverfs://wd/link.txt", "SYMLINK_NOT_ALLOWED"},
		{"serverfs://wd/missing.txt", "PATH_NOT_FOUND"},
		{"serverfs://wd/sub", "NOT_A_FILE"},
		{"serverfs://wd/big.txt", "read_text_file"},
		{"file:///etc/passwd", "Resource not found"},
	} {
		res, err := read(c.uri)
		if testing.Verbose() {
			t.Logf("%s: %v", c.uri, err)
		}
		if err == nil {
			t.Errorf("%s: read succeeded: %+v", c.uri, res.Contents)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want it to mention %q", c.uri, err, c.want)
		}
	}
	// The server still serves after all that.
	if _, err := read("serverfs://wd/README.md"); err != nil {
		t.Fatal(err)
	}
}

func TestPanicRecovery(t *testing.T) {
	e := newEnv(t)
	e.deps.testHook = func(_ context.Context, tool string) {
		if tool == "stat_file" {
			panic("boom-injected-fault")
		}
	}
	cs := e.client(t, e.serveHTTP(t))
	for range 2 {
		text := toolErr(t, e.call(t, cs, "stat_file", map[string]any{"workdir": "wd", "path": "sub/a.txt"}), "INTERNAL_ERROR")
		if strings.Contains(text, "boom") || strings.Contains(text, "goroutine") || strings.Contains(text, ".go:") {
			t.Errorf("panic detail in the tool result: %q", text)
		}
		// The server keeps serving, on the same session.
		rd := structured[readTextFileOut](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt"}))
		if rd.Content != aText {
			t.Fatalf("after the panic: %+v", rd)
		}
	}
	// And on a new session.
	cs2 := e.client(t, e.serveHTTP(t))
	structured[struct{}](t, e.call(t, cs2, "list_workdirs", nil))

	log := e.log.String()
	if !strings.Contains(log, "boom-injected-fault") || !strings.Contains(log, "goroutine ") || !strings.Contains(log, `"stack":`) {
		t.Errorf("the stack is not in the server log:\n%s", log)
	}
	var panics, failures int
	for _, m := range logLines(t, log) {
		if m["event"] == "panic" && m["tool"] == "stat_file" && m["level"] == "ERROR" {
			panics++
		}
		if m["event"] == "tool_call" && m["tool"] == "stat_file" && m["success"] == false && m["error_code"] == "INTERNAL_ERROR" {
			failures++
		}
	}
	if panics != 2 || failures != 2 {
		t.Errorf("log has %d panic lines and %d failed stat_file calls, want 2 and 2", panics, failures)
	}
}

// TestConcurrentClients runs 100 clients, each with its own session, each
// reading its own file; run it with -race.
func TestConcurrentClients(t *testing.T) {
	e := newEnv(t)
	const n = 100
	content := func(i int) string { return fmt.Sprintf("client %03d\nsecond line of %03d\n", i, i) }
	for i := range n {
		writeFile(t, filepath.Join(e.root, "many", fmt.Sprintf("f%03d.txt", i)), []byte(content(i)))
	}
	url := e.serveHTTP(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if err := oneClient(ctx, e, url, i, content(i)); err != nil {
				errs <- fmt.Errorf("client %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var calls int
	for _, m := range logLines(t, e.log.String()) {
		if m["event"] == "tool_call" && m["success"] == true {
			calls++
		}
	}
	if calls != 4*n {
		t.Errorf("%d successful tool calls logged, want %d", calls, 4*n)
	}
}

func oneClient(ctx context.Context, e *testEnv, url string, i int, want string) error {
	cs, err := connectHTTP(ctx, url)
	if err != nil {
		return err
	}
	defer cs.Close()
	path := fmt.Sprintf("many/f%03d.txt", i)
	decode := func(name string, args map[string]any, v any) error {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if res.IsError {
			return fmt.Errorf("%s: %s", name, resultText(res))
		}
		b, _ := json.Marshal(res.StructuredContent)
		return json.Unmarshal(b, v)
	}
	var st sfs.FileInfo
	if err := decode("stat_file", map[string]any{"workdir": "wd", "path": path}, &st); err != nil {
		return err
	}
	if st.Path != path || st.Size == nil || *st.Size != int64(len(want)) {
		return fmt.Errorf("stat_file = %+v", st)
	}
	var rd readTextFileOut
	if err := decode("read_text_file", map[string]any{"workdir": "wd", "path": path}, &rd); err != nil {
		return err
	}
	if rd.Content != want || rd.Path != path {
		return fmt.Errorf("read_text_file = %+v", rd)
	}
	var so searchTextOut
	if err := decode("search_text", map[string]any{"workdir": "wd", "path": "many", "query": fmt.Sprintf("second line of %03d", i)}, &so); err != nil {
		return err
	}
	sr := so.result()
	if len(sr.Matches) != 1 || sr.Matches[0].Path != path || sr.Matches[0].Line != 2 {
		return fmt.Errorf("search_text = %+v", sr)
	}
	var fr findOut
	if err := decode("find_files", map[string]any{"workdir": "wd", "path": "many", "pattern": fmt.Sprintf("f%03d.*", i)}, &fr); err != nil {
		return err
	}
	if ps := fr.paths(); len(ps) != 1 || ps[0] != path {
		return fmt.Errorf("find_files = %+v", fr)
	}
	rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "serverfs://wd/" + path})
	if err != nil {
		return fmt.Errorf("resource: %w", err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text != want {
		return fmt.Errorf("resource = %+v", rr.Contents)
	}
	return nil
}

func logLines(t testing.TB, log string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		lines = append(lines, m)
	}
	return lines
}

func TestCallLog(t *testing.T) {
	e := newEnv(t)
	cs := e.client(t, e.serveHTTP(t))
	type want struct {
		tool, workdir, path string
		bytes               int // -1: not checked
		code                string
	}
	var wants []want
	do := func(tool string, args map[string]any, w want) *sdk.CallToolResult {
		w.tool = tool
		wants = append(wants, w)
		return e.call(t, cs, tool, args)
	}
	do("list_workdirs", nil, want{bytes: -1})
	rd := structured[readTextFileOut](t, do("read_text_file", map[string]any{"workdir": "wd", "path": "marker.txt"}, want{workdir: "wd", path: "marker.txt", bytes: len(markerText) + 1}))
	if !strings.Contains(rd.Content, markerText) {
		t.Fatalf("read_text_file = %+v", rd)
	}
	do("read_text_file", map[string]any{"workdir": "wd", "path": "logs/app.log.1.gz"}, want{workdir: "wd", path: "logs/app.log.1.gz", bytes: len(gzLogText)})
	do("read_text_file", map[string]any{"workdir": "wd", "path": "missing.txt"}, want{workdir: "wd", path: "missing.txt", code: "PATH_NOT_FOUND"})
	do("stat_file", map[string]any{"workdir": "wd", "path": "sub/a.txt"}, want{workdir: "wd", path: "sub/a.txt", bytes: -1})
	sr := searchResult(t, do("search_text", map[string]any{"workdir": "wd", "query": "MARKER-7f3c"}, want{workdir: "wd", bytes: -1}))
	if len(sr.Matches) != 1 || sr.Matches[0].Text != markerText {
		t.Fatalf("search_text = %+v", sr)
	}
	do("read_text_file", map[string]any{"workdir": "wd", "path": "../x"}, want{workdir: "wd", path: "../x", code: "PATH_OUTSIDE_WORKDIR"})
	do("list_directory", map[string]any{"workdir": "nope"}, want{workdir: "nope", code: "WORKDIR_NOT_FOUND"})
	// Refused by the input schema before the handler runs: logged too.
	do("read_text_file", map[string]any{"workdir": "wd", "path": "marker.txt", "max_lines": 0}, want{code: "INVALID_ARGUMENT"})
	if _, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "serverfs://wd/marker.txt"}); err != nil {
		t.Fatal(err)
	}

	log := e.log.String()
	if strings.Contains(log, "MARKER-7f3c") {
		t.Fatalf("file content in the log:\n%s", log)
	}
	var calls []map[string]any
	var resources int
	for _, m := range logLines(t, log) {
		switch m["event"] {
		case "tool_call":
			calls = append(calls, m)
		case "resource_read":
			resources++
			if m["path"] != "marker.txt" || m["success"] != true || m["bytes_returned"] != float64(len(markerText)+1) {
				t.Errorf("resource log line %v", m)
			}
		}
	}
	if resources != 1 {
		t.Errorf("%d resource_read lines, want 1", resources)
	}
	if len(calls) != len(wants) {
		t.Fatalf("%d tool_call lines for %d calls:\n%s", len(calls), len(wants), log)
	}
	for i, w := range wants {
		m := calls[i]
		ok := m["tool"] == w.tool && m["msg"] == "tool_call" && m["level"] == "INFO"
		if _, has := m["duration_ms"].(float64); !has {
			ok = false
		}
		if w.workdir != "" && m["workdir"] != w.workdir || w.workdir == "" && m["workdir"] != nil {
			ok = false
		}
		if w.path != "" && m["path"] != w.path || w.path == "" && m["path"] != nil {
			ok = false
		}
		if w.code == "" {
			b, has := m["bytes_returned"].(float64)
			ok = ok && m["success"] == true && m["error_code"] == nil && has && b > 0 && (w.bytes < 0 || b == float64(w.bytes))
		} else {
			ok = ok && m["success"] == false && m["error_code"] == w.code && m["bytes_returned"] == nil
		}
		if !ok {
			t.Errorf("log line %d = %v, want %+v", i, m, w)
		}
	}
}

// TestStdio runs the same server over in-memory transports, as serve
// --stdio does over stdin/stdout.
func TestStdio(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	st, ct := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- NewServer(e.deps, testVer).Run(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "stdio-test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != len(toolNames) {
		t.Fatalf("tools/list: %v %d tools", err, len(tools.Tools))
	}
	wds := structured[struct {
		Workdirs []sfs.WorkdirInfo `json:"workdirs"`
	}](t, e.call(t, cs, "list_workdirs", nil))
	if len(wds.Workdirs) != 1 || wds.Workdirs[0].Alias != "wd" {
		t.Errorf("list_workdirs = %+v", wds)
	}
	rd := structured[readTextFileOut](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt"}))
	if rd.Content != aText {
		t.Errorf("read_text_file = %+v", rd)
	}
	toolErr(t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "../secret.txt"}), "PATH_OUTSIDE_WORKDIR: ../secret.txt ")
	rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "serverfs://wd/sub/a.txt"})
	if err != nil || rr.Contents[0].Text != aText {
		t.Errorf("resource: %v %+v", err, rr)
	}
	cs.Close()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the stdio server did not stop")
	}
}
