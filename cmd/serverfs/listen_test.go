package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
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
)

// cmdTestToken is a token as "head -c 32 /dev/urandom | base64" makes one.
const cmdTestToken = "Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycA=="

func TestHealthcheckUnixSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "mcp.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"SERVERFS_LISTEN=unix:" + sock}
	var errb bytes.Buffer
	if code := healthcheck(env, &errb); code != 0 {
		t.Fatalf("listening socket: exit %d, %s", code, errb.String())
	}
	ln.Close()
	if code := healthcheck(env, &errb); code != 1 {
		t.Fatalf("closed socket: exit %d", code)
	}
}

// headerRT adds the tunnel's static header to every request.
type headerRT struct {
	base http.RoundTripper
	name string
	val  string
}

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if h.name != "" {
		r.Header.Set(h.name, h.val)
	}
	return h.base.RoundTrip(r)
}

func unixTransport(sock string) *http.Transport {
	return &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}
}

// TestServeUnixSocketWithToken runs "serverfs serve" (this test binary,
// re-executed) on a unix: listener with a client token at DEBUG level, as
// a bare-metal operator would: a real MCP client with the tunnel's header
// works, one without it is refused, SIGTERM removes the socket, and
// nothing the server wrote holds the token.
func TestServeUnixSocketWithToken(t *testing.T) {
	if os.Getenv("SFS_TEST_SERVE") == "1" {
		os.Exit(run([]string{"serve", "--workdir", "demo=" + os.Getenv("SFS_TEST_WORKDIR")}, os.Environ(), os.Stdout, os.Stderr))
	}
	wd := t.TempDir()
	if err := os.WriteFile(filepath.Join(wd, "hello.txt"), []byte("hello over the socket\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "mcp_token")
	if err := os.WriteFile(tokFile, []byte(cmdTestToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "mcp.sock")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^TestServeUnixSocketWithToken$", "-test.count=1")
	cmd.Env = []string{
		"SFS_TEST_SERVE=1", "SFS_TEST_WORKDIR=" + wd,
		"SERVERFS_LISTEN=unix:" + sock,
		"SERVERFS_AUTH_TOKEN_FILE=" + tokFile,
		"SERVERFS_LOG_LEVEL=DEBUG",
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	// The start-up line says the server accepts; read until it (within a
	// bound: the cleanup kills a server that never gets there).
	var startup, log bytes.Buffer // startup: until the line; log: after it
	ready, rest := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(rest)
		sc := bufio.NewScanner(io.TeeReader(stderr, &startup))
		for sc.Scan() && !strings.Contains(sc.Text(), "serving streamable HTTP") {
		}
		close(ready)
		io.Copy(&log, stderr)
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not start within 60 s")
	}
	if !strings.Contains(startup.String(), `"client_auth":"token header X-ServerFS-Token"`) || !strings.Contains(startup.String(), `"listen":"unix:`) {
		t.Fatalf("start-up log:\n%s", startup.String())
	}

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	hc := &http.Client{Transport: headerRT{unixTransport(sock), transport.AuthHeader, cmdTestToken}}
	c := sdk.NewClient(&sdk.Implementation{Name: "tunnel-like", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://localhost/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// go-sdk's 2026-07-28 client mirrors workdir as Mcp-Param-Workdir, which
	// the server requires, only for tools it has listed.
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"workdir": "demo", "path": "hello.txt"}})
	if err != nil || res.IsError {
		t.Fatalf("read_text_file: %v %+v", err, res)
	}
	cs.Close()
	for _, rt := range []http.RoundTripper{
		headerRT{unixTransport(sock), "", ""},
		headerRT{unixTransport(sock), transport.AuthHeader, "wrong" + cmdTestToken[5:]},
		headerRT{unixTransport(sock), "Authorization", "Bearer " + cmdTestToken},
	} {
		intruder := sdk.NewClient(&sdk.Implementation{Name: "intruder", Version: "0"}, nil)
		if cs, err := intruder.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://localhost/mcp", HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1}, nil); err == nil {
			cs.Close()
			t.Error("a client without the right token header connected")
		}
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-rest
	err = cmd.Wait()
	killed = true
	if err != nil {
		t.Fatalf("serve exited with %v:\n%s%s", err, startup.String(), log.String())
	}
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left after shutdown: %v", err)
	}
	all := startup.String() + log.String() + stdout.String()
	if strings.Contains(all, cmdTestToken[:12]) {
		t.Fatalf("the server's output holds the token:\n%s", all)
	}
	for _, want := range []string{`"reason":"no client token"`, `"reason":"wrong client token"`, `"tool":"read_text_file"`} {
		if !strings.Contains(all, want) {
			t.Errorf("log lacks %s:\n%s", want, all)
		}
	}
}

// TestServeRefusesBadTokenFile: a token file start-up refuses is reported
// without its content.
func TestServeRefusesBadTokenFile(t *testing.T) {
	tokFile := filepath.Join(t.TempDir(), "mcp_token")
	secret := "s3cret-with spaces-" + cmdTestToken
	if err := os.WriteFile(tokFile, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"serve", "--workdir", "demo=" + t.TempDir()}, []string{"SERVERFS_AUTH_TOKEN_FILE=" + tokFile}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "SERVERFS_AUTH_TOKEN_FILE") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if strings.Contains(errb.String()+out.String(), "s3cret") || strings.Contains(errb.String(), tokFile) {
		t.Fatalf("the refusal holds the token or its path: %s", errb.String())
	}
}

// TestSelfcheckClients: selfcheck says who can connect.
func TestSelfcheckClients(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "mcp_token")
	if err := os.WriteFile(tok, []byte(cmdTestToken+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(tok, 0o644)
	for _, c := range []struct {
		env  []string
		want []string
	}{
		{nil, []string{"warn  clients: no client token (SERVERFS_AUTH_TOKEN_FILE): whoever can connect to 0.0.0.0:8000 can use the server"}},
		{[]string{"SERVERFS_AUTH_TOKEN_FILE=" + tok}, []string{
			"ok    clients: every request must carry the client token in X-ServerFS-Token",
			"warn  SERVERFS_AUTH_TOKEN_FILE: the token file is readable by every user",
		}},
		{[]string{"SERVERFS_LISTEN=unix:" + filepath.Join(dir, "mcp.sock")}, []string{"ok    clients: a unix socket of mode 0660: only its owner and its group can connect"}},
	} {
		var out, errb bytes.Buffer
		run([]string{"selfcheck", "--workdir", "docs=" + t.TempDir()}, c.env, &out, &errb)
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%q: missing %q in:\n%s", c.env, w, out.String())
			}
		}
		if strings.Contains(out.String(), cmdTestToken[:12]) {
			t.Errorf("selfcheck printed the token")
		}
	}
}

// TestCheckConfigClientToken: check-config names the listener and whether
// the client token is required, and shows the token file's warnings.
func TestCheckConfigClientToken(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "mcp_token")
	if err := os.WriteFile(tok, []byte(cmdTestToken+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(tok, 0o644)
	var out, errb bytes.Buffer
	code := run([]string{"check-config", "--workdir", "docs=" + t.TempDir()}, []string{"SERVERFS_AUTH_TOKEN_FILE=" + tok, "SERVERFS_LISTEN=unix:" + filepath.Join(dir, "mcp.sock")}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{", listen unix:" + dir + "/mcp.sock, client token required\n", "warning: SERVERFS_AUTH_TOKEN_FILE: the token file is readable by every user"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String()+errb.String(), cmdTestToken[:12]) {
		t.Error("check-config printed the token")
	}
}
