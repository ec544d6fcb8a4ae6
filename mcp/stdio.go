package mcp

import (
	"encoding/json"
	"io"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioTransport is the transport of serve --stdio: go-sdk's IOTransport on
// stdin and stdout, with JSON-RPC batches refused as over HTTP (guard.go).
// go-sdk v1.8.0 refuses a batch on stdio only once 2025-06-18 or later is
// negotiated; a client that negotiated 2025-03-26 could otherwise start
// thousands of calls with one message. Each message from stdin is read
// whole; a batch is answered with one JSON-RPC error (id null) and never
// reaches go-sdk. The answer is written under the same lock as go-sdk's
// messages (one Write each), so lines never interleave.
func StdioTransport(stdin io.Reader, stdout io.Writer) sdk.Transport {
	out := &lockedWriter{w: stdout}
	pr, pw := io.Pipe()
	go func() {
		dec := json.NewDecoder(stdin)
		for {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				if err == io.EOF {
					pw.Close()
				} else {
					pw.CloseWithError(err)
				}
				return
			}
			if len(raw) > 0 && raw[0] == '[' {
				out.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not supported: send one request per message"}}` + "\n"))
				continue
			}
			if _, err := pw.Write(append(raw, '\n')); err != nil {
				return // the session ended
			}
		}
	}()
	return &sdk.IOTransport{Reader: pr, Writer: out}
}

// lockedWriter serializes whole writes to w; Close does not close w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }
