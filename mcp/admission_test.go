package mcp

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/mcp/transport"
	"github.com/serverfs/serverfs/search"
)

// heavyTools are the tools that always pass the admission gate (inspect_repo,
// list_directory, read_text_file, read_text_files and fetch do for some
// arguments); every other served tool is
// cheap. Changing a tool's class is a decision: change this list with it.
var heavyTools = []string{"commit_repo_changes", "create_workspace", "find_files", "read_repo_history", "search_text", "search", "submit_workspace"}

// TestEveryToolClassified enumerates the tools every configuration serves
// (the whole surface: read, write, repo and bridge tools, search and
// fetch) and checks each is classified, as heavyTools and byArgs say.
func TestEveryToolClassified(t *testing.T) {
	e := newRWEnv(t)
	wholeSurface(t, e)
	cs := e.client(t, e.serveHTTP(t))
	var served []string
	for _, tool := range listTools(t, cs) {
		served = append(served, tool.Name)
	}
	if !slices.Contains(served, "push_repo") || !slices.Contains(served, "write_text_file") || !slices.Contains(served, "commit_repo_changes") {
		t.Fatalf("not the whole surface: %v", served)
	}
	sort.Strings(served)
	toolCosts := toolCostsOf(e.deps)
	var classified []string
	for name := range toolCosts {
		classified = append(classified, name)
	}
	sort.Strings(classified)
	if !slices.Equal(served, classified) {
		t.Errorf("served tools %v, classified %v", served, classified)
	}
	d := e.deps
	for _, name := range served {
		c := toolCosts[name]
		if c == nil {
			continue
		}
		var isHeavy bool
		switch name { // arguments that make the by-args tools cheap
		case "inspect_repo":
			isHeavy = c(d, inspectRepoIn{Workdir: "wd", View: "actions"})
		case "list_directory":
			isHeavy = c(d, listDirectoryIn{Workdir: "wd"})
		case "read_text_file":
			isHeavy = c(d, readTextFileIn{Workdir: "wd", Path: "README.md"})
		case "read_text_files":
			isHeavy = c(d, readTextFilesIn{Workdir: "wd", Paths: []string{"README.md", "sub/a.txt"}})
		case "fetch":
			isHeavy = c(d, fetchIn{ID: "wd:/README.md#L1"})
		case "stat_file":
			isHeavy = c(d, statFileIn{Workdir: "wd", Path: "README.md"})
		default:
			isHeavy = c(d, nil)
		}
		if want := slices.Contains(heavyTools, name); isHeavy != want {
			t.Errorf("%s: heavy %v, want %v", name, isHeavy, want)
		}
	}
	for name, in := range map[string]any{
		"inspect_repo":    inspectRepoIn{Workdir: "wd", View: "status"},
		"read_text_file":  readTextFileIn{Workdir: "wd", Path: "logs/app.log.1.gz"},
		"read_text_files": readTextFilesIn{Workdir: "wd", Paths: []string{"README.md", "logs/app.log.1.gz"}},
		"fetch":           fetchIn{ID: "wd:/logs/app.log.1.gz#L2"},
		// Into an archive: a tar's headers are its whole stream.
		"stat_file":      statFileIn{Workdir: "wd", Path: "logs/2025-11.tar.gz/app.log"},
		"list_directory": listDirectoryIn{Workdir: "wd", Path: "release.zip"},
	} {
		if !toolCosts[name](d, in) {
			t.Errorf("%s(%+v) is cheap, want heavy", name, in)
		}
	}
	// A tool without a cost cannot be registered.
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "not classified") {
			t.Errorf("registering an unclassified tool: %v", r)
		}
	}()
	register(listWorkdirs)(sdk.NewServer(&sdk.Implementation{Name: "x"}, nil), d, &sdk.Tool{Name: "no_such_tool", InputSchema: inputSchema[listWorkdirsIn](nil)}, nil)
}

// TestHugeDirectoryListingIsHeavy: a directory of some thousands of
// entries is listed through the gate, a small one is not.
func TestHugeDirectoryListingIsHeavy(t *testing.T) {
	e := newEnv(t)
	writeFile(t, filepath.Join(e.root, "huge", "first"), nil)
	for i := range 20_000 {
		if err := os.Link(filepath.Join(e.root, "huge", "first"), filepath.Join(e.root, "huge", fmt.Sprintf("entry-with-a-longish-name-%06d", i))); err != nil {
			t.Fatal(err)
		}
	}
	cost := toolCostsOf(e.deps)["list_directory"]
	if !cost(e.deps, listDirectoryIn{Workdir: "wd", Path: "huge"}) {
		size, _ := e.deps.FS.DirSize("wd", "huge")
		t.Errorf("listing 20,000 entries (directory size %d) is cheap", size)
	}
	for _, p := range []string{"", "sub", "nonexistent", "README.md", "../outside"} {
		if cost(e.deps, listDirectoryIn{Workdir: "wd", Path: p}) {
			t.Errorf("listing %q is heavy", p)
		}
	}
}

