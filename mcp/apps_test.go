package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// appsCaps are the capabilities of an MCP Apps host: the extension with
// the HTML profile, as @modelcontextprotocol/ext-apps's hosts declare it.
func appsCaps() *sdk.ClientCapabilities {
	c := &sdk.ClientCapabilities{}
	c.AddExtension(appsExtension, map[string]any{"mimeTypes": []any{appsMIME}})
	return c
}

// appsClient connects to url as an MCP Apps host.
func appsClient(t *testing.T, url string) *sdk.ClientSession {
	t.Helper()
	return versionClient(t, url, "", appsCaps())
}

// versionClient connects to url with protocol revision version (go-sdk's
// default when "") and capabilities caps (go-sdk's default when nil).
func versionClient(t *testing.T, url, version string, caps *sdk.ClientCapabilities) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "serverfs-test", Version: "0"}, &sdk.ClientOptions{Capabilities: caps})
	var opts *sdk.ClientSessionOptions
	if version != "" {
		opts = &sdk.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, opts)
	if err == nil {
		err = listForHeaders(t.Context(), cs)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// appCall is one tool call whose answer a view shows.
type appCall struct {
	Name string         `json:"name"`
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

// appsFixture is a repository workdir with history (three commits, one
// file with lines from two of them), uncommitted changes (a modified, an
// added, a deleted and a binary file), and a workspace whose submission
// conflicts with the branch. calls are the read calls the views show;
// submits are submit_workspace answers: "merged" (a workspace that added a
// file) and "conflict" (MERGE_CONFLICT).
func appsFixture(t *testing.T, cs func(e *testEnv, url string) *sdk.ClientSession) (e *testEnv, url string, s *sdk.ClientSession, calls []appCall, submits map[string]*sdk.CallToolResult) {
	t.Helper()
	e = workspaceEnv(t)
	gitIn(t, e.root, "config", "user.name", "Ada Reviewer")
	gitIn(t, e.root, "config", "user.email", "ada@example.invalid")
	git := func(args ...string) string {
		return gitIn(t, e.root, append([]string{"-c", "user.name=Ada Reviewer", "-c", "user.email=ada@example.invalid"}, args...)...)
	}
	write := func(rel, s string) { writeFile(t, filepath.Join(e.root, filepath.FromSlash(rel)), []byte(s)) }
	var lib strings.Builder
	for i := 1; i <= 40; i++ {
		lib.WriteString("line " + itoa(i) + "\n")
	}
	write("src/lib.go", "package lib\n\n"+lib.String())
	write("logo.bin", "\x00\x01\x02binary\n")
	write("old.txt", "to be removed\n")
	write("re/words.txt", reWords)
	git("add", "-A")
	git("commit", "-qm", "add lib and logo")
	write("src/lib.go", strings.Replace("package lib\n\n"+lib.String(), "line 20\n", "line twenty\n", 1))
	git("commit", "-qam", "lib: spell out line twenty")
	libCommit := strings.TrimSpace(git("rev-parse", "HEAD"))

	url = e.serveHTTP(t)
	s = cs(e, url)
	call := func(tool string, args map[string]any) *sdk.CallToolResult {
		t.Helper()
		r := e.call(t, s, tool, args)
		if r.IsError {
			t.Fatalf("%s: %s", tool, resultText(r))
		}
		return r
	}

	// A merge: a workspace adds a file.
	ws := structured[workspaceOut](t, call("create_workspace", map[string]any{"workdir": "wd"})).Workspace
	call("write_text_file", map[string]any{"workdir": ws, "path": "notes.md", "content": "# Notes\none\ntwo\n"})
	merged := call("submit_workspace", map[string]any{"workspace": ws, "message": "notes", "mode": "strict"})

	// The conflict: a workspace and the branch both change sub/a.txt.
	ws = structured[workspaceOut](t, call("create_workspace", map[string]any{"workdir": "wd"})).Workspace
	rd := structured[readTextFileOut](t, call("read_text_file", map[string]any{"workdir": ws, "path": "sub/a.txt"}))
	call("write_text_file", map[string]any{"workdir": ws, "path": "sub/a.txt", "content": "alpha from the workspace\nbeta\n", "expected_revision": rd.Revision})
	write("sub/a.txt", "alpha on main\nbeta\n")
	git("commit", "-qam", "a: alpha on main")
	conflict := e.call(t, s, "submit_workspace", map[string]any{"workspace": ws, "message": "workspace alpha", "mode": "replay"})
	if !strings.HasPrefix(resultText(conflict), "MERGE_CONFLICT") {
		t.Fatalf("submit_workspace: %s", resultText(conflict))
	}

	// Uncommitted changes in the live tree.
	write("src/lib.go", strings.Replace(strings.Replace("package lib\n\n"+lib.String(), "line 20\n", "line twenty\n", 1), "line 5\n", "line five\n", 1)+"// end\n")
	write("logo.bin", "\x00\x01\x02binary v2\n")
	write("NEW.md", "# New\nfresh file\n")
	if err := os.Remove(filepath.Join(e.root, "old.txt")); err != nil {
		t.Fatal(err)
	}
	git("add", "NEW.md")

	calls = []appCall{
		{"changes", "inspect_repo", map[string]any{"workdir": "wd", "view": "changes"}},
		{"diff", "inspect_repo", map[string]any{"workdir": "wd", "view": "diff", "paths": []any{"src/lib.go", "logo.bin", "old.txt"}}},
		{"staged", "inspect_repo", map[string]any{"workdir": "wd", "view": "staged_diff", "paths": []any{"NEW.md"}}},
		{"file", "read_text_file", map[string]any{"workdir": "wd", "path": "src/lib.go", "start_line": 10, "max_lines": 15}},
		{"files", "read_text_files", map[string]any{"workdir": "wd", "paths": []any{"README.md", "sub/a.txt"}}},
		{"search", "search_text", map[string]any{"workdir": "wd", "path": "src", "query": "LINE 3", "case_sensitive": false}},
		{"search_context", "search_text", map[string]any{"workdir": "wd", "query": "twenty", "context": 1}},
		{"log", "read_repo_history", map[string]any{"workdir": "wd", "view": "log", "files": true}},
		{"show", "read_repo_history", map[string]any{"workdir": "wd", "view": "show", "rev": libCommit}},
		{"blame", "read_repo_history", map[string]any{"workdir": "wd", "view": "blame", "path": "src/lib.go"}},
	}
	return e, url, s, calls, map[string]*sdk.CallToolResult{"merged": merged, "conflict": conflict}
}

// reWords is a file for the file view's search marks: a line on which a
// backtracking engine takes exponential time for ^(\w+\s?)+$|x (40 word
// characters, then one that fails the whole-line match), and a non-ASCII
// one (2- and 3-byte runes, a surrogate pair in JavaScript).
var reWords = strings.Repeat("ax", 20) + "!\nCafé ☕ x 😀x naïve\n"

func itoa(i int) string { return jsonNum(i) }

func jsonNum(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestAppsNegotiation: a client that declares io.modelcontextprotocol/ui
// sees _meta.ui.resourceUri (with the flat ui/resourceUri and
// openai/outputTemplate) on the tools that have a view, the ui://
// resources, and reads them; a client that does not sees neither, and both
// get the same answers. Apart from those entries the two tools/list
// answers are the same. Both protocol lanes: initialize (2025-11-25, the
// capabilities once per session) and 2026-07-28 (the capabilities in each
// request's _meta).
func TestAppsNegotiation(t *testing.T) {
	e, url, _, calls, submits := appsFixture(t, func(e *testEnv, url string) *sdk.ClientSession { return appsClient(t, url) })
	for _, r := range submits {
		if r.Meta["ui"] != nil || r.Meta["openai/outputTemplate"] != nil {
			t.Errorf("submit_workspace answer carries view _meta %v", r.Meta)
		}
	}
	for _, version := range []string{"2025-11-25", ""} {
		t.Run("protocol="+version, func(t *testing.T) {
			negotiate(t, e, calls, versionClient(t, url, version, nil), versionClient(t, url, version, appsCaps()))
		})
	}
}

func negotiate(t *testing.T, e *testEnv, calls []appCall, plain, apps *sdk.ClientSession) {
	listed := func(cs *sdk.ClientSession) []map[string]any {
		t.Helper()
		r, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []map[string]any
		for _, tl := range r.Tools {
			b, err := json.Marshal(tl)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
		return out
	}
	// initialize: the server names the extension to the client that did.
	if ext := apps.InitializeResult().Capabilities.Extensions; ext[appsExtension] == nil || len(ext) != 1 {
		t.Errorf("server extensions for an apps client: %v", ext)
	}
	if ext := plain.InitializeResult().Capabilities.Extensions; ext != nil {
		t.Errorf("server extensions for a plain client: %v", ext)
	}
	pt, at := listed(plain), listed(apps)
	if len(pt) != len(at) {
		t.Fatalf("%d tools without the extension, %d with", len(pt), len(at))
	}
	withView := map[string]string{}
	for i := range pt {
		name := pt[i]["name"].(string)
		if pm, _ := pt[i]["_meta"].(map[string]any); pm["ui"] != nil || pm["ui/resourceUri"] != nil || pm["openai/outputTemplate"] != nil {
			t.Errorf("%s: _meta.ui without the extension", name)
		}
		meta, _ := at[i]["_meta"].(map[string]any)
		want := viewFor(name)
		if want != "" {
			withView[name] = want
			ui, _ := meta["ui"].(map[string]any)
			if ui["resourceUri"] != want || meta["ui/resourceUri"] != want || meta["openai/outputTemplate"] != want || len(ui) != 1 {
				t.Errorf("%s: _meta %v, want ui.resourceUri, ui/resourceUri and openai/outputTemplate %s", name, meta, want)
			}
			delete(meta, "ui")
			delete(meta, "ui/resourceUri")
			delete(meta, "openai/outputTemplate")
			if len(meta) == 0 {
				delete(at[i], "_meta")
			}
		}
		if !reflect.DeepEqual(pt[i], at[i]) {
			t.Errorf("%s differs beyond the view entries:\n%v\n%v", name, pt[i], at[i])
		}
	}
	for _, want := range []string{"inspect_repo", "submit_workspace", "read_text_file", "read_text_files", "search_text", "read_repo_history"} {
		if withView[want] == "" {
			t.Errorf("%s has no view (tools with one: %v)", want, withView)
		}
	}

	// Answers: byte for byte the same for both sessions, but for
	// search_text's match spans in _meta, which only the apps session gets.
	for _, c := range calls {
		p, a := e.call(t, plain, c.Tool, c.Args), e.call(t, apps, c.Tool, c.Args)
		if p.IsError {
			t.Fatalf("%s: %s", c.Name, resultText(p))
		}
		if (a.Meta[spansKey] != nil) != (c.Tool == "search_text") || p.Meta[spansKey] != nil {
			t.Errorf("%s: _meta %v for the apps session, %v for the other", c.Name, a.Meta, p.Meta)
		}
		delete(a.Meta, spansKey)
		if len(a.Meta) == 0 {
			a.Meta = nil
		}
		pb, _ := json.Marshal(p)
		ab, _ := json.Marshal(a)
		if string(pb) != string(ab) {
			t.Errorf("%s: answers differ:\n%s\n%s", c.Name, pb, ab)
		}
	}

	// Resources: listed and readable only with the extension.
	uris := func(cs *sdk.ClientSession) []string {
		r, err := cs.ListResources(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var u []string
		for _, x := range r.Resources {
			u = append(u, x.URI)
		}
		return u
	}
	if u := uris(plain); len(u) != 0 {
		t.Errorf("resources without the extension: %v", u)
	}
	if u := uris(apps); strings.Join(u, " ") != "ui://serverfs/changes.html ui://serverfs/file.html ui://serverfs/history.html" {
		t.Errorf("resources with the extension: %v", u)
	}
	if _, err := plain.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "ui://serverfs/changes.html"}); err == nil {
		t.Error("a view read without the extension")
	}
	for _, uri := range withView {
		r, err := apps.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(uri, err)
		}
		c := r.Contents[0]
		csp, _ := c.Meta["ui"].(map[string]any)["csp"].(map[string]any)
		if c.MIMEType != appsMIME || !strings.HasPrefix(c.Text, "<!doctype html>") || csp == nil ||
			len(csp["connectDomains"].([]any)) != 0 || len(csp["resourceDomains"].([]any)) != 0 {
			t.Errorf("%s: %s %v %.40q", uri, c.MIMEType, c.Meta, c.Text)
		}
	}
}
