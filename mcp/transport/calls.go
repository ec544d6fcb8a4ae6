package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Cancellation. go-sdk runs a stateful session's calls on the
// session's context, detached from the HTTP request that carried them: a
// call whose client went away (a disconnect, the tunnel's
// response_timeout) ran to its end. And after notifications/cancelled
// go-sdk still writes the call's answer, which the specification says a
// server should not send. Both are fixed here, outside go-sdk:
//
//   - every POST gets a call record, keyed by a number the HTTP layer puts
//     in the request's header (go-sdk hands the same header map to the
//     method handler as RequestExtra.Header; a client's own value of the
//     header is removed first);
//   - a receiving middleware cancels the context of a tools/call or
//     resources/read when the record's HTTP request ends, and when the
//     call's own context was cancelled (notifications/cancelled) it mutes
//     the record's response writer, so the answer go-sdk then writes
//     never reaches the wire.
//
// Upstream, go-sdk would need a way to tie a stateful call's context to
// its POST (as PropagateRequestCancellation does for the stateless lane)
// and to drop the response of a cancelled request.

// callHeader carries a POST's call-record key to the method middleware.
const callHeader = "X-Serverfs-Call"

// httpCall is one POST's record, with the writer go-sdk is given for it
// (one allocation per POST).
type httpCall struct {
	ctx   context.Context // the HTTP request's
	muted atomic.Bool     // the answer must not be written
	// session is the POST's Mcp-Session-Id and store the session lane's
	// event store (nil: none): a muted event is blanked there too, so no
	// replay (a GET with Last-Event-ID) sends it either.
	session string
	store   *eventStore
	// stateless: a request of the stateless lane, whose client the
	// heavy-call gate knows by remote (the connection's host) and the
	// clientInfo name of the request's _meta.
	stateless bool
	remote    string
	key       uint64
	header    [1]string // the callHeader value
	w         muteWriter
}

// calls holds the records of POSTs in progress.
type calls struct {
	seq   atomic.Uint64
	mu    sync.Mutex
	m     map[uint64]*httpCall
	store *eventStore // the session lane's, or nil
	// callContext is Config.CallContext.
	callContext func(context.Context, string) context.Context
}

// track registers r's record; its writer (hc.writer) is the one go-sdk
// must be given, and done drops the record when r is done.
func (c *calls) track(w http.ResponseWriter, r *http.Request) *httpCall {
	hc := &httpCall{ctx: r.Context(), session: r.Header.Get(sessionHeader), store: c.store, key: c.seq.Add(1)}
	hc.w = muteWriter{ResponseWriter: w, hc: hc}
	hc.header[0] = strconv.FormatUint(hc.key, 36)
	r.Header.Del(callHeader)
	r.Header[callHeader] = hc.header[:]
	c.mu.Lock()
	if c.m == nil {
		c.m = map[uint64]*httpCall{}
	}
	c.m[hc.key] = hc
	c.mu.Unlock()
	return hc
}

// writer is the POST's response writer.
func (hc *httpCall) writer() http.ResponseWriter { return &hc.w }

// done drops hc's record.
func (c *calls) done(hc *httpCall) {
	c.mu.Lock()
	delete(c.m, hc.key)
	c.mu.Unlock()
}

// lookup is the record of a call header's value, or nil.
func (c *calls) lookup(h http.Header) *httpCall {
	key, err := strconv.ParseUint(h.Get(callHeader), 36, 64)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key]
}

// middleware ties tools/call and resources/read to their HTTP request.
func (c *calls) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "tools/call" && method != "resources/read" {
			return next(ctx, method, req)
		}
		var hc *httpCall
		if ex := req.GetExtra(); ex != nil && ex.Header != nil {
			hc = c.lookup(ex.Header)
		}
		if hc == nil { // stdio
			return next(ctx, method, req)
		}
		// A plain cancellation (cause context.Canceled): the tools tell it
		// from their own deadlines by that cause.
		if c.callContext != nil {
			ctx = c.callContext(ctx, hc.client(req))
		}
		callCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(hc.ctx, cancel)
		defer stop()
		res, err := next(callCtx, method, req)
		if ctx.Err() != nil {
			// notifications/cancelled (or the session's end): no answer.
			hc.muted.Store(true)
		}
		return res, err
	}
}

// client names the client of a call for the heavy-call gate's fairness:
// its session on the session lane; on the stateless lane the host it
// connects from and the name its _meta's clientInfo gives (ServerFS has
// one client token, which tells no client from another).
func (hc *httpCall) client(req sdk.Request) string {
	if !hc.stateless {
		return "session " + hc.session
	}
	name := ""
	if p := req.GetParams(); p != nil {
		if info, ok := p.GetMeta()[sdk.MetaKeyClientInfo].(map[string]any); ok {
			name, _ = info["name"].(string)
		}
	}
	return "host " + hc.remote + " name " + name[:min(len(name), 64)]
}

