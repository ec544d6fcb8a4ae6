package transport

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The connection cap: net/http accepts and serves every connection it is
// given, each holding a file descriptor, a goroutine and buffers until it
// closes. ConnLimitListener hands net/http at most max open connections
// and closes any other at once, so Accept never waits for room.

// connIdleTimeout closes a keep-alive connection that sent no request for
// that long (http.Server.IdleTimeout). Also a connection whose client
// never read its last answer: once the answer is in the kernel's buffers
// the handler has returned and net/http waits for the next request, so
// only this timeout ends it (the write deadline is not running then).
// 30 s: an agent's calls come seconds apart, and a client whose
// connection closed while idle dials again.
const connIdleTimeout = 30 * time.Second

// connRefusalLogInterval bounds the refused-connection log lines: at most
// one per interval, counting the refusals since the last.
const connRefusalLogInterval = 10 * time.Second

// fdShareForConnections is the share of the open-file limit the default
// connection cap takes: the other half stays for what the server opens
// itself (workdir roots, the files and directories of searches, walks and
// reads, git pack files, workspaces, the bridge socket). maxDefaultConnections
// bounds it where the limit is huge (containers often allow 1,048,576):
// every open connection holds a goroutine and buffers (~20 KiB idle), and
// the default session cap (1,000) needs one or two connections a session.
const (
	fdShareForConnections = 2
	maxDefaultConnections = 4096
)

// defaultMaxConnections is SERVERFS_MAX_CONNECTIONS's default: half the
// process's open-file limit (after the Go runtime raised the soft limit
// to the hard one), at most maxDefaultConnections.
func defaultMaxConnections() int {
	return connectionsForFileLimit(openFileLimit())
}

func connectionsForFileLimit(nofile uint64) int {
	return int(max(1, min(nofile/fdShareForConnections, maxDefaultConnections)))
}

// openFileLimit is RLIMIT_NOFILE's soft limit; 1024 (the usual default)
// when it cannot be read.
func openFileLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == 0 {
		return 1024
	}
	return rl.Cur
}

// refusalResponse is what a connection past the cap reads before it is
// closed: a complete HTTP answer, small enough that writing it to a new
// connection never blocks.
const refusalResponse = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 62\r\n\r\nSERVER_BUSY: too many open connections; retry in a few seconds"

// The pre-authentication budget. A connection is pre-auth from its accept
// until its first request's headers are read and carry the client token
// (without a token configured: until they are read); then it is
// authenticated for as long as it stays open. Pre-auth connections hold at
// most maxPreAuth of the cap's slots, so the others are kept for
// authenticated ones: connections that never finish their headers, or
// never present the token, cannot fill the cap. Within the budget peers
// (peerOf: a local uid, or a remote address) share fairly: a connection
// of a peer holding fewer pre-auth connections evicts the oldest pre-auth
// connection of the peer holding the most (when that peer holds at least
// two more), so one peer's stalled connections never keep another's out;
// a peer's own stalled connections can only keep out that same peer's.
// NewHTTPServer's header timeout closes a stalled one after
// preAuthHeaderTimeout, and a request refused for its token closes its
// connection.
const (
	// maxPreAuthConnections bounds the budget: connections that
	// authenticate leave it within milliseconds, so a few hundred serve a
	// burst of hundreds of clients connecting at once.
	maxPreAuthConnections = 256
	// preAuthHeaderTimeout is http.Server.ReadHeaderTimeout: a client's
	// headers arrive in one packet or a few.
	preAuthHeaderTimeout = 5 * time.Second
)

// preAuthBudget is the pre-auth budget of a cap of maxConns connections: a
// quarter of it, at least 2 (a peer then always evicts from one that holds
// the whole budget), at most maxPreAuthConnections, never more than the
// cap.
func preAuthBudget(maxConns int) int {
	return min(maxConns, max(2, min(maxConns/4, maxPreAuthConnections)))
}

// ConnLimitListener is a listener that keeps at most max connections of
// its own open, of which at most maxPreAuth pre-auth.
type ConnLimitListener struct {
	net.Listener
	max, maxPreAuth int
	// stall is each TCP connection's TCP_USER_TIMEOUT (0: the kernel's
	// default): how long sent data may stay unacknowledged, a client's
	// closed receive window included, before the kernel drops the
	// connection. Without it, a connection closed with an unread answer
	// still queued stays in the kernel (FIN-WAIT-1, its send buffer held)
	// for as long as the client keeps answering zero-window probes:
	// measured, 200 non-readers of a ~400 KB answer held 200 such
	// sockets and ~52 MB of send queue a minute after the server closed
	// them, with no end in sight.
	stall time.Duration
	log   *slog.Logger
	// LogEvery is the least time between two refusal log lines
	// (connRefusalLogInterval); tests lengthen it before serving.
	LogEvery time.Duration

	mu      sync.Mutex
	open    int
	preAuth map[string][]*countedConn // per peer, oldest first
	nPre    int

	refused, evicted atomic.Int64 // since the last log line
	lastLog          atomic.Int64 // UnixNano of the last log line
	total, evictions atomic.Int64 // ever, for tests
}

// LimitConnections wraps ln so that at most max of its connections are open
// at once (preAuthBudget(max) of them pre-auth), each TCP one dropped by
// the kernel when its sent data stays unacknowledged for stall (serve:
// SERVERFS_WRITE_TIMEOUT_SECONDS, the bound of a response write; 0: the
// kernel's default); log (may be nil) gets the refusals and evictions, at
// most one line per 10 s.
func LimitConnections(ln net.Listener, max int, stall time.Duration, log *slog.Logger) *ConnLimitListener {
	return &ConnLimitListener{Listener: ln, max: max, maxPreAuth: preAuthBudget(max), stall: stall, log: log,
		LogEvery: connRefusalLogInterval, preAuth: map[string][]*countedConn{}}
}

