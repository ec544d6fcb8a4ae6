package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/mcp/internal/rawjson"
)

// Stdio is the transport of serve --stdio: one MCP session on
// newline-delimited JSON over stdin and stdout, through go-sdk's public
// Transport interface.
//
// JSON-RPC batches are refused as over HTTP (guard.go): go-sdk v1.8.0
// refuses a batch on stdio only once 2025-06-18 or later is negotiated, so
// a client that negotiated 2025-03-26 could start thousands of calls with
// one message. A batch is answered with one JSON-RPC error (id null) and
// never reaches go-sdk.
//
// Every other message is framed as go-sdk's IOTransport frames it (a
// JSON decoder on the stream, each value at most DefaultMaxLineLength
// bytes) and handed over as jsonrpc.DecodeMessage would, but the common
// ones skip go-sdk's per-message JSON work:
//
//   - a request or notification of the usual shape ("jsonrpc", "id",
//     "method", "params", plain strings, an integer or plain string id) is
//     taken apart here (parseRequest) instead of by jsonrpc.DecodeMessage:
//     go-sdk v1.8.0's IOTransport decodes every message twice, first as a
//     batch, each time with a decoder that allocates a 32 KiB buffer;
//   - a successful response is written as {"jsonrpc":"2.0","id":ID,
//     "result":RESULT} around go-sdk's already compact result
//     (appendResponse) instead of jsonrpc.EncodeMessage re-encoding, and
//     so re-scanning, the whole result.
//
// Anything else (responses from the client, unusual ids, escapes, unknown
// keys, nesting past go-sdk's limit) goes through jsonrpc.DecodeMessage and
// EncodeMessage, so the bytes on the wire are the same either way
// (TestStdioTransportMatches compares with the previous transport, go-sdk's
// IOTransport behind a batch filter). Each message is one Write to stdout,
// under one lock.
//
// After notifications/cancelled the cancelled request's answer is not
// written (go-sdk writes it; the specification says a server should not),
// as on HTTP (calls.go).
//
// The transport is a rawjson.Splicer: served with Run (the context
// carries it), the tool results that hold their content with it (mcp's
// encodedResult) are written with that content in place of their token,
// so that go-sdk's encoding/json never scans it.
func Stdio(stdin io.Reader, stdout io.Writer) *StdioTransport {
	return &StdioTransport{r: stdin, w: stdout}
}

// StdioTransport is serve --stdio's transport (Stdio).
type StdioTransport struct {
	r io.Reader
	w io.Writer

	heldMu  sync.Mutex
	held    map[int64][]byte // content held for results not written yet
	nextTok int64
	holding atomic.Int32 // len(held), read without the lock
}

// Run serves s on t until the client closes stdin or ctx is done, with
// the content of tool results spliced (Stdio).
func (t *StdioTransport) Run(ctx context.Context, s *sdk.Server) error {
	return s.Run(rawjson.WithSplicer(ctx, t), t)
}

// Connect implements go-sdk's Transport.
func (t *StdioTransport) Connect(context.Context) (sdk.Connection, error) {
	c := newStdioConn(t.r, t.w, sdk.DefaultMaxLineLength)
	c.t = t
	return c, nil
}

// maxHeld bounds StdioTransport.held: a result go-sdk encodes but never
// writes (the session ends first) leaves its content there.
const maxHeld = 1024

// Hold implements rawjson.Splicer.
func (t *StdioTransport) Hold(b []byte) (int64, bool) {
	t.heldMu.Lock()
	defer t.heldMu.Unlock()
	if len(t.held) >= maxHeld {
		return 0, false
	}
	if t.held == nil {
		t.held = map[int64][]byte{}
	}
	t.nextTok++
	t.held[t.nextTok] = b
	t.holding.Store(int32(len(t.held)))
	return t.nextTok, true
}

// take finds a held token in the result of resp, a success: the bytes
// held and where the token is in resp.Result; nil when none is there.
func (t *StdioTransport) take(resp *jsonrpc.Response) (b []byte, start, end int) {
	if t == nil || t.holding.Load() == 0 || resp.Error != nil {
		return nil, 0, 0
	}
	start, end, ok := rawjson.MemberValue(resp.Result, "content")
	if !ok {
		return nil, 0, 0
	}
	tok, ok := rawjson.Token(resp.Result[start:end])
	if !ok {
		return nil, 0, 0
	}
	t.heldMu.Lock()
	defer t.heldMu.Unlock()
	b, ok = t.held[tok]
	if !ok {
		return nil, 0, 0
	}
	delete(t.held, tok)
	t.holding.Store(int32(len(t.held)))
	return b, start, end
}

