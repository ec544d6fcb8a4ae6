package mcp

import (
	"net/http"

	"github.com/serverfs/serverfs/mcp/transport"
)

// The tests of a real server over real HTTP wire the tools to the
// transport as serve does (cmd/serverfs): these helpers are that wiring.

// The protocol's header names and the stateless lane's version, as the
// transport speaks them.
const (
	sessionHeader         = "Mcp-Session-Id"
	protocolVersionHeader = "Mcp-Protocol-Version"
	statelessVersion      = "2026-07-28"
	// sseRetryMillis is the retry field of the transport's event streams.
	sseRetryMillis = 2000
	// batchRefusal is the stdio transport's answer to a JSON-RPC batch.
	batchRefusal = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not supported: send one request per message"}}` + "\n"
)

// transportConfig names transport.Config for embedding beside Config.
type transportConfig = transport.Config

// httpConfig is what serve loads from the environment for HTTP: the
// transport's configuration and the tools'.
type httpConfig struct {
	transportConfig
	Config
}

// loadHTTPConfig loads both, the tools' problems first.
func loadHTTPConfig(environ []string) (httpConfig, []string) {
	c, probs := LoadConfig(environ)
	tc, tprobs := transport.LoadConfig(environ)
	return httpConfig{tc, c}, append(probs, tprobs...)
}

// newHandler is the HTTP handler serve builds: d's tools behind the
// transport, with the body cap and the client names the tools need.
func newHandler(d *Deps, cfg httpConfig, version string) http.Handler {
	tc := cfg.transportConfig
	tc.MaxRequestBytes, tc.CallContext = RequestBytes(d), WithClient
	return transport.NewHandler(NewServer(d, version), tc, d.Log.Logger)
}
