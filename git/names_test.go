package git

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"golang.org/x/sys/unix"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git/internal/gittest"
	"github.com/serverfs/serverfs/internal/errs"
)

// nameGen draws the names git's checks are about: .git and the dotfiles
// git looks at, in the spellings NTFS and HFS+ read as them (case,
// trailing dots and spaces, short names, streams, ignorable code points),
// joined by backslashes, beside ordinary odd names git takes (backslash,
// tab, quote, unicode).
type nameGen struct{ rng *rand.Rand }

var (
	nameBases = []string{".git", ".git", "git~1", ".gitmodules", ".gitignore", ".gitattributes", ".mailmap",
		"GITMOD~1", "gi7eba~2", "GITIGN~1", "notes", "todo.txt", "a", "日本", "tab\tx", `q"uote`, "sp ace", ".dot", "git", "x.git"}
	nameTails = []string{"", "", "", ".", " ", ". .", ":", "::$INDEX_ALLOCATION", ":x", "\u200c", "\ufeff", "x", "~1"}
)

func (g nameGen) component() string {
	b := []byte(nameBases[g.rng.Intn(len(nameBases))])
	if g.rng.Intn(3) == 0 { // another case
		for i, c := range b {
			if 'a' <= c && c <= 'z' && g.rng.Intn(2) == 0 {
				b[i] = c - 'a' + 'A'
			}
		}
	}
	s := string(b) + nameTails[g.rng.Intn(len(nameTails))]
	if g.rng.Intn(6) == 0 && len(s) > 1 { // a code point HFS+ ignores, inside
		i := 1 + g.rng.Intn(len(s)-1)
		if s[i]&0xc0 != 0x80 {
			s = s[:i] + "\u200d" + s[i:]
		}
	}
	return s
}

