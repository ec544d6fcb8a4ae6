package transport

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type clientKey struct{}

// TestHandlerServesAnyServer: NewHandler serves a go-sdk server it did not
// build (one tool, none of ServerFS's) over real HTTP on both lanes, and a
// call's context carries the client name CallContext gave it: the
// session's id on the session lane, the host and clientInfo name on the
// stateless one.
func TestHandlerServesAnyServer(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "echo", Version: "0"}, nil)
	var mu sync.Mutex
	var seen []string
	srv.AddTool(&sdk.Tool{Name: "who", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		name, _ := ctx.Value(clientKey{}).(string)
		mu.Lock()
		seen = append(seen, name)
		mu.Unlock()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "client " + name}}}, nil
	})
	cfg, probs := LoadConfig([]string{"SERVERFS_ALLOWED_HOSTS=127.0.0.1"})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	cfg.CallContext = func(ctx context.Context, client string) context.Context {
		return context.WithValue(ctx, clientKey{}, client)
	}
	ts := httptest.NewServer(NewHandler(srv, cfg, slog.New(slog.DiscardHandler)))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})

	call := func(version string) (string, string) {
		c := sdk.NewClient(&sdk.Implementation{Name: "handler-test", Version: "0"}, nil)
		cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: ts.URL + Path, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connect at %s: %v", version, err)
		}
		defer cs.Close()
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "who", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("at %s: %v %+v", version, err, res)
		}
		return res.Content[0].(*sdk.TextContent).Text, cs.ID()
	}
	got, id := call("2025-11-25")
	if want := "client session " + id; id == "" || got != want {
		t.Errorf("session lane: %q, want %q", got, want)
	}
	if got, _ := call(statelessVersion); got != "client host 127.0.0.1 name handler-test" {
		t.Errorf("stateless lane: %q, want the host and the clientInfo name", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Errorf("calls seen: %q, want 2", seen)
	}
}