// blockHeavy makes every heavy call block, once admitted, until release
// is closed; entered receives one value per call admitted.
func blockHeavy(e *testEnv) (entered chan string, release chan struct{}) {
	entered, release = make(chan string, 1000), make(chan struct{})
	e.deps.testHook = func(_ context.Context, tool string) {
		if slices.Contains(heavyTools, tool) {
			entered <- tool
			<-release
		}
	}
	return entered, release
}

// TestAdmissionBoundsHeavyCalls: 50 concurrent heavy calls over real HTTP
// on a gate of 2 slots and a queue of 3: 2 run, 3 wait and run once the
// first end, 45 are refused at once with SERVER_BUSY; meanwhile stat_file
// answers: it never waits at the gate.
func TestAdmissionBoundsHeavyCalls(t *testing.T) {
	e := newEnv(t)
	e.deps.Admit = NewAdmission(AdmissionConfig{MaxHeavy: 2, Queue: 3, Wait: time.Minute})
	entered, release := blockHeavy(e)
	url := e.serveHTTP(t)
	const n = 50
	type outcome struct {
		busy bool
		err  error
	}
	done := make(chan outcome, n)
	for i := range n {
		go func() {
			cs, err := connectHTTP(t.Context(), url)
			if err != nil {
				done <- outcome{err: err}
				return
			}
			defer cs.Close()
			args := map[string]any{"workdir": "wd", "query": "demo"}
			tool := "search_text"
			if i%2 == 1 {
				tool, args = "find_files", map[string]any{"workdir": "wd", "pattern": "*.md"}
			}
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				done <- outcome{err: err}
				return
			}
			text := resultText(res)
			switch {
			case res.IsError && strings.HasPrefix(text, "SERVER_BUSY: ") && strings.Contains(text, "retry"):
				done <- outcome{busy: true}
			case res.IsError:
				done <- outcome{err: fmt.Errorf("%s: %s", tool, text)}
			default:
				done <- outcome{}
			}
		}()
	}
	for range 2 {
		<-entered
	}
	// With both slots held and the queue full, the other 45 are refused
	// without waiting.
	var busy, ok int
	for range n - 5 {
		o := <-done
		if o.err != nil {
			t.Fatal(o.err)
		}
		if !o.busy {
			t.Fatal("a heavy call succeeded while both slots were held")
		}
		busy++
	}
	select {
	case tool := <-entered:
		t.Fatalf("a third heavy call (%s) ran while two held the slots", tool)
	default:
	}
	if s := e.deps.Admit.Stats(); s.Running != 2 || s.Refused != n-5 {
		t.Errorf("stats %+v, want 2 running, %d refused", s, n-5)
	}

	// Cheap calls do not wait behind the heavy ones.
	cs := e.client(t, url)
	var lat []time.Duration
	for range 200 {
		start := time.Now()
		res := e.call(t, cs, "stat_file", map[string]any{"workdir": "wd", "path": "README.md"})
		lat = append(lat, time.Since(start))
		structured[sfs.FileInfo](t, res)
	}
	// They answered at all while the heavy calls are blocked for good:
	// they do not wait at the gate. The latency bound of the issue (p99 <
	// 100 ms) is checked against the real binary, with the heavy calls
	// working (TestHeavyCallsWithinBudget); here, in one race-instrumented
	// process on a shared machine, only a generous bound.
	slices.Sort(lat)
	if p99 := lat[len(lat)*99/100]; p99 > time.Second {
		t.Errorf("stat_file p99 %v while heavy calls hold every slot", p99)
	}
	structured[listOut](t, e.call(t, cs, "list_directory", map[string]any{"workdir": "wd"}))

	close(release)
	for range 5 {
		o := <-done
		if o.err != nil || o.busy {
			t.Errorf("an admitted or queued call: %+v", o)
		}
		ok++
	}
	if s := e.deps.Admit.Stats(); s.Peak != 2 || s.Running != 0 {
		t.Errorf("stats %+v, want peak 2, none running", s)
	}
	t.Logf("%d refused, %d ran; stat_file p50 %v p99 %v", busy, ok, lat[len(lat)/2], lat[len(lat)*99/100])
}

