package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSelfcheckFailures runs selfcheck the way this test machine runs it (as
// root, on a writable root filesystem) with one `ro` and one `rw` workdir on
// an ordinary writable directory.
func TestSelfcheckFailures(t *testing.T) {
	ro, rw := t.TempDir(), t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"selfcheck", "--workdir", "docs=" + ro, "--workdir", "scratch=" + rw + ":rw"}, nil, &out, &errb)
	got := out.String()
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a writable ro workdir is a failure)\n%s%s", code, got, errb.String())
	}
	want := []string{
		"FAIL  workdir docs (--workdir docs, mode ro): writable by this process (read-write mount)",
		"info  workdir scratch (--workdir scratch, mode rw): writable by this process",
		"ok    configuration is valid: 2 workdir(s)",
		"hardening failure(s)\n",
	}
	if os.Geteuid() == 0 {
		want = append(want, "FAIL  uid 0 gid 0: running as root", "FAIL  effective capabilities")
	} else {
		want = append(want, fmt.Sprintf("ok    uid %d gid %d\n", os.Geteuid(), os.Getegid()))
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
	if strings.Contains(got, "FAIL  workdir scratch") {
		t.Errorf("a writable rw workdir is not a failure:\n%s", got)
	}
	for _, l := range strings.Split(strings.TrimSpace(got), "\n")[1:] {
		if !strings.HasPrefix(l, "ok    ") && !strings.HasPrefix(l, "FAIL  ") && !strings.HasPrefix(l, "warn  ") &&
			!strings.HasPrefix(l, "info  ") && !strings.HasPrefix(l, "selfcheck: ") {
			t.Errorf("line without a verdict: %q", l)
		}
	}
	assertNoHostPath(t, got+errb.String(), ro, rw)
}

func TestSelfcheckInvalidConfiguration(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"selfcheck", "--workdir", "1bad=" + dir}, []string{"SERVERFS_LISTEN=nope", "SERVERFS_ALLOW_HIDDEN=" + dir}, &out, &errb)
	got := out.String()
	if code != 1 || !strings.Contains(got, "FAIL  configuration is invalid:") {
		t.Fatalf("exit %d:\n%s", code, got)
	}
	for _, w := range []string{"1bad", "SERVERFS_LISTEN", "SERVERFS_ALLOW_HIDDEN"} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
	assertNoHostPath(t, got+errb.String(), dir)
	if code := run([]string{"selfcheck", "--nope"}, nil, &out, &errb); code != 2 {
		t.Fatalf("bad flag: exit %d", code)
	}
}

func TestDirWritable(t *testing.T) {
	dir := t.TempDir()
	if w, err := dirWritable(dir); !w || err != nil {
		t.Fatalf("temp dir: %v %v", w, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the probe file was left behind: %v", entries)
	}
	if w, err := dirWritable(filepath.Join(dir, "missing")); w || err != unix.ENOENT {
		t.Fatalf("missing dir: %v %v", w, err)
	}
}

func assertNoHostPath(t *testing.T, out string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if strings.Contains(out, p) {
			t.Fatalf("output holds the host path %s:\n%s", p, out)
		}
	}
}