// batchRefusal answers a JSON-RPC batch on stdio.
const batchRefusal = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not supported: send one request per message"}}` + "\n"

type stdioMsg struct {
	msg json.RawMessage
	err error
}

type stdioConn struct {
	t        *StdioTransport // nil in tests of the connection alone
	w        io.Writer
	incoming <-chan stdioMsg

	writeMu sync.Mutex
	buf     []byte // the fast path's output, under writeMu
	// cancelled holds the ids of requests the client cancelled whose
	// answer was not written yet (under writeMu; at most maxCancelled: a
	// cancel of an answered request stays until the session ends).
	cancelled map[string]bool
	pending   atomic.Int32 // len(cancelled), read without the lock

	closeOnce sync.Once
	closed    chan struct{}
}

func newStdioConn(r io.Reader, w io.Writer, limit int) *stdioConn {
	incoming := make(chan stdioMsg)
	closed := make(chan struct{})
	// As go-sdk's IOTransport: a goroutine reads, so that Close unblocks
	// Read.
	go func() {
		lr := &lineCapReader{r: r, limit: limit}
		dec := json.NewDecoder(lr)
		for {
			var raw json.RawMessage
			err := dec.Decode(&raw)
			select {
			case incoming <- stdioMsg{msg: raw, err: err}:
			case <-closed:
				return
			}
			if err != nil {
				return
			}
			lr.count = 0
		}
	}()
	return &stdioConn{w: w, incoming: incoming, closed: closed}
}

// lineCapReader bounds the bytes buffered for one message (go-sdk's
// frameLimitReader).
type lineCapReader struct {
	r            io.Reader
	limit, count int
}

var errLineTooLong = errors.New("inbound JSON-RPC frame exceeded the configured maximum line length")

func (r *lineCapReader) Read(p []byte) (int, error) {
	if r.count >= r.limit {
		return 0, errLineTooLong
	}
	if len(p) > r.limit-r.count {
		p = p[:r.limit-r.count]
	}
	n, err := r.r.Read(p)
	r.count += n
	return n, err
}

func (c *stdioConn) SessionID() string { return "" }

func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		default:
		}
		var raw json.RawMessage
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case v := <-c.incoming:
			if v.err != nil {
				return nil, v.err
			}
			raw = v.msg
		case <-c.closed:
			return nil, io.EOF
		}
		if len(raw) > 0 && raw[0] == '[' {
			c.writeMu.Lock()
			_, err := io.WriteString(c.w, batchRefusal)
			c.writeMu.Unlock()
			if err != nil {
				return nil, err
			}
			continue
		}
		msg, err := decodeMessage(raw)
		if req, ok := msg.(*jsonrpc.Request); ok && err == nil && req.Method == "notifications/cancelled" {
			c.noteCancel(req.Params)
		}
		return msg, err
	}
}

// maxCancelled bounds stdioConn.cancelled.
const maxCancelled = 1024

// idKey is the key of a request id in stdioConn.cancelled.
func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

// noteCancel records the request a notifications/cancelled names.
func (c *stdioConn) noteCancel(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.cancelled == nil {
		c.cancelled = map[string]bool{}
	}
	if len(c.cancelled) < maxCancelled {
		c.cancelled[idKey(id)] = true
		c.pending.Store(int32(len(c.cancelled)))
	}
}

