package git

// Differential test of Status against the git CLI: randomized repository
// states, each compared with `git status --porcelain=v2` filtered through
// the same path policy.
//
// SERVERFS_GIT_SEED=n replays a run; SERVERFS_GIT_REPO=i replays only repo
// i of it (each repository draws from its own generator seeded from the
// run's seed and i, so one repository replays alone).

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	orcRepos  = 50
	orcRounds = 10
	// orcMaxFailures stops the test after this many repositories
	// disagreed (each one is reported once, at its first mismatch).
	orcMaxFailures = 5
)

// orcDirs and orcNames are the pool paths are drawn from: spaces,
// non-ASCII, option look-alikes, glob characters, hidden and credential
// names (which the policy hides), names the ignore patterns aim at,
// spellings of .git (which git refuses to add, or adds and fsck flags).
var (
	orcDirs = []string{"", "", "", "", "src", "src/deep", "a b", "ünï", "-x", "build", "logs", "tmp", "src/tmp",
		"docs", "x/y/z", "keys", ".hidden", "deep/er/est", "sub", "sub/in", `back\dir`, "#dir", "ünï/日本", "GIT~1", `d\.git`}
	orcNames = []string{"f.txt", "g.txt", "f.txt", "a b.txt", "ünïcode.md", "日本.txt", "-x", "--help", "keep.log",
		"debug.log", "main.o", "README", "Makefile", "rootonly.txt", "id_rsa", "secret.pem", ".env", ".dotfile",
		"tab\there", "q\"uote", "back\\slash", "[br]", "star*", "#hash", " lead", "trail ", "new\nline", "é",
		"x.md", "b1.txt", `n\.git\x`, "\u200c.git", ".GIT", ".git."}
	orcPatterns = []string{"*.log", "!keep.log", "build/", "**/tmp", "/rootonly.txt", "*.o", "docs/*.md",
		"[ab]*.txt", "ünï*", "-x", "a b/", "src/**/deep", "!src/tmp/", "tmp/", "*.txt", "!f.txt", "\\#hash",
		"# comment", "", "README", "trail\\ ", "x/y/", "!x/y/z", "/*.md", "**/*.o", "deep/", "?", "logs",
		"!logs/keep.log", "logs/*", "*", "!*/", "!*.txt", "sub", "src/", " lead", "star\\*", "g.txt/",
		"a b.txt", "deep/**", "*.md ", "f.txt", "!debug.log", "**/in", "/-x", "*/", "!README"}
	orcIgnoreDirs = []string{"", "", "src", "a b", "x/y", "logs", "sub", "docs", "deep/er"}
)

// orcWorld is one randomized repository and everything around it.
type orcWorld struct {
	t        *testing.T
	rng      *rand.Rand
	base     string // temporary directory holding all below
	dir      string // the work tree (and workdir root)
	outside  string // a directory outside the work tree, for symlinks
	remote   string // bare remote ("" without the remote feature)
	other    string // a second clone of the remote, for remote commits
	home     string
	xdg      string
	excludes string // the global excludes file in use ("" for none)
	features []string
	has      map[string]bool
	subsrc   string   // a repository submodules are made from ("" until the first)
	ops      []string // every operation, "round N:" markers between rounds
	n        int      // a counter for unique names and messages
}

func TestStatusMatchesGit(t *testing.T) {
	orcNeedGit(t)
	orcStaleLogged = false
	seed := time.Now().UnixNano()
	if s := os.Getenv("SERVERFS_GIT_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("SERVERFS_GIT_SEED=%q: %v", s, err)
		}
		seed = v
	}
	only := -1
	if s := os.Getenv("SERVERFS_GIT_REPO"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("SERVERFS_GIT_REPO=%q: %v", s, err)
		}
		only = v
	}
	t.Logf("seed %d (replay with SERVERFS_GIT_SEED=%d)", seed, seed)
	start := time.Now()
	compared, failures := 0, 0
	for i := range orcRepos {
		if only >= 0 && i != only {
			continue
		}
		n, ok := orcRunRepo(t, seed, i)
		compared += n
		if !ok {
			failures++
			if failures >= orcMaxFailures {
				t.Logf("stopping after %d disagreeing repositories", failures)
				break
			}
		}
	}
	t.Logf("compared %d repository states with git in %v", compared, time.Since(start).Round(time.Millisecond))
	if only < 0 && failures == 0 && compared < orcRepos*orcRounds {
		t.Errorf("only %d states compared, want %d", compared, orcRepos*orcRounds)
	}
}

