package mcp_test

// The interop matrix: real MCP clients against the real serverfs binary,
// each cell one fresh connection that calls stat_file, read_text_file and
// search_text and checks their answers' content, once after tools/list
// ("listed") and once without it ("unlisted": a client that reuses a tool
// list it already knows, or calls a tool by name). The clients: go-sdk
// forced to every protocol version it speaks (HTTP and stdio), the
// TypeScript SDK v1 (HTTP and stdio), the TypeScript SDK v2 on both of its
// lanes (HTTP and stdio), the MCP Inspector CLI (both of its
// protocol eras) and the OpenAI Agents SDK's MCP servers (streamable HTTP
// and stdio; no model, no API key). The npm packages are pinned in
// .ci/npm/package.json and installed by .ci/run (npm ci).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// interopTools are the read tools every cell expects listed.
var interopTools = []string{"find_files", "list_directory", "list_workdirs", "read_text_file", "read_text_files", "search_text", "stat_file"}

// interopCell is one row of the matrix.
type interopCell struct {
	client, transport, version string
	listed                     bool
	ok                         bool
}

func (c interopCell) name() string {
	l := "unlisted"
	if c.listed {
		l = "listed"
	}
	return c.client + "-" + c.transport + "/" + c.version + "/" + l
}

// interopMatrix collects the cells' outcomes for the closing table.
type interopMatrix struct {
	mu    sync.Mutex
	cells []interopCell
}

// run runs one cell as a subtest named client-transport/version/listed
// and records whether it passed.
func (m *interopMatrix) run(t *testing.T, c interopCell, f func(t *testing.T)) {
	t.Helper()
	c.ok = t.Run(c.name(), f)
	m.mu.Lock()
	m.cells = append(m.cells, c)
	m.mu.Unlock()
}

func (m *interopMatrix) table() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	b.WriteString("| client | transport | protocol version | listed first | result |\n|---|---|---|---|---|\n")
	for _, c := range m.cells {
		listed, result := "no", "fail"
		if c.listed {
			listed = "yes"
		}
		if c.ok {
			result = "ok"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", c.client, c.transport, c.version, listed, result)
	}
	return b.String()
}

// interopNode is needNodeTools plus the Inspector CLI and @openai/agents.
type interopNode struct {
	nodeTools
	inspector string // the Inspector's CLI entry point (run with node22)
}

func needInteropTools(t *testing.T) interopNode {
	t.Helper()
	nt := interopNode{nodeTools: needNodeTools(t)}
	mods := filepath.Join(nt.root, ".ci", "npm", "node_modules")
	nt.inspector = filepath.Join(mods, "@modelcontextprotocol", "inspector", "clients", "cli", "build", "index.js")
	for _, p := range []string{
		nt.inspector,
		filepath.Join(mods, "@openai", "agents", "package.json"),
		filepath.Join(mods, "@modelcontextprotocol", "client", "package.json"),
	} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s is missing: the npm packages of .ci/npm are not installed; %s", p, installHint)
		}
	}
	return nt
}

// serverfsEnv is the environment of a serverfs child: the test's own
// without SERVERFS_* and WORKDIR_* (the fixture is the whole configuration).
func serverfsEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SERVERFS_") && !strings.HasPrefix(kv, "WORKDIR_") {
			env = append(env, kv)
		}
	}
	return env
}

