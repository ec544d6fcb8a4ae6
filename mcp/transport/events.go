package transport

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stream resumption on the session lane (2025-11-25, SEP-1699).
// With an event store, go-sdk numbers every SSE event of a session's
// streams, opens each POST stream with a priming event (an id, no data)
// and replays what a stream sent after the Last-Event-ID of a GET. So an
// answer written into a connection that broke (a proxy's idle timeout, a
// network change) reaches the client when it reconnects, instead of being
// lost. go-sdk's MemoryEventStore is not bounded enough for a server
// facing the network: its cap counts data bytes only (an empty priming
// event, a stream's and a session's entries cost nothing), a stream's
// entry lives until its session ends, and a purge scans every stream of
// every session. eventStore bounds everything it holds:
//
//   - every session, stream and event is charged its data plus a fixed
//     overhead against a process-wide budget (eventStoreBytes) and the
//     session's (eventSessionBytes), and a session keeps at most
//     eventSessionStreams streams;
//   - over a budget, the least recently used streams go first (their
//     calls were answered longest ago), then the oldest events of the
//     stream being written;
//   - what was dropped is never replayed in part: After fails (go-sdk then
//     answers the GET with 400), and a stream written to after its entry
//     was dropped stays unreplayable, since its numbering is lost.
//
// The 2026-07-28 revision has no resumption: the stateless lane has no
// store. 50,000 sessions hold at most the budget (TestEventStoreBounded).

// The event store's budgets.
const (
	eventStoreBytes     = 8 << 20 // all sessions
	eventSessionBytes   = 1 << 20 // one session
	eventSessionStreams = 16      // one session's streams (each POST opens one)
)

// What the store charges for an entry beside its data: about what its
// structures, map entries and list elements take.
const (
	eventCost   = 48
	streamCost  = 224
	sessionCost = 288
)

// sseRetryMillis is the reconnection delay every SSE response of the
// session lane announces (the SSE retry field, SEP-1699): a client whose
// stream ended before its answer waits this long before it resumes.
const sseRetryMillis = 2000

// eventStore is a bounded sdk.EventStore.
type eventStore struct {
	max, perSession, maxStreams int

	mu       sync.Mutex
	bytes    int
	sessions map[string]*evSession
	lru      evList // all streams, least recently used first (evGlobal)
}

// evList is a list of streams.
type evList = ilist[evStream, *evStream]

type evSession struct {
	id      string
	streams map[string]*evStream
	lru     evList // the session's streams, least recently used first (evLocal)
	bytes   int
}

type evStream struct {
	sess  *evSession
	id    string
	first int      // the stream index of data[0]
	data  [][]byte // events from first on
	// inline holds a POST stream's usual events (the priming event and
	// the answer) without an allocation.
	inline [2][]byte
	bytes  int // charged: streamCost plus every event's
	// lost: the entry was made by an Append after the stream's first
	// entry was dropped, so which index an event has is unknown.
	lost bool
	// links are the stream's places in the store's (evGlobal) and its
	// session's (evLocal) lru lists.
	links [2]ilink[evStream]
}

func newEventStore(max, perSession, maxStreams int) *eventStore {
	return &eventStore{max: max, perSession: perSession, maxStreams: maxStreams, sessions: map[string]*evSession{}, lru: evList{k: evGlobal}}
}

var _ sdk.EventStore = (*eventStore)(nil)

// stream returns the entry of a session's stream, made if missing (lost
// when made by an Append), and marks it used. s.mu held.
func (s *eventStore) stream(sessionID, streamID string, open bool) *evStream {
	sess := s.sessions[sessionID]
	if sess == nil {
		sess = &evSession{id: sessionID, streams: map[string]*evStream{}, lru: evList{k: evLocal}, bytes: sessionCost + len(sessionID)}
		s.sessions[sessionID] = sess
		s.bytes += sess.bytes
	}
	st := sess.streams[streamID]
	if st == nil {
		st = &evStream{sess: sess, id: streamID, lost: !open, bytes: streamCost + len(streamID)}
		st.data = st.inline[:0]
		sess.streams[streamID] = st
		s.lru.pushBack(st)
		sess.lru.pushBack(st)
		sess.bytes += st.bytes
		s.bytes += st.bytes
		return st
	}
	s.lru.moveToBack(st)
	sess.lru.moveToBack(st)
	return st
}

