package mcp

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/mcp/transport"
	"github.com/serverfs/serverfs/mcp/transport/transporttest"
)

// stalledRequest is what a stalled client sends: a request line, and then
// nothing.
const stalledRequest = "POST /mcp HTTP/1.1\r\n"

// stallerUID is the other local user the stalled connections come from.
const stallerUID = 65534

// TestPreAuthStalledPeer is issue 43's attack, on TCP (loopback) and on a
// Unix socket: with the client token required and a cap of 20 connections,
// 20 sockets of another local user (a re-executed child of this test
// binary, uid 65534) send a request line, stall, and reopen as soon as
// the server closes them; meanwhile a real go-sdk client with the token,
// opening a new connection for every request, connects and calls a tool
// 30 times. Every call succeeds. Before the pre-auth budget the stalled
// sockets held every slot and the client was refused (503) from the start.
func TestPreAuthStalledPeer(t *testing.T) {
	if addr := os.Getenv("SFS_TEST_STALL"); addr != "" {
		stall(os.Getenv("SFS_TEST_STALL_NET"), addr, 20)
		os.Exit(0)
	}
	if os.Getuid() != 0 {
		t.Fatal("this test needs root to run the stalled connections as another uid (CI runs as root)")
	}
	// A directory uid 65534 can reach, for the copy of this binary it runs
	// and for the socket (the test's own directories are 0700).
	dir := traversableTempDir(t, "sfs-preauth-")
	bin := filepath.Join(dir, "mcp.test")
	copyExecutable(t, bin)

	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			e := newEnv(t)
			env := []string{"SERVERFS_AUTH_TOKEN_FILE=" + transporttest.WriteToken(t, transporttest.Token+"\n", 0o600)}
			var inner net.Listener
			var err error
			dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, inner.Addr().String())
			}
			if network == "tcp" {
				inner, err = net.Listen("tcp", "127.0.0.1:0")
			} else {
				// Mode 0660, group 65534: the staller is a member of the
				// socket's group, as the tunnel's user would be.
				inner, err = transport.Listen(transport.Config{Network: "unix", Listen: filepath.Join(dir, "mcp.sock"), SocketGroup: stallerUID})
			}
			if err != nil {
				t.Fatal(err)
			}
			ln := e.serveOn(t, inner, env, 20, func(_ *http.Server, l *transport.ConnLimitListener) { l.LogEvery = time.Hour })

			cmd := exec.Command(bin, "-test.run=^TestPreAuthStalledPeer$", "-test.count=1")
			cmd.Dir = dir
			cmd.Env = []string{"SFS_TEST_STALL_NET=" + network, "SFS_TEST_STALL=" + inner.Addr().String()}
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: stallerUID, Gid: stallerUID}}
			// The child ends when its stdin closes (stall), or is killed.
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				stdin.Close()
				cmd.Process.Kill()
				cmd.Wait()
			})
			// The stalled sockets fill what they may: every slot, or
			// the server has begun refusing them.
			waitUntil(t, "the stalled sockets holding what they may", func() bool { return ln.Open() == 20 || ln.Refused() > 0 })

			hc := &http.Client{Transport: transporttest.HeaderRT{Base: &http.Transport{DialContext: dial, DisableKeepAlives: true}, Headers: map[string]string{transport.AuthHeader: transporttest.Token}}}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			c := sdk.NewClient(&sdk.Implementation{Name: "tunnel-like", Version: "0"}, nil)
			cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://127.0.0.1" + transport.Path, HTTPClient: hc, MaxRetries: -1}, nil)
			if err == nil {
				err = listForHeaders(ctx, cs)
			}
			if err != nil {
				t.Logf("%s: 0 ok, 30 failed: the client could not connect", network)
				t.Fatalf("connecting beside the stalled sockets (refused %d): %v\n%s", ln.Refused(), err, out.String())
			}
			defer cs.Close()
			ok, failed := 0, 0
			for range 30 {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"workdir": "wd", "path": "sub/a.txt"}})
				if err == nil && !res.IsError && strings.Contains(resultText(res), "alpha") {
					ok++
				} else {
					failed++
				}
			}
			t.Logf("%s: %d ok, %d failed; stalled connections refused %d, evicted %d", network, ok, failed, ln.Refused(), ln.Evicted())
			if failed > 0 {
				t.Errorf("%d of 30 calls failed beside another user's stalled connections", failed)
			}
			if ln.Evicted() == 0 {
				t.Error("no stalled connection was evicted: the stalled sockets did not hold the pre-auth budget")
			}
		})
	}
}