// TestInterop runs the matrix and logs it as a markdown table.
func TestInterop(t *testing.T) {
	nt := needInteropTools(t)
	bin := buildServerfs(t, nt.root)
	dir := nodeFixture(t)
	mcpURL := startServerfs(t, bin, dir)
	m := &interopMatrix{}
	start := time.Now()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The Node clients start first and run while the go-sdk cells do:
	// Node's start-up dominates the matrix's time.
	proxies := map[string]*recordingProxy{}
	for _, mode := range []string{"ts-http", "ts2-http", "agents", "inspector"} {
		proxies[mode] = newRecordingProxy(t, mcpURL)
	}
	jobs := map[string]*nodeJob{}
	sem := make(chan struct{}, 2) // two CPUs
	launch := func(name string, f func() (any, error)) {
		j := &nodeJob{done: make(chan struct{})}
		jobs[name] = j
		go func() {
			defer close(j.done)
			sem <- struct{}{}
			defer func() { <-sem }()
			j.result, j.err = f()
		}()
	}
	script := filepath.Join(nt.root, "mcp", "testdata", "node", "interop.mjs")
	launch("ts-http", func() (any, error) { return runInteropScript(ctx, nt.node, script, "ts-http", proxies["ts-http"].url) })
	launch("ts-stdio", func() (any, error) { return runInteropScript(ctx, nt.node, script, "ts-stdio", bin, dir) })
	launch("ts2-http", func() (any, error) {
		return runInteropScript(ctx, nt.node, script, "ts2-http", proxies["ts2-http"].url)
	})
	launch("ts2-stdio", func() (any, error) { return runInteropScript(ctx, nt.node, script, "ts2-stdio", bin, dir) })
	// @openai/agents' openai dependency and the Inspector need Node >= 22.
	launch("agents", func() (any, error) { return runInteropScript(ctx, nt.node22, script, "agents", proxies["agents"].url) })
	launch("agents-stdio", func() (any, error) { return runInteropScript(ctx, nt.node22, script, "agents-stdio", bin, dir) })
	home := t.TempDir() // the Inspector keeps a catalog and client config in $HOME
	for _, era := range []string{"legacy", "modern"} {
		launch("inspector-"+era, func() (any, error) {
			return runInspector(ctx, nt.node22, nt.inspector, home, proxies["inspector"].url+"/"+era, era)
		})
	}

	// go-sdk: every version it speaks, over HTTP and over stdio.
	for _, v := range sdk.SupportedProtocolVersions() {
		for _, listed := range []bool{true, false} {
			m.run(t, interopCell{client: "go-sdk", transport: "http", version: v, listed: listed}, func(t *testing.T) {
				goSDKCell(t, &sdk.StreamableClientTransport{Endpoint: mcpURL, MaxRetries: -1}, v, listed)
			})
		}
	}
	for _, v := range sdk.SupportedProtocolVersions() {
		for _, listed := range []bool{true, false} {
			m.run(t, interopCell{client: "go-sdk", transport: "stdio", version: v, listed: listed}, func(t *testing.T) {
				cmd := exec.Command(bin, "serve", "--stdio", "--workdir", "wd="+dir)
				cmd.Env = serverfsEnv()
				goSDKCell(t, &sdk.CommandTransport{Command: cmd}, v, listed)
			})
		}
	}

	// The Node scripts' cells: listed and unlisted, on each lane the
	// v2 SDK speaks.
	for _, job := range []struct {
		name, client, transport string
		cells                   int
	}{
		{"ts-http", "ts-sdk-v1", "http", 2}, {"ts-stdio", "ts-sdk-v1", "stdio", 2},
		{"ts2-http", "ts-sdk-v2", "http", 4}, {"ts2-stdio", "ts-sdk-v2", "stdio", 4},
		{"agents", "openai-agents", "http", 2}, {"agents-stdio", "openai-agents", "stdio", 2},
	} {
		res, err := jobs[job.name].wait(ctx)
		out, _ := res.(*scriptOutput)
		if err != nil || out == nil || len(out.Cells) != job.cells {
			t.Errorf("node interop.mjs %s: %v; want %d cells, got %+v", job.name, err, job.cells, out)
			m.run(t, interopCell{client: job.client, transport: job.transport, version: "?", listed: true}, func(t *testing.T) { t.Fatal("did not run") })
			continue
		}
		t.Logf("%s: %v", job.name, out.Versions)
		for _, c := range out.Cells {
			version := c.Version
			prefix := listedPath(c.Listed)
			if c.Lane != "" {
				prefix = c.Lane + "/" + prefix
			}
			if p := proxies[job.name]; p != nil {
				// The HTTP cells' version is what the client sent.
				version = p.version(t, prefix)
			}
			if version == "" {
				version = "?"
			}
			m.run(t, interopCell{client: job.client, transport: job.transport, version: version, listed: c.Listed}, func(t *testing.T) {
				if version == "?" {
					t.Error("the protocol version the client spoke is unknown")
				}
				if c.Version != "" && c.Version != version {
					t.Errorf("the client says it negotiated %s, its requests carried %s", c.Version, version)
				}
				if p := proxies[job.name]; p != nil {
					p.checkListed(t, prefix, c.Listed)
					p.checkHandshake(t, prefix, version)
				}
				for _, ch := range c.Checks {
					if !ch.OK {
						t.Errorf("%s: %s", ch.Name, ch.Detail)
					}
				}
				if len(c.Checks) < 3 {
					t.Errorf("only %d checks ran: %+v", len(c.Checks), c.Checks)
				}
			})
		}
	}

	// The Inspector CLI: one connection per invocation, and its tools/call
	// lists the tools first on that connection by itself.
	for _, era := range []string{"legacy", "modern"} {
		res, err := jobs["inspector-"+era].wait(ctx)
		calls, _ := res.(inspectorCalls)
		p := proxies["inspector"]
		version := p.version(t, era)
		c := interopCell{client: "inspector-cli", transport: "http", version: version + " (" + era + ")", listed: true}
		m.run(t, c, func(t *testing.T) {
			if err != nil {
				t.Fatal(err)
			}
			if version == "?" {
				t.Error("the protocol version the client spoke is unknown")
			}
			checkToolNames(t, calls.tools)
			p.checkListed(t, era+"/call", true)
			checkInteropCalls(t, calls.call)
		})
	}

	t.Logf("interop matrix (%d cells, %.1f s):\n%s", len(m.cells), time.Since(start).Seconds(), m.table())
}

