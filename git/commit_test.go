package git

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	sfs "github.com/serverfs/serverfs/fs"
)

// openRW opens the repository in dir as the read-write, repo-ops
// workdir "wd".
func openRW(t *testing.T, dir string) (*Repo, *sfs.FS) {
	t.Helper()
	f := newWorkdirFS(t, "wd="+dir+":rw:repo")
	r, err := Open(f, "wd")
	if err != nil {
		t.Fatal(err)
	}
	return r, f
}

func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C", "TZ=UTC"}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestCommitMatchesGit: for random repository states, our commit of random
// paths gives the same tree as `git add -- paths && git commit` on an exact
// copy; then git fsck is clean, the reflog has the entry, and git status
// of both copies agrees. Refusals must match git refusing (nothing to
// commit) or be ours by design (ignored paths, which git add refuses too).
func TestCommitMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required (CI installs it)")
	}
	seed := time.Now().UnixNano()
	if s := os.Getenv("SERVERFS_COMMIT_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (replay with SERVERFS_COMMIT_SEED)", seed)
	rng := rand.New(rand.NewSource(seed))
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Serv Er\n\temail = serverfs@example.invalid\n[init]\n\tdefaultBranch = main\n"), 0o644)

	names := []string{"a.txt", "b.md", "c", "d e.txt", "ünï.txt", "-x", "x.log", "z.sh"}
	dirs := []string{"", "", "src", "src/deep", "docs", "build"}
	commits, refusals, designed := 0, 0, 0
	for repo := 0; commits < 500 && repo < 400; repo++ {
		a := filepath.Join(t.TempDir(), "a")
		os.MkdirAll(a, 0o755)
		mustGit := func(dir string, args ...string) string {
			out, err := gitOut(dir, args...)
			if err != nil {
				t.Fatalf("seed %d repo %d: git %v: %v\n%s", seed, repo, args, err, out)
			}
			return out
		}
		mustGit(a, "init", "-q")
		rel := func() string {
			d := dirs[rng.Intn(len(dirs))]
			n := names[rng.Intn(len(names))]
			if d == "" {
				return n
			}
			return d + "/" + n
		}
		writeRand := func(p string) {
			full := filepath.Join(a, p)
			if fi, err := os.Lstat(filepath.Dir(full)); err == nil && !fi.IsDir() {
				return
			}
			os.MkdirAll(filepath.Dir(full), 0o755)
			if fi, err := os.Lstat(full); err == nil && fi.IsDir() {
				return
			}
			os.Remove(full)
			switch rng.Intn(8) {
			case 0:
				os.Symlink(names[rng.Intn(len(names))], full)
			case 1:
				os.WriteFile(full, []byte(fmt.Sprintf("line\r\ncrlf %d\r\n", rng.Intn(5))), 0o644)
			default:
				os.WriteFile(full, []byte(strings.Repeat(fmt.Sprintf("content %d\n", rng.Intn(4)), 1+rng.Intn(3))), os.FileMode(0o644|rng.Intn(2)*0o111))
			}
		}
		os.WriteFile(filepath.Join(a, ".gitignore"), []byte("*.log\nbuild/\n"), 0o644)
		for range 2 + rng.Intn(6) {
			writeRand(rel())
		}
		if rng.Intn(4) > 0 {
			mustGit(a, "add", "-A")
			mustGit(a, "commit", "-q", "-m", "base")
		}
		r, _ := openRW(t, a)
		for round := 0; round < 5 && commits < 500; round++ {
			for range 1 + rng.Intn(4) {
				p := rel()
				if rng.Intn(4) == 0 {
					os.Remove(filepath.Join(a, p))
				} else {
					writeRand(p)
				}
			}
			// Candidate paths: changed, deleted or untracked (not ignored).
			st, err := r.Status(context.Background(), 10000)
			if err != nil {
				t.Fatalf("seed %d repo %d: status: %v", seed, repo, err)
			}
			var cands []string
			for _, e := range st.Entries {
				if !strings.HasSuffix(e.Path, "/") {
					cands = append(cands, e.Path)
				}
			}
			if len(cands) == 0 {
				continue
			}
			rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
			paths := cands[:1+rng.Intn(len(cands))]
			if rng.Intn(5) == 0 {
				paths = append(paths, rel()) // maybe unchanged, ignored or absent
			}
			optionLike := false
			for _, p := range paths {
				optionLike = optionLike || strings.HasPrefix(p, "-")
			}
			if optionLike {
				// Refused by design (git would take "-x" after "--").
				if _, err := r.Commit(context.Background(), paths, "m"); sfs.CodeOf(err) != sfs.CodeInvalidArgument {
					t.Fatalf("seed %d repo %d: option-like path %q: %v", seed, repo, paths, err)
				}
				designed++
				continue
			}
			b := filepath.Join(t.TempDir(), "b")
			if out, err := exec.Command("cp", "-a", a, b).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v %s", err, out)
			}
			msg := fmt.Sprintf("commit %d.%d\n\nbody line  \n", repo, round)
			res, ourErr := r.Commit(context.Background(), paths, msg)
			addOut, addErr := gitOut(b, append([]string{"add", "--"}, paths...)...)
			var gitErr error
			if addErr == nil {
				_, gitErr = gitOut(b, "commit", "-q", "--no-verify", "-m", msg)
			}
			desc := fmt.Sprintf("seed %d repo %d round %d paths %q", seed, repo, round, paths)
			switch {
			case ourErr != nil && (addErr != nil || gitErr != nil):
				refusals++
				continue
			case ourErr != nil:
				t.Fatalf("%s: we refused (%v) where git committed", desc, ourErr)
			case addErr != nil:
				t.Fatalf("%s: we committed %s where git add refused:\n%s", desc, res.Commit, addOut)
			case gitErr != nil:
				t.Fatalf("%s: we committed %s where git commit refused", desc, res.Commit)
			}
			commits++
			ours := strings.TrimSpace(mustGit(a, "rev-parse", "HEAD^{tree}"))
			theirs := strings.TrimSpace(mustGit(b, "rev-parse", "HEAD^{tree}"))
			if ours != theirs {
				t.Fatalf("%s: tree %s, git made %s\nours:\n%s\ngit:\n%s", desc, ours, theirs, mustGit(a, "ls-tree", "-r", "HEAD"), mustGit(b, "ls-tree", "-r", "HEAD"))
			}
			// The cache tree we wrote must be right: git write-tree reuses
			// it, so a wrong one would make git's next commit wrong.
			if wt := strings.TrimSpace(mustGit(a, "write-tree")); wt != ours {
				t.Fatalf("%s: git write-tree %s from our index, HEAD's tree %s", desc, wt, ours)
			}
			if head := strings.TrimSpace(mustGit(a, "rev-parse", "HEAD")); head != res.Commit {
				t.Fatalf("%s: HEAD %s, commit said %s", desc, head, res.Commit)
			}
			if out, err := gitOut(a, "fsck", "--strict", "--no-dangling"); err != nil || strings.TrimSpace(out) != "" {
				t.Fatalf("%s: git fsck: %v\n%s", desc, err, out)
			}
			if log := mustGit(a, "reflog", "-1", "--format=%H %gs"); !strings.HasPrefix(log, res.Commit+" commit") {
				t.Fatalf("%s: reflog %q", desc, log)
			}
			if sa, sb := mustGit(a, "status", "--porcelain=v2", "-uall"), mustGit(b, "status", "--porcelain=v2", "-uall"); sa != sb {
				t.Fatalf("%s: git status after our commit:\n%s\nafter git's:\n%s", desc, sa, sb)
			}
			if msgA := mustGit(a, "log", "-1", "--format=%B"); msgA != mustGit(b, "log", "-1", "--format=%B") {
				t.Fatalf("%s: message %q", desc, msgA)
			}
			sort.Strings(paths)
		}
	}
	if commits < 500 {
		t.Fatalf("only %d commits compared", commits)
	}
	t.Logf("%d commits identical to git's, %d states both refused, %d option-like paths refused by design", commits, refusals, designed)
}