// Accept returns the next connection that fits under the cap and the
// pre-auth budget, or for which a pre-auth connection of a peer holding
// more was evicted. One that does not fit gets a 503 and is closed; Accept
// then accepts on, so it never blocks for longer than the listener
// underneath does.
func (l *ConnLimitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		cc := &countedConn{Conn: c, l: l, peer: peerOf(c)}
		ok, victim := l.admit(cc)
		if victim != nil {
			// Its server goroutine sees the close and ends it; the slot
			// is the newcomer's already.
			victim.Conn.Close()
			l.evictions.Add(1)
			l.evicted.Add(1)
			l.note()
		}
		if ok {
			l.setStall(c)
			return cc, nil
		}
		l.refuse(c)
	}
}

// admit counts c in as pre-auth if it fits, evicting victim for it when
// the budget is full and another peer holds at least two more pre-auth
// connections than c's.
func (l *ConnLimitListener) admit(c *countedConn) (ok bool, victim *countedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= l.max || l.nPre >= l.maxPreAuth {
		top := ""
		for p, conns := range l.preAuth {
			if len(conns) > len(l.preAuth[top]) {
				top = p
			}
		}
		if len(l.preAuth[top]) < len(l.preAuth[c.peer])+2 {
			return false, nil
		}
		victim = l.preAuth[top][0]
		l.dropLocked(victim)
	}
	l.open++
	l.nPre++
	c.state = connPreAuth
	l.preAuth[c.peer] = append(l.preAuth[c.peer], c)
	return true, victim
}

// dropLocked gives c's slot back (under mu), once.
func (l *ConnLimitListener) dropLocked(c *countedConn) {
	switch c.state {
	case connGone:
		return
	case connPreAuth:
		conns := l.preAuth[c.peer]
		for i, o := range conns {
			if o == c {
				conns = append(conns[:i], conns[i+1:]...)
				break
			}
		}
		if len(conns) == 0 {
			delete(l.preAuth, c.peer)
		} else {
			l.preAuth[c.peer] = conns
		}
		l.nPre--
	}
	l.open--
	c.state = connGone
}

// authenticated moves c out of the pre-auth budget; its slot stays.
func (l *ConnLimitListener) authenticated(c *countedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.state == connPreAuth {
		l.dropLocked(c)
		l.open++
		c.state = connAuthenticated
	}
}

// refuse answers c with refusalResponse and closes it. The deadline only
// guards the write: a new connection's empty send buffer takes the answer
// at once. The request is not read (that could wait on the client), so a
// client that had sent it already may get a reset instead of the answer.
func (l *ConnLimitListener) refuse(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Write([]byte(refusalResponse))
	c.Close()
	l.total.Add(1)
	l.refused.Add(1)
	l.note()
}

// note logs the refusals and evictions since the last line, unless a line
// was logged within LogEvery.
func (l *ConnLimitListener) note() {
	now := time.Now().UnixNano()
	last := l.lastLog.Load()
	if l.log == nil || now-last < int64(l.LogEvery) || !l.lastLog.CompareAndSwap(last, now) {
		return
	}
	refused, evicted := l.refused.Swap(0), l.evicted.Swap(0)
	l.log.Warn("refused connections", "event", "http_refused", "reason", "connection cap", "max_connections", l.max,
		"max_pre_auth_connections", l.maxPreAuth, "refused", refused, "evicted_pre_auth", evicted)
}

// setStall sets c's TCP_USER_TIMEOUT, when c is TCP and l.stall is set.
// A failure leaves the kernel's default: the connection still works.
func (l *ConnLimitListener) setStall(c net.Conn) {
	tc, ok := c.(*net.TCPConn)
	if !ok || l.stall <= 0 {
		return
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return
	}
	_ = raw.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(l.stall.Milliseconds()))
	})
}

// Open is the number of connections accepted and not yet closed.
func (l *ConnLimitListener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// PreAuth is the number of open connections that are pre-auth.
func (l *ConnLimitListener) PreAuth() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.nPre
}

// Refused is the number of connections refused since the listener opened.
func (l *ConnLimitListener) Refused() int { return int(l.total.Load()) }

// Evicted is the number of pre-auth connections closed for another peer's
// since the listener opened.
func (l *ConnLimitListener) Evicted() int { return int(l.evictions.Load()) }

// countedConn gives its slot back when it is first closed.
type countedConn struct {
	net.Conn
	l     *ConnLimitListener
	peer  string
	state int // under l.mu: connPreAuth, connAuthenticated, connGone
}

const (
	connPreAuth = iota
	connAuthenticated
	connGone // closed or evicted: its slot is given back
)

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.dropLocked(c)
	c.l.mu.Unlock()
	return err
}

// CloseWrite keeps net/http's half-close (closeWriteAndWait) on the
// connection underneath.
func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// connKey is the context key of a request's *countedConn
// (http.Server.ConnContext, NewHTTPServer).
type connKey struct{}

// withConn is NewHTTPServer's ConnContext: a request's handler can then
// mark its connection authenticated.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*countedConn); ok {
		return context.WithValue(ctx, connKey{}, cc)
	}
	return ctx
}

// markAuthenticated moves the connection of a request's context out of the
// pre-auth budget (a no-op for one not from a ConnLimitListener).
func markAuthenticated(ctx context.Context) {
	if c, ok := ctx.Value(connKey{}).(*countedConn); ok {
		c.l.authenticated(c)
	}
}
