package fs

import (
	"context"
	"fmt"
	"github.com/serverfs/serverfs/internal/errs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var bg = context.Background()

// newRWEnv is newEnv with the workdir "wd" read-write.
func newRWEnv(t testing.TB, r Resolver, extraEnv ...string) *testEnv {
	t.Helper()
	e := newEnv(t, r, extraEnv...)
	e.fs.Close()
	cfg, err := LoadConfig(extraEnv, []string{"wd=" + e.root + ":rw"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(cfg, Options{Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	e.fs = f
	return e
}

func (e *testEnv) read(t testing.TB, rel string) string {
	t.Helper()
	b, err := os.ReadFile(e.path(rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// must(t)(result, err) fails the test on err and returns the result.
func must(t testing.TB) func(*WriteResult, error) *WriteResult {
	return func(r *WriteResult, err error) *WriteResult {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
}

// tempFiles lists the write temporaries anywhere under dir.
func tempFiles(t testing.TB, dir string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), tempPrefix) {
			found = append(found, p)
		}
		return nil
	})
	return found
}

func TestWriteLifecycle(t *testing.T) {
	forEachResolver(t, func(t *testing.T, r Resolver) {
		e := newRWEnv(t, r)
		e.mkdir(t, "src")
		res := must(t)(e.fs.WriteFile(bg, "wd", "src/a.txt", "one\ntwo\nthree\n", ""))
		if res.Action != "created" || res.Revision != Revision([]byte("one\ntwo\nthree\n")) || *res.Size != 14 {
			t.Fatalf("create: %+v", res)
		}
		if !strings.HasPrefix(res.Diff, "--- /dev/null\n+++ b/src/a.txt\n@@ -0,0 +1,3 @@\n+one\n") {
			t.Fatalf("create diff:\n%s", res.Diff)
		}
		if got := e.read(t, "src/a.txt"); got != "one\ntwo\nthree\n" {
			t.Fatalf("content %q", got)
		}
		fi, err := e.fs.Stat("wd", "src/a.txt")
		if err != nil || fi.Revision != res.Revision {
			t.Fatalf("stat revision %q, write said %q (%v)", fi.Revision, res.Revision, err)
		}
		win, err := e.fs.ReadText(bg, "wd", "src/a.txt", 2, 1)
		if err != nil || win.Revision != res.Revision {
			t.Fatalf("read revision %q (a window of the file), write said %q (%v)", win.Revision, res.Revision, err)
		}

		res = must(t)(e.fs.WriteFile(bg, "wd", "src/a.txt", "one\n2\nthree\n", res.Revision))
		if res.Action != "replaced" || !strings.Contains(res.Diff, "@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n") {
			t.Fatalf("replace: %+v", res)
		}
		res = must(t)(e.fs.EditFile(bg, "wd", "src/a.txt", []Edit{{"three", "3"}, {"one", "1"}}, res.Revision))
		if res.Action != "edited" || e.read(t, "src/a.txt") != "1\n2\n3\n" {
			t.Fatalf("edit: %+v, file %q", res, e.read(t, "src/a.txt"))
		}
		same := must(t)(e.fs.WriteFile(bg, "wd", "src/a.txt", "1\n2\n3\n", res.Revision))
		if same.Action != "unchanged" || same.Revision != res.Revision || same.Diff != "" {
			t.Fatalf("unchanged: %+v", same)
		}

		d := must(t)(e.fs.CreateDirectory(bg, "wd", "docs/deep/er"))
		if d.Action != "created_directory" {
			t.Fatalf("mkdir: %+v", d)
		}
		if d := must(t)(e.fs.CreateDirectory(bg, "wd", "docs/deep/er/")); d.Action != "exists" {
			t.Fatalf("mkdir again: %+v", d)
		}
		m := must(t)(e.fs.MovePath(bg, "wd", "src/a.txt", "docs/deep/er/b.txt", res.Revision))
		if m.Action != "moved" || m.FromPath != "src/a.txt" || m.Path != "docs/deep/er/b.txt" || m.Revision != res.Revision {
			t.Fatalf("move: %+v", m)
		}
		must(t)(e.fs.MovePath(bg, "wd", "docs/deep", "moved-dir", ""))
		if e.read(t, "moved-dir/er/b.txt") != "1\n2\n3\n" {
			t.Fatal("directory move lost the file")
		}
		must(t)(e.fs.DeletePath(bg, "wd", "moved-dir/er/b.txt", res.Revision))
		must(t)(e.fs.DeletePath(bg, "wd", "moved-dir/er", ""))
		if _, err := os.Stat(e.path("moved-dir/er")); !os.IsNotExist(err) {
			t.Fatalf("deleted directory still there: %v", err)
		}
		if tf := tempFiles(t, e.root); len(tf) != 0 {
			t.Fatalf("temporaries left: %v", tf)
		}
	})
}

func TestWriteRevisionGuards(t *testing.T) {
	e := newRWEnv(t, ProbeResolver())
	e.write(t, "f.txt", "v1\n")
	cur := Revision([]byte("v1\n"))
	stale := Revision([]byte("v0\n"))

	_, err := e.fs.WriteFile(bg, "wd", "f.txt", "new\n", "")
	wantCode(t, err, errs.RevisionMismatch)
	if !strings.Contains(err.Error(), cur) {
		t.Errorf("create over an existing file: %v does not name the current revision", err)
	}
	_, err = e.fs.WriteFile(bg, "wd", "f.txt", "new\n", stale)
	wantCode(t, err, errs.RevisionMismatch)
	if !strings.Contains(err.Error(), cur) {
		t.Errorf("stale revision: %v does not name the current revision", err)
	}
	_, err = e.fs.EditFile(bg, "wd", "f.txt", []Edit{{"v1", "v2"}}, stale)
	wantCode(t, err, errs.RevisionMismatch)
	_, err = e.fs.DeletePath(bg, "wd", "f.txt", stale)
	wantCode(t, err, errs.RevisionMismatch)
	_, err = e.fs.MovePath(bg, "wd", "f.txt", "g.txt", stale)
	wantCode(t, err, errs.RevisionMismatch)
	_, err = e.fs.WriteFile(bg, "wd", "absent.txt", "x", cur)
	wantCode(t, err, errs.RevisionMismatch)
	_, err = e.fs.DeletePath(bg, "wd", "f.txt", "")
	wantCode(t, err, errs.InvalidArgument)
	_, err = e.fs.EditFile(bg, "wd", "f.txt", []Edit{{"v1", "v2"}}, "")
	wantCode(t, err, errs.InvalidArgument)
	for _, bad := range []string{"sha256:xyz", "SHA256:" + cur[7:], "sha1:" + cur[7:], cur[7:], cur + "0", strings.ToUpper(cur), "-x"} {
		_, err = e.fs.WriteFile(bg, "wd", "f.txt", "new\n", bad)
		wantCode(t, err, errs.InvalidArgument)
	}
	if got := e.read(t, "f.txt"); got != "v1\n" {
		t.Fatalf("refused writes changed the file: %q", got)
	}
	if _, err := os.Stat(e.path("absent.txt")); !os.IsNotExist(err) {
		t.Fatal("refused write created absent.txt")
	}
}

func TestEditFileRules(t *testing.T) {
	e := newRWEnv(t, ProbeResolver())
	const text = "alpha\nbeta\nbeta\ngamma\r\naaa\n"
	e.write(t, "f.txt", text)
	rev := Revision([]byte(text))
	cases := []struct {
		name  string
		edits []Edit
		code  errs.Code
		msg   string
	}{
		{"not found", []Edit{{"delta", "x"}}, errs.EditNotFound, "edit 1"},
		{"second not found", []Edit{{"alpha", "A"}, {"gamma\n", "G"}}, errs.EditNotFound, "edit 2"},
		{"ambiguous", []Edit{{"beta", "B"}}, errs.EditAmbiguous, "occurs 2 times"},
		{"overlapping occurrences", []Edit{{"aa", "b"}}, errs.EditAmbiguous, "occurs 2 times"},
		{"edits overlap", []Edit{{"alpha\nbeta\nbeta", "x"}, {"beta\ngamma", "y"}}, errs.InvalidArgument, "overlap"},
		{"empty old_text", []Edit{{"", "x"}}, errs.InvalidArgument, "empty"},
		{"no-op edit", []Edit{{"alpha", "alpha"}}, errs.InvalidArgument, "same"},
		{"no edits", nil, errs.InvalidArgument, "between 1"},
		{"NUL in new_text", []Edit{{"alpha", "a\x00"}}, errs.InvalidContent, "NUL"},
		{"invalid UTF-8 new_text", []Edit{{"alpha", "a\xff"}}, errs.InvalidContent, "UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.fs.EditFile(bg, "wd", "f.txt", c.edits, rev)
			wantCode(t, err, c.code)
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("%v lacks %q", err, c.msg)
			}
			if !strings.Contains(err.Error(), "wd:/f.txt") && c.code != errs.InvalidArgument && c.code != errs.InvalidContent {
				t.Errorf("%v does not say which file", err)
			}
			if got := e.read(t, "f.txt"); got != text {
				t.Fatalf("refused edit changed the file: %q", got)
			}
		})
	}
	res := must(t)(e.fs.EditFile(bg, "wd", "f.txt", []Edit{{"gamma\r\n", "GAMMA\r\n"}, {"alpha\nbeta", "ALPHA\nbeta"}}, rev))
	if got := e.read(t, "f.txt"); got != "ALPHA\nbeta\nbeta\nGAMMA\r\naaa\n" || res.Revision != Revision([]byte(got)) {
		t.Fatalf("edits applied together: %q, %+v", got, res)
	}
	tooMany := make([]Edit, MaxEdits+1)
	for i := range tooMany {
		tooMany[i] = Edit{fmt.Sprint(i), "x"}
	}
	_, err := e.fs.EditFile(bg, "wd", "f.txt", tooMany, res.Revision)
	wantCode(t, err, errs.InvalidArgument)

	e.write(t, "bin.dat", "a\x00b")
	_, err = e.fs.EditFile(bg, "wd", "bin.dat", []Edit{{"a", "b"}}, Revision([]byte("a\x00b")))
	wantCode(t, err, errs.BinaryFile)
	e.write(t, "latin1.txt", "caf\xe9\n")
	_, err = e.fs.EditFile(bg, "wd", "latin1.txt", []Edit{{"caf", "tea"}}, Revision([]byte("caf\xe9\n")))
	wantCode(t, err, errs.UnsupportedTextEncoding)
}

func TestWriteContentLimits(t *testing.T) {
	e := newRWEnv(t, ProbeResolver(), "SERVERFS_MAX_WRITE_BYTES=1024")
	_, err := e.fs.WriteFile(bg, "wd", "big.txt", strings.Repeat("x", 1025), "")
	wantCode(t, err, errs.WriteLimitExceeded)
	must(t)(e.fs.WriteFile(bg, "wd", "max.txt", strings.Repeat("x", 1024), ""))
	_, err = e.fs.WriteFile(bg, "wd", "nul.txt", "a\x00b", "")
	wantCode(t, err, errs.InvalidContent)
	_, err = e.fs.WriteFile(bg, "wd", "bad.txt", "caf\xe9", "")
	wantCode(t, err, errs.InvalidContent)
	// A file over the cap has no revision and cannot be changed.
	e.write(t, "huge.txt", strings.Repeat("y", 2000))
	fi, err := e.fs.Stat("wd", "huge.txt")
	if err != nil || fi.Revision != "" {
		t.Fatalf("over-cap file has revision %q (%v)", fi.Revision, err)
	}
	win, err := e.fs.ReadText(bg, "wd", "huge.txt", 1, 1)
	if err != nil || win.Revision != "" {
		t.Fatalf("over-cap read has revision %q (%v)", win.Revision, err)
	}
	_, err = e.fs.WriteFile(bg, "wd", "huge.txt", "small", Revision([]byte(strings.Repeat("y", 2000))))
	wantCode(t, err, errs.WriteLimitExceeded)
	_, err = e.fs.EditFile(bg, "wd", "max.txt", []Edit{{"xx", "xxx"}}, Revision([]byte(strings.Repeat("x", 1024))))
	wantCode(t, err, errs.EditAmbiguous)
	for _, name := range []string{"big.txt", "nul.txt", "bad.txt"} {
		if _, err := os.Stat(e.path(name)); !os.IsNotExist(err) {
			t.Errorf("refused write created %s", name)
		}
	}
}

func TestWriteReadOnlyWorkdir(t *testing.T) {
	e := newEnv(t, ProbeResolver())
	e.write(t, "f.txt", "v1\n")
	e.mkdir(t, "d")
	rev := Revision([]byte("v1\n"))
	calls := map[string]func() (*WriteResult, error){
		"write":  func() (*WriteResult, error) { return e.fs.WriteFile(bg, "wd", "f.txt", "x", rev) },
		"create": func() (*WriteResult, error) { return e.fs.WriteFile(bg, "wd", "new.txt", "x", "") },
		"edit":   func() (*WriteResult, error) { return e.fs.EditFile(bg, "wd", "f.txt", []Edit{{"v1", "v2"}}, rev) },
		"mkdir":  func() (*WriteResult, error) { return e.fs.CreateDirectory(bg, "wd", "nd") },
		"move":   func() (*WriteResult, error) { return e.fs.MovePath(bg, "wd", "f.txt", "g.txt", "") },
		"delete": func() (*WriteResult, error) { return e.fs.DeletePath(bg, "wd", "f.txt", rev) },
		"rmdir":  func() (*WriteResult, error) { return e.fs.DeletePath(bg, "wd", "d", "") },
	}
	for name, call := range calls {
		_, err := call()
		if errs.CodeOf(err) != errs.WorkdirReadOnly {
			t.Errorf("%s on an ro workdir: %v", name, err)
		}
	}
	ents, _ := os.ReadDir(e.root)
	var names []string
	for _, d := range ents {
		names = append(names, d.Name())
	}
	if strings.Join(names, ",") != "d,f.txt" || e.read(t, "f.txt") != "v1\n" {
		t.Fatalf("ro workdir changed: %v", names)
	}
	_, err := e.fs.WriteFile(bg, "nope", "x", "x", "")
	wantCode(t, err, errs.WorkdirNotFound)
}

// TestWriteHostile sends every hostile target through every write tool on
// both resolvers. Nothing may change outside the workdir (the outside
// directory and the sibling keep exactly their canaries), nothing hidden,
// denied or in .git may change, and no temporary may be left behind.
func TestWriteHostile(t *testing.T) {
	forEachResolver(t, func(t *testing.T, r Resolver) {
		for _, allowHidden := range []bool{false, true} {
			t.Run(fmt.Sprintf("allow_hidden=%v", allowHidden), func(t *testing.T) {
				var env []string
				if allowHidden {
					env = append(env, "SERVERFS_ALLOW_HIDDEN=true")
				}
				e := newRWEnv(t, r, env...)
				testWriteHostile(t, e, allowHidden)
			})
		}
	})
}

func testWriteHostile(t *testing.T, e *testEnv, allowHidden bool) {
	e.write(t, "inside.txt", "inside\n")
	e.write(t, "full/a.txt", "a\n")
	e.write(t, ".env", "SECRET=1\n")
	e.write(t, ".git/hooks/pre-commit", "#!/bin/sh\n")
	e.write(t, ".git/config", "[core]\n")
	e.write(t, "id_rsa", "key\n")
	e.write(t, "withsecret/.env", "S=1\n")
	e.write(t, "withgit/.git/HEAD", "ref: refs/heads/main\n")
	e.mkdir(t, "empty")
	e.symlink(t, e.outside, "out")
	e.symlink(t, filepath.Join(e.outside, "new.txt"), "dangling")
	e.symlink(t, e.canary, "canary-link")
	e.symlink(t, "inside.txt", "link-inside")
	e.symlink(t, "full", "link-dir")
	if err := syscall.Mkfifo(e.path("fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	insideRev := Revision([]byte("inside\n"))
	canaryRev := Revision([]byte(canaryText))
	hidden := errs.HiddenPathNotAllowed
	gitCode := errs.HiddenPathNotAllowed
	if allowHidden {
		hidden, gitCode = okAny, errs.DeniedPath
	}
	type call struct {
		name string
		do   func() (*WriteResult, error)
		want errs.Code
	}
	write := func(p, rev string) func() (*WriteResult, error) {
		return func() (*WriteResult, error) { return e.fs.WriteFile(bg, "wd", p, "PWNED\n", rev) }
	}
	edit := func(p, rev string) func() (*WriteResult, error) {
		return func() (*WriteResult, error) { return e.fs.EditFile(bg, "wd", p, []Edit{{"C", "PWNED"}}, rev) }
	}
	mkdir := func(p string) func() (*WriteResult, error) {
		return func() (*WriteResult, error) { return e.fs.CreateDirectory(bg, "wd", p) }
	}
	move := func(from, to string) func() (*WriteResult, error) {
		return func() (*WriteResult, error) { return e.fs.MovePath(bg, "wd", from, to, "") }
	}
	del := func(p, rev string) func() (*WriteResult, error) {
		return func() (*WriteResult, error) { return e.fs.DeletePath(bg, "wd", p, rev) }
	}
	calls := []call{
		{"write ../", write("../outside/new.txt", ""), errs.PathOutsideWorkdir},
		{"write a/../../x (missing a)", write("a/../../x.txt", ""), errs.PathOutsideWorkdir},
		{"write absolute", write("/etc/passwd", ""), errs.InvalidPath},
		{"write NUL", write("x\x00.txt", ""), errs.InvalidPath},
		{"write UNC path", write(`\\host\share\new.txt`, ""), errs.InvalidPath},
		{"write drive path", write(`C:\outside\new.txt`, ""), errs.InvalidPath},
		{"write root", write("", ""), errs.InvalidPath},
		{"write via symlinked dir", write("out/new.txt", ""), errs.SymlinkNotAllowed},
		{"replace via symlinked dir", write("out/canary.txt", canaryRev), errs.SymlinkNotAllowed},
		{"write dangling symlink", write("dangling", ""), errs.SymlinkNotAllowed},
		{"replace symlink to canary", write("canary-link", canaryRev), errs.SymlinkNotAllowed},
		{"replace symlink inside", write("link-inside", insideRev), errs.SymlinkNotAllowed},
		{"write into symlinked inside dir", write("link-dir/b.txt", ""), errs.SymlinkNotAllowed},
		{"write .git hook", write(".git/hooks/pre-commit", ""), gitCode},
		{"write .git config", write(".git/config", Revision([]byte("[core]\n"))), gitCode},
		{"write .GIT case", write(".GIT/hooks/x", ""), gitCode},
		{"write .env", write(".env", Revision([]byte("SECRET=1\n"))), errs.DeniedPath},
		{"write id_rsa", write("id_rsa", Revision([]byte("key\n"))), errs.DeniedPath},
		{"create denied name", write("server.pem", ""), errs.DeniedPath},
		{"create hidden", write(".newhidden", ""), hidden},
		{"write FIFO", write("fifo", ""), errs.UnsupportedFileType},
		{"write over directory", write("full", ""), errs.NotAFile},
		{"write dir-slash", write("new.txt/", ""), errs.NotAFile},
		{"write missing parent", write("nodir/x.txt", ""), errs.PathNotFound},
		{"edit via symlink", edit("canary-link", canaryRev), errs.SymlinkNotAllowed},
		{"edit via symlinked dir", edit("out/canary.txt", canaryRev), errs.SymlinkNotAllowed},
		{"edit ../", edit("../outside/canary.txt", canaryRev), errs.PathOutsideWorkdir},
		{"edit missing", edit("missing.txt", canaryRev), errs.PathNotFound},
		{"mkdir ../", mkdir("../outside/d"), errs.PathOutsideWorkdir},
		{"mkdir via symlinked dir", mkdir("out/d"), errs.SymlinkNotAllowed},
		{"mkdir deep via symlink", mkdir("link-dir/x/y"), errs.SymlinkNotAllowed},
		{"mkdir over file", mkdir("inside.txt/d"), errs.NotADirectory},
		{"mkdir .git", mkdir(".git/x"), gitCode},
		{"mkdir root", mkdir(""), errs.InvalidPath},
		{"move out of workdir", move("inside.txt", "../outside/x.txt"), errs.PathOutsideWorkdir},
		{"move into symlinked dir", move("inside.txt", "out/x.txt"), errs.SymlinkNotAllowed},
		{"move symlink", move("canary-link", "c2"), errs.SymlinkNotAllowed},
		{"move onto existing", move("inside.txt", "full/a.txt"), errs.PathExists},
		{"move onto existing dir", move("inside.txt", "empty"), errs.PathExists},
		{"move dir into itself", move("full", "full/sub"), errs.InvalidArgument},
		{"move dir with .env", move("withsecret", "ws2"), errs.DeniedPath},
		{"move dir with .git", move("withgit", "wg2"), errs.DeniedPath},
		{"move .env", move(".env", "env.txt"), errs.DeniedPath},
		{"move to .git", move("inside.txt", ".git/hooks/pre-push"), gitCode},
		{"move FIFO", move("fifo", "fifo2"), errs.UnsupportedFileType},
		{"move missing", move("missing.txt", "x.txt"), errs.PathNotFound},
		{"move root", move("", "x"), errs.InvalidPath},
		{"delete non-empty dir", del("full", ""), errs.DirectoryNotEmpty},
		{"delete dir with only hidden", del("withsecret", ""), errs.DirectoryNotEmpty},
		{"delete symlink", del("canary-link", ""), errs.SymlinkNotAllowed},
		{"delete via symlinked dir", del("out/canary.txt", canaryRev), errs.SymlinkNotAllowed},
		{"delete ../", del("../outside/canary.txt", canaryRev), errs.PathOutsideWorkdir},
		{"delete .git", del(".git/config", Revision([]byte("[core]\n"))), gitCode},
		{"delete .env", del(".env", Revision([]byte("SECRET=1\n"))), errs.DeniedPath},
		{"delete FIFO", del("fifo", ""), errs.UnsupportedFileType},
		{"delete root", del("", ""), errs.InvalidPath},
		{"delete option-like", del("-rf", ""), errs.PathNotFound},
	}
	for _, c := range calls {
		res, err := c.do()
		if c.want == okAny {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: succeeded (%+v), want %s", c.name, res, c.want)
			continue
		}
		if errs.CodeOf(err) != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
		if strings.Contains(err.Error(), e.root) || strings.Contains(err.Error(), e.outside) {
			t.Errorf("%s: host path in %q", c.name, err)
		}
	}
	// Nothing outside changed.
	parent := filepath.Dir(e.root)
	var outsideFiles []string
	filepath.WalkDir(parent, func(p string, d os.DirEntry, err error) error {
		if err == nil && !strings.HasPrefix(p, e.root+"/") && p != e.root && !d.IsDir() {
			b, _ := os.ReadFile(p)
			outsideFiles = append(outsideFiles, strings.TrimPrefix(p, parent)+"="+string(b))
		}
		return nil
	})
	sort.Strings(outsideFiles)
	want := []string{"/outside/canary.txt=" + canaryText, "/wd-evil/secret.txt=" + canaryText}
	if strings.Join(outsideFiles, "|") != strings.Join(want, "|") {
		t.Errorf("outside the workdir: %q", outsideFiles)
	}
	for rel, content := range map[string]string{".env": "SECRET=1\n", ".git/hooks/pre-commit": "#!/bin/sh\n", ".git/config": "[core]\n", "id_rsa": "key\n", "inside.txt": "inside\n", "full/a.txt": "a\n", "withsecret/.env": "S=1\n"} {
		if got := e.read(t, rel); got != content {
			t.Errorf("%s changed: %q", rel, got)
		}
	}
	if fi, err := os.Lstat(e.path("canary-link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("canary-link is no longer the symlink")
	}
	if tf := tempFiles(t, parent); len(tf) != 0 {
		t.Errorf("temporaries left: %v", tf)
	}
}

func TestWriteKeepsMode(t *testing.T) {
	e := newRWEnv(t, ProbeResolver())
	e.write(t, "script.sh", "#!/bin/sh\necho 1\n")
	if err := os.Chmod(e.path("script.sh"), 0o751); err != nil {
		t.Fatal(err)
	}
	must(t)(e.fs.WriteFile(bg, "wd", "script.sh", "#!/bin/sh\necho 2\n", Revision([]byte("#!/bin/sh\necho 1\n"))))
	fi, _ := os.Stat(e.path("script.sh"))
	if fi.Mode().Perm() != 0o751 {
		t.Fatalf("mode after replace %v, want 0751", fi.Mode().Perm())
	}
	must(t)(e.fs.WriteFile(bg, "wd", "new.txt", "x", ""))
	fi, _ = os.Stat(e.path("new.txt"))
	if fi.Mode().Perm()&0o133 != 0 {
		t.Fatalf("new file mode %v: executable or group/world-writable", fi.Mode().Perm())
	}
}

// TestWriteConcurrentSameRevision: writers racing from one revision —
// exactly one wins, every other gets REVISION_MISMATCH, and the file holds
// exactly the winner's bytes.
func TestWriteConcurrentSameRevision(t *testing.T) {
	e := newRWEnv(t, ProbeResolver())
	e.write(t, "f.txt", "base\n")
	base := Revision([]byte("base\n"))
	for round := 0; round < 20; round++ {
		const n = 16
		var wg sync.WaitGroup
		results := make([]error, n)
		contents := make([]string, n)
		start := make(chan struct{})
		rev := base
		if round > 0 {
			rev = Revision([]byte(e.read(t, "f.txt")))
		}
		for i := range n {
			contents[i] = fmt.Sprintf("round %d writer %d\n%s", round, i, strings.Repeat("x", i*1000))
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if i%2 == 0 {
					_, results[i] = e.fs.WriteFile(bg, "wd", "f.txt", contents[i], rev)
				} else {
					old := e.read(t, "f.txt")
					_, results[i] = e.fs.EditFile(bg, "wd", "f.txt", []Edit{{old, contents[i]}}, rev)
				}
			}()
		}
		close(start)
		wg.Wait()
		winners := 0
		var winner string
		for i, err := range results {
			switch errs.CodeOf(err) {
			case "":
				winners++
				winner = contents[i]
			case errs.RevisionMismatch:
			default:
				t.Fatalf("writer %d: %v", i, err)
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d writers succeeded from one revision", round, winners)
		}
		if got := e.read(t, "f.txt"); got != winner {
			t.Fatalf("round %d: file holds %.30q, the winner wrote %.30q", round, got, winner)
		}
	}
}

func TestLocalLease(t *testing.T) {
	l := NewLocalLease(30 * time.Millisecond)
	release, err := l.Acquire(bg, "wd")
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Acquire(bg, "wd")
	wantCode(t, err, errs.LeaseBusy)
	other, err := l.Acquire(bg, "other")
	if err != nil {
		t.Fatalf("another workdir's lease: %v", err)
	}
	other()
	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err = l.Acquire(ctx, "wd")
	wantCode(t, err, errs.Canceled)
	release()
	release() // a second release is harmless
	r2, err := l.Acquire(bg, "wd")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	r2()
}

// TestWriteHoldsLease: a write waits for the lease, and one held too long
// answers LEASE_BUSY without writing.
func TestWriteHoldsLease(t *testing.T) {
	e := newEnv(t, ProbeResolver())
	e.fs.Close()
	cfg, err := LoadConfig(nil, []string{"wd=" + e.root + ":rw"})
	if err != nil {
		t.Fatal(err)
	}
	lease := NewLocalLease(30 * time.Millisecond)
	f, err := New(cfg, Options{Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	release, _ := lease.Acquire(bg, "wd")
	_, err = f.WriteFile(bg, "wd", "x.txt", "x", "")
	wantCode(t, err, errs.LeaseBusy)
	if _, err := os.Stat(e.path("x.txt")); !os.IsNotExist(err) {
		t.Fatal("write without the lease created the file")
	}
	release()
	must(t)(f.WriteFile(bg, "wd", "x.txt", "x", ""))
}

func TestSweepTemporaries(t *testing.T) {
	e := newEnv(t, ProbeResolver())
	junk := []string{
		tempPrefix + "0123456789abcdef",
		"a/b/" + tempPrefix + "fedcba9876543210",
	}
	keep := []string{
		tempPrefix + "notatemporary",
		"a/" + tempPrefix + "0123456789ABCDEF",
		".hdir/" + tempPrefix + "0123456789abcdef", // hidden dirs are never written to
	}
	for _, p := range append(append([]string{}, junk...), keep...) {
		e.write(t, p, "partial")
	}
	e.symlink(t, e.canary, "a/"+tempPrefix+"aaaaaaaaaaaaaaaa")
	e.fs.Close()
	cfg, _ := LoadConfig(nil, []string{"wd=" + e.root + ":rw"})
	f, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n := f.SweepTemporaries(); n != len(junk) {
		t.Errorf("swept %d, want %d", n, len(junk))
	}
	for _, p := range junk {
		if _, err := os.Lstat(e.path(p)); !os.IsNotExist(err) {
			t.Errorf("%s survived the sweep", p)
		}
	}
	for _, p := range append(keep, "a/"+tempPrefix+"aaaaaaaaaaaaaaaa") {
		if _, err := os.Lstat(e.path(p)); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	if b, _ := os.ReadFile(e.canary); string(b) != canaryText {
		t.Error("canary changed")
	}
	// An ro workdir is never swept.
	cfg, _ = LoadConfig(nil, []string{"wd=" + e.root})
	e.write(t, junk[0], "partial")
	f2, _ := New(cfg, Options{})
	defer f2.Close()
	if f2.SweepTemporaries() != 0 {
		t.Error("an ro workdir was swept")
	}
}

// ---------------------------------------------------------------------------
// Crash safety: a child process does guarded writes and is killed with
// SIGKILL at random moments.

const crashChildEnv = "SERVERFS_TEST_CRASH_CHILD"

// crashContent is the content of file i at generation g: distinct sizes so
// that a torn write cannot look like a whole generation.
func crashContent(i, g int) string {
	return fmt.Sprintf("file %d generation %d\n%s\nend %d %d\n", i, g, strings.Repeat(fmt.Sprintf("%d-%d ", i, g), 2000+(g*37)%3000), i, g)
}

// parseGeneration returns g when content is exactly crashContent(i, g).
func parseGeneration(content string, i int) (int, bool) {
	var fi, g int
	if _, err := fmt.Sscanf(content, "file %d generation %d\n", &fi, &g); err != nil || fi != i {
		return 0, false
	}
	return g, content == crashContent(i, g)
}

const crashFiles = 4

// TestCrashChild is the child's body; it does nothing in a normal run.
func TestCrashChild(t *testing.T) {
	root := os.Getenv(crashChildEnv)
	if root == "" {
		return // not the child (see TestWriteCrashSafety)
	}
	cfg, err := LoadConfig(nil, []string{"wd=" + root + ":rw"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		i := n % crashFiles
		name := fmt.Sprintf("f%d.txt", i)
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		g, ok := parseGeneration(string(b), i)
		if !ok {
			t.Fatalf("%s is torn", name)
		}
		if n%2 == 0 {
			_, err = f.WriteFile(bg, "wd", name, crashContent(i, g+1), Revision(b))
		} else {
			_, err = f.EditFile(bg, "wd", name, []Edit{{fmt.Sprintf("end %d %d\n", i, g), fmt.Sprintf("end %d %d\n", i, g) + "\x01"}}, Revision(b))
			if err == nil {
				// Complete the generation with a second guarded write.
				cur, _ := os.ReadFile(filepath.Join(root, name))
				_, err = f.WriteFile(bg, "wd", name, crashContent(i, g+1), Revision(cur))
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("ok %d\n", n)
	}
}

func TestWriteCrashSafety(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("in the child")
	}
	root := t.TempDir()
	for i := range crashFiles {
		writeFile(t, filepath.Join(root, fmt.Sprintf("f%d.txt", i)), crashContent(i, 0))
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	total, kills, swept := 0, 0, 0
	for total < 1000 {
		cmd := exec.Command(exe, "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+root)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill after a random number of completed writes plus a random
		// delay: the kill lands anywhere inside the next write.
		target := 1 + rng.Intn(20)
		buf := make([]byte, 1)
		var line []byte
		seen := 0
		for seen < target {
			if _, err := out.Read(buf); err != nil {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("child ended early after %d writes: %v\n%s", seen, err, stderr.String())
			}
			if buf[0] == '\n' {
				if strings.HasPrefix(string(line), "ok ") {
					seen++
				}
				line = line[:0]
			} else {
				line = append(line, buf[0])
			}
		}
		time.Sleep(time.Duration(rng.Intn(2000)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		total += seen
		kills++
		// Every file holds exactly one whole generation.
		for i := range crashFiles {
			b, err := os.ReadFile(filepath.Join(root, fmt.Sprintf("f%d.txt", i)))
			if err != nil {
				t.Fatalf("after kill %d: %v", kills, err)
			}
			if _, ok := parseGeneration(string(b), i); !ok {
				// An edit's intermediate state is the old generation plus
				// "\x01": whole too, the first of the two guarded writes.
				if s := string(b); !strings.HasSuffix(s, "\x01") {
					t.Fatalf("after kill %d: f%d.txt is torn (%d bytes)", kills, i, len(b))
				} else if _, ok := parseGeneration(s[:len(s)-1], i); !ok {
					t.Fatalf("after kill %d: f%d.txt is torn (%d bytes)", kills, i, len(b))
				} else {
					// Restore a whole generation so the child can go on.
					os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d.txt", i)), []byte(s[:len(s)-1]), 0o644)
				}
			}
		}
		// Start-up sweeps whatever temporaries the kill left.
		cfg, _ := LoadConfig(nil, []string{"wd=" + root + ":rw"})
		f, err := New(cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		swept += f.SweepTemporaries()
		f.Close()
		if tf := tempFiles(t, root); len(tf) != 0 {
			t.Fatalf("after kill %d and a start-up: temporaries %v", kills, tf)
		}
	}
	// swept > 0 shows kills landed inside writes (a temporary existed).
	t.Logf("%d guarded writes, %d SIGKILLs, every file whole after each; %d temporaries swept at start-up", total, kills, swept)
}

// TestMoveDirectoryDestinationDenied: a deny pattern with '/' that matches
// only where the files would land refuses the move.
func TestMoveDirectoryDestinationDenied(t *testing.T) {
	e := newRWEnv(t, ProbeResolver(), "SERVERFS_EXTRA_DENY_GLOBS=config/prod/*.yaml")
	e.write(t, "staging/app.yaml", "a: 1\n")
	e.mkdir(t, "config")
	_, err := e.fs.MovePath(bg, "wd", "staging", "config/prod", "")
	wantCode(t, err, errs.DeniedPath)
	if e.read(t, "staging/app.yaml") != "a: 1\n" {
		t.Fatal("the refused move changed the source")
	}
	must(t)(e.fs.MovePath(bg, "wd", "staging", "config/test", ""))
}

// TestWriteDiffApplies: the diff a write returns applies with git apply
// to the old file and gives the new one, whatever the name (quoted as git
// quotes it: tab, newline, quote, backslash, unicode, spaces); replacing
// content that is not UTF-8 text gives diff_omitted and no diff, never
// one whose bytes the JSON answer would change.
func TestWriteDiffApplies(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required (CI installs it)")
	}
	e := newRWEnv(t, ProbeResolver())
	for i, name := range []string{"plain.txt", "tab\there", "new\nline", `q"uote`, `back\slash`, "ünï 日本.md", "trail ", " lead", "a b/c d"} {
		old, next := fmt.Sprintf("one\ntwo %d\nthree\n", i), "one\n2\nthree\n"
		e.write(t, name, old)
		res := must(t)(e.fs.WriteFile(bg, "wd", name, next, Revision([]byte(old))))
		if res.DiffOmitted || res.Diff == "" {
			t.Fatalf("%q: %+v", name, res)
		}
		work := t.TempDir()
		os.MkdirAll(filepath.Dir(filepath.Join(work, name)), 0o755)
		os.WriteFile(filepath.Join(work, name), []byte(old), 0o644)
		os.WriteFile(filepath.Join(work, "p.diff"), []byte(res.Diff), 0o644)
		cmd := exec.Command("git", "apply", "p.diff")
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%q: git apply: %v\n%s\n%s", name, err, out, res.Diff)
		}
		if b, _ := os.ReadFile(filepath.Join(work, name)); string(b) != next {
			t.Fatalf("%q: git apply gave %q", name, b)
		}
	}
	for _, old := range []string{"\x89PNG\r\n\x1a\nold\n", "caf\xe9\n", "a\x00b\n"} {
		e.write(t, "x.txt", old)
		res := must(t)(e.fs.WriteFile(bg, "wd", "x.txt", "text\n", Revision([]byte(old))))
		if !res.DiffOmitted || res.Diff != "" || e.read(t, "x.txt") != "text\n" {
			t.Fatalf("replacing %q: %+v", old, res)
		}
	}
}
