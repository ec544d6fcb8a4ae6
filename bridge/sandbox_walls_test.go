package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/serverfs/serverfs/bridge/internal/sandbox"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

// gitEscapeScript is a mutating action's attempt on its repository:
// each line that gets through prints ESCAPE:<what>; the allowed writes
// print WROTE:<what>.
const gitEscapeScript = `git config remote.origin.url https://evil.example/x.git 2>/dev/null && echo ESCAPE:config
printf 'echo pwned\n' 2>/dev/null > .git/hooks/pre-push && echo ESCAPE:hook
git update-ref refs/heads/evil HEAD 2>/dev/null && echo ESCAPE:ref
mv .git moved-git 2>/dev/null && echo ESCAPE:rename
rm .git/HEAD 2>/dev/null && echo ESCAPE:remove
ln .git/config linked-config 2>/dev/null && echo ESCAPE:link
echo data > sub/data.txt && echo WROTE:tree
echo data 2>/dev/null > top.txt && echo WROTE:top
exit 0
`

// gitRepoForEscapes is a work tree with a commit, an origin, a
// subdirectory and the pinned script gate.sh, and the policy of the
// mutating action "gate" that runs it.
func gitRepoForEscapes(t *testing.T) (*sfs.FS, string, WorkdirPolicy) {
	t.Helper()
	fsys, root := rtWorkdir(t)
	rtWrite(t, filepath.Join(root, "sub", "keep.txt"), "x\n")
	rtWrite(t, filepath.Join(root, "gate.sh"), gitEscapeScript)
	ptGit(t, root, "add", "-A")
	ptGit(t, root, "-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-qm", "base")
	ptGit(t, root, "remote", "add", "origin", "https://example.com/repo.git")
	// .git revealed: the walls below are the read-only bind's, not the
	// mask's.
	wp := rtPolicy(root, map[string]Action{"gate": {Argv: []string{"/bin/sh", "gate.sh"}, Mutates: true, Reveal: []string{".git"}, Integrity: map[string]string{"gate.sh": rtSHA(gitEscapeScript)}}})
	return fsys, root, wp
}

