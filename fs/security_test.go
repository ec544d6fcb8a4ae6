package fs

import (
	"context"
	"encoding/json"
	"github.com/serverfs/serverfs/internal/errs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// op is one read operation of the fs API, as the tools will call it.
type op string

const (
	opList op = "list"
	opFind op = "find"
	opRead op = "read"
	opStat op = "stat"
	opTail op = "tail" // ReadTail: answers as read does
	opTree op = "tree" // Tree at depth 3: answers as list does
)

var ops = []op{opList, opFind, opRead, opStat, opTail, opTree}

// okSymlink is the expectation "stat succeeds and reports a symlink".
const okSymlink errs.Code = "ok:symlink"

// okAny is the expectation "succeeds".
const okAny errs.Code = "ok"

// hostileCase is one path through all four operations.
type hostileCase struct {
	name string
	path string
	all  errs.Code        // expected for every op unless overridden
	per  map[op]errs.Code // per-op overrides
}

func (c hostileCase) want(o op) errs.Code {
	if w, ok := c.per[o]; ok {
		return w
	}
	switch o {
	case opTail:
		return c.want(opRead)
	case opTree:
		return c.want(opList)
	}
	return c.all
}

// setupHostileTree creates, inside the workdir, the objects the cases point
// at. Every symlink leads somewhere an agent must not reach through it.
func setupHostileTree(t *testing.T, e *testEnv) {
	e.write(t, "inside.txt", "inside\n")
	e.write(t, "subdir/a.txt", "a\n")
	e.write(t, ".hidden", "hidden\n")
	e.write(t, ".hdir/x.txt", "x\n")
	e.write(t, "id_rsa", "key\n")
	e.write(t, "config/.ENV.production", "DB=1\n")
	e.write(t, "certs/server.PEM", "pem\n")
	e.write(t, ".ssh/known_hosts", "h\n")
	e.write(t, "．．/x.txt", "fullwidth dots dir\n")   // a real directory named with look-alike dots
	e.write(t, `back\slash.txt`, "backslash name\n") // on Linux a backslash is an ordinary byte of a name
	e.write(t, `win\dir/f.txt`, "in a directory named with a backslash\n")
	e.symlink(t, "inside.txt", "link-file")
	e.symlink(t, "subdir", "link-dir")
	e.symlink(t, "/etc", "etc")
	e.symlink(t, e.outside, "out")
	e.symlink(t, filepath.Join(filepath.Dir(e.root), "wd-evil"), "evil")
	e.symlink(t, filepath.Join(e.outside, "missing"), "dangling")
	e.symlink(t, "chain2", "chain1")
	e.symlink(t, e.canary, "chain2")
	e.symlink(t, "../../outside/canary.txt", "subdir/rel")
	e.symlink(t, "../outside", "reldir")
	e.symlink(t, e.path("inside.txt"), "abs-inside")
	e.symlink(t, e.path("subdir"), "abs-inside-dir")
}

func hostileCases() []hostileCase {
	long := strings.Repeat("a/", 2048)
	notFound := map[op]errs.Code{}
	return []hostileCase{
		{name: "parent", path: "../", all: errs.PathOutsideWorkdir},
		{name: "grandparent", path: "../../", all: errs.PathOutsideWorkdir},
		{name: "dotdot-etc", path: "foo/../../../etc/passwd", all: errs.PathOutsideWorkdir},
		{name: "dotdot-middle", path: "subdir/../../outside/canary.txt", all: errs.PathOutsideWorkdir},
		{name: "sibling-prefix", path: "../wd-evil/secret.txt", all: errs.PathOutsideWorkdir},
		{name: "absolute", path: "/etc/passwd", all: errs.InvalidPath},
		{name: "absolute-root", path: "/", all: errs.InvalidPath},
		{name: "nul", path: "inside.txt\x00.png", all: errs.InvalidPath},
		// An interior backslash is part of one name (the kernel resolves
		// it so): never a separator, never a way up.
		{name: "backslash", path: `subdir\a.txt`, all: errs.PathNotFound},
		{name: "backslash-traversal", path: `..\..\etc\passwd`, all: errs.HiddenPathNotAllowed}, // a name starting with "."
		{name: "backslash-traversal-inner", path: `subdir/..\..\outside\canary.txt`, all: errs.HiddenPathNotAllowed},
		{name: "backslash-traversal-undotted", path: `subdir\..\..\outside\canary.txt`, all: errs.PathNotFound},
		{name: "backslash-name", path: `back\slash.txt`, all: okAny, per: map[op]errs.Code{opList: errs.NotADirectory, opFind: errs.NotADirectory}},
		{name: "backslash-dir", path: `win\dir`, all: okAny, per: map[op]errs.Code{opRead: errs.NotAFile}},
		{name: "backslash-dir-file", path: `win\dir/f.txt`, all: okAny, per: map[op]errs.Code{opList: errs.NotADirectory, opFind: errs.NotADirectory}},
		// What Windows reads as absolute stays refused.
		{name: "windows-drive", path: `C:\foo`, all: errs.InvalidPath},
		{name: "windows-drive-slash", path: `c:/foo`, all: errs.InvalidPath},
		{name: "windows-drive-alone", path: `C:`, all: errs.InvalidPath},
		{name: "windows-unc", path: `\\host\share\x`, all: errs.InvalidPath},
		{name: "windows-rooted", path: `\x`, all: errs.InvalidPath},
		{name: "4KiB-path", path: long, all: errs.InvalidPath},
		{name: "long-component", path: strings.Repeat("n", 300), all: errs.InvalidPath},
		{name: "invalid-utf8", path: "sub\xffdir", all: errs.InvalidPath},
		{name: "tilde", path: "~", all: errs.PathNotFound},
		{name: "tilde-slash", path: "~/inside.txt", all: errs.PathNotFound},
		{name: "fullwidth-dots", path: "．．/outside/canary.txt", all: errs.PathNotFound},
		{name: "onedot-leader", path: "\u2024\u2024/outside/canary.txt", all: errs.PathNotFound},
		{name: "symlink-file-inside", path: "link-file", all: errs.SymlinkNotAllowed, per: map[op]errs.Code{opStat: okSymlink}},
		{name: "symlink-dir-inside", path: "link-dir", all: errs.SymlinkNotAllowed, per: map[op]errs.Code{opStat: okSymlink}},
		{name: "through-symlink-dir-inside", path: "link-dir/a.txt", all: errs.SymlinkNotAllowed},
		{name: "symlink-etc", path: "etc/passwd", all: errs.SymlinkNotAllowed},
		{name: "symlink-outside", path: "out/canary.txt", all: errs.SymlinkNotAllowed},
		{name: "symlink-other-workdir", path: "evil/secret.txt", all: errs.SymlinkNotAllowed},
		{name: "dangling-outside", path: "dangling", all: errs.SymlinkNotAllowed, per: map[op]errs.Code{opStat: okSymlink}},
		{name: "through-dangling", path: "dangling/x", all: errs.SymlinkNotAllowed},
		{name: "link-chain", path: "chain1", all: errs.SymlinkNotAllowed, per: map[op]errs.Code{opStat: okSymlink}},
		{name: "relative-dotdot-link", path: "subdir/rel", all: errs.SymlinkNotAllowed, per: map[op]errs.Code{opStat: okSymlink}},
		{name: "relative-dotdot-dir-link", path: "reldir/canary.txt", all: errs.SymlinkNotAllowed},
		{name: "absolute-link-back-inside", path: "abs-inside", all: errs.SymlinkNotAllowed, per: map[op]errs.Code{opStat: okSymlink}},
		{name: "absolute-dir-link-back-inside", path: "abs-inside-dir/a.txt", all: errs.SymlinkNotAllowed},
		{name: "hidden-file", path: ".hidden", all: errs.HiddenPathNotAllowed},
		{name: "hidden-dir", path: ".hdir/x.txt", all: errs.HiddenPathNotAllowed},
		{name: "hidden-via-dotdot", path: "subdir/../.hidden", all: errs.HiddenPathNotAllowed},
		{name: "denied-id_rsa", path: "id_rsa", all: errs.DeniedPath},
		{name: "denied-env-any-case", path: "config/.ENV.production", all: errs.DeniedPath},
		{name: "denied-pem-any-case", path: "certs/server.PEM", all: errs.DeniedPath},
		{name: "denied-ssh-dir", path: ".ssh", all: errs.DeniedPath},
		{name: "denied-ssh-file", path: ".ssh/known_hosts", all: errs.DeniedPath},
		{name: "trailing-slash-file", path: "inside.txt/", all: errs.NotADirectory, per: map[op]errs.Code{opRead: errs.NotAFile}},
		{name: "trailing-slash-dir", path: "subdir/", all: okAny, per: map[op]errs.Code{opRead: errs.NotAFile}},
		{name: "double-slash", path: "subdir//a.txt", all: okAny, per: map[op]errs.Code{opList: errs.NotADirectory, opFind: errs.NotADirectory}},
		{name: "dot-components", path: "./subdir/./a.txt", all: okAny, per: map[op]errs.Code{opList: errs.NotADirectory, opFind: errs.NotADirectory}},
		{name: "dotdot-stays-inside", path: "subdir/../inside.txt", all: okAny, per: map[op]errs.Code{opList: errs.NotADirectory, opFind: errs.NotADirectory}},
		{name: "missing", path: "no/such/file", all: errs.PathNotFound, per: notFound},
		{name: "file-as-parent", path: "inside.txt/x", all: errs.NotADirectory},
	}
}

func runOp(e *testEnv, o op, path string) (any, error) {
	ctx := context.Background()
	switch o {
	case opList:
		return e.fs.List("wd", path, 0, 0)
	case opFind:
		return e.fs.Find(ctx, "wd", path, "*", 0)
	case opRead:
		return e.fs.ReadText(ctx, "wd", path, 0, 0)
	case opTail:
		return e.fs.ReadTail(ctx, "wd", path, 5, nil)
	case opTree:
		return e.fs.Tree(ctx, "wd", path, TreeOptions{Depth: 3})
	default:
		return e.fs.Stat("wd", path)
	}
}

// TestHostilePaths runs every hostile path through list, find, read and stat
// on both resolvers, and checks that nothing outside the workdir, no hidden
// or denied content and no host path ever appears in an answer.
func TestHostilePaths(t *testing.T) {
	forEachResolver(t, func(t *testing.T, r Resolver) {
		e := newEnv(t, r)
		setupHostileTree(t, e)
		for _, c := range hostileCases() {
			for _, o := range ops {
				t.Run(c.name+"/"+string(o), func(t *testing.T) {
					res, err := runOp(e, o, c.path)
					assertNoLeak(t, e, res, err)
					switch want := c.want(o); want {
					case okAny:
						if err != nil {
							t.Fatalf("want success, got %v", err)
						}
					case okSymlink:
						if err != nil {
							t.Fatalf("want a symlink stat, got %v", err)
						}
						if fi := res.(FileInfo); fi.Type != TypeSymlink || fi.Size != nil {
							t.Fatalf("want type symlink without size, got %+v", fi)
						}
					default:
						wantCode(t, err, want)
						if !strings.HasPrefix(err.Error(), string(want)+": ") {
							t.Fatalf("error text %q does not start with the code", err)
						}
					}
				})
			}
		}
	})
}

// assertNoLeak fails when an answer or error carries the canary, content of
// hidden/denied files, or a host path.
func assertNoLeak(t *testing.T, e *testEnv, res any, err error) {
	t.Helper()
	var text string
	if err != nil {
		text = err.Error()
	} else {
		b, jerr := json.Marshal(res)
		if jerr != nil {
			t.Fatal(jerr)
		}
		text = string(b)
	}
	for _, bad := range []string{"CANARY", e.root, e.outside, filepath.Dir(e.root), "DB=1", "key\\n", "hidden\\n"} {
		if strings.Contains(text, bad) {
			t.Fatalf("answer leaks %q: %s", bad, text)
		}
	}
}

// TestWalksNeverLeaveTheTree checks that find over the whole hostile tree
// reports symlinks but never lists anything behind them, and never shows
// hidden or denied entries.
func TestWalksNeverLeaveTheTree(t *testing.T) {
	forEachResolver(t, func(t *testing.T, r Resolver) {
		e := newEnv(t, r)
		setupHostileTree(t, e)
		res, err := e.fs.Find(context.Background(), "wd", "", "**", 100)
		if err != nil {
			t.Fatal(err)
		}
		assertNoLeak(t, e, res, nil)
		got := map[string]EntryType{}
		for _, m := range res.Matches {
			got[m.Path] = m.Type
		}
		for _, p := range []string{"link-dir", "out", "evil", "etc", "dangling", "chain1", "subdir/rel", "abs-inside-dir"} {
			if got[p] != TypeSymlink {
				t.Errorf("%s: want a symlink entry, got %q", p, got[p])
			}
		}
		for p := range got {
			for _, bad := range []string{"link-dir/", "out/", "evil/", "etc/", "reldir/", "abs-inside-dir/", ".hidden", ".hdir", "id_rsa", ".ENV", ".PEM", ".ssh"} {
				if strings.HasPrefix(p, bad) || strings.Contains(p, bad) {
					t.Errorf("walk reached %q", p)
				}
			}
		}
		if got["subdir/a.txt"] != TypeFile || got["inside.txt"] != TypeFile {
			t.Errorf("walk missed ordinary files: %v", got)
		}
		l, err := e.fs.List("wd", "", 0, 500)
		if err != nil {
			t.Fatal(err)
		}
		assertNoLeak(t, e, l, nil)
		for _, en := range l.Entries {
			if IsHidden(en.Name) || en.Name == "id_rsa" {
				t.Errorf("listing shows %q", en.Name)
			}
		}
	})
}

// TestAllowHiddenKeepsDenyList: SERVERFS_ALLOW_HIDDEN=true opens dot-files
// but never the deny list.
func TestAllowHiddenKeepsDenyList(t *testing.T) {
	forEachResolver(t, func(t *testing.T, r Resolver) {
		e := newEnv(t, r, "SERVERFS_ALLOW_HIDDEN=true")
		setupHostileTree(t, e)
		if _, err := e.fs.ReadText(context.Background(), "wd", ".hidden", 0, 0); err != nil {
			t.Fatalf(".hidden with hidden allowed: %v", err)
		}
		for _, p := range []string{".ssh/known_hosts", ".ssh", "config/.ENV.production", "id_rsa"} {
			for _, o := range ops {
				_, err := runOp(e, o, p)
				wantCode(t, err, errs.DeniedPath)
			}
		}
		l, err := e.fs.List("wd", "", 0, 500)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, en := range l.Entries {
			names[en.Name] = true
		}
		if !names[".hidden"] || !names[".hdir"] || names[".ssh"] || names["id_rsa"] {
			t.Fatalf("listing with hidden allowed: %v", names)
		}
	})
}

// TestExtraDenyGlobs: operator globs add to the deny list, with and
// without "/".
func TestExtraDenyGlobs(t *testing.T) {
	e := newEnv(t, ResolverOpenat2, "SERVERFS_EXTRA_DENY_GLOBS=*.sqlite, secrets/**")
	e.write(t, "db/app.SQLITE", "x")
	e.write(t, "deploy/secrets/token.txt", "x")
	e.write(t, "deploy/not-secrets/token.txt", "ok\n")
	for _, p := range []string{"db/app.SQLITE", "deploy/secrets/token.txt", "deploy/secrets"} {
		_, err := e.fs.Stat("wd", p)
		wantCode(t, err, errs.DeniedPath)
	}
	if _, err := e.fs.ReadText(context.Background(), "wd", "deploy/not-secrets/token.txt", 0, 0); err != nil {
		t.Fatal(err)
	}
}

// TestUnknownWorkdir: aliases are exact; the error names no host path.
func TestUnknownWorkdir(t *testing.T) {
	e := newEnv(t, ResolverOpenat2)
	for _, alias := range []string{"WD", "wd2", "", "../wd", "wd\x00"} {
		_, err := e.fs.Stat(alias, "")
		wantCode(t, err, errs.WorkdirNotFound)
		assertNoLeak(t, e, nil, err)
	}
}

// TestResolverProbe: on this kernel the probe selects openat2 (every
// kernel since 5.6 has it); if this fails, the machine lost openat2 and the fallback is
// what runs in production.
func TestResolverProbe(t *testing.T) {
	if got := ProbeResolver(); got != ResolverOpenat2 {
		t.Fatalf("probe chose %v; openat2 is expected on kernel >= 5.6", got)
	}
}

func TestMain(m *testing.M) {
	os.Exit(m.Run())
}