// orcRunRepo builds repository i, mutates it round by round and compares
// after each round. It returns the number of states compared and whether
// all agreed.
func orcRunRepo(t *testing.T, seed int64, i int) (int, bool) {
	w := &orcWorld{t: t, rng: rand.New(rand.NewSource(seed + int64(i+1)*1000003)), has: map[string]bool{}}
	orcCommits = 0
	w.setup()
	f := newWorkdirFS(t, "wd="+w.dir+":rw")
	// kept is opened once and asked every round: a Repo kept across
	// changes. Its staleness is logged (once per test), not failed: the
	// comparison that counts uses a Repo opened for the round, as a
	// request would.
	kept, err := Open(f, "wd")
	if err != nil {
		t.Fatalf("repo %d: Open: %v", i, err)
	}
	ctx := context.Background()
	for round := range orcRounds {
		w.ops = append(w.ops, fmt.Sprintf("-- round %d", round))
		for range 1 + w.rng.Intn(6) {
			w.step()
		}
		repo, err := Open(f, "wd")
		var st *Status
		if err == nil {
			st, err = repo.Status(ctx, 100000)
		}
		keptSt, keptErr := kept.Status(ctx, 100000)
		want := gitStatusV2(t, w.dir).filtered(f.Policy())
		if err != nil {
			w.report(i, round, seed, want, nil, err)
			return round, false
		}
		if !orcSame(want, st) {
			w.report(i, round, seed, want, st, nil)
			return round, false
		}
		if (keptErr != nil || !orcSame(want, keptSt)) && !orcStaleLogged {
			orcStaleLogged = true
			t.Logf("note: repo %d round %d: a Repo opened before the changes disagrees with git where a fresh one agrees (err %v):\n%s",
				i, round, keptErr, orcStatusDiff(want, keptSt))
		}
		// The limit: fewer entries than changed, and Truncated.
		if n := len(want.Entries); n >= 2 && w.rng.Intn(5) == 0 {
			limit := 1 + w.rng.Intn(n-1)
			lst, err := repo.Status(ctx, limit)
			if err != nil || !lst.Truncated || len(lst.Entries) != limit || !orcSubset(lst.Entries, want.Entries) {
				t.Errorf("repo %d round %d (seed %d): Status(limit %d) of %d entries: err %v, truncated %v, %d entries %q",
					i, round, seed, limit, n, err, lst != nil && lst.Truncated, orcLen(lst), orcPaths(lst))
				return round + 1, false
			}
		}
	}
	return orcRounds, true
}

func orcLen(st *Status) int {
	if st == nil {
		return 0
	}
	return len(st.Entries)
}

func orcPaths(st *Status) []string {
	if st == nil {
		return nil
	}
	var ps []string
	for _, e := range st.Entries {
		ps = append(ps, e.Path)
	}
	return ps
}

func orcSubset(sub, all []Entry) bool {
	m := map[Entry]bool{}
	for _, e := range all {
		m[e] = true
	}
	for _, e := range sub {
		if !m[e] {
			return false
		}
	}
	return true
}

// orcStaleLogged: the staleness of a kept Repo has been logged.
var orcStaleLogged bool

// orcStatusDiff shows how our status differs from git's.
func orcStatusDiff(want gitOracle, got *Status) string {
	if got == nil {
		return "no status\n"
	}
	var b strings.Builder
	hdr := func(name, g, o string) {
		if g != o {
			fmt.Fprintf(&b, "%s: git %q, ours %q\n", name, g, o)
		}
	}
	hdr("branch", want.Branch, got.Branch)
	hdr("head", want.Head, got.Head)
	hdr("upstream", want.Upstream, got.Upstream)
	hdr("ahead", orcIntPtr(want.Ahead), orcIntPtr(got.Ahead))
	hdr("behind", orcIntPtr(want.Behind), orcIntPtr(got.Behind))
	if got.Truncated {
		b.WriteString("ours is Truncated\n")
	}
	fmt.Fprintf(&b, "entries (git %d, ours %d):\n%s", len(want.Entries), len(got.Entries), orcEntryDiff(want.Entries, got.Entries))
	return b.String()
}

// orcSame reports whether our status is git's.
func orcSame(want gitOracle, got *Status) bool {
	if got.Branch != want.Branch || got.Head != want.Head || got.Upstream != want.Upstream ||
		orcIntPtr(got.Ahead) != orcIntPtr(want.Ahead) || orcIntPtr(got.Behind) != orcIntPtr(want.Behind) || got.Truncated {
		return false
	}
	if len(got.Entries) != len(want.Entries) {
		return false
	}
	for i := range want.Entries {
		if got.Entries[i] != want.Entries[i] {
			return false
		}
	}
	return true
}

