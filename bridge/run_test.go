package bridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/serverfs/serverfs/bridge/wire"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// rtWorkdir makes a read-write workdir "w" over a fresh git work tree
// and returns the FS and the root.
func rtWorkdir(t testing.TB) (*sfs.FS, string) {
	t.Helper()
	root := rtRepo(t)
	return rtFS(t, root), root
}

// rtPlainWorkdir is a workdir without .git or anything else to mask: an
// action runs there out of namespaces even on a kernel without Landlock
// (in a repository nothing could mask .git, and nothing would run).
func rtPlainWorkdir(t testing.TB) (*sfs.FS, string) {
	t.Helper()
	root := t.TempDir()
	return rtFS(t, root), root
}

// rtRepo is a fresh directory made a git work tree by the system git:
// a repository workdir, as named actions run in (in a root without
// .git a mutating action could not create top-level entries).
func rtRepo(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	cmd := exec.Command("git", "init", "-q", root)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return root
}

func rtFS(t testing.TB, root string) *sfs.FS {
	t.Helper()
	cfg, err := sfs.LoadConfig(nil, []string{"w=" + root + ":rw"})
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return fsys
}

func rtPolicy(root string, actions map[string]Action) WorkdirPolicy {
	return WorkdirPolicy{Root: root, ReadWrite: true, RepoOps: true, Actions: actions}
}

func rtWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func rtSHA(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func rtCode(t *testing.T, err error, want errs.Code) *errs.Error {
	t.Helper()
	var fe *errs.Error
	if !errors.As(err, &fe) || fe.Code != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
	return fe
}

func rtExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// rtWithoutNamespaces runs the rest of the test as on a kernel that
// refuses user namespaces: the process group, not a PID namespace,
// bounds the action's processes.
func rtWithoutNamespaces(t *testing.T) {
	namespacesDisabled.Store(true)
	t.Cleanup(func() { namespacesDisabled.Store(false) })
}

// rtGroupGone waits until no process of process group pgid exists (its
// killed members may need a moment to be reaped by their new parent).
func rtGroupGone(t *testing.T, pgid int, pids ...int) {
	t.Helper()
	if pgid <= 1 {
		t.Fatalf("bad pgid %d", pgid)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := syscall.Kill(-pgid, 0)
		if err == syscall.ESRCH {
			break
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL) // do not leak it past the test
			t.Fatalf("process group %d still exists after the run (kill -0: %v)", pgid, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
			t.Errorf("process %d of the group still exists (kill -0: %v)", pid, err)
		}
	}
}

// rtInts reads the whitespace-separated integers of s.
func rtInts(t *testing.T, s string) []int {
	t.Helper()
	var out []int
	for _, f := range strings.Fields(s) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("not a pid list: %q", s)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		t.Fatalf("no pid in %q", s)
	}
	return out
}

