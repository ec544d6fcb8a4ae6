package git

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/serverfs/serverfs/internal/errs"
)

// kindsSource is a repository outside every workdir: a.txt and dir/b.txt
// over three commits ("one", "two" changes a.txt, "three" dir/b.txt),
// loose.
func kindsSource(t *testing.T) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src")
	os.MkdirAll(src, 0o755)
	gitCLI(t, src, "init", "-q", "-b", "main")
	write(t, filepath.Join(src, "a.txt"), "a1\n")
	write(t, filepath.Join(src, "dir/b.txt"), "b1\n")
	gitCLI(t, src, "add", "-A")
	gitCLI(t, src, "commit", "-qm", "one")
	write(t, filepath.Join(src, "a.txt"), "a1\na2\n")
	gitCLI(t, src, "commit", "-qam", "two")
	write(t, filepath.Join(src, "dir/b.txt"), "b1\nb2\n")
	gitCLI(t, src, "commit", "-qam", "three")
	return src
}

// cloneKind clones src into a new directory with args (and an identity)
// and returns it.
func cloneKind(t *testing.T, src string, args ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "wd")
	gitCLI(t, filepath.Dir(dir), append(append([]string{"clone", "-q"}, args...), src, dir)...)
	gitCLI(t, dir, "config", "user.name", "Serv Er")
	gitCLI(t, dir, "config", "user.email", "s@example.invalid")
	return dir
}

// objectFile is the loose object file of rev (a git revision) in dir.
func objectFile(t *testing.T, dir, rev string) string {
	t.Helper()
	id := strings.TrimSpace(gitCLI(t, dir, "rev-parse", rev))
	return filepath.Join(dir, ".git/objects", id[:2], id[2:])
}

// repoKindOps are the repository entry points, each run on a repository
// opened anew; commit runs last (it changes the repository).
var repoKindOps = []string{"status", "diff", "staged_diff", "log", "show", "blame", "checkout", "commit"}