// TestAdmissionWaitDeadline: a queued call waits at most Wait, and a
// request that ends while waiting frees its place.
func TestAdmissionWaitDeadline(t *testing.T) {
	a := NewAdmission(AdmissionConfig{MaxHeavy: 1, Queue: 1, Wait: 50 * time.Millisecond})
	release, err := a.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := a.Acquire(t.Context()); errs.CodeOf(err) != errs.ServerBusy || !strings.Contains(err.Error(), "none freed within 50ms") {
		t.Fatalf("queued call: %v", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond || d > 5*time.Second {
		t.Errorf("refused after %v, want the wait of 50 ms", d)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := a.Acquire(ctx); errs.CodeOf(err) != errs.Canceled {
		t.Errorf("cancelled wait: %v", err)
	}
	release()
	release() // a second release is harmless
	r2, err := a.Acquire(t.Context())
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	r2()
}

// rawSession opens a session with a raw initialize at protocolVersion and
// returns its ID.
func rawSession(t testing.TB, url, protocolVersion string) string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + protocolVersion + `","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	resp, err := rawRPC(t.Context(), url, "", protocolVersion, body)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get(sessionHeader)
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, sid)
	}
	resp, err = rawRPC(t.Context(), url, sid, protocolVersion, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return sid
}

// rawRPC posts body, with the session and protocol headers when set.
func rawRPC(ctx context.Context, url, sid, protocolVersion, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set(sessionHeader, sid)
	}
	if protocolVersion != "" {
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	}
	return http.DefaultClient.Do(req)
}

// TestBatchRefused: a JSON-RPC batch is refused whole, whatever protocol
// version the header claims (go-sdk v1.8.0 accepts one on a 2025-06-18
// session when the header says 2025-03-26): 5,000 search_text calls in one
// POST run none.
func TestBatchRefused(t *testing.T) {
	e := newEnv(t)
	url := e.serveHTTP(t)
	sid := rawSession(t, url, "2025-06-18")
	var calls []string
	for i := range 5000 {
		calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_text","arguments":{"workdir":"wd","query":"demo"}}}`, i+2))
	}
	for _, c := range []struct{ name, sid, version, body string }{
		{"5,000 calls, header 2025-03-26", sid, "2025-03-26", "[" + strings.Join(calls, ",") + "]"},
		{"leading white space", sid, "2025-03-26", " \r\n\t[" + calls[0] + "]"},
		{"initialize in a batch", "", "2025-03-26", `[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}]`},
	} {
		resp, err := rawRPC(t.Context(), url, c.sid, c.version, c.body)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var msg struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(b, &msg) != nil || msg.Error.Code != -32600 || !strings.Contains(msg.Error.Message, "batches are not supported") {
			t.Errorf("%s: %s %s", c.name, resp.Status, b)
		}
	}
	// A single request with leading white space still works.
	resp, err := rawRPC(t.Context(), url, sid, "2025-06-18", "\n  "+calls[0])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "README.md") {
		t.Errorf("single call after white space: %s %s", resp.Status, b)
	}
	var ran int
	for _, m := range logLines(t, e.log.String()) {
		if m["event"] == "tool_call" {
			ran++
		}
	}
	if ran != 1 {
		t.Errorf("%d tool calls ran, want only the single one", ran)
	}
}

