package git

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// openRW opens the repository in dir as the read-write, repo-ops
// workdir "wd". When the test ends, the repository must pass git fsck
// --strict: every commit a test makes through it is checked.
func openRW(t *testing.T, dir string) (*Repo, *sfs.FS) {
	t.Helper()
	f := newWorkdirFS(t, "wd="+dir+":rw:repo")
	r, err := Open(f, "wd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// From HEAD (its history, every object stored): a test may put
		// made-up ids in the index on purpose.
		if _, err := gitOut(dir, "rev-parse", "-q", "--verify", "HEAD"); err != nil {
			return
		}
		if out, err := gitOut(dir, "fsck", "--strict", "--no-dangling", "--no-progress", "HEAD"); err != nil || strings.TrimSpace(out) != "" {
			t.Errorf("git fsck --strict of %s at the end of the test: %v\n%s", filepath.Base(dir), err, out)
		}
	})
	return r, f
}

func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C", "TZ=UTC"}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// commitStates is how many states TestCommitMatchesGit compares, times
// SERVERFS_GIT_SCALE (commits
// made by both, refused by both, or refused by design).
const commitStates = 160

// TestCommitMatchesGit: for random repository states, our commit of random
// paths gives the same tree as `git add -- paths && git commit` on an exact
// copy; then git fsck --strict is clean, the reflog has the entry, and git
// status of both copies agrees. The states hold what real work trees hold:
// odd names (backslash, tab, quotes, '#', unicode, option look-alikes,
// .git spellings),
// git rm --cached, files replaced by directories and back, submodules
// added and moved (staged or not), staged hidden and denied files.
// Refusals must match git refusing, or be ours by design (then they change
// nothing and name no hidden path): changes staged on paths not named, a
// directory git would add whole, a path inside a submodule, option-like
// names, names git commits but git fsck --strict flags.
//
// SERVERFS_COMMIT_SEED=n replays a run, SERVERFS_COMMIT_REPO=i only its
// repository i.
func TestCommitMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required (CI installs it)")
	}
	seed := time.Now().UnixNano()
	if s := os.Getenv("SERVERFS_COMMIT_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	only := -1
	if s := os.Getenv("SERVERFS_COMMIT_REPO"); s != "" {
		only, _ = strconv.Atoi(s)
	}
	t.Logf("seed %d (replay with SERVERFS_COMMIT_SEED=%d, one repository with SERVERFS_COMMIT_REPO=i)", seed, seed)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Serv Er\n\temail = serverfs@example.invalid\n[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n"), 0o644)
	mustGit := func(desc, dir string, args ...string) string {
		t.Helper()
		out, err := gitOut(dir, args...)
		if err != nil {
			t.Fatalf("%s: git %q: %v\n%s", desc, args, err, out)
		}
		return out
	}
	// The repository submodules are cloned from: three commits.
	subsrc := filepath.Join(t.TempDir(), "subsrc")
	os.MkdirAll(subsrc, 0o755)
	mustGit("subsrc", subsrc, "init", "-q")
	for i := range 3 {
		os.WriteFile(filepath.Join(subsrc, "s.txt"), []byte(fmt.Sprintf("s %d\n", i)), 0o644)
		mustGit("subsrc", subsrc, "add", "s.txt")
		mustGit("subsrc", subsrc, "commit", "-qm", fmt.Sprintf("s%d", i))
	}

	names := []string{"a.txt", "b.md", "c", "d e.txt", "ünï.txt", "-x", "x.log", "z.sh", `back\slash.txt`, "tab\there",
		`q"uote`, "#hash", "日本.md", ".env", "id_rsa", "k.key", ".dot", `n\.git\x`, `\.git`, "GIT~1", "\u200c.git"}
	dirs := []string{"", "", "src", "src/deep", "docs", "build", `w\in`, "ünï", ".cache", `d\.GIT.`}
	subs := []string{"mod", "src/lib"}
	want := scaled(t, commitStates)
	states, commits, refusals, designed := 0, 0, 0, 0
	kinds := map[string]int{}
	for repo := 0; states < want && repo < 400*gitScale(); repo++ {
		if only >= 0 && repo != only {
			continue
		}
		rng := rand.New(rand.NewSource(seed + int64(repo+1)*1000003))
		a := filepath.Join(t.TempDir(), "a")
		os.MkdirAll(a, 0o755)
		var ops []string
		desc := func(round int) string {
			return fmt.Sprintf("seed %d repo %d round %d (replay: SERVERFS_COMMIT_SEED=%d SERVERFS_COMMIT_REPO=%d)\noperations:\n  %s\n",
				seed, repo, round, seed, repo, strings.Join(ops, "\n  "))
		}
		git := func(args ...string) bool {
			_, err := gitOut(a, args...)
			ops = append(ops, fmt.Sprintf("git %q (ok %v)", args, err == nil))
			return err == nil
		}
		mustGit("init", a, "init", "-q")
		// The .git spellings (the last ones of the pools) are drawn now
		// and then, never for the base commit, which git makes: it takes
		// some of them, and its fsck flags them.
		atBase := true
		rel := func() string {
			nd, nn := len(dirs)-1, len(names)-4
			if !atBase && rng.Intn(8) == 0 {
				nd, nn = len(dirs), len(names)
			}
			d := dirs[rng.Intn(nd)]
			n := names[rng.Intn(nn)]
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
			ops = append(ops, fmt.Sprintf("write %q", p))
		}
		tracked := func() []string {
			var ps []string
			for _, p := range strings.Split(mustGit("ls-files", a, "ls-files", "-z"), "\x00") {
				if p != "" {
					ps = append(ps, p)
				}
			}
			return ps
		}
		os.WriteFile(filepath.Join(a, ".gitignore"), []byte("*.log\nbuild/\n"), 0o644)
		for range 2 + rng.Intn(6) {
			writeRand(rel())
		}
		if rng.Intn(4) > 0 {
			mustGit("base", a, "add", "-A")
			mustGit("base", a, "commit", "-q", "-m", "base")
		}
		atBase = false
		r, _ := openRW(t, a)
		for round := 0; round < 5 && states < want; round++ {
			for range 1 + rng.Intn(4) {
				switch k := rng.Intn(20); {
				case k < 9:
					writeRand(rel())
				case k < 11:
					p := rel()
					os.Remove(filepath.Join(a, p))
					ops = append(ops, fmt.Sprintf("rm %q", p))
				case k == 11: // a staged deletion, the file left in the work tree
					if ps := tracked(); len(ps) > 0 {
						git("rm", "-q", "--cached", "--", ps[rng.Intn(len(ps))])
						kinds["git rm --cached"]++
					}
				case k == 12: // a tracked file becomes a directory
					if ps := tracked(); len(ps) > 0 {
						p := ps[rng.Intn(len(ps))]
						if fi, err := os.Lstat(filepath.Join(a, p)); err == nil && !fi.IsDir() && p != ".gitmodules" {
							os.Remove(filepath.Join(a, p))
							os.MkdirAll(filepath.Join(a, p), 0o755)
							os.WriteFile(filepath.Join(a, p, "inside.txt"), []byte("inside\n"), 0o644)
							ops = append(ops, fmt.Sprintf("file %q -> directory", p))
							kinds["file->dir"]++
						}
					}
				case k == 13: // a directory holding tracked files becomes a file
					if ps := tracked(); len(ps) > 0 {
						if d := filepath.Dir(ps[rng.Intn(len(ps))]); d != "." {
							os.RemoveAll(filepath.Join(a, d))
							os.WriteFile(filepath.Join(a, d), []byte("was a directory\n"), 0o644)
							ops = append(ops, fmt.Sprintf("directory %q -> file", d))
							kinds["dir->file"]++
						}
					}
				case k == 14 && rng.Intn(2) == 0: // a hidden or denied file staged
					p := rel()
					if b := filepath.Base(p); b != ".env" && b != "id_rsa" && b != "k.key" {
						p = filepath.Join(filepath.Dir(p), ".env")
					}
					writeRand(p)
					git("add", "-f", "--", p)
					kinds["staged hidden/denied"]++
				case k < 17: // a submodule added, or moved to another commit (staged or not)
					s := subs[rng.Intn(len(subs))]
					full := filepath.Join(a, s)
					if _, err := os.Lstat(filepath.Join(full, ".git")); err != nil {
						if fi, err := os.Lstat(filepath.Dir(full)); err == nil && !fi.IsDir() {
							continue
						}
						os.RemoveAll(full)
						if rng.Intn(2) == 0 {
							git("submodule", "add", "-q", "-f", "--", subsrc, s)
						} else if _, err := gitOut(filepath.Dir(subsrc), "clone", "-q", subsrc, full); err == nil {
							ops = append(ops, fmt.Sprintf("clone into %q", s))
							if rng.Intn(2) == 0 {
								git("add", "--", s)
							}
						}
						kinds["submodule added"]++
						continue
					}
					_, err := gitOut(full, "checkout", "-q", "--detach", []string{"HEAD~1", "HEAD~2", "main", "master"}[rng.Intn(4)])
					ops = append(ops, fmt.Sprintf("checkout in %q (ok %v)", s, err == nil))
					if rng.Intn(2) == 0 {
						git("add", "--", s)
					}
					kinds["submodule moved"]++
				default:
					if rng.Intn(2) == 0 {
						git("add", "--", rel())
					}
				}
			}
			// Candidate paths: changed, deleted or untracked (not ignored).
			st, err := r.Status(context.Background(), 10000)
			if err != nil {
				t.Fatalf("%s: status: %v", desc(round), err)
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
			if rng.Intn(5) < 2 {
				paths = cands // everything changed (staged changes included)
			}
			if rng.Intn(5) == 0 {
				paths = append(paths, rel()) // maybe unchanged, ignored or absent
			}
			optionLike := false
			for _, p := range paths {
				optionLike = optionLike || strings.HasPrefix(p, "-")
			}
			states++
			if optionLike {
				// Refused by design (git would take "-x" after "--").
				if _, err := r.Commit(context.Background(), paths, "m"); errs.CodeOf(err) != errs.InvalidArgument && commitDesigned(a, err, paths, "") == "" {
					t.Fatalf("%s: option-like path %q: %v", desc(round), paths, err)
				}
				designed++
				continue
			}
			b := filepath.Join(t.TempDir(), "b")
			if out, err := exec.Command("cp", "-a", a, b).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v %s", err, out)
			}
			headBefore, _ := gitOut(a, "rev-parse", "-q", "--verify", "HEAD")
			indexBefore, _ := os.ReadFile(filepath.Join(a, ".git", "index"))
			stagedBefore := mustGit("staged", a, "diff", "--cached", "--name-only", "--no-renames", "-z")
			msg := fmt.Sprintf("commit %d.%d\n\nbody line  \n", repo, round)
			res, ourErr := r.Commit(context.Background(), paths, msg)
			addOut, addErr := gitOut(b, append([]string{"add", "--"}, paths...)...)
			var gitErr error
			if addErr == nil {
				_, gitErr = gitOut(b, "commit", "-q", "--no-verify", "-m", msg)
			}
			d := desc(round) + fmt.Sprintf("paths %q", paths)
			if ourErr != nil {
				// Whatever we refuse changes nothing and names no
				// hidden or denied path.
				if h, _ := gitOut(a, "rev-parse", "-q", "--verify", "HEAD"); h != headBefore {
					t.Fatalf("%s: our refusal (%v) moved HEAD", d, ourErr)
				}
				if idx, _ := os.ReadFile(filepath.Join(a, ".git", "index")); string(idx) != string(indexBefore) {
					t.Fatalf("%s: our refusal (%v) changed the index", d, ourErr)
				}
				for _, bad := range []string{".env", "id_rsa", "k.key", ".cache", ".dot"} {
					if strings.Contains(ourErr.Error(), bad) && !slices.ContainsFunc(paths, func(p string) bool { return strings.Contains(p, bad) }) {
						t.Fatalf("%s: our refusal names a hidden or denied path: %v", d, ourErr)
					}
				}
			}
			switch {
			case ourErr != nil && (addErr != nil || gitErr != nil):
				refusals++
				continue
			case errs.CodeOf(ourErr) == errs.GitPathRejected:
				// git made the commit: git fsck --strict must flag it,
				// or git with core.protectHFS refuse to check it out.
				out, err := gitOut(b, "fsck", "--strict", "--no-dangling", "--no-progress")
				if _, herr := gitOut(b, "-c", "core.protectHFS=true", "read-tree", "--index-output=.git/idx2", "HEAD"); err == nil && strings.TrimSpace(out) == "" && herr == nil {
					t.Fatalf("%s: we refused (%v) what git commits, fsck passes and git checks out", d, ourErr)
				}
				designed++
				kinds["refused by design: a name git fsck flags"]++
				continue
			case ourErr != nil:
				if why := commitDesigned(a, ourErr, paths, stagedBefore); why != "" {
					designed++
					kinds["refused by design: "+why]++
					if errs.CodeOf(ourErr) == errs.RepoStagedChanges && rng.Intn(2) == 0 {
						git("reset", "-q") // or the next rounds would all be refused
					}
					continue
				}
				t.Fatalf("%s: we refused (%v) where git committed", d, ourErr)
			case addErr != nil:
				t.Fatalf("%s: we committed %s where git add refused:\n%s", d, res.Commit, addOut)
			case gitErr != nil:
				t.Fatalf("%s: we committed %s where git commit refused", d, res.Commit)
			}
			commits++
			ours := strings.TrimSpace(mustGit(d, a, "rev-parse", "HEAD^{tree}"))
			theirs := strings.TrimSpace(mustGit(d, b, "rev-parse", "HEAD^{tree}"))
			if ours != theirs {
				t.Fatalf("%s: tree %s, git made %s\nours:\n%s\ngit:\n%s", d, ours, theirs, mustGit(d, a, "ls-tree", "-r", "-t", "HEAD"), mustGit(d, b, "ls-tree", "-r", "-t", "HEAD"))
			}
			// The cache tree we wrote must be right: git write-tree reuses
			// it, so a wrong one would make git's next commit wrong.
			if wt := strings.TrimSpace(mustGit(d, a, "write-tree")); wt != ours {
				t.Fatalf("%s: git write-tree %s from our index, HEAD's tree %s", d, wt, ours)
			}
			if head := strings.TrimSpace(mustGit(d, a, "rev-parse", "HEAD")); head != res.Commit {
				t.Fatalf("%s: HEAD %s, commit said %s", d, head, res.Commit)
			}
			if out, err := gitOut(a, "fsck", "--strict", "--no-dangling"); err != nil || strings.TrimSpace(out) != "" {
				t.Fatalf("%s: git fsck --strict: %v\n%s", d, err, out)
			}
			if log := mustGit(d, a, "reflog", "-1", "--format=%H %gs"); !strings.HasPrefix(log, res.Commit+" commit") {
				t.Fatalf("%s: reflog %q", d, log)
			}
			if sa, sb := mustGit(d, a, "status", "--porcelain=v2", "-uall"), mustGit(d, b, "status", "--porcelain=v2", "-uall"); sa != sb {
				t.Fatalf("%s: git status after our commit:\n%s\nafter git's:\n%s", d, sa, sb)
			}
			if msgA := mustGit(d, a, "log", "-1", "--format=%B"); msgA != mustGit(d, b, "log", "-1", "--format=%B") {
				t.Fatalf("%s: message %q", d, msgA)
			}
		}
	}
	if only < 0 && states < want {
		t.Fatalf("only %d states compared", states)
	}
	t.Logf("%d states: %d commits identical to git's, %d refused by both, %d refused by design; generated %v", states, commits, refusals, designed, kinds)
}

// commitDesigned says why a refusal where git committed is ServerFS's by
// design ("" when it is not): a path the policy hides named; changes staged before on paths the commit
// neither names nor replaces; a named directory git would add whole (a
// file that became a directory, or an untracked one); a path inside a
// submodule.
func commitDesigned(dir string, err error, paths []string, stagedBefore string) string {
	switch errs.CodeOf(err) {
	case errs.DeniedPath, errs.HiddenPathNotAllowed:
		return "a hidden or denied path named"
	case errs.InvalidPath:
		for _, p := range paths {
			if strings.HasPrefix(p, `\`) {
				return "a leading backslash (an absolute path on Windows)"
			}
		}
	case errs.RepoStagedChanges:
		for _, s := range strings.Split(stagedBefore, "\x00") {
			if s == "" {
				continue
			}
			covered := false
			for _, p := range paths {
				covered = covered || s == p || strings.HasPrefix(s, p+"/") || strings.HasPrefix(p, s+"/")
			}
			if !covered {
				return "staged changes not named"
			}
		}
	case errs.InvalidArgument:
		msg := err.Error()
		for _, p := range paths {
			fi, lerr := os.Lstat(filepath.Join(dir, p))
			switch {
			case lerr == nil && fi.IsDir() && strings.Contains(msg, "directory"):
				return "a directory named"
			case strings.Contains(msg, "whose files belong to its own repository"):
				return "a path inside a submodule"
			case strings.Contains(msg, "directory in the index, deleted"):
				return "a deleted directory named"
			case strings.Contains(msg, "is ignored") && strings.ContainsAny(p, `\*?[`):
				// git add reads such a name as a pattern and skips an
				// ignored match silently (exit 0, nothing added); we
				// take paths literally and say so.
				return "an ignored path git reads as a pattern"
			}
		}
	}
	return ""
}
