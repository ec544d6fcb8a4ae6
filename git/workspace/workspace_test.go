package workspace

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// gitRun runs system git in dir (the oracle) with a fixed identity and
// no user or system configuration.
func gitRun(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t testing.TB, path, content string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
}

// oddRepo makes a repository whose HEAD has odd names, an executable, an
// empty file, symlinks (one pointing out of the tree), a gitlink, hidden
// and credential files, nested directories.
func oddRepo(t testing.TB, dir string) {
	t.Helper()
	gitRun(t, dir, "init", "-q", "-b", "main")
	files := map[string]string{
		"README.md":             "hello\n",
		"sp ace/ünïcödé.txt":    "unicode\n",
		"-dash.txt":             "dash\n",
		"tab\there.txt":         "tab\n",
		"a/b/c/d/deep.txt":      "deep\n",
		"empty":                 "",
		".gitignore":            "*.log\n",
		".env":                  "SECRET=canary\n",
		"keys/server.pem":       "PEM canary\n",
		"percent%41.txt":        "percent\n",
		"star*name?.txt":        "glob chars\n",
		"bin/run.sh":            "#!/bin/sh\necho run\n",
		"ALIAS@notanid/x.txt":   "at sign\n",
		"new\nline.txt":         "newline\n",
		"quote\"d'.txt":         "quotes\n",
		"big/" + "z.txt":        strings.Repeat("z", 100_000),
		"dir.with.dots/f.x.y.z": "dots\n",
	}
	for name, c := range files {
		perm := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			perm = 0o755
		}
		write(t, filepath.Join(dir, name), c, perm)
	}
	for link, target := range map[string]string{"escape": "../../../etc/passwd", "abs": "/etc", "rel": "a/b", "dangling": "nowhere"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,vendor/sub")
	gitRun(t, dir, "commit", "-q", "-m", "odd")
	os.MkdirAll(filepath.Join(dir, "vendor", "sub"), 0o755) // as a clone leaves it
}

type env struct {
	live, state, plain string
	fs                 *sfs.FS
	m                  *Manager
}

func newEnv(t testing.TB, cfg Config, extra ...string) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{live: filepath.Join(base, "live"), state: filepath.Join(base, "state"), plain: filepath.Join(base, "plain")}
	os.Mkdir(e.live, 0o755)
	os.Mkdir(e.plain, 0o755)
	oddRepo(t, e.live)
	e.open(t, cfg, extra...)
	return e
}

