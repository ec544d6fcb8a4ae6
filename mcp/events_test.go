package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

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

// TestEventStoreReplay: what After returns, and that nothing dropped is
// replayed in part.
func TestEventStoreReplay(t *testing.T) {
	ctx := context.Background()
	s := newEventStore(1<<20, 4096, 3)
	collect := func(session, stream string, index int) ([]string, error) {
		var out []string
		for d, err := range s.After(ctx, session, stream, index) {
			if err != nil {
				return out, err
			}
			out = append(out, string(d))
		}
		return out, nil
	}
	want := func(session, stream string, index int, events ...string) {
		t.Helper()
		got, err := collect(session, stream, index)
		if err != nil || !slices.Equal(got, events) {
			t.Errorf("After(%s, %s, %d) = %q, %v; want %q", session, stream, index, got, err, events)
		}
	}
	purged := func(session, stream string, index int) {
		t.Helper()
		if got, err := collect(session, stream, index); !errors.Is(err, sdk.ErrEventsPurged) {
			t.Errorf("After(%s, %s, %d) = %q, %v; want ErrEventsPurged", session, stream, index, got, err)
		}
	}
	s.Open(ctx, "A", "s1")
	s.Append(ctx, "A", "s1", nil) // priming, index 0
	s.Append(ctx, "A", "s1", []byte("one"))
	s.Append(ctx, "A", "s1", []byte("two"))
	want("A", "s1", 0, "one", "two")
	want("A", "s1", 1, "two")
	want("A", "s1", 2)
	purged("A", "nope", 0)
	purged("B", "s1", 0)

	// The session's byte budget: the oldest events of the stream go.
	for i := range 3 {
		s.Append(ctx, "A", "s1", []byte(strings.Repeat(strconv.Itoa(i), 1500)))
	}
	purged("A", "s1", 0)
	want("A", "s1", 4, strings.Repeat("2", 1500))
	// An event over the session's budget is not kept: the stream
	// replays from after it only.
	s.Append(ctx, "A", "s1", make([]byte, 5000)) // index 6
	s.Append(ctx, "A", "s1", []byte("after"))    // index 7
	purged("A", "s1", 5)
	want("A", "s1", 6, "after")

	// The session's stream limit: the least recently used goes, and an
	// Append to it later keeps nothing (its numbering is lost).
	for _, id := range []string{"s2", "s3", "s4"} {
		s.Open(ctx, "A", id)
		s.Append(ctx, "A", id, []byte(id))
	}
	purged("A", "s1", 7)
	want("A", "s4", -1, "s4")
	s.Append(ctx, "A", "s1", []byte("late"))
	purged("A", "s1", 8)

	// The standalone stream is not evicted by the stream limit, however
	// many POST streams come after it without an event on it.
	s.Open(ctx, "A", standaloneStream)
	s.Append(ctx, "A", standaloneStream, nil) // priming, index 0
	for i := range 20 {
		id := "p" + strconv.Itoa(i)
		s.Open(ctx, "A", id)
		s.Append(ctx, "A", id, nil)
		s.Append(ctx, "A", id, []byte(id))
	}
	s.Append(ctx, "A", standaloneStream, []byte("notification"))
	want("A", standaloneStream, 0, "notification")
	want("A", "p19", 0, "p19")
	purged("A", "p16", 0)
	// Past the session's bytes its oldest events go before the current
	// stream's.
	s.Append(ctx, "A", standaloneStream, []byte(strings.Repeat("n", 1500)))
	s.Append(ctx, "A", "p19", []byte(strings.Repeat("a", 1500)))
	s.Append(ctx, "A", "p19", []byte(strings.Repeat("b", 1500)))
	want("A", "p19", 1, strings.Repeat("a", 1500), strings.Repeat("b", 1500))
	purged("A", standaloneStream, 0)

	// forget blanks an event (go-sdk skips empty ones).
	s.Open(ctx, "A", "s4")
	s.Append(ctx, "A", "s4", []byte("s4"))
	s.Append(ctx, "A", "s4", []byte("answer"))
	s.forget("A", "s4", 1)
	want("A", "s4", -1, "s4", "")

	// SessionClosed releases everything.
	s.SessionClosed(ctx, "A")
	purged("A", "s4", 0)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bytes != 0 || len(s.sessions) != 0 || s.lru.len() != 0 {
		t.Errorf("after SessionClosed: %d bytes, %d sessions, %d streams", s.bytes, len(s.sessions), s.lru.len())
	}
}

