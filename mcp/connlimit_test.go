package mcp

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/serverfs/serverfs/mcp/transport"
)

// serveLimited serves the tools through transport.NewHandler and NewHTTPServer on a loopback
// listener capped at maxConns, as serve does; tune changes the server's
// timeouts or the listener's log interval before it serves. It returns the listener and the server's address.
func (e *testEnv) serveLimited(t *testing.T, environ []string, maxConns int, tune func(*http.Server, *transport.ConnLimitListener)) (*transport.ConnLimitListener, string) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return e.serveOn(t, inner, environ, maxConns, tune), inner.Addr().String()
}

// serveOn is serveLimited on the listener inner (TCP or a Unix socket).
func (e *testEnv) serveOn(t *testing.T, inner net.Listener, environ []string, maxConns int, tune func(*http.Server, *transport.ConnLimitListener)) *transport.ConnLimitListener {
	t.Helper()
	cfg, probs := loadHTTPConfig(environ)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	ln := transport.LimitConnections(inner, maxConns, cfg.Guard.WriteTimeout, e.deps.Log.Logger)
	srv := transport.NewHTTPServer("", newHandler(e.deps, cfg, testVer))
	tune(srv, ln)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		<-errc
	})
	return ln
}

// waitUntil polls cond until it holds, failing the test if it does not
// within a minute: the bound only keeps a broken server from hanging the
// test, it is not what the test measures.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after a minute: not %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// rawStatelessCall is an HTTP/1.1 request that calls tool on the
// 2026-07-28 lane (no session: every call is independent).
func rawStatelessCall(tool, args string) string {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	return "POST " + transport.Path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
		protocolVersionHeader + ": 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: " + tool + "\r\n" +
		fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body)) + body
}

// TestNonReadersClosedWhenIdle: 100 clients each POST a read whose answer
// is ~400 KB and never read it. The answers fit in the kernel's socket
// buffers, so every handler returns and the write deadline (an hour here)
// never fires; the idle timeout closes every connection, and the answer
// already in the kernel still reaches a client that reads it late, whole.
// With net/http's idle timeout unset (the connection waits for a next
// request: NewHTTPServer before had two minutes) they all stay open.
func TestNonReadersClosedWhenIdle(t *testing.T) {
	const clients = 100
	e := newEnv(t)
	line := strings.Repeat("y", 999) + "\n"
	writeFile(t, filepath.Join(e.root, "large.txt"), []byte(strings.Repeat(line, 400)))
	ln, addr := e.serveLimited(t, []string{"SERVERFS_WRITE_TIMEOUT_SECONDS=3600"}, 1000, func(s *http.Server, _ *transport.ConnLimitListener) { s.IdleTimeout = 200 * time.Millisecond })
	call := rawStatelessCall("read_text_file", `{"workdir":"wd","path":"large.txt"}`)
	conns := make([]net.Conn, clients)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, call); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	waitUntil(t, fmt.Sprintf("%d reads answered", clients), func() bool {
		n := 0
		for _, m := range logLines(t, e.log.String()) {
			if m["event"] == "tool_call" && m["tool"] == "read_text_file" {
				n++
			}
		}
		return n == clients
	})
	waitUntil(t, "every non-reader's connection closed", func() bool { return ln.Open() == 0 })

	// The server closed the connection after the answer, not instead of it.
	r := bufio.NewReader(conns[0])
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(b), strings.Repeat("y", 999)) || len(b) < 400_000 {
		t.Fatalf("a late reader's answer: %s, %d bytes, %v", resp.Status, len(b), err)
	}
	if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("after the answer: %d bytes, %v; want the server's close", n, err)
	}
}

