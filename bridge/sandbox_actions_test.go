package bridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Secrets of the agent-script fixture: none may appear in an action's
// output or in a file it wrote, unless the action reveals it.
const (
	secretEnv    = "SECRET-ENV-5a1c"
	secretPEM    = "SECRET-PEM-9e07"
	secretHidden = "SECRET-HIDDEN-33d2"
	secretNested = "SECRET-NESTED-71b4"
)

// agentScript is what a hostile agent writes for a pinned runner to
// execute: print the credentials and copy them where the MCP tools
// would serve them.
const agentScript = `cat .env server.pem .notes/todo config/prod/.env.local sub/.ssh/id_ed25519 2>&1
cp .env leak-env.txt 2>&1
cp sub/.ssh/id_ed25519 leak-key.txt 2>&1
cat .git/config 2>&1
unshare -Urm sh -c 'umount -l .env; umount -l sub/.ssh; cat .env sub/.ssh/id_ed25519' 2>&1
ls -a . | tr '\n' ' '
echo
exit 0
`

// agentFixture is a work tree holding the secrets, the pinned agent
// script and the policy of its actions: "agent" (mutating), "agent_ro"
// and "reveal" (.env revealed).
func agentFixture(t *testing.T) (string, *Policy) {
	t.Helper()
	root := rtRepo(t)
	rtWrite(t, filepath.Join(root, ".env"), secretEnv+"\n")
	rtWrite(t, filepath.Join(root, "server.pem"), secretPEM+"\n")
	rtWrite(t, filepath.Join(root, ".notes", "todo"), secretHidden+"\n")
	rtWrite(t, filepath.Join(root, "config", "prod", ".env.local"), secretNested+"\n")
	rtWrite(t, filepath.Join(root, "sub", ".ssh", "id_ed25519"), secretNested+"\n")
	rtWrite(t, filepath.Join(root, "sub", "code.txt"), "code\n")
	rtWrite(t, filepath.Join(root, "agent.sh"), agentScript)
	pin := map[string]string{"agent.sh": rtSHA(agentScript)}
	argv := []string{"/bin/sh", "agent.sh"}
	return root, &Policy{Workdirs: map[string]WorkdirPolicy{"w": rtPolicy(root, map[string]Action{
		"agent":    {Argv: argv, Mutates: true, Argument: ArgumentNone, Integrity: pin},
		"agent_ro": {Argv: argv, Argument: ArgumentNone, Integrity: pin},
		"reveal":   {Argv: []string{"cat", ".env"}, Argument: ArgumentNone, Reveal: []string{".env"}},
	})}}
}

