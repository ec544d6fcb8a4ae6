package transport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/serverfs/serverfs/internal/settings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The HTTP guard, between the request checks of NewHandler and
// go-sdk's streamable handler: it refuses JSON-RPC batches, caps the live
// sessions and puts a deadline on every response write.

// GuardConfig bounds what HTTP clients can hold.
type GuardConfig struct {
	// MaxSessions caps live sessions (SERVERFS_MAX_SESSIONS): a new one
	// past the cap evicts the session idle the longest, or is refused
	// with SERVER_BUSY when every session has a request in flight.
	MaxSessions int
	// WriteTimeout bounds each response write (SERVERFS_WRITE_TIMEOUT_SECONDS,
	// plus at most an eighth and 50 ms: deadlineWriter): a client that
	// stops reading loses its connection after it.
	WriteTimeout time.Duration
}

// Guard defaults. An idle session holds ~40 KB (docs/limits.md): 1,000
// of them ~40 MB.
const (
	DefaultMaxSessions         = 1000
	DefaultWriteTimeoutSeconds = 30
)

// loadGuardConfig reads the guard's variables of env.
func loadGuardConfig(env map[string]string, probs *[]string) GuardConfig {
	c := GuardConfig{MaxSessions: DefaultMaxSessions, WriteTimeout: DefaultWriteTimeoutSeconds * time.Second}
	c.MaxSessions = int(settings.Limit(env, probs, "SERVERFS_MAX_SESSIONS"))
	c.WriteTimeout = time.Duration(settings.Limit(env, probs, "SERVERFS_WRITE_TIMEOUT_SECONDS")) * time.Second
	return c
}

// guard is the middleware's state.
type guard struct {
	cfg  GuardConfig
	srv  *sdk.Server
	log  *slog.Logger
	next http.Handler
	// sessionless: next is the stateless lane (lanes.go), which holds no
	// sessions to count: only batches and write deadlines apply.
	sessionless bool

	mu sync.Mutex
	// lastSeen is when each live session (that this guard saw created)
	// last had a request start or end; inFlight counts its requests in
	// progress, a GET stream included. Entries of sessions go-sdk closed
	// itself (idle timeout) are dropped when the cap is reached.
	lastSeen map[string]time.Time
	inFlight map[string]int
	// creating counts requests that may create a session, in progress.
	creating int
}

// newGuard wraps next, go-sdk's handler serving srv.
func newGuard(log *slog.Logger, cfg GuardConfig, srv *sdk.Server, next http.Handler) http.Handler {
	return &guard{cfg: cfg, srv: srv, log: log, next: next, lastSeen: map[string]time.Time{}, inFlight: map[string]int{}}
}

const sessionHeader = "Mcp-Session-Id"

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	dw := newDeadlineWriter(w, g.cfg.WriteTimeout)
	w = dw
	if r.Method == http.MethodPost {
		batch, err := isBatch(r)
		if errors.Is(err, errTooMuchSpace) {
			// Refused here: what follows the white space could be a batch.
			g.log.Warn("refused request", "event", "http_refused", "reason", "leading white space")
			rpcRefusal(w, http.StatusBadRequest, -32700, "parse error: the body starts with more than 64 KiB of white space")
			return
		}
		if err != nil {
			// Unreadable or too large: go-sdk words the refusal (the body's
			// reader, net/http's MaxBytesReader, repeats its error).
			g.next.ServeHTTP(w, r)
			return
		}
		if batch {
			g.log.Warn("refused request", "event", "http_refused", "reason", "json-rpc batch")
			rpcRefusal(w, http.StatusBadRequest, -32600, "JSON-RPC batches are not supported: send one request per POST")
			return
		}
	}
	if g.sessionless {
		g.next.ServeHTTP(w, r)
		return
	}
	id := r.Header.Get(sessionHeader)
	if id == "" && r.Method == http.MethodPost {
		if !g.admitSession() {
			g.log.Warn("refused request", "event", "http_refused", "reason", "session cap", "max_sessions", g.cfg.MaxSessions)
			w.Header().Set("Retry-After", "5")
			rpcRefusal(w, http.StatusServiceUnavailable, -32000, fmt.Sprintf("SERVER_BUSY: the server holds its limit of %d sessions, each with a request in progress; retry in a few seconds", g.cfg.MaxSessions))
			return
		}
		g.next.ServeHTTP(w, r)
		g.created(w.Header().Get(sessionHeader))
		return
	}
	known := g.begin(id)
	g.next.ServeHTTP(w, r)
	if known {
		g.end(id, r.Method == http.MethodDelete)
	}
}

