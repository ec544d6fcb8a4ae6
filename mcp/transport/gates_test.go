package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/mcp/transport/transporttest"
)

// Tests of the HTTP handler's gates (the client token, Host and Origin,
// the body cap) on a toy server: one tool, none of ServerFS's.

// serveToy serves a server with one tool, echo, through NewHandler with
// environ's configuration (the Host allowlist left at its default), over
// real HTTP; it returns the endpoint and the handler's log (debug level).
func serveToy(t *testing.T, environ []string) (string, *syncBuffer) {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "toy", Version: "0"}, nil)
	srv.AddTool(&sdk.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo"}}}, nil
	})
	cfg, probs := LoadConfig(environ)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	log := &syncBuffer{}
	ts := httptest.NewServer(NewHandler(srv, cfg, slog.New(slog.NewJSONHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL + Path, log
}

// syncBuffer is a log the handler's goroutines write while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestClientToken(t *testing.T) {
	// Debug: whatever the server logs at any level must not hold the token.
	url, log := serveToy(t, []string{"SERVERFS_AUTH_TOKEN_FILE=" + transporttest.WriteToken(t, transporttest.Token+"\n", 0o600)})

	// The tunnel-style header passes: a real go-sdk client whose transport
	// adds it to every request (initialize, the GET stream, calls, DELETE).
	tunnel := &http.Client{Transport: transporttest.HeaderRT{Base: http.DefaultTransport, Headers: map[string]string{AuthHeader: transporttest.Token}}}
	c := sdk.NewClient(&sdk.Implementation{Name: "tunnel-like", Version: "0"}, nil)
	cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: tunnel, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("client with the token header: %v", err)
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{}})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "echo" {
		t.Fatalf("a call with the token: %v %+v", err, res)
	}
	if err := cs.Close(); err != nil {
		t.Fatalf("closing the session (DELETE with the token): %v", err)
	}

	// Every other shape is refused, by a real client too.
	for _, c := range []struct {
		name    string
		headers map[string]string
	}{
		{"no token", nil},
		{"wrong token", map[string]string{AuthHeader: strings.Replace(transporttest.Token, "q", "Q", 1)}},
		{"token with a suffix", map[string]string{AuthHeader: transporttest.Token + "x"}},
		{"token prefix", map[string]string{AuthHeader: transporttest.Token[:len(transporttest.Token)-1]}},
		{"token in Authorization", map[string]string{"Authorization": "Bearer " + transporttest.Token}},
		{"token in another header", map[string]string{"X-Token": transporttest.Token}},
		{"token with its newline", map[string]string{AuthHeader: transporttest.Token + "\n"}},
	} {
		hc := &http.Client{Transport: transporttest.HeaderRT{Base: http.DefaultTransport, Headers: c.headers}}
		cl := sdk.NewClient(&sdk.Implementation{Name: "intruder", Version: "0"}, nil)
		if cs, err := cl.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil); err == nil {
			cs.Close()
			t.Errorf("%s: a go-sdk client connected", c.name)
		}
	}

	// Raw requests: the status, the coded body, the challenge.
	for _, c := range []struct {
		name string
		mod  func(*http.Request)
		want int
	}{
		{"tunnel-style header", func(r *http.Request) { r.Header.Set(AuthHeader, transporttest.Token) }, http.StatusOK},
		{"header name in lower case", func(r *http.Request) { r.Header["x-serverfs-token"] = []string{transporttest.Token} }, http.StatusOK},
		{"no token", nil, http.StatusUnauthorized},
		{"empty token", func(r *http.Request) { r.Header.Set(AuthHeader, "") }, http.StatusUnauthorized},
		{"wrong token", func(r *http.Request) { r.Header.Set(AuthHeader, "x"+transporttest.Token[1:]) }, http.StatusUnauthorized},
		{"Authorization: Bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+transporttest.Token) }, http.StatusUnauthorized},
		{"token as a query parameter", func(r *http.Request) { r.URL.RawQuery = "token=" + transporttest.Token }, http.StatusUnauthorized},
		{"two token headers, one right", func(r *http.Request) {
			r.Header.Add(AuthHeader, transporttest.Token)
			r.Header.Add(AuthHeader, "wrong")
		}, http.StatusUnauthorized},
		{"another path without the token", func(r *http.Request) { r.URL.Path = "/.well-known/oauth-protected-resource" }, http.StatusUnauthorized},
		{"another path with the token", func(r *http.Request) {
			r.URL.Path = "/.well-known/oauth-protected-resource"
			r.Header.Set(AuthHeader, transporttest.Token)
		}, http.StatusNotFound},
	} {
		code, body := transporttest.RawInitialize(t, url, c.mod)
		if code != c.want {
			t.Errorf("%s: status %d, want %d (%s)", c.name, code, c.want, strings.TrimSpace(body))
		}
		if code == http.StatusUnauthorized {
			var msg struct {
				JSONRPC string `json:"jsonrpc"`
				Error   struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &msg); err != nil || msg.JSONRPC != "2.0" || !strings.HasPrefix(msg.Error.Message, string(errs.Unauthorized)+": ") || !strings.Contains(msg.Error.Message, AuthHeader) {
				t.Errorf("%s: 401 body %q (%v)", c.name, body, err)
			}
		}
		if strings.Contains(body, transporttest.Token[:12]) {
			t.Errorf("%s: the answer holds the token", c.name)
		}
	}

	logged := log.String()
	if strings.Contains(logged, transporttest.Token[:12]) {
		t.Fatalf("the server log holds the token:\n%s", logged)
	}
	for _, want := range []string{`"reason":"no client token"`, `"reason":"wrong client token"`, `"reason":"more than one client token"`} {
		if !strings.Contains(logged, want) {
			t.Errorf("log lacks %s:\n%s", want, logged)
		}
	}
}

