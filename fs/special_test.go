package fs

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

// makeSpecials creates a FIFO, a listening UNIX socket and a character
// device (like /dev/null) inside the workdir.
func makeSpecials(t *testing.T, e *testEnv) {
	t.Helper()
	e.mkdir(t, "sp")
	if err := unix.Mkfifo(e.path("sp/fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", e.path("sp/sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	// CI runs as root, so mknod works; a device must never be opened.
	if err := unix.Mknod(e.path("sp/null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatalf("mknod (the test needs root or CAP_MKNOD): %v", err)
	}
}

// TestSpecialFilesNeverBlock: every operation on a FIFO, a socket or a
// device answers at once. Each call runs with a 2 s watchdog: a blocking
// open would hang there, and the test fails instead of hanging.
func TestSpecialFilesNeverBlock(t *testing.T) {
	forEachResolver(t, func(t *testing.T, r Resolver) {
		e := newEnv(t, r)
		makeSpecials(t, e)
		for _, name := range []string{"fifo", "sock", "null"} {
			p := "sp/" + name
			for _, o := range ops {
				t.Run(name+"/"+string(o), func(t *testing.T) {
					type answer struct {
						res any
						err error
					}
					done := make(chan answer, 1)
					start := time.Now()
					go func() {
						res, err := runOp(e, o, p)
						done <- answer{res, err}
					}()
					var a answer
					select {
					case a = <-done:
					case <-time.After(2 * time.Second):
						t.Fatalf("%s %s blocked", o, p)
					}
					if d := time.Since(start); d > time.Second {
						t.Fatalf("%s %s took %v", o, p, d)
					}
					if o == opStat {
						if a.err != nil || a.res.(FileInfo).Type != TypeOther {
							t.Fatalf("stat: want type other, got %+v %v", a.res, a.err)
						}
						return
					}
					wantCode(t, a.err, errs.UnsupportedFileType)
				})
			}
		}
		l, err := e.fs.List("wd", "sp", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range l.Entries {
			if en.Type != TypeOther || en.Size != nil {
				t.Errorf("list: %+v, want type other without size", en)
			}
		}
		res, err := e.fs.Find(context.Background(), "wd", "sp", "*", 0)
		if err != nil || res.Returned != 3 {
			t.Fatalf("find over specials: %+v %v", res, err)
		}
	})
}

// TestWalkEntryOpenFileRefusesSpecials: the walk's own open (used by
// search) refuses specials and symlinks without blocking.
func TestWalkEntryOpenFileRefusesSpecials(t *testing.T) {
	forEachResolver(t, func(t *testing.T, r Resolver) {
		e := newEnv(t, r)
		makeSpecials(t, e)
		e.write(t, "sp/plain.txt", "plain\n")
		e.symlink(t, "plain.txt", "sp/link")
		w, _ := e.fs.Workdir("wd")
		opened := map[string]errs.Code{}
		_, err := w.Walk(context.Background(), "sp", WalkOptions{MaxEntries: 1000, Visit: func(we *WalkEntry) WalkAction {
			f, _, err := we.OpenFile()
			if f != nil {
				f.Close()
			}
			opened[we.Name] = errs.CodeOf(err)
			return WalkContinue
		}})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]errs.Code{"fifo": errs.UnsupportedFileType, "sock": errs.UnsupportedFileType, "null": errs.UnsupportedFileType, "link": errs.SymlinkNotAllowed, "plain.txt": ""}
		for k, v := range want {
			if opened[k] != v {
				t.Errorf("%s: got %q, want %q", k, opened[k], v)
			}
		}
	})
}
