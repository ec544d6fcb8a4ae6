package bridge

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sfs "github.com/serverfs/serverfs/fs"
)

const testToken = "0123456789abcdef-test-token"

// startBridge serves a bridge for policy on a socket in a world-traversable
// directory and returns a client and the socket path; it stops by
// cancelling its context.
func startBridge(t *testing.T, policy *Policy, allow ...uint32) (*Client, string) {
	t.Helper()
	if len(allow) == 0 {
		allow = []uint32{uint32(os.Getuid())}
	}
	dir, err := os.MkdirTemp("", "serverfs-bridge-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	state := t.TempDir()
	srv, err := NewServer(policy, []byte(testToken), allow, state, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "bridge.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(sock, 0o666) // so that the uid check, not the mode, refuses other users
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		srv.Serve(ctx, ln.(*net.UnixListener))
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		srv.Close()
	})
	tokFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokFile, []byte(testToken+"\n"), 0o600)
	c, err := NewClient(sock, tokFile)
	if err != nil {
		t.Fatal(err)
	}
	return c, sock
}

func simplePolicy(t *testing.T) (*Policy, string) {
	t.Helper()
	root := t.TempDir()
	return &Policy{Workdirs: map[string]WorkdirPolicy{"wd": {Root: root, ReadWrite: true, RepoOps: true, Actions: map[string]Action{
		"hello": {Argv: []string{"echo", "hello"}, Argument: ArgumentNone},
	}}}}, root
}

// raw sends one request line and returns the answer.
func raw(t *testing.T, sock string, line string) Response {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte(line))
	conn.(*net.UnixConn).CloseWrite()
	b, _ := io.ReadAll(conn)
	var r Response
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("answer %q: %v", b, err)
	}
	return r
}

func TestBridgeAuthentication(t *testing.T) {
	p, _ := simplePolicy(t)
	c, sock := startBridge(t, p)
	if acts, err := c.Actions(context.Background(), "wd"); err != nil || len(acts) != 1 || acts[0].Name != "hello" {
		t.Fatalf("actions with the right token: %+v %v", acts, err)
	}
	for name, line := range map[string]string{
		"wrong token":    `{"token":"wrong-token-wrong-token","method":"actions.list","params":{"workdir":"wd"}}` + "\n",
		"no token":       `{"method":"actions.list","params":{"workdir":"wd"}}` + "\n",
		"malformed":      "{not json\n",
		"unknown field":  `{"token":"` + testToken + `","method":"actions.list","x":1}` + "\n",
		"oversized":      `{"token":"` + testToken + `","method":"actions.list","params":{"workdir":"` + strings.Repeat("a", MaxRequestBytes) + `"}}` + "\n",
		"no newline":     `{"token":"` + testToken + `","method":"actions.list"}`,
		"unknown method": `{"token":"` + testToken + `","method":"shell.exec","params":{}}` + "\n",
		"bad params":     `{"token":"` + testToken + `","method":"actions.run","params":{"workdir":"wd","action":"hello","argv":["sh"]}}` + "\n",
	} {
		r := raw(t, sock, line)
		want := string(sfs.CodeInvalidArgument)
		if strings.Contains(name, "token") {
			want = string(sfs.CodeBridgeAuthFailed)
		}
		if r.Error == nil || r.Error.Code != want {
			t.Errorf("%s: %+v, want %s", name, r.Error, want)
		}
	}
}

// TestBridgeRefusesOtherUID: a client running as another user (uid 65534)
// with the right token is refused by the peer-credential check.
func TestBridgeRefusesOtherUID(t *testing.T) {
	if sock := os.Getenv("SERVERFS_BRIDGE_UID_SOCKET"); sock != "" {
		tokFile := filepath.Join(os.TempDir(), "serverfs-bridge-uid-token")
		os.WriteFile(tokFile, []byte(testToken), 0o600)
		defer os.Remove(tokFile)
		c, _ := NewClient(sock, tokFile)
		_, err := c.Actions(context.Background(), "wd")
		os.Stdout.WriteString("CODE=" + string(sfs.CodeOf(err)) + "\n")
		return
	}
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root to run its client as another user (CI runs as root)")
	}
	p, _ := simplePolicy(t)
	_, sock := startBridge(t, p, 0)
	self, _ := os.Executable()
	dir, _ := os.MkdirTemp("", "serverfs-bridge-bin-")
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "bridge.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(bin, data, 0o755)
	cmd := exec.Command(bin, "-test.run=^TestBridgeRefusesOtherUID$", "-test.count=1")
	cmd.Env = []string{"SERVERFS_BRIDGE_UID_SOCKET=" + sock, "TMPDIR=/tmp"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if !strings.Contains(string(out), "CODE="+string(sfs.CodeBridgeAuthFailed)) {
		t.Fatalf("client as uid 65534: %v\n%s", err, out)
	}
}

