package transport

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnixSocketPath covers what is at the socket's path before Listen:
// a stale socket is replaced, a live one and any other file are refused
// and left alone.
func TestUnixSocketPath(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "mcp.sock")
	cfg := Config{Network: "unix", Listen: sock, SocketGroup: -1}

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
		_, probs := LoadConfig(c.env)
		if len(probs) != 1 || !strings.Contains(probs[0], c.want) {
			t.Errorf("%q: problems %q, want %q", c.env, probs, c.want)
		}
	}
	cfg, probs := LoadConfig([]string{"SERVERFS_LISTEN=unix:" + dir + "/mcp.sock", "SERVERFS_LISTEN_GROUP=root"})
	if len(probs) > 0 || cfg.SocketGroup != 0 || cfg.Network != "unix" {
		t.Fatalf("group by name: %+v %q", cfg, probs)
	}
	if cfg, _ := LoadConfig(nil); cfg.Network != "tcp" || cfg.Listen != DefaultListen || cfg.SocketGroup != -1 {
		t.Fatalf("defaults %+v", cfg)
	}
}