// checkAgentMasked runs the fixture's actions through a real bridge and
// checks that no secret got out, and that a revealed one does.
func checkAgentMasked(t *testing.T, control string) {
	t.Helper()
	root, policy := agentFixture(t)
	c, _ := startBridgeIn(t, policy, t.TempDir(), shortDir(t))
	for _, name := range []string{"agent_ro", "agent"} {
		res, err := c.RunAction(context.Background(), "w", name, "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out := res.Stdout + res.Stderr
		t.Logf("%s (%s, %v): %s", name, res.Sandbox, res.SandboxControls, out)
		for _, s := range []string{secretEnv, secretPEM, secretHidden, secretNested, "[core]"} {
			if strings.Contains(out, s) {
				t.Errorf("%s printed %s", name, s)
			}
		}
		if !slices.Contains(res.SandboxControls, control) {
			t.Errorf("%s: controls %v, want %s", name, res.SandboxControls, control)
		}
		if !strings.Contains(out, "agent.sh") || !strings.Contains(out, "Permission denied") {
			t.Errorf("%s: the listing or the refusals are missing: %q", name, out)
		}
	}
	for _, leak := range []string{"leak-env.txt", "leak-key.txt"} {
		b, err := os.ReadFile(filepath.Join(root, leak))
		if err == nil && (strings.Contains(string(b), secretEnv) || strings.Contains(string(b), secretNested)) {
			t.Errorf("%s holds a secret: %q", leak, b)
		}
	}
	res, err := c.RunAction(context.Background(), "w", "reveal", "")
	if err != nil || res.Stdout != secretEnv+"\n" {
		t.Errorf("the revealed .env: %+v, %v", res, err)
	}
}

// shortDir is a directory for a bridge socket (whose path must stay
// short).
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "sfs-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// TestActionMasks: an agent-written script a pinned action runs reads
// no deny-listed or hidden path of its tree, neither printing it nor
// copying it where the tools would serve it; a revealed path it reads.
// With the mount namespace, and with Landlock alone (the kernel refusing
// user namespaces).
func TestActionMasks(t *testing.T) {
	needLandlock(t)
	t.Run("mount", func(t *testing.T) {
		needUserNamespaces(t, "TestActionMasks/landlock")
		checkAgentMasked(t, ControlMaskMount)
	})
	t.Run("landlock", func(t *testing.T) {
		rtWithoutNamespaces(t)
		checkAgentMasked(t, ControlMaskLandlock)
	})
}

// TestActionMasksAllowHidden: where the server serves hidden paths the
// actions read them too; the deny list stays masked, extra globs
// included.
func TestActionMasksAllowHidden(t *testing.T) {
	needLandlock(t)
	root := rtRepo(t)
	rtWrite(t, filepath.Join(root, ".notes"), "visible-hidden\n")
	rtWrite(t, filepath.Join(root, "db.secret"), "extra-denied\n")
	rtWrite(t, filepath.Join(root, ".env"), secretEnv+"\n")
	policy := &Policy{Sandbox: &SandboxPolicy{AllowHidden: true, Deny: []string{"*.secret"}}, Workdirs: map[string]WorkdirPolicy{"w": rtPolicy(root, map[string]Action{
		"cat": {Argv: []string{"sh", "-c", "cat .notes db.secret .env .git/HEAD 2>&1; exit 0"}, Argument: ArgumentNone},
	})}}
	c, _ := startBridgeIn(t, policy, t.TempDir(), shortDir(t))
	res, err := c.RunAction(context.Background(), "w", "cat", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stdout, "visible-hidden") || !strings.Contains(res.Stdout, "ref: refs/heads/") ||
		strings.Contains(res.Stdout, "extra-denied") || strings.Contains(res.Stdout, secretEnv) {
		t.Errorf("%q", res.Stdout)
	}
}

// TestActionProcesses: an action is PID 1 of its own PID namespace: it
// sees only its own processes in /proc, and a setsid grandchild meant to
// write the tree after the action answered is gone when it answers.
func TestActionProcesses(t *testing.T) {
	needLandlock(t)
	if err := userNamespacesRefused(); err != nil {
		t.Skipf("this kernel refuses user namespaces (%v): no PID namespace can hold the action, so nothing reaps a setsid grandchild, and the result says so (no %s among its sandbox_controls)", err, ControlPIDNamespace)
	}
	checkActionProcesses(t)
}

// checkActionProcesses runs the setsid and /proc actions through a real
// bridge.
func checkActionProcesses(t *testing.T) {
	t.Helper()
	root := rtRepo(t)
	rtWrite(t, filepath.Join(root, "sub", "keep"), "")
	// A duration no other process on the machine sleeps for.
	marker := fmt.Sprintf("3%d.5", os.Getpid())
	late := fmt.Sprintf("setsid -f sh -c 'sleep %s; echo late > late.txt' </dev/null >/dev/null 2>&1; echo started", marker)
	policy := &Policy{Workdirs: map[string]WorkdirPolicy{"w": rtPolicy(root, map[string]Action{
		"late": {Argv: []string{"sh", "-c", late}, Mutates: true, Argument: ArgumentNone},
		"ps":   {Argv: []string{"sh", "-c", "cat /proc/1/cmdline | tr '\\0' ' '; echo; ls /proc | grep -E '^[0-9]+$' | tr '\\n' ' '"}, Argument: ArgumentNone},
	})}}
	c, _ := startBridgeIn(t, policy, t.TempDir(), shortDir(t))
	res, err := c.RunAction(context.Background(), "w", "late", "")
	if err != nil || res.Stdout != "started\n" || !slices.Contains(res.SandboxControls, ControlPIDNamespace) {
		t.Fatalf("%+v, %v", res, err)
	}
	// The namespace's init has been reaped: every process in it is gone
	// already, so none can write later.
	if pids := procsWithArg(t, marker); len(pids) > 0 {
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		t.Fatalf("the setsid grandchild outlived its action: pids %v", pids)
	}
	if _, err := os.Lstat(filepath.Join(root, "late.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("late.txt: %v", err)
	}

	res, err = c.RunAction(context.Background(), "w", "ps", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("/proc inside: %q", res.Stdout)
	first, pids, _ := strings.Cut(res.Stdout, "\n")
	if !strings.HasPrefix(first, "sh -c cat /proc/1/cmdline") {
		t.Errorf("PID 1 is %q, not the action", first)
	}
	for _, f := range strings.Fields(pids) {
		if n, _ := strconv.Atoi(f); n > 64 {
			t.Errorf("/proc shows pid %d: not only the action's processes (%q)", n, pids)
		}
	}
}

// procsWithArg are the host processes one of whose arguments is arg.
func procsWithArg(t *testing.T, arg string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && slices.Contains(strings.Split(string(b), "\x00"), arg) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestActionWallsUnprivileged: run by uid 65534, as the bridge runs in
// production (not root), the masks, the PID namespace (setsid, /proc)
// and the limits hold: a fork bomb stops at max_processes, an allocation past
// max_memory_mb fails.
func TestActionWallsUnprivileged(t *testing.T) {
	if os.Getenv(sandboxChildEnv) == "nobody-walls" {
		if os.Geteuid() == 0 {
			t.Fatal("the child runs as root")
		}
		needUserNamespaces(t, "TestActionMasks/landlock")
		checkAgentMasked(t, ControlMaskMount)
		checkActionProcesses(t)
		checkActionLimits(t)
		return
	}
	needLandlock(t)
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root to run the bridge as uid 65534 (CI runs as root)")
	}
	home, err := os.MkdirTemp("", "serverfs-walls-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	out := reexecTest(t, "TestActionWallsUnprivileged", "nobody-walls", []string{"HOME=" + home, "TMPDIR=" + home},
		&syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}})
	t.Log(out)
}

// checkActionLimits runs a fork bomb and a large allocation under small
// limits.
func checkActionLimits(t *testing.T) {
	root := rtRepo(t)
	policy := &Policy{Sandbox: &SandboxPolicy{MaxProcesses: 64, MaxMemoryMB: 64}, Workdirs: map[string]WorkdirPolicy{"w": rtPolicy(root, map[string]Action{
		"fork":  {Argv: []string{"sh", "-c", "n=0; while [ $n -lt 100 ]; do sleep 30 & n=$((n+1)); done 2>&1; echo spawned; exit 0"}, Argument: ArgumentNone},
		"alloc": {Argv: []string{"python3", "-c", "b = bytearray(256 << 20); print('allocated')"}, Argument: ArgumentNone},
	})}}
	c, _ := startBridgeIn(t, policy, t.TempDir(), shortDir(t))
	res, err := c.RunAction(context.Background(), "w", "fork", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fork: %q", res.Stdout+res.Stderr)
	if !slices.Contains(res.SandboxControls, ControlProcessLimit) || !strings.Contains(res.Stdout+res.Stderr, "fork") {
		t.Errorf("100 processes under max_processes 64: %+v", res)
	}
	res, err = c.RunAction(context.Background(), "w", "alloc", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("alloc: exit %d %q", res.ExitCode, res.Stderr)
	if res.ExitCode == 0 || !strings.Contains(res.Stderr, "MemoryError") || !slices.Contains(res.SandboxControls, ControlMemoryLimit) {
		t.Errorf("256 MB under max_memory_mb 64: %+v", res)
	}
}

// TestActionMasksWithoutLandlock: on a kernel without Landlock the
// namespace still masks; without user namespaces too, a tree with
// something to mask is refused (nothing runs unmasked) and one without
// runs.
func TestActionMasksWithoutLandlock(t *testing.T) {
	defer func(old func() int) { kernelABI = old }(kernelABI)
	kernelABI = func() int { return 0 }
	root := rtRepo(t)
	rtWrite(t, filepath.Join(root, ".env"), secretEnv+"\n")
	rtWrite(t, filepath.Join(root, "sub", "plain.txt"), "plain\n")
	wp := rtPolicy(root, map[string]Action{"cat": {Argv: []string{"sh", "-c", "cat .env 2>&1; touch sub/ran; exit 0"}, Mutates: true}})
	fsys := rtFS(t, root)
	if err := userNamespacesRefused(); err != nil {
		t.Logf("this kernel refuses user namespaces (%v): only the cases without them apply", err)
	} else {
		res, err := RunAction(context.Background(), fsys, "w", wp, "cat", "", RunLimits{})
		if err != nil || strings.Contains(res.Stdout, secretEnv) || res.Sandbox != SandboxUnavailable || !slices.Contains(res.SandboxControls, ControlMaskMount) {
			t.Fatalf("namespaces without Landlock: %+v, %v", res, err)
		}
	}
	rtWithoutNamespaces(t)
	os.Remove(filepath.Join(root, "sub", "ran"))
	res, err := RunAction(context.Background(), fsys, "w", wp, "cat", "", RunLimits{})
	if res != nil || err == nil || !strings.Contains(err.Error(), "cannot be masked: this kernel grants neither user namespaces nor Landlock") {
		t.Fatalf("neither: %+v, %v", res, err)
	}
	if rtExists(filepath.Join(root, "sub", "ran")) {
		t.Error("the refused action ran")
	}
	os.RemoveAll(filepath.Join(root, ".git"))
	os.Remove(filepath.Join(root, ".env"))
	res, err = RunAction(context.Background(), fsys, "w", wp, "cat", "", RunLimits{})
	if err != nil || !rtExists(filepath.Join(root, "sub", "ran")) {
		t.Fatalf("nothing to mask: %+v, %v", res, err)
	}
}
