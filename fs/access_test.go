package fs

import (
	"context"
	"github.com/serverfs/serverfs/internal/errs"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAccessDenied checks ACCESS_DENIED for objects the server's user may
// not read. Root bypasses permission bits, so when run as root the test
// re-runs itself as uid/gid 65534 (nobody) from a world-readable copy of the
// test binary.
func TestAccessDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		runAsNobody(t, "^TestAccessDenied$")
		return
	}
	forEachResolver(t, func(t *testing.T, r Resolver) {
		e := newEnv(t, r)
		e.write(t, "locked.txt", "secret\n")
		e.write(t, "closed/inner.txt", "inner\n")
		e.write(t, "unlisted/f.txt", "f\n")
		for p, mode := range map[string]os.FileMode{"locked.txt": 0, "closed": 0, "unlisted": 0o311} {
			if err := os.Chmod(e.path(p), mode); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(e.path(p), 0o755) }) // so TempDir can be removed
		}
		ctx := context.Background()
		_, err := e.fs.ReadText(ctx, "wd", "locked.txt", 0, 0)
		wantCode(t, err, errs.AccessDenied)
		// O_PATH needs no read permission: metadata stays visible.
		if fi, err := e.fs.Stat("wd", "locked.txt"); err != nil || fi.Type != TypeFile {
			t.Fatalf("stat of an unreadable file: %+v %v", fi, err)
		}
		_, err = e.fs.Stat("wd", "closed/inner.txt")
		wantCode(t, err, errs.AccessDenied)
		_, err = e.fs.List("wd", "unlisted", 0, 0)
		wantCode(t, err, errs.AccessDenied)
		// A walk skips what it cannot open and carries on.
		res, err := e.fs.Find(ctx, "wd", "", "*", 0)
		if err != nil {
			t.Fatal(err)
		}
		assertNoLeak(t, e, res, nil)
	})
}

// runAsNobody re-runs the tests matching run as uid/gid 65534 and fails if
// they fail there.
func runAsNobody(t *testing.T, run string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "serverfs-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "fs.test")
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	src.Close()
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	// OpenFile's mode passes through the umask.
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(tmp, 0o777)
	cmd := exec.Command(bin, "-test.run="+run, "-test.count=1", "-test.v")
	cmd.Dir = "/"
	cmd.Env = []string{"TMPDIR=" + tmp, "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	t.Logf("as nobody:\n%s", out)
}
