package fs

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/serverfs/serverfs/internal/errs"
)

// TestNestedArchiveOneLevel: a zip inside a tar.gz is listed, stated and
// read through (release.tar.gz/lib/inner.zip/a/b.txt), its hidden and
// denied members unreadable as on disk; a zip inside that zip is a file,
// not gone into.
func TestNestedArchiveOneLevel(t *testing.T) {
	e := newEnv(t, ResolverOpenat2)
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v %s", args, err, out)
		}
	}
	deep, inner, outer := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(deep, "x.txt"), "too deep\n")
	run(deep, "zip", "-q", "-r", filepath.Join(inner, "deep.zip"), ".")
	writeFile(t, filepath.Join(inner, "a", "b.txt"), "nested line\n")
	writeFile(t, filepath.Join(inner, ".env"), "SECRET=1\n")
	if err := os.MkdirAll(filepath.Join(outer, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	run(inner, "zip", "-q", "-r", filepath.Join(outer, "lib", "inner.zip"), ".")
	run(outer, "tar", "-czf", e.path("release.tar.gz"), "lib")
	l, err := e.fs.List("wd", "release.tar.gz/lib/inner.zip", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, en := range l.Entries {
		names = append(names, en.Name)
	}
	if got := strings.Join(names, ","); got != "a,deep.zip" {
		t.Fatalf("list inside the nested zip: %s", got)
	}
	w, err := e.fs.ReadText(context.Background(), "wd", "release.tar.gz/lib/inner.zip/a/b.txt", 0, 0)
	if err != nil || w.Content != "nested line\n" || w.Path != "release.tar.gz/lib/inner.zip/a/b.txt" {
		t.Fatalf("read nested: %+v %v", w, err)
	}
	if fi, err := e.fs.Stat("wd", "release.tar.gz/lib/inner.zip/a/b.txt"); err != nil || fi.Size == nil || *fi.Size != 12 {
		t.Fatalf("stat nested: %+v %v", fi, err)
	}
	_, err = e.fs.ReadText(context.Background(), "wd", "release.tar.gz/lib/inner.zip/.env", 0, 0)
	if c := errs.CodeOf(err); c != errs.DeniedPath && c != errs.HiddenPathNotAllowed {
		t.Fatalf("hidden nested member: %v", err)
	}
	if _, err := e.fs.ReadText(context.Background(), "wd", "release.tar.gz/lib/inner.zip/deep.zip/x.txt", 0, 0); err == nil {
		t.Fatal("a second level of nesting was gone into")
	}
	if fi, err := e.fs.Stat("wd", "release.tar.gz/lib/inner.zip/deep.zip"); err != nil || fi.Type != TypeFile {
		t.Fatalf("the second level is a file: %+v %v", fi, err)
	}
}