// TestConnectionCap: with a cap of 3, three open connections (each
// authenticated by a first request) hold every slot; a fourth is answered
// 503 and closed at once,
// the three are still served, and once they close a client connects and
// calls a tool. A burst of refusals logs one line.
func TestConnectionCap(t *testing.T) {
	e := newEnv(t)
	// Connections that send nothing stay open as long as the test needs.
	ln, addr := e.serveLimited(t, nil, 3, func(s *http.Server, l *transport.ConnLimitListener) {
		s.ReadHeaderTimeout, s.IdleTimeout = time.Hour, time.Hour
		l.LogEvery = time.Hour
	})
	var held []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// A connection that sent nothing is pre-auth, and the pre-auth
		// budget of a cap of 3 is 2 (TestPreAuthBudget).
		io.WriteString(c, "GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("a first request: %v %v", resp, err)
		}
		resp.Body.Close()
		held = append(held, c)
	}
	waitUntil(t, "three connections open", func() bool { return ln.Open() == 3 && ln.PreAuth() == 0 })

	for i := range 5 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		// The bound only keeps a server that serves the connection from
		// hanging the test.
		c.SetReadDeadline(time.Now().Add(time.Minute))
		b, err := io.ReadAll(c)
		c.Close()
		if err != nil || !strings.HasPrefix(string(b), "HTTP/1.1 503 ") || !strings.Contains(string(b), "SERVER_BUSY") {
			t.Fatalf("connection %d past the cap read %q, %v; want a 503 and the server's close", i+4, b, err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(b))), nil)
		if err != nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("the refusal is not a well-formed 503: %v %v", resp, err)
		}
		if got, _ := io.ReadAll(resp.Body); !strings.HasPrefix(string(got), "SERVER_BUSY") {
			t.Fatalf("refusal body %q", got)
		}
	}
	// The client can read the refusal and its close before the listener
	// has counted it.
	waitUntil(t, "five refusals counted", func() bool { return ln.Refused() == 5 })
	if ln.Open() != 3 {
		t.Fatalf("refused %d, open %d; want 5 and 3", ln.Refused(), ln.Open())
	}
	lines := 0
	for _, m := range logLines(t, e.log.String()) {
		if m["reason"] == "connection cap" {
			lines++
			if m["refused"] != float64(1) || m["max_connections"] != float64(3) {
				t.Errorf("refusal log line %v", m)
			}
		}
	}
	if lines != 1 {
		t.Errorf("5 refusals within the interval logged %d lines, want 1", lines)
	}

	// The connections under the cap are served.
	io.WriteString(held[0], "GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(held[0]), nil)
	if err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a connection under the cap: %v %v", resp, err)
	}
	resp.Body.Close()

	for _, c := range held {
		c.Close()
	}
	waitUntil(t, "the held connections closed", func() bool { return ln.Open() == 0 })
	cs := e.client(t, "http://"+addr+transport.Path)
	if res := e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt"}); res.IsError || !strings.Contains(resultText(res), "alpha") {
		t.Fatalf("a client after the held connections closed: %s", resultText(res))
	}
	if ln.Refused() != 5 {
		t.Errorf("refused %d after room was made, want 5", ln.Refused())
	}
}

// TestUnreadAnswerDroppedByKernel: a connection the server closed with an
// unread answer still queued leaves the kernel once the client's window has
// stayed closed for the write timeout (1 s here: TCP_USER_TIMEOUT), instead
// of staying in FIN-WAIT-1 with its send buffer for as long as the client
// answers the kernel's zero-window probes.
func TestUnreadAnswerDroppedByKernel(t *testing.T) {
	const clients = 20
	e := newEnv(t)
	line := strings.Repeat("y", 999) + "\n"
	writeFile(t, filepath.Join(e.root, "large.txt"), []byte(strings.Repeat(line, 400)))
	ln, addr := e.serveLimited(t, []string{"SERVERFS_WRITE_TIMEOUT_SECONDS=1"}, 1000, func(s *http.Server, _ *transport.ConnLimitListener) { s.IdleTimeout = 200 * time.Millisecond })
	_, port, _ := net.SplitHostPort(addr)
	call := rawStatelessCall("read_text_file", `{"workdir":"wd","path":"large.txt"}`)
	for range clients {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, call); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "every non-reader's connection closed by the server", func() bool { return ln.Open() == 0 })
	waitUntil(t, "the kernel rid of the closed connections", func() bool { return kernelSockets(t, port) == 0 })
}

// kernelSockets counts the IPv4 TCP sockets of local port port that are not
// listening (/proc/net/tcp: state 0A is LISTEN).
func kernelSockets(t *testing.T, port string) int {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	suffix := fmt.Sprintf(":%04X", p)
	n := 0
	for _, l := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(l)
		if len(f) > 3 && strings.HasSuffix(f[1], suffix) && f[3] != "0A" {
			n++
		}
	}
	return n
}
