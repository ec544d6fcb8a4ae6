// Package transport serves an MCP server (a go-sdk *sdk.Server, built by
// package mcp with its tools) to clients: streamable HTTP in two protocol
// lanes behind one endpoint (lanes.go), the request checks in front of
// go-sdk (Host allowlist, cross-origin, body cap, the client token, the
// guard), call cancellation and stream resumption (calls.go, events.go),
// the TCP and Unix-socket listeners and the connection cap, and the stdio
// transport of serve --stdio. It knows nothing of the tools: what it needs
// from them (the body cap, how a call's context names its client) comes in
// Config.
package transport

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/serverfs/serverfs/internal/settings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/mcp/internal/rawjson"
)

// Path is where the MCP endpoint is served.
const Path = "/mcp"

// DefaultListen and DefaultAllowedHosts are SERVERFS_LISTEN's and
// SERVERFS_ALLOWED_HOSTS's defaults. The tunnel's requests arrive with
// "Host: serverfs-mcp:8000".
const (
	DefaultListen       = "0.0.0.0:8000"
	DefaultAllowedHosts = "serverfs-mcp,localhost,127.0.0.1,[::1]"
)

// DefaultMaxRequestBytes caps a request body when Config.MaxRequestBytes
// is unset: tool arguments are small (the tools raise it for file content).
const DefaultMaxRequestBytes = 1 << 20

// sessionIdleTimeout closes sessions a client abandoned (go-sdk keeps them
// forever otherwise).
const sessionIdleTimeout = 30 * time.Minute

// Config is the transport's configuration.
type Config struct {
	// Network is "tcp" (Listen is IP:PORT) or "unix" (Listen is the
	// socket's absolute path, from SERVERFS_LISTEN=unix:/path).
	Network      string
	Listen       string
	SocketGroup  int      // SERVERFS_LISTEN_GROUP's gid, -1 when unset
	AllowedHosts []string // lower-case host names, without ports
	// AuthToken is the client token from SERVERFS_AUTH_TOKEN_FILE; unset:
	// no client authentication.
	AuthToken Token
	// Warnings are configuration smells start-up logs (a world-readable
	// token file); they do not stop it.
	Warnings []string
	// Guard bounds sessions, batches and slow readers.
	Guard GuardConfig
	// MaxConnections caps open HTTP connections (SERVERFS_MAX_CONNECTIONS,
	// LimitConnections): one past it is answered 503 and closed at once.
	MaxConnections int
	// MaxRequestBytes caps a request body (0: DefaultMaxRequestBytes);
	// the tools size it (mcp.RequestBytes: room for write content).
	MaxRequestBytes int64
	// CallContext, when set, gives the context of a tools/call or
	// resources/read the name of its client (its session; on the
	// stateless lane its host and clientInfo name): the tools' heavy-call
	// gate orders calls by it (mcp.WithClient).
	CallContext func(ctx context.Context, client string) context.Context `json:"-"`
}

// LoadConfig reads SERVERFS_LISTEN, SERVERFS_LISTEN_GROUP,
// SERVERFS_ALLOWED_HOSTS, SERVERFS_AUTH_TOKEN_FILE and the session,
// write-timeout and connection variables, returning one problem line per
// bad value. Problems never hold the token.
func LoadConfig(environ []string) (Config, []string) {
	env := settings.EnvMap(environ)
	cfg := Config{Network: "tcp", Listen: DefaultListen, SocketGroup: -1}
	var probs []string
	cfg.Guard = loadGuardConfig(env, &probs)
	cfg.MaxConnections = int(settings.LimitOr(env, &probs, "SERVERFS_MAX_CONNECTIONS", int64(defaultMaxConnections())))
	if v := env["SERVERFS_LISTEN"]; strings.HasPrefix(v, "unix:") {
		if p := unixSocketProblem(strings.TrimPrefix(v, "unix:")); p != "" {
			probs = append(probs, fmt.Sprintf("SERVERFS_LISTEN=%q: %s", v, p))
		} else {
			cfg.Network, cfg.Listen = "unix", strings.TrimPrefix(v, "unix:")
		}
	} else if v != "" {
		host, port, err := net.SplitHostPort(v)
		if err != nil || port == "" || (host != "" && net.ParseIP(host) == nil && host != "localhost") {
			probs = append(probs, fmt.Sprintf("SERVERFS_LISTEN=%q: must be IP:PORT, e.g. 0.0.0.0:8000 or 127.0.0.1:8000, or unix:/absolute/path.sock", v))
		} else {
			cfg.Listen = v
		}
	}
	if v := env["SERVERFS_LISTEN_GROUP"]; v != "" {
		gid, p := lookupGroup(v)
		switch {
		case p != "":
			probs = append(probs, fmt.Sprintf("SERVERFS_LISTEN_GROUP=%q: %s", v, p))
		case !strings.HasPrefix(env["SERVERFS_LISTEN"], "unix:"):
			probs = append(probs, "SERVERFS_LISTEN_GROUP: only a unix: listener (SERVERFS_LISTEN=unix:/path) has a group")
		default:
			cfg.SocketGroup = gid
		}
	}
	if v := env["SERVERFS_AUTH_TOKEN_FILE"]; v != "" {
		tok, warns, p := loadToken(v)
		if p != "" {
			probs = append(probs, p)
		}
		cfg.AuthToken, cfg.Warnings = tok, append(cfg.Warnings, warns...)
	}
	hosts := DefaultAllowedHosts
	if v := env["SERVERFS_ALLOWED_HOSTS"]; v != "" {
		hosts = v
	}
	for _, h := range strings.Split(hosts, ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" {
			continue
		}
		if strings.ContainsAny(h, "/ @:") && !(strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]")) {
			probs = append(probs, fmt.Sprintf("SERVERFS_ALLOWED_HOSTS: %q is not a host name (no scheme, port or path)", h))
			continue
		}
		cfg.AllowedHosts = append(cfg.AllowedHosts, strings.Trim(h, "[]"))
	}
	if n := openFileLimit(); uint64(cfg.MaxConnections) >= n {
		cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("SERVERFS_MAX_CONNECTIONS=%d is not below the open-file limit (%d): connections can leave no file descriptor for reads and searches; lower it or raise the limit (ulimit -n, LimitNOFILE=)", cfg.MaxConnections, n))
	}
	if len(cfg.AllowedHosts) == 0 && len(probs) == 0 {
		probs = append(probs, "SERVERFS_ALLOWED_HOSTS is empty: no request could be served")
	}
	return cfg, probs
}