// checkGitEscapes runs "gate" and checks that nothing of .git changed
// while the work tree was written (and a new top-level file created
// when top).
func checkGitEscapes(t *testing.T, fsys *sfs.FS, root string, wp WorkdirPolicy, top bool, control string) {
	t.Helper()
	res, err := RunAction(context.Background(), fsys, "w", wp, "gate", "", RunLimits{Protect: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Stdout + res.Stderr
	if strings.Contains(out, "ESCAPE") || !strings.Contains(out, "WROTE:tree") || strings.Contains(out, "WROTE:top") != top {
		t.Errorf("the action's writes (new top-level file wanted: %v): %q", top, out)
	}
	if !slices.Contains(res.SandboxControls, control) || res.Sandbox != SandboxEnforced {
		t.Errorf("sandbox %q, controls %v; want %q among them", res.Sandbox, res.SandboxControls, control)
	}
	if got := ptGit(t, root, "config", "--get", "remote.origin.url"); got != "https://example.com/repo.git" {
		t.Errorf("origin's URL is %q", got)
	}
	for _, p := range []string{".git/hooks/pre-push", ".git/refs/heads/evil", "moved-git", "linked-config"} {
		if _, err := os.Lstat(filepath.Join(root, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".git", "HEAD")); err != nil {
		t.Errorf(".git/HEAD: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "sub", "data.txt")); err != nil || string(b) != "data\n" {
		t.Errorf("the work tree write: %q, %v", b, err)
	}
}

// TestSandboxGitReadonly: a mutating action running real git cannot
// change its repository's config, hooks, refs or .git itself, and still
// writes its work tree: in a private mount namespace (new top-level
// files allowed), and with the Landlock fallback (the root read-only).
func TestSandboxGitReadonly(t *testing.T) {
	needLandlock(t)
	t.Run("mount", func(t *testing.T) {
		needUserNamespaces(t, "TestSandboxGitReadonly/landlock")
		fsys, root, wp := gitRepoForEscapes(t)
		checkGitEscapes(t, fsys, root, wp, true, ControlGitMount)
	})
	t.Run("landlock", func(t *testing.T) {
		namespacesDisabled.Store(true)
		defer namespacesDisabled.Store(false)
		fsys, root, wp := gitRepoForEscapes(t)
		checkGitEscapes(t, fsys, root, wp, false, ControlGitLandlock)
	})
}

// sandboxChildEnv switches a re-executed test binary into the child
// half of a test.
const sandboxChildEnv = "SERVERFS_SANDBOX_TEST_CHILD"

// reexecTest runs this test binary's test name again in a child with
// attr, the child half selected by sandboxChildEnv=mode, and returns
// its output; it fails unless the child passed.
func reexecTest(t *testing.T, name, mode string, env []string, attr *syscall.SysProcAttr) string {
	t.Helper()
	bin := executableCopy(t)
	cmd := exec.Command(bin, "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append([]string{sandboxChildEnv + "=" + mode, "PATH=" + os.Getenv("PATH")}, env...)
	if abi, ok := os.LookupEnv(landlockABIEnv); ok {
		cmd.Env = append(cmd.Env, landlockABIEnv+"="+abi)
	}
	cmd.SysProcAttr = attr
	out, err := cmd.CombinedOutput()
	if err == nil && strings.Contains(string(out), "--- SKIP: "+name) {
		t.Skipf("the child (%s) skipped:\n%s", mode, out)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("the child (%s): %v\n%s", mode, err, out)
	}
	return string(out)
}

// TestSandboxGitReadonlyUnprivileged: run by uid 65534 (as the bridge
// normally runs: not root), the mount namespace still works and keeps
// .git read-only, and the mutating action holds no capability.
func TestSandboxGitReadonlyUnprivileged(t *testing.T) {
	if os.Getenv(sandboxChildEnv) == "nobody" {
		if os.Geteuid() == 0 {
			t.Fatal("the child runs as root")
		}
		needUserNamespaces(t, "TestSandboxGitReadonlyWithoutUserNamespaces")
		fsys, root, wp := gitRepoForEscapes(t)
		checkGitEscapes(t, fsys, root, wp, true, ControlGitMount)
		// In its namespace the helper may empty the bounding set too.
		checkNoCapabilities(t, true)
		return
	}
	needLandlock(t)
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root to run the bridge as uid 65534 (CI runs as root)")
	}
	home, err := os.MkdirTemp("", "serverfs-sandbox-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	reexecTest(t, "TestSandboxGitReadonlyUnprivileged", "nobody", []string{"HOME=" + home, "TMPDIR=" + home},
		&syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}})
}

// TestSandboxGitReadonlyWithoutUserNamespaces: where the kernel refuses
// user namespaces (played by a child in a user namespace of its own
// whose user.max_user_namespaces is 0), the bridge falls back to the
// Landlock rules and .git stays read-only.
func TestSandboxGitReadonlyWithoutUserNamespaces(t *testing.T) {
	if os.Getenv(sandboxChildEnv) == "nouserns" {
		if err := os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0\n"), 0); err != nil {
			t.Fatal(err)
		}
		fsys, root, wp := gitRepoForEscapes(t)
		checkGitEscapes(t, fsys, root, wp, false, ControlGitLandlock)
		return
	}
	needLandlock(t)
	if err := userNamespacesRefused(); err != nil {
		// This kernel refuses them already: nothing to play.
		t.Logf("this kernel refuses user namespaces (%v)", err)
		fsys, root, wp := gitRepoForEscapes(t)
		checkGitEscapes(t, fsys, root, wp, false, ControlGitLandlock)
		return
	}
	uid, gid := os.Geteuid(), os.Getegid()
	reexecTest(t, "TestSandboxGitReadonlyWithoutUserNamespaces", "nouserns", []string{"HOME=" + t.TempDir(), "TMPDIR=" + os.TempDir()},
		&syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		})
}