// admitSession makes room for one more session: under the cap at once,
// else by closing the longest-idle session without a request in flight.
// false: none can go.
func (g *guard) admitSession() bool {
	g.mu.Lock()
	if len(g.lastSeen)+g.creating >= g.cfg.MaxSessions {
		g.prune()
	}
	var victim string
	if len(g.lastSeen)+g.creating >= g.cfg.MaxSessions {
		var oldest time.Time
		for id, t := range g.lastSeen {
			if g.inFlight[id] == 0 && (victim == "" || t.Before(oldest)) {
				victim, oldest = id, t
			}
		}
		if victim == "" {
			g.mu.Unlock()
			return false
		}
		delete(g.lastSeen, victim)
	}
	g.creating++
	g.mu.Unlock()
	if victim != "" {
		g.closeSession(victim)
	}
	return true
}

// prune drops the entries of sessions that are no longer live. g.mu held.
func (g *guard) prune() {
	live := make(map[string]bool, len(g.lastSeen))
	for ss := range g.srv.Sessions() {
		live[ss.ID()] = true
	}
	for id := range g.lastSeen {
		if !live[id] {
			delete(g.lastSeen, id)
			delete(g.inFlight, id)
		}
	}
}

func (g *guard) closeSession(id string) {
	for ss := range g.srv.Sessions() {
		if ss.ID() == id {
			ss.Close()
			g.log.Info("session evicted", "event", "session_evicted", "reason", "session cap", "max_sessions", g.cfg.MaxSessions)
			return
		}
	}
}

// created records the session a request without a session ID opened, if
// any.
func (g *guard) created(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.creating--
	if id != "" {
		g.lastSeen[id] = time.Now()
	}
}

// begin marks a request of session id in flight; false when the guard
// does not know id (go-sdk answers it: session not found).
func (g *guard) begin(id string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.lastSeen[id]; !ok || id == "" {
		return false
	}
	g.lastSeen[id] = time.Now()
	g.inFlight[id]++
	return true
}

func (g *guard) end(id string, deleted bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := g.inFlight[id] - 1; n > 0 {
		g.inFlight[id] = n
	} else {
		delete(g.inFlight, id)
	}
	if _, ok := g.lastSeen[id]; !ok {
		return // evicted meanwhile
	}
	if deleted {
		delete(g.lastSeen, id)
		return
	}
	g.lastSeen[id] = time.Now()
}

// errTooMuchSpace refuses a body whose white space runs past 64 KiB.
var errTooMuchSpace = errors.New("too much leading white space")

