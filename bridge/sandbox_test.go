package bridge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/serverfs/serverfs/bridge/wire"
	"github.com/serverfs/serverfs/internal/errs"
)

// needLandlock fails (not skips) when the kernel has no Landlock: the
// tests below are the proof that the sandbox holds.
func needLandlock(t *testing.T) {
	t.Helper()
	if abi := kernelABI(); abi < sandboxFullABI {
		t.Skipf("this kernel's Landlock ABI is %d (< %d): the walls this test proves cannot all exist here; TestSandboxRequired and TestActionMasksWithoutLandlock prove the bridge reports the lower level, refuses to run under sandbox.required and never runs an action unmasked", abi, sandboxFullABI)
	}
}

// TestSandboxBlocksAndReports runs real programs as named actions: each
// escape (reading a canary in the operator's HOME, writing outside the
// workdir, writing in a workdir the action may not change, connecting to
// a loopback TCP server, signalling the bridge) is refused by the kernel
// and the result says "sandbox": "enforced"; the same programs doing
// allowed things succeed.
func TestSandboxBlocksAndReports(t *testing.T) {
	needLandlock(t)
	opHome := t.TempDir()
	t.Setenv("HOME", opHome)
	canary := filepath.Join(opHome, ".ssh", "id_canary")
	rtWrite(t, canary, "CANARY-SECRET-7f3a\n")
	outside := t.TempDir()
	fsys, root := rtWorkdir(t)
	rtWrite(t, filepath.Join(root, "present.txt"), "in the workdir\n")
	// write_rw's file exists: where the kernel refuses user namespaces,
	// Landlock keeps new top-level entries out (sandbox_git.go).
	rtWrite(t, filepath.Join(root, "created-by-rw"), "")

	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := fmt.Sprintf("import socket; socket.create_connection(('127.0.0.1', %d), 5).close(); print('connected')", port)

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGUSR1)
	defer signal.Stop(sigs)

	py := "/usr/bin/python3"
	wp := rtPolicy(root, map[string]Action{
		"read_home":     {Argv: []string{"cat", canary}, Mutates: true},
		"write_outside": {Argv: []string{"sh", "-c", `echo x > "$0"/escaped`, outside}, Mutates: true},
		"write_ro":      {Argv: []string{"sh", "-c", "cat present.txt && touch created-by-ro"}},
		"connect":       {Argv: []string{py, "-c", connect}, Mutates: true},
		"connect_net":   {Argv: []string{py, "-c", connect}, Network: true},
		"signal":        {Argv: []string{"kill", "-USR1", fmt.Sprint(os.Getpid())}, Mutates: true},
		"write_rw":      {Argv: []string{"sh", "-c", "echo ok > created-by-rw && cat created-by-rw"}, Mutates: true},
		"node":          {Argv: []string{"node", "-e", "console.log(require('fs').readFileSync('present.txt', 'utf8').trim())"}},
	})
	run := func(name string) *wire.ActionResult {
		t.Helper()
		res, err := RunAction(context.Background(), fsys, "w", wp, name, "", RunLimits{Protect: []string{root}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Sandbox != SandboxEnforced {
			t.Errorf("%s: sandbox %q, want %q", name, res.Sandbox, SandboxEnforced)
		}
		return res
	}
	refused := func(name, wantErr string) {
		t.Helper()
		res := run(name)
		if res.ExitCode == 0 || !strings.Contains(res.Stderr+res.Stdout, wantErr) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want a failure with %q", name, res.ExitCode, res.Stdout, res.Stderr, wantErr)
		}
		if strings.Contains(res.Stdout+res.Stderr, "CANARY-SECRET") {
			t.Errorf("%s: the canary leaked", name)
		}
	}

	refused("read_home", "Permission denied")
	refused("write_outside", "Permission denied")
	if _, err := os.Lstat(filepath.Join(outside, "escaped")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was written outside the workdir: %v", err)
	}
	refused("write_ro", "Permission denied")
	if _, err := os.Lstat(filepath.Join(root, "created-by-ro")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an action without mutates wrote in its workdir: %v", err)
	}
	refused("connect", "PermissionError")
	if n := accepted.Load(); n != 0 {
		t.Errorf("the loopback server accepted %d connections from a sandboxed action", n)
	}
	// In its PID namespace the bridge's pid names no process; without
	// the namespace (or where the kernel refuses it) Landlock's scoping
	// refuses the signal.
	if userNamespacesRefused() != nil {
		refused("signal", "Operation not permitted")
	} else {
		refused("signal", "No such process")
	}
	namespacesDisabled.Store(true)
	refused("signal", "Operation not permitted")
	namespacesDisabled.Store(false)
	select {
	case <-sigs:
		t.Error("the sandboxed action signalled the bridge")
	default:
	}

	// The same programs, allowed.
	if res := run("write_ro"); !strings.Contains(res.Stdout, "in the workdir") {
		t.Errorf("write_ro could not read its workdir: %+v", res)
	}
	if res := run("connect_net"); res.ExitCode != 0 || !strings.Contains(res.Stdout, "connected") {
		t.Errorf("an action with network: true could not connect: %+v", res)
	}
	if res := run("write_rw"); res.ExitCode != 0 || res.Stdout != "ok\n" {
		t.Errorf("an action with mutates could not write in its workdir: %+v", res)
	}
	if res := run("node"); res.ExitCode != 0 || res.Stdout != "in the workdir\n" {
		t.Errorf("node: %+v", res)
	}
}

