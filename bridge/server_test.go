package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/serverfs/serverfs/bridge/wire"
	"github.com/serverfs/serverfs/internal/errs"
)

const testToken = "0123456789abcdef-test-token"

// startBridge serves a bridge for policy on a socket in a world-traversable
// directory and returns a client and the socket path; it stops by
// cancelling its context.
func startBridge(t *testing.T, policy *Policy, allow ...uint32) (*wire.Client, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "serverfs-bridge-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return startBridgeIn(t, policy, t.TempDir(), dir, allow...)
}

// startBridgeIn is startBridge with the given state directory and the
// socket in dir.
func startBridgeIn(t *testing.T, policy *Policy, state, dir string, allow ...uint32) (*wire.Client, string) {
	t.Helper()
	if len(allow) == 0 {
		allow = []uint32{uint32(os.Getuid())}
	}
	srv, err := NewServer(policy, []byte(testToken), allow, state, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return serveBridge(t, srv, dir)
}

// serveBridge serves srv on a socket in dir until the test ends.
func serveBridge(t *testing.T, srv *Server, dir string) (*wire.Client, string) {
	t.Helper()
	os.Chmod(dir, 0o755)
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
	c, err := wire.NewClient(sock, tokFile)
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
func raw(t *testing.T, sock string, line string) wire.Response {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte(line))
	conn.(*net.UnixConn).CloseWrite()
	b, _ := io.ReadAll(conn)
	var r wire.Response
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
		"oversized":      `{"token":"` + testToken + `","method":"actions.list","params":{"workdir":"` + strings.Repeat("a", wire.MaxRequestBytes) + `"}}` + "\n",
		"no newline":     `{"token":"` + testToken + `","method":"actions.list"}`,
		"unknown method": `{"token":"` + testToken + `","method":"shell.exec","params":{}}` + "\n",
		"bad params":     `{"token":"` + testToken + `","method":"actions.run","params":{"workdir":"wd","action":"hello","argv":["sh"]}}` + "\n",
	} {
		r := raw(t, sock, line)
		want := string(errs.InvalidArgument)
		if strings.Contains(name, "token") {
			want = string(errs.BridgeAuthFailed)
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
		c, _ := wire.NewClient(sock, tokFile)
		_, err := c.Actions(context.Background(), "wd")
		os.Stdout.WriteString("CODE=" + string(errs.CodeOf(err)) + "\n")
		return
	}
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root to run its client as another user (CI runs as root)")
	}
	p, _ := simplePolicy(t)
	_, sock := startBridge(t, p, 0)
	bin := executableCopy(t)
	cmd := exec.Command(bin, "-test.run=^TestBridgeRefusesOtherUID$", "-test.count=1")
	cmd.Env = []string{"SERVERFS_BRIDGE_UID_SOCKET=" + sock, "TMPDIR=/tmp"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if !strings.Contains(string(out), "CODE="+string(errs.BridgeAuthFailed)) {
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
	if _, err := l.Acquire("wd", "action", 0); errs.CodeOf(err) != errs.LeaseBusy {
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
	if _, err := l.Acquire("wd", "action", 0); errs.CodeOf(err) != errs.LeaseBusy {
		t.Fatalf("renewed lease taken: %v", err)
	}
	if err := l.Release("wd", "not-the-id"); errs.CodeOf(err) != errs.LeaseBusy {
		t.Fatalf("release by a stranger: %v", err)
	}
	if err := l.Release("wd", id); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire("wd", "after", 0); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

// guardRepo is a .git with a branch ref and an index, for guard tests.
func guardRepo(t *testing.T) (root, gitDir string) {
	t.Helper()
	root = t.TempDir()
	gitDir = filepath.Join(root, ".git")
	os.MkdirAll(filepath.Join(gitDir, "refs", "heads"), 0o755)
	os.WriteFile(filepath.Join(gitDir, "refs", "heads", "main"), []byte("OLD\n"), 0o644)
	os.WriteFile(filepath.Join(gitDir, "index"), []byte("OLD INDEX"), 0o644)
	return root, gitDir
}

func readString(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// TestLeaseRecoveryGuard: a holder that registered its commit and died
// (stopped renewing): once the lease expires, the commit is undone (the
// ref never moved: its lock is removed, the index untouched) or finished
// (the ref moved: the lock holding the new index becomes the index); a
// lock someone else took, or a commit that finished, is left alone.
func TestLeaseRecoveryGuard(t *testing.T) {
	cases := []struct {
		name       string
		afterDeath func(gitDir string)
		index      string
		lockLeft   bool
	}{
		{"died before moving the ref", func(string) {}, "OLD INDEX", false},
		{"died before moving a packed ref", func(g string) {
			os.Remove(filepath.Join(g, "refs", "heads", "main"))
			os.WriteFile(filepath.Join(g, "packed-refs"), []byte("# pack-refs with: peeled fully-peeled sorted\nOLD refs/heads/main\n"), 0o644)
		}, "OLD INDEX", false},
		{"died after moving the ref", func(g string) {
			os.WriteFile(filepath.Join(g, "refs", "heads", "main"), []byte("NEW\n"), 0o644)
		}, "NEW INDEX: a complete index, with its trailing SHA-1 sum 0123456789", false},
		{"finished, release lost", func(g string) {
			os.WriteFile(filepath.Join(g, "refs", "heads", "main"), []byte("NEW\n"), 0o644)
			os.Rename(filepath.Join(g, "index.lock"), filepath.Join(g, "index"))
			os.WriteFile(filepath.Join(g, "index"), []byte("LATER USER INDEX"), 0o644)
		}, "LATER USER INDEX", false},
		{"someone else's lock now", func(g string) {
			os.Remove(filepath.Join(g, "index.lock"))
			os.WriteFile(filepath.Join(g, "index.lock.tmp"), []byte("ANOTHER GIT'S LOCK, complete, with another trailing sum"), 0o644)
			os.Rename(filepath.Join(g, "index.lock.tmp"), filepath.Join(g, "index.lock"))
		}, "OLD INDEX", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, gitDir := guardRepo(t)
			l := NewLeases(t.TempDir(), map[string]string{"wd": root})
			clock := time.Unix(1_000_000, 0)
			l.now = func() time.Time { return clock }
			id, _ := l.Acquire("wd", "commit", 30*time.Second)
			os.WriteFile(filepath.Join(gitDir, "index.lock"), []byte("NEW INDEX: a complete index, with its trailing SHA-1 sum 0123456789"), 0o644)
			if err := l.GuardCommit("wd", id, "refs/heads/main", "OLD"); err != nil {
				t.Fatal(err)
			}
			c.afterDeath(gitDir)
			clock = clock.Add(29 * time.Second)
			if _, err := l.Acquire("wd", "next", 0); errs.CodeOf(err) != errs.LeaseBusy {
				t.Fatalf("before the TTL: %v", err)
			}
			clock = clock.Add(2 * time.Second)
			if _, err := l.Acquire("wd", "next", 0); err != nil {
				t.Fatalf("after the TTL: %v", err)
			}
			if got := readString(filepath.Join(gitDir, "index")); got != c.index {
				t.Fatalf("index %q, want %q", got, c.index)
			}
			_, err := os.Stat(filepath.Join(gitDir, "index.lock"))
			if (err == nil) != c.lockLeft {
				t.Fatalf("index.lock present %v, want %v", err == nil, c.lockLeft)
			}
		})
	}
	t.Run("released cleanly", func(t *testing.T) {
		root, gitDir := guardRepo(t)
		l := NewLeases(t.TempDir(), map[string]string{"wd": root})
		id, _ := l.Acquire("wd", "commit", time.Second)
		os.WriteFile(filepath.Join(gitDir, "index.lock"), []byte("NEW INDEX: a complete index, with its trailing SHA-1 sum 0123456789"), 0o644)
		l.GuardCommit("wd", id, "refs/heads/main", "OLD")
		os.WriteFile(filepath.Join(gitDir, "index.lock"), []byte("a user's git"), 0o644)
		l.Release("wd", id)
		l.Acquire("wd", "next", 0)
		if got := readString(filepath.Join(gitDir, "index.lock")); got != "a user's git" {
			t.Fatalf("a released lease's guard was applied: lock %q", got)
		}
	})
	t.Run("bad guards", func(t *testing.T) {
		root, _ := guardRepo(t)
		l := NewLeases(t.TempDir(), map[string]string{"wd": root})
		id, _ := l.Acquire("wd", "commit", time.Second)
		if err := l.GuardCommit("wd", id, "refs/heads/main", "OLD"); errs.CodeOf(err) != errs.InvalidArgument {
			t.Fatalf("a guard without index.lock: %v", err)
		}
		os.WriteFile(filepath.Join(root, ".git", "index.lock"), nil, 0o644)
		if err := l.GuardCommit("wd", id, "refs/heads/main", "OLD"); errs.CodeOf(err) != errs.InvalidArgument {
			t.Fatalf("a guard on an empty lock: %v", err)
		}
		os.Remove(filepath.Join(root, ".git", "index.lock"))
		if err := l.GuardCommit("wd", id, "../../etc/passwd", "x"); errs.CodeOf(err) != errs.InvalidArgument {
			t.Fatalf("a guard on a strange ref: %v", err)
		}
		if err := l.GuardCommit("wd", "not-mine", "HEAD", ""); errs.CodeOf(err) != errs.LeaseBusy {
			t.Fatalf("a guard without the lease: %v", err)
		}
	})
}

// TestBridgeRestartAppliesGuards: a bridge killed while a commit held the
// lease: the next bridge process keeps the workdir leased for one TTL (the
// commit may still finish in the server), then applies the guard before
// granting the lease.
func TestBridgeRestartAppliesGuards(t *testing.T) {
	root, gitDir := guardRepo(t)
	state := t.TempDir()
	first := NewLeases(state, map[string]string{"wd": root})
	id, _ := first.Acquire("wd", "commit", time.Minute)
	os.WriteFile(filepath.Join(gitDir, "index.lock"), []byte("NEW INDEX: a complete index, with its trailing SHA-1 sum 0123456789"), 0o644)
	if err := first.GuardCommit("wd", id, "refs/heads/main", "OLD"); err != nil {
		t.Fatal(err)
	}
	// The first bridge is gone (its table with it); a new one starts.
	second := NewLeases(state, map[string]string{"wd": root})
	clock := time.Unix(2_000_000, 0)
	second.now = func() time.Time { return clock }
	if n, err := second.RecoverAll(); n != 1 || err != nil {
		t.Fatalf("RecoverAll = %d, %v", n, err)
	}
	if _, err := second.Acquire("wd", "next", 0); errs.CodeOf(err) != errs.LeaseBusy {
		t.Fatalf("right after the restart: %v", err)
	}
	clock = clock.Add(DefaultLeaseTTL + time.Second)
	if _, err := second.Acquire("wd", "next", 0); err != nil {
		t.Fatalf("after a TTL: %v", err)
	}
	if got := readString(filepath.Join(gitDir, "index")); got != "OLD INDEX" {
		t.Fatalf("index %q", got)
	}
	if _, err := os.Stat(filepath.Join(gitDir, "index.lock")); !os.IsNotExist(err) {
		t.Fatal("the dead commit's lock is still there")
	}
	// A server started on that state directory works.
	policy := &Policy{Workdirs: map[string]WorkdirPolicy{"wd": {Root: root, ReadWrite: true, RepoOps: true}}}
	srv, err := NewServer(policy, []byte(testToken), []uint32{0}, state, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
}

// TestBridgeRequestSizeAndCancel: a request of several KiB is read (the
// cap is 64 KiB); a client that gives up stops its action, whose lease
// is then free.
func TestBridgeRequestSizeAndCancel(t *testing.T) {
	p, root := simplePolicy(t)
	wp := p.Workdirs["wd"]
	wp.Actions["sleep"] = Action{Argv: []string{"sleep", "1000"}, Argument: ArgumentNone}
	p.Workdirs["wd"] = wp
	c, sock := startBridge(t, p)
	r := raw(t, sock, `{"token":"`+testToken+`","method":"actions.list","params":{"workdir":"`+strings.Repeat("w", 10_000)+`"}}`+"\n")
	if r.Error == nil || r.Error.Code != string(errs.WorkdirNotFound) {
		t.Fatalf("a 10 KB request: %+v", r.Error)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := c.RunAction(ctx, "wd", "sleep", "")
	cancel()
	if errs.CodeOf(err) != errs.Canceled {
		t.Fatalf("a cancelled action: %v", err)
	}
	// The bridge kills it and releases the lease; wait for that condition.
	deadline := time.Now().Add(10 * time.Second)
	for {
		release, err := c.Acquire(context.Background(), "wd")
		if err == nil {
			release()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lease is still held after the client gave up: %v", err)
		}
	}
	_ = root
}

// TestBridgeOutputHidesBridgePaths: an action that prints every path the
// bridge made or uses (its private HOME and TMPDIR, a temporary file
// there, the state directory, the socket's directory) shows none of them
// through the bridge: "$HOME" and "<bridge>" stand in for them.
func TestBridgeOutputHidesBridgePaths(t *testing.T) {
	root, state, sockDir := rtRepo(t), t.TempDir(), t.TempDir()
	sock := filepath.Join(sockDir, "bridge.sock")
	script := `printf '%s' "$HOME" > home.txt; echo "home $HOME"; echo "tmp $TMPDIR"; mktemp; cd "$TMPDIR" && pwd -P; ` +
		`echo "state $1/guard-wd.json"; echo "socket $2" >&2; ls -d "$1"`
	policy := &Policy{Workdirs: map[string]WorkdirPolicy{"wd": {Root: root, ReadWrite: true, RepoOps: true, Actions: map[string]Action{
		"paths": {Argv: []string{"sh", "-c", script, "sh", state, sock}, Mutates: true, Argument: ArgumentNone},
	}}}}
	// home.txt exists: where the kernel refuses user namespaces, Landlock
	// keeps new top-level entries out (sandbox_git.go).
	rtWrite(t, filepath.Join(root, "home.txt"), "")
	c, _ := startBridgeIn(t, policy, state, sockDir)
	res, err := c.RunAction(context.Background(), "wd", "paths", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "home.txt"))
	if err != nil || len(b) == 0 {
		t.Fatalf("the action's HOME: %q, %v", b, err)
	}
	home := string(b)
	out := res.Stdout + res.Stderr
	for _, p := range []string{home, state, sockDir, "serverfs-action-", "serverfs-bridge-"} {
		if strings.Contains(out, p) {
			t.Errorf("the output shows %q:\n%s", p, out)
		}
	}
	for _, want := range []string{"home $HOME\n", "tmp $HOME\n", "$HOME/tmp.", "state <bridge>/guard-wd.json\n", "<bridge>\n"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, res.Stdout)
		}
	}
	if res.Stderr != "socket <bridge>/bridge.sock\n" {
		t.Errorf("stderr %q", res.Stderr)
	}
}

// TestBridgeOutputHidesHostPaths: a pinned script that prints (echo, and
// cat of a file) every host path the bridge knows — its own root, another
// workdir's root, the workspaces dir, a workspace's tree, the policy and
// token files — shows none of them, in the workdir and in a workspace
// run; they read as "alias:", "alias@id:" and "<bridge>". A granted
// command's output and an action's error message are scrubbed the same
// way.
func TestBridgeOutputHidesHostPaths(t *testing.T) {
	base := t.TempDir()
	root, other, wsDir, secrets := filepath.Join(base, "wd"), filepath.Join(base, "other"), filepath.Join(base, "mcp-state"), filepath.Join(base, "secrets")
	const id, id2 = "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"
	tree, tree2 := filepath.Join(wsDir, "workspaces", id, "tree"), filepath.Join(wsDir, "workspaces", id2, "tree")
	policyFile, tokenFile := filepath.Join(secrets, "policy.json"), filepath.Join(secrets, "token")
	script := "echo \"self $(pwd -P)\"\necho \"live $1\"\necho \"other $2\"\necho \"wsdir $3\"\necho \"tree $4\"\necho \"tree2 $5\"\necho \"policy $6\"\necho \"token $7\" >&2\ncat paths.txt\n"
	listed := "cat-other " + other + "/x\ncat-token " + tokenFile + "\n"
	for _, d := range []string{root, tree, tree2} {
		rtWrite(t, filepath.Join(d, "tools", "paths.sh"), script)
		rtWrite(t, filepath.Join(d, "paths.txt"), listed)
	}
	for _, w := range []string{id, id2} {
		rtWrite(t, filepath.Join(wsDir, "workspaces", w, "meta.json"), `{"workdir":"wd","id":"`+w+`"}`)
	}
	rtWrite(t, filepath.Join(other, "x"), "")
	rtWrite(t, policyFile, "{}")
	rtWrite(t, tokenFile, testToken)
	argv := []string{"/bin/sh", "tools/paths.sh", root, other, wsDir, tree, tree2, policyFile, tokenFile}
	policy := &Policy{WorkspacesDir: wsDir, Workdirs: map[string]WorkdirPolicy{
		"wd": {Root: root, ReadWrite: true, RepoOps: true, Actions: map[string]Action{
			"paths": {Argv: argv, Argument: ArgumentNone, Integrity: map[string]string{"tools/paths.sh": rtSHA(script)}},
			"slow":  {Argv: []string{"/bin/sh", "-c", `echo "other $0" >&2; exec sleep 30`, other}, Argument: ArgumentNone, TimeoutSeconds: 1},
		}},
		"other": {Root: other},
	}}
	srv, err := NewServer(policy, []byte(testToken), []uint32{uint32(os.Getuid())}, t.TempDir(), slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv.HideFiles(policyFile, tokenFile)
	sockDir, err := os.MkdirTemp("", "serverfs-bridge-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	c, _ := serveBridge(t, srv, sockDir)

	check := func(what, stdout, stderr string, want []string) {
		t.Helper()
		if strings.Contains(stdout+stderr, base) {
			t.Errorf("%s shows a host path:\n%s%s", what, stdout, stderr)
		}
		if got := strings.Split(stdout, "\n"); !slices.Equal(got, want) {
			t.Errorf("%s: stdout\n%q, want\n%q", what, got, want)
		}
		if stderr != "token <bridge>\n" {
			t.Errorf("%s: stderr %q", what, stderr)
		}
	}
	res, err := c.RunAction(context.Background(), "wd", "paths", "")
	if err != nil {
		t.Fatal(err)
	}
	check("the live run", res.Stdout, res.Stderr, []string{"self wd:", "live wd:", "other other:", "wsdir <bridge>",
		"tree <bridge>/workspaces/" + id + "/tree", "tree2 <bridge>/workspaces/" + id2 + "/tree", "policy <bridge>",
		"cat-other other:/x", "cat-token <bridge>", ""})
	res, err = c.RunWorkspaceAction(context.Background(), "wd", id, "paths", "")
	if err != nil {
		t.Fatal(err)
	}
	check("the workspace run", res.Stdout, res.Stderr, []string{"self wd@" + id + ":", "live wd:", "other other:", "wsdir <bridge>",
		"tree wd@" + id + ":", "tree2 <bridge>/workspaces/" + id2 + "/tree", "policy <bridge>",
		"cat-other other:/x", "cat-token <bridge>", ""})

	_, err = c.RunAction(context.Background(), "wd", "slow", "")
	var fe *errs.Error
	if !errors.As(err, &fe) || fe.Code != errs.ActionTimeout || strings.Contains(fe.Msg, base) || !strings.Contains(fe.Msg, "output ends: other other:") {
		t.Errorf("the timed-out action: %v", err)
	}
}