// TestSandboxGitFile: a linked worktree's .git file (a gitdir pointer)
// cannot be rewritten, nor its repository's config changed.
func TestSandboxGitFile(t *testing.T) {
	needLandlock(t)
	main := rtRepo(t)
	ptGit(t, main, "-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "base")
	root := filepath.Join(t.TempDir(), "wt")
	ptGit(t, main, "worktree", "add", "-q", root)
	pointer, err := os.ReadFile(filepath.Join(root, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	script := "echo 'gitdir: elsewhere' 2>/dev/null > .git && echo ESCAPE:pointer\n" +
		"git config core.hooksPath /tmp 2>/dev/null && echo ESCAPE:config\n" +
		"echo data > data.txt && echo WROTE:tree\n"
	// data.txt exists: where the kernel refuses user namespaces, Landlock
	// keeps new top-level entries out (sandbox_git.go).
	rtWrite(t, filepath.Join(root, "data.txt"), "")
	fsys := rtFS(t, root)
	wp := rtPolicy(root, map[string]Action{"gate": {Argv: []string{"/bin/sh", "-c", script}, Mutates: true}})
	res, err := RunAction(context.Background(), fsys, "w", wp, "gate", "", RunLimits{Protect: []string{root, main}})
	if err != nil {
		t.Fatal(err)
	}
	if out := res.Stdout + res.Stderr; strings.Contains(out, "ESCAPE") || !strings.Contains(out, "WROTE:tree") || !slices.Contains(res.SandboxControls, gitControl()) {
		t.Errorf("%q, controls %v", out, res.SandboxControls)
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".git")); string(b) != string(pointer) {
		t.Errorf("the .git file now says %q", b)
	}
	if out, _ := exec.Command("git", "-C", main, "config", "--get", "core.hooksPath").Output(); len(out) != 0 {
		t.Errorf("core.hooksPath is %q", out)
	}
}

// TestSandboxGitMissing: a live work tree without .git gets the
// Landlock rules (no .git, no top-level entry can be created), a
// workspace tree (which never has one) none.
func TestSandboxGitMissing(t *testing.T) {
	needLandlock(t)
	script := "mkdir .git 2>/dev/null && echo ESCAPE:git\necho x 2>/dev/null > top.txt && echo WROTE:top\necho x > sub/f && echo WROTE:tree\n"
	root := t.TempDir()
	rtWrite(t, filepath.Join(root, "sub", "keep"), "x")
	wp := rtPolicy(root, map[string]Action{"make": {Argv: []string{"/bin/sh", "-c", script}, Mutates: true}})
	res, err := RunAction(context.Background(), rtFS(t, root), "w", wp, "make", "", RunLimits{})
	if out := res.Stdout + res.Stderr; err != nil || out != "WROTE:tree\n" || !slices.Contains(res.SandboxControls, ControlGitLandlock) {
		t.Errorf("live tree without .git: %q, %v, controls %v", out, err, res.SandboxControls)
	}
	if _, err := os.Lstat(filepath.Join(root, ".git")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the action made a .git: %v", err)
	}

	state := t.TempDir()
	const id = "qqqqqqqqqqqqqqqq"
	tree := filepath.Join(state, "workspaces", id, "tree")
	rtWrite(t, filepath.Join(tree, "sub", "keep"), "x")
	rtWrite(t, filepath.Join(state, "workspaces", id, "meta.json"), `{"workdir":"wd","id":"`+id+`"}`)
	live := rtRepo(t)
	policy := &Policy{WorkspacesDir: state, Workdirs: map[string]WorkdirPolicy{"wd": {Root: live, ReadWrite: true, RepoOps: true, Actions: map[string]Action{
		"make": {Argv: []string{"/bin/sh", "-c", "echo x > top.txt && echo WROTE:top"}, Mutates: true, Argument: ArgumentNone},
	}}}}
	sockDir, err := os.MkdirTemp("", "serverfs-sandbox-ws-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	c, _ := startBridgeIn(t, policy, t.TempDir(), sockDir)
	wres, err := c.RunWorkspaceAction(context.Background(), "wd", id, "make", "")
	if err != nil || wres.Stdout != "WROTE:top\n" || wres.Sandbox != SandboxEnforced || slices.ContainsFunc(wres.SandboxControls, func(c string) bool { return strings.HasPrefix(c, "git-readonly") }) {
		t.Errorf("workspace: %+v, %v", wres, err)
	}
}

// TestSandboxHelperNeverRunsUnsandboxed: a helper that cannot apply a
// control (here: more deny-listed files than it masks) runs nothing:
// SANDBOX_UNAVAILABLE.
func TestSandboxHelperNeverRunsUnsandboxed(t *testing.T) {
	needLandlock(t)
	root := t.TempDir()
	for i := range sandbox.MaxMasks + 1 {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprint("f", i, ".pem")), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wp := rtPolicy(root, map[string]Action{"touch": {Argv: []string{"touch", "f0.pem", "ran"}, Mutates: true}})
	res, err := RunAction(context.Background(), rtFS(t, root), "w", wp, "touch", "", RunLimits{})
	if errs.CodeOf(err) != errs.SandboxUnavailable || res != nil || !strings.Contains(err.Error(), "cannot be masked: the work tree holds more than 4096 of them") {
		t.Fatalf("%+v, %v; want SANDBOX_UNAVAILABLE", res, err)
	}
	if _, err := os.Lstat(filepath.Join(root, "ran")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the action ran: %v", err)
	}
}

// TestSandboxGrantCwdInNamespace: a mutating grant that starts in a
// subdirectory cannot reach ../.git writable (the helper enters its
// directory again inside the mount namespace); one whose directory was
// swapped for a symlink after the check runs in the checked directory,
// with the Landlock fallback.
func TestSandboxGrantCwdInNamespace(t *testing.T) {
	needLandlock(t)
	f := newGrantFixture(t, nil)
	ptGit(t, f.root, "remote", "add", "origin", "https://example.com/repo.git")
	rtWrite(t, filepath.Join(f.root, "sub", "inside.txt"), "x")
	g := f.grant(time.Now())
	g.Argv = []string{"/bin/sh", "-c", "git config remote.origin.url https://evil.example/x.git 2>/dev/null && echo ESCAPE; echo > ../.git/hooks/pre-push 2>/dev/null && echo ESCAPE; echo x > here.txt && echo WROTE"}
	g.ArgvHash = ArgvHash(g.Argv)
	g.Constraints.Cwd = "sub"
	res, err := f.c.RunGrant(context.Background(), "wd", f.sign(t, g))
	if err != nil || res.Stdout != "WROTE\n" || !slices.Contains(res.SandboxControls, gitControl()) {
		t.Fatalf("%+v, %v", res, err)
	}
	if got := ptGit(t, f.root, "config", "--get", "remote.origin.url"); got != "https://example.com/repo.git" {
		t.Errorf("origin's URL is %q", got)
	}

	outside := t.TempDir()
	swap := func() {
		os.Rename(filepath.Join(f.root, "sub"), filepath.Join(f.root, "moved"))
		os.Symlink(outside, filepath.Join(f.root, "sub"))
	}
	grantBeforeStart.Store(&swap)
	defer grantBeforeStart.Store(nil)
	g = f.grant(time.Now())
	g.Argv = []string{"ls"}
	g.ArgvHash = ArgvHash(g.Argv)
	g.Constraints.Cwd = "sub"
	res, err = f.c.RunGrant(context.Background(), "wd", f.sign(t, g))
	if err != nil || res.Stdout != "here.txt\ninside.txt\n" || !slices.Contains(res.SandboxControls, ControlGitLandlock) {
		t.Fatalf("cwd swapped for a symlink: %+v, %v", res, err)
	}
}

// pendingConn accepts, without blocking, a connection the listener has
// queued, or returns nil: a connect that succeeded before the action
// exited is queued by then.
func pendingConn(t *testing.T, ln *net.UnixListener) net.Conn {
	t.Helper()
	rc, err := ln.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	// A listener's RawConn has only Control; its descriptor is
	// non-blocking.
	nfd, aerr := -1, error(nil)
	if err := rc.Control(func(fd uintptr) {
		nfd, _, aerr = unix.Accept4(int(fd), unix.SOCK_CLOEXEC)
	}); err != nil {
		t.Fatal(err)
	}
	if errors.Is(aerr, unix.EAGAIN) {
		return nil
	}
	if aerr != nil {
		t.Fatal(aerr)
	}
	f := os.NewFile(uintptr(nfd), "accepted")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// unixListener listens on a pathname socket in a directory outside
// every read path.
func unixListener(t *testing.T) (*net.UnixListener, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, path
}

// unixConnectPy makes an unnamed stream socketpair, sends "dg" to the
// datagram socket argv[2] from one end of a datagram socketpair (when
// given), and connects to the stream socket argv[1] and sends "hi".
const unixConnectPy = `import socket, sys
a, b = socket.socketpair(); a.close(); b.close(); print("socketpair")
if len(sys.argv) > 2:
    try:
        c, d = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        c.sendto(b"dg", sys.argv[2]); print("dgram sent")
    except PermissionError:
        print("dgram refused")
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1]); s.sendall(b"hi"); s.close(); print("connected")
`

// unixgramListener is a named datagram socket in a directory outside
// every read path.
func unixgramListener(t *testing.T) (*net.UnixConn, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dg.sock")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, path
}

// pendingDatagram reads, without blocking, a datagram queued on c ("":
// none).
func pendingDatagram(t *testing.T, c *net.UnixConn) string {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, rerr := 0, error(nil)
	if err := rc.Control(func(fd uintptr) {
		n, _, rerr = unix.Recvfrom(int(fd), buf, unix.MSG_DONTWAIT)
	}); err != nil {
		t.Fatal(err)
	}
	if errors.Is(rerr, unix.EAGAIN) {
		return ""
	}
	if rerr != nil {
		t.Fatal(rerr)
	}
	return string(buf[:n])
}

// TestSandboxUnixSockets: an action reaches no pathname Unix socket
// (a listener outside every read path accepts nothing, a datagram
// socket receives nothing from a datagram socketpair; the bridge's own
// socket is refused too), in or out of the mount namespace, unless its
// policy says unix_sockets; an unnamed stream socketpair stays allowed.
func TestSandboxUnixSockets(t *testing.T) {
	needLandlock(t)
	ln, path := unixListener(t)
	dg, dgPath := unixgramListener(t)
	py := "/usr/bin/python3"
	root := rtRepo(t)
	sockDir, err := os.MkdirTemp("", "serverfs-sandbox-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	bridgeSock := filepath.Join(sockDir, "bridge.sock")
	policy := &Policy{Workdirs: map[string]WorkdirPolicy{"wd": {Root: root, ReadWrite: true, RepoOps: true, Actions: map[string]Action{
		"connect":         {Argv: []string{py, "-c", unixConnectPy, path, dgPath}, Argument: ArgumentNone},
		"connect_mutates": {Argv: []string{py, "-c", unixConnectPy, path, dgPath}, Mutates: true, Argument: ArgumentNone},
		"connect_bridge":  {Argv: []string{py, "-c", unixConnectPy, bridgeSock, dgPath}, Argument: ArgumentNone},
		"connect_allowed": {Argv: []string{py, "-c", unixConnectPy, path, dgPath}, UnixSockets: true, Argument: ArgumentNone},
	}}}}
	c, _ := startBridgeIn(t, policy, t.TempDir(), sockDir)
	wantControl := ControlUnixSeccomp
	if kernelABI() >= sandboxUnixABI {
		wantControl = ControlUnixLandlock
	}
	for _, name := range []string{"connect", "connect_mutates", "connect_bridge"} {
		res, err := c.RunAction(context.Background(), "wd", name, "")
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode == 0 || !strings.Contains(res.Stdout, "socketpair\ndgram refused\n") || strings.Contains(res.Stdout, "connected") || !strings.Contains(res.Stderr, "PermissionError") {
			t.Errorf("%s: %+v", name, res)
		}
		if got := pendingDatagram(t, dg); got != "" {
			t.Errorf("%s: the datagram socket received %q", name, got)
		}
		if !slices.Contains(res.SandboxControls, wantControl) || res.Sandbox != SandboxEnforced {
			t.Errorf("%s: sandbox %q, controls %v", name, res.Sandbox, res.SandboxControls)
		}
		if conn := pendingConn(t, ln); conn != nil {
			conn.Close()
			t.Errorf("%s: the listener got a connection", name)
		}
	}
	res, err := c.RunAction(context.Background(), "wd", "connect_allowed", "")
	if err != nil || res.ExitCode != 0 || !strings.Contains(res.Stdout, "dgram sent\nconnected") || pendingDatagram(t, dg) != "dg" {
		t.Fatalf("connect_allowed: %+v, %v", res, err)
	}
	if res.Sandbox != SandboxEnforced || slices.ContainsFunc(res.SandboxControls, func(c string) bool { return strings.HasPrefix(c, "unix-sockets") }) {
		t.Errorf("connect_allowed: sandbox %q, controls %v", res.Sandbox, res.SandboxControls)
	}
	conn := pendingConn(t, ln)
	if conn == nil {
		t.Fatal("connect_allowed: the listener has no connection")
	}
	defer conn.Close()
	if b, err := io.ReadAll(conn); err != nil || string(b) != "hi" {
		t.Errorf("connect_allowed sent %q, %v", b, err)
	}
}

// TestSandboxNoCapabilities: an action started by a root bridge holds
// no capability (in and out of the mount namespace) and cannot read the
// bridge's environment (the test process stands for the bridge).
func TestSandboxNoCapabilities(t *testing.T) {
	needLandlock(t)
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root: it checks what a root bridge's action keeps (CI runs as root)")
	}
	checkNoCapabilities(t, false)
	checkNoCapabilities(t, true)
}

// checkNoCapabilities runs an action that reports its capability sets
// and no_new_privs and tries to read this process's environment.
func checkNoCapabilities(t *testing.T, mutates bool) {
	t.Helper()
	fsys, root := rtWorkdir(t)
	script := fmt.Sprintf("grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status; grep -c NoNewPrivs:.1 /proc/self/status; head -c1 /proc/%d/environ >/dev/null 2>&1 && echo ESCAPE:environ; exit 0", os.Getpid())
	wp := rtPolicy(root, map[string]Action{"caps": {Argv: []string{"/bin/sh", "-c", script}, Mutates: mutates}})
	res, err := RunAction(context.Background(), fsys, "w", wp, "caps", "", RunLimits{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	if len(lines) != 6 || lines[5] != "1" || strings.Contains(res.Stdout, "ESCAPE") || !slices.Contains(res.SandboxControls, ControlNoCapabilities) {
		t.Fatalf("mutates %v: %q, controls %v", mutates, res.Stdout, res.SandboxControls)
	}
	for _, l := range lines[:5] {
		if !strings.HasSuffix(l, "\t0000000000000000") {
			t.Errorf("mutates %v: %s", mutates, l)
		}
	}
}

// TestSandboxControlsByKernel: the level and the controls named for
// each kernel ABI and policy.
func TestSandboxControlsByKernel(t *testing.T) {
	for _, tc := range []struct {
		abi   int
		opts  sandboxOpts
		git   string
		level string
		want  string
	}{
		{0, sandboxOpts{}, "", SandboxUnavailable, ""},
		{3, sandboxOpts{}, "", SandboxPartial, "landlock-fs unix-sockets:seccomp no-capabilities"},
		{4, sandboxOpts{network: true, unixSockets: true}, "", SandboxPartial, "landlock-fs no-capabilities"},
		{7, sandboxOpts{}, "", SandboxEnforced, "landlock-fs landlock-tcp landlock-scope unix-sockets:seccomp no-capabilities"},
		{7, sandboxOpts{network: true, unixSockets: true}, sandbox.GitByMount, SandboxEnforced, "landlock-fs landlock-scope git-readonly:mount no-capabilities"},
		{7, sandboxOpts{}, sandbox.GitByLandlock, SandboxEnforced, "landlock-fs landlock-tcp landlock-scope unix-sockets:seccomp git-readonly:landlock no-capabilities"},
		{9, sandboxOpts{}, "", SandboxEnforced, "landlock-fs landlock-tcp landlock-scope unix-sockets:landlock no-capabilities"},
	} {
		level, controls := sandboxControls(tc.abi, tc.opts, tc.git)
		if level != tc.level || strings.Join(controls, " ") != tc.want {
			t.Errorf("ABI %d %+v %q: %s %v, want %s %s", tc.abi, tc.opts, tc.git, level, controls, tc.level, tc.want)
		}
	}
}

// TestSandboxGrantUnixSockets: a grant that says unix_sockets, where
// the policy allows it, reaches a pathname Unix socket.
func TestSandboxGrantUnixSockets(t *testing.T) {
	needLandlock(t)
	ln, path := unixListener(t)
	f := newGrantFixture(t, func(g *GrantPolicy) { g.AllowUnixSockets = true })
	g := f.grant(time.Now())
	g.Argv = []string{"/usr/bin/python3", "-c", unixConnectPy, path}
	g.ArgvHash = ArgvHash(g.Argv)
	g.Constraints = GrantConstraints{UnixSockets: true, Cwd: "."}
	res, err := f.c.RunGrant(context.Background(), "wd", f.sign(t, g))
	if err != nil || res.ExitCode != 0 || !strings.Contains(res.Stdout, "connected") {
		t.Fatalf("%+v, %v", res, err)
	}
	conn := pendingConn(t, ln)
	if conn == nil {
		t.Fatal("the listener has no connection")
	}
	conn.Close()
}

// executableCopy is a copy of this test binary that another uid can
// execute (a directory and file of mode 0755 whatever the umask),
// removed when the test ends.
func executableCopy(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "serverfs-bridge-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "bridge.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	// Chmod too: MkdirTemp's and WriteFile's modes pass through the
	// umask (077 leaves uid 65534 nothing to execute).
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, bin} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}
