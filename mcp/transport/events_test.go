package transport

import (
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
