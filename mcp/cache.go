package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// listTTLMillis is the cache hint (2026-07-28, SEP-2549) of server/discover
// and the list methods: what they answer is fixed for the life of a
// process (the inventory derives from the configuration read at start),
// so a client may keep it for a while; a restart with another
// configuration is seen within this time.
const listTTLMillis = 10 * 60 * 1000

// serverCapabilities are declared, not derived by go-sdk: the tool,
// resource and (empty) prompt lists never change while the process runs
// (listChanged false: no client needs subscriptions/listen for them), and
// prompts/list answers an empty list, which a 2026-07-28 server must
// declare.
func serverCapabilities() *sdk.ServerCapabilities {
	return &sdk.ServerCapabilities{
		//lint:ignore SA1019 clients before 2026-07-28 expect logging declared; it stays in force through the deprecation window
		Logging:   &sdk.LoggingCapabilities{},
		Tools:     &sdk.ToolCapabilities{},
		Resources: &sdk.ResourceCapabilities{},
		Prompts:   &sdk.PromptCapabilities{},
	}
}

// setCacheable sets the cache hints of every result that carries them.
// Lists and discovery: listTTLMillis. resources/read: file content, which
// changes under the server: 0 (stale at once). The scope is private
// everywhere: a server may require a client token, and its answers are
// for its own clients.
func setCacheable(_ context.Context, req sdk.Request, c *sdk.Cacheable) {
	c.CacheScope = "private"
	if _, ok := req.(*sdk.ReadResourceRequest); ok {
		c.TTLMs = 0
		return
	}
	c.TTLMs = listTTLMillis
}
