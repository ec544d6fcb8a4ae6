package transport

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// The two protocol lanes of /mcp. go-sdk v1.8.0 serves the
// 2026-07-28 revision (no initialize, no sessions, the protocol version and
// client capabilities in each request's _meta, server/discover) only from a
// handler with StreamableHTTPOptions.Stateless; a stateful handler answers
// such requests with -32022 and its older versions. A stateless handler,
// in turn, answers initialize but never issues an Mcp-Session-Id, refuses
// DELETE and the GET stream with 405, and forgets logging/setLevel between
// requests: the tunnel client (initialize 2025-06-18, the session id on
// every POST, DELETE at the end) and the older clients' session lifecycle
// need the stateful one. So two go-sdk handlers serve one *sdk.Server, and
// this dispatcher picks one per request (docs/protocol.md).

// protocolVersionHeader is the streamable HTTP version header; every
// request of a 2026-07-28 client carries it.
const protocolVersionHeader = "Mcp-Protocol-Version"

// statelessVersion is the first revision served by the stateless lane.
const statelessVersion = "2026-07-28"

// metaProtocolVersion is the _meta key of a 2026-07-28 request's version.
const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// lanes routes a request to the stateless handler (2026-07-28 and later)
// or the stateful one (initialize and sessions: 2025-03-26 ... 2025-11-25).
type lanes struct {
	stateful, stateless http.Handler
	calls               *calls
	flushes             flushQueue // the session lane's owed flushes (events.go)
}

func (l *lanes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var hc *httpCall
	if r.Method == http.MethodPost {
		acceptNotification(r)
		hc = l.calls.track(w, r)
		defer l.calls.done(hc)
		w = hc.writer()
	}
	if statelessRequest(r) {
		if hc != nil {
			hc.stateless, hc.remote = true, remoteHost(r.RemoteAddr)
		}
		l.stateless.ServeHTTP(w, r)
		return
	}
	// The session lane's event streams are resumable: they say when to
	// reconnect (events.go).
	rw := &retryWriter{ResponseWriter: w, flushes: &l.flushes}
	defer rw.finish()
	l.stateful.ServeHTTP(rw, r)
}

// acceptNotification lets a POST of notifications or responses through
// with "Accept: application/json" alone: go-sdk demands text/event-stream
// too, but answers those with 202 and no body, so the header's second half
// only ever matters for requests (the tunnel's mock service sends
// notifications/initialized so).
func acceptNotification(r *http.Request) {
	if acceptsEventStream(r.Header.Values("Accept")) || r.Body == nil {
		return
	}
	body, err := peekBody(r)
	if err != nil {
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &msg) == nil && (msg.ID == nil || msg.Method == "") {
		r.Header.Add("Accept", "text/event-stream")
	}
}

// peekBody reads r's body and leaves it readable again from its start,
// with the same error at its end (go-sdk words a refusal: 413 for
// *http.MaxBytesError).
func peekBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	var rest io.Reader = bytes.NewReader(body)
	if err != nil {
		rest = io.MultiReader(rest, errReader{err})
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{rest, r.Body}
	return body, err
}

// statelessRequest reports whether r belongs to the stateless lane:
//   - Mcp-Protocol-Version names 2026-07-28 or a later (or unknown, non-date)
//     version: the stateless handler negotiates or refuses it (-32022 with
//     the versions served);
//   - an older version, or an Mcp-Session-Id: the stateful lane, where the
//     session lives;
//   - neither (a client's first POST): the body decides. server/discover
//     and any request whose _meta carries a protocol version go stateless
//     (without the header, go-sdk answers the header error the revision
//     defines); everything else, initialize first, goes stateful.
//
// Only a POST without version header and session id has its body read
// here: the calls of an established session pay one header lookup.
func statelessRequest(r *http.Request) bool {
	if v := r.Header.Get(protocolVersionHeader); v != "" {
		return v >= statelessVersion
	}
	if r.Method != http.MethodPost || r.Header.Get(sessionHeader) != "" || r.Body == nil {
		return false
	}
	body, err := peekBody(r)
	if err != nil {
		return false
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return false // a batch, or not JSON: the stateful lane refuses it
	}
	_, versioned := msg.Params.Meta[metaProtocolVersion]
	return msg.Method == "server/discover" || versioned
}

// errReader returns err once the body's bytes are consumed.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// acceptsEventStream reports whether an Accept header admits
// text/event-stream (as go-sdk reads it).
func acceptsEventStream(values []string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "text/event-stream", "text/*", "*/*":
				return true
			}
		}
	}
	return false
}
