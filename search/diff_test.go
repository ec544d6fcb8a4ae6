package search

// Differential tests against ripgrep: for each query the set of
// (path, line, text) our engine returns must equal what `rg -F -n` prints
// with the equivalent flags, on a generated corpus, on a copy of
// $(go env GOROOT)/src and on compressed files (`rg -z`).
//
// Documented differences, normalised on rg's side before comparing:
//   - line text: a trailing "\r" is stripped, at most MaxLineText bytes are
//     kept (cut on a UTF-8 boundary, the cut flagged), and invalid UTF-8 is
//     replaced by U+FFFD (in that order, as makeLine does);
//   - hidden paths (any component starting with ".") and paths the default
//     deny list names are unreachable in ServerFS (rg may reach a hidden file
//     when a -g glob names it);
//   - binary data after the first 8 KiB: ripgrep reads 64 KiB buffers and
//     stops at the buffer holding the NUL, we stop at ours; such files are
//     compared on neither side. Files with a NUL in their first 8 KiB are
//     compared: both sides must report nothing for them;
//   - .gz and .zst files are always searched by us and only with -z by rg:
//     without -z they are compared on neither side.

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
	sfs "github.com/serverfs/serverfs/fs"
	decomp "github.com/serverfs/serverfs/internal/decompress"
)

// diffHit is one matching line, as compared between the two engines.
type diffHit struct {
	path       string
	line       int
	text       string
	cut        bool // the text was cut at MaxLineText
	compressed bool
}

func (h diffHit) String() string {
	text := h.text
	if len(text) > 80 {
		text = text[:80] + "…"
	}
	flags := ""
	if h.cut {
		flags += " [cut]"
	}
	if h.compressed {
		flags += " [compressed]"
	}
	return fmt.Sprintf("%s:%d:%q%s", h.path, h.line, text, flags)
}

// diffQuery is one search, expressed for both engines.
type diffQuery struct {
	query      string
	ignoreCase bool
	glob       string
	regex      bool // RE2 for us; for rg, rgPattern's translation
}

func (q diffQuery) String() string {
	s := fmt.Sprintf("%q", q.query)
	if q.regex {
		s = "/" + q.query + "/"
	}
	if q.ignoreCase {
		s += " -i"
	}
	if q.glob != "" {
		s += fmt.Sprintf(" -g %q", q.glob)
	}
	return s
}

// diffCorpus is a directory both engines search.
type diffCorpus struct {
	root    string
	rg      string
	engine  *Engine
	policy  *sfs.Policy
	exclude map[string]bool // slash paths compared on neither side (late binary data)
}

// diffRipgrep returns the path of rg, failing the test when it is missing:
// the differential tests are part of the suite, not optional.
func diffRipgrep(t testing.TB) string {
	t.Helper()
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Fatalf("ripgrep (rg) is required by the differential tests and was not found (%v); .ci/run installs ripgrep (apt-get install ripgrep)", err)
	}
	return rg
}