// TestSessionCap: past SERVERFS_MAX_SESSIONS a new session evicts the one
// idle the longest; when every session has a request in flight (here an
// open GET stream), a new one is refused with SERVER_BUSY.
func TestSessionCap(t *testing.T) {
	e := newEnv(t)
	cfg, _ := loadHTTPConfig([]string{"SERVERFS_MAX_SESSIONS=3"})
	ts := httptest.NewServer(newHandler(e.deps, cfg, testVer))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	url := ts.URL + transport.Path
	statusOf := func(sid string) int {
		resp, err := rawRPC(t.Context(), url, sid, "2025-06-18", `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	s1 := rawSession(t, url, "2025-06-18")
	s2 := rawSession(t, url, "2025-06-18")
	s3 := rawSession(t, url, "2025-06-18")
	statusOf(s1) // s2 is now the longest idle
	s4 := rawSession(t, url, "2025-06-18")
	if got := statusOf(s2); got != http.StatusNotFound {
		t.Errorf("the longest-idle session after eviction: %d, want 404", got)
	}
	for _, s := range []string{s1, s3, s4} {
		if got := statusOf(s); got != http.StatusOK {
			t.Errorf("session kept: %d", got)
		}
	}
	// Hold a GET stream on each: none is idle.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	for _, s := range []string{s1, s3, s4} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set(sessionHeader, s)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET stream: %v %v", resp, err)
		}
		defer resp.Body.Close()
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	resp, err := rawRPC(t.Context(), url, "", "2025-06-18", body)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "SERVER_BUSY") || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a session past the cap with none idle: %s %s", resp.Status, b)
	}
	cancel()
	if log := e.log.String(); !strings.Contains(log, `"event":"session_evicted"`) || !strings.Contains(log, `"reason":"session cap"`) {
		t.Errorf("eviction and refusal not logged:\n%s", log)
	}
}

// TestSlowReadersDropped: 300 clients that send a call with a ~65 KB answer
// and never read it lose their connections after the write timeout (1 s
// here); without it they hold them as long as they like.
func TestSlowReadersDropped(t *testing.T) {
	e := newEnv(t)
	line := strings.Repeat("x", 1000) + "\n"
	writeFile(t, filepath.Join(e.root, "large.txt"), []byte(strings.Repeat(line, 30)))
	cfg, probs := loadHTTPConfig([]string{"SERVERFS_WRITE_TIMEOUT_SECONDS=1"})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	h := newHandler(e.deps, cfg, testVer)
	ts := httptest.NewUnstartedServer(h)
	ts.Config = transport.NewHTTPServer("", h)
	var open atomic.Int64
	allClosed := make(chan struct{})
	var started atomic.Bool
	var once sync.Once
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			if open.Add(-1) == 0 && started.Load() {
				once.Do(func() { close(allClosed) })
			}
		}
	}
	// On loopback the kernel takes ~3-4 MB of a connection's answer before
	// a write blocks (send-buffer autotuning, even with the reader's window
	// closed); a small send buffer makes a ~65 KB answer block as it does
	// past a slow network path. The server's code is unchanged.
	ts.Listener = sndbufListener{ts.Listener}
	ts.Start()
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	url := ts.URL + transport.Path
	sid := rawSession(t, url, "2025-06-18")
	http.DefaultClient.CloseIdleConnections()

	const n = 300
	request := func(i int) string {
		// Distinct ids: go-sdk refuses an id already in flight.
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_text_file","arguments":{"workdir":"wd","path":"large.txt"}}}`, 100+i)
		return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%s: %s\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s", transport.Path, sessionHeader, sid, len(body), body)
	}
	dialer := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		// A small receive window, as a client that reads nothing.
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	// Connect all, then send all: once requests run, the server's
	// handlers would starve a dialing loop of CPU.
	for range n {
		c, err := dialer.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		if _, err := io.WriteString(c, request(i)); err != nil {
			t.Fatal(err)
		}
	}
	started.Store(true)
	if open.Load() == 0 {
		t.Fatal("no connection open")
	}
	start := time.Now()
	select {
	case <-allClosed:
		t.Logf("all %d connections closed %v after the last request", n, time.Since(start).Round(time.Millisecond))
	case <-time.After(30 * time.Second):
		t.Fatalf("%d of %d non-reading connections still open 30 s after their requests (write timeout 1 s)", open.Load(), n)
	}
}

// sndbufListener gives accepted connections a 8 KiB send buffer (the
// kernel doubles it).
type sndbufListener struct{ net.Listener }

func (l sndbufListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(8 << 10)
	}
	return c, err
}

