package mcp

import (
	"bufio"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The tools behind the transport over real HTTP: stream resumption, the
// coalesced flushes of event streams, batches behind white space.

// sseEvent is one event of an event stream as a client parses it.
type sseEvent struct {
	id, name, retry, data string
}

// readSSE parses an event stream into events (a block with only a retry
// field or a comment is not an event: its retry goes to the next one, as
// a client keeps it).
func readSSE(resp *http.Response) <-chan sseEvent {
	ch := make(chan sseEvent, 64)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var ev sseEvent
		var hasData bool
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				if hasData || ev.id != "" {
					ch <- ev
					ev, hasData = sseEvent{retry: ev.retry}, false
				}
				continue
			}
			k, v, _ := strings.Cut(line, ":")
			v = strings.TrimPrefix(v, " ")
			switch k {
			case "id":
				ev.id = v
			case "event":
				ev.name = v
			case "retry":
				ev.retry = v
			case "data":
				ev.data, hasData = ev.data+v, true
			}
		}
	}()
	return ch
}

// sseRequest sends a POST (body non-empty) or a GET with the headers and
// returns its status and, for an event stream, its events.
func sseRequest(t *testing.T, url, body string, headers ...string) (int, <-chan sseEvent) {
	t.Helper()
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(mcpRequest(t, t.Context(), url, body, headers...))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		ch := make(chan sseEvent)
		close(ch)
		return resp.StatusCode, ch
	}
	return resp.StatusCode, readSSE(resp)
}

func drain(t *testing.T, ch <-chan sseEvent) []sseEvent {
	t.Helper()
	var evs []sseEvent
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return evs
			}
			evs = append(evs, ev)
		case <-timeout:
			t.Fatalf("the stream did not end within 20 s; events so far: %+v", evs)
		}
	}
}