// Open implements sdk.EventStore.
func (s *eventStore) Open(_ context.Context, sessionID, streamID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shrink(s.stream(sessionID, streamID, true))
	return nil
}

// Append implements sdk.EventStore.
func (s *eventStore) Append(_ context.Context, sessionID, streamID string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stream(sessionID, streamID, false)
	if st.lost {
		return nil // never replayed: keep nothing
	}
	if eventCost+len(data) > s.perSession {
		// Too large to keep: the stream is replayable up to its end only.
		s.dropFront(st, len(st.data))
		st.first++
		return nil
	}
	st.data = append(st.data, data)
	s.charge(st, eventCost+len(data))
	s.shrink(st)
	return nil
}

// After implements sdk.EventStore: the events after index, or an error
// wrapping sdk.ErrEventsPurged when any of them was dropped.
func (s *eventStore) After(_ context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	s.mu.Lock()
	var events [][]byte
	var err error
	st := s.lookup(sessionID, streamID)
	switch start := index + 1; {
	case st == nil:
		err = fmt.Errorf("stream %q of session %q: %w", streamID, sessionID, sdk.ErrEventsPurged)
	case st.lost || start < st.first:
		err = fmt.Errorf("stream %q of session %q after %d: %w", streamID, sessionID, index, sdk.ErrEventsPurged)
	case start-st.first < len(st.data):
		events = append(events, st.data[start-st.first:]...)
	}
	s.mu.Unlock()
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, e := range events {
			if !yield(e, nil) {
				return
			}
		}
	}
}

// SessionClosed implements sdk.EventStore.
func (s *eventStore) SessionClosed(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess := s.sessions[sessionID]; sess != nil {
		for _, st := range sess.streams {
			s.lru.remove(st)
		}
		s.bytes -= sess.bytes
		delete(s.sessions, sessionID)
	}
	return nil
}

// forget blanks event index of a session's stream, kept or not: the
// answer of a call cancelled by notifications/cancelled, which the muted
// POST did not send, must not be sent by a replay either (calls.go).
func (s *eventStore) forget(sessionID, streamID string, index int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.lookup(sessionID, streamID)
	if st == nil || st.lost || index < st.first || index-st.first >= len(st.data) {
		return
	}
	i := index - st.first
	s.charge(st, -len(st.data[i]))
	st.data[i] = nil // go-sdk replays no empty event
}

// lookup returns a stream's entry, or nil. s.mu held.
func (s *eventStore) lookup(sessionID, streamID string) *evStream {
	if sess := s.sessions[sessionID]; sess != nil {
		return sess.streams[streamID]
	}
	return nil
}

// charge adds n bytes to a stream's, its session's and the store's
// count. s.mu held.
func (s *eventStore) charge(st *evStream, n int) {
	st.bytes += n
	st.sess.bytes += n
	s.bytes += n
}

// dropFront drops the n oldest events of st. s.mu held.
func (s *eventStore) dropFront(st *evStream, n int) {
	freed := 0
	for i := range n {
		freed += eventCost + len(st.data[i])
		st.data[i] = nil
	}
	st.data = st.data[n:]
	st.first += n
	s.charge(st, -freed)
}

// evict drops a stream's entry, and its session's when it was the last.
// s.mu held.
func (s *eventStore) evict(st *evStream) {
	sess := st.sess
	s.lru.remove(st)
	sess.lru.remove(st)
	delete(sess.streams, st.id)
	sess.bytes -= st.bytes
	s.bytes -= st.bytes
	if len(sess.streams) == 0 {
		s.bytes -= sess.bytes
		delete(s.sessions, sess.id)
	}
}

// standaloneStream is go-sdk's ID of a session's standalone (GET) stream.
const standaloneStream = ""