// report fails the test with everything needed to understand the state.
func (w *orcWorld) report(i, round int, seed int64, want gitOracle, got *Status, err error) {
	t := w.t
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "repo %d, round %d: Status disagrees with git (replay: SERVERFS_GIT_SEED=%d SERVERFS_GIT_REPO=%d)\n", i, round, seed, i)
	fmt.Fprintf(&b, "features: %s\n", strings.Join(w.features, ", "))
	if err != nil {
		fmt.Fprintf(&b, "Status error: %v\n", err)
	} else {
		b.WriteString(orcStatusDiff(want, got))
	}
	ops := w.ops
	if len(ops) > 80 {
		ops = ops[len(ops)-80:]
	}
	fmt.Fprintf(&b, "operations (last %d):\n  %s\n", len(ops), strings.Join(ops, "\n  "))
	fmt.Fprintf(&b, "git status --porcelain=v2 (unfiltered):\n%s", want.Raw)
	long, _ := orcRun(w.dir, nil, "status", "--untracked-files=all", "--no-renames")
	fmt.Fprintf(&b, "git status:\n%s", long)
	ls, _ := orcRun(w.dir, nil, "ls-files", "--stage", "--debug")
	if len(ls) > 4000 {
		ls = append(ls[:4000], "...\n"...)
	}
	fmt.Fprintf(&b, "git ls-files --stage --debug:\n%s", ls)
	t.Error(b.String())
}