// runRepoKindOp runs one entry point on the workdir dir: a.txt is
// changed in the work tree first, c.txt added for the commit.
func runRepoKindOp(t *testing.T, dir, op string) (any, error) {
	t.Helper()
	f := newWorkdirFS(t, "wd="+dir+":rw:repo")
	r, err := Open(f, "wd")
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	switch op {
	case "status":
		return r.Status(ctx, 100)
	case "diff", "staged_diff":
		return r.Diff(ctx, op == "staged_diff", []string{"a.txt"}, 0)
	case "log":
		return r.Log(ctx, LogOptions{Files: true})
	case "show":
		return r.Show(ctx, "HEAD", nil, 0)
	case "blame":
		return r.Blame(ctx, "HEAD", "a.txt", 0, 0)
	case "checkout":
		fd, err := unix.Open(t.TempDir(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		return r.Checkout(ctx, "HEAD", fd, CheckoutLimits{})
	case "commit":
		write(t, filepath.Join(dir, "c.txt"), "c\n")
		return r.Commit(ctx, []string{"c.txt"}, "add c")
	}
	t.Fatalf("unknown op %s", op)
	return nil, nil
}

// TestRepositoryKinds: every repository entry point on repositories git
// reads, answering correctly or with a specific code (never
// INTERNAL_ERROR): objects in alternates outside the workdir, the same
// repacked, shallow clones, missing blobs, trees and commits, replace
// refs (honoured by git: refused where a read meets one; ignored with
// core.useReplaceRefs=false), grafts, commit-graph files, a version 1
// pack index, a damaged and a truncated pack, a .git file, linked
// worktrees.
func TestRepositoryKinds(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	src := kindsSource(t)
	const (
		ok         = ""
		incomplete = string(errs.RepoIncomplete)
		unsup      = string(errs.RepoUnsupported)
		orIncompl  = "|" + incomplete // either answer is right
	)
	all := func(code string) map[string]string {
		m := map[string]string{}
		for _, op := range repoKindOps {
			m[op] = code
		}
		return m
	}
	with := func(m map[string]string, kv ...string) map[string]string {
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	kinds := []struct {
		name  string
		make  func(t *testing.T) string
		want  map[string]string
		check func(t *testing.T, dir string, results map[string]any)
	}{
		{"plain", func(t *testing.T) string { return cloneKind(t, src) }, all(ok), func(t *testing.T, dir string, res map[string]any) {
			if l := res["log"].(*LogResult); len(l.Commits) != 3 {
				t.Errorf("log: %d commits, want 3", len(l.Commits))
			}
		}},
		{"alternates outside the workdir", func(t *testing.T) string { return cloneKind(t, src, "--shared") }, all(incomplete), nil},
		{"alternates, repacked", func(t *testing.T) string {
			dir := cloneKind(t, src, "--shared")
			gitCLI(t, dir, "repack", "-a", "-d", "-q")
			return dir
		}, all(ok), nil},
		{"shallow clone", func(t *testing.T) string { return cloneKind(t, "file://"+src, "--depth=1") }, all(ok), func(t *testing.T, dir string, res map[string]any) {
			l := res["log"].(*LogResult)
			if len(l.Commits) != 1 || !l.Commits[0].Shallow {
				t.Errorf("log of a depth-1 clone: %+v", l.Commits)
			}
			if s := res["show"].(*ShowResult); len(s.Files) != 2 {
				t.Errorf("show of a shallow boundary (a root, as git shows it): %+v", s.Files)
			}
		}},
		{"missing blob", func(t *testing.T) string {
			dir := cloneKind(t, src, "--no-local")
			explode(t, dir)
			os.Remove(objectFile(t, dir, "HEAD:a.txt"))
			return dir
		}, with(all(ok), "diff", incomplete, "blame", incomplete, "checkout", incomplete), nil},
		{"missing tree", func(t *testing.T) string {
			dir := cloneKind(t, src, "--no-local")
			explode(t, dir)
			os.Remove(objectFile(t, dir, "HEAD:dir"))
			return dir
		}, with(all(ok), "status", orIncompl, "log", incomplete, "show", incomplete, "checkout", incomplete, "commit", orIncompl), nil},
		{"missing commit", func(t *testing.T) string {
			dir := cloneKind(t, src, "--no-local")
			explode(t, dir)
			os.Remove(objectFile(t, dir, "HEAD~2"))
			return dir
		}, with(all(ok), "log", incomplete, "blame", incomplete), nil},
		{"replace ref", func(t *testing.T) string {
			dir := cloneKind(t, src)
			other := strings.TrimSpace(gitCLI(t, dir, "commit-tree", "-m", "replacement", "HEAD~1^{tree}"))
			gitCLI(t, dir, "replace", "HEAD~1", other)
			return dir
		}, with(all(ok), "log", unsup, "show", unsup, "blame", unsup), nil},
		{"replace ref, packed", func(t *testing.T) string {
			dir := cloneKind(t, src)
			other := strings.TrimSpace(gitCLI(t, dir, "commit-tree", "-m", "replacement", "HEAD~1^{tree}"))
			gitCLI(t, dir, "replace", "HEAD~1", other)
			gitCLI(t, dir, "pack-refs", "--all")
			return dir
		}, with(all(ok), "log", unsup, "show", unsup, "blame", unsup), nil},
		{"replace ref, core.useReplaceRefs=false", func(t *testing.T) string {
			dir := cloneKind(t, src)
			other := strings.TrimSpace(gitCLI(t, dir, "commit-tree", "-m", "replacement", "HEAD~1^{tree}"))
			gitCLI(t, dir, "replace", "HEAD~1", other)
			gitCLI(t, dir, "config", "core.useReplaceRefs", "false")
			return dir
		}, all(ok), func(t *testing.T, dir string, res map[string]any) {
			if l := res["log"].(*LogResult); len(l.Commits) != 3 {
				t.Errorf("log: %d commits, want 3", len(l.Commits))
			}
		}},
		{"grafts", func(t *testing.T) string {
			dir := cloneKind(t, src)
			write(t, filepath.Join(dir, ".git/info/grafts"), strings.TrimSpace(gitCLI(t, dir, "rev-parse", "HEAD"))+" "+strings.TrimSpace(gitCLI(t, dir, "rev-parse", "HEAD~2"))+"\n")
			return dir
		}, with(all(ok), "log", unsup, "show", unsup, "blame", unsup), nil},
		{"commit-graph", func(t *testing.T) string {
			dir := cloneKind(t, src)
			gitCLI(t, dir, "commit-graph", "write", "--reachable", "--changed-paths")
			if _, err := os.Stat(filepath.Join(dir, ".git/objects/info/commit-graph")); err != nil {
				t.Fatal(err)
			}
			return dir
		}, all(ok), nil},
		{"version 1 pack index", func(t *testing.T) string {
			dir := cloneKind(t, src, "--no-local")
			pack := mustGlob(t, filepath.Join(dir, ".git/objects/pack/*.pack"))
			os.Remove(strings.TrimSuffix(pack, ".pack") + ".idx")
			gitCLI(t, dir, "index-pack", "--index-version=1", pack)
			return dir
		}, all(ok), func(t *testing.T, dir string, res map[string]any) {
			if l := res["log"].(*LogResult); len(l.Commits) != 3 {
				t.Errorf("log: %d commits, want 3", len(l.Commits))
			}
		}},
		{"damaged pack", func(t *testing.T) string {
			dir := cloneKind(t, src, "--no-local")
			damagePacked(t, dir, "HEAD:a.txt")
			return dir
		}, with(all(ok), "diff", incomplete, "blame", incomplete, "checkout", incomplete), nil},
		{"truncated pack", func(t *testing.T) string {
			dir := cloneKind(t, src, "--no-local")
			packs, _ := filepath.Glob(filepath.Join(dir, ".git/objects/pack/*.pack"))
			st, _ := os.Stat(packs[0])
			os.Chmod(packs[0], 0o644)
			if err := os.Truncate(packs[0], st.Size()/2); err != nil {
				t.Fatal(err)
			}
			return dir
		}, with(all(orIncompl), "checkout", incomplete), nil},
		{".git file (gitdir pointer)", func(t *testing.T) string {
			dir := filepath.Join(t.TempDir(), "wd")
			gitCLI(t, filepath.Dir(dir), "clone", "-q", "--separate-git-dir="+filepath.Join(t.TempDir(), "sep.git"), src, dir)
			return dir
		}, all(unsup), nil},
		{"main worktree with a linked one", func(t *testing.T) string {
			dir := cloneKind(t, src)
			gitCLI(t, dir, "worktree", "add", "-q", "-b", "side", filepath.Join(t.TempDir(), "linked"))
			return dir
		}, all(ok), nil},
		{"linked worktree", func(t *testing.T) string {
			dir := cloneKind(t, src)
			linked := filepath.Join(t.TempDir(), "linked")
			gitCLI(t, dir, "worktree", "add", "-q", "-b", "side", linked)
			return linked
		}, all(unsup), nil},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			dir := k.make(t)
			write(t, filepath.Join(dir, "a.txt"), "changed in the work tree\n")
			res := map[string]any{}
			for _, op := range repoKindOps {
				out, err := runRepoKindOp(t, dir, op)
				code := string(errs.CodeOf(err))
				want := k.want[op]
				allowed := strings.Split(want, "|")
				if !containsString(allowed, code) {
					t.Errorf("%s: %v (%q), want %q", op, err, code, want)
					continue
				}
				if code == string(errs.Internal) || err != nil && !strings.HasPrefix(err.Error(), code+": wd:/") {
					t.Errorf("%s: %q is not a ServerFS answer about the workdir", op, err)
				}
				if err == nil {
					res[op] = out
				}
				if strings.Contains(k.name, "alternates outside") && !strings.Contains(fmt.Sprint(err), "alternates") {
					t.Errorf("%s: %v does not say the objects are in alternates", op, err)
				}
			}
			if k.check != nil && !t.Failed() {
				k.check(t, dir, res)
			}
		})
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// explode turns the packs of dir into loose objects (as git add and git
// commit leave them).
func explode(t *testing.T, dir string) {
	t.Helper()
	packs, _ := filepath.Glob(filepath.Join(dir, ".git/objects/pack/*.pack"))
	for _, p := range packs {
		tmp := filepath.Join(t.TempDir(), "p.pack")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(tmp, b, 0o644)
		os.Remove(p)
		os.Remove(strings.TrimSuffix(p, ".pack") + ".idx")
		cmd := exec.Command("git", "unpack-objects", "-q")
		cmd.Dir = dir
		f, _ := os.Open(tmp)
		cmd.Stdin = f
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("unpack-objects: %v\n%s", err, out)
		}
		f.Close()
	}
}

// damagePacked changes the last byte (its Adler-32) of the packed entry
// of rev in dir: its data inflates, but not to what was stored.
func damagePacked(t *testing.T, dir, rev string) {
	t.Helper()
	id := strings.TrimSpace(gitCLI(t, dir, "rev-parse", rev))
	packs, _ := filepath.Glob(filepath.Join(dir, ".git/objects/pack/*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs: %v", packs)
	}
	for _, l := range strings.Split(gitCLI(t, dir, "verify-pack", "-v", packs[0]), "\n") {
		f := strings.Fields(l)
		if len(f) < 5 || f[0] != id {
			continue
		}
		inPack, _ := strconv.ParseInt(f[3], 10, 64)
		off, _ := strconv.ParseInt(f[4], 10, 64)
		os.Chmod(packs[0], 0o644)
		pf, err := os.OpenFile(packs[0], os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer pf.Close()
		b := []byte{0}
		pf.ReadAt(b, off+inPack-1)
		b[0] ^= 0x55
		pf.WriteAt(b, off+inPack-1)
		return
	}
	t.Fatalf("%s is not in %s", rev, packs[0])
}