// TestEventStoreBounded: 50,000 sessions, each with the standalone
// stream and two answered calls (priming events and 2 KiB answers, as
// go-sdk stores them), hold the store's budget and no more: the live
// heap grows by less than 1.5 times it, RSS by less than 256 MiB (under
// -race too), and the newest sessions replay. go-sdk's MemoryEventStore,
// given the same byte cap, keeps an entry for every session and stream
// (its cap counts data only): +31 MiB of live heap for these 50,000
// sessions, measured once, which this bound refuses.
func TestEventStoreBounded(t *testing.T) {
	const sessions = 50_000
	s := newEventStore(eventStoreBytes, eventSessionBytes, eventSessionStreams)
	heap0, rss0 := liveHeap(), rssBytes(t)
	start := time.Now()
	fillSessions(s, sessions)
	took := time.Since(start)
	heap1, rss1 := liveHeap(), rssBytes(t)
	s.mu.Lock()
	held, kept := s.bytes, len(s.sessions)
	s.mu.Unlock()
	t.Logf("%d sessions in %s: store charges %d KiB for %d sessions kept; live heap +%d KiB, RSS +%d MiB",
		sessions, took.Round(time.Millisecond), held>>10, kept, (heap1-heap0)>>10, (rss1-rss0)>>20)
	if held > eventStoreBytes {
		t.Errorf("store holds %d bytes, budget %d", held, eventStoreBytes)
	}
	if grow := heap1 - heap0; grow > eventStoreBytes*3/2 {
		t.Errorf("live heap grew by %d KiB for a budget of %d KiB", grow>>10, eventStoreBytes>>10)
	}
	if grow := rss1 - rss0; grow > 256<<20 {
		t.Errorf("RSS grew by %d MiB", grow>>20)
	}
	last := fmt.Sprintf("session-%d", sessions-1)
	n := 0
	for d, err := range s.After(context.Background(), last, "call-1", 0) {
		if err != nil || len(d) != 2048 {
			t.Fatalf("newest session: %d bytes, %v", len(d), err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("newest session replays %d events, want its answer", n)
	}
	runtime.KeepAlive(s)
}

// fillSessions stores what n sessions leave in an event store.
func fillSessions(s sdk.EventStore, n int) {
	ctx := context.Background()
	answer := make([]byte, 2048)
	for i := range n {
		id := fmt.Sprintf("session-%d", i)
		s.Open(ctx, id, "")
		for c := range 2 {
			stream := fmt.Sprintf("call-%d", c)
			s.Open(ctx, id, stream)
			s.Append(ctx, id, stream, nil)
			s.Append(ctx, id, stream, slices.Clone(answer))
		}
	}
}

func liveHeap() int {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int(m.HeapAlloc)
}

// rssBytes is this process's resident set size.
func rssBytes(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
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

// flushSignal is a ResponseWriter whose flushes are sent on a channel.
type flushSignal struct {
	http.ResponseWriter
	flushed chan struct{}
}

func (f *flushSignal) Flush() { f.flushed <- struct{}{} }

// TestFlushQueueDropsFinished: a writer whose handler returned leaves the
// owed-flush queue at once, and the queue's timer then fires once and is
// not re-armed, so short calls (a flush owed, the handler returned within
// sseFlushDelay) cost at most one timer arming and firing per delay, not
// one per call; a writer still running gets its owed flush, and the queue empties
// after it.
func TestFlushQueueDropsFinished(t *testing.T) {
	var q flushQueue
	newWriter := func() (*retryWriter, chan struct{}) {
		ch := make(chan struct{}, 1)
		return &retryWriter{ResponseWriter: &flushSignal{flushed: ch}, flushes: &q}, ch
	}
	state := func() (n int, armed bool) {
		q.mu.Lock()
		defer q.mu.Unlock()
		for rw := q.owed.head; rw != nil; rw = q.owed.next(rw) {
			n++
		}
		return n, q.armed
	}

	short := make([]*retryWriter, 3)
	for i := range short {
		short[i], _ = newWriter()
		short[i].Flush()
		short[i].Flush() // owed once
	}
	if n, armed := state(); n != 3 || !armed {
		t.Fatalf("3 writers owing a flush: queue holds %d, armed %v", n, armed)
	}
	short[1].finish() // from the middle
	short[0].finish() // the head
	short[2].finish() // the last
	if n, _ := state(); n != 0 {
		t.Fatalf("every handler returned: queue holds %d writers, want 0", n)
	}
	q.run() // the timer's firing, none of the flushes due yet
	if n, armed := state(); n != 0 || armed {
		t.Fatalf("the timer fired on an empty queue: queue holds %d, armed %v; want 0, not armed", n, armed)
	}

	long, flushed := newWriter()
	later, _ := newWriter()
	long.Flush()
	later.Flush()
	later.finish()
	select {
	case <-flushed:
	case <-time.After(10 * time.Second):
		t.Fatal("the running writer's owed flush was not made")
	}
	long.finish()
	if n, _ := state(); n != 0 {
		t.Fatalf("after the flush: queue holds %d writers, want 0", n)
	}
}