// NewHandler serves the MCP endpoint over streamable HTTP, in two lanes
// behind one dispatcher (lanes.go): go-sdk's stateful handler for clients
// of 2025-03-26 ... 2025-11-25 (initialize, Mcp-Session-Id, DELETE, the GET
// stream: the OpenAI tunnel is one) and its stateless handler for
// 2026-07-28 requests (server/discover, the version in each request's
// _meta). Both serve the same *sdk.Server: the same tools, limits and
// policy. Idle sessions are closed after 30 minutes so an abandoned
// client cannot leak them.
//
// In front of go-sdk: a Host-header allowlist (go-sdk checks Host only on
// loopback binds: DNS rebinding), cross-origin protection (go-sdk does not
// check Origin: a browser page must not drive the server), a body cap, and
// nothing but /mcp. With SERVERFS_AUTH_TOKEN_FILE set, every request must
// carry the token (requireToken, outermost: nothing else runs for a
// request without it). Then the guard (guard.go): no JSON-RPC batches, a
// cap on live sessions, a deadline on every response write. go-sdk's
// plain-text refusals become JSON-RPC errors (calls.go), and a call stops
// when its HTTP request ends or the client cancels it.
//
// NewHandler adds its receiving middleware to srv (calls.go): srv must
// not be served by another handler. log takes the refusals.
func NewHandler(srv *sdk.Server, cfg Config, log *slog.Logger) http.Handler {
	store := newEventStore(eventStoreBytes, eventSessionBytes, eventSessionStreams)
	tracked := &calls{store: store, callContext: cfg.CallContext}
	srv.AddReceivingMiddleware(tracked.middleware)
	bodyCap := cfg.MaxRequestBytes
	if bodyCap <= 0 {
		bodyCap = DefaultMaxRequestBytes
	}
	getServer := func(*http.Request) *sdk.Server { return srv }
	stateful := sdk.NewStreamableHTTPHandler(getServer, &sdk.StreamableHTTPOptions{
		SessionTimeout:      sessionIdleTimeout,
		MaxRequestBodyBytes: bodyCap,
		// Stream resumption (2025-11-25): priming events, numbered
		// events, replay after a GET's Last-Event-ID (events.go).
		EventStore: store,
		// The allowlist below is the one Host check. go-sdk's own (on
		// connections to a loopback address, any Host but localhost and
		// loopback IPs, case-sensitively) would refuse hosts the operator
		// allowed, e.g. a reverse proxy on the same machine.
		DisableLocalhostProtection: true,
	})
	stateless := sdk.NewStreamableHTTPHandler(getServer, &sdk.StreamableHTTPOptions{
		Stateless:                    true,
		MaxRequestBodyBytes:          bodyCap,
		DisableLocalhostProtection:   true,
		PropagateRequestCancellation: true,
	})
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.Warn("refused request", "event", "http_refused", "reason", "cross-origin")
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
	}))
	allowed := map[string]bool{}
	for _, h := range cfg.AllowedHosts {
		allowed[h] = true
	}
	statelessGuard := newGuard(log, cfg.Guard, srv, stateless).(*guard)
	statelessGuard.sessionless = true
	protected := cop.Handler(&lanes{stateful: newGuard(log, cfg.Guard, srv, stateful), stateless: statelessGuard, calls: tracked})
	return requireToken(cfg.AuthToken, log, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w := &rpcErrorWriter{ResponseWriter: rw}
		defer w.finish()
		if !allowed[hostOnly(r.Host)] {
			log.Warn("refused request", "event", "http_refused", "reason", "host not allowed", "host", rawjson.LogString(r.Host))
			http.Error(w, "host not allowed", http.StatusForbidden)
			return
		}
		if r.URL.Path != Path {
			http.NotFound(rw, r) // not an MCP endpoint: no JSON-RPC
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, bodyCap)
		protected.ServeHTTP(w, r)
	}))
}

// hostOnly lower-cases a Host header and drops its port and IPv6 brackets.
func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.Trim(strings.ToLower(h), "[]")
}

// NewHTTPServer returns the http.Server for handler with timeouts set. There
// is no server-wide write timeout: a streamable GET stream is long-lived by
// design; the guard puts SERVERFS_WRITE_TIMEOUT_SECONDS on each write
// instead, and every tool bounds its own time. A connection between
// requests closes after connIdleTimeout, also one whose client never read
// its last answer (connlimit.go); serve caps the open ones with
// LimitConnections, whose pre-auth budget this server's handler (NewHandler)
// needs: ConnContext tells it a request's connection, and the header
// timeout closes a connection whose headers stall.
func NewHTTPServer(listen string, handler http.Handler) *http.Server {
	return &http.Server{
		Addr:              listen,
		Handler:           handler,
		ConnContext:       withConn,
		ReadHeaderTimeout: preAuthHeaderTimeout,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       connIdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
}