// TestStreamResumption: on the session lane at 2025-11-25 a POST's event
// stream opens with a priming event (an id, no data) carrying the retry
// field, every event is numbered, and a GET with a Last-Event-ID replays
// what followed it: the answer a client missed. An answer muted by
// notifications/cancelled is not replayed either.
func TestStreamResumption(t *testing.T) {
	e := newEnv(t)
	slowTree(t, e)
	url := e.serveHTTP(t)
	_, h, _ := rpcPost(t, url, strings.Replace(initBody, "2025-06-18", "2025-11-25", 1))
	session := []string{sessionHeader, h.Get(sessionHeader), protocolVersionHeader, "2025-11-25"}
	if status, _, _ := rpcPost(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session...); status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", status)
	}

	status, ch := sseRequest(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stat_file","arguments":{"workdir":"wd","path":"sub/a.txt"}}}`, session...)
	evs := drain(t, ch)
	if status != http.StatusOK || len(evs) != 2 {
		t.Fatalf("stat_file: %d, events %+v (want the priming event and the answer)", status, evs)
	}
	prime, answer := evs[0], evs[1]
	if prime.id == "" || prime.data != "" || prime.retry != strconv.Itoa(sseRetryMillis) {
		t.Errorf("first event %+v: want an id, no data and retry %d", prime, sseRetryMillis)
	}
	if answer.id == "" || answer.id == prime.id || !strings.Contains(answer.data, `"modified_at"`) {
		t.Errorf("answer event %+v", answer)
	}
	// The client missed the answer: it resumes after the priming event.
	status, ch = sseRequest(t, url, "", append(slices.Clone(session), "Last-Event-ID", prime.id)...)
	if replay := drain(t, ch); status != http.StatusOK || len(replay) != 1 || replay[0].id != answer.id || replay[0].data != answer.data {
		t.Errorf("GET after %s: %d %+v, want the answer %s again", prime.id, status, replay, answer.id)
	}
	status, ch = sseRequest(t, url, "", append(slices.Clone(session), "Last-Event-ID", answer.id)...)
	if replay := drain(t, ch); status != http.StatusOK || len(replay) != 0 {
		t.Errorf("GET after the answer: %d %+v, want nothing", status, replay)
	}

	// A call cancelled by notification: neither its stream nor a replay
	// of it carries the answer.
	status, ch = sseRequest(t, url, slowSearch(9, false), session...)
	if status != http.StatusOK {
		t.Fatalf("search: %d", status)
	}
	var first string
	for ev := range ch {
		if first == "" {
			first = ev.id
		}
		if strings.Contains(ev.data, `"notifications/progress"`) {
			break
		}
	}
	if status, _, _ := rpcPost(t, url, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"test"}}`, session...); status != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: %d", status)
	}
	for _, ev := range append(drain(t, ch), func() []sseEvent {
		// The stream ended without an answer: a client resumes it.
		status, ch := sseRequest(t, url, "", append(slices.Clone(session), "Last-Event-ID", first)...)
		if status != http.StatusOK {
			t.Errorf("GET after %s: %d", first, status)
		}
		return drain(t, ch)
	}()...) {
		if strings.Contains(ev.data, `"id":9`) {
			t.Errorf("the cancelled call's answer was sent: %+v", ev)
		}
	}
}

// TestSSEFlushCoalesced: go-sdk flushes after the priming event and after
// the answer; the session lane's writer owes those flushes, so a short
// call's whole response (headers, priming event, answer) leaves in one
// write, with a Content-Length, and a long call still gets its priming
// event while it runs: cancelled after that event arrived, it sends no
// answer (were the priming event held until the handler returned, it
// would come with the answer).
func TestSSEFlushCoalesced(t *testing.T) {
	e := newEnv(t)
	slowTree(t, e)
	url := e.serveHTTP(t)
	_, h, _ := rpcPost(t, url, strings.Replace(initBody, "2025-06-18", "2025-11-25", 1))
	session := []string{sessionHeader, h.Get(sessionHeader), protocolVersionHeader, "2025-11-25"}
	if status, _, _ := rpcPost(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session...); status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", status)
	}

	req := mcpRequest(t, t.Context(), url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stat_file","arguments":{"workdir":"wd","path":"sub/a.txt"}}}`, session...)
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	length, chunked := resp.ContentLength, slices.Contains(resp.TransferEncoding, "chunked")
	if evs := drain(t, readSSE(resp)); len(evs) != 2 || evs[0].data != "" || evs[0].retry == "" {
		t.Fatalf("stat_file: events %+v (want the priming event with retry, and the answer)", evs)
	}
	if length <= 0 || chunked {
		t.Errorf("stat_file's response: Content-Length %d, chunked %v; want one write with a length", length, chunked)
	}

	// A long call without progress: its priming event comes first, alone.
	status, ch := sseRequest(t, url, strings.Replace(slowSearch(9, false), `"progressToken":"tok-9"`, "", 1), session...)
	if status != http.StatusOK {
		t.Fatalf("search: %d", status)
	}
	prime, ok := <-ch
	if !ok || prime.id == "" || prime.data != "" {
		t.Fatalf("search's first event %+v (stream open %v), want the priming event", prime, ok)
	}
	if status, _, _ := rpcPost(t, url, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"test"}}`, session...); status != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: %d", status)
	}
	for _, ev := range drain(t, ch) {
		if strings.Contains(ev.data, `"id":9`) {
			t.Errorf("the search's answer came with or after its priming event, not before its end: %+v", ev)
		}
	}
}

// TestBatchBehindWhiteSpaceRefused: a batch behind more than 64 KiB of
// white space is refused as a parse error, not handed on to go-sdk (which
// would run it); no tool call runs.
func TestBatchBehindWhiteSpaceRefused(t *testing.T) {
	e := newEnv(t)
	url := e.serveHTTP(t)
	sid := rawSession(t, url, "2025-06-18")
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stat_file","arguments":{"workdir":"wd","path":"README.md"}}}`
	body := strings.Repeat(" ", 64<<10+1) + strings.Repeat("\n", 1024) + "[" + call + "," + call + "]"
	resp, err := rawRPC(t.Context(), url, sid, "2025-03-26", body)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "-32700") {
		t.Errorf("batch behind 65 KiB of white space: %s %s", resp.Status, b)
	}
	for _, m := range logLines(t, e.log.String()) {
		if m["event"] == "tool_call" {
			t.Errorf("a batch behind 65 KiB of white space ran a tool call: %v", m)
		}
	}
}
