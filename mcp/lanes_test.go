package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/serverfs/serverfs/mcp/transport"
	"github.com/serverfs/serverfs/mcp/transport/transporttest"
)

// The two protocol lanes (transport/lanes.go) over real HTTP.

// protocolVersions are the revisions ServerFS serves, oldest first.
var protocolVersions = []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// connectVersion connects go-sdk's client forced to version.
func (e *testEnv) connectVersion(t *testing.T, url, version string) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "serverfs-test", Version: "0"}, nil)
	cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect at %s: %v", version, err)
	}
	if err := listForHeaders(t.Context(), cs); err != nil {
		t.Fatalf("at %s: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestProtocolVersions runs the read chain with go-sdk's client forced to
// each revision: the older ones on the session lane (a session id, the
// version negotiated by initialize), 2026-07-28 on the stateless lane (no
// session, server/discover).
func TestProtocolVersions(t *testing.T) {
	e := newEnv(t)
	url := e.serveHTTP(t)
	for _, v := range protocolVersions {
		t.Run(v, func(t *testing.T) {
			cs := e.connectVersion(t, url, v)
			if got := cs.InitializeResult().ProtocolVersion; got != v {
				t.Fatalf("negotiated %s, want %s", got, v)
			}
			if stateless := v >= statelessVersion; stateless != (cs.ID() == "") {
				t.Fatalf("version %s: session id %q (stateless lane: %v)", v, cs.ID(), stateless)
			}
			readChain(t, e, cs)
		})
	}
}

// rpcMsg is one JSON-RPC message of an answer.
type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// mcpRequest is a request of body to url as an MCP client sends it (a
// GET when body is empty, else a POST), with headers as name, value pairs.
func mcpRequest(t testing.TB, ctx context.Context, url, body string, headers ...string) *http.Request {
	t.Helper()
	method := http.MethodPost
	if body == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

// rpcPost POSTs body with the headers (name, value pairs) and returns the
// status, the response headers and the JSON-RPC messages of the answer
// (a JSON body or an event stream).
func rpcPost(t *testing.T, url, body string, headers ...string) (int, http.Header, []rpcMsg) {
	t.Helper()
	resp, err := http.DefaultClient.Do(mcpRequest(t, t.Context(), url, body, headers...))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, resp.Header, readMsgs(t, resp)
}

func readMsgs(t *testing.T, resp *http.Response) []rpcMsg {
	t.Helper()
	var msgs []rpcMsg
	add := func(data string) {
		var m rpcMsg
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("answer %q: %v", data, err)
		}
		msgs = append(msgs, m)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.TrimSpace(data) != "" {
				add(data)
			}
		}
		return msgs
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if len(strings.TrimSpace(string(b))) > 0 {
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("status %d, Content-Type %q: %q (want JSON-RPC)", resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
		add(string(b))
	}
	return msgs
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"tunnel-mimic","version":"0"}}}`

// TestTunnelClient mimics the OpenAI tunnel's client (go-sdk v1.4.1
// inside): initialize at 2025-06-18, the session id and version header on
// every POST, no GET stream, DELETE at the end. Also: notifications/initialized
// with "Accept: application/json" alone is accepted (the tunnel project's
// mock service sends it so).
func TestTunnelClient(t *testing.T) {
	e := newEnv(t)
	url := e.serveHTTP(t)
	status, h, msgs := rpcPost(t, url, initBody)
	sid := h.Get(sessionHeader)
	if status != http.StatusOK || sid == "" || len(msgs) != 1 || msgs[0].Error != nil {
		t.Fatalf("initialize: %d, session %q, %+v", status, sid, msgs)
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	json.Unmarshal(msgs[0].Result, &init)
	if init.ProtocolVersion != "2025-06-18" {
		t.Fatalf("initialize negotiated %q", init.ProtocolVersion)
	}
	session := []string{sessionHeader, sid, protocolVersionHeader, "2025-06-18"}
	status, _, msgs = rpcPost(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, append(session, "Accept", "application/json")...)
	if status != http.StatusAccepted || len(msgs) != 0 {
		t.Fatalf("notifications/initialized with Accept: application/json: %d %+v", status, msgs)
	}
	status, _, msgs = rpcPost(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, session...)
	if status != http.StatusOK || len(msgs) != 1 || !strings.Contains(string(msgs[0].Result), `"read_text_file"`) {
		t.Fatalf("tools/list: %d %+v", status, msgs)
	}
	status, _, msgs = rpcPost(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_text_file","arguments":{"workdir":"wd","path":"sub/a.txt"}}}`, session...)
	if status != http.StatusOK || len(msgs) != 1 || !strings.Contains(string(msgs[0].Result), `alpha\nbeta`) {
		t.Fatalf("tools/call: %d %+v", status, msgs)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, url, nil)
	req.Header.Set(sessionHeader, sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	status, _, msgs = rpcPost(t, url, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, session...)
	if status != http.StatusNotFound || len(msgs) != 1 || msgs[0].Error == nil {
		t.Fatalf("tools/list after DELETE: %d %+v (want 404 with a JSON-RPC error)", status, msgs)
	}
}