// remoteHost is the host of a request's RemoteAddr (the port changes with
// every connection of one client).
func remoteHost(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// muteWriter is a POST's response writer; once its call is muted, writes
// are dropped (reported as written, so go-sdk completes the request).
type muteWriter struct {
	http.ResponseWriter
	hc *httpCall
}

func (m *muteWriter) WriteHeader(code int) {
	if !m.hc.muted.Load() {
		m.ResponseWriter.WriteHeader(code)
	}
}

func (m *muteWriter) Write(p []byte) (int, error) {
	if m.hc.muted.Load() {
		if m.hc.store != nil && m.hc.session != "" {
			if stream, idx, ok := sseEventID(p); ok {
				m.hc.store.forget(m.hc.session, stream, idx)
			}
		}
		return len(p), nil
	}
	return m.ResponseWriter.Write(p)
}

// sseEventID parses the id field of one SSE event go-sdk writes
// ("event: message\nid: STREAM_INDEX\ndata: ..."), as go-sdk numbers the
// events of a session's streams.
func sseEventID(p []byte) (stream string, idx int, ok bool) {
	for len(p) > 0 {
		line := p
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			line, p = p[:i], p[i+1:]
		} else {
			p = nil
		}
		if v, found := bytes.CutPrefix(line, []byte("id: ")); found {
			s, n, cut := strings.Cut(string(v), "_")
			idx, err := strconv.Atoi(n)
			return s, idx, cut && err == nil && idx >= 0 && !strings.Contains(n, "_")
		}
		if len(line) == 0 {
			break // the event's end
		}
	}
	return "", 0, false
}

// Flush is http.Flusher, which go-sdk's event streams need.
func (m *muteWriter) Flush() {
	if !m.hc.muted.Load() {
		_ = http.NewResponseController(m.ResponseWriter).Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (m *muteWriter) Unwrap() http.ResponseWriter { return m.ResponseWriter }

// rpcErrorWriter turns plain-text HTTP refusals (go-sdk's http.Error: an
// unknown method, a malformed body, an unknown session, a wrong Accept;
// ours: a Host or Origin refused) into JSON-RPC error responses with the
// same status: the transport
// specification allows a JSON-RPC error without id in the body of such a
// response, and clients then show the reason instead of a bare status.
type rpcErrorWriter struct {
	http.ResponseWriter
	status int             // a refusal being rewritten; 0: passing through
	text   strings.Builder // its plain text, bounded
}

func (e *rpcErrorWriter) WriteHeader(code int) {
	h := e.Header()
	if code >= 400 && e.status == 0 && strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		e.status = code
		return
	}
	e.ResponseWriter.WriteHeader(code)
}

func (e *rpcErrorWriter) Write(p []byte) (int, error) {
	if e.status == 0 {
		return e.ResponseWriter.Write(p)
	}
	if room := 1024 - e.text.Len(); room > 0 {
		e.text.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Flush is http.Flusher.
func (e *rpcErrorWriter) Flush() {
	if e.status == 0 {
		_ = http.NewResponseController(e.ResponseWriter).Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (e *rpcErrorWriter) Unwrap() http.ResponseWriter { return e.ResponseWriter }

// finish writes the rewritten refusal, if any.
func (e *rpcErrorWriter) finish() {
	if e.status == 0 {
		return
	}
	msg := strings.TrimSpace(e.text.String())
	code := rpcCodeOf(e.status, msg)
	if after, ok := strings.CutPrefix(msg, "JSON RPC not handled: "); ok {
		msg = "method not found: " + after
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	h := e.Header()
	h.Set("Content-Type", "application/json")
	h.Del("X-Content-Type-Options")
	e.ResponseWriter.WriteHeader(e.status)
	e.ResponseWriter.Write(b)
}

// rpcCodeOf is the JSON-RPC code of a go-sdk refusal.
func rpcCodeOf(status int, msg string) int {
	switch {
	case strings.Contains(msg, "JSON RPC not handled"):
		return -32601 // method not found
	case strings.Contains(msg, "malformed payload"), strings.Contains(msg, "failed to read body"), strings.Contains(msg, "non-empty body"):
		return -32700 // parse error
	case status == http.StatusNotFound:
		return -32001 // session not found (as the TypeScript SDK words it)
	case status >= 500:
		return -32603
	case status == http.StatusRequestEntityTooLarge:
		return -32600
	case strings.Contains(msg, "invalid request"), strings.Contains(msg, "missing id"), strings.Contains(msg, "unexpected id"):
		return -32600
	}
	return -32000 // transport-level refusal
}