func TestRunIntegrityRefusedBeforeStart(t *testing.T) {
	const script = "echo lint\n"
	cases := []struct {
		name  string
		setup func(t *testing.T, root string) map[string]string
	}{
		{"mismatch", func(t *testing.T, root string) map[string]string {
			rtWrite(t, filepath.Join(root, "tools/lint.sh"), script+"# changed\n")
			return map[string]string{"tools/lint.sh": rtSHA(script)}
		}},
		{"one of several mismatches", func(t *testing.T, root string) map[string]string {
			rtWrite(t, filepath.Join(root, "tools/lint.sh"), script)
			rtWrite(t, filepath.Join(root, "uv.lock"), "v2")
			return map[string]string{"tools/lint.sh": rtSHA(script), "uv.lock": rtSHA("v1")}
		}},
		{"missing", func(t *testing.T, root string) map[string]string {
			return map[string]string{"tools/lint.sh": rtSHA(script)}
		}},
		{"symlinked", func(t *testing.T, root string) map[string]string {
			rtWrite(t, filepath.Join(root, "real.sh"), script)
			if err := os.MkdirAll(filepath.Join(root, "tools"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../real.sh", filepath.Join(root, "tools/lint.sh")); err != nil {
				t.Fatal(err)
			}
			return map[string]string{"tools/lint.sh": rtSHA(script)}
		}},
		{"symlinked directory", func(t *testing.T, root string) map[string]string {
			rtWrite(t, filepath.Join(root, "real/lint.sh"), script)
			if err := os.Symlink("real", filepath.Join(root, "tools")); err != nil {
				t.Fatal(err)
			}
			return map[string]string{"tools/lint.sh": rtSHA(script)}
		}},
		{"directory", func(t *testing.T, root string) map[string]string {
			if err := os.MkdirAll(filepath.Join(root, "tools/lint.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			return map[string]string{"tools/lint.sh": rtSHA(script)}
		}},
		{"oversized", func(t *testing.T, root string) map[string]string {
			p := filepath.Join(root, "tools/lint.sh")
			rtWrite(t, p, "")
			if err := os.Truncate(p, MaxPinnedFileBytes+1); err != nil {
				t.Fatal(err)
			}
			return map[string]string{"tools/lint.sh": rtSHA(script)}
		}},
		{"outside the root", func(t *testing.T, root string) map[string]string {
			return map[string]string{"../lint.sh": rtSHA(script)}
		}},
		{"malformed digest", func(t *testing.T, root string) map[string]string {
			rtWrite(t, filepath.Join(root, "tools/lint.sh"), script)
			return map[string]string{"tools/lint.sh": "abc"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys, root := rtWorkdir(t)
			pins := tc.setup(t, root)
			wp := rtPolicy(root, map[string]Action{"lint": {Argv: []string{"touch", "canary"}, Mutates: true, Argument: ArgumentNone, Integrity: pins}})
			res, err := RunAction(context.Background(), fsys, "w", wp, "lint", "", RunLimits{})
			fe := rtCode(t, err, errs.IntegrityMismatch)
			if res != nil {
				t.Errorf("result %+v with an integrity failure", res)
			}
			if _, ok := pins[fe.Path]; !ok || fe.Workdir != "w" {
				t.Errorf("error names %q:%q, want a pin path", fe.Workdir, fe.Path)
			}
			if strings.Contains(err.Error(), root) {
				t.Errorf("error shows the host path: %v", err)
			}
			if rtExists(filepath.Join(root, "canary")) {
				t.Fatal("the action ran despite the integrity failure")
			}
		})
	}

	t.Run("matching pins run", func(t *testing.T) {
		fsys, root := rtWorkdir(t)
		rtWrite(t, filepath.Join(root, "tools/lint.sh"), script)
		rtWrite(t, filepath.Join(root, ".python-version"), "3.12\n")
		pins := map[string]string{"tools/lint.sh": rtSHA(script), ".python-version": strings.ToUpper(rtSHA("3.12\n"))}
		// In tools/: where the kernel refuses user namespaces, Landlock
		// keeps new top-level entries out (sandbox_git.go).
		wp := rtPolicy(root, map[string]Action{"lint": {Argv: []string{"touch", "tools/canary"}, Mutates: true, Integrity: pins}})
		res, err := RunAction(context.Background(), fsys, "w", wp, "lint", "", RunLimits{})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("RunAction = %+v, %v", res, err)
		}
		if !rtExists(filepath.Join(root, "tools", "canary")) {
			t.Fatal("the action did not run")
		}
	})
}

func TestRunEnvironmentAllowlisted(t *testing.T) {
	fsys, root := rtWorkdir(t)
	secrets := map[string]string{
		"OPENAI_API_KEY":        "sk-test-openai",
		"CONTROL_PLANE_API_KEY": "cp-test-key",
		"GITHUB_TOKEN":          "ghp-test-token",
		"MY_DB_SECRET":          "db-secret",
		"SSH_AUTH_SOCK":         "/tmp/agent.sock", // git only
		"GIT_DIR":               "/tmp/elsewhere",
		"LD_PRELOAD":            "/tmp/evil.so",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("HOME", "/home/test-user")
	t.Setenv("LANG", "C.UTF-8")
	wp := rtPolicy(root, map[string]Action{"env": {Argv: []string{"env"}}})
	res, err := RunAction(context.Background(), fsys, "w", wp, "env", "", RunLimits{})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("RunAction = %+v, %v", res, err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	for k, v := range secrets {
		if _, ok := got[k]; ok || strings.Contains(res.Stdout, v) {
			t.Errorf("the action sees %s", k)
		}
	}
	allowed := map[string]bool{"PATH": true, "HOME": true, "LANG": true, "LC_ALL": true, "TMPDIR": true, "USER": true, "LOGNAME": true}
	for k := range got {
		if !allowed[k] {
			t.Errorf("the action sees %s, which is not on the allowlist", k)
		}
	}
	// HOME and TMPDIR are a private, empty directory of this run, never
	// the operator's home (with its credentials).
	// (The output shows it as "$HOME"; the action tells its real path.)
	if got["PATH"] != os.Getenv("PATH") || got["HOME"] != "$HOME" || got["TMPDIR"] != "$HOME" || got["LANG"] != "C.UTF-8" {
		t.Errorf("environment = %v", got)
	}
	// The file exists: where the kernel refuses user namespaces, Landlock
	// keeps new top-level entries out (sandbox_git.go).
	rtWrite(t, filepath.Join(root, "home-path"), "")
	wp.Actions["home"] = Action{Argv: []string{"sh", "-c", `printf '%s\n%s' "$HOME" "$TMPDIR" > home-path`}, Mutates: true}
	if _, err := RunAction(context.Background(), fsys, "w", wp, "home", "", RunLimits{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "home-path"))
	home, tmp, _ := strings.Cut(string(b), "\n")
	if err != nil || !strings.Contains(home, "serverfs-action-") || tmp != home {
		t.Errorf("the action's HOME and TMPDIR: %q, %v", b, err)
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Errorf("the action's private HOME outlived it: %v", err)
	}

	// Without a PATH, the default one.
	t.Setenv("PATH", "")
	res, err = RunAction(context.Background(), fsys, "w", wp, "env", "", RunLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stdout, "PATH="+DefaultPath+"\n") {
		t.Errorf("no default PATH in %q", res.Stdout)
	}
}

func TestRunTimeoutKillsProcessGroup(t *testing.T) {
	rtWithoutNamespaces(t)
	fsys, root := rtPlainWorkdir(t)
	// The shell and its background child ignore SIGTERM; it prints its
	// pid (= the process group id) and the child's.
	wp := rtPolicy(root, map[string]Action{"hang": {Argv: []string{"sh", "-c", "trap '' TERM; sleep 1000 & echo $$ $!; sleep 1000"}}})
	start := time.Now()
	res, err := RunAction(context.Background(), fsys, "w", wp, "hang", "", RunLimits{Timeout: 500 * time.Millisecond})
	rtCode(t, err, errs.ActionTimeout)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the timeout took %v", d)
	}
	if res == nil {
		t.Fatal("no partial result")
	}
	if res.ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("exit code %d, want SIGKILL's", res.ExitCode)
	}
	pids := rtInts(t, res.Stdout)
	rtGroupGone(t, pids[0], pids...)
}

func TestRunTimeoutFromAction(t *testing.T) {
	if got := actionTimeout(Action{TimeoutSeconds: 7}, RunLimits{Timeout: time.Second}); got != 7*time.Second {
		t.Errorf("timeout %v", got)
	}
	if got := actionTimeout(Action{}, RunLimits{Timeout: time.Second}); got != time.Second {
		t.Errorf("timeout %v", got)
	}
	if got := actionTimeout(Action{}, RunLimits{}); got != DefaultActionTimeout {
		t.Errorf("timeout %v", got)
	}
	if got := actionTimeout(Action{TimeoutSeconds: 1 << 30}, RunLimits{}); got != MaxActionTimeout {
		t.Errorf("timeout %v", got)
	}
}

func TestRunBackgroundChildDoesNotOutliveRun(t *testing.T) {
	rtWithoutNamespaces(t)
	fsys, root := rtPlainWorkdir(t)
	// The shell exits at once; its background child would live on.
	wp := rtPolicy(root, map[string]Action{"bg": {Argv: []string{"sh", "-c", "sleep 1000 & echo $$ $!"}}})
	start := time.Now()
	res, err := RunAction(context.Background(), fsys, "w", wp, "bg", "", RunLimits{Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("RunAction = %+v, %v", res, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the run took %v", d)
	}
	pids := rtInts(t, res.Stdout)
	rtGroupGone(t, pids[0], pids...)
}

func TestRunCancelKillsProcessGroup(t *testing.T) {
	rtWithoutNamespaces(t)
	fsys, root := rtPlainWorkdir(t)
	// Below the root: without the mount namespace Landlock keeps the
	// root from gaining entries.
	pidFile := filepath.Join(root, "sub", "pids")
	rtWrite(t, filepath.Join(root, "sub", "keep"), "")
	wp := rtPolicy(root, map[string]Action{"hang": {Argv: []string{"sh", "-c", "trap '' TERM; sleep 1000 & echo $$ $! > sub/pids; sleep 1000"}, Mutates: true}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for i := 0; i < 500 && !rtExists(pidFile); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	_, err := RunAction(ctx, fsys, "w", wp, "hang", "", RunLimits{Timeout: time.Minute})
	rtCode(t, err, errs.Canceled)
	b, rerr := os.ReadFile(pidFile)
	if rerr != nil {
		t.Fatal(rerr)
	}
	pids := rtInts(t, string(b))
	rtGroupGone(t, pids[0], pids...)
}

func TestRunOutputFloodKilled(t *testing.T) {
	rtWithoutNamespaces(t)
	fsys, root := rtPlainWorkdir(t)
	wp := rtPolicy(root, map[string]Action{
		"yes":   {Argv: []string{"yes"}},
		"flood": {Argv: []string{"sh", "-c", "echo $$ >&2; yes & yes"}},
	})
	res, err := RunAction(context.Background(), fsys, "w", wp, "yes", "", RunLimits{MaxOutputBytes: 1 << 20, TailBytes: 100, Timeout: time.Minute})
	rtCode(t, err, errs.OutputLimitExceeded)
	if res == nil || !res.StdoutTruncated || len(res.Stdout) > 100 || !strings.HasSuffix(res.Stdout, "y\ny\n") {
		t.Fatalf("result %+v", res)
	}

	// With a grandchild flooding too, the whole group is killed.
	res, err = RunAction(context.Background(), fsys, "w", wp, "flood", "", RunLimits{MaxOutputBytes: 1 << 20, Timeout: time.Minute})
	rtCode(t, err, errs.OutputLimitExceeded)
	if len(res.Stdout) > TailBytes {
		t.Errorf("stdout tail %d bytes", len(res.Stdout))
	}
	rtGroupGone(t, rtInts(t, res.Stderr)[0])
}

func TestRunArguments(t *testing.T) {
	fsys, root := rtWorkdir(t)
	rtWrite(t, filepath.Join(root, "raw/foo.md"), "x")
	rtWrite(t, filepath.Join(root, "raw/-dash.md"), "x")
	rtWrite(t, filepath.Join(root, ".env"), "SECRET=1")
	rtWrite(t, filepath.Join(filepath.Dir(root), "x"), "outside")
	if err := os.Symlink("..", filepath.Join(root, "up")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	wp := rtPolicy(root, map[string]Action{
		"ensure": {Argv: []string{"printf", "[%s]"}, Argument: ArgumentBasename},
		"check":  {Argv: []string{"printf", "[%s]"}, Argument: ArgumentPath},
		"none":   {Argv: []string{"printf", "[%s]"}, Argument: ArgumentNone},
	})
	run := func(name, arg string) (*wire.ActionResult, error) {
		return RunAction(context.Background(), fsys, "w", wp, name, arg, RunLimits{})
	}
	if res, err := run("ensure", "raw/foo.md"); err != nil || res.Stdout != "[foo.md]" {
		t.Errorf("basename: %+v, %v", res, err)
	}
	if res, err := run("ensure", "./raw//foo.md"); err != nil || res.Stdout != "[foo.md]" {
		t.Errorf("basename of an unclean path: %+v, %v", res, err)
	}
	if res, err := run("check", "raw/foo.md"); err != nil || res.Stdout != "[raw/foo.md]" {
		t.Errorf("path: %+v, %v", res, err)
	}
	wp.Actions["dirs"] = Action{Argv: []string{"printf", "[%s]"}, Argument: ArgumentPath, ArgumentAllow: &ArgumentAllow{Directories: true}}
	if res, err := run("dirs", "raw"); err != nil || res.Stdout != "[raw]" {
		t.Errorf("a directory where the policy allows one: %+v, %v", res, err)
	}
	if res, err := run("none", ""); err != nil || res.Stdout != "[]" {
		t.Errorf("none: %+v, %v", res, err)
	}
	refusals := []struct {
		action, arg string
		code        errs.Code
	}{
		{"check", ".env", errs.DeniedPath},
		{"check", ".config/x", errs.HiddenPathNotAllowed},
		{"check", "../x", errs.PathOutsideWorkdir},
		{"check", "-x", errs.InvalidArgument},
		{"check", "up", errs.SymlinkNotAllowed},
		{"check", "up/x", errs.SymlinkNotAllowed},
		{"check", "up/new", errs.SymlinkNotAllowed},
		{"ensure", "up/x", errs.SymlinkNotAllowed},
		{"check", "--help", errs.InvalidArgument},
		{"check", "/etc/passwd", errs.InvalidPath},
		{"check", "", errs.InvalidArgument},
		{"check", ".", errs.InvalidArgument},
		{"check", "raw/new.md", errs.PathNotFound},
		{"check", "raw", errs.NotAFile},
		{"check", "fifo", errs.UnsupportedFileType},
		{"dirs", "fifo", errs.UnsupportedFileType},
		{"ensure", ".env", errs.DeniedPath},
		{"ensure", "raw/-dash.md", errs.InvalidArgument},
		{"ensure", "raw/missing.md", errs.PathNotFound},
		{"ensure", "raw", errs.NotAFile},
		{"ensure", "-x", errs.InvalidArgument},
		{"none", "raw/foo.md", errs.InvalidArgument},
	}
	for _, r := range refusals {
		res, err := run(r.action, r.arg)
		if errs.CodeOf(err) != r.code || res != nil {
			t.Errorf("%s %q: %+v, %v; want %s", r.action, r.arg, res, err, r.code)
		}
	}
}

// TestRunArgumentsNeverReadAsOptions: the arguments make, env and tar
// read as something other than a file (make's SHELL=prog and
// MAKEFLAGS=--eval=..., env's VAR=x, tar's host:path) and shell and glob
// characters are refused before any process starts, though each names an
// existing file: the canary evil.sh would create stays absent, there is
// no result. The Makefile is pinned and unchanged throughout.
func TestRunArgumentsNeverReadAsOptions(t *testing.T) {
	fsys, root := rtWorkdir(t)
	const makefile = "all:\n\t@echo built\n"
	rtWrite(t, filepath.Join(root, "Makefile"), makefile)
	evil := "#!/bin/sh\ntouch canary\n"
	for _, name := range []string{"evil.sh", "SHELL=./evil.sh"} {
		rtWrite(t, filepath.Join(root, name), evil)
		if err := os.Chmod(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hostile := []string{
		"MAKEFLAGS=--eval=$(shell sh evil.sh)", "VAR=x", "host:path", "a b", "x;sh evil.sh", "$(sh evil.sh)",
		"`sh evil.sh`", "star*", "q?", "[ab]", "x|y", "x&y", "x>y", "x<y", "~x", "'q'", "\"q\"", "x\ty", "@opts", "+cmd",
		"caf\u00e9", "x!y", "x#y", "x%y", "x^y", "x,y", "x{a,b}",
	}
	for _, name := range hostile {
		rtWrite(t, filepath.Join(root, name), "x")
	}
	pins := map[string]string{"Makefile": rtSHA(makefile)}
	wp := rtPolicy(root, map[string]Action{
		"make_path": {Argv: []string{"make", "-f", "Makefile"}, Argument: ArgumentPath, Integrity: pins},
		"make_base": {Argv: []string{"make", "-f", "Makefile"}, Argument: ArgumentBasename, Integrity: pins},
		"env":       {Argv: []string{"env"}, Argument: ArgumentPath},
		"tar":       {Argv: []string{"tar", "-tf"}, Argument: ArgumentPath},
	})
	run := func(name, arg string) (*wire.ActionResult, error) {
		return RunAction(context.Background(), fsys, "w", wp, name, arg, RunLimits{Timeout: 20 * time.Second})
	}
	canary := filepath.Join(root, "canary")
	refuse := func(action, arg string) {
		t.Helper()
		res, err := run(action, arg)
		if errs.CodeOf(err) != errs.InvalidArgument || res != nil {
			t.Errorf("%s %q: %+v, %v; want INVALID_ARGUMENT and nothing run", action, arg, res, err)
		}
		if rtExists(canary) {
			t.Fatalf("%s %q: evil.sh ran", action, arg)
		}
		if err != nil && strings.Contains(err.Error(), arg) {
			t.Errorf("%s %q: the error repeats the argument: %v", action, arg, err)
		}
	}
	refuse("make_path", "SHELL=./evil.sh")
	refuse("make_base", "MAKEFLAGS=--eval=$(shell sh evil.sh)")
	refuse("env", "VAR=x")
	refuse("tar", "host:path")
	for _, name := range hostile {
		refuse("make_path", name)
		refuse("make_base", name)
	}
	// Real make runs with a plain name, the pin holding.
	if res, err := run("make_path", "Makefile"); err != nil || res.ExitCode != 0 || rtExists(canary) {
		t.Fatalf("make Makefile: %+v, %v", res, err)
	}
	if res, err := run("make_base", "evil.sh"); err != nil || res.ExitCode != 0 || rtExists(canary) {
		t.Fatalf("make evil.sh (a target, up to date): %+v, %v", res, err)
	}
	// The operator may widen the set, explicitly, per action.
	wp.Actions["env"] = Action{Argv: []string{"env"}, Argument: ArgumentPath, ArgumentAllow: &ArgumentAllow{Chars: "="}}
	if res, err := run("env", "VAR=x"); err != nil || !strings.Contains(res.Stdout, "VAR=x\n") {
		t.Errorf("env with '=' allowed: %+v, %v", res, err)
	}
	refuse("env", "host:path")
}

func TestRunNonZeroExitIsAResult(t *testing.T) {
	fsys, root := rtWorkdir(t)
	wp := rtPolicy(root, map[string]Action{"fail": {Argv: []string{"sh", "-c", "echo out; echo err >&2; pwd >&2; exit 3"}}})
	res, err := RunAction(context.Background(), fsys, "w", wp, "fail", "", RunLimits{})
	if err != nil {
		t.Fatal(err)
	}
	want := wire.ActionResult{Action: "fail", ProcessResult: wire.ProcessResult{ExitCode: 3, Stdout: "out\n", Stderr: "err\nw:\n", Sandbox: SandboxLevel()}}
	res.DurationMs, res.SandboxControls = 0, nil // the sandbox tests check them
	if !reflect.DeepEqual(*res, want) {
		t.Errorf("result %+v, want %+v", *res, want)
	}
}

func TestRunHostPathScrubbed(t *testing.T) {
	fsys, root := rtWorkdir(t)
	rtWrite(t, filepath.Join(root, "sub/f"), "x")
	// Print the root many times so that the tail cuts through one.
	wp := rtPolicy(root, map[string]Action{
		"pwd":  {Argv: []string{"sh", "-c", "cd sub && pwd && ls \"$PWD/f\" >&2"}},
		"many": {Argv: []string{"sh", "-c", "i=0; while [ $i -lt 2000 ]; do pwd; printf %s \"$PWD\"; i=$((i+1)); done"}},
	})
	res, err := RunAction(context.Background(), fsys, "w", wp, "pwd", "", RunLimits{})
	if err != nil || res.Stdout != "w:/sub\n" || res.Stderr != "w:/sub/f\n" {
		t.Fatalf("RunAction = %+v, %v", res, err)
	}
	t.Setenv("HOME", "/home/serverfs-test")
	wp.Actions["home"] = Action{Argv: []string{"sh", "-c", "echo \"$HOME/.cache/x\" \"$HOME\""}}
	res, err = RunAction(context.Background(), fsys, "w", wp, "home", "", RunLimits{})
	if err != nil || res.Stdout != "$HOME/.cache/x $HOME\n" {
		t.Fatalf("an action's HOME is private, and not shown: RunAction = %+v, %v", res, err)
	}
	tails := []int{500, 1000, 4000, 20000}
	for tail := 1; tail < len(root)+8; tail++ {
		tails = append(tails, tail)
	}
	for _, tail := range tails {
		res, err := RunAction(context.Background(), fsys, "w", wp, "many", "", RunLimits{TailBytes: tail})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Stdout) > tail || !res.StdoutTruncated {
			t.Errorf("tail %d: %q", tail, res.Stdout)
		}
		// No part of the host path (of 3+ bytes) shows.
		for i := 0; i+3 <= len(root); i++ {
			if part := root[i:]; len(part) >= 3 && strings.HasPrefix(res.Stdout, part) {
				t.Errorf("tail %d: %q shows part of the host path", tail, res.Stdout)
			}
		}
	}
}

func TestRunActionNotFound(t *testing.T) {
	fsys, root := rtWorkdir(t)
	wp := rtPolicy(root, map[string]Action{
		"lint":  {Argv: []string{"/opt/secret/bin/lint", "--token-file", "/srv/secret"}},
		"build": {Argv: []string{"make"}},
	})
	_, err := RunAction(context.Background(), fsys, "w", wp, "deploy", "", RunLimits{})
	fe := rtCode(t, err, errs.ActionNotFound)
	if !strings.Contains(fe.Msg, "build, lint") || strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "make") {
		t.Errorf("error %v", err)
	}

	_, err = RunAction(context.Background(), fsys, "nope", wp, "lint", "", RunLimits{})
	rtCode(t, err, errs.WorkdirNotFound)
	ro := wp
	ro.ReadWrite = false
	_, err = RunAction(context.Background(), fsys, "w", ro, "build", "", RunLimits{})
	rtCode(t, err, errs.WorkdirReadOnly)
	off := wp
	off.RepoOps = false
	_, err = RunAction(context.Background(), fsys, "w", off, "build", "", RunLimits{})
	rtCode(t, err, errs.RepoOpsDisabled)

	// An executable that is not on the allowlisted PATH.
	wp.Actions["ghost"] = Action{Argv: []string{"serverfs-no-such-command"}}
	_, err = RunAction(context.Background(), fsys, "w", wp, "ghost", "", RunLimits{})
	rtCode(t, err, errs.Internal)
}

func TestRunLookPathAllowlistedOnly(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "tool")
	rtWrite(t, exe, "#!/bin/sh\n")
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := lookPath("tool", "relative:"+dir, "/"); err != nil || p != exe {
		t.Errorf("lookPath = %q, %v", p, err)
	}
	if _, err := lookPath("tool", "relative:/usr/bin", "/"); err == nil {
		t.Error("found a tool outside the PATH")
	}
	if _, err := lookPath("tool", "."+":"+"", dir); err == nil {
		t.Error("found a tool through a relative PATH entry")
	}
}