// path is one to three components, some joined by a backslash.
func (g nameGen) path() string {
	var comps []string
	for range 1 + g.rng.Intn(3) {
		c := g.component()
		if g.rng.Intn(3) == 0 {
			c += `\` + g.component()
		}
		comps = append(comps, c)
	}
	return strings.Join(comps, "/")
}

// TestNamesCommitAndCheckoutMatchGit: generated names, each committed by
// us and by git on a copy, each checked out by us and by git from a tree
// made with git's plumbing. A commit we make is git's (same tree), passes
// git fsck --strict, and checks out through our Checkout exactly as git
// clone checks it out; a commit we refuse with GIT_PATH_REJECTED is one
// git refuses, or one git makes that git fsck --strict flags or that git
// with core.protectHFS could not check out. Our checkout of a tree holding
// the name succeeds exactly when git read-tree on Linux takes it, and then
// writes what git checkout-index writes.
//
// SERVERFS_NAMES_SEED=n replays a run.
func TestNamesCommitAndCheckoutMatchGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required (CI installs it)")
	}
	const repos, perRepo = 6, 8
	seed := time.Now().UnixNano()
	if s := os.Getenv("SERVERFS_NAMES_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (replay with SERVERFS_NAMES_SEED=%d)", seed, seed)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Serv Er\n\temail = serverfs@example.invalid\n[init]\n\tdefaultBranch = main\n"), 0o644)
	ctx := context.Background()
	kinds := map[string]int{}
	for repo := range repos {
		g := nameGen{rand.New(rand.NewSource(seed + int64(repo)))}
		a := filepath.Join(t.TempDir(), "a")
		os.MkdirAll(a, 0o755)
		if out, err := gitOut(a, "init", "-q"); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		write(t, filepath.Join(a, "base.txt"), "base\n")
		gitOut(a, "add", "base.txt")
		gitOut(a, "commit", "-qm", "base")
		// Trees made with git's plumbing go to a repository of their own
		// (git fsck of a would see them).
		pl := filepath.Join(t.TempDir(), "pl")
		if out, err := gitOut(filepath.Dir(pl), "init", "-q", pl); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		f := newWorkdirFSEnv(t, []string{"SERVERFS_ALLOW_HIDDEN=true"}, "wd="+a+":rw:repo", "pl="+pl+":rw:repo")
		plumbing, err := Open(f, "pl")
		if err != nil {
			t.Fatal(err)
		}
		for n := range perRepo {
			p := g.path()
			mode := filemode.Regular
			if g.rng.Intn(3) == 0 {
				mode = filemode.Symlink
			}
			desc := fmt.Sprintf("seed %d repo %d name %d: %q (mode %o) (replay: SERVERFS_NAMES_SEED=%d)", seed, repo, n, p, uint32(mode), seed)
			if sfs.InGitDir(p) {
				// Never written (it would be the repository's own .git);
				// git refuses .git in any case, and so do we.
				if _, err := r0(t, f).Commit(ctx, []string{p}, "name"); errs.CodeOf(err) != errs.DeniedPath {
					t.Fatalf("%s: %v", desc, err)
				}
				kinds["refused: inside .git"]++
				checkoutAgrees(t, desc, plumbing, pl, p, mode)
				continue
			}
			full := filepath.Join(a, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				kinds["not writable here (a file on the way)"]++
				continue
			}
			os.RemoveAll(full)
			if mode == filemode.Symlink {
				os.Symlink("target", full)
			} else {
				// (A comment: valid as .gitmodules and .gitattributes,
				// whose content git fsck also checks.)
				os.WriteFile(full, []byte(fmt.Sprintf("# %d\n", n)), 0o644)
			}
			b := filepath.Join(t.TempDir(), "b")
			if out, err := exec.Command("cp", "-a", a, b).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v %s", err, out)
			}
			r, err := Open(f, "wd")
			if err != nil {
				t.Fatal(err)
			}
			_, ourErr := r.Commit(ctx, []string{p}, "name")
			_, addErr := gitOut(b, "add", "--", p)
			gitCommitted := false
			if addErr == nil {
				_, err := gitOut(b, "commit", "-qm", "name")
				gitCommitted = err == nil
			}
			gitFlags := func() string {
				if !gitCommitted {
					return "git refused it"
				}
				if out, err := gitOut(b, "fsck", "--strict", "--no-dangling", "--no-progress"); err != nil || strings.TrimSpace(out) != "" {
					return "git fsck --strict: " + strings.TrimSpace(out)
				}
				if out, err := gitOut(b, "-c", "core.protectHFS=true", "read-tree", "--index-output=.git/idx2", "HEAD"); err != nil {
					return "git with core.protectHFS: " + strings.TrimSpace(out)
				}
				return ""
			}
			switch code := errs.CodeOf(ourErr); {
			case ourErr == nil:
				if !gitCommitted {
					t.Fatalf("%s: we committed what git refused", desc)
				}
				ours, _ := gitOut(a, "rev-parse", "HEAD^{tree}")
				theirs, _ := gitOut(b, "rev-parse", "HEAD^{tree}")
				if ours != theirs {
					t.Fatalf("%s: tree %s, git made %s", desc, ours, theirs)
				}
				if why := gitFlags(); why != "" {
					t.Fatalf("%s: we committed it: %s", desc, why)
				}
				kinds["committed"]++
			case code == errs.GitPathRejected:
				why := gitFlags()
				if why == "" {
					t.Fatalf("%s: we refused (%v) what git commits, fsck passes and git checks out", desc, ourErr)
				}
				if !strings.Contains(ourErr.Error(), "(") || strings.Contains(ourErr.Error(), a) {
					t.Fatalf("%s: refusal %q names no rule, or a host path", desc, ourErr)
				}
				kinds["refused, "+strings.SplitN(why, ":", 2)[0]]++
				os.RemoveAll(full)
			case code == errs.InvalidPath:
				// The path policy's, by design: what Windows reads as an
				// absolute path (a leading backslash, a drive letter).
				kinds["refused by the path policy"]++
				os.RemoveAll(full)
			default:
				t.Fatalf("%s: %v", desc, ourErr)
			}
			// The same name in a tree made by git's plumbing, whatever
			// its checks: our checkout and git's agree.
			checkoutAgrees(t, desc, plumbing, pl, p, mode)
		}
		// What we committed, a clone of git checks out as we do.
		clone := filepath.Join(t.TempDir(), "clone")
		if out, err := gitOut(filepath.Dir(clone), "clone", "-q", a, clone); err != nil {
			t.Fatalf("seed %d repo %d: git clone: %v\n%s", seed, repo, err, out)
		}
		r, _ := Open(f, "wd")
		ours := checkoutDir(t, r, "HEAD")
		if want, got := listTree(t, clone), listTree(t, ours); want != got {
			t.Fatalf("seed %d repo %d: our checkout of HEAD:\n%s\ngit clone:\n%s", seed, repo, got, want)
		}
	}
	t.Logf("names: %v", kinds)
}

// r0 opens the workdir wd's repository.
func r0(t *testing.T, f *sfs.FS) *Repo {
	t.Helper()
	r, err := Open(f, "wd")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkoutAgrees makes a commit holding p (mode mode) with git's plumbing
// and checks it out with our Checkout and with git (read-tree, then
// checkout-index): both refuse it, or both write the same files.
func checkoutAgrees(t *testing.T, desc string, r *Repo, repo, p string, mode filemode.FileMode) {
	t.Helper()
	o := &gitNameOracle{gittest.Oracle{T: t, Dir: filepath.Join(repo, ".git")}}
	trees := o.Tree(p, mode, "# plumbing\n")
	commit := o.Must("", "commit-tree", trees[0], "-m", "plumbing")
	idx := filepath.Join(t.TempDir(), "index")
	_, gitOK := o.Run("", []string{"GIT_INDEX_FILE=" + idx}, "read-tree", trees[0])
	dir := filepath.Join(t.TempDir(), "co")
	os.Mkdir(dir, 0o755)
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, ourErr := r.Checkout(context.Background(), commit, fd, CheckoutLimits{})
	unix.Close(fd)
	switch {
	case gitOK && ourErr != nil:
		t.Fatalf("%s: git checks out a tree with it, we refuse: %v", desc, ourErr)
	case !gitOK && ourErr == nil:
		t.Fatalf("%s: git refuses to check out a tree with it, we wrote it", desc)
	case !gitOK:
		if errs.CodeOf(ourErr) != errs.RepoUnsupported || !strings.Contains(ourErr.Error(), "refuses to check out") {
			t.Fatalf("%s: checkout refusal %v", desc, ourErr)
		}
		return
	}
	gitDir := filepath.Join(t.TempDir(), "git")
	os.Mkdir(gitDir, 0o755)
	if out, ok := o.Run("", []string{"GIT_INDEX_FILE=" + idx}, "--work-tree="+gitDir, "checkout-index", "-a"); !ok {
		t.Fatalf("%s: git checkout-index: %s", desc, out)
	}
	if want, got := listTree(t, gitDir), listTree(t, dir); want != got {
		t.Fatalf("%s: our checkout:\n%s\ngit's:\n%s", desc, got, want)
	}
}

// checkoutDir is our Checkout of rev into a new directory.
func checkoutDir(t *testing.T, r *Repo, rev string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "co")
	os.Mkdir(dir, 0o755)
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if _, err := r.Checkout(context.Background(), rev, fd, CheckoutLimits{}); err != nil {
		t.Fatalf("checkout of %s: %v", rev, err)
	}
	return dir
}

// listTree lists the files and symlinks beneath root (not .git): path,
// kind and content or target, one a line, sorted.
func listTree(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case rel == ".git":
			return filepath.SkipDir
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			lines = append(lines, fmt.Sprintf("%q symlink %q", rel, target))
		default:
			b, _ := os.ReadFile(p)
			info, _ := d.Info()
			lines = append(lines, fmt.Sprintf("%q %o %q", rel, info.Mode().Perm()&0o100, b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// gitNameOracle is the system git over a repository's objects, as package
// pathrule's tests ask it (their oracle; checkoutAgrees needs only these).
type gitNameOracle struct{ gittest.Oracle }