func TestLeases(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	l := NewLeases(t.TempDir(), map[string]string{"wd": root})
	clock := time.Unix(1_000_000, 0)
	l.now = func() time.Time { return clock }
	id, err := l.Acquire("wd", "commit", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire("wd", "action", 0); sfs.CodeOf(err) != sfs.CodeLeaseBusy {
		t.Fatalf("second holder: %v", err)
	}
	if other, err := l.Acquire("other", "x", 0); err != nil || other == "" {
		t.Fatalf("another workdir: %v", err)
	}
	clock = clock.Add(8 * time.Second)
	if err := l.Renew("wd", id, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(8 * time.Second) // 16 s after acquire: alive thanks to the renewal
	if _, err := l.Acquire("wd", "action", 0); sfs.CodeOf(err) != sfs.CodeLeaseBusy {
		t.Fatalf("renewed lease taken: %v", err)
	}
	if err := l.Release("wd", "not-the-id"); sfs.CodeOf(err) != sfs.CodeLeaseBusy {
		t.Fatalf("release by a stranger: %v", err)
	}
	if err := l.Release("wd", id); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire("wd", "after", 0); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

// TestLeaseRecoveryGuard: a holder that registered an index guard and
// died (stopped renewing) mid-commit: the next holder finds the index as
// it was before that commit started, and no stale index.lock.
func TestLeaseRecoveryGuard(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	index := filepath.Join(root, ".git", "index")
	os.WriteFile(index, []byte("ORIGINAL INDEX"), 0o644)
	l := NewLeases(t.TempDir(), map[string]string{"wd": root})
	clock := time.Unix(1_000_000, 0)
	l.now = func() time.Time { return clock }
	id, _ := l.Acquire("wd", "commit", 30*time.Second)
	if err := l.GuardIndex("wd", id); err != nil {
		t.Fatal(err)
	}
	// The commit half-happened, then its process died.
	os.WriteFile(index, []byte("HALF-WRITTEN"), 0o644)
	os.WriteFile(index+".lock", []byte("x"), 0o644)
	clock = clock.Add(29 * time.Second)
	if _, err := l.Acquire("wd", "next", 0); sfs.CodeOf(err) != sfs.CodeLeaseBusy {
		t.Fatalf("before the TTL: %v", err)
	}
	clock = clock.Add(2 * time.Second)
	if _, err := l.Acquire("wd", "next", 0); err != nil {
		t.Fatalf("after the TTL: %v", err)
	}
	if b, _ := os.ReadFile(index); string(b) != "ORIGINAL INDEX" {
		t.Fatalf("index after recovery: %q", b)
	}
	if _, err := os.Stat(index + ".lock"); !os.IsNotExist(err) {
		t.Fatal("the dead commit's index.lock is still there")
	}
	// A holder that finished cleanly leaves no guard to apply.
	l2 := NewLeases(t.TempDir(), map[string]string{"wd": root})
	l2.now = l.now
	id, _ = l2.Acquire("wd", "commit", time.Second)
	l2.GuardIndex("wd", id)
	os.WriteFile(index, []byte("COMMITTED"), 0o644)
	l2.Release("wd", id)
	clock = clock.Add(time.Hour)
	l2.Acquire("wd", "next", 0)
	if b, _ := os.ReadFile(index); string(b) != "COMMITTED" {
		t.Fatalf("a released lease's guard was applied: %q", b)
	}
}

// TestBridgeRestartAppliesGuards: a bridge killed while a commit held the
// lease with an index guard: the next bridge process restores the index
// (and removes the dead commit's index.lock) before granting any lease.
func TestBridgeRestartAppliesGuards(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	index := filepath.Join(root, ".git", "index")
	os.WriteFile(index, []byte("BEFORE THE COMMIT"), 0o644)
	state := t.TempDir()
	first := NewLeases(state, map[string]string{"wd": root})
	id, _ := first.Acquire("wd", "commit", time.Minute)
	if err := first.GuardIndex("wd", id); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(index, []byte("HALF"), 0o644)
	os.WriteFile(index+".lock", nil, 0o644)
	// The first bridge is gone (its table with it); a new one starts.
	policy := &Policy{Workdirs: map[string]WorkdirPolicy{"wd": {Root: root, ReadWrite: true, RepoOps: true}}}
	srv, err := NewServer(policy, []byte(testToken), []uint32{0}, state, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if b, _ := os.ReadFile(index); string(b) != "BEFORE THE COMMIT" {
		t.Fatalf("index after the restart: %q", b)
	}
	if _, err := os.Stat(index + ".lock"); !os.IsNotExist(err) {
		t.Fatal("index.lock left behind")
	}
	if n, _ := srv.leases.RecoverAll(); n != 0 {
		t.Fatalf("a guard was applied twice (%d)", n)
	}
}
