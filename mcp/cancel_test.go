package mcp

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/bridge"
	"github.com/serverfs/serverfs/mcp/transport"
)

// Cancellation and progress (transport/calls.go, progress.go) over real
// HTTP, on a search that runs until its client gives up.

// slowTree makes e's "slow" directory (16 .gz logs: a 1 MB gzip member
// repeated 40 times) and makes every search_text of e run until its
// context ends; the search, started then, stops at once. Searching the
// logs themselves took seconds once, and now well under one on a fast
// machine: a test of cancellation cannot rely on either.
func slowTree(t *testing.T, e *testEnv) {
	t.Helper()
	e.deps.testHook = func(ctx context.Context, tool string) {
		if tool == "search_text" {
			<-ctx.Done()
		}
	}
	var line bytes.Buffer
	for line.Len() < 1<<20 {
		fmt.Fprintf(&line, "%08d the quick brown fox jumps over the lazy dog again and again\n", line.Len())
	}
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestSpeed)
	zw.Write(line.Bytes())
	zw.Close()
	file := bytes.Repeat(member.Bytes(), 40)
	for i := range 16 {
		writeFile(t, filepath.Join(e.root, "slow", fmt.Sprintf("app-%02d.log.gz", i)), file)
	}
}

// slowSearch is a tools/call of a search over slowTree with a progress
// token.
func slowSearch(id int, modern bool) string {
	meta := `"progressToken":"tok-` + fmt.Sprint(id) + `"`
	if modern {
		meta += `,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_text","arguments":{"workdir":"wd","path":"slow","query":"\\d{9}x","regex":true},"_meta":{%s}}}`, id, meta)
}

var modernCall = []string{protocolVersionHeader, "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "search_text", "Mcp-Param-Workdir", "wd"}

// streamPost POSTs body and returns the messages of its event stream as
// they arrive (the channel closes with the stream).
func streamPost(t *testing.T, ctx context.Context, url, body string, headers ...string) <-chan rpcMsg {
	t.Helper()
	req := mcpRequest(t, ctx, url, body, headers...)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("POST: status %d", resp.StatusCode)
	}
	ch := make(chan rpcMsg, 64)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || strings.TrimSpace(data) == "" {
				continue
			}
			var m rpcMsg
			if json.Unmarshal([]byte(data), &m) == nil {
				ch <- m
			}
		}
	}()
	return ch
}

// next waits (at most within) for the stream's next message; false when it
// closed.
func next(t *testing.T, ch <-chan rpcMsg, within time.Duration) (rpcMsg, bool) {
	t.Helper()
	select {
	case m, ok := <-ch:
		return m, ok
	case <-time.After(within):
		t.Fatalf("no message within %s", within)
		return rpcMsg{}, false
	}
}

// waitProgress reads the stream up to its first progress notification.
func waitProgress(t *testing.T, ch <-chan rpcMsg) {
	t.Helper()
	for {
		m, ok := next(t, ch, 20*time.Second)
		if !ok {
			t.Fatal("the stream ended before any progress notification (the search ran too fast?)")
		}
		if m.Method == "notifications/progress" {
			return
		}
		if m.ID != nil {
			t.Fatalf("answered before any progress: %+v", m)
		}
	}
}

// waitCallLogged polls the server log for the tool_call line of tool and
// returns it (the call ended).
func waitCallLogged(t *testing.T, e *testEnv, tool string, mark int) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, l := range logLines(t, e.log.String()[mark:]) {
			if l["event"] == "tool_call" && l["tool"] == tool {
				return l
			}
		}
		time.Sleep(2 * time.Millisecond) // polling the log, bounded by the deadline
	}
	t.Fatalf("%s did not end within 10 s of its cancellation; log:\n%s", tool, e.log.String())
	return nil
}

// waitGoroutines waits until at most base goroutines run, or fails with
// their stacks.
func waitGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			var b strings.Builder
			pprof.Lookup("goroutine").WriteTo(&b, 1)
			t.Fatalf("%d goroutines, %d before the call:\n%s", runtime.NumGoroutine(), base, b.String())
		}
		time.Sleep(5 * time.Millisecond) // polling, bounded by the deadline
	}
}