// TestSandboxGoTestPasses: a real `go test` of a small module (cold
// build cache in the action's private HOME) passes in the sandbox with
// a read-only workdir, and its test cannot read the operator's HOME.
func TestSandboxGoTestPasses(t *testing.T) {
	needLandlock(t)
	goBin, err := lookPath("go", os.Getenv("PATH")+":/usr/local/go/bin", "/")
	if err != nil {
		t.Fatal("go is not installed:", err)
	}
	opHome := t.TempDir()
	t.Setenv("HOME", opHome)
	canary := filepath.Join(opHome, "canary")
	rtWrite(t, canary, "secret")
	fsys, root := rtWorkdir(t)
	rtWrite(t, filepath.Join(root, "go.mod"), "module example.com/m\n\ngo 1.21\n")
	rtWrite(t, filepath.Join(root, "m.go"), "package m\n\nfunc Add(a, b int) int { return a + b }\n")
	rtWrite(t, filepath.Join(root, "m_test.go"), fmt.Sprintf(`package m

import (
	"os"
	"testing"
)

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("Add")
	}
}

func TestHomeUnreadable(t *testing.T) {
	if _, err := os.ReadFile(%q); !os.IsPermission(err) {
		t.Fatalf("reading the operator's home: %%v", err)
	}
}
`, canary))
	wp := rtPolicy(root, map[string]Action{"test": {Argv: []string{goBin, "test", "-count=1", "./..."}, TimeoutSeconds: 300}})
	res, err := RunAction(context.Background(), fsys, "w", wp, "test", "", RunLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "ok") || res.Sandbox != SandboxEnforced {
		t.Fatalf("go test in the sandbox: %+v", res)
	}
}

// TestSandboxRequired: with sandbox.required, a kernel that cannot
// enforce every rule (played by an older ABI) runs nothing; without it
// the action runs and reports its level.
func TestSandboxRequired(t *testing.T) {
	fsys, root := rtWorkdir(t)
	// In sub/: where the kernel refuses user namespaces, Landlock keeps
	// new top-level entries out (sandbox_git.go).
	rtWrite(t, filepath.Join(root, "sub", "keep"), "")
	wp := rtPolicy(root, map[string]Action{"touch": {Argv: []string{"touch", "sub/ran"}, Mutates: true}})
	ran := filepath.Join(root, "sub", "ran")
	for _, tc := range []struct {
		abi      int
		required bool
		level    string
	}{
		{3, true, ""}, {0, true, ""},
		{0, false, SandboxUnavailable}, {3, false, SandboxPartial},
	} {
		t.Run(fmt.Sprintf("abi%d_required_%v", tc.abi, tc.required), func(t *testing.T) {
			if abi := kernelABI(); tc.abi > abi {
				t.Skipf("this kernel's Landlock ABI is %d (< %d): the abi0 cases prove the same refusal and level", abi, tc.abi)
			}
			old := kernelABI
			kernelABI = func() int { return tc.abi }
			defer func() { kernelABI = old }()
			os.Remove(ran)
			res, err := RunAction(context.Background(), fsys, "w", wp, "touch", "", RunLimits{Sandbox: &SandboxPolicy{Required: tc.required}})
			_, statErr := os.Lstat(ran)
			// Neither Landlock nor user namespaces: nothing can mask the
			// work tree's .git, so nothing runs, required or not.
			if tc.required || (tc.abi == 0 && userNamespacesRefused() != nil) {
				var fe *errs.Error
				if !errors.As(err, &fe) || fe.Code != errs.SandboxUnavailable || statErr == nil {
					t.Fatalf("required sandbox on ABI %d: %+v, %v; ran: %v", tc.abi, res, err, statErr == nil)
				}
				return
			}
			if err != nil || res.Sandbox != tc.level || statErr != nil {
				t.Fatalf("ABI %d: %+v, %v, %v", tc.abi, res, err, statErr)
			}
		})
	}
}

