package mcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/serverfs/serverfs/mcp/transport"
	"github.com/serverfs/serverfs/mcp/transport/transporttest"
)

// unixHTTP is an HTTP transport that dials the socket at path whatever the
// URL says, as the tunnel client's unix-socket= does.
func unixHTTP(path string) *http.Transport {
	return &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}
}

// testGroup is the socket's group in the tests: a gid no user here has, so
// only the group bits can let a process in.
const testGroup = 4242

// TestUnixSocket serves a real MCP client over a unix: listener with the
// client token, and checks the socket's mode and group, and that the mode
// is what keeps other uids out: a child process as uid 65534 gets EACCES,
// the same uid with the socket's group as a supplementary group connects.
func TestUnixSocket(t *testing.T) {
	if p := os.Getenv("SFS_TEST_DIAL"); p != "" {
		// The child: report what connecting gives.
		c, err := net.Dial("unix", p)
		switch {
		case err == nil:
			c.Close()
			fmt.Println("DIAL=ok")
		case errors.Is(err, syscall.EACCES):
			fmt.Println("DIAL=EACCES")
		default:
			fmt.Println("DIAL=" + err.Error())
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root to run a client as another user and to give the socket any group (CI runs as root)")
	}
	e := newEnv(t)
	// Others may traverse the directory and all above it (t.TempDir's
	// parent is 0700): only the socket's own mode can keep them out.
	dir := traversableTempDir(t, "serverfs-sock-")
	sock := filepath.Join(dir, "mcp.sock")
	cfg, probs := loadHTTPConfig([]string{
		"SERVERFS_LISTEN=unix:" + sock,
		fmt.Sprintf("SERVERFS_LISTEN_GROUP=%d", testGroup),
		"SERVERFS_AUTH_TOKEN_FILE=" + transporttest.WriteToken(t, transporttest.Token+"\n", 0o600),
	})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if cfg.Network != "unix" || cfg.Listen != sock || cfg.SocketGroup != testGroup {
		t.Fatalf("config %+v", cfg)
	}
	ln, err := transport.Listen(cfg.transportConfig)
	if err != nil {
		t.Fatal(err)
	}
	srv := transport.NewHTTPServer(cfg.Listen, newHandler(e.deps, cfg, testVer))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		<-errc
	})

	st, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	if st.Mode().Type() != os.ModeSocket || st.Mode().Perm() != transport.SocketMode || sys.Gid != testGroup || int(sys.Uid) != os.Geteuid() {
		t.Fatalf("socket %v uid %d gid %d, want socket %v gid %d", st.Mode(), sys.Uid, sys.Gid, os.FileMode(transport.SocketMode), testGroup)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("the socket's directory holds %d entries (the private one left behind?)", len(ents))
	}
	if ln.Addr().String() != sock {
		t.Fatalf("Addr %q", ln.Addr())
	}

	// A real MCP client, tunnel-style: the logical URL, the socket dialed,
	// the token header added.
	hc := &http.Client{Transport: transporttest.HeaderRT{Base: unixHTTP(sock), Headers: map[string]string{transport.AuthHeader: transporttest.Token}}}
	c := sdk.NewClient(&sdk.Implementation{Name: "tunnel-like", Version: "0"}, nil)
	cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: "http://localhost" + transport.Path, HTTPClient: hc, MaxRetries: -1}, nil)
	if err == nil {
		err = listForHeaders(t.Context(), cs)
	}
	if err != nil {
		t.Fatal(err)
	}
	if res := e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt"}); res.IsError || !strings.Contains(resultText(res), "alpha") {
		t.Fatalf("read over the socket: %s", resultText(res))
	}
	cs.Close()
	// The token and the Host allowlist hold over the socket too.
	for _, c := range []struct {
		name    string
		host    string
		headers map[string]string
		want    int
	}{
		{"no token", "localhost", nil, http.StatusUnauthorized},
		{"foreign Host", "evil.example", map[string]string{transport.AuthHeader: transporttest.Token}, http.StatusForbidden},
		{"token, allowed Host", "localhost", map[string]string{transport.AuthHeader: transporttest.Token}, http.StatusOK},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+c.host+transport.Path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := (&http.Client{Transport: transporttest.HeaderRT{Base: unixHTTP(sock), Headers: c.headers}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}

	// Other uids: refused by the mode, let in by the group.
	bin := copyTestBinary(t)
	for _, c := range []struct {
		name string
		cred *syscall.Credential
		want string
	}{
		{"uid 65534", &syscall.Credential{Uid: 65534, Gid: 65534}, "DIAL=EACCES"},
		{"uid 65534 in the socket's group", &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{testGroup}}, "DIAL=ok"},
	} {
		cmd := exec.Command(bin, "-test.run=^TestUnixSocket$", "-test.count=1")
		cmd.Dir = "/"
		cmd.Env = []string{"SFS_TEST_DIAL=" + sock, "TMPDIR=/tmp"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
		out, err := cmd.CombinedOutput()
		if !strings.Contains(string(out), c.want+"\n") {
			t.Errorf("%s: want %s: %v\n%s", c.name, c.want, err, out)
		}
	}

	// Shutdown removes the socket.
	srv.Close()
	<-errc
	errc <- nil
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left after Close: %v", err)
	}
}

// copyTestBinary copies the test binary where uid 65534 can run it.
func copyTestBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := traversableTempDir(t, "serverfs-mcp-bin-")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "mcp.test")
	// Chmod too: WriteFile's mode passes through the umask.
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// traversableTempDir is a new directory every user may traverse (t.TempDir
// and its parent are 0700), removed when the test ends: for a socket or a
// copy of the test binary another uid must reach.
func traversableTempDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