// TestLanesNeedBoth is why there are two handlers: go-sdk's stateless
// handler alone gives an initializing client no session (no id, DELETE and
// GET refused), and its stateful handler alone refuses 2026-07-28 requests
// (-32022). Through transport.NewHandler both work.
func TestLanesNeedBoth(t *testing.T) {
	e := newEnv(t)
	srv := NewServer(e.deps, testVer)
	get := func(*http.Request) *sdk.Server { return srv }
	serve := func(h http.Handler) string {
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		return ts.URL
	}
	onlyStateless := serve(sdk.NewStreamableHTTPHandler(get, &sdk.StreamableHTTPOptions{Stateless: true}))
	onlyStateful := serve(sdk.NewStreamableHTTPHandler(get, nil))
	both := e.serveHTTP(t)

	modern := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	modernHdr := []string{protocolVersionHeader, "2026-07-28", "Mcp-Method", "tools/list"}

	if status, h, _ := rpcPost(t, onlyStateless, initBody); status != http.StatusOK || h.Get(sessionHeader) != "" {
		t.Errorf("stateless handler alone: initialize %d, session %q (want 200 and no session: the tunnel's lane needs the stateful handler)", status, h.Get(sessionHeader))
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, onlyStateless, nil)
	req.Header.Set(sessionHeader, "x")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("stateless handler alone: DELETE %v %v (want 405)", resp, err)
	} else {
		resp.Body.Close()
	}
	if status, _, msgs := rpcPost(t, onlyStateful, modern, modernHdr...); status != http.StatusBadRequest || len(msgs) != 1 || msgs[0].Error == nil || msgs[0].Error.Code != -32022 {
		t.Errorf("stateful handler alone: 2026-07-28 tools/list %d %+v (want 400 -32022)", status, msgs)
	}

	if status, h, msgs := rpcPost(t, both, initBody); status != http.StatusOK || h.Get(sessionHeader) == "" || len(msgs) != 1 {
		t.Errorf("transport.NewHandler: initialize %d, session %q, %+v", status, h.Get(sessionHeader), msgs)
	}
	status, h, msgs := rpcPost(t, both, modern, modernHdr...)
	if status != http.StatusOK || h.Get(sessionHeader) != "" || len(msgs) != 1 || !strings.Contains(string(msgs[0].Result), `"list_workdirs"`) {
		t.Errorf("transport.NewHandler: 2026-07-28 tools/list %d, session %q, %+v", status, h.Get(sessionHeader), msgs)
	}
	status, _, msgs = rpcPost(t, both, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, protocolVersionHeader, "2026-07-28", "Mcp-Method", "server/discover")
	var disc struct {
		SupportedVersions []string `json:"supportedVersions"`
		TTLMs             *int     `json:"ttlMs"`
		CacheScope        string   `json:"cacheScope"`
	}
	if status == http.StatusOK && len(msgs) == 1 {
		json.Unmarshal(msgs[0].Result, &disc)
	}
	for _, v := range protocolVersions {
		if !slices.Contains(disc.SupportedVersions, v) {
			t.Errorf("server/discover: %d %+v: supportedVersions lacks %s", status, disc, v)
		}
	}
	if disc.TTLMs == nil || *disc.TTLMs != listTTLMillis || disc.CacheScope != "private" {
		t.Errorf("server/discover cache hints %+v", disc)
	}
}