// listedPath is the proxy path prefix of a Node script's cell.
func listedPath(listed bool) string {
	if listed {
		return "listed"
	}
	return "unlisted"
}

// goSDKCell connects go-sdk's client forced to version over transport and
// runs the cell.
func goSDKCell(t *testing.T, transport sdk.Transport, version string, listed bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "serverfs-interop", Version: "0"}, nil)
	cs, err := c.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect at %s: %v", version, err)
	}
	defer func() {
		if err := cs.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	if listed {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		checkToolNames(t, names)
	}
	checkInteropCalls(t, func(name string, args map[string]any) (*sdk.CallToolResult, error) {
		return cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	})
}

func checkToolNames(t *testing.T, names []string) {
	t.Helper()
	slices.Sort(names)
	if !slices.Equal(names, interopTools) {
		t.Errorf("tools/list = %v, want %v", names, interopTools)
	}
}

// checkInteropCalls makes the three calls of a cell and checks what they
// answer: the file's size, its content and its matching line.
func checkInteropCalls(t *testing.T, call func(name string, args map[string]any) (*sdk.CallToolResult, error)) {
	t.Helper()
	get := func(name string, args map[string]any, into any) bool {
		t.Helper()
		res, err := call(name, args)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return false
		}
		if res.IsError {
			t.Errorf("%s: tool error %s", name, interopText(res))
			return false
		}
		b, err := json.Marshal(res.StructuredContent)
		if err == nil {
			err = json.Unmarshal(b, into)
		}
		if err != nil {
			t.Errorf("%s: structured content %s: %v", name, b, err)
			return false
		}
		return true
	}
	var st struct {
		Type string `json:"type"`
		Path string `json:"path"`
		Size int    `json:"size"`
	}
	if get("stat_file", map[string]any{"workdir": "wd", "path": nodeFixtureFile}, &st) &&
		(st.Type != "file" || st.Path != nodeFixtureFile || st.Size != len(nodeFixtureContent)) {
		t.Errorf("stat_file = %+v, want a file of %d bytes", st, len(nodeFixtureContent))
	}
	var rd struct {
		Content string `json:"content"`
	}
	if get("read_text_file", map[string]any{"workdir": "wd", "path": nodeFixtureFile}, &rd) && rd.Content != nodeFixtureContent {
		t.Errorf("read_text_file content %q, want %q", rd.Content, nodeFixtureContent)
	}
	var gr struct {
		Matches map[string][][2]any `json:"matches"`
	}
	if get("search_text", map[string]any{"workdir": "wd", "query": "second line"}, &gr) {
		m := gr.Matches[nodeFixtureFile]
		if len(gr.Matches) != 1 || len(m) != 1 || m[0][0] != float64(2) || m[0][1] != "second line, ünïcödé" {
			t.Errorf("search_text matches %v, want %s line 2", gr.Matches, nodeFixtureFile)
		}
	}
}