// newDiffCorpus opens root as workdir "d" with every limit lifted, and
// notes the files with a NUL past the first 8 KiB.
func newDiffCorpus(t testing.TB, root string) *diffCorpus {
	t.Helper()
	env := []string{
		"SERVERFS_MAX_WALK_ENTRIES=100000000",
		"SERVERFS_SEARCH_TIMEOUT_SECONDS=120",
		"SERVERFS_SEARCH_MAX_FILE_BYTES=68719476736",
		"SERVERFS_MAX_READ_BYTES=16777216", // context answers
	}
	cfg, err := sfs.LoadConfig(env, []string{"d=" + root})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Limits.MaxSearchResults = 50_000_000
	f, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	p, err := sfs.NewPolicy(false, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &diffCorpus{root: root, rg: diffRipgrep(t), engine: New(f), policy: p, exclude: map[string]bool{}}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.IndexByte(data, 0) >= sniffBytes {
			rel, _ := filepath.Rel(root, path)
			c.exclude[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// skip reports whether a path is compared on neither side.
func (c *diffCorpus) skip(path string, decompress bool) bool {
	comps := strings.Split(path, "/")
	for _, comp := range comps {
		if sfs.IsHidden(comp) {
			return true
		}
	}
	if c.policy.Denied(comps) || c.exclude[path] {
		return true
	}
	return !decompress && decomp.Kind(comps[len(comps)-1]) != ""
}

// diffLineText is the text our engine reports for a raw line: without a
// trailing "\r", at most MaxLineText bytes cut on a rune boundary, invalid
// UTF-8 replaced.
func diffLineText(raw []byte) (string, bool) {
	raw = bytes.TrimSuffix(raw, []byte{'\r'})
	cut := false
	if len(raw) > MaxLineText {
		n := MaxLineText
		for n > 0 && !utf8.RuneStart(raw[n]) {
			n--
		}
		raw, cut = raw[:n], true
	}
	return strings.ToValidUTF8(string(raw), "\uFFFD"), cut
}

// rgSearch runs ripgrep (argv only, never a shell) in the corpus root and
// parses its "path NUL line:text" output.
func (c *diffCorpus) rgSearch(t testing.TB, q diffQuery, decompress bool) map[diffHit]bool {
	t.Helper()
	extra := []string{"-n"}
	if decompress {
		extra = append(extra, "-z")
	}
	out := c.rgRun(t, q, extra...)
	hits := map[diffHit]bool{}
	for len(out) > 0 {
		// path NUL line ":" text "\n"; a text holds no newline.
		z := bytes.IndexByte(out, 0)
		if z < 0 {
			t.Fatalf("rg %+v: unparsable output %q", q, out[:min(len(out), 200)])
		}
		path := strings.TrimPrefix(string(out[:z]), "./")
		out = out[z+1:]
		colon := bytes.IndexByte(out, ':')
		nl := bytes.IndexByte(out, '\n')
		if colon < 0 || nl < colon {
			t.Fatalf("rg %+v: unparsable output after %q", q, path)
		}
		line, err := strconv.Atoi(string(out[:colon]))
		if err != nil {
			t.Fatalf("rg %+v: bad line number after %q: %v", q, path, err)
		}
		raw := out[colon+1 : nl]
		out = out[nl+1:]
		if c.skip(path, decompress) {
			continue
		}
		text, cut := diffLineText(raw)
		hits[diffHit{path: path, line: line, text: text, cut: cut, compressed: decompress && decomp.Kind(path) != ""}] = true
	}
	return hits
}

// ourSearch runs Engine.Search with the equivalent request.
func (c *diffCorpus) ourSearch(t testing.TB, q diffQuery, decompress bool) map[diffHit]bool {
	t.Helper()
	res, err := c.engine.Search(context.Background(), Request{
		Workdir: "d", Query: q.query, Regex: q.regex, CaseSensitive: !q.ignoreCase, Glob: q.glob, Limit: 50_000_000,
	})
	if err != nil {
		t.Fatalf("Search %v: %v", q, err)
	}
	if res.Truncated {
		t.Fatalf("Search %v: truncated (%s) after %d matches", q, res.TruncatedReason, res.Returned)
	}
	hits := map[diffHit]bool{}
	prev := Match{}
	for _, m := range res.Matches {
		if m.Path == prev.Path && m.Line <= prev.Line {
			t.Errorf("Search %v: %s:%d reported after %s:%d", q, m.Path, m.Line, prev.Path, prev.Line)
		}
		prev = m
		if c.skip(m.Path, decompress) {
			continue
		}
		hits[diffHit{path: m.Path, line: m.Line, text: m.Text, cut: m.TextTruncated, compressed: m.Compressed}] = true
	}
	return hits
}

// compare runs q on both engines and fails on any difference, showing the
// first 10 each way. It returns the number of matching lines.
func (c *diffCorpus) compare(t testing.TB, q diffQuery, decompress bool) int {
	t.Helper()
	want := c.rgSearch(t, q, decompress)
	got := c.ourSearch(t, q, decompress)
	missing, extra := diffMinus(want, got), diffMinus(got, want)
	if len(missing)+len(extra) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "query %v: rg %d lines, ours %d lines", q, len(want), len(got))
		for _, d := range []struct {
			label string
			hits  []diffHit
		}{{"only in rg", missing}, {"only in ours", extra}} {
			if len(d.hits) == 0 {
				continue
			}
			fmt.Fprintf(&b, "\n  %s (%d):", d.label, len(d.hits))
			for _, h := range d.hits[:min(10, len(d.hits))] {
				fmt.Fprintf(&b, "\n    %v", h)
			}
		}
		t.Error(b.String())
	}
	return len(want)
}

// diffMinus returns the hits of a that b lacks, sorted.
func diffMinus(a, b map[diffHit]bool) []diffHit {
	var out []diffHit
	for h := range a {
		if !b[h] {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].path != out[j].path {
			return out[i].path < out[j].path
		}
		return out[i].line < out[j].line
	})
	return out
}

// diffRun runs argv (never through a shell) in dir.
func diffRun(t testing.TB, dir string, argv ...string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%q: %v\n%s", argv, err, out)
	}
}