// TestAdmissionConfig: defaults from the CPU count and the budget, explicit
// values, and one problem line per bad value; the fs loader knows the
// variables (no "unknown variable").
func TestAdmissionConfig(t *testing.T) {
	cfg, probs := loadHTTPConfig(nil)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if a := cfg.Admission; a.MaxHeavy != DefaultMaxHeavy(a.MemoryBudget) || a.MaxHeavy < 1 || a.Queue != DefaultHeavyQueue || a.Wait != 5*time.Second || a.MemoryBudget != 1<<30 {
		t.Errorf("defaults: %+v", a)
	}
	if g := cfg.Guard; g.MaxSessions != transport.DefaultMaxSessions || g.WriteTimeout != 30*time.Second {
		t.Errorf("guard defaults: %+v", g)
	}
	if n := DefaultMaxHeavy(64 << 20); n != 1 {
		t.Errorf("a budget below one heavy call: %d slots, want 1", n)
	}
	env := []string{"SERVERFS_MEMORY_BUDGET_MB=512", "SERVERFS_MAX_HEAVY_CALLS=3", "SERVERFS_HEAVY_QUEUE=0", "SERVERFS_HEAVY_WAIT_SECONDS=2", "SERVERFS_MAX_SESSIONS=10", "SERVERFS_WRITE_TIMEOUT_SECONDS=7"}
	cfg, probs = loadHTTPConfig(env)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	want := AdmissionConfig{MemoryBudget: 512 << 20, MaxHeavy: 3, Queue: 0, Wait: 2 * time.Second}
	if cfg.Admission != want || cfg.Guard != (transport.GuardConfig{MaxSessions: 10, WriteTimeout: 7 * time.Second}) {
		t.Errorf("explicit: %+v %+v", cfg.Admission, cfg.Guard)
	}
	if _, err := sfs.LoadConfig(env, []string{"wd=" + t.TempDir()}); err != nil {
		t.Errorf("fs.LoadConfig: %v", err)
	}
	_, probs = loadHTTPConfig([]string{"SERVERFS_MEMORY_BUDGET_MB=1", "SERVERFS_MAX_HEAVY_CALLS=0", "SERVERFS_HEAVY_QUEUE=-1", "SERVERFS_HEAVY_WAIT_SECONDS=5s", "SERVERFS_MAX_SESSIONS=/etc", "SERVERFS_WRITE_TIMEOUT_SECONDS=99999"})
	if len(probs) != 6 {
		t.Errorf("%d problems, want 6: %q", len(probs), probs)
	}
	for _, p := range probs {
		if strings.Contains(p, "/etc") {
			t.Errorf("problem echoes a path: %s", p)
		}
	}
}