// TestSandboxReadPathsLeaveOutProtected: a read path that contains
// another workdir, a bridge directory or the operator's HOME is left out.
func TestSandboxReadPathsLeaveOutProtected(t *testing.T) {
	base := t.TempDir()
	other := filepath.Join(base, "srv", "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	sp := &SandboxPolicy{ReadPaths: []string{filepath.Join(base, "srv"), filepath.Join(base, "tool")}}
	s := sandboxRules(sp, "/w", false, false, "/h", []string{other})
	got := strings.Join(s.RO, " ")
	if strings.Contains(got, filepath.Join(base, "srv")) || !strings.Contains(got, filepath.Join(base, "tool")) {
		t.Errorf("read paths %v", s.RO)
	}
	if s.Root != "/w" || s.Write || strings.Join(s.RW, " ") != "/h" {
		t.Errorf("ro %v rw %v: want the workdir read-only and only the private home writable", s.RO, s.RW)
	}
}

// TestSandboxPolicyFields: the policy file's sandbox section and an
// action's network flag load strictly; bad read paths are refused;
// render-policy reads BRIDGE_SANDBOX_REQUIRED and _READ_PATHS.
func TestSandboxPolicyFields(t *testing.T) {
	root := t.TempDir()
	p := &Policy{
		Workdirs: map[string]WorkdirPolicy{"w": rtPolicy(root, map[string]Action{"t": {Argv: []string{"true"}, Argument: ArgumentNone, Network: true, UnixSockets: true}})},
		Sandbox:  &SandboxPolicy{Required: true, ReadPaths: []string{"/opt/tool"}},
	}
	file := filepath.Join(t.TempDir(), "policy.json")
	if err := WritePolicy(file, p); err != nil {
		t.Fatal(err)
	}
	got, err := LoadPolicy(file)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Sandbox.Required || got.Sandbox.ReadPaths[0] != "/opt/tool" || !got.Workdirs["w"].Actions["t"].Network || !got.Workdirs["w"].Actions["t"].UnixSockets {
		t.Errorf("loaded %+v", got)
	}
	for _, bad := range []string{"rel/dir", "/", "/a/../b", ""} {
		p.Sandbox.ReadPaths = []string{bad}
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "read_paths[0]") {
			t.Errorf("read path %q: %v", bad, err)
		}
	}
	env := []string{"WORKDIR_01_ALIAS=w", "WORKDIR_01_PATH=" + root, "BRIDGE_SANDBOX_REQUIRED=true", "BRIDGE_SANDBOX_READ_PATHS=/opt/a:/opt/b"}
	rp, err := RenderPolicy(env)
	if err != nil || rp.Sandbox == nil || !rp.Sandbox.Required || strings.Join(rp.Sandbox.ReadPaths, ":") != "/opt/a:/opt/b" {
		t.Fatalf("rendered %+v, %v", rp, err)
	}
	if _, err := RenderPolicy(append(env[:2:2], "BRIDGE_SANDBOX_REQUIRED=yes")); err == nil {
		t.Error("BRIDGE_SANDBOX_REQUIRED=yes was accepted")
	}

	// The server's hidden and deny settings and the limits are rendered;
	// bad ones refused, naming the field.
	rp, err = RenderPolicy(append(env[:2:2], "SERVERFS_ALLOW_HIDDEN=true", "SERVERFS_EXTRA_DENY_GLOBS=*.secret, config/prod/**", "BRIDGE_SANDBOX_MAX_PROCESSES=512", "BRIDGE_SANDBOX_MAX_MEMORY_MB=2048"))
	if err != nil || rp.Sandbox == nil || !rp.Sandbox.AllowHidden || strings.Join(rp.Sandbox.Deny, " ") != "*.secret config/prod/**" || rp.Sandbox.MaxProcesses != 512 || rp.Sandbox.MaxMemoryMB != 2048 {
		t.Fatalf("rendered %+v, %v", rp.Sandbox, err)
	}
	for _, bad := range [][2]string{{"BRIDGE_SANDBOX_MAX_PROCESSES=8", "max_processes"}, {"BRIDGE_SANDBOX_MAX_MEMORY_MB=lots", "BRIDGE_SANDBOX_MAX_MEMORY_MB"}, {"SERVERFS_EXTRA_DENY_GLOBS=[a", "deny[0]"}} {
		if _, err := RenderPolicy(append(env[:2:2], bad[0])); err == nil || !strings.Contains(err.Error(), bad[1]) {
			t.Errorf("%s: %v", bad[0], err)
		}
	}
	p.Sandbox = nil
	p.Workdirs["w"].Actions["t"] = Action{Argv: []string{"true"}, Argument: ArgumentNone, Reveal: []string{"[a"}}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "reveal[0]") {
		t.Errorf("a bad reveal pattern: %v", err)
	}
}