// decodeMessage is what go-sdk's IOTransport makes of a message that is
// not an array: null is an empty batch (go-sdk tries every message as a
// batch first), anything else one message.
func decodeMessage(raw json.RawMessage) (jsonrpc.Message, error) {
	if string(raw) == "null" {
		return nil, errors.New("empty batch")
	}
	if !rawjson.TooDeep(raw) {
		if req, ok := parseRequest(raw); ok {
			return req, nil
		}
	}
	return jsonrpc.DecodeMessage(raw)
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, _ := msg.(*jsonrpc.Response)
	var held []byte
	var hs, he int
	if resp != nil {
		// Taken first, so that no return below leaves it held.
		held, hs, he = c.t.take(resp)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if resp != nil && c.pending.Load() > 0 && c.cancelled[idKey(resp.ID)] {
		delete(c.cancelled, idKey(resp.ID))
		c.pending.Store(int32(len(c.cancelled)))
		return nil // the answer of a cancelled request
	}
	if resp != nil {
		if b, ok := appendResponse(c.buf[:0], resp, held, hs, he); ok {
			if cap(b) <= 64<<10 {
				c.buf = b // reused while small
			}
			_, err := c.w.Write(b)
			return err
		}
		if held != nil {
			r := *resp
			r.Result = slices.Concat(resp.Result[:hs], held, resp.Result[he:])
			msg = &r
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %v", err)
	}
	_, err = c.w.Write(append(data, '\n'))
	return err
}

// appendResponse appends resp's wire form and a newline to dst, byte for
// byte what jsonrpc.EncodeMessage writes, when resp is a success with an
// integer or plain string id and a compact result (go-sdk's results are
// encoding/json output, so compact; encoding/json would only re-scan it).
// With held content (not nil), the result is written with held in place
// of resp.Result[hs:he], its token (held is compact: encodedResult's).
func appendResponse(dst []byte, resp *jsonrpc.Response, held []byte, hs, he int) ([]byte, bool) {
	if resp.Error != nil || len(resp.Result) == 0 || !rawjson.Compact(resp.Result) {
		return nil, false
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	switch id := resp.ID.Raw().(type) {
	case int64:
		dst = strconv.AppendInt(dst, id, 10)
	case string:
		if !rawjson.PlainString(id) {
			return nil, false
		}
		dst = append(append(append(dst, '"'), id...), '"')
	default:
		return nil, false
	}
	dst = append(dst, `,"result":`...)
	if held != nil {
		dst = append(append(append(dst, resp.Result[:hs]...), held...), resp.Result[he:]...)
	} else {
		dst = append(dst, resp.Result...)
	}
	return append(dst, '}', '\n'), true
}

// parseRequest takes apart a request or notification of the usual shape,
// giving the message jsonrpc.DecodeMessage would: an object of "jsonrpc"
// ("2.0"), "method" (printable ASCII, no escapes), optionally "id" (an
// integer of at most 15 digits, or a plain string) and "params" (any
// value but null), each once. Anything else is not ok (DecodeMessage
// decides). raw is valid JSON (the framing decoder checked it).
func parseRequest(raw []byte) (*jsonrpc.Request, bool) {
	p := rawjson.Scanner{B: raw}
	if !p.Consume('{') {
		return nil, false
	}
	var req jsonrpc.Request
	var seenVersion, seenMethod, seenID, seenParams bool
	for first := true; ; first = false {
		if p.Consume('}') {
			break
		}
		if !first && !p.Consume(',') {
			return nil, false
		}
		key, ok := p.Plain()
		if !ok || !p.Consume(':') {
			return nil, false
		}
		switch string(key) {
		case "jsonrpc":
			v, ok := p.Plain()
			if !ok || seenVersion || string(v) != "2.0" {
				return nil, false
			}
			seenVersion = true
		case "method":
			v, ok := p.Plain()
			if !ok || seenMethod {
				return nil, false
			}
			req.Method, seenMethod = string(v), true
		case "id":
			if seenID {
				return nil, false
			}
			seenID = true
			p.Space()
			if p.I < len(p.B) && p.B[p.I] == '"' {
				v, ok := p.Plain()
				if !ok {
					return nil, false
				}
				req.ID, _ = jsonrpc.MakeID(string(v))
				continue
			}
			start := p.I
			if p.I < len(p.B) && p.B[p.I] == '-' {
				p.I++
			}
			for p.I < len(p.B) && '0' <= p.B[p.I] && p.B[p.I] <= '9' {
				p.I++
			}
			digits := p.B[start:p.I]
			if len(digits) == 0 || len(digits) > 15 || digits[len(digits)-1] == '-' || (p.I < len(p.B) && (p.B[p.I] == '.' || p.B[p.I] == 'e' || p.B[p.I] == 'E')) {
				return nil, false
			}
			n, err := strconv.ParseInt(string(digits), 10, 64)
			if err != nil {
				return nil, false
			}
			req.ID, _ = jsonrpc.MakeID(float64(n))
		case "params":
			if seenParams {
				return nil, false
			}
			seenParams = true
			p.Space()
			start := p.I
			if !p.SkipValue() || string(p.B[start:p.I]) == "null" {
				return nil, false
			}
			req.Params = json.RawMessage(p.B[start:p.I])
		default:
			return nil, false
		}
	}
	p.Space()
	if p.I != len(p.B) || !seenVersion || !seenMethod {
		return nil, false
	}
	return &req, true
}