// TestStdioBatchRefused: over stdio, after a 2025-03-26 initialize (where
// go-sdk accepts batches), a batch of 1,000 search_text calls is answered
// with one JSON-RPC error and runs no call; single messages still work.
func TestStdioBatchRefused(t *testing.T) {
	e := newEnv(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- transport.Stdio(inR, outW).Run(ctx, NewServer(e.deps, testVer)) }()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next := func() string {
		if !lines.Scan() {
			t.Fatalf("no answer: %v", lines.Err())
		}
		return lines.Text()
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if l := next(); !strings.Contains(l, `"protocolVersion":"2025-03-26"`) {
		t.Fatalf("initialize: %s", l)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	var calls []string
	for i := range 1000 {
		calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_text","arguments":{"workdir":"wd","query":"demo"}}}`, i+10))
	}
	send("[" + strings.Join(calls, ",\n") + "]")
	if l := next(); !strings.Contains(l, `"id":null`) || !strings.Contains(l, "-32600") || !strings.Contains(l, "batches are not supported") {
		t.Errorf("batch: %s", l)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stat_file","arguments":{"workdir":"wd","path":"README.md"}}}`)
	if l := next(); !strings.Contains(l, `"id":2`) || !strings.Contains(l, "README.md") {
		t.Errorf("after the batch: %s", l)
	}
	inW.Close()
	cancel()
	go io.Copy(io.Discard, outR)
	<-done
	var ran []any
	for _, m := range logLines(t, e.log.String()) {
		if m["event"] == "tool_call" {
			ran = append(ran, m["tool"])
		}
	}
	if len(ran) != 1 {
		t.Errorf("tool calls run: %v, want only stat_file", ran)
	}
}

// acquireAsync starts Acquire for client in a goroutine; the result arrives
// on the returned channel once admitted (or refused).
type admitted struct {
	client  string
	release func()
	err     error
}

func acquireAsync(t *testing.T, a *Admission, client string, out chan<- admitted) {
	go func() {
		r, err := a.Acquire(WithClient(t.Context(), client))
		out <- admitted{client, r, err}
	}()
}

// untilWaiting returns once n calls wait at a's gate (no timing: it polls
// the gate's own count).
func untilWaiting(a *Admission, n int64) {
	for a.Stats().Waiting != n {
		runtime.Gosched()
	}
}

// TestAdmissionFairOrder: with the one slot held by client A and two more
// of A's calls waiting, a call of client B that arrives after them is
// admitted first when A's call ends; A's run after, oldest first.
func TestAdmissionFairOrder(t *testing.T) {
	a := NewAdmission(AdmissionConfig{MaxHeavy: 1, Queue: 8, Wait: time.Hour})
	if a.reserve != 0 {
		t.Fatal("a gate without memory budget has a reserve slot")
	}
	first, err := a.Acquire(WithClient(t.Context(), "A"))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan admitted, 3)
	acquireAsync(t, a, "A", got)
	untilWaiting(a, 1)
	acquireAsync(t, a, "A", got)
	untilWaiting(a, 2)
	acquireAsync(t, a, "B", got)
	untilWaiting(a, 3)
	first()
	for _, want := range []string{"B", "A", "A"} {
		g := <-got
		if g.err != nil || g.client != want {
			t.Fatalf("admitted %s (%v), want %s", g.client, g.err, want)
		}
		if s := a.Stats(); s.Running != 1 {
			t.Fatalf("%d running on one slot", s.Running)
		}
		g.release()
	}
	if s := a.Stats(); s.Running != 0 || s.Waiting != 0 || s.Peak != 1 {
		t.Errorf("stats %+v", s)
	}
}

// TestAdmissionReserveSlot: when the budget holds one more heavy call,
// a client with nothing running is admitted beside the one that holds
// every slot, at once; a third client waits for that reserve slot and
// gets it before the holder's own waiting call.
func TestAdmissionReserveSlot(t *testing.T) {
	a := NewAdmission(AdmissionConfig{MemoryBudget: 2 * HeavyCallBytes(), MaxHeavy: 1, Queue: 8, Wait: time.Hour})
	holdA, err := a.Acquire(WithClient(t.Context(), "A"))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan admitted, 3)
	acquireAsync(t, a, "A", got)
	untilWaiting(a, 1)
	// Cancelled already: admitted only if it need not wait.
	ended, cancel := context.WithCancel(WithClient(t.Context(), "B"))
	cancel()
	b, err := a.Acquire(ended)
	if err != nil {
		t.Fatalf("B waited for the slot A holds: %v", err)
	}
	acquireAsync(t, a, "C", got)
	untilWaiting(a, 2)
	if s := a.Stats(); s.Running != 2 {
		t.Fatalf("stats %+v, want 2 running (A's and B's)", s)
	}
	b()
	if g := <-got; g.client != "C" || g.err != nil {
		t.Fatalf("the reserve slot went to %s (%v), want C", g.client, g.err)
	} else {
		g.release()
	}
	holdA()
	if g := <-got; g.client != "A" || g.err != nil {
		t.Fatalf("admitted %s (%v), want A's waiting call", g.client, g.err)
	} else {
		g.release()
	}
	if s := a.Stats(); s.Running != 0 || s.Peak != 2 {
		t.Errorf("stats %+v, want peak 2 (MaxHeavy and the reserve)", s)
	}
}

// TestAdmissionQueueShare: a full queue makes room for another client by
// refusing the newest waiting call of the client with the most waiting.
func TestAdmissionQueueShare(t *testing.T) {
	a := NewAdmission(AdmissionConfig{MaxHeavy: 1, Queue: 2, Wait: time.Hour})
	hold, err := a.Acquire(WithClient(t.Context(), "A"))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan admitted, 4)
	acquireAsync(t, a, "A", got)
	acquireAsync(t, a, "A", got)
	untilWaiting(a, 2)
	if _, err := a.Acquire(WithClient(t.Context(), "A")); errs.CodeOf(err) != errs.ServerBusy {
		t.Fatalf("A's third waiting call: %v, want SERVER_BUSY", err)
	}
	acquireAsync(t, a, "B", got)
	if g := <-got; g.client != "A" || errs.CodeOf(g.err) != errs.ServerBusy {
		t.Fatalf("%s: %v, want A's newest waiting call refused", g.client, g.err)
	}
	untilWaiting(a, 2)
	hold()
	for _, want := range []string{"B", "A"} {
		g := <-got
		if g.err != nil || g.client != want {
			t.Fatalf("admitted %s (%v), want %s", g.client, g.err, want)
		}
		g.release()
	}
}