// TestSelfcheckConfined proves the passing case end to end: the test binary
// re-runs itself in a private mount namespace (root here, so allowed), bind
// mounts a slot read-only, remounts / read-only, drops to 10001:10001 with
// no_new_privs — what compose does — and runs selfcheck with the container
// slot configuration. Every mount lives and dies with that child process.
func TestSelfcheckConfined(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root to create a mount namespace and mount in it, as compose does (CI runs as root)")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	nsSelf, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Skip("no mount namespace information:", err)
	}
	base := t.TempDir()
	root := filepath.Join(base, "workdirs")
	src := filepath.Join(base, "src")
	for _, d := range []string{src, filepath.Join(root, "01"), filepath.Join(root, "02")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Chmod, not the mode of MkdirAll, which passes through the umask
	// (uid 10001 must reach every one of them under umask 077 too).
	for _, d := range []string{filepath.Dir(base), base, src, root, filepath.Join(root, "01"), filepath.Join(root, "02")} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(src, "README.md"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "02", ".serverfs-disabled"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(exe, "-test.run=^TestSelfcheckConfinedChild$", "-test.v")
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), "SERVERFS_SELFCHECK_CHILD="+nsSelf, "SERVERFS_SELFCHECK_SRC="+src, "SERVERFS_SELFCHECK_ROOT="+root)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if err != nil {
		if strings.Contains(out, "SKIP-CONFINED:") || cmd.ProcessState == nil {
			t.Skipf("cannot confine a child here: %v\n%s", err, out)
		}
		t.Fatalf("child: %v\n%s", err, out)
	}
	if i := strings.Index(out, "SKIP-CONFINED:"); i >= 0 {
		t.Skip(out[i:])
	}
	begin, end := strings.Index(out, "BEGIN-SELFCHECK\n"), strings.Index(out, "END-SELFCHECK ")
	if begin < 0 || end < begin {
		t.Fatalf("child output:\n%s", out)
	}
	report := out[begin+len("BEGIN-SELFCHECK\n") : end]
	code, _ := strconv.Atoi(strings.Fields(out[end+len("END-SELFCHECK "):])[0])
	t.Logf("confined selfcheck (exit %d):\n%s", code, report)
	if code != 0 {
		t.Fatalf("confined selfcheck exited %d", code)
	}
	for _, w := range []string{
		"ok    uid 10001 gid 10001\n",
		"ok    no effective capabilities\n",
		"ok    no_new_privs is set\n",
		"ok    root filesystem is read-only\n",
		"ok    configuration is valid: 1 workdir(s)\n",
		"ok    workdir projects (slot 01, mode ro): not writable by this process (read-only mount)\n",
		"selfcheck: no hardening failure\n",
	} {
		if !strings.Contains(report, w) {
			t.Errorf("missing %q in:\n%s", w, report)
		}
	}
	if strings.Contains(report, "FAIL") {
		t.Errorf("unexpected failure:\n%s", report)
	}
	assertNoHostPath(t, report, base)
}

// TestSelfcheckConfinedChild is the child half of TestSelfcheckConfined; it
// does nothing unless that test started it.
func TestSelfcheckConfinedChild(t *testing.T) {
	parentNS := os.Getenv("SERVERFS_SELFCHECK_CHILD")
	if parentNS == "" {
		t.Skip("runs only as the child of TestSelfcheckConfined")
	}
	skip := func(format string, a ...any) {
		fmt.Printf("SKIP-CONFINED: "+format+"\n", a...)
	}
	// Refuse to touch a single mount unless this process really is in a
	// mount namespace of its own.
	ns, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil || ns == parentNS {
		t.Fatalf("not in a private mount namespace (%q, parent %q, %v)", ns, parentNS, err)
	}
	src, root := os.Getenv("SERVERFS_SELFCHECK_SRC"), os.Getenv("SERVERFS_SELFCHECK_ROOT")
	slot := filepath.Join(root, "01")
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		skip("make / private: %v", err)
		return
	}
	if err := unix.Mount(src, slot, "", unix.MS_BIND, ""); err != nil {
		skip("bind mount: %v", err)
		return
	}
	if err := unix.Mount("", slot, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		skip("read-only remount of the slot: %v", err)
		return
	}
	if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		skip("read-only remount of /: %v", err)
		return
	}
	// Drop to the image's user, as compose's `user:` and cap_drop do; the
	// change from uid 0 clears every capability.
	if err := syscall.Setgroups(nil); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setgid(10001); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setuid(10001); err != nil {
		t.Fatal(err)
	}
	// no_new_privs is a thread's: set and read it on one thread, or the
	// check may run on another OS thread (it did, under load) and read 0.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	code := run([]string{"selfcheck"}, []string{"SERVERFS_WORKDIRS_ROOT=" + root, "WORKDIR_01_ALIAS=projects"}, &out, &out)
	fmt.Printf("BEGIN-SELFCHECK\n%sEND-SELFCHECK %d\n", out.String(), code)
}