// setup creates the temporary HOME and XDG_CONFIG_HOME, the repository and
// picks the repository's features.
func (w *orcWorld) setup() {
	t := w.t
	w.home, w.xdg = orcSetHome(t)
	w.base = t.TempDir()
	w.dir = filepath.Join(w.base, "wd")
	w.outside = filepath.Join(w.base, "outside")
	if err := os.MkdirAll(filepath.Join(w.outside, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.outside, "file"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	orcGit(t, w.base, "init", "-q", "-b", "main", w.dir)
	feature := func(name string, p float64) bool {
		if w.rng.Float64() < p {
			w.has[name] = true
			w.features = append(w.features, name)
			return true
		}
		return false
	}
	if feature("remote", 0.5) {
		w.remote = filepath.Join(w.base, "remote.git")
		w.other = filepath.Join(w.base, "other")
		orcGit(t, w.base, "init", "-q", "--bare", "-b", "main", w.remote)
		orcGit(t, w.dir, "remote", "add", "origin", w.remote)
	}
	feature("conflicts", 0.2)
	feature("index-flags", 0.15) // skip-worktree, assume-unchanged
	feature("intent-to-add", 0.2)
	feature("index-formats", 0.2) // index v4, untracked cache, gc, pack-refs
	feature("branches", 0.3)
	feature("nested-repo", 0.4)
	feature("submodules", 0.35)
	if feature("filemode-false", 0.1) {
		orcGit(t, w.dir, "config", "core.fileMode", "false")
	}
	// Where the global excludes come from. The ones not in force get a
	// decoy, so reading the wrong file shows.
	decoy := []byte("*.txt\n")
	switch w.rng.Intn(5) {
	case 0:
		w.features = append(w.features, "excludes:none")
	case 1:
		w.features = append(w.features, "excludes:$XDG_CONFIG_HOME/git/ignore")
		w.excludes = filepath.Join(w.xdg, "git", "ignore")
	case 2:
		w.features = append(w.features, "excludes:global core.excludesFile")
		w.excludes = filepath.Join(w.home, "global ignore")
		orcGit(t, w.dir, "config", "--global", "core.excludesFile", w.excludes)
		w.writeHost(filepath.Join(w.xdg, "git", "ignore"), decoy)
	case 3:
		// A repository's own core.excludesFile is read only beneath the
		// root (a host path it names is never opened: config.go).
		w.features = append(w.features, "excludes:repo core.excludesFile .git/excl")
		w.excludes = filepath.Join(w.dir, ".git", "excl")
		orcGit(t, w.dir, "config", "core.excludesFile", ".git/excl")
		w.writeHost(filepath.Join(w.xdg, "git", "ignore"), decoy)
	case 4:
		w.features = append(w.features, "excludes:$XDG_CONFIG_HOME/git/config core.excludesFile")
		w.excludes = filepath.Join(w.home, "xdg-excludes")
		w.writeHost(filepath.Join(w.xdg, "git", "config"), []byte("[core]\n\texcludesFile = "+w.excludes+"\n"))
	}
	if w.excludes != "" {
		w.writeHost(w.excludes, w.ignoreText())
	}
}

func (w *orcWorld) writeHost(name string, data []byte) {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *orcWorld) pick(s []string) string { return s[w.rng.Intn(len(s))] }

func (w *orcWorld) logf(format string, args ...any) {
	w.ops = append(w.ops, fmt.Sprintf(format, args...))
}

func (w *orcWorld) abs(rel string) string { return filepath.Join(w.dir, filepath.FromSlash(rel)) }

// git runs git in the work tree; a failure is logged, not fatal (a random
// operation may well be refused, as `git commit` with nothing to commit).
func (w *orcWorld) git(args ...string) bool {
	return w.gitIn(w.dir, nil, args...)
}

func (w *orcWorld) gitIn(dir string, stdin []byte, args ...string) bool {
	_, err := orcRun(dir, stdin, args...)
	where := ""
	if dir != w.dir {
		where = "(in " + filepath.Base(dir) + ") "
	}
	if err != nil {
		msg := err.Error()
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		w.logf("%sgit %q -> failed: %s", where, args, msg)
		return false
	}
	w.logf("%sgit %q", where, args)
	return true
}

// newPath draws a repository-relative path from the pools.
func (w *orcWorld) newPath() string { return path2(w.pick(orcDirs), w.pick(orcNames)) }

func path2(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// parentsOK makes the parent directories of rel, refusing (false) when
// one exists as something other than a real directory: nothing is ever
// written through a symlink.
func (w *orcWorld) parentsOK(rel string) bool {
	comps := strings.Split(rel, "/")
	cur := w.dir
	for _, c := range comps[:len(comps)-1] {
		if c == ".git" {
			return false
		}
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		switch {
		case os.IsNotExist(err):
			if err := os.Mkdir(cur, 0o755); err != nil {
				w.t.Fatal(err)
			}
		case err != nil:
			w.t.Fatal(err)
		case !fi.IsDir():
			return false
		}
	}
	return comps[len(comps)-1] != ".git"
}

// tree lists the work tree (not descending into any .git): regular
// files, symlinks and directories, slash-separated.
func (w *orcWorld) tree() (files, links, dirs []string) {
	err := filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == w.dir {
			return nil
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(w.dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			dirs = append(dirs, rel)
		case d.Type()&fs.ModeSymlink != 0:
			links = append(links, rel)
		case rel == ".gitmodules":
			// Left to git submodule: git refuses to run on a garbled one.
		case d.Type().IsRegular():
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return files, links, dirs
}

// tracked lists the index's paths (any stage).
func (w *orcWorld) tracked() []string {
	out, err := orcRun(w.dir, nil, "ls-files", "-z")
	if err != nil {
		w.t.Fatal(err)
	}
	var ps []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			ps = append(ps, p)
		}
	}
	return ps
}

// content draws file contents: text with LF or CRLF, empty, binary with
// NULs, now and then a larger file.
func (w *orcWorld) content() []byte {
	switch w.rng.Intn(8) {
	case 0:
		return nil
	case 1:
		return []byte("line one\r\nline two\r\n")
	case 2:
		b := make([]byte, 1+w.rng.Intn(300))
		w.rng.Read(b)
		return b
	case 3:
		if w.rng.Intn(4) == 0 {
			b := make([]byte, 64<<10+w.rng.Intn(4096))
			for i := range b {
				b[i] = byte('a' + w.rng.Intn(26))
			}
			return b
		}
		fallthrough
	default:
		var b strings.Builder
		eol := "\n"
		if w.rng.Intn(4) == 0 {
			eol = "\r\n"
		}
		for range 1 + w.rng.Intn(5) {
			fmt.Fprintf(&b, "line %d%s", w.rng.Intn(1000), eol)
		}
		return []byte(b.String())
	}
}

func (w *orcWorld) ignoreText() []byte {
	var b strings.Builder
	eol := "\n"
	if w.rng.Intn(10) == 0 {
		eol = "\r\n"
	}
	for range 1 + w.rng.Intn(5) {
		b.WriteString(w.pick(orcPatterns) + eol)
	}
	return []byte(b.String())
}

func (w *orcWorld) writeFile(rel string, data []byte, mode os.FileMode) bool {
	if !w.parentsOK(rel) {
		return false
	}
	p := w.abs(rel)
	if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		if err := os.RemoveAll(p); err != nil {
			w.t.Fatal(err)
		}
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		w.t.Fatal(err)
	}
	return true
}

// linkTarget draws a symlink target: inside (file, directory, dangling),
// outside (relative escape, absolute), or a hidden/credential name.
func (w *orcWorld) linkTarget() string {
	return w.pick([]string{"f.txt", "src", "../f.txt", "nope", "../../outside", "/etc/passwd",
		filepath.Join(w.outside, "file"), filepath.Join(w.outside, "d"), ".env", "a b.txt", "sub"})
}

// step applies one random operation.
func (w *orcWorld) step() {
	t := w.t
	r := w.rng
	files, links, dirs := w.tree()
	anyOf := func(s []string) (string, bool) {
		if len(s) == 0 {
			return "", false
		}
		return s[r.Intn(len(s))], true
	}
	type op struct {
		weight int
		do     func()
	}
	ops := []op{
		{20, func() { // write a new (or overwrite a) file
			p := w.newPath()
			if w.writeFile(p, w.content(), 0o644) {
				w.logf("write %q", p)
			}
		}},
		{10, func() { // change an existing file's content
			if p, ok := anyOf(files); ok {
				w.writeFile(p, append(w.content(), byte('0'+r.Intn(10))), 0o644)
				w.logf("edit %q", p)
			}
		}},
		{5, func() { // same-size edit, in place
			if p, ok := anyOf(files); ok {
				b, err := os.ReadFile(w.abs(p))
				if err != nil {
					t.Fatal(err)
				}
				if len(b) == 0 {
					return
				}
				i := r.Intn(len(b))
				b[i] ^= byte(1 + r.Intn(255))
				if err := os.WriteFile(w.abs(p), b, 0o644); err != nil {
					t.Fatal(err)
				}
				w.logf("same-size edit %q (byte %d)", p, i)
			}
		}},
		{6, func() { // touch: new mtime, same content
			if p, ok := anyOf(files); ok {
				tm := time.Now().Add(time.Duration(r.Intn(7200)-3600) * time.Second)
				if err := os.Chtimes(w.abs(p), tm, tm); err != nil {
					t.Fatal(err)
				}
				w.logf("touch %q (%v)", p, tm.Format(time.TimeOnly))
			}
		}},
		{3, func() { // rewrite the same bytes (new mtime and ctime), or replace by a copy (new inode)
			if p, ok := anyOf(files); ok {
				b, err := os.ReadFile(w.abs(p))
				if err != nil {
					t.Fatal(err)
				}
				if r.Intn(2) == 0 {
					if err := os.WriteFile(w.abs(p), b, 0o644); err != nil {
						t.Fatal(err)
					}
					w.logf("rewrite same content %q", p)
					return
				}
				fi, err := os.Lstat(w.abs(p))
				if err != nil {
					t.Fatal(err)
				}
				tmp := filepath.Join(filepath.Dir(w.abs(p)), ".orc-tmp")
				if err := os.WriteFile(tmp, b, fi.Mode().Perm()); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, w.abs(p)); err != nil {
					t.Fatal(err)
				}
				w.logf("replace by identical copy %q", p)
			}
		}},
		{2, func() { // backdate every file: index entries stop being racy
			tm := time.Now().Add(-2 * time.Hour)
			for _, p := range files {
				if err := os.Chtimes(w.abs(p), tm, tm); err != nil {
					t.Fatal(err)
				}
			}
			w.logf("backdate all files")
		}},
		{6, func() {
			if p, ok := anyOf(files); ok {
				if err := os.Remove(w.abs(p)); err != nil {
					t.Fatal(err)
				}
				w.logf("delete %q", p)
			}
		}},
		{5, func() { // chmod +x / -x
			if p, ok := anyOf(files); ok {
				fi, err := os.Lstat(w.abs(p))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(w.abs(p), fi.Mode().Perm()^0o111); err != nil {
					t.Fatal(err)
				}
				w.logf("chmod %q %v -> %v", p, fi.Mode().Perm(), fi.Mode().Perm()^0o111)
			}
		}},
		{3, func() { // a file becomes a symlink (not at a submodule's path: git's status dies there)
			if p, ok := anyOf(files); ok && !slices.Contains(orcSubmodules, p) {
				target := w.linkTarget()
				if err := os.Remove(w.abs(p)); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, w.abs(p)); err != nil {
					t.Fatal(err)
				}
				w.logf("file %q -> symlink to %q", p, target)
			}
		}},
		{3, func() { // a new symlink
			p := w.newPath()
			if !w.parentsOK(p) {
				return
			}
			target := w.linkTarget()
			if err := os.RemoveAll(w.abs(p)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, w.abs(p)); err != nil {
				t.Fatal(err)
			}
			w.logf("symlink %q -> %q", p, target)
		}},
		{3, func() { // a symlink becomes a file, or is retargeted
			if p, ok := anyOf(links); ok {
				if err := os.Remove(w.abs(p)); err != nil {
					t.Fatal(err)
				}
				if r.Intn(3) == 0 {
					target := w.linkTarget()
					if err := os.Symlink(target, w.abs(p)); err != nil {
						t.Fatal(err)
					}
					w.logf("retarget symlink %q -> %q", p, target)
					return
				}
				if err := os.WriteFile(w.abs(p), w.content(), 0o644); err != nil {
					t.Fatal(err)
				}
				w.logf("symlink %q -> file", p)
			}
		}},
		{1, func() { // a file becomes a FIFO, or a new FIFO (git takes it for a file it cannot hash)
			p, ok := anyOf(files)
			if !ok || r.Intn(2) == 0 {
				if p = w.newPath(); !w.parentsOK(p) {
					return
				}
			}
			if b := path.Base(p); b == ".gitignore" || b == ".gitattributes" || b == ".gitmodules" {
				return // git reads these and would block on a FIFO
			}
			if err := os.RemoveAll(w.abs(p)); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(w.abs(p), 0o644); err != nil {
				t.Fatal(err)
			}
			w.logf("fifo %q", p)
		}},
		{1, func() { // a file becomes a directory
			if p, ok := anyOf(files); ok {
				if err := os.Remove(w.abs(p)); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(w.abs(p), 0o755); err != nil {
					t.Fatal(err)
				}
				w.writeFile(p+"/inner.txt", w.content(), 0o644)
				w.logf("file %q -> directory with inner.txt", p)
			}
		}},
		{1, func() { // a directory goes (or becomes a file)
			if p, ok := anyOf(dirs); ok {
				if err := os.RemoveAll(w.abs(p)); err != nil {
					t.Fatal(err)
				}
				if r.Intn(2) == 0 {
					if err := os.WriteFile(w.abs(p), w.content(), 0o644); err != nil {
						t.Fatal(err)
					}
					w.logf("directory %q -> file", p)
					return
				}
				w.logf("remove directory %q", p)
			}
		}},
		{2, func() { // empty directories
			p := path2(w.pick(orcDirs), "empty"+strconv.Itoa(r.Intn(3)))
			if w.parentsOK(p + "/x") {
				w.logf("mkdir %q", p)
			}
		}},
		{4, func() { // a .gitignore, at the root or nested
			p := path2(w.pick(orcIgnoreDirs), ".gitignore")
			text := w.ignoreText()
			if w.writeFile(p, text, 0o644) {
				w.logf("write %q: %q", p, text)
			}
		}},
		{1, func() {
			text := w.ignoreText()
			w.writeHost(filepath.Join(w.dir, ".git", "info", "exclude"), text)
			w.logf("write .git/info/exclude: %q", text)
		}},
		{1, func() {
			if w.excludes != "" {
				text := w.ignoreText()
				w.writeHost(w.excludes, text)
				w.logf("write global excludes %q: %q", w.excludes, text)
			}
		}},
		{12, func() { // git add some files (some deleted: staged deletions)
			var ps []string
			for range 1 + r.Intn(4) {
				if p, ok := anyOf(append(append(files, links...), w.tracked()...)); ok {
					ps = append(ps, p)
				}
			}
			if len(ps) > 0 {
				args := []string{"add"}
				if r.Intn(6) == 0 {
					args = append(args, "-f")
				}
				w.git(append(append(args, "--"), ps...)...)
			}
		}},
		{3, func() { w.git("add", "-u") }},
		{5, func() { // a staged deletion, the file left untracked in the work tree
			if p, ok := anyOf(w.tracked()); ok {
				w.git("rm", "-q", "--cached", "-f", "--", p)
			}
		}},
		{1, func() {
			if p, ok := anyOf(w.tracked()); ok {
				w.git("rm", "-q", "-f", "--", p)
			}
		}},
		{6, func() {
			switch r.Intn(4) {
			case 0:
				w.git("commit", "-q", "-a", "-m", w.msg("commit -a"))
			case 1:
				w.git("commit", "-q", "--allow-empty", "-m", w.msg("empty"))
			default:
				w.git("commit", "-q", "-m", w.msg("commit"))
			}
		}},
		{2, func() {
			if r.Intn(2) == 0 {
				w.git("reset", "-q")
			} else if p, ok := anyOf(w.tracked()); ok {
				w.git("reset", "-q", "--", p)
			}
		}},
		{2, func() {
			if p, ok := anyOf(w.tracked()); ok {
				w.git("checkout", "-q", "--", p)
			}
		}},
		{1, func() {
			if p, ok := anyOf(w.tracked()); ok && !slices.Contains(orcSubmodules, p) {
				// (Not a submodule: git mv rewrites its .git file, and a
				// later removal of the checkout leaves git status failing.)
				w.git("mv", "-k", "--", p, path2(w.pick(orcDirs), "moved"+strconv.Itoa(r.Intn(3))))
			}
		}},
	}
	if w.has["intent-to-add"] {
		ops = append(ops, op{3, func() {
			if p, ok := anyOf(files); ok {
				w.git("add", "-N", "--", p)
			}
		}})
	}
	if w.has["nested-repo"] {
		ops = append(ops, op{2, func() {
			p := w.pick([]string{"sub", "sub", "src/nested", "a b/inner repo", ".hidden/repo", "build/sub"})
			if !w.parentsOK(p + "/x") {
				return
			}
			nested := w.abs(p)
			if _, err := os.Lstat(filepath.Join(nested, ".git")); err != nil {
				w.gitIn(w.dir, nil, "init", "-q", "--", nested)
				return
			}
			// Commit inside it, or give it an untracked file.
			if r.Intn(2) == 0 {
				w.writeFile(p+"/inside.txt", w.content(), 0o644)
				w.gitIn(nested, nil, "add", "--", "inside.txt")
				w.gitIn(nested, nil, "commit", "-q", "--allow-empty", "-m", w.msg("nested"))
			} else {
				w.writeFile(p+"/untracked.txt", w.content(), 0o644)
				w.logf("write %q", p+"/untracked.txt")
			}
		}})
	}
	if w.has["submodules"] {
		ops = append(ops, op{4, func() { w.submoduleOp() }})
	}
	if w.has["branches"] {
		ops = append(ops, op{3, func() {
			switch r.Intn(4) {
			case 0:
				w.git("checkout", "-q", "-b", w.msg("b"))
			case 1:
				w.git("checkout", "-q", "--detach")
			case 2:
				w.git("checkout", "-q", "main")
			default:
				w.git("checkout", "-q", "-")
			}
		}})
	}
	if w.has["remote"] {
		ops = append(ops, op{6, func() { w.remoteOp() }})
	}
	if w.has["conflicts"] {
		ops = append(ops, op{2, func() { w.conflictOp() }})
	}
	if w.has["index-flags"] {
		ops = append(ops, op{3, func() {
			if p, ok := anyOf(w.tracked()); ok {
				flag := w.pick([]string{"--skip-worktree", "--no-skip-worktree", "--assume-unchanged", "--no-assume-unchanged"})
				w.git("update-index", flag, "--", p)
			}
		}})
	}
	if w.has["index-formats"] {
		ops = append(ops, op{2, func() {
			switch r.Intn(5) {
			case 0:
				w.git("update-index", "--index-version", w.pick([]string{"2", "3", "4", "4"}))
			case 1:
				w.git("config", "core.untrackedCache", "true")
				w.git("update-index", "--untracked-cache")
			case 2:
				w.git("pack-refs", "--all")
			case 3:
				w.git("gc", "-q")
			default:
				w.git("repack", "-q", "-d")
			}
		}})
	}
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	n := r.Intn(total)
	for _, o := range ops {
		if n < o.weight {
			o.do()
			return
		}
		n -= o.weight
	}
}