// stall keeps n connections to addr stalled after a request line, each
// reopened as soon as the server closes it, until stdin closes or two
// minutes have passed.
func stall(network, addr string, n int) {
	deadline := time.Now().Add(2 * time.Minute)
	for range n {
		go func() {
			for time.Now().Before(deadline) {
				c, err := net.DialTimeout(network, addr, time.Second)
				if err != nil {
					continue
				}
				c.SetDeadline(deadline)
				io.WriteString(c, stalledRequest)
				io.Copy(io.Discard, c)
				c.Close()
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Until(deadline)):
	}
}

// copyExecutable copies this test binary to path, mode 0755.
func copyExecutable(t *testing.T, path string) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	// OpenFile's mode passes through the umask (077 leaves uid 65534
	// nothing to execute).
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestPreAuthBudget: with a cap of 8 the pre-auth budget is 2. Two
// connections stalled in their headers hold it; a third of the same peer
// is refused (one peer's stalled connections can keep out only its own);
// a connection that authenticated earlier keeps being served; a request
// without the token is answered 401 and its connection closed, so it does
// not keep a pre-auth slot.
func TestPreAuthBudget(t *testing.T) {
	e := newEnv(t)
	env := []string{"SERVERFS_AUTH_TOKEN_FILE=" + transporttest.WriteToken(t, transporttest.Token+"\n", 0o600)}
	ln, addr := e.serveLimited(t, env, 8, func(s *http.Server, l *transport.ConnLimitListener) {
		s.ReadHeaderTimeout = time.Hour
		l.LogEvery = time.Hour
	})
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	request := func(c net.Conn, r *bufio.Reader, token string) int {
		t.Helper()
		io.WriteString(c, "GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\n"+token+"\r\n")
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	token := transport.AuthHeader + ": " + transporttest.Token + "\r\n"
	authed := dial()
	ar := bufio.NewReader(authed)
	if code := request(authed, ar, token); code != http.StatusNotFound {
		t.Fatalf("an authenticated request: %d", code)
	}
	for range 2 {
		io.WriteString(dial(), stalledRequest)
	}
	waitUntil(t, "two pre-auth connections", func() bool { return ln.PreAuth() == 2 && ln.Open() == 3 })
	third := dial()
	third.SetReadDeadline(time.Now().Add(time.Minute))
	if b, _ := io.ReadAll(third); !strings.HasPrefix(string(b), "HTTP/1.1 503 ") {
		t.Fatalf("a third stalled connection of the same peer read %q, want a 503", b)
	}
	if code := request(authed, ar, token); code != http.StatusNotFound {
		t.Fatalf("the authenticated connection beside a full pre-auth budget: %d", code)
	}
	if ln.Evicted() != 0 || ln.Refused() != 1 {
		t.Fatalf("evicted %d, refused %d; want 0 and 1", ln.Evicted(), ln.Refused())
	}
}

// TestUnauthorizedClosesConnection: a request refused for its token closes
// its connection, so a connection without the token cannot stay open
// (and pre-auth) by sending request after request.
func TestUnauthorizedClosesConnection(t *testing.T) {
	e := newEnv(t)
	env := []string{"SERVERFS_AUTH_TOKEN_FILE=" + transporttest.WriteToken(t, transporttest.Token+"\n", 0o600)}
	// Only the refusal may close it, not a timeout.
	ln, addr := e.serveLimited(t, env, 8, func(s *http.Server, _ *transport.ConnLimitListener) {
		s.ReadHeaderTimeout, s.IdleTimeout = time.Hour, time.Hour
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(time.Minute))
	b, err := io.ReadAll(c)
	if err != nil || !strings.HasPrefix(string(b), "HTTP/1.1 401 ") {
		t.Fatalf("read %q, %v; want a 401 and the server's close", b, err)
	}
	waitUntil(t, "the refused connection closed", func() bool { return ln.Open() == 0 })
}