// openSession initializes a session (2025-06-18) and returns its headers.
func openSession(t *testing.T, url string) []string {
	t.Helper()
	_, h, _ := rpcPost(t, url, initBody)
	session := []string{sessionHeader, h.Get(sessionHeader), protocolVersionHeader, "2025-06-18"}
	if status, _, _ := rpcPost(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session...); status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", status)
	}
	return session
}

// TestCancelOnDisconnect: a search whose HTTP request goes away (the
// client disconnects, or the tunnel's response_timeout) stops at once on
// both lanes, and every goroutine it started ends.
func TestCancelOnDisconnect(t *testing.T) {
	e := newEnv(t)
	slowTree(t, e)
	url := e.serveHTTP(t)
	for _, lane := range []string{"session", "stateless"} {
		t.Run(lane, func(t *testing.T) {
			mark := len(e.log.String())
			headers := modernCall
			if lane == "session" {
				headers = openSession(t, url)
			}
			http.DefaultClient.CloseIdleConnections()
			base := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(t.Context())
			ch := streamPost(t, ctx, url, slowSearch(7, lane == "stateless"), headers...)
			waitProgress(t, ch)
			cancel()
			cancelled := time.Now()
			l := waitCallLogged(t, e, "search_text", mark)
			took := time.Since(cancelled)
			if l["error_code"] != "CANCELED" {
				t.Errorf("call log %v: want error_code CANCELED", l)
			}
			t.Logf("%s lane: the search ended %s after its request went away (it ran %v ms)", lane, took.Round(time.Millisecond), l["duration_ms"])
			// Without -race on an idle machine this is tens of
			// milliseconds (docs/protocol.md); the bound leaves room for
			// -race on two busy cores, far below the search's own end
			// (SEARCH_TIMEOUT, 15 s).
			if took > 3*time.Second {
				t.Errorf("the search ended %s after its request went away (want at once)", took)
			}
			for range ch {
			}
			waitGoroutines(t, base)
		})
	}
}