// TestJSONRPCRefusals: go-sdk's plain-text refusals arrive as JSON-RPC
// errors with go-sdk's status, on both lanes.
func TestJSONRPCRefusals(t *testing.T) {
	e := newEnv(t)
	url := e.serveHTTP(t)
	_, h, _ := rpcPost(t, url, initBody)
	sid := h.Get(sessionHeader)
	session := []string{sessionHeader, sid, protocolVersionHeader, "2025-06-18"}
	rpcPost(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session...)
	for _, c := range []struct {
		name, body string
		headers    []string
		status     int
		code       int
	}{
		{"unknown method", `{"jsonrpc":"2.0","id":5,"method":"no/such"}`, session, 400, -32601},
		{"not JSON", `{"jsonrpc":`, session, 400, -32700},
		{"unknown session", `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, []string{sessionHeader, "nope"}, 404, -32001},
		{"a request with Accept: application/json alone", `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, append(slices.Clone(session), "Accept", "application/json"), 400, -32000},
		{"2026-07-28 unknown method", `{"jsonrpc":"2.0","id":5,"method":"no/such","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, []string{protocolVersionHeader, "2026-07-28", "Mcp-Method", "no/such"}, 404, -32601},
	} {
		status, _, msgs := rpcPost(t, url, c.body, c.headers...)
		if status != c.status || len(msgs) != 1 || msgs[0].Error == nil || msgs[0].Error.Code != c.code {
			t.Errorf("%s: %d %+v, want %d with JSON-RPC error %d", c.name, status, msgs, c.status, c.code)
		}
	}
}

// TestToolsListOrder: tools/list is the same, sorted by name, on every
// lane and every call, with the 2026-07-28 cache hints.
func TestToolsListOrder(t *testing.T) {
	e := newRWEnv(t)
	withBridge(t, e, nil)
	url := e.serveHTTP(t)
	var first []string
	for _, v := range protocolVersions {
		cs := e.connectVersion(t, url, v)
		for range 2 {
			res, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			if !slices.IsSorted(names) || (first != nil && !slices.Equal(names, first)) {
				t.Fatalf("%s: tools/list order %v (first: %v)", v, names, first)
			}
			first = names
			if v >= statelessVersion && (res.TTLMs != listTTLMillis || res.CacheScope != "private") {
				t.Errorf("%s: tools/list cache hints ttlMs=%d cacheScope=%q", v, res.TTLMs, res.CacheScope)
			}
		}
	}
	if len(first) < 10 {
		t.Fatalf("tools %v", first)
	}
}

// TestStatelessLaneChecks: the 2026-07-28 lane is behind the same checks
// as the session lane: the client token, Host and Origin, the body cap,
// no batches; and its calls are in the call log.
func TestStatelessLaneChecks(t *testing.T) {
	e := newEnv(t)
	url := e.serveHTTPEnv(t, []string{"SERVERFS_AUTH_TOKEN_FILE=" + transporttest.WriteToken(t, transporttest.Token+"\n", 0o600)})
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stat_file","arguments":{"workdir":"wd","path":"sub/a.txt"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	hdr := []string{protocolVersionHeader, "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "stat_file", "Mcp-Param-Workdir", "wd"}
	withToken := append(slices.Clone(hdr), transport.AuthHeader, transporttest.Token)
	if status, _, msgs := rpcPost(t, url, call, withToken...); status != http.StatusOK || len(msgs) != 1 || msgs[0].Error != nil || !strings.Contains(string(msgs[0].Result), `"modified_at"`) {
		t.Fatalf("2026-07-28 stat_file with the token: %d %+v", status, msgs)
	}
	if status, _, _ := rpcPost(t, url, call, hdr...); status != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", status)
	}
	for _, c := range []struct {
		name    string
		headers []string
		body    string
		status  int
	}{
		{"foreign Host", append(slices.Clone(withToken), "Host", "evil.example"), call, http.StatusForbidden},
		{"cross-site Origin", append(slices.Clone(withToken), "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"), call, http.StatusForbidden},
		{"a batch", withToken, "[" + call + "]", http.StatusBadRequest},
		{"a body over the cap", withToken, strings.Replace(call, `"sub/a.txt"`, `"`+strings.Repeat("a", maxRequestBytes)+`"`, 1), http.StatusRequestEntityTooLarge},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for i := 0; i+1 < len(c.headers); i += 2 {
			if c.headers[i] == "Host" {
				req.Host = c.headers[i+1]
				continue
			}
			req.Header.Set(c.headers[i], c.headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.status)
		}
	}
	var logged bool
	for _, l := range logLines(t, e.log.String()) {
		logged = logged || (l["event"] == "tool_call" && l["tool"] == "stat_file" && l["path"] == "sub/a.txt" && l["success"] == true)
	}
	if !logged {
		t.Errorf("no tool_call line for the 2026-07-28 stat_file:\n%s", e.log.String())
	}
}

// TestCallWithoutListing: by default no tool declares x-mcp-header, so a
// go-sdk client at every revision calls a tool it has not listed (as a
// client that reuses a known tool list or calls by name does) and the
// call runs; with the declaration on, the same 2026-07-28 call was HTTP
// 400 / -32020 "missing Mcp-Param-Workdir header".
func TestCallWithoutListing(t *testing.T) {
	e := newRWEnv(t)
	wholeSurface(t, e)
	for _, tool := range inventory(e.deps.FS.Limits(), surfaceFor(e.deps)) {
		b, err := json.Marshal(tool.def.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "x-mcp-header") {
			t.Errorf("%s declares x-mcp-header without SERVERFS_MCP_PARAM_HEADERS: %s", tool.def.Name, b)
		}
	}
	url := e.serveHTTP(t)
	for _, v := range protocolVersions {
		t.Run(v, func(t *testing.T) {
			c := sdk.NewClient(&sdk.Implementation{Name: "serverfs-test", Version: "0"}, nil)
			cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatalf("connect at %s: %v", v, err)
			}
			defer cs.Close()
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "stat_file", Arguments: map[string]any{"workdir": "wd", "path": "sub/a.txt"}})
			if err != nil || res.IsError {
				t.Fatalf("stat_file at %s without tools/list first: %v %v", v, err, res)
			}
		})
	}
}

// TestWorkdirHeader: with SERVERFS_MCP_PARAM_HEADERS=true every tool that
// takes a workdir declares it with x-mcp-header (SEP-2243), so a
// 2026-07-28 client mirrors it as Mcp-Param-Workdir, and the stateless
// lane holds the header to the body: plain or Base64 and equal, the call
// runs; absent, different or badly encoded, it is refused with 400 and
// -32020 before any tool runs. The session lane (older revisions)
// neither expects nor checks it.
func TestWorkdirHeader(t *testing.T) {
	e := newRWEnv(t)
	wholeSurface(t, e)
	e.deps.ParamHeaders = true
	url := e.serveHTTP(t)
	cs := e.connectVersion(t, url, "2026-07-28")
	tools := listTools(t, cs) // go-sdk's client drops a tool whose annotation is invalid
	if len(tools) != len(ToolNamesFor(e.deps)) {
		t.Fatalf("go-sdk's client kept %d of the %d tools", len(tools), len(ToolNamesFor(e.deps)))
	}
	annotated := 0
	for _, tool := range tools {
		props, _ := tool.InputSchema.(map[string]any)["properties"].(map[string]any)
		wd, takes := props["workdir"].(map[string]any)
		if got := wd["x-mcp-header"]; takes != (got == workdirHeader) {
			t.Errorf("%s: workdir property %v (x-mcp-header %v)", tool.Name, wd, got)
		}
		if takes {
			annotated++
		}
	}
	if annotated < 15 {
		t.Fatalf("only %d tools declare the workdir header", annotated)
	}

	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stat_file","arguments":{"workdir":"wd","path":"sub/a.txt"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	hdr := []string{protocolVersionHeader, "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "stat_file"}
	mark := len(e.log.String())
	for _, c := range []struct {
		name, value string // value "": no header
		ok          bool
	}{
		{"plain", "wd", true},
		{"Base64", "=?base64?d2Q=?=", true},
		{"absent", "", false},
		{"another workdir", "other", false},
		{"Base64 of another", "=?base64?b3RoZXI=?=", false},
		{"Base64 without padding", "=?base64?d2Q?=", false},
		{"not Base64", "=?base64?d!2Q=?=", false},
	} {
		h := slices.Clone(hdr)
		if c.value != "" {
			h = append(h, "Mcp-Param-Workdir", c.value)
		}
		status, _, msgs := rpcPost(t, url, call, h...)
		switch {
		case c.ok && (status != http.StatusOK || len(msgs) != 1 || msgs[0].Error != nil || !strings.Contains(string(msgs[0].Result), `"modified_at"`)):
			t.Errorf("%s header %q: %d %+v, want the stat", c.name, c.value, status, msgs)
		case !c.ok && (status != http.StatusBadRequest || len(msgs) != 1 || msgs[0].Error == nil || msgs[0].Error.Code != -32020):
			t.Errorf("%s header %q: %d %+v, want 400 with -32020 HeaderMismatch", c.name, c.value, status, msgs)
		}
	}
	// Only the two accepted calls ran.
	ran := 0
	for _, l := range logLines(t, e.log.String()[mark:]) {
		if l["event"] == "tool_call" && l["tool"] == "stat_file" {
			ran++
		}
	}
	if ran != 2 {
		t.Errorf("%d stat_file calls logged, want the 2 accepted ones:\n%s", ran, e.log.String()[mark:])
	}

	// The session lane: no header, no check.
	old := e.connectVersion(t, url, "2025-11-25")
	if res := e.call(t, old, "stat_file", map[string]any{"workdir": "wd", "path": "sub/a.txt"}); res.IsError {
		t.Errorf("2025-11-25 stat_file: %s", resultText(res))
	}
}

// TestParamHeadersSetting: SERVERFS_MCP_PARAM_HEADERS is false unless set
// to true; any other value is a configuration problem that names it.
func TestParamHeadersSetting(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want bool
		prob bool
	}{
		{nil, false, false},
		{[]string{"SERVERFS_MCP_PARAM_HEADERS=false"}, false, false},
		{[]string{"SERVERFS_MCP_PARAM_HEADERS=TRUE"}, true, false},
		{[]string{"SERVERFS_MCP_PARAM_HEADERS=yes"}, false, true},
	} {
		cfg, probs := loadHTTPConfig(c.env)
		named := len(probs) == 1 && strings.Contains(probs[0], "SERVERFS_MCP_PARAM_HEADERS")
		if cfg.ParamHeaders != c.want || named != c.prob || (!c.prob && len(probs) > 0) {
			t.Errorf("%v: ParamHeaders %v, problems %q", c.env, cfg.ParamHeaders, probs)
		}
	}
}
