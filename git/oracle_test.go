package git

// The git CLI as the oracle: helpers that run the system git in a clean
// environment and parse `git status --porcelain=v2` into the shape of
// Status, so that the differential test can compare the two.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	sfs "github.com/serverfs/serverfs/fs"
)

// gitOracle is git's answer in a comparable form.
type gitOracle struct {
	Branch   string // "" when git says "(detached)"
	Head     string // "" when git says "(initial)"
	Upstream string
	Ahead    *int // nil when git prints no "# branch.ab" line
	Behind   *int
	Entries  []Entry // sorted by path (byte order), tracked before untracked
	Raw      string  // the porcelain output, NULs shown as newlines
	// Subs holds the submodule field ("S.C.", "S.MU", ...) of each
	// gitlink's ordinary entry, by path.
	Subs map[string]string
}

// orcDate is the fixed base of author and committer dates; orcEnv adds
// the number of commits made so far so that dates are fixed but distinct.
const orcDate = 1700000000

// orcCommits counts commits made through orcGit, for the commit dates.
var orcCommits int

// orcSetHome gives the test (and so both git and our implementation, which
// read them from the process environment) a fresh HOME and
// XDG_CONFIG_HOME.
func orcSetHome(t *testing.T) (home, xdg string) {
	t.Helper()
	base := t.TempDir()
	home, xdg = filepath.Join(base, "home"), filepath.Join(base, "xdg")
	for _, d := range []string{home, xdg} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	return home, xdg
}

// orcEnv is the whole environment git runs with: nothing of the caller's
// but PATH, HOME and XDG_CONFIG_HOME (which orcSetHome points at temporary
// directories).
func orcEnv() []string {
	date := fmt.Sprintf("@%d +0000", orcDate+orcCommits*60)
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"XDG_CONFIG_HOME=" + os.Getenv("XDG_CONFIG_HOME"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_LITERAL_PATHSPECS=1", // "star*" is a file name, not a glob
		"GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Oracle Author",
		"GIT_AUTHOR_EMAIL=author@example.invalid",
		"GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=Oracle Committer",
		"GIT_COMMITTER_EMAIL=committer@example.invalid",
		"GIT_COMMITTER_DATE=" + date,
		"LC_ALL=C",
		"TZ=UTC",
	}
}

