package mcp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/bridge"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/search"
)

// Tests of ChatGPT's search and fetch: the exact shapes OpenAI
// documents, the ranking, ids that fetch reads back, citation URLs, and
// the hostile corpus through fetch ids.

// withResearch reconfigures e with search and fetch over the given
// bare-metal flags (environ adds SERVERFS_* settings; urls are
// --url-template values) and returns a client of it.
func withResearch(t *testing.T, e *testEnv, flags, environ, urls []string) *sdk.ClientSession {
	t.Helper()
	e.deps.FS.Close()
	cfg, err := sfs.LoadConfigFlags(environ, sfs.Flags{Workdirs: flags, URLTemplates: urls, SearchFetch: "true"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	e.deps.FS, e.deps.Search = f, search.New(f)
	return e.client(t, e.serveHTTP(t))
}

// wholeSurface reconfigures a newRWEnv as withBridge does, with search
// and fetch: every tool is served.
func wholeSurface(t *testing.T, e *testEnv) {
	t.Helper()
	e.reconfigure(t, []string{"wd=" + e.root + ":rw:repo", "ro=" + filepath.Join(e.parent, "ro")}, []string{"SERVERFS_SEARCH_FETCH=true", stateDirTemp},
		&bridge.Policy{Workdirs: map[string]bridge.WorkdirPolicy{"wd": {Root: e.root, ReadWrite: true, RepoOps: true}},
			Grants: &bridge.GrantPolicy{HostID: "h1", PublicKeys: []string{testGrantKey}}})
}

// Strict schemas of the answers as OpenAI's MCP documentation gives them.
var (
	searchAnswerSchema = &jsonschema.Schema{
		Type: "object", Required: []string{"results"}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		Properties: map[string]*jsonschema.Schema{"results": {Type: "array", MaxItems: ptr(20), Items: &jsonschema.Schema{
			Type: "object", Required: []string{"id", "title", "url"}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
			Properties: map[string]*jsonschema.Schema{"id": {Type: "string", MinLength: ptr(1)}, "title": {Type: "string", MinLength: ptr(1)}, "url": {Type: "string", MinLength: ptr(1)}},
		}}},
	}
	fetchAnswerSchema = &jsonschema.Schema{
		Type: "object", Required: []string{"id", "title", "text", "url"}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		Properties: map[string]*jsonschema.Schema{
			"id": {Type: "string", MinLength: ptr(1)}, "title": {Type: "string", MinLength: ptr(1)}, "text": {Type: "string"}, "url": {Type: "string", MinLength: ptr(1)},
			// "an optional key/value pairing of data about the result":
			// scalar values only.
			"metadata": {Type: "object", AdditionalProperties: &jsonschema.Schema{Types: []string{"string", "integer", "boolean"}}},
		},
	}
	// oneTextItem is the content of a result: exactly one text item.
	oneTextItem = &jsonschema.Schema{Type: "array", MinItems: ptr(1), MaxItems: ptr(1), Items: &jsonschema.Schema{
		Type: "object", Required: []string{"type", "text"},
		Properties: map[string]*jsonschema.Schema{"type": {Const: ptr[any]("text")}, "text": {Type: "string"}},
	}}
)

// answerJSON checks that res is one text item whose JSON validates against
// schema and equals the structured content, and returns that JSON decoded.
func answerJSON(t *testing.T, res *sdk.CallToolResult, schema *jsonschema.Schema) map[string]any {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", resultText(res))
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var wire struct {
		Content           []any `json:"content"`
		StructuredContent any   `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		t.Fatal(err)
	}
	validate(t, "content", oneTextItem, wire.Content)
	text := wire.Content[0].(map[string]any)["text"].(string)
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("the text item is not JSON: %v\n%s", err, text)
	}
	validate(t, "the text item's JSON", schema, v)
	if sc, _ := json.Marshal(wire.StructuredContent); string(sc) != mustJSON(t, v) {
		t.Errorf("structured content differs from the text item:\n%s\n%s", sc, text)
	}
	return v
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func validate(t *testing.T, what string, s *jsonschema.Schema, v any) {
	t.Helper()
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(v); err != nil {
		t.Fatalf("%s does not match the contract: %v\n%s", what, err, mustJSON(t, v))
	}
}

type hit struct{ ID, Title, URL string }

func hits(t *testing.T, v map[string]any) []hit {
	t.Helper()
	var out []hit
	for _, r := range v["results"].([]any) {
		m := r.(map[string]any)
		out = append(out, hit{m["id"].(string), m["title"].(string), m["url"].(string)})
	}
	return out
}

func searchHits(t *testing.T, e *testEnv, cs *sdk.ClientSession, q string) []hit {
	t.Helper()
	return hits(t, answerJSON(t, e.call(t, cs, "search", map[string]any{"query": q}), searchAnswerSchema))
}

func fetchDoc(t *testing.T, e *testEnv, cs *sdk.ClientSession, id string) map[string]any {
	t.Helper()
	return answerJSON(t, e.call(t, cs, "fetch", map[string]any{"id": id}), fetchAnswerSchema)
}

// TestResearchShapes: both answers are exactly one text item holding the
// documented JSON (and the same structured content), the tools take one
// string and are read-only, and they are served only when enabled.
func TestResearchShapes(t *testing.T) {
	e := newEnv(t)
	cs := e.client(t, e.serveHTTP(t))
	for _, tl := range listTools(t, cs) {
		if tl.Name == "search" || tl.Name == "fetch" {
			t.Fatalf("%s is served without SERVERFS_SEARCH_FETCH", tl.Name)
		}
	}
	cs = withResearch(t, e, []string{"wd=" + e.root}, nil, nil)
	byName := map[string]*sdk.Tool{}
	for _, tl := range listTools(t, cs) {
		byName[tl.Name] = tl
	}
	for name, arg := range map[string]string{"search": "query", "fetch": "id"} {
		tl := byName[name]
		if tl == nil {
			t.Fatalf("%s is not served", name)
		}
		if a := tl.Annotations; a == nil || !a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s annotations %+v, want read-only", name, tl.Annotations)
		}
		s := tl.InputSchema.(map[string]any)
		props := s["properties"].(map[string]any)
		if len(props) != 1 || props[arg].(map[string]any)["type"] != "string" || !slices.Equal(toStrings(s["required"]), []string{arg}) {
			t.Errorf("%s takes %v (required %v), want one string %q", name, props, s["required"], arg)
		}
	}

	res := searchHits(t, e, cs, "where is the DATABASE_URL configured")
	if len(res) == 0 {
		t.Fatal("no results")
	}
	for _, h := range res {
		doc := fetchDoc(t, e, cs, h.ID)
		if doc["id"] != h.ID || doc["url"] == "" {
			t.Errorf("fetch %s: id %v url %v", h.ID, doc["id"], doc["url"])
		}
		md := doc["metadata"].(map[string]any)
		if md["workdir"] != "wd" || md["path"] == "" || md["compressed"] == nil || md["lines"] == nil {
			t.Errorf("fetch %s: metadata %v", h.ID, md)
		}
	}
	// The compressed log: compressed, and read through the decompressor.
	doc := fetchDoc(t, e, cs, "wd:/logs/app.log.1.gz")
	if doc["text"] != gzLogText || doc["metadata"].(map[string]any)["compressed"] != true {
		t.Errorf("the .gz log: %v", doc)
	}
	// Nothing found is an empty list, in the same shape.
	if res := searchHits(t, e, cs, "xylophone quasar"); len(res) != 0 {
		t.Errorf("found %v", res)
	}
	// Refusals are CODE: message, with no structured content.
	toolErr(t, e.call(t, cs, "search", map[string]any{"query": "  "}), "INVALID_ARGUMENT: ")
	toolErr(t, e.call(t, cs, "search", map[string]any{"query": strings.Repeat("x", 1025)}), "INVALID_ARGUMENT: ")
	toolErr(t, e.call(t, cs, "fetch", map[string]any{"id": "README.md"}), "INVALID_ARGUMENT: ")
	toolErr(t, e.call(t, cs, "search", map[string]any{"query": "x", "workdir": "wd"}), "INVALID_ARGUMENT: ")
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestResearchRanking: BM25 over the files read (search/rank_score.go):
// every term on one line first, then terms together in a short file, a
// term in the file's name, terms scattered through a long file, one term
// last; stop words and endings are dropped; at most 20 results; files
// holding the terms only in a line they all share (thirty files of one
// word) are still answered.
func TestResearchRanking(t *testing.T) {
	if got := search.QueryTerms(`Where is the database URL configured? "max open conns" files`); !slices.Equal(got, []string{"database", "url", "configur", "max open conns", "file"}) {
		t.Errorf("QueryTerms: %q", got)
	}
	if got := search.QueryTerms("what is it"); !slices.Equal(got, []string{"what", "is", "it"}) {
		t.Errorf("QueryTerms of stop words only: %q", got)
	}
	e := newEnv(t)
	dir := filepath.Join(e.parent, "rank")
	w := func(name, text string) { writeFile(t, filepath.Join(dir, name), []byte(text)) }
	w("all.txt", "intro\nthe database url is configured here\n")
	var far strings.Builder
	far.WriteString("database\n")
	for range 200 {
		far.WriteString("filler\n")
	}
	far.WriteString("url\nconfiguration\n")
	w("far.txt", far.String())
	w("two.txt", "database url\n")
	w("url_notes.txt", "database\n")
	w("one.txt", strings.Repeat("database\n", 10))
	w("none.txt", "nothing relevant\n")
	w("sub/.hidden-database-url-configured.txt", "database url configured\n")
	// A git work tree: what .gitignore excludes is not searched, nor .git.
	w(".git/HEAD", "ref: refs/heads/main database url configured\n")
	w(".gitignore", "ignored*.txt\n")
	w("ignored-database-url-configured.txt", "database url configured\n")
	cs := withResearch(t, e, []string{"rank=" + dir}, nil, nil)
	var got []string
	for _, h := range searchHits(t, e, cs, "where is the database url configured") {
		got = append(got, h.ID)
	}
	want := []string{"rank:/all.txt#L2", "rank:/two.txt#L1", "rank:/url_notes.txt#L1", "rank:/far.txt#L203", "rank:/one.txt#L1"}
	if !slices.Equal(got, want) {
		t.Errorf("ranking %q, want %q", got, want)
	}
	// The same answer every time (workers finish in any order).
	for range 3 {
		var again []string
		for _, h := range searchHits(t, e, cs, "where is the database url configured") {
			again = append(again, h.ID)
		}
		if !slices.Equal(again, got) {
			t.Fatalf("another order: %q", again)
		}
	}
	for i := range 30 {
		w(fmt.Sprintf("many/m%02d.txt", i), "zebra\n")
	}
	if res := searchHits(t, e, cs, "zebra"); len(res) != search.MaxRankResults || res[0].ID != "rank:/many/m00.txt#L1" {
		t.Errorf("%d results (first %v), want %d", len(res), res[0], search.MaxRankResults)
	}
	// A path alone can match: the file is found by its name.
	if res := searchHits(t, e, cs, "notes"); len(res) != 1 || res[0].ID != "rank:/url_notes.txt" || res[0].Title != "rank:/url_notes.txt" {
		t.Errorf("by name: %v", res)
	}
}

// TestResearchIDsAndURLs: every id search returns reads back through
// fetch, odd names included (no revision: the workdir is ro); a one-line id of a long file is a window
// around that line with a next_id; citation URLs are resource URIs by
// default and the operator's template otherwise, with names escaped.
func TestResearchIDsAndURLs(t *testing.T) {
	e := newEnv(t)
	odd := []string{"odd dir/a #1?.txt", "naïve & ünïcode.txt", "notes#L5", "100%.txt", "q=1&r=2+3.txt", `back\slash.txt`}
	for _, n := range odd {
		writeFile(t, filepath.Join(e.root, n), []byte("zebra crossing\n"))
	}
	for _, tc := range []struct {
		name string
		urls []string
		url  func(path string, line int) string
	}{
		{"default", nil, func(p string, _ int) string { return "serverfs://wd/" + sfs.EscapePath(p) }},
		{"template", []string{"wd=https://git.example.com/r/blob/main/{path}?plain=1#L{line}"}, func(p string, line int) string {
			return fmt.Sprintf("https://git.example.com/r/blob/main/%s?plain=1#L%d", sfs.EscapePath(p), max(line, 1))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := withResearch(t, e, []string{"wd=" + e.root}, nil, tc.urls)
			res := searchHits(t, e, cs, "zebra")
			var paths []string
			for _, h := range res {
				doc := fetchDoc(t, e, cs, h.ID)
				md := doc["metadata"].(map[string]any)
				p := md["path"].(string)
				paths = append(paths, p)
				if doc["text"] != "zebra crossing\n" || md["lines"] != "1-1" || md["total_lines"] != float64(1) || md["revision"] != nil {
					t.Errorf("fetch %q: %v", h.ID, doc)
				}
				if h.ID != fetchID("wd", p, 1) || h.Title != "wd:/"+p+":1: zebra crossing" {
					t.Errorf("result %+v for %q", h, p)
				}
				if want := tc.url(p, 1); h.URL != want || doc["url"] != want {
					t.Errorf("%q: url %q (fetch %q), want %q", p, h.URL, doc["url"], want)
				}
				if tc.urls == nil {
					// The default URL is the file's resource URI.
					if a, rp, err := parseResourceURI(h.URL); err != nil || a != "wd" || rp != p {
						t.Errorf("%s reads back as %q %q %v", h.URL, a, rp, err)
					}
				}
			}
			slices.Sort(paths)
			want := slices.Sorted(slices.Values(odd))
			if !slices.Equal(paths, want) {
				t.Errorf("found %q, want %q", paths, want)
			}
			// The bare id of a file named like a window reads that file.
			if doc := fetchDoc(t, e, cs, "wd:/notes#L5#L1"); doc["metadata"].(map[string]any)["path"] != "notes#L5" {
				t.Errorf("notes#L5: %v", doc)
			}
		})
	}

	// big.txt: 600 lines, one read window is 500.
	cs := withResearch(t, e, []string{"wd=" + e.root}, nil, nil)
	doc := fetchDoc(t, e, cs, "wd:/big.txt")
	md := doc["metadata"].(map[string]any)
	if md["lines"] != "1-500" || md["next_id"] != "wd:/big.txt#L501-L1000" || doc["title"] != "wd:/big.txt:1-500" {
		t.Errorf("big.txt from the start: %v", md)
	}
	doc = fetchDoc(t, e, cs, md["next_id"].(string))
	md = doc["metadata"].(map[string]any)
	if md["lines"] != "501-600" || md["total_lines"] != float64(600) || md["next_id"] != nil || !strings.HasPrefix(doc["text"].(string), "big line 501\n") {
		t.Errorf("big.txt next_id: %v", md)
	}
	doc = fetchDoc(t, e, cs, "wd:/big.txt#L550")
	md = doc["metadata"].(map[string]any)
	if md["lines"] != "530-600" || !strings.Contains(doc["text"].(string), "big line 550\n") {
		t.Errorf("big.txt#L550: %v", md)
	}
	doc = fetchDoc(t, e, cs, "wd:/big.txt#L10-L12")
	if doc["text"] != "big line 10\nbig line 11\nbig line 12\n" || doc["metadata"].(map[string]any)["next_id"] != "wd:/big.txt#L13-L512" {
		t.Errorf("big.txt#L10-L12: %v", doc)
	}
	// A one-line id within the first window: the file from line 1.
	if md := fetchDoc(t, e, cs, "wd:/big.txt#L42")["metadata"].(map[string]any); md["lines"] != "1-500" {
		t.Errorf("big.txt#L42: %v", md)
	}
	// An rw workdir's files carry their revision.
	cs = withResearch(t, e, []string{"wd=" + e.root + ":rw"}, nil, nil)
	if md := fetchDoc(t, e, cs, "wd:/README.md")["metadata"].(map[string]any); !strings.HasPrefix(fmt.Sprint(md["revision"]), "sha256:") {
		t.Errorf("README.md in an rw workdir: %v", md)
	}
}

// TestURLTemplateEscaping: every byte that is not unreserved is
// percent-encoded, so an odd name stays one path segment and cannot end
// the path, start a query or fragment, or climb a level.
func TestURLTemplateEscaping(t *testing.T) {
	tm, err := sfs.ParseURLTemplate("https://git.example.com/r/blob/main/{path}#L{line}")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"src/main.go":       "https://git.example.com/r/blob/main/src/main.go#L7",
		"a b/c#d?e.txt":     "https://git.example.com/r/blob/main/a%20b/c%23d%3Fe.txt#L7",
		"100%/x&y=z+w.txt":  "https://git.example.com/r/blob/main/100%25/x%26y%3Dz%2Bw.txt#L7",
		"naïve.txt":         "https://git.example.com/r/blob/main/na%C3%AFve.txt#L7",
		`back\slash:x@y.md`: "https://git.example.com/r/blob/main/back%5Cslash%3Ax%40y.md#L7",
	} {
		if got := tm.Expand(path, 7); got != want {
			t.Errorf("%q: %s, want %s", path, got, want)
		}
	}
	if got := tm.Expand("x", 0); got != "https://git.example.com/r/blob/main/x#L1" {
		t.Errorf("no line: %s", got)
	}
	for _, bad := range []string{"", "https://git.example.com/", "git.example.com/{path}", "ftp://h/{path}", "https://{path}", "https://h{path}",
		"https://u:p@h/{path}", "https://h/{path", "https://h/}{path}", "https://h/{Path}", "https://h/{path}\n", "https:///{path}", "{path}"} {
		if _, err := sfs.ParseURLTemplate(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestResearchHostileIDs: the hostile corpus through fetch ids (and
// search): every refusal is coded, and nothing outside a workdir, hidden
// or denied is read or named.
func TestResearchHostileIDs(t *testing.T) {
	e := newEnv(t)
	w := func(name string, data []byte) { writeFile(t, filepath.Join(e.root, name), data) }
	w("utf16.txt", []byte("\xff\xfeh\x00i\x00"))
	w("bin.dat", []byte("ELF\x00\x01binary CANARY"))
	w("certs/server.PEM", []byte("pem "+canaryText+"\n"))
	w("config/.ENV.production", []byte("DB="+canaryText+"\n"))
	w(".hdir/x.txt", []byte(canaryText+"\n"))
	w("．．/x.txt", []byte("fullwidth dots\n"))
	for target, link := range map[string]string{"/etc": "etc", filepath.Join(e.parent, "outside"): "out", "sub": "link-dir", "README.md": "link-file"} {
		if err := os.Symlink(target, filepath.Join(e.root, link)); err != nil {
			t.Fatal(err)
		}
	}
	// A FIFO nobody writes: opening it for reading would block forever.
	if err := syscall.Mkfifo(filepath.Join(e.root, "fifo.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	roDir := filepath.Join(e.parent, "ro")
	writeFile(t, filepath.Join(roDir, "ro.txt"), []byte("read only\n"))
	e.deps.FS.Close()
	cfg, err := sfs.LoadConfigFlags(nil, sfs.Flags{Workdirs: []string{"wd=" + e.root, "ro=" + roDir}, SearchFetch: "wd"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	e.deps.FS, e.deps.Search = f, search.New(f)
	cs := e.client(t, e.serveHTTP(t))

	for id, code := range map[string]errs.Code{
		"wd:/../secret.txt":                         errs.PathOutsideWorkdir,
		"wd:/sub/../../secret.txt":                  errs.PathOutsideWorkdir,
		"wd:/../outside/canary.txt#L1":              errs.PathOutsideWorkdir,
		"wd:/../wd-evil/x":                          errs.PathOutsideWorkdir,
		"wd://etc/passwd":                           errs.InvalidPath,
		"wd:/C:\\Windows\\win.ini":                  errs.InvalidPath,
		"wd:/\\\\host\\share\\x":                    errs.InvalidPath,
		"wd:/README.md\x00.png":                     errs.InvalidPath,
		"wd:/" + strings.Repeat("a/", 2048):         errs.InvalidPath,
		`wd:/..\..\etc\passwd`:                      errs.HiddenPathNotAllowed,
		"wd:/.hidden.txt":                           errs.HiddenPathNotAllowed,
		"wd:/.hdir/x.txt#L1-L1":                     errs.HiddenPathNotAllowed,
		"wd:/sub/../.hidden.txt":                    errs.HiddenPathNotAllowed,
		"wd:/id_rsa":                                errs.DeniedPath,
		"wd:/certs/server.PEM":                      errs.DeniedPath,
		"wd:/config/.ENV.production":                errs.DeniedPath,
		"wd:/link.txt":                              errs.SymlinkNotAllowed,
		"wd:/link-file":                             errs.SymlinkNotAllowed,
		"wd:/link-dir/a.txt":                        errs.SymlinkNotAllowed,
		"wd:/etc/passwd":                            errs.SymlinkNotAllowed,
		"wd:/out/canary.txt":                        errs.SymlinkNotAllowed,
		"wd:/utf16.txt":                             errs.UnsupportedTextEncoding,
		"wd:/bin.dat":                               errs.BinaryFile,
		"wd:/sub":                                   errs.NotAFile,
		"wd:/":                                      errs.NotAFile,
		"wd:/missing.txt":                           errs.PathNotFound,
		"wd:/%2e%2e/secret.txt":                     errs.PathNotFound, // ids are not percent-decoded
		"wd:/．．/outside/canary.txt":                 errs.PathNotFound,
		"wd:/README.md#L999":                        errs.LineOutOfRange,
		"nope:/README.md":                           errs.WorkdirNotFound,
		"WD:/README.md":                             errs.WorkdirNotFound,
		"ro:/ro.txt":                                errs.WorkdirNotFound, // not covered by search and fetch
		"serverfs://wd/README.md":                   errs.WorkdirNotFound,
		"README.md":                                 errs.InvalidArgument,
		"wd:README.md":                              errs.InvalidArgument,
		":/README.md":                               errs.InvalidArgument,
		"wd:/README.md#L0":                          errs.InvalidArgument,
		"wd:/README.md#L5-L2":                       errs.InvalidArgument,
		"../../etc/passwd":                          errs.InvalidArgument,
		"wd:/big.txt#L1-L" + strings.Repeat("9", 9): okCode,
	} {
		res := e.call(t, cs, "fetch", map[string]any{"id": id})
		if code == okCode {
			if res.IsError {
				t.Errorf("%q: %s", id, resultText(res))
			}
			continue
		}
		text := toolErr(t, res, string(code)+": ")
		for _, bad := range []string{canaryText, "root:x:0:0", "DB=", "PRIVATE", "read only"} {
			if strings.Contains(text, bad) {
				t.Errorf("%q: the refusal shows %q: %s", id, bad, text)
			}
		}
	}
	// search never reads or names what fetch refuses.
	for _, q := range []string{"CANARY OUTSIDE THE WORKDIR", "hidden private pem env root", "read only", "fullwidth", "fifo"} {
		for _, h := range searchHits(t, e, cs, q) {
			if !strings.HasPrefix(h.ID, "wd:/") || strings.Contains(h.ID, "/.") || strings.Contains(h.ID, "id_rsa") || strings.Contains(h.ID, "PEM") ||
				strings.HasPrefix(h.ID, "wd:/etc") || strings.HasPrefix(h.ID, "wd:/out") || strings.HasPrefix(h.ID, "wd:/link") || strings.HasPrefix(h.ID, "wd:/bin.dat") {
				t.Errorf("search %q found %+v", q, h)
			}
		}
	}
	if log := e.log.String(); !strings.Contains(log, `"tool":"fetch"`) || !strings.Contains(log, `"error_code":"PATH_OUTSIDE_WORKDIR"`) {
		t.Errorf("fetch calls are not logged:\n%s", log)
	}
}

// okCode marks an id fetch must read.
const okCode errs.Code = "ok"