// TestCancelNotification: after notifications/cancelled (session lane:
// the notification reaches the call's session) the search stops, and its
// stream ends without an answer to the cancelled request.
func TestCancelNotification(t *testing.T) {
	e := newEnv(t)
	slowTree(t, e)
	url := e.serveHTTP(t)
	session := openSession(t, url)
	http.DefaultClient.CloseIdleConnections()
	base := runtime.NumGoroutine()
	mark := len(e.log.String())
	ch := streamPost(t, t.Context(), url, slowSearch(9, false), session...)
	waitProgress(t, ch)
	if status, _, _ := rpcPost(t, url, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"test"}}`, session...); status != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: %d", status)
	}
	cancelled := time.Now()
	for {
		m, ok := next(t, ch, 10*time.Second)
		if !ok {
			break
		}
		if m.ID != nil {
			t.Errorf("an answer after notifications/cancelled: %+v (result %s)", m, m.Result)
		}
	}
	l := waitCallLogged(t, e, "search_text", mark)
	t.Logf("the search ended within %s of notifications/cancelled (it ran %v ms)", time.Since(cancelled).Round(time.Millisecond), l["duration_ms"])
	if l["error_code"] != "CANCELED" {
		t.Errorf("call log %v: want error_code CANCELED", l)
	}
	http.DefaultClient.CloseIdleConnections()
	waitGoroutines(t, base)
	// The session serves on.
	if status, _, msgs := rpcPost(t, url, `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"stat_file","arguments":{"workdir":"wd","path":"sub/a.txt"}}}`, session...); status != http.StatusOK || len(msgs) != 1 || msgs[0].Error != nil {
		t.Fatalf("stat_file after the cancellation: %d %+v", status, msgs)
	}
}

// TestProgress: with a progressToken a long call sends notifications/progress
// with growing progress at most twice a second; a quick one sends none, and
// without a token there are none.
func TestProgress(t *testing.T) {
	e := newEnv(t)
	slowTree(t, e)
	// Every search_text of this test runs until the test ends, however fast
	// the machine: a search that finished early sent no progress (a real
	// search over slowTree took under 1.5 s without -race on an idle machine).
	gate := make(chan struct{})
	e.deps.testHook = func(_ context.Context, tool string) {
		if tool == "search_text" {
			<-gate
		}
	}
	url := e.serveHTTP(t)
	// Before the workdirs close: release the four searches and wait for
	// their call lines (their requests are gone; they end at once).
	released := false
	release := func() {
		if released {
			return
		}
		released = true
		close(gate)
		deadline := time.Now().Add(time.Minute)
		for {
			n := 0
			for _, l := range logLines(t, e.log.String()) {
				if l["event"] == "tool_call" && l["tool"] == "search_text" {
					n++
				}
			}
			if n >= 4 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of the 4 released searches ended within a minute", n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	defer release()
	for _, lane := range []string{"session", "stateless"} {
		t.Run(lane, func(t *testing.T) {
			headers := modernCall
			if lane == "session" {
				headers = openSession(t, url)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			start := time.Now()
			ch := streamPost(t, ctx, url, slowSearch(11, lane == "stateless"), headers...)
			var last float64
			for n := 0; n < 3; {
				m, ok := next(t, ch, 20*time.Second)
				if !ok {
					t.Fatal("the stream ended before three progress notifications")
				}
				if m.Method != "notifications/progress" {
					continue
				}
				var p struct {
					ProgressToken string  `json:"progressToken"`
					Progress      float64 `json:"progress"`
					Message       string  `json:"message"`
				}
				if err := json.Unmarshal(m.Params, &p); err != nil || p.ProgressToken != "tok-11" || p.Progress <= last || !strings.HasPrefix(p.Message, "search_text running for ") {
					t.Fatalf("progress %s (%v), previous progress %v", m.Params, err, last)
				}
				last = p.Progress
				n++
			}
			if el := time.Since(start); el < 3*progressInterval*9/10 {
				t.Errorf("three progress notifications within %s: more than %v apart expected", el, progressInterval)
			}
			cancel()
			for range ch {
			}
		})
	}

	// A quick call with a token: its answer, no progress.
	session := openSession(t, url)
	status, _, msgs := rpcPost(t, url, `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"stat_file","arguments":{"workdir":"wd","path":"sub/a.txt"},"_meta":{"progressToken":"quick"}}}`, session...)
	if status != http.StatusOK || len(msgs) != 1 || msgs[0].ID == nil {
		t.Errorf("quick call with a progress token: %d %+v", status, msgs)
	}
	// go-sdk's client: notifications only for a call with a token.
	var got atomic.Int32
	c := sdk.NewClient(&sdk.Implementation{Name: "serverfs-test", Version: "0"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) { got.Add(1) },
	})
	cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	args := map[string]any{"workdir": "wd", "path": "slow", "query": `\d{9}x`, "regex": true}
	for _, withToken := range []bool{false, true} {
		got.Store(0)
		params := &sdk.CallToolParams{Name: "search_text", Arguments: args}
		if withToken {
			params.SetProgressToken("sdk")
		}
		ctx, cancel := context.WithTimeout(t.Context(), 3*progressInterval)
		_, err := cs.CallTool(ctx, params)
		cancel()
		if err == nil {
			t.Fatal("the slow search ended within 1.5 s")
		}
		if n := got.Load(); (n > 0) != withToken {
			t.Errorf("progress token %v: %d progress notifications", withToken, n)
		}
	}
}

// TestCancelBridgeAction: a named action (cat of a FIFO nobody writes, so
// it runs until killed) whose HTTP request goes away is killed in the host
// bridge: the FIFO loses its reader.
func TestCancelBridgeAction(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	e := newRWEnv(t)
	gitInitBase(t, e.root)
	// In the workdir: the action's sandbox lets it read nothing else.
	fifo := filepath.Join(e.root, "gate")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	withBridge(t, e, map[string]bridge.Action{"wait": {Argv: []string{"cat", fifo}, Argument: bridge.ArgumentNone}})
	url := e.serveHTTP(t)
	session := openSession(t, url)
	http.DefaultClient.CloseIdleConnections()
	base := runtime.NumGoroutine()
	mark := len(e.log.String())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req := mcpRequest(t, ctx, url, `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"run_repo_action","arguments":{"workdir":"wd","action":"wait"}}}`, session...)
	posted := make(chan struct{})
	go func() {
		defer close(posted)
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	// Opening the FIFO for writing returns once the action has it open.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cancel()
	cancelled := time.Now()
	<-posted
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := w.Write([]byte("x\n")); err != nil {
			break // EPIPE: cat is gone
		}
		if time.Now().After(deadline) {
			t.Fatal("the action still reads its FIFO 10 s after its request went away")
		}
		time.Sleep(2 * time.Millisecond) // polling the FIFO, bounded by the deadline
	}
	t.Logf("the action was killed %s after its request went away", time.Since(cancelled).Round(time.Millisecond))
	if l := waitCallLogged(t, e, "run_repo_action", mark); l["error_code"] != "CANCELED" {
		t.Errorf("call log %v: want error_code CANCELED", l)
	}
	waitGoroutines(t, base)
}

// TestAbandonedCalls: go-sdk's client abandoning a call at its deadline
// (what the tunnel does at response_timeout: notifications/cancelled on
// the session lane, and the POST closed) stops the call on every lane,
// and the goroutines of the call and of the session end.
func TestAbandonedCalls(t *testing.T) {
	e := newEnv(t)
	slowTree(t, e)
	url := e.serveHTTP(t)
	for _, v := range []string{"2025-06-18", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			http.DefaultClient.CloseIdleConnections()
			base := runtime.NumGoroutine()
			mark := len(e.log.String())
			c := sdk.NewClient(&sdk.Implementation{Name: "serverfs-test", Version: "0"}, nil)
			cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: v})
			if err == nil {
				err = listForHeaders(t.Context(), cs)
			}
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 700*time.Millisecond)
			_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_text", Arguments: map[string]any{"workdir": "wd", "path": "slow", "query": `\d{9}x`, "regex": true}})
			cancel()
			abandoned := time.Now()
			if err == nil {
				t.Fatal("the slow search ended within 700 ms")
			}
			l := waitCallLogged(t, e, "search_text", mark)
			t.Logf("%s: the search ended %s after the client abandoned it", v, time.Since(abandoned).Round(time.Millisecond))
			if l["error_code"] != "CANCELED" {
				t.Errorf("call log %v: want error_code CANCELED", l)
			}
			cs.Close()
			http.DefaultClient.CloseIdleConnections() // the client's keep-alive connections
			waitGoroutines(t, base)
		})
	}
}

// TestStdioCancelNotification: over stdio, notifications/cancelled stops
// the search and its answer is never written; the session serves on.
func TestStdioCancelNotification(t *testing.T) {
	e := newEnv(t)
	slowTree(t, e)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- transport.Stdio(inR, outW).Run(ctx, NewServer(e.deps, testVer)) }()
	msgs := make(chan rpcMsg, 64)
	go func() {
		defer close(msgs)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m rpcMsg
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				msgs <- m
			}
		}
	}()
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(strings.Replace(initBody, "2025-06-18", "2025-11-25", 1))
	if m, _ := next(t, msgs, 10*time.Second); string(m.ID) != "1" {
		t.Fatalf("initialize: %+v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	mark := len(e.log.String())
	send(slowSearch(5, false))
	waitProgress(t, msgs)
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
	waitCallLogged(t, e, "search_text", mark)
	send(`{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	for {
		m, ok := next(t, msgs, 10*time.Second)
		if !ok {
			t.Fatal("stdout closed")
		}
		if string(m.ID) == "5" {
			t.Errorf("the cancelled search was answered: %s", m.Result)
		}
		if string(m.ID) == "6" {
			break
		}
	}
	inW.Close()
	cancel()
	go func() {
		for range msgs {
		}
	}()
	<-done
}