func interopText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// nodeJob is a Node client run in the background.
type nodeJob struct {
	done   chan struct{}
	result any
	err    error
}

func (j *nodeJob) wait(ctx context.Context) (any, error) {
	select {
	case <-j.done:
		return j.result, j.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// scriptOutput is what interop.mjs prints.
type scriptOutput struct {
	Versions map[string]string `json:"versions"`
	Cells    []struct {
		Lane    string `json:"lane"`
		Listed  bool   `json:"listed"`
		Version string `json:"version"`
		OK      bool   `json:"ok"`
		Checks  []struct {
			Name   string `json:"name"`
			OK     bool   `json:"ok"`
			Detail any    `json:"detail"`
		} `json:"checks"`
	} `json:"cells"`
}

// runInteropScript runs interop.mjs; its cells carry their own checks,
// so a non-zero exit with a summary is left to them.
func runInteropScript(ctx context.Context, node, script string, args ...string) (*scriptOutput, error) {
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Env = serverfsEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var out scriptOutput
	if jerr := json.Unmarshal(stdout.Bytes(), &out); jerr != nil {
		return nil, fmt.Errorf("%v (%v)\nstdout:\n%s\nstderr:\n%s", err, jerr, stdout.String(), stderr.String())
	}
	return &out, nil
}

// inspectorCalls is what the Inspector CLI answered: its tools/list and,
// per tool, its tools/call.
type inspectorCalls struct {
	tools []string
	call  func(name string, args map[string]any) (*sdk.CallToolResult, error)
}

// runInspector runs `inspector --cli URL --protocol-era ERA` once for
// tools/list and once per tool of a cell, in the given era.
func runInspector(ctx context.Context, node22, cli, home, base, era string) (inspectorCalls, error) {
	run := func(path string, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, node22, append([]string{cli, base + "/" + path + "/mcp", "--protocol-era", era, "--format", "json"}, args...)...)
		cmd.Env = append(serverfsEnv(), "HOME="+home)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("inspector --cli %s: %v\nstdout:\n%s\nstderr:\n%s", args, err, stdout.String(), stderr.String())
		}
		return stdout.Bytes(), nil
	}
	out, err := run("list", "--method", "tools/list")
	if err != nil {
		return inspectorCalls{}, err
	}
	var list struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return inspectorCalls{}, fmt.Errorf("tools/list answer %s: %v", out, err)
	}
	ic := inspectorCalls{}
	for _, tool := range list.Result.Tools {
		ic.tools = append(ic.tools, tool.Name)
	}
	// The calls run now, one CLI process each; the cell replays them.
	type answer struct {
		res *sdk.CallToolResult
		err error
	}
	answers := map[string]answer{}
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"stat_file", map[string]any{"workdir": "wd", "path": nodeFixtureFile}},
		{"read_text_file", map[string]any{"workdir": "wd", "path": nodeFixtureFile}},
		{"search_text", map[string]any{"workdir": "wd", "query": "second line"}},
	} {
		args, _ := json.Marshal(c.args)
		out, err := run("call", "--method", "tools/call", "--tool-name", c.name, "--tool-args-json", string(args))
		var res struct {
			Result *sdk.CallToolResult `json:"result"`
		}
		if err == nil {
			if err = json.Unmarshal(out, &res); err == nil && res.Result == nil {
				err = fmt.Errorf("no result in %s", out)
			}
		}
		answers[c.name] = answer{res.Result, err}
	}
	ic.call = func(name string, _ map[string]any) (*sdk.CallToolResult, error) {
		a, ok := answers[name]
		if !ok {
			return nil, fmt.Errorf("the Inspector was not asked to call %s", name)
		}
		return a.res, a.err
	}
	return ic, nil
}

