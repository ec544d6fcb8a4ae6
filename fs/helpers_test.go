package fs

import (
	"errors"
	"github.com/serverfs/serverfs/internal/errs"
	"os"
	"path/filepath"
	"testing"
)

// resolvers are the resolvers every security-relevant test runs on.
var resolvers = []Resolver{ResolverOpenat2, ResolverOpenat}

// testEnv is a workdir "wd" (a real temporary directory) next to a sibling
// directory "wd-evil" and an "outside" directory holding a canary file, all
// under one temporary parent.
type testEnv struct {
	fs      *FS
	root    string // host path of workdir "wd"
	outside string // host path of a directory outside every workdir
	canary  string // host path of outside/canary.txt
}

const canaryText = "CANARY-OUTSIDE-THE-WORKDIR\n"

// newEnv builds a testEnv with the given resolver. extraEnv are KEY=value
// environment entries (SERVERFS_* limits, SERVERFS_ALLOW_HIDDEN, ...).
func newEnv(t testing.TB, r Resolver, extraEnv ...string) *testEnv {
	t.Helper()
	parent := t.TempDir()
	e := &testEnv{root: filepath.Join(parent, "wd"), outside: filepath.Join(parent, "outside")}
	for _, d := range []string{e.root, e.outside, filepath.Join(parent, "wd-evil")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.canary = filepath.Join(e.outside, "canary.txt")
	writeFile(t, e.canary, canaryText)
	writeFile(t, filepath.Join(parent, "wd-evil", "secret.txt"), canaryText)
	cfg, err := LoadConfig(extraEnv, []string{"wd=" + e.root})
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(cfg, Options{Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	if f.Resolver() != r {
		t.Fatalf("resolver %v requested, %v in use", r, f.Resolver())
	}
	t.Cleanup(func() { f.Close() })
	e.fs = f
	return e
}

// path returns the host path of a workdir-relative path.
func (e *testEnv) path(rel string) string { return filepath.Join(e.root, filepath.FromSlash(rel)) }

// write creates a file (and its parents) inside the workdir.
func (e *testEnv) write(t testing.TB, rel, content string) {
	t.Helper()
	writeFile(t, e.path(rel), content)
}

func (e *testEnv) mkdir(t testing.TB, rel string) {
	t.Helper()
	if err := os.MkdirAll(e.path(rel), 0o755); err != nil {
		t.Fatal(err)
	}
}

func (e *testEnv) symlink(t testing.TB, target, rel string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(e.path(rel)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, e.path(rel)); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantCode fails the test unless err carries code.
func wantCode(t testing.TB, err error, code errs.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s, got success", code)
	}
	var e *errs.Error
	if !errors.As(err, &e) {
		t.Fatalf("want %s, got a non-*Error %T: %v", code, err, err)
	}
	if e.Code != code {
		t.Fatalf("want %s, got %v", code, err)
	}
}

func forEachResolver(t *testing.T, fn func(t *testing.T, r Resolver)) {
	for _, r := range resolvers {
		t.Run(r.String(), func(t *testing.T) { fn(t, r) })
	}
}