// orcSubmodules are where submodules go.
var orcSubmodules = []string{"mod", "deps/lib", "ünï mod", `back\mod`}

// submoduleOp adds a submodule (git submodule add: a .git file and the
// repository in .git/modules; or an embedded clone added with git add: a
// .git directory), moves its checkout to another commit, commits inside
// it, stages the move, dirties its work tree or removes it.
func (w *orcWorld) submoduleOp() {
	t := w.t
	if w.subsrc == "" {
		w.subsrc = filepath.Join(w.base, "subsrc")
		orcGit(t, w.base, "init", "-q", "-b", "main", w.subsrc)
		for i := range 3 {
			w.writeHost(filepath.Join(w.subsrc, "s.txt"), []byte(fmt.Sprintf("s %d\n", i)))
			orcGit(t, w.subsrc, "add", "-f", "s.txt")
			orcGit(t, w.subsrc, "commit", "-q", "-m", w.msg("sub"))
		}
	}
	p := w.pick(orcSubmodules)
	abs := w.abs(p)
	if _, err := os.Lstat(filepath.Join(abs, ".git")); err != nil {
		if !w.parentsOK(p) {
			return
		}
		if err := os.RemoveAll(abs); err != nil {
			t.Fatal(err)
		}
		if w.rng.Intn(2) == 0 {
			w.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", "-f", "--", w.subsrc, p)
		} else if w.gitIn(w.base, nil, "clone", "-q", w.subsrc, abs) {
			w.git("add", "--", p)
		}
		return
	}
	switch w.rng.Intn(7) {
	case 0, 1: // the checkout moves to another commit (unstaged: .M)
		w.gitIn(abs, nil, "checkout", "-q", "--detach", w.pick([]string{"HEAD~1", "HEAD~2", "main", "HEAD@{1}"}))
	case 2: // a new commit inside
		w.writeFile(p+"/s.txt", w.content(), 0o644)
		w.gitIn(abs, nil, "commit", "-q", "-a", "--allow-empty", "-m", w.msg("inner"))
	case 3, 4: // the move staged (M.)
		w.git("add", "--", p)
	case 5: // modified or untracked content inside (git: .M with S.M. or S..U)
		w.writeFile(p+"/"+w.pick([]string{"s.txt", "dirt.txt"}), w.content(), 0o644)
		w.logf("dirty submodule %q", p)
	default: // the checkout removed (.D)
		if err := os.RemoveAll(abs); err != nil {
			t.Fatal(err)
		}
		w.logf("remove submodule checkout %q", p)
	}
}