// recordingProxy forwards /PREFIX.../mcp to serverfs's /mcp and records,
// per prefix, each POST's JSON-RPC method and Mcp-Protocol-Version: what
// version a Node client spoke and whether it listed tools before calling
// one. It changes nothing it forwards.
type recordingProxy struct {
	url string
	mu  sync.Mutex
	log map[string][]recorded // prefix -> requests in arrival order
}

type recorded struct{ method, version string }

func newRecordingProxy(t *testing.T, target string) *recordingProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{log: map[string][]recorded{}}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.URL.Path = u.Path
			r.Out.URL.RawPath = ""
		},
		FlushInterval: -1, // event streams as they come
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prefix, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/mcp")
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
			}
			json.Unmarshal(body, &msg) // a batch or a response records no method
			p.mu.Lock()
			p.log[prefix] = append(p.log[prefix], recorded{msg.Method, r.Header.Get("Mcp-Protocol-Version")})
			p.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// requests are the requests recorded under prefix and below it.
func (p *recordingProxy) requests(prefix string) []recorded {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []recorded
	for k, v := range p.log {
		if k == prefix || strings.HasPrefix(k, prefix+"/") {
			out = append(out, v...)
		}
	}
	return out
}

// version is the Mcp-Protocol-Version every tools/call under prefix
// carried; it fails the test when they differ or none was made.
func (p *recordingProxy) version(t *testing.T, prefix string) string {
	t.Helper()
	var versions []string
	for _, r := range p.requests(prefix) {
		if r.method == "tools/call" && !slices.Contains(versions, r.version) {
			versions = append(versions, r.version)
		}
	}
	if len(versions) != 1 || versions[0] == "" {
		t.Errorf("%s: tools/call carried Mcp-Protocol-Version %q, want one version", prefix, versions)
		return "?"
	}
	return versions[0]
}

// checkHandshake checks that the connection under prefix opened its lane
// as version's revision does: server/discover from 2026-07-28 on (the
// stateless lane), else initialize (the session lane).
func (p *recordingProxy) checkHandshake(t *testing.T, prefix, version string) {
	t.Helper()
	want := "initialize"
	if version >= "2026-07-28" {
		want = "server/discover"
	}
	if rs := p.requests(prefix); len(rs) == 0 || rs[0].method != want {
		t.Errorf("%s: the first request was %+v, want %s", prefix, rs, want)
	}
}

// checkListed checks that the connection under prefix listed the tools
// before its first tools/call, or never listed them.
func (p *recordingProxy) checkListed(t *testing.T, prefix string, listed bool) {
	t.Helper()
	sawList := false
	for _, r := range p.requests(prefix) {
		switch r.method {
		case "tools/list":
			sawList = true
		case "tools/call":
			if sawList != listed {
				t.Errorf("%s: tools/list before the first tools/call: %v, want %v", prefix, sawList, listed)
			}
			return
		}
	}
	t.Errorf("%s: no tools/call went through", prefix)
}