// shrink brings cur's session and the store within their bounds: other
// streams first, least recently used first, then cur's oldest events.
// Within its session the standalone stream is not evicted: it lives as
// long as the session and may go many calls without an event (it was,
// after 16 POSTs, and every later event on it was kept as lost, so a GET
// resuming it got 400); past the session's bytes its oldest events go
// first. The store's budget may still evict it, as any stream, for other
// sessions. s.mu held.
func (s *eventStore) shrink(cur *evStream) {
	sess := cur.sess
	oldest := func(l *evList, pinned bool) *evStream {
		for st := l.head; st != nil; st = l.next(st) {
			if st != cur && !(pinned && st.id == standaloneStream) {
				return st
			}
		}
		return nil
	}
	for len(sess.streams) > s.maxStreams {
		s.evict(oldest(&sess.lru, true))
	}
	for sess.bytes > s.perSession {
		if st := oldest(&sess.lru, true); st != nil {
			s.evict(st)
		} else if st := sess.streams[standaloneStream]; st != nil && st != cur && len(st.data) > 0 {
			s.dropFront(st, 1)
		} else if len(cur.data) > 0 {
			s.dropFront(cur, 1)
		} else {
			break
		}
	}
	for s.bytes > s.max {
		if st := oldest(&s.lru, false); st != nil {
			s.evict(st)
		} else if len(cur.data) > 0 {
			s.dropFront(cur, 1)
		} else {
			break
		}
	}
}

// Which of a stream's links a list uses.
const (
	evGlobal = iota
	evLocal
)

// link is the stream's place in the store's (evGlobal) or its session's
// (evLocal) lru list.
func (st *evStream) link(k int) *ilink[evStream] { return &st.links[k] }

// retryWriter announces sseRetryMillis on an SSE response of the session
// lane: the retry field goes into the response's first event block (the
// priming event's, or the GET stream's opening comment). go-sdk has no
// option for it; it writes retry only on the close event of
// CloseSSEStream.
//
// It also coalesces go-sdk's flushes. go-sdk flushes after every event:
// on a POST of the 2025-11-25 lane first after the priming event (an id,
// no data), then after the answer, and net/http then writes the end of
// the chunked body. Each flush is a write to the connection, which for a
// short call costs more than the event store (the lane must not get
// slower for it). So a flush is owed, not made: the writer's flushQueue
// makes it within sseFlushDelay unless the handler returns first, in
// which case net/http writes the whole response at once (headers,
// priming event, answer: one write, with a Content-Length when it is
// small). A long call still gets its priming event, and every progress
// notification, within sseFlushDelay; the GET stream its opening comment.
type retryWriter struct {
	http.ResponseWriter
	flushes *flushQueue

	mu       sync.Mutex // go-sdk's writes vs. the queue's flush
	started  bool       // the status is written
	pending  bool       // an event stream whose retry field is still to write
	owed     bool       // a flush is owed: rw is in the queue or being flushed by it
	finished bool       // the handler returned: the writer is net/http's again

	// The writer's place in the queue while its flush is owed (q.mu).
	queued bool
	owedAt time.Time
	place  ilink[retryWriter]
}

// link is rw's place in its flushQueue (one list: k is 0).
func (rw *retryWriter) link(int) *ilink[retryWriter] { return &rw.place }

// sseFlushDelay bounds how long an event go-sdk flushed may wait in the
// response's buffer for the next one or the handler's return. The queue's
// timer is armed and fires about once per delay while calls are in flight,
// each time waking a thread: at 5 ms that cost a call at one client ~7 µs
// of CPU; at 50 ms it is a tenth of that. A long call's
// priming event and its progress notifications (two a second at most) are
// late by as much, which no client can tell from network delay.
const sseFlushDelay = 50 * time.Millisecond

var retryField = []byte("retry: " + strconv.Itoa(sseRetryMillis) + "\n")

func (rw *retryWriter) WriteHeader(code int) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.writeHeader(code)
}

