package fs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

// TestSwapRace: one goroutine exchanges a real directory and a symlink to an
// outside directory (renameat2 RENAME_EXCHANGE, as fast as it can) while the
// test reads through the swapping name at least 100,000 times with read,
// stat, list and find. The outside canary must never come back; errors are
// fine (the symlink is refused), leaks are not.
func TestSwapRace(t *testing.T) {
	iterations := 100_000
	if testing.Short() {
		iterations = 10_000
	}
	forEachResolver(t, func(t *testing.T, r Resolver) {
		e := newEnv(t, r)
		e.write(t, "swap/f.txt", "safe\n")
		writeFile(t, filepath.Join(e.outside, "f.txt"), canaryText)
		writeFile(t, filepath.Join(e.outside, "outside-marker.txt"), canaryText)
		if err := os.Symlink(e.outside, e.path("alt")); err != nil {
			t.Fatal(err)
		}

		var stop atomic.Bool
		var swaps atomic.Int64
		done := make(chan error, 1)
		go func() {
			a, b := e.path("swap"), e.path("alt")
			for !stop.Load() {
				if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
					done <- err
					return
				}
				swaps.Add(1)
			}
			done <- nil
		}()

		ctx := context.Background()
		var ok, refused int
		check := func(i int, text string, err error) {
			t.Helper()
			if strings.Contains(text, "CANARY") || strings.Contains(text, "outside-marker") {
				t.Fatalf("iteration %d returned outside content: %q", i, text)
			}
			if err == nil {
				ok++
				return
			}
			switch errs.CodeOf(err) {
			case errs.SymlinkNotAllowed, errs.PathNotFound, errs.NotADirectory:
				refused++
			default:
				t.Fatalf("iteration %d: unexpected error %v", i, err)
			}
		}
		for i := 0; i < iterations; i++ {
			// Every iteration reads the file through the swapping name...
			w, err := e.fs.ReadText(ctx, "wd", "swap/f.txt", 0, 0)
			var text string
			if err == nil {
				text = w.Content
			}
			check(i, text, err)
			// ...and also stats, lists or walks it.
			text = ""
			switch i % 3 {
			case 0:
				var fi FileInfo
				if fi, err = e.fs.Stat("wd", "swap/f.txt"); err == nil {
					text = fi.Path
				}
			case 1:
				var l *Listing
				if l, err = e.fs.List("wd", "swap", 0, 0); err == nil {
					for _, en := range l.Entries {
						text += en.Name + " "
					}
				}
			case 2:
				var fr *FindResult
				if fr, err = e.fs.Find(ctx, "wd", "swap", "*", 0); err == nil {
					for _, m := range fr.Matches {
						text += m.Path + " "
					}
				}
			}
			check(i, text, err)
		}
		stop.Store(true)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		t.Logf("%d reads plus %d stat/list/find: %d answered from the real directory, %d refused; %d swaps", iterations, iterations, ok, refused, swaps.Load())
		if ok == 0 || refused == 0 || swaps.Load() < 100 {
			t.Fatalf("the race did not interleave (ok=%d refused=%d swaps=%d)", ok, refused, swaps.Load())
		}
	})
}
