package mcp

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/mcp/transport"
	"github.com/serverfs/serverfs/mcp/transport/transporttest"
)

// headerRT adds static headers to every request, as the tunnel client's
// MCP_EXTRA_HEADERS does.
type headerRT struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// serveHTTPEnv is serveHTTP with extra environment for loadHTTPConfig.
func (e *testEnv) serveHTTPEnv(t *testing.T, environ []string) string {
	t.Helper()
	cfg, probs := loadHTTPConfig(environ)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	ts := httptest.NewServer(newHandler(e.deps, cfg, testVer))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL + transport.Path
}

func TestClientToken(t *testing.T) {
	e := newEnv(t)
	// Debug: whatever the server logs at any level must not hold the token.
	e.deps.Log = &Logger{Logger: slog.New(slog.NewJSONHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	url := e.serveHTTPEnv(t, []string{"SERVERFS_AUTH_TOKEN_FILE=" + transporttest.WriteToken(t, transporttest.Token+"\n", 0o600)})

	// The tunnel-style header passes: a real go-sdk client whose transport
	// adds it to every request (initialize, the GET stream, calls, DELETE).
	tunnel := &http.Client{Transport: headerRT{http.DefaultTransport, map[string]string{transport.AuthHeader: transporttest.Token}}}
	c := sdk.NewClient(&sdk.Implementation{Name: "tunnel-like", Version: "0"}, nil)
	cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: tunnel, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("client with the token header: %v", err)
	}
	res := e.call(t, cs, "list_workdirs", map[string]any{})
	if res.IsError || !strings.Contains(resultText(res), `"wd"`) {
		t.Fatalf("list_workdirs with the token: %s", resultText(res))
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
		{"wrong token", map[string]string{transport.AuthHeader: strings.Replace(transporttest.Token, "q", "Q", 1)}},
		{"token with a suffix", map[string]string{transport.AuthHeader: transporttest.Token + "x"}},
		{"token prefix", map[string]string{transport.AuthHeader: transporttest.Token[:len(transporttest.Token)-1]}},
		{"token in Authorization", map[string]string{"Authorization": "Bearer " + transporttest.Token}},
		{"token in another header", map[string]string{"X-Token": transporttest.Token}},
		{"token with its newline", map[string]string{transport.AuthHeader: transporttest.Token + "\n"}},
	} {
		hc := &http.Client{Transport: headerRT{http.DefaultTransport, c.headers}}
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
		{"tunnel-style header", func(r *http.Request) { r.Header.Set(transport.AuthHeader, transporttest.Token) }, http.StatusOK},
		{"header name in lower case", func(r *http.Request) { r.Header["x-serverfs-token"] = []string{transporttest.Token} }, http.StatusOK},
		{"no token", nil, http.StatusUnauthorized},
		{"empty token", func(r *http.Request) { r.Header.Set(transport.AuthHeader, "") }, http.StatusUnauthorized},
		{"wrong token", func(r *http.Request) { r.Header.Set(transport.AuthHeader, "x"+transporttest.Token[1:]) }, http.StatusUnauthorized},
		{"Authorization: Bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+transporttest.Token) }, http.StatusUnauthorized},
		{"token as a query parameter", func(r *http.Request) { r.URL.RawQuery = "token=" + transporttest.Token }, http.StatusUnauthorized},
		{"two token headers, one right", func(r *http.Request) {
			r.Header.Add(transport.AuthHeader, transporttest.Token)
			r.Header.Add(transport.AuthHeader, "wrong")
		}, http.StatusUnauthorized},
		{"another path without the token", func(r *http.Request) { r.URL.Path = "/.well-known/oauth-protected-resource" }, http.StatusUnauthorized},
		{"another path with the token", func(r *http.Request) {
			r.URL.Path = "/.well-known/oauth-protected-resource"
			r.Header.Set(transport.AuthHeader, transporttest.Token)
		}, http.StatusNotFound},
	} {
		code, body := rawPost(t, url, c.mod)
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
			if err := json.Unmarshal([]byte(body), &msg); err != nil || msg.JSONRPC != "2.0" || !strings.HasPrefix(msg.Error.Message, string(errs.Unauthorized)+": ") || !strings.Contains(msg.Error.Message, transport.AuthHeader) {
				t.Errorf("%s: 401 body %q (%v)", c.name, body, err)
			}
		}
		if strings.Contains(body, transporttest.Token[:12]) {
			t.Errorf("%s: the answer holds the token", c.name)
		}
	}

	log := e.log.String()
	if strings.Contains(log, transporttest.Token[:12]) {
		t.Fatalf("the server log holds the token:\n%s", log)
	}
	for _, want := range []string{`"reason":"no client token"`, `"reason":"wrong client token"`, `"reason":"more than one client token"`, `"tool":"list_workdirs"`} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
}