// namedClient connects to url as an MCP client named name (the stateless
// lane tells clients of one host apart by that name) asking for protocol
// (empty: go-sdk's newest, the stateless lane).
func namedClient(t *testing.T, url, name, protocol string) *sdk.ClientSession {
	t.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: name, Version: "0"}, nil).
		Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: protocol})
	if err == nil && protocol != "" && cs.InitializeResult().ProtocolVersion != protocol {
		err = fmt.Errorf("negotiated %s, want %s", cs.InitializeResult().ProtocolVersion, protocol)
	}
	if err == nil {
		err = listForHeaders(t.Context(), cs)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestAdmissionFairOverHTTP: two MCP clients over real HTTP on one heavy
// slot, on each lane: two sessions (2025-11-25), and on the stateless lane
// two client names of one host. A's search holds the slot (held at a
// gate) and two more of A's wait; B's find_files, queued after them, runs
// next; all of A's still run, and nothing is refused. With the reserve
// slot (and no queue, so a call that had to wait would be refused), B's
// find_files answers while A's search still holds the only slot.
func TestAdmissionFairOverHTTP(t *testing.T) {
	for _, tc := range []struct {
		protocol string
		reserve  bool
	}{{"2025-11-25", false}, {"2025-11-25", true}, {"", false}, {"", true}} {
		t.Run(fmt.Sprintf("protocol=%s,reserve=%v", cmp.Or(tc.protocol, statelessVersion), tc.reserve), func(t *testing.T) { testAdmissionFair(t, tc.protocol, tc.reserve) })
	}
}

func testAdmissionFair(t *testing.T, protocol string, reserve bool) {
	e := newEnv(t)
	cfg := AdmissionConfig{MaxHeavy: 1, Queue: 8, Wait: time.Hour}
	if reserve {
		// No queue: a call that had to wait is refused at once.
		cfg.MemoryBudget, cfg.Queue = 2*HeavyCallBytes(), 0
	}
	e.deps.Admit = NewAdmission(cfg)
	entered, searchGo, stop := make(chan string, 8), make(chan struct{}), make(chan struct{})
	e.deps.testHook = func(_ context.Context, tool string) {
		entered <- tool
		if tool == "search_text" {
			select {
			case <-searchGo:
			case <-stop:
			}
		}
	}
	url := e.serveHTTP(t)
	t.Cleanup(func() { close(stop) }) // before the server closes: a failed test leaves no search blocked
	csA, csB := namedClient(t, url, "client-a", protocol), namedClient(t, url, "client-b", protocol)
	results := make(chan string, 8)
	call := func(cs *sdk.ClientSession, tool string, args map[string]any) {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
		switch {
		case err != nil:
			results <- tool + ": " + err.Error()
		case res.IsError:
			results <- tool + ": " + resultText(res)
		default:
			results <- ""
		}
	}
	search := map[string]any{"workdir": "wd", "query": "demo"}
	go call(csA, "search_text", search)
	if tool := <-entered; tool != "search_text" {
		t.Fatalf("entered %s", tool)
	}
	if reserve {
		call(csB, "find_files", map[string]any{"workdir": "wd", "pattern": "*.md"})
		if r := <-results; r != "" || <-entered != "find_files" {
			t.Fatalf("find_files beside the held slot: %q", r)
		}
		close(searchGo)
		if r := <-results; r != "" {
			t.Fatal(r)
		}
		return
	}
	go call(csA, "search_text", search)
	untilWaiting(e.deps.Admit, 1)
	go call(csA, "search_text", search)
	untilWaiting(e.deps.Admit, 2)
	go call(csB, "find_files", map[string]any{"workdir": "wd", "pattern": "*.md"})
	untilWaiting(e.deps.Admit, 3)
	var order []string
	for range 3 {
		searchGo <- struct{}{}
		order = append(order, <-entered)
	}
	if want := []string{"find_files", "search_text", "search_text"}; !slices.Equal(order, want) {
		t.Errorf("admitted %v after A's first search, want %v", order, want)
	}
	for range 4 {
		if r := <-results; r != "" {
			t.Errorf("a call failed: %s", r)
		}
	}
	if s := e.deps.Admit.Stats(); s.Refused != 0 || s.Running != 0 {
		t.Errorf("stats %+v, want none refused", s)
	}
}

// worstRegex is the heaviest regular expression search_text accepts that
// has no required literal (so no prefilter skips a line): 999 of the
// 1,000 instructions search.MaxRegexInsts allows, ~16 µs a byte of
// "abc def " text on a loaded 2-CPU machine, the costliest per byte of the
// families tried (bench/mcp/INVESTIGATION.md, fairness). One more
// repetition is refused.
const worstRegex = `(?:\w+\s*){249}[^\w\s]`

// TestHostileRegexBesideFindFiles: client A's search_text of worstRegex
// over four 4 MiB files of 256 KiB lines holds the only heavy slot (held
// at the gate until B has its answer); client B's find_files of 4 files
// answers meanwhile, not SERVER_BUSY (the reserve slot); then A's scan
// runs into its injected 1 s timeout mid-line and ends with
// SEARCH_TIMEOUT, the slot freed for B's next call. On both lanes: two
// sessions, and two client names on the stateless lane. How far past its
// deadline the scan stops is logged, not asserted (machine speed); the
// check interval is search's TestRegexLongLineChecksStop and
// TestRegexCheckScalesWithProgram, the figures bench/fair's.
func TestHostileRegexBesideFindFiles(t *testing.T) {
	parent := t.TempDir()
	line := strings.Repeat("abc def ", 256<<10/8)
	line = line[:len(line)-1] + "\n"
	for i := range 4 {
		writeFile(t, filepath.Join(parent, "big", fmt.Sprintf("f%d.txt", i)), []byte(strings.Repeat(line, 16)))
		writeFile(t, filepath.Join(parent, "small", fmt.Sprintf("s%d.txt", i)), []byte("small\n"))
	}
	cfg, err := sfs.LoadConfig([]string{"SERVERFS_SEARCH_TIMEOUT_SECONDS=1"}, []string{"big=" + filepath.Join(parent, "big"), "small=" + filepath.Join(parent, "small")})
	if err != nil {
		t.Fatal(err)
	}
	f, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	for _, protocol := range []string{"2025-11-25", ""} {
		t.Run("protocol="+cmp.Or(protocol, statelessVersion), func(t *testing.T) {
			d := &Deps{FS: f, Search: search.New(f), Log: &Logger{Logger: slog.New(slog.DiscardHandler)},
				Admit: NewAdmission(AdmissionConfig{MemoryBudget: 2 * HeavyCallBytes(), MaxHeavy: 1, Queue: 8, Wait: time.Hour})}
			entered, bAnswered := make(chan struct{}), make(chan struct{})
			var armed atomic.Bool
			d.testHook = func(_ context.Context, tool string) {
				if tool == "search_text" && armed.Load() {
					close(entered)
					<-bAnswered
				}
			}
			httpCfg, _ := loadHTTPConfig(nil)
			ts := httptest.NewServer(newHandler(d, httpCfg, testVer))
			t.Cleanup(ts.Close)
			csA, csB := namedClient(t, ts.URL+transport.Path, "client-a", protocol), namedClient(t, ts.URL+transport.Path, "client-b", protocol)
			find := func() {
				t.Helper()
				res, err := csB.CallTool(t.Context(), &sdk.CallToolParams{Name: "find_files", Arguments: map[string]any{"workdir": "small", "pattern": "*"}})
				if err != nil || res.IsError || !strings.Contains(resultText(res), "s3.txt") {
					t.Fatalf("B's find_files: %v %v", err, res)
				}
			}
			type answer struct {
				res *sdk.CallToolResult
				err error
			}
			// The worst accepted: one more repetition is refused.
			res, err := csB.CallTool(t.Context(), &sdk.CallToolParams{Name: "search_text", Arguments: map[string]any{"workdir": "small", "query": strings.Replace(worstRegex, "249", "250", 1), "regex": true}})
			if err != nil || !strings.HasPrefix(resultText(res), "INVALID_PATTERN: ") {
				t.Fatalf("{250}: %v %v, want INVALID_PATTERN", err, res)
			}
			armed.Store(true)
			aDone := make(chan answer, 1)
			go func() {
				res, err := csA.CallTool(t.Context(), &sdk.CallToolParams{Name: "search_text", Arguments: map[string]any{"workdir": "big", "query": worstRegex, "regex": true}})
				aDone <- answer{res, err}
			}()
			<-entered
			find() // A holds the only slot
			released := time.Now()
			close(bAnswered)
			a := <-aDone
			took := time.Since(released)
			if a.err != nil || !a.res.IsError || !strings.HasPrefix(resultText(a.res), "SEARCH_TIMEOUT: ") {
				t.Fatalf("A's search: %v %v, want SEARCH_TIMEOUT", a.err, a.res)
			}
			t.Logf("A's search ended %s after it was released (timeout 1s)", took)
			find()
			if s := d.Admit.Stats(); s.Running != 0 || s.Refused != 0 || s.Peak != 2 {
				t.Errorf("gate %+v, want none running or refused, peak 2 (the slot and the reserve)", s)
			}
		})
	}
}

// toolCostsOf is every served tool's cost, by name, from the inventory
// of d's configuration.
func toolCostsOf(d *Deps) map[string]costFn {
	m := map[string]costFn{}
	for _, t := range inventory(d.FS.Limits(), surfaceFor(d)) {
		m[t.def.Name] = t.cost
	}
	return m
}