func (w *orcWorld) msg(prefix string) string {
	w.n++
	return fmt.Sprintf("%s%d", prefix, w.n)
}

// remoteOp moves the remote or its tracking branch: push, a commit on the
// remote by someone else, fetch, merge, or the tracking ref deleted (an
// upstream that is gone).
func (w *orcWorld) remoteOp() {
	switch w.rng.Intn(6) {
	case 0, 1:
		w.git("push", "-q", "-u", "origin", "main")
	case 2:
		if _, err := os.Stat(w.other); err != nil {
			if !w.gitIn(w.base, nil, "clone", "-q", "-b", "main", w.remote, w.other) {
				os.RemoveAll(w.other)
				return
			}
		}
		if !w.gitIn(w.other, nil, "pull", "-q", "--ff-only") {
			return
		}
		name := w.pick([]string{"f.txt", "remote.txt", "src/r.txt"})
		w.writeHost(filepath.Join(w.other, filepath.FromSlash(name)), w.content())
		w.gitIn(w.other, nil, "add", "--", name)
		w.gitIn(w.other, nil, "commit", "-q", "--allow-empty", "-m", w.msg("remote"))
		w.gitIn(w.other, nil, "push", "-q", "origin", "main")
		if w.rng.Intn(3) > 0 {
			w.git("fetch", "-q", "origin")
		}
	case 3:
		w.git("fetch", "-q", "origin")
	case 4:
		if w.rng.Intn(2) == 0 {
			w.git("merge", "-q", "--no-edit", "origin/main")
		} else {
			w.git("merge", "--abort")
		}
	default:
		w.git("update-ref", "-d", "refs/remotes/origin/main")
	}
}

// conflictOp writes unmerged stages for one path straight into the index,
// one of git's seven conflict shapes (DD AU UD UA DU AA UU), or resolves.
func (w *orcWorld) conflictOp() {
	if w.rng.Intn(4) == 0 {
		if ps := w.tracked(); len(ps) > 0 {
			w.git("add", "--", ps[w.rng.Intn(len(ps))])
		}
		return
	}
	p := w.pick(append(w.tracked(), "conflict"+strconv.Itoa(w.rng.Intn(3))))
	blob := func() string {
		out, err := orcRun(w.dir, w.content(), "hash-object", "-w", "--stdin")
		if err != nil {
			w.t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	shapes := [][]int{{1}, {2}, {1, 2}, {3}, {1, 3}, {2, 3}, {1, 2, 3}}
	info := fmt.Sprintf("0 %s 0\t%s\n", strings.Repeat("0", 40), p)
	for _, stage := range shapes[w.rng.Intn(len(shapes))] {
		info += fmt.Sprintf("100644 %s %d\t%s\n", blob(), stage, p)
	}
	w.gitIn(w.dir, []byte(info), "update-index", "--index-info")
	w.logf("  (index info %q)", info)
}
