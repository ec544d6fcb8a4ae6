package mcp

import (
	"net/http/httptest"
	"testing"

	"github.com/serverfs/serverfs/mcp/transport"
)

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
