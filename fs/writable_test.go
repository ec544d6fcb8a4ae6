package fs

import (
	"os"
	"testing"
)

// The read-only-mount case is exercised end to end by cmd/serverfs's
// TestSelfcheckConfined, which bind mounts a workdir read-only in a private
// mount namespace.
func TestWritable(t *testing.T) {
	e := newEnv(t, ProbeResolver())
	w, err := e.fs.Workdir("wd")
	if err != nil {
		t.Fatal(err)
	}
	if ro, err := w.ReadOnlyMount(); ro || err != nil {
		t.Fatalf("a temporary directory: read-only mount %v, %v", ro, err)
	}
	if !w.Writable() {
		t.Fatal("the owner's temporary directory is not writable")
	}
	if os.Geteuid() == 0 {
		return // root ignores mode bits
	}
	if err := os.Chmod(e.root, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(e.root, 0o755) })
	if w.Writable() {
		t.Fatal("a 0555 directory is writable by a non-root user")
	}
}