// orcRun runs git with args in dir (stdin may be nil) and returns its
// stdout, and an error carrying stderr when git fails.
func orcRun(dir string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = orcEnv()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	for _, a := range args {
		if a == "commit" {
			orcCommits++
			break
		}
	}
	if err != nil {
		return stdout.Bytes(), fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// orcGit runs git and fails the test if it fails.
func orcGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := orcRun(dir, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// orcNeedGit fails the test when there is no git to ask (.ci/run
// installs it).
func orcNeedGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git not found in PATH (.ci/run installs it); the differential tests need it as the oracle")
	}
}

// gitStatusV2 runs git status in porcelain v2 in dir and parses it.
func gitStatusV2(t testing.TB, dir string) gitOracle {
	t.Helper()
	out, err := orcRun(dir, nil, "status", "--porcelain=v2", "--branch", "--untracked-files=all", "--no-renames", "-z")
	if err != nil {
		t.Fatal(err)
	}
	o, err := parseStatusV2(out)
	if err != nil {
		t.Fatalf("parsing git status output: %v\n%s", err, strings.ReplaceAll(string(out), "\x00", "\n"))
	}
	return o
}

// parseStatusV2 parses the output of `git status --porcelain=v2 --branch
// -z`. Renames (type 2) are refused: the status is asked --no-renames.
func parseStatusV2(out []byte) (gitOracle, error) {
	o := gitOracle{Raw: strings.ReplaceAll(string(out), "\x00", "\n")}
	recs := strings.Split(string(out), "\x00")
	if n := len(recs); n > 0 && recs[n-1] == "" {
		recs = recs[:n-1]
	}
	for _, r := range recs {
		if r == "" {
			return o, fmt.Errorf("empty record")
		}
		switch r[0] {
		case '#':
			if err := o.header(r); err != nil {
				return o, err
			}
		case '1':
			f := strings.SplitN(r, " ", 9)
			if len(f) != 9 || len(f[1]) != 2 {
				return o, fmt.Errorf("malformed ordinary entry %q", r)
			}
			o.Entries = append(o.Entries, Entry{Path: f[8], Staged: f[1][:1], Unstaged: f[1][1:]})
			if strings.HasPrefix(f[2], "S") {
				if o.Subs == nil {
					o.Subs = map[string]string{}
				}
				o.Subs[f[8]] = f[2]
			}
		case 'u':
			f := strings.SplitN(r, " ", 11)
			if len(f) != 11 || len(f[1]) != 2 {
				return o, fmt.Errorf("malformed unmerged entry %q", r)
			}
			o.Entries = append(o.Entries, Entry{Path: f[10], Staged: f[1][:1], Unstaged: f[1][1:]})
		case '?':
			p, ok := strings.CutPrefix(r, "? ")
			if !ok || p == "" {
				return o, fmt.Errorf("malformed untracked entry %q", r)
			}
			o.Entries = append(o.Entries, Entry{Path: p, Staged: "?", Unstaged: "?"})
		case '2':
			return o, fmt.Errorf("rename entry although --no-renames was given: %q", r)
		default:
			return o, fmt.Errorf("unknown record %q", r)
		}
	}
	// By path; a path with two entries (deleted from the index, present
	// in the work tree: "D." and "??") has the tracked one first, as git
	// lists changes before untracked paths.
	sort.SliceStable(o.Entries, func(i, j int) bool {
		a, b := o.Entries[i], o.Entries[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Staged != "?" && b.Staged == "?"
	})
	return o, nil
}

func (o *gitOracle) header(r string) error {
	key, val, _ := strings.Cut(strings.TrimPrefix(r, "# "), " ")
	switch key {
	case "branch.oid":
		if val != "(initial)" {
			o.Head = val
		}
	case "branch.head":
		if val != "(detached)" {
			o.Branch = val
		}
	case "branch.upstream":
		o.Upstream = val
	case "branch.ab":
		a, b, ok := strings.Cut(val, " ")
		ahead, err1 := strconv.Atoi(strings.TrimPrefix(a, "+"))
		behind, err2 := strconv.Atoi(strings.TrimPrefix(b, "-"))
		if !ok || !strings.HasPrefix(a, "+") || !strings.HasPrefix(b, "-") || err1 != nil || err2 != nil {
			return fmt.Errorf("malformed header %q", r)
		}
		o.Ahead, o.Behind = &ahead, &behind
	default:
		return fmt.Errorf("unknown header %q", r)
	}
	return nil
}

// filtered drops the entries ServerFS never shows: a path with a hidden
// component (unless the policy allows hidden paths) or on the deny list.
// An untracked nested repository keeps its trailing '/'. A submodule whose
// checkout is at the recorded commit but whose own work tree has changes
// (git's "S.M." / "S..U": modified or untracked content) is unchanged for
// ServerFS, which documents that it does not look inside submodules.
func (o gitOracle) filtered(p *sfs.Policy) gitOracle {
	out := o
	out.Entries = nil
	for _, e := range o.Entries {
		comps := strings.Split(strings.TrimSuffix(e.Path, "/"), "/")
		if orcHiddenPath(p, comps) || p.Denied(comps) {
			continue
		}
		if sub := o.Subs[e.Path]; len(sub) == 4 && sub[1] == '.' && e.Staged != "?" && e.Unstaged == "M" {
			e.Unstaged = "."
			if e.Staged == "." {
				continue
			}
		}
		out.Entries = append(out.Entries, e)
	}
	return out
}

func orcHiddenPath(p *sfs.Policy, comps []string) bool {
	if p.AllowHidden() {
		return false
	}
	for _, c := range comps {
		if sfs.IsHidden(c) {
			return true
		}
	}
	return false
}

// orcIntPtr shows an optional count.
func orcIntPtr(p *int) string {
	if p == nil {
		return "nil"
	}
	return strconv.Itoa(*p)
}

// orcEntryDiff shows how two entry lists differ, one line per entry in
// only one of them ("-" git's only, "+" ours only; a path may have two
// entries, as "D." and "??"); "" when they are equal.
func orcEntryDiff(want, got []Entry) string {
	count := map[Entry]int{}
	for _, e := range want {
		count[e]++
	}
	for _, e := range got {
		count[e]--
	}
	var diff []Entry
	for e, n := range count {
		if n != 0 {
			diff = append(diff, e)
		}
	}
	sort.Slice(diff, func(i, j int) bool {
		a, b := diff[i], diff[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Staged+a.Unstaged < b.Staged+b.Unstaged
	})
	var b strings.Builder
	for _, e := range diff {
		n := count[e]
		sign, who := "-", "git only"
		if n < 0 {
			sign, who, n = "+", "ours only", -n
		}
		fmt.Fprintf(&b, "%s %s%s %q (%s", sign, e.Staged, e.Unstaged, e.Path, who)
		if n > 1 {
			fmt.Fprintf(&b, ", %d times", n)
		}
		b.WriteString(")\n")
	}
	if b.Len() == 0 {
		for i := range want {
			if want[i] != got[i] {
				return fmt.Sprintf("  same entries, different order (ours must be sorted by path): %q\n", got)
			}
		}
	}
	return b.String()
}

// TestGitStatusV2Parse checks the oracle itself on a small real repository
// holding every kind of entry it parses, and its parser on hand-written
// records.
func TestGitStatusV2Parse(t *testing.T) {
	orcNeedGit(t)
	orcSetHome(t)
	base := t.TempDir()
	remote, dir := filepath.Join(base, "remote.git"), filepath.Join(base, "wd")
	orcGit(t, base, "init", "-q", "--bare", "-b", "main", remote)
	orcGit(t, base, "init", "-q", "-b", "main", dir)

	o := gitStatusV2(t, dir)
	if o.Branch != "main" || o.Head != "" || o.Upstream != "" || o.Ahead != nil || len(o.Entries) != 0 {
		t.Fatalf("fresh repository: %+v", o)
	}

	write := func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("kept", "kept\n")
	write("gone", "gone\n")
	write("a b/ünï code.txt", "x\n")
	write("-x", "dash\n")
	write("conflict", "base\n")
	orcGit(t, dir, "add", "--", "kept", "gone", "a b/ünï code.txt", "-x", "conflict")
	orcGit(t, dir, "commit", "-q", "-m", "one")
	orcGit(t, dir, "remote", "add", "origin", remote)
	orcGit(t, dir, "push", "-q", "-u", "origin", "main")
	orcGit(t, dir, "commit", "-q", "--allow-empty", "-m", "two") // one ahead
	write("kept", "changed\n")
	if err := os.Remove(filepath.Join(dir, "gone")); err != nil {
		t.Fatal(err)
	}
	write("new", "new\n")
	orcGit(t, dir, "add", "--", "new")
	write("untracked dir/file", "u\n")
	write(".hidden", "h\n")
	write("id_rsa", "k\n")
	if err := os.Symlink("kept", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	orcGit(t, dir, "add", "--", "link")
	if err := os.Remove(filepath.Join(dir, "-x")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/nonexistent", filepath.Join(dir, "-x")); err != nil {
		t.Fatal(err)
	}
	orcGit(t, dir, "init", "-q", filepath.Join(dir, "sub"))
	// Unmerged: stages 1, 2 and 3 of "conflict" written into the index.
	blob := func(s string) string {
		out, err := orcRun(dir, []byte(s), "hash-object", "-w", "--stdin")
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	info := fmt.Sprintf("0 %s 0\tconflict\n100644 %s 1\tconflict\n100644 %s 2\tconflict\n100644 %s 3\tconflict\n",
		strings.Repeat("0", 40), blob("base\n"), blob("ours\n"), blob("theirs\n"))
	if _, err := orcRun(dir, []byte(info), "update-index", "--index-info"); err != nil {
		t.Fatal(err)
	}

	o = gitStatusV2(t, dir)
	head := strings.TrimSpace(orcGit(t, dir, "rev-parse", "HEAD"))
	if o.Branch != "main" || o.Head != head || o.Upstream != "origin/main" || o.Ahead == nil || *o.Ahead != 1 || *o.Behind != 0 {
		t.Errorf("header: %+v (HEAD %s)\n%s", o, head, o.Raw)
	}
	want := []Entry{
		{"-x", ".", "T"},
		{".hidden", "?", "?"},
		{"conflict", "U", "U"},
		{"gone", ".", "D"},
		{"id_rsa", "?", "?"},
		{"kept", ".", "M"},
		{"link", "A", "."},
		{"new", "A", "."},
		{"sub/", "?", "?"},
		{"untracked dir/file", "?", "?"},
	}
	if d := orcEntryDiff(want, o.Entries); d != "" {
		t.Errorf("entries differ from expected:\n%s\n%s", d, o.Raw)
	}

	f := newWorkdirFS(t, "wd="+dir+":rw")
	var paths []string
	for _, e := range o.filtered(f.Policy()).Entries {
		paths = append(paths, e.Path)
	}
	if got, want := strings.Join(paths, "|"), "-x|conflict|gone|kept|link|new|sub/|untracked dir/file"; got != want {
		t.Errorf("filtered paths %q, want %q", got, want)
	}

	// Detached, and the hand-written shapes a real run rarely shows.
	orcGit(t, dir, "update-ref", "--no-deref", "HEAD", head)
	if o := gitStatusV2(t, dir); o.Branch != "" || o.Head != head {
		t.Errorf("detached: %+v", o)
	}
	p, err := parseStatusV2([]byte("# branch.oid (initial)\x00# branch.head (detached)\x00# branch.upstream o/x y\x00# branch.ab +12 -3\x00" +
		"1 .M N... 100644 100644 100644 " + strings.Repeat("a", 40) + " " + strings.Repeat("a", 40) + " with  two spaces \x00" +
		"u AA N... 000000 100644 100644 100644 " + strings.Repeat("0", 40) + " " + strings.Repeat("b", 40) + " " + strings.Repeat("c", 40) + " u path\x00" +
		"? new\nline\x00"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Head != "" || p.Branch != "" || p.Upstream != "o/x y" || *p.Ahead != 12 || *p.Behind != 3 {
		t.Errorf("hand-written headers: %+v", p)
	}
	want = []Entry{{"new\nline", "?", "?"}, {"u path", "A", "A"}, {"with  two spaces ", ".", "M"}}
	if d := orcEntryDiff(want, p.Entries); d != "" {
		t.Errorf("hand-written entries:\n%s", d)
	}
	for _, bad := range []string{"2 R. N... 100644 100644 100644 a a R100 x\x00y\x00", "1 .M x\x00", "# branch.ab 1 2\x00", "% x\x00"} {
		if _, err := parseStatusV2([]byte(bad)); err == nil {
			t.Errorf("parseStatusV2(%q) accepted", bad)
		}
	}
}
