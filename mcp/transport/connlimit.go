package transport

import (
	"log/slog"
	"net"
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

// ConnLimitListener is a listener that keeps at most max connections of
// its own open.
type ConnLimitListener struct {
	net.Listener
	max int64
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
	open     atomic.Int64
	refused  atomic.Int64 // since the last log line
	lastLog  atomic.Int64 // UnixNano of the last log line
	total    atomic.Int64 // refusals ever, for tests
}

// LimitConnections wraps ln so that at most max of its connections are open
// at once, each TCP one dropped by the kernel when its sent data stays
// unacknowledged for stall (serve: SERVERFS_WRITE_TIMEOUT_SECONDS, the
// bound of a response write; 0: the kernel's default); log (may be nil)
// gets the refusals, at most one line per 10 s.
func LimitConnections(ln net.Listener, max int, stall time.Duration, log *slog.Logger) *ConnLimitListener {
	return &ConnLimitListener{Listener: ln, max: int64(max), stall: stall, log: log, LogEvery: connRefusalLogInterval}
}

// Accept returns the next connection that fits under the cap. One past it
// gets a 503 and is closed; Accept then accepts on, so it never blocks for
// longer than the listener underneath does.
func (l *ConnLimitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.max {
			l.setStall(c)
			return &countedConn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		l.refuse(c)
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
	n := l.refused.Add(1)
	now := time.Now().UnixNano()
	last := l.lastLog.Load()
	if l.log == nil || now-last < int64(l.LogEvery) || !l.lastLog.CompareAndSwap(last, now) {
		return
	}
	l.refused.Add(-n)
	l.log.Warn("refused connections", "event", "http_refused", "reason", "connection cap", "max_connections", l.max, "refused", n)
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
func (l *ConnLimitListener) Open() int { return int(l.open.Load()) }

// Refused is the number of connections refused since the listener opened.
func (l *ConnLimitListener) Refused() int { return int(l.total.Load()) }

// countedConn gives its slot back when it is first closed.
type countedConn struct {
	net.Conn
	l      *ConnLimitListener
	closed atomic.Bool
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		c.l.open.Add(-1)
	}
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
