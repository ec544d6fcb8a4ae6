package pathrule

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// dotfileGen draws .gitmodules and .gitattributes contents around what
// git fsck checks: submodule names with .. components, urls that look like
// options, climb out of their root or carry encoded newlines, option-like
// paths, command updates, and what git's configuration parser refuses or
// reads oddly (quotes, escapes, continuations, CR LF, a byte order mark,
// 0xFF, NUL, dotted and malformed section headers); attribute lines around
// 2048 bytes.
type dotfileGen struct{ rng *rand.Rand }

var (
	dotNames = []string{"a", "..", "a/../b", `a\..`, "", "x.y", `s\"q`, "-x", "../a", "a/..", `..\x`, "日本", "a b", `\\`, ".."}
	dotPaths = []string{"a", "-a", `"-a"`, " -x", "a b", `a\tb`, "./-a", `"a"b`}
	dotURLs  = []string{"https://example.com/a.git", "-u", "./a", "../a", "../../a", "../:x", ".././/x", `..\..\a`,
		"git://h/%0a", "./%0a", "./%0A", "./%00", "./%0", "https::x", "http::https://h/x", "https:///x", "http://user%0a@h/x",
		"http://u:p%0A@h", "ftp://h/p%0ax", "ssh://h/x", "file:///x", `git://h/x\n`, "http://h%0a/x", "https://", "http://@/x",
		"http://h:%0a/x", "https://h?x#%0a", "../", "./../:x", `"-q"`, "x:%0a", "http%0a://h/x", "ftps::ftps://h/"}
	dotUpdates = []string{"!rm -rf", "rebase", "none", `"!x"`, " !x", "checkout"}
	dotJunk    = []string{"# comment", "; c", "key", `k = "unterminated`, `k = a\q`, "x = a \\\n b", "\xff", "\x00",
		"[a.b]", "[a b]", `[ a "b"]`, "1key = x", "ke_y = x", "[submodule]", "[submodule.a]", `[Submodule "A"]`,
		`[submodule "a"`, "[submodule \"a\nb\"]", "[]", "[a]x=1", "\t\tk = v ; c", `k = "a;b" # c`, "\xef\xbb\xbf[a]",
		"k=\r", "[a\xff]", `[submodule "x"] url = -x`, "=v", "k\t=\tv", "k = \\", "[submodule \"a\\\"\"]"}
)

func (g dotfileGen) pick(s []string) string { return s[g.rng.Intn(len(s))] }

func (g dotfileGen) gitmodules() string {
	var lines []string
	if g.rng.Intn(15) == 0 {
		lines = append(lines, "\xef\xbb\xbf")
	}
	for range 1 + g.rng.Intn(6) {
		switch g.rng.Intn(6) {
		case 0:
			lines = append(lines, fmt.Sprintf("[submodule %q]", g.pick(dotNames)))
		case 1:
			lines = append(lines, "\tpath = "+g.pick(dotPaths))
		case 2, 3:
			lines = append(lines, "\turl = "+g.pick(dotURLs))
		case 4:
			lines = append(lines, "\tupdate = "+g.pick(dotUpdates))
		default:
			lines = append(lines, g.pick(dotJunk))
		}
	}
	eol := "\n"
	if g.rng.Intn(5) == 0 {
		eol = "\r\n"
	}
	s := strings.Join(lines, eol)
	if g.rng.Intn(3) > 0 {
		s += eol
	}
	return s
}

func (g dotfileGen) gitattributes() string {
	var b strings.Builder
	for range 1 + g.rng.Intn(3) {
		n := []int{10, 2046, 2047, 2048, 2049, 3000}[g.rng.Intn(6)]
		line := "*.x " + strings.Repeat("a", max(0, n-4))
		if g.rng.Intn(4) == 0 {
			line = line[:n/2] + "\x00" + line[n/2:]
		}
		b.WriteString(line + []string{"\n", "\r\n", ""}[g.rng.Intn(3)])
	}
	return b.String()
}

// TestDotfileContentMatchesGitFsck: for generated .gitmodules and
// .gitattributes contents (and a few written out), our check flags a blob
// exactly when git fsck --strict reports it, naming one of git's ids.
//
// SERVERFS_DOTFILE_SEED=n replays a run.
func TestDotfileContentMatchesGitFsck(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("SERVERFS_DOTFILE_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (replay with SERVERFS_DOTFILE_SEED=%d)", seed, seed)
	g := dotfileGen{rand.New(rand.NewSource(seed))}
	type sample struct{ name, content string }
	samples := []sample{
		{".gitmodules", "[submodule \"a\"]\n\tpath = a\n\turl = https://example.com/a.git\n"},
		{".gitmodules", "[submodule \"a\"]\n\turl = -oProxyCommand=x\n"},
		{".gitmodules", "[submodule \"../x\"]\n\tpath = a\n"},
		{".gitmodules", "[submodule \"a\"]\n\tupdate = !sh\n"},
		{".gitmodules", "\xef\xbb\xbf[submodule \"a\"]\n\tpath = a\n"},
		{".gitmodules", "[a]\n\xff garbage after a 0xFF ends the parse"},
		{"GITMOD~1", "[submodule \"a\"]\n\tpath = -a\n"},
		{`x\.gitmodules`, "[submodule \"a\"]\n\turl = ../../:x\n"},
		{".gitattributes", "*.x " + strings.Repeat("a", 2044) + "\n"},
		{".gitattributes", "*.x " + strings.Repeat("a", 2043) + "\n"},
	}
	for range 300 {
		samples = append(samples, sample{g.pick([]string{".gitmodules", ".gitmodules", "GITMOD~1", `d\.gitmodules`}), g.gitmodules()})
	}
	for range 40 {
		samples = append(samples, sample{g.pick([]string{".gitattributes", "GITATT~1"}), g.gitattributes()})
	}
	o := newGitNameOracle(t)
	dir := t.TempDir()
	var files []string
	for i, s := range samples {
		f := filepath.Join(dir, strconv.Itoa(i))
		os.WriteFile(f, []byte(s.content), 0o644)
		files = append(files, f)
	}
	blobs := strings.Fields(o.Must("", append([]string{"hash-object", "-w", "--"}, files...)...))
	var batch strings.Builder
	for i, s := range samples {
		fmt.Fprintf(&batch, "100644 blob %s\t%s\x00\x00", blobs[i], s.name)
	}
	o.Must(batch.String(), "mktree", "-z", "--batch")
	flagged := o.fsck()
	bad := 0
	for i, s := range samples {
		var ours *Rule
		if IsGitmodulesName(s.name) {
			ours = Gitmodules([]byte(s.content))
		}
		if ours == nil && IsGitattributesName(s.name) {
			ours = Gitattributes([]byte(s.content))
		}
		git := flagged[blobs[i]]
		desc := fmt.Sprintf("seed %d sample %d: %s %q", seed, i, s.name, s.content)
		switch {
		case ours == nil && len(git) > 0:
			t.Errorf("%s: git fsck says %q, we pass it", desc, git)
		case ours != nil && !strings.Contains(" "+strings.Join(git, " ")+" ", " "+ours.ID+" "):
			t.Errorf("%s: we say %s, git fsck says %q", desc, ours.ID, git)
		}
		if len(git) > 0 {
			bad++
		}
	}
	if bad < len(samples)/4 || bad > len(samples)*3/4 {
		t.Errorf("git fsck flagged %d of %d samples: the generator has drifted", bad, len(samples))
	}
	t.Logf("%d samples, %d flagged by git fsck", len(samples), bad)
}
