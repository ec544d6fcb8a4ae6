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
	dir, err := os.MkdirTemp("", "serverfs-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "mcp.sock")
	cfg, probs := LoadHTTPConfig([]string{
		"SERVERFS_LISTEN=unix:" + sock,
		fmt.Sprintf("SERVERFS_LISTEN_GROUP=%d", testGroup),
		"SERVERFS_AUTH_TOKEN_FILE=" + writeToken(t, testToken+"\n", 0o600),
	})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if cfg.Network != "unix" || cfg.Listen != sock || cfg.SocketGroup != testGroup {
		t.Fatalf("config %+v", cfg)
	}
	ln, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewHTTPServer(cfg.Listen, NewHandler(e.deps, cfg, testVer))
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
	if st.Mode().Type() != os.ModeSocket || st.Mode().Perm() != SocketMode || sys.Gid != testGroup || int(sys.Uid) != os.Geteuid() {
		t.Fatalf("socket %v uid %d gid %d, want socket %v gid %d", st.Mode(), sys.Uid, sys.Gid, os.FileMode(SocketMode), testGroup)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("the socket's directory holds %d entries (the private one left behind?)", len(ents))
	}
	if ln.Addr().String() != sock {
		t.Fatalf("Addr %q", ln.Addr())
	}

	// A real MCP client, tunnel-style: the logical URL, the socket dialed,
	// the token header added.
	hc := &http.Client{Transport: headerRT{unixHTTP(sock), map[string]string{AuthHeader: testToken}}}
	c := sdk.NewClient(&sdk.Implementation{Name: "tunnel-like", Version: "0"}, nil)
	cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: "http://localhost" + Path, HTTPClient: hc, MaxRetries: -1}, nil)
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
		{"foreign Host", "evil.example", map[string]string{AuthHeader: testToken}, http.StatusForbidden},
		{"token, allowed Host", "localhost", map[string]string{AuthHeader: testToken}, http.StatusOK},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+c.host+Path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := (&http.Client{Transport: headerRT{unixHTTP(sock), c.headers}}).Do(req)
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
	dir, err := os.MkdirTemp("", "serverfs-mcp-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "mcp.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestUnixSocketPath covers what is at the socket's path before Listen:
// a stale socket is replaced, a live one and any other file are refused
// and left alone.
func TestUnixSocketPath(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "mcp.sock")
	cfg := HTTPConfig{Network: "unix", Listen: sock, SocketGroup: -1}

	// Stale: a socket nobody accepts on any more.
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()
	ln, err := Listen(cfg)
	if err != nil {
		t.Fatalf("over a stale socket: %v", err)
	}
	// Live: refused, and the live socket still works.
	if ln2, err := Listen(cfg); err == nil || !strings.Contains(err.Error(), "another server") {
		if ln2 != nil {
			ln2.Close()
		}
		t.Fatalf("over a live socket: %v", err)
	}
	// (The kernel completes a connect into the backlog.)
	if c, err := net.Dial("unix", sock); err != nil {
		t.Fatalf("the live socket broke: %v", err)
	} else {
		c.Close()
	}
	ln.Close()
	// Not a socket: refused, untouched.
	if err := os.WriteFile(sock, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(cfg); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("over a regular file: %v", err)
	}
	if b, _ := os.ReadFile(sock); string(b) != "keep" {
		t.Fatal("the regular file was changed")
	}
	// A socket that replaced ours is not removed by our Close.
	os.Remove(sock)
	ln, err = Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(sock)
	other, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ln.Close()
	if _, err := os.Lstat(sock); err != nil {
		t.Fatalf("Close removed a socket it did not make: %v", err)
	}
}

func TestListenConfig(t *testing.T) {
	dir := t.TempDir()
	long := "/" + strings.Repeat("d", 95) + "/s.sock"
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"SERVERFS_LISTEN=unix:relative.sock"}, "must be absolute"},
		{[]string{"SERVERFS_LISTEN=unix:" + dir + "/x/../mcp.sock"}, "must be clean"},
		{[]string{"SERVERFS_LISTEN=unix:" + long}, "too long"},
		{[]string{"SERVERFS_LISTEN=unix:" + dir + "/missing/mcp.sock"}, "directory does not exist"},
		{[]string{"SERVERFS_LISTEN=unix:"}, "must be absolute"},
		{[]string{"SERVERFS_LISTEN=127.0.0.1:8000", "SERVERFS_LISTEN_GROUP=0"}, "only a unix: listener"},
		{[]string{"SERVERFS_LISTEN=unix:" + dir + "/mcp.sock", "SERVERFS_LISTEN_GROUP=no-such-group-xyz"}, "no such group"},
		{[]string{"SERVERFS_LISTEN=/run/x.sock"}, "unix:/absolute/path.sock"},
	} {
		_, probs := LoadHTTPConfig(c.env)
		if len(probs) != 1 || !strings.Contains(probs[0], c.want) {
			t.Errorf("%q: problems %q, want %q", c.env, probs, c.want)
		}
	}
	cfg, probs := LoadHTTPConfig([]string{"SERVERFS_LISTEN=unix:" + dir + "/mcp.sock", "SERVERFS_LISTEN_GROUP=root"})
	if len(probs) > 0 || cfg.SocketGroup != 0 || cfg.Network != "unix" {
		t.Fatalf("group by name: %+v %q", cfg, probs)
	}
	if cfg, _ := LoadHTTPConfig(nil); cfg.Network != "tcp" || cfg.Listen != DefaultListen || cfg.SocketGroup != -1 {
		t.Fatalf("defaults %+v", cfg)
	}
}