// writeHeader is WriteHeader with rw.mu held.
func (rw *retryWriter) writeHeader(code int) {
	if !rw.started {
		rw.started = true
		rw.pending = code == http.StatusOK && strings.HasPrefix(rw.Header().Get("Content-Type"), "text/event-stream")
	}
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *retryWriter) Write(p []byte) (int, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if !rw.started {
		rw.writeHeader(http.StatusOK)
	}
	if rw.pending {
		rw.pending = false
		if _, err := rw.ResponseWriter.Write(retryField); err != nil {
			return 0, err
		}
	}
	return rw.ResponseWriter.Write(p)
}

// Flush is http.Flusher, which go-sdk's event streams need: it owes a
// flush, made within sseFlushDelay unless the handler returns first.
func (rw *retryWriter) Flush() {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.owed || rw.finished {
		return
	}
	rw.owed = true
	rw.flushes.add(rw)
}

// flushOwed makes the owed flush (the queue's timer).
func (rw *retryWriter) flushOwed() {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.owed && !rw.finished {
		_ = http.NewResponseController(rw.ResponseWriter).Flush()
	}
	rw.owed = false
}

// finish is called when the handler returned: no flush is made after it
// (net/http writes what is buffered), and the owed one leaves the queue.
func (rw *retryWriter) finish() {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.finished = true
	if rw.owed {
		rw.flushes.remove(rw)
	}
}

// flushQueue makes the flushes owed by the session lane's writers, each
// sseFlushDelay after it was owed unless its handler returned first: one
// timer for all of them (a timer per response costs about as much as the
// flush it saves). A writer leaves the queue when its handler returns, so
// the queue holds only responses still running. The timer is armed when a
// flush is owed and the timer is not armed already, and re-armed by its
// firing only while the queue holds a writer: it is neither stopped when
// the queue empties nor re-armed per call. Arming a timer wakes a thread
// of the process (the runtime's netpoll break or wakep), so a short call
// at one client, which owes a flush and returns within the delay, arms
// none in most cases: about one arming and one firing per sseFlushDelay
// whatever the call rate (before, finished writers stayed
// queued until the timer fired, which re-armed it for the next entry,
// once per call).
type flushQueue struct {
	mu    sync.Mutex
	owed  ilist[retryWriter, *retryWriter] // oldest first
	armed bool
	timer *time.Timer
}

// add queues rw's flush. rw.mu held.
func (q *flushQueue) add(rw *retryWriter) {
	q.mu.Lock()
	defer q.mu.Unlock()
	rw.owedAt = time.Now() // under q.mu: the queue stays in time order
	rw.queued = true
	q.owed.pushBack(rw)
	if !q.armed {
		q.arm(sseFlushDelay)
	}
}

// remove takes rw out of the queue, if it is there (the timer, if
// armed, fires once more and finds nothing due). rw.mu held.
func (q *flushQueue) remove(rw *retryWriter) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !rw.queued {
		return // the queue's timer is flushing it
	}
	rw.queued = false
	q.owed.remove(rw)
}

// arm sets the timer. q.mu held.
func (q *flushQueue) arm(d time.Duration) {
	q.armed = true
	if q.timer == nil {
		q.timer = time.AfterFunc(d, q.run)
	} else {
		q.timer.Reset(d)
	}
}

// run makes the flushes owed sseFlushDelay ago or earlier (the timer's
// function) and re-arms the timer for the rest.
func (q *flushQueue) run() {
	now := time.Now()
	q.mu.Lock()
	// The due writers move to a list of their own, through the same
	// place: none is added again before its owed flush is made below.
	var due ilist[retryWriter, *retryWriter]
	for rw := q.owed.head; rw != nil && now.Sub(rw.owedAt) >= sseFlushDelay; rw = q.owed.head {
		rw.queued = false
		q.owed.remove(rw)
		due.pushBack(rw)
	}
	q.armed = false
	if q.owed.head != nil {
		q.arm(sseFlushDelay - now.Sub(q.owed.head.owedAt))
	}
	q.mu.Unlock()
	for rw := due.head; rw != nil; {
		// Its successor first: once flushed, rw may be owed and queued
		// again, through the same place.
		next := due.next(rw)
		rw.flushOwed()
		rw = next
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (rw *retryWriter) Unwrap() http.ResponseWriter { return rw.ResponseWriter }