func (e *env) open(t testing.TB, cfg Config, environ ...string) {
	t.Helper()
	c, err := sfs.LoadConfig(environ, []string{"wd=" + e.live + ":rw:repo", "plain=" + e.plain + ":rw"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := sfs.New(c, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cfg.StateDir = e.state
	m, _, err := Open(f, cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.fs, e.m = f, m
}

// tree describes a directory as path -> kind and content, for comparing
// a checkout with git's.
func tree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if rel == ".git" {
			return filepath.SkipDir
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "symlink " + target
		case info.IsDir():
			out[rel] = "dir"
		default:
			b, _ := os.ReadFile(p)
			kind := "file"
			if info.Mode()&0o100 != 0 {
				kind = "exec"
			}
			out[rel] = kind + " " + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func treeDir(e *env, ws Workspace) string { return filepath.Join(e.state, "workspaces", ws.ID, "tree") }

// TestCheckoutMatchesGit: a workspace of HEAD holds what git checkout
// writes (a fresh clone's work tree, submodule uninitialised): the same
// paths, kinds, contents, executable bits and symlink targets.
func TestCheckoutMatchesGit(t *testing.T) {
	e := newEnv(t, Config{})
	ws, err := e.m.Create(t.Context(), "wd", "HEAD", "tester")
	if err != nil {
		t.Fatal(err)
	}
	head := gitRun(t, e.live, "rev-parse", "HEAD")
	if ws.Base != head || ws.Branch != "main" || ws.Owner != "tester" || ws.Alias != "wd@"+ws.ID || !sfs.ValidWorkspaceID(ws.ID) {
		t.Fatalf("workspace %+v, head %s", ws, head)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	gitRun(t, filepath.Dir(clone), "clone", "-q", e.live, clone)
	want := tree(t, clone)
	if len(want) < 20 {
		t.Fatalf("clone has only %d entries: %v", len(want), want)
	}
	compare := func(layout string, got map[string]string) {
		for p, w := range want {
			if got[p] != w {
				t.Errorf("%s: %q: got %.60q, git %.60q", layout, p, got[p], w)
			}
		}
		for p := range got {
			if _, ok := want[p]; !ok {
				t.Errorf("%s: %q: in the workspace, not in git's checkout", layout, p)
			}
		}
	}
	compare("loose", tree(t, treeDir(e, ws)))
	// The same from packs (blobs through the pack reader).
	gitRun(t, e.live, "gc", "-q")
	packed, err := e.m.Create(t.Context(), "wd", "HEAD", "")
	if err != nil {
		t.Fatal(err)
	}
	compare("packed", tree(t, treeDir(e, packed)))
	e.m.Discard(t.Context(), packed.Alias)
	if _, err := os.Lstat(filepath.Join(treeDir(e, ws), ".git")); !os.IsNotExist(err) {
		t.Errorf("the workspace has a .git: %v", err)
	}
	// A tag, a branch and a commit prefix resolve as read_repo_history
	// takes them.
	gitRun(t, e.live, "tag", "v1")
	for rev, branch := range map[string]string{"v1": "", "main": "main", head[:10]: ""} {
		w2, err := e.m.Create(t.Context(), "wd", rev, "")
		if err != nil {
			t.Fatalf("%s: %v", rev, err)
		}
		if w2.Base != head || w2.Branch != branch {
			t.Errorf("%s: base %s branch %q", rev, w2.Base, w2.Branch)
		}
		if err := e.m.Discard(t.Context(), w2.Alias); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.m.Create(t.Context(), "wd", "nope", ""); errs.CodeOf(err) != errs.RevNotFound {
		t.Errorf("unknown base: %v", err)
	}
	if _, err := e.m.Create(t.Context(), "wd", "--output=x", ""); errs.CodeOf(err) != errs.InvalidArgument {
		t.Errorf("option-like base: %v", err)
	}
}

// TestWorkspaceIsolation: the workspace is served under ALIAS@ID with the
// parent's policy; writes there leave the live tree alone; .git is
// unreachable; discard removes it.
func TestWorkspaceIsolation(t *testing.T) {
	e := newEnv(t, Config{})
	ws, err := e.m.Create(t.Context(), "wd", "", "o")
	if err != nil {
		t.Fatal(err)
	}
	w, err := e.fs.Workdir(ws.Alias)
	if err != nil {
		t.Fatal(err)
	}
	if w.Mode() != sfs.ModeReadWrite || w.RepoOps() || w.Workspace() == nil || w.Workspace().Base != ws.Base {
		t.Fatalf("workspace workdir %+v", w.Info())
	}
	for _, p := range []string{".git", ".git/config", ".git/HEAD", ".env", "keys/server.pem", ".gitignore", "escape", "../live/README.md"} {
		if _, err := e.fs.Stat(ws.Alias, p); err == nil || errs.CodeOf(err) == errs.Internal {
			if fi, _ := e.fs.Stat(ws.Alias, p); fi.Type != sfs.TypeSymlink {
				t.Errorf("stat %s in the workspace: %v", p, err)
			}
		}
	}
	f, _, err := w.OpenFile("escape")
	if errs.CodeOf(err) != errs.SymlinkNotAllowed {
		t.Errorf("open escape symlink: %v", err)
	}
	if f != nil {
		f.Close()
	}
	info, _ := e.fs.Stat(ws.Alias, "README.md")
	if _, err := e.fs.WriteFile(t.Context(), ws.Alias, "README.md", "changed\n", info.Revision); err != nil {
		t.Fatal(err)
	}
	if _, err := e.fs.WriteFile(t.Context(), ws.Alias, "new.txt", "new\n", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.fs.WriteFile(t.Context(), ws.Alias, ".git/config", "x", ""); err == nil {
		t.Error("wrote .git/config in the workspace")
	}
	if b, _ := os.ReadFile(filepath.Join(e.live, "README.md")); string(b) != "hello\n" {
		t.Errorf("live README changed: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(e.live, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("new.txt reached the live tree: %v", err)
	}
	if st := gitRun(t, e.live, "status", "--porcelain"); st != "" {
		t.Errorf("live status: %q", st)
	}
	if b, _ := os.ReadFile(filepath.Join(treeDir(e, ws), "README.md")); string(b) != "changed\n" {
		t.Errorf("workspace README: %q", b)
	}
	// The workspace is listed with its base, owner and age.
	var found bool
	for _, i := range e.fs.Workdirs() {
		if i.Alias == ws.Alias {
			found = i.Base == ws.Base && i.Owner == "o" && i.Age == "0m" && i.Mode == sfs.ModeReadWrite
		}
	}
	if !found {
		t.Errorf("list_workdirs: %+v", e.fs.Workdirs())
	}
	if l := e.m.List("wd"); len(l) != 1 || l[0].Alias != ws.Alias {
		t.Errorf("List: %+v", l)
	}
	if err := e.m.Discard(t.Context(), ws.Alias); err != nil {
		t.Fatal(err)
	}
	if _, err := e.fs.Workdir(ws.Alias); errs.CodeOf(err) != errs.WorkdirNotFound {
		t.Errorf("after discard: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(e.state, "workspaces", ws.ID)); !os.IsNotExist(err) {
		t.Errorf("discarded files remain: %v", err)
	}
	if err := e.m.Discard(t.Context(), ws.Alias); errs.CodeOf(err) != errs.WorkdirNotFound {
		t.Errorf("second discard: %v", err)
	}
}

// TestHostileWorkspaceIDs: IDs that are paths, empty, '@' alone or long
// are refused before they reach the storage.
func TestHostileWorkspaceIDs(t *testing.T) {
	e := newEnv(t, Config{})
	// A directory an ID like "../x" would reach.
	os.MkdirAll(filepath.Join(e.state, "x"), 0o755)
	write(t, filepath.Join(e.state, "x", metaFile), "{}", 0o644)
	for _, id := range []string{"../x", "a/b", "@", "wd@", "@abc", "wd@../x", "wd@..", "wd@a/b", "wd@" + strings.Repeat("a", 17), "wd@" + strings.Repeat("a", 15),
		"wd@AAAAAAAAAAAAAAAA", "wd@aaaaaaaaaaaaaaa1", "wd@aaaaaaaaaaaaaaaa@x", "wd@aaaaaaaaaaaaaaaa/", strings.Repeat("x", 100_000), "wd@aaaaaaaaaaaaaaaa\x00", "../wd@aaaaaaaaaaaaaaaa"} {
		err := e.m.Discard(t.Context(), id)
		if c := errs.CodeOf(err); c != errs.InvalidArgument && c != errs.WorkdirNotFound {
			t.Errorf("discard %.40q: %v", id, err)
		}
		if len(err.Error()) > 300 {
			t.Errorf("discard %.40q: a %d-byte message", id, len(err.Error()))
		}
		if _, _, err := e.m.Get(id); err == nil {
			t.Errorf("get %.40q succeeded", id)
		}
		if _, err := e.fs.Workdir(id); err == nil {
			t.Errorf("workdir %.40q resolved", id)
		}
	}
	if _, err := os.Stat(filepath.Join(e.state, "x", metaFile)); err != nil {
		t.Errorf("a hostile ID reached the storage: %v", err)
	}
	// Workspaces of a workspace, of a workdir without repo ops or of an
	// unknown one are refused.
	ws, err := e.m.Create(t.Context(), "wd", "", "")
	if err != nil {
		t.Fatal(err)
	}
	for parent, code := range map[string]errs.Code{ws.Alias: errs.InvalidArgument, "plain": errs.RepoOpsDisabled, "nope": errs.WorkdirNotFound, "wd@zzzzzzzzzzzzzzzz": errs.WorkdirNotFound} {
		if _, err := e.m.Create(t.Context(), parent, "", ""); errs.CodeOf(err) != code {
			t.Errorf("create in %s: %v, want %s", parent, err, code)
		}
	}
}

// TestWorkspaceLimit: the limit per workdir holds; a discard frees a slot.
func TestWorkspaceLimit(t *testing.T) {
	e := newEnv(t, Config{Limit: 2})
	var made []Workspace
	for range 2 {
		ws, err := e.m.Create(t.Context(), "wd", "", "")
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, ws)
	}
	if _, err := e.m.Create(t.Context(), "wd", "", ""); errs.CodeOf(err) != errs.WorkspaceLimit {
		t.Fatalf("third: %v", err)
	}
	ents, _ := os.ReadDir(filepath.Join(e.state, "workspaces"))
	if len(ents) != 2 {
		t.Errorf("storage holds %d entries after a refused create", len(ents))
	}
	if err := e.m.Discard(t.Context(), made[0].Alias); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Create(t.Context(), "wd", "", ""); err != nil {
		t.Fatal(err)
	}
}

// TestCheckoutBounds: too many files, too many bytes, or a cancelled
// request leave nothing behind.
func TestCheckoutBounds(t *testing.T) {
	for name, cfg := range map[string]Config{"files": {MaxFiles: 5}, "bytes": {MaxBytes: 50_000}, "timeout": {Timeout: time.Nanosecond}} {
		e := newEnv(t, cfg)
		if _, err := e.m.Create(t.Context(), "wd", "", ""); errs.CodeOf(err) != errs.WorkspaceTooLarge {
			t.Errorf("%s: %v", name, err)
		}
		if ents, _ := os.ReadDir(filepath.Join(e.state, "workspaces")); len(ents) != 0 {
			t.Errorf("%s: %d entries left", name, len(ents))
		}
	}
	e := newEnv(t, Config{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := e.m.Create(ctx, "wd", "", ""); errs.CodeOf(err) != errs.Canceled {
		t.Errorf("cancelled: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(e.state, "workspaces")); len(ents) != 0 {
		t.Errorf("cancelled: %d entries left", len(ents))
	}
}

// TestStartupCleanup: at start-up workspaces older than the maximum age
// and unfinished ones are removed, the others served again.
func TestStartupCleanup(t *testing.T) {
	e := newEnv(t, Config{})
	old, err := e.m.Create(t.Context(), "wd", "", "")
	if err != nil {
		t.Fatal(err)
	}
	young, err := e.m.Create(t.Context(), "wd", "", "")
	if err != nil {
		t.Fatal(err)
	}
	// Age one by rewriting its creation time.
	metaPath := filepath.Join(e.state, "workspaces", old.ID, metaFile)
	b, _ := os.ReadFile(metaPath)
	var meta map[string]any
	json.Unmarshal(b, &meta)
	meta["created_at"] = time.Now().Add(-8 * 24 * time.Hour).UTC().Format(time.RFC3339)
	b, _ = json.Marshal(meta)
	os.WriteFile(metaPath, b, 0o600)
	// An unfinished creation, and a directory not ours.
	os.MkdirAll(filepath.Join(e.state, "workspaces", "abcdefghijklmnop.tmp", "tree"), 0o755)
	os.MkdirAll(filepath.Join(e.state, "workspaces", "qrstuvwxyzabcdef", "tree"), 0o755)
	os.MkdirAll(filepath.Join(e.state, "workspaces", "not-ours"), 0o755)

	c, err := sfs.LoadConfig(nil, []string{"wd=" + e.live + ":rw:repo"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := sfs.New(c, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, rep, err := Open(f, Config{StateDir: e.state})
	if err != nil {
		t.Fatal(err)
	}
	if rep != (StartReport{Attached: 1, Expired: 1, Incomplete: 2}) {
		t.Errorf("report %+v", rep)
	}
	if l := m.List(""); len(l) != 1 || l[0].Alias != young.Alias || l[0].Base != young.Base {
		t.Errorf("after restart: %+v", l)
	}
	if _, err := f.Stat(young.Alias, "README.md"); err != nil {
		t.Error(err)
	}
	for _, gone := range []string{old.ID, "abcdefghijklmnop.tmp", "qrstuvwxyzabcdef"} {
		if _, err := os.Lstat(filepath.Join(e.state, "workspaces", gone)); !os.IsNotExist(err) {
			t.Errorf("%s remains: %v", gone, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(e.state, "workspaces", "not-ours")); err != nil {
		t.Errorf("a directory not ours was removed: %v", err)
	}
	// A shorter maximum age through the configuration.
	cfg, probs := LoadConfig([]string{"SERVERFS_WORKSPACE_MAX_AGE_HOURS=1", "SERVERFS_STATE_DIR=" + e.state}, "")
	if len(probs) > 0 || cfg.MaxAge != time.Hour || cfg.Limit != DefaultLimit {
		t.Fatalf("config %+v %v", cfg, probs)
	}
}

// TestStateDirInsideWorkdir: a state directory inside a workdir is
// refused.
func TestStateDirInsideWorkdir(t *testing.T) {
	e := newEnv(t, Config{})
	if _, _, err := Open(e.fs, Config{StateDir: filepath.Join(e.live, "sub", "state")}); err == nil || !strings.Contains(err.Error(), "inside the workdir") {
		t.Fatalf("state inside a workdir: %v", err)
	}
	// A workdir inside the state directory (here: the state directory is
	// the live tree's grandparent).
	if _, _, err := Open(e.fs, Config{StateDir: filepath.Dir(filepath.Dir(e.live))}); err == nil || !strings.Contains(err.Error(), "is inside SERVERFS_STATE_DIR") {
		t.Fatalf("a workdir inside the state directory: %v", err)
	}
}

// rawTree stores a tree object with exactly these entries, in this order
// (git mktree would sort and check them), and returns its id.
func rawTree(t testing.TB, repo string, entries ...[3]string) string {
	t.Helper()
	var b bytes.Buffer
	for _, e := range entries { // mode, name, id
		b.WriteString(e[0] + " " + e[1] + "\x00")
		raw, err := hex.DecodeString(e[2])
		if err != nil || len(raw) != 20 {
			t.Fatalf("bad id %q", e[2])
		}
		b.Write(raw)
	}
	cmd := exec.Command("git", "hash-object", "-t", "tree", "-w", "--literally", "--stdin")
	cmd.Dir, cmd.Stdin = repo, &b
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hash-object: %v %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func blob(t testing.TB, repo, content string) string {
	t.Helper()
	cmd := exec.Command("git", "hash-object", "-w", "--stdin")
	cmd.Dir, cmd.Stdin = repo, strings.NewReader(content)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hash-object: %v %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestHostileTrees: trees git refuses to check out (a .git entry in any
// spelling NTFS reads, also after a backslash, '.', '..', a symlinked
// .gitmodules, names with '/', a name twice so that a symlink would be
// entered as a directory or written through) refuse the checkout; nothing
// is written outside the workspace and nothing is left. What git on Linux
// checks out (a backslash is an ordinary byte there; the HFS+ spellings
// are git's only with core.protectHFS, off on Linux) is checked out as git
// checks it out.
func TestHostileTrees(t *testing.T) {
	e := newEnv(t, Config{})
	outside := t.TempDir()
	hook := blob(t, e.live, "#!/bin/sh\necho pwned\n")
	hooks := rawTree(t, e.live, [3]string{"100755", "post-checkout", hook})
	gitDir := rawTree(t, e.live, [3]string{"40000", "hooks", hooks}, [3]string{"100644", "config", blob(t, e.live, "[core]\n\thooksPath = hooks\n")})
	pwned := rawTree(t, e.live, [3]string{"100644", "pwned", hook})
	target := blob(t, e.live, outside)
	cases := map[string][][3]string{
		".git":     {{"40000", ".git", gitDir}},
		".GIT":     {{"40000", ".GIT", gitDir}},
		".git.":    {{"40000", ".git.", gitDir}},
		"git~1":    {{"40000", "git~1", gitDir}},
		"sub/.Git": {{"40000", "sub", rawTree(t, e.live, [3]string{"40000", ".Git", gitDir})}},
		"dotdot":   {{"40000", "..", pwned}},
		"dot":      {{"40000", ".", pwned}},
		"slash":    {{"100644", "a/b", hook}},

		// NTFS's spellings, also after a backslash; a symlinked .gitmodules.
		"backslash .git":      {{"40000", `a\.git`, gitDir}},
		"backslash .git file": {{"100644", `x\.git\config`, hook}},
		".gitmodules symlink": {{"120000", ".GitModules", target}},
		"GITMOD~1 symlink":    {{"120000", "GITMOD~1", target}},
		"link-then-dir": {
			{"120000", "a", target},
			{"40000", "a", pwned},
		},
		"link-then-file": {
			{"120000", "pwned", blob(t, e.live, outside+"/pwned")},
			{"100644", "pwned", hook},
		},
		"gitlink-then-dir": {
			{"160000", "m", hook},
			{"40000", "m", pwned},
		},
	}
	for name, entries := range cases {
		tree := rawTree(t, e.live, entries...)
		commit := gitRun(t, e.live, "commit-tree", tree, "-m", name)
		gitRun(t, e.live, "update-ref", "refs/heads/evil", commit)
		_, err := e.m.Create(t.Context(), "wd", "evil", "")
		if errs.CodeOf(err) != errs.RepoUnsupported || !strings.Contains(err.Error(), "refuses to check out") {
			t.Errorf("%s: %v", name, err)
		}
		if ents, _ := os.ReadDir(filepath.Join(e.state, "workspaces")); len(ents) != 0 {
			t.Errorf("%s: %d entries left in the storage", name, len(ents))
		}
	}
	// Names git on Linux checks out: the same files as a clone of them.
	linux := rawTree(t, e.live,
		[3]string{"100644", `..\..\x`, hook},
		[3]string{"100644", `notes\todo.txt`, hook},
		[3]string{"40000", ".git\u200c", gitDir},
		[3]string{"120000", ".gitignore", target},
	)
	gitRun(t, e.live, "update-ref", "refs/heads/linux", gitRun(t, e.live, "commit-tree", linux, "-m", "linux"))
	ws, err := e.m.Create(t.Context(), "wd", "linux", "")
	if err != nil {
		t.Fatalf("names git checks out on Linux: %v", err)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	gitRun(t, filepath.Dir(clone), "clone", "-q", "-b", "linux", e.live, clone)
	want, got := tree(t, clone), tree(t, treeDir(e, ws))
	if len(want) != 7 || len(got) != len(want) {
		t.Errorf("clone %v, workspace %v", want, got)
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%q: workspace %.60q, git %.60q", p, got[p], w)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("the checkout wrote outside: %v", ents)
	}
	if _, err := os.Lstat(filepath.Join(e.state, "pwned")); !os.IsNotExist(err) {
		t.Errorf("a '..' entry reached the state directory: %v", err)
	}
}

// TestCheckoutStreamsLargeBlob: a 1 GiB blob (128 MiB under -race),
// loose and packed, is streamed to its file: the checkout allocates a
// small fraction of it (TotalAlloc counts every allocation, so holding
// the blob once would show as its size), and the file has git's content.
func TestCheckoutStreamsLargeBlob(t *testing.T) {
	size := 1 << 30
	if raceEnabled {
		size = 128 << 20
	}
	base := t.TempDir()
	live := filepath.Join(base, "live")
	os.Mkdir(live, 0o755)
	gitRun(t, live, "init", "-q", "-b", "main")
	// A file of 1 GiB that is not all zeros: a pattern every 4 KiB.
	f, err := os.Create(filepath.Join(live, "huge.bin"))
	if err != nil {
		t.Fatal(err)
	}
	page := make([]byte, 1<<20)
	for i := 0; i < len(page); i += 4096 {
		copy(page[i:], "serverfs")
	}
	for range size / len(page) {
		if _, err := f.Write(page); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	gitRun(t, live, "-c", "core.compression=1", "add", "huge.bin")
	gitRun(t, live, "commit", "-q", "-m", "huge")
	os.Remove(filepath.Join(live, "huge.bin")) // only the object remains
	e := &env{live: live, state: filepath.Join(base, "state"), plain: filepath.Join(base, "plain")}
	os.Mkdir(e.plain, 0o755)
	for _, layout := range []string{"loose", "packed"} {
		if layout == "packed" {
			gitRun(t, live, "-c", "pack.compression=1", "repack", "-adq")
		}
		e.open(t, Config{})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ws, err := e.m.Create(t.Context(), "wd", "", "")
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatalf("%s: %v", layout, err)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d MiB blob checked out, %d KiB allocated", layout, size>>20, alloc>>10)
		if alloc > 64<<20 {
			t.Errorf("%s: the checkout of a %d MiB blob allocated %d MiB", layout, size>>20, alloc>>20)
		}
		st, err := os.Stat(filepath.Join(treeDir(e, ws), "huge.bin"))
		if err != nil || st.Size() != int64(size) {
			t.Fatalf("%s: %v %v", layout, st, err)
		}
		got, _ := os.Open(filepath.Join(treeDir(e, ws), "huge.bin"))
		buf := make([]byte, len(page))
		for i := 0; i < size/len(page); i += 97 { // a sample of the pages
			if _, err := got.ReadAt(buf, int64(i)*int64(len(page))); err != nil || !bytes.Equal(buf, page) {
				t.Fatalf("%s: page %d differs: %v", layout, i, err)
			}
		}
		got.Close()
		e.m.Discard(t.Context(), ws.Alias)
	}
}

// TestConcurrentCreates: racing creations never pass the limit.
func TestConcurrentCreates(t *testing.T) {
	e := newEnv(t, Config{Limit: 2})
	errList := make(chan error, 6)
	for range 6 {
		go func() {
			_, err := e.m.Create(t.Context(), "wd", "", "")
			errList <- err
		}()
	}
	ok, limited := 0, 0
	for range 6 {
		switch err := <-errList; errs.CodeOf(err) {
		case "":
			ok++
		case errs.WorkspaceLimit:
			limited++
		default:
			t.Error(err)
		}
	}
	if ok != 2 || limited != 4 || len(e.m.List("wd")) != 2 {
		t.Errorf("%d created, %d limited, %d listed", ok, limited, len(e.m.List("wd")))
	}
}