// isBatch reports whether r's JSON body is an array (a JSON-RPC batch),
// leaving the body readable from its start. It reads up to the first byte
// that is not white space (at most 64 KiB of it: errTooMuchSpace past
// that).
func isBatch(r *http.Request) (bool, error) {
	if r.Body == nil {
		return false, nil
	}
	const maxSpace = 64 << 10
	pb := &peekedBody{ReadCloser: r.Body}
	pb.buf = pb.array[:0]
	for empty := 0; ; {
		if len(pb.buf) == cap(pb.buf) {
			pb.buf = slices.Grow(pb.buf, len(pb.buf))
		}
		n, err := r.Body.Read(pb.buf[len(pb.buf):min(cap(pb.buf), maxSpace+1)])
		if n == 0 && err == nil {
			// A reader that returns nothing, forever, ends as bufio ends it.
			if empty++; empty == 100 {
				return false, io.ErrNoProgress
			}
			continue
		}
		empty = 0
		read := pb.buf[len(pb.buf) : len(pb.buf)+n]
		pb.buf = pb.buf[:len(pb.buf)+n]
		if i := slices.IndexFunc(read, func(b byte) bool { return b != ' ' && b != '\t' && b != '\n' && b != '\r' }); i >= 0 {
			// The error that came with the bytes, if any, follows them.
			pb.err = err
			r.Body = pb
			return read[i] == '[', nil
		}
		switch {
		case len(pb.buf) > maxSpace:
			return false, errTooMuchSpace
		case err == io.EOF:
			pb.err = err
			r.Body = pb
			return false, nil
		case err != nil:
			return false, err
		}
	}
}

// peekedBody is a request body whose first bytes were read into buf: a
// Read returns them first, then the error the last of them came with, if
// any, then reads on. The first 64 bytes need no allocation of their own:
// a JSON-RPC body's first byte is read with one Read.
type peekedBody struct {
	io.ReadCloser
	buf   []byte
	err   error
	array [64]byte
}

func (p *peekedBody) Read(b []byte) (int, error) {
	if len(p.buf) > 0 {
		n := copy(b, p.buf)
		p.buf = p.buf[n:]
		return n, nil
	}
	if err := p.err; err != nil {
		p.err = nil
		return 0, err
	}
	return p.ReadCloser.Read(b)
}

// rpcRefusal answers a JSON-RPC error without an id (none was read).
func rpcRefusal(w http.ResponseWriter, status int, code int, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// deadlineWriter keeps the connection's write deadline ahead of every
// write of the response (headers, body, flushes): a client that does not
// read makes the write fail after the timeout, which ends the request and
// closes the connection. Between writes there is no deadline in effect
// that matters, so a long-lived event stream that is idle stays open.
//
// The deadline is moved only when less than timeout + sseFlushDelay is
// left, and then to an eighth of the timeout beyond that: a short response
// (headers, a priming event, an answer within a few milliseconds) sets it
// once instead of once per write (each a runtime timer update, a
// measurable part of a short call). The sseFlushDelay is for the session lane's owed
// flushes, made below this writer up to that much after go-sdk's Flush:
// they too start with at least the timeout ahead.
type deadlineWriter struct {
	http.ResponseWriter
	rc      http.ResponseController
	timeout time.Duration
	until   time.Time        // the deadline set; zero: none yet
	now     func() time.Time // the clock; a test's own, to be independent of its speed
}

func newDeadlineWriter(w http.ResponseWriter, timeout time.Duration) *deadlineWriter {
	return newDeadlineWriterClock(w, timeout, time.Now)
}

func newDeadlineWriterClock(w http.ResponseWriter, timeout time.Duration, now func() time.Time) *deadlineWriter {
	d := &deadlineWriter{ResponseWriter: w, rc: *http.NewResponseController(w), timeout: timeout, now: now}
	// The server's own writes (a response the handler leaves to it)
	// happen within timeout of the request's start or last write.
	d.extend()
	return d
}

// extend makes the deadline at least timeout + sseFlushDelay from now.
func (d *deadlineWriter) extend() {
	now := d.now()
	ahead := d.timeout + sseFlushDelay
	if !d.until.IsZero() && d.until.Sub(now) >= ahead {
		return
	}
	d.until = now.Add(ahead + d.timeout/8)
	// ErrNotSupported: a writer without deadlines (a test recorder).
	_ = d.rc.SetWriteDeadline(d.until)
}

func (d *deadlineWriter) WriteHeader(code int) {
	d.extend()
	d.ResponseWriter.WriteHeader(code)
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	d.extend()
	return d.ResponseWriter.Write(p)
}

// Flush is http.Flusher, which go-sdk's event streams need.
func (d *deadlineWriter) Flush() {
	d.extend()
	_ = d.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }
