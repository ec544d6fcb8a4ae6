package transporttest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// HeaderRT adds static headers to every request, as the tunnel client's
// MCP_EXTRA_HEADERS does.
type HeaderRT struct {
	Base    http.RoundTripper
	Headers map[string]string
}

// RoundTrip sends r with the headers set.
func (h HeaderRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.Headers {
		r.Header.Set(k, v)
	}
	return h.Base.RoundTrip(r)
}

// RawInitialize sends an MCP initialize request without go-sdk's client,
// changed by mod, and returns the status and at most 1 MiB of the body.
func RawInitialize(t *testing.T, url string, mod func(*http.Request)) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if mod != nil {
		mod(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}