func diffWrite(t testing.TB, root, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// diffPwned watches /tmp/pwned, the file a hostile query would create if it
// ever reached a shell.
type diffPwned struct {
	existed bool
	mod     time.Time
}

func watchPwned() diffPwned {
	st, err := os.Stat("/tmp/pwned")
	if err != nil {
		return diffPwned{}
	}
	return diffPwned{existed: true, mod: st.ModTime()}
}

func (p diffPwned) check(t testing.TB) {
	t.Helper()
	st, err := os.Stat("/tmp/pwned")
	if err == nil && (!p.existed || !st.ModTime().Equal(p.mod)) {
		t.Errorf("/tmp/pwned was created or touched: a query reached a shell")
	}
}

// buildDiffCorpus writes the generated corpus under root. Every file holds
// a line "marker <path>" so that the query "marker" compares the set of
// files each engine searches.
func buildDiffCorpus(t testing.TB, root string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err == nil {
		diffRun(t, root, "git", "init", "-q")
	} else {
		// Without git, a bare .git directory is what both engines look for.
		if err := os.MkdirAll(filepath.Join(root, ".git", "info"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w := func(rel, content string) { diffWrite(t, root, rel, []byte(content)) }
	m := func(rel, content string) { w(rel, "marker "+rel+"\n"+content) }

	// Ignore rules, matched by the gitignore package (git's semantics,
	// checked against git in git/). Among them the patterns go-git's
	// matcher, used here before, got wrong: "dir/**" matching dir itself
	// ("v/**" + "!v/keep.txt"), "[!ab]*" as a negated class, "**" inside a
	// component as "*", and "z/**/" matching directories only.
	w(".git/info/exclude", "# local excludes\nexcluded-by-info.txt\n*.secretlog\n")
	w(".gitignore", "# root rules\n*.log\n!keep.log\nbuild/\n/root-only.txt\n**/gen/*.go\n*.tmp\ndocs/**/draft.md\n"+
		"file?.cls\n[ab]*.cls\nvendor/**\n**/cache\nign/\n!ign/keep.txt\nv/**\n!v/keep.txt\n"+
		"[!ab]*.neg\nx/foo**/y.txt\nz/**/\n")
	w("sub/.gitignore", "# a deeper file re-includes and adds\n!important.tmp\nlocal.txt\ndeep/anchored.txt\n")
	w("sub/deep/.gitignore", "!*.log\n")
	m("keep.log", "needle in a kept log\n")
	m("v/keep.txt", "needle re-included below v/**\n")
	m("v/drop.txt", "needle dropped by v/**\n")
	m("drop.log", "needle in a dropped log\n")
	m("sub/other.log", "needle in sub log\n")
	m("sub/deep/reincluded.log", "needle re-included by a deeper negation\n")
	m("build/out.txt", "needle in build\n")
	m("sub/build/out.txt", "needle in nested build dir\n")
	m("sub/build2/build", "needle in a file named build\n")
	m("root-only.txt", "needle at the root only\n")
	m("sub/root-only.txt", "needle not anchored here\n")
	m("gen/x.go", "package gen // needle\n")
	m("a/gen/y.go", "package gen // needle\n")
	m("a/gen/y.txt", "needle in gen but not .go\n")
	m("a/gen/deeper/z.go", "package deeper // needle\n")
	m("excluded-by-info.txt", "needle excluded by info/exclude\n")
	m("sub/excluded-by-info.txt", "needle excluded by info/exclude below\n")
	m("x.secretlog", "needle\n")
	m("sub/scratch.tmp", "needle tmp\n")
	m("sub/important.tmp", "needle important tmp\n")
	m("sub/local.txt", "needle local\n")
	m("sub/x/local.txt", "needle local deeper\n")
	m("sub/deep/anchored.txt", "needle anchored in sub\n")
	m("sub/x/deep/anchored.txt", "needle not anchored here\n")
	m("docs/draft.md", "needle draft at docs root\n")
	m("docs/a/b/draft.md", "needle draft deep\n")
	m("docs/a/b/final.md", "needle final\n")
	m("file1.cls", "needle\n")
	m("file12.cls", "needle\n")
	m("apple.cls", "needle\n")
	m("cherry.cls", "needle\n")
	m("vendor/v.dat", "needle vendored\n")
	m("sub/vendor/v.txt", "needle vendored, not anchored\n")
	m("sub/cache/c.txt", "needle in a cache dir\n")
	m("sub/cachefile/c.txt", "needle in cachefile\n")
	m("ign/keep.txt", "needle: a parent directory excluded cannot be re-included\n")
	m("apple.neg", "needle kept: [!ab] does not match a\n")
	m("cherry.neg", "needle ignored by [!ab]*.neg\n")
	m("x/foobar/y.txt", "needle ignored: foo** is foo*\n")
	m("x/foo/y.txt", "needle ignored: foo** matches foo\n")
	m("x/other/y.txt", "needle kept\n")
	m("z/f.txt", "needle kept: z/**/ names directories\n")
	m("z/d/f.txt", "needle ignored below z/d/\n")

	// A nested repository: its own rules apply below it.
	if err := os.MkdirAll(filepath.Join(root, "nested", ".git", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	w("nested/.gitignore", "*.nested\n")
	m("nested/a.nested", "needle ignored by the nested repo\n")
	m("nested/b.txt", "needle in nested repo\n")
	m("nested/c.tmp", "needle: does the parent repo's *.tmp apply in a nested repo?\n")
	m("nested/d.log", "needle: does the parent repo's *.log apply in a nested repo?\n")
	m("nested/excluded-by-info.txt", "needle: the outer info/exclude does not apply here\n")
	w("nested/.git/info/exclude", "own-exclude.txt\n")
	m("nested/own-exclude.txt", "needle excluded by the nested repo's info/exclude\n")
	m("nested/deeper/c.tmp", "needle deeper in the nested repo\n")

	// Hidden files and directories, denied paths, a symlink.
	m(".hidden.txt", "needle hidden\n")
	m(".hidden.go", "package hidden // needle\n")
	m(".hiddendir/x.txt", "needle in hidden dir\n")
	m("sub/.config/y.go", "needle hidden below\n")
	m("secrets/server.key", "needle in a key\n")
	m("secrets/id_rsa", "needle in a key\n")
	m("secrets/ok.txt", "needle next to keys\n")
	if err := os.Symlink("sub/other.log", filepath.Join(root, "link-to-file.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(root, "link-to-dir")); err != nil {
		t.Fatal(err)
	}

	// Text: metacharacters, UTF-8, case pairs, CRLF, BOM, invalid UTF-8.
	m("meta.txt", "a.b*c and a.bbbc\n(x|y) vs x|y\n[0-9]+ and 123\n\\d and d\n$HOME and HOME\n^start\nstart^start\n"+
		"-e is an option\n--files too\n$(touch /tmp/pwned)\n; rm -rf /\n`id`\n")
	m("regex.txt", "12 and 34\nneedle  two  spaces needle\nneedle\tx needlex\nfoo_bar9 x\nend.\n\n")
	m("sub/code.go", "package sub\n\nfunc Needle() string { return \"needle\" }\n// NEEDLE Needle nEEdle\n")
	m("sub/a/b/deep.txt", "needle deep text\nHello hello HELLO hElLo\n")
	m("sub/top.txt", "needle top of sub\n")
	m("zh.txt", "你好，世界\n这是中文文本，包含世界二字。\n世\n界\n中文 needle 混排\n")
	m("greek.txt", "ΣΟΦΟΣ σοφος σοφοσ ςσΣ\nΟΔΟΣ\nοδός\nαλφα ΑΛΦΑ\nÉcole école ÉCOLE\n")
	m("cyrillic.txt", "ЖУК жук Жук\nЖЖЖ жжж\nпривет ПРИВЕТ\n")
	m("fold.txt", "\u212Aelvin with a Kelvin sign\nkelvin KELVIN\n\u017Fun with a long s\nSUN sun\nſ alone\nK alone\n"+
		"Straße STRASSE STRAẞE\nµ micro Μ mu μ\nθ ϑ Θ ϴ\nİstanbul ıi\nÅngström \u212Angström\n")
	w("crlf.txt", "marker crlf.txt\r\nneedle crlf line\r\nsecond\r\nHello CRLF\r\nlast without newline\r")
	w("bom.txt", "\uFEFFstart of a BOM file needle\nmarker bom.txt\n^start\n")
	m("invalid.txt", "bad \xff\xfe bytes needle\nlatin1 caf\xe9 needle\n\xffx needle\nx\xc3 truncated\nreal \uFFFDx and x\uFFFD\n")

	// Long lines: over MaxLineText, and over the searcher's whole buffer.
	long := strings.Repeat("α", 240) + "needle" + strings.Repeat("β", 200) + " longtail"
	m("long.txt", long+"\nshort needle\n"+strings.Repeat("x", 600)+"needle at 600\n")
	huge := strings.Repeat("y", 300<<10) + "hugeneedle" + strings.Repeat("z", 50<<10)
	m("huge.txt", "first\n"+huge+"\nhugeneedle on the last line\n")

	// A file over 8 KiB (and over the 256 KiB buffer) with no NUL, with a
	// needle straddling the buffer boundary.
	var big strings.Builder
	big.WriteString("marker big.txt\n")
	for i := 0; big.Len() < bufferSize-40; i++ {
		fmt.Fprintf(&big, "line %d filler text needle%d\n", i, i%97)
	}
	big.WriteString(strings.Repeat("-", bufferSize-big.Len()-5) + "straddle-token\n")
	for i := 0; big.Len() < 600<<10; i++ {
		fmt.Fprintf(&big, "tail %d needle\n", i)
	}
	w("big.txt", big.String())

	// Binary: a NUL at the start (skipped by both), and late binary data
	// (compared on neither side).
	w("bin/start.bin", "\x00\x01needle marker bin/start.bin\n")
	w("bin/early.dat", "needle before an early NUL\nmarker bin/early.dat\n\x00 after\n")
	w("bin/late.dat", strings.Repeat("needle padding line\n", 1000)+"\x00binary\nneedle after\n")

	// Compressed files: searched only with -z by rg, compared in
	// TestDiffCompressed.
	diffWrite(t, root, "logs/old.log.gz", diffGzip(t, "marker logs/old.log.gz\nneedle compressed\n"))
	diffWrite(t, root, "logs/old.zst", diffZstd(t, "marker logs/old.zst\nneedle compressed\n"))
}

// diffCorpusQueries are the queries run on the generated corpus.
var diffCorpusQueries = []diffQuery{
	{query: "marker"},                   // every searched file
	{query: "MARKER", ignoreCase: true}, // every searched file, folded
	{query: "needle"},                   // frequent
	{query: "needle", ignoreCase: true}, // frequent, folded
	{query: "straddle-token"},           // rare, across the buffer boundary
	{query: "hugeneedle"},               // in a line longer than the buffer
	{query: "HUGENEEDLE", ignoreCase: true},
	{query: "longtail"},    // past MaxLineText
	{query: "absent-zzqx"}, // absent
	{query: "a.b*c"},       // metacharacters, literally
	{query: "(x|y)"},
	{query: "[0-9]+"},
	{query: `\d`},
	{query: "$HOME"},
	{query: "^start"},
	{query: "世界"}, // Chinese
	{query: "中文"},
	{query: "σοφος", ignoreCase: true}, // Greek: Σ σ ς
	{query: "ς", ignoreCase: true},
	{query: "οδος", ignoreCase: true},
	{query: "жук", ignoreCase: true}, // Cyrillic
	{query: "Ж", ignoreCase: true},
	{query: "école", ignoreCase: true},
	{query: "hello", ignoreCase: true}, // ASCII
	{query: "Hello"},
	{query: "kelvin", ignoreCase: true}, // K KELVIN SIGN
	{query: "k", ignoreCase: true},
	{query: "\u212A", ignoreCase: true},
	{query: "sun", ignoreCase: true}, // ſ LONG S
	{query: "ſ", ignoreCase: true},
	{query: "straße", ignoreCase: true}, // ß ẞ
	{query: "μ", ignoreCase: true},      // µ MICRO SIGN
	{query: "ϑ", ignoreCase: true},
	{query: "i", ignoreCase: true},        // İ ı fold to nothing ASCII
	{query: "ångström", ignoreCase: true}, // Å ANGSTROM SIGN
	{query: "x\uFFFD", ignoreCase: true},  // U+FFFD next to invalid UTF-8
	{query: "\uFFFDx", ignoreCase: true},
	{query: "\uFFFD"},
	{query: "bytes needle"}, // invalid UTF-8 on the line
	{query: "caf"},
	{query: "needle", glob: "*.go"},  // globs
	{query: "needle", glob: "*.log"}, // a glob names ignored files
	{query: "needle", glob: "sub/**/*.txt"},
	{query: "needle", ignoreCase: true, glob: "*.txt"},
	{query: "-e"}, // options and shell, as plain strings
	{query: "--files"},
	{query: "$(touch /tmp/pwned)"},
	{query: "; rm -rf /"},
	{query: "`id`"},
	{query: "needle", glob: "-e"},
	{query: "needle", glob: "--files"},
	{query: "needle", glob: "$(touch /tmp/pwned)"},
	{query: "needle", glob: "; rm -rf /"},
	{query: "needle", glob: "`id`"},
}

func TestDiffCorpus(t *testing.T) {
	pwned := watchPwned()
	root := t.TempDir()
	buildDiffCorpus(t, root)
	c := newDiffCorpus(t, root)
	if !c.exclude["bin/late.dat"] || len(c.exclude) != 1 {
		t.Fatalf("late-binary exclusions = %v, want only bin/late.dat", c.exclude)
	}
	for _, q := range diffCorpusQueries {
		n := c.compare(t, q, false)
		t.Logf("%v: %d lines", q, n)
	}
	// The corpus exercises what it claims: the rules both engines agree on
	// are really in force.
	searched := map[string]bool{}
	for h := range c.ourSearch(t, diffQuery{query: "marker"}, false) {
		searched[h.path] = true
	}
	for _, p := range []string{"keep.log", "sub/deep/reincluded.log", "sub/important.tmp", "sub/root-only.txt",
		"sub/build2/build", "a/gen/deeper/z.go", "nested/c.tmp", "apple.neg", "x/other/y.txt", "z/f.txt", "nested/excluded-by-info.txt", "crlf.txt", "bom.txt", "big.txt"} {
		if !searched[p] {
			t.Errorf("%s was not searched", p)
		}
	}
	for _, p := range []string{"drop.log", "build/out.txt", "sub/build/out.txt", "root-only.txt", "gen/x.go", "a/gen/y.go",
		"excluded-by-info.txt", "sub/local.txt", "sub/deep/anchored.txt", "docs/draft.md", "vendor/v.dat", "ign/keep.txt",
		"nested/a.nested", "nested/own-exclude.txt", "cherry.neg", "x/foobar/y.txt", "x/foo/y.txt", "z/d/f.txt", ".hidden.txt", "secrets/id_rsa", "link-to-file.txt", "bin/start.bin"} {
		if searched[p] {
			t.Errorf("%s was searched", p)
		}
	}
	pwned.check(t)
}

// TestDiffGoroot compares on a copy of $(go env GOROOT)/src: about 12,000
// real files, among them binary test data and .gz/.zst files.
func TestDiffGoroot(t *testing.T) {
	diffRipgrep(t) // fail before the copy when rg is missing
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("GOROOT/src: %v", err)
	}
	root := filepath.Join(t.TempDir(), "src")
	start := time.Now()
	diffRun(t, "/", "cp", "-R", "--no-preserve=all", "--", src, root)
	c := newDiffCorpus(t, root)
	t.Logf("copied %s in %v; %d files with late binary data excluded", src, time.Since(start).Round(time.Millisecond), len(c.exclude))
	queries := []diffQuery{
		{query: "func"},              // frequent
		{query: "Kelvin"},            // rare
		{query: "zzqx-absent-token"}, // absent
		{query: "fmt.Sprintf("},      // metacharacters
		{query: "[]byte("},
		{query: "$GOROOT"},
		{query: "Sprintf", glob: "*.go"}, // glob
		{query: "Errorf", glob: "net/**/*.go"},
		{query: "世界"},                                  // Chinese
		{query: "σ", ignoreCase: true},                 // Greek, folded
		{query: "Ж", ignoreCase: true},                 // Cyrillic, folded
		{query: "kelvin", ignoreCase: true},            // ASCII fold with K
		{query: "return err", ignoreCase: true},        // frequent, folded
		{query: "ioutil", ignoreCase: true},            // rare, folded
		{query: "zzqx-absent-token", ignoreCase: true}, // absent, folded
		{query: "-e"},
	}
	for _, q := range queries {
		qs := time.Now()
		n := c.compare(t, q, false)
		t.Logf("%v: %d lines in %v (both engines)", q, n, time.Since(qs).Round(time.Millisecond))
	}
}

// TestDiffCompressed compares `rg -z` on .gz (one and several members) and
// .zst (one and several frames) files next to plain ones.
func TestDiffCompressed(t *testing.T) {
	root := t.TempDir()
	var big strings.Builder
	for i := 0; big.Len() < 700<<10; i++ {
		fmt.Fprintf(&big, "record %d status=ok needle%d\r\n", i, i%101)
	}
	text := "needle plain\nHello 世界 ΣΟΦΟΣ\r\n" + strings.Repeat("w", 700) + " needle long\nlast needle"
	diffWrite(t, root, "plain.log", []byte(text))
	diffWrite(t, root, "a.log.gz", diffGzip(t, text))
	diffWrite(t, root, "multi.log.gz", diffGzip(t, "member one needle\nsecond line\n", "member two needle\nΣσς hello\n"))
	diffWrite(t, root, "big.log.gz", diffGzip(t, big.String()))
	diffWrite(t, root, "a.zst", diffZstd(t, text))
	diffWrite(t, root, "frames.log.zst", diffZstd(t, "frame one needle\n", "frame two needle\nЖук\n"))
	diffWrite(t, root, "big.zst", diffZstd(t, big.String()))
	// Made by the command-line tools too.
	diffWrite(t, root, "cli/app.log", []byte(text))
	diffRun(t, root, "gzip", "-k", "-n", "--", "cli/app.log")
	diffRun(t, root, "zstd", "-q", "-k", "--", "cli/app.log")
	c := newDiffCorpus(t, root)
	for _, q := range []diffQuery{
		{query: "needle"},
		{query: "NEEDLE", ignoreCase: true},
		{query: "needle57"},
		{query: "世界"},
		{query: "σοφος", ignoreCase: true},
		{query: "жук", ignoreCase: true},
		{query: "needle", glob: "*.gz"},
		{query: "absent-zzqx"},
	} {
		n := c.compare(t, q, true)
		t.Logf("%v: %d lines", q, n)
	}
	hits := c.ourSearch(t, diffQuery{query: "member two needle"}, true)
	if !hits[diffHit{path: "multi.log.gz", line: 3, text: "member two needle", compressed: true}] {
		t.Errorf("the second gzip member was not searched: %v", hits)
	}
}

// diffGzip compresses each part as one gzip member.
func diffGzip(t testing.TB, parts ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, p := range parts {
		zw := gzip.NewWriter(&b)
		if _, err := zw.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// diffZstd compresses each part as one zstd frame.
func diffZstd(t testing.TB, parts ...string) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	var out []byte
	for _, p := range parts {
		out = enc.EncodeAll([]byte(p), out)
	}
	return out
}