func TestHostAndOrigin(t *testing.T) {
	url, log := serveToy(t, nil)
	for _, c := range []struct {
		name string
		mod  func(*http.Request)
		want int
	}{
		{"default host", nil, http.StatusOK},
		{"foreign host", func(r *http.Request) { r.Host = "evil.example" }, http.StatusForbidden},
		{"foreign host with port", func(r *http.Request) { r.Host = "evil.example:8000" }, http.StatusForbidden},
		{"rebinding-like suffix", func(r *http.Request) { r.Host = "localhost.evil.example" }, http.StatusForbidden},
		{"cross-site origin", func(r *http.Request) {
			r.Header.Set("Origin", "https://evil.example")
			r.Header.Set("Sec-Fetch-Site", "cross-site")
		}, http.StatusForbidden},
		{"foreign origin without fetch metadata", func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, http.StatusForbidden},
		{"same-site is not same-origin", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "same-site") }, http.StatusForbidden},
		{"allowed host with port", func(r *http.Request) { r.Host = "localhost:8000" }, http.StatusOK},
		{"tunnel host", func(r *http.Request) { r.Host = "serverfs-mcp:8000" }, http.StatusOK},
		{"host case-insensitive", func(r *http.Request) { r.Host = "LocalHost:8000" }, http.StatusOK},
		{"ipv6 loopback", func(r *http.Request) { r.Host = "[::1]:8000" }, http.StatusOK},
		{"same-origin browser request", func(r *http.Request) {
			r.Header.Set("Origin", "http://"+r.Host)
			r.Header.Set("Sec-Fetch-Site", "same-origin")
		}, http.StatusOK},
	} {
		code, body := transporttest.RawInitialize(t, url, c.mod)
		if code != c.want {
			t.Errorf("%s: status %d, want %d (%s)", c.name, code, c.want, strings.TrimSpace(body))
		}
		if code == http.StatusOK && !strings.Contains(body, `"toy"`) {
			t.Errorf("%s: body %s", c.name, body)
		}
	}
	// Nothing but /mcp is served.
	if code, _ := transporttest.RawInitialize(t, strings.TrimSuffix(url, Path)+"/other", nil); code != http.StatusNotFound {
		t.Errorf("POST /other: %d", code)
	}
	// A body over the cap is refused.
	code, _ := transporttest.RawInitialize(t, url, func(r *http.Request) {
		big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", DefaultMaxRequestBytes) + `"}}`
		r.Body = io.NopCloser(strings.NewReader(big))
		r.ContentLength = int64(len(big))
	})
	if code < 400 {
		t.Errorf("oversized body: status %d", code)
	}
	if log := log.String(); !strings.Contains(log, `"reason":"host not allowed"`) || !strings.Contains(log, `"reason":"cross-origin"`) {
		t.Errorf("refusals not logged:\n%s", log)
	}
}
