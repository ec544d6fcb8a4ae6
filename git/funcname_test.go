package git

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/serverfs/serverfs/internal/unidiff"
)

// funcLangs are the files the hunk-header differential writes: a name, the
// driver its .gitattributes line selects ("" for none: git's default
// rule), and how a definition and a body line look in that language.
var funcLangs = []struct {
	file, driver string
	def          func(rng *rand.Rand, name string, depth int) string
	body         string
}{
	{"main.go", "golang", func(rng *rand.Rand, n string, d int) string {
		return oneOf(rng, "func "+n+"(a int) error {", "func (s *server) "+n+"(ctx context.Context) {", "type "+n+" struct {", "\ttype "+n+" interface {")
	}, "\tx := y + 1"},
	{"app.py", "python", func(rng *rand.Rand, n string, d int) string {
		return strings.Repeat("    ", d) + oneOf(rng, "def "+n+"(self):", "class "+n+"(Base):", "async def "+n+"():")
	}, "    return x"},
	{"Main.java", "java", func(rng *rand.Rand, n string, d int) string {
		return oneOf(rng, "public class "+n+" {", "  private static int "+n+"(String s) {", "  if (x) {", "  return new "+n+"();")
	}, "    int x = 1;"},
	{"lib.c", "cpp", func(rng *rand.Rand, n string, d int) string {
		return oneOf(rng, "static int "+n+"(void *p)", "label:", "struct "+n+" {", "int\n"+n+"(int a)")
	}, "\treturn 0;"},
	{"lib.rs", "rust", func(rng *rand.Rand, n string, d int) string {
		return oneOf(rng, "pub fn "+n+"() -> i32 {", "impl "+n+" for X {", "pub(crate) async fn "+n+"() {", "macro_rules! "+n+" {")
	}, "    let x = 1;"},
	{"app.rb", "ruby", func(rng *rand.Rand, n string, d int) string {
		return oneOf(rng, "def "+n, "class "+n+" < Base", "  module "+n)
	}, "  x = 1"},
	{"index.php", "php", func(rng *rand.Rand, n string, d int) string {
		return oneOf(rng, "public function "+n+"($a) {", "final class "+n+" {", "function "+n+"() {")
	}, "    $x = 1;"},
	{"run.sh", "bash", func(rng *rand.Rand, n string, d int) string {
		return oneOf(rng, n+"() {", "function "+n+" {", "  "+n+" ( ) (")
	}, "  echo x"},
	{"Prog.cs", "csharp", func(rng *rand.Rand, n string, d int) string {
		return oneOf(rng, "public class "+n, "    public async Task<int> "+n+"(int a)", "    if (x)", "namespace "+n)
	}, "        x++;"},
	{"ICASE.f90", "fortran", func(rng *rand.Rand, n string, d int) string {
		return oneOf(rng, "SUBROUTINE "+n+"(A)", "      function "+n+"(x)", "END SUBROUTINE "+n, "C comment "+n)
	}, "      X = 1"},
	{"notes.txt", "", func(rng *rand.Rand, n string, d int) string {
		return oneOf(rng, n+": a heading", "_"+n, "$"+n, "  indented "+n, "9 "+n)
	}, "  some text"},
	{"web.js", "custom", func(rng *rand.Rand, n string, d int) string {
		return oneOf(rng, "function "+n+"(a) {", "export const "+n+" = () => {", "  // "+n, "class "+n+" {")
	}, "  return a;"},
	{"old.tex", "oldbre", func(rng *rand.Rand, n string, d int) string {
		return oneOf(rng, "\\section{"+n+"}", "\\subsection*{"+n+"}", "% "+n)
	}, "text"},
	{"long.go", "golang", func(rng *rand.Rand, n string, d int) string {
		return "func " + n + strings.Repeat("Long", 20) + "(a, b, c int) (string, error) {   "
	}, "\treturn"},
}

func oneOf(rng *rand.Rand, opts ...string) string { return opts[rng.Intn(len(opts))] }

// genFuncFile writes a file of definitions and bodies in one language.
func genFuncFile(rng *rand.Rand, def func(*rand.Rand, string, int) string, body string) []string {
	var lines []string
	for i := range 3 + rng.Intn(12) {
		lines = append(lines, def(rng, fmt.Sprintf("f%d_%d", i, rng.Intn(100)), rng.Intn(3)))
		for range rng.Intn(12) {
			lines = append(lines, body)
		}
		if rng.Intn(3) == 0 {
			lines = append(lines, "")
		}
	}
	return lines
}

// mutateLines changes, inserts and deletes a few lines.
func mutateLines(rng *rand.Rand, lines []string, fresh func() string) []string {
	out := append([]string(nil), lines...)
	for range 1 + rng.Intn(4) {
		if len(out) == 0 {
			out = append(out, fresh())
			continue
		}
		i := rng.Intn(len(out))
		switch rng.Intn(3) {
		case 0:
			out[i] = fresh()
		case 1:
			out = append(out[:i], append([]string{fresh()}, out[i:]...)...)
		default:
			out = append(out[:i], out[i+1:]...)
		}
	}
	return out
}

// TestHunkHeadersMatchGit: the function text after each hunk's "@@" equals
// git's, byte for byte, in show (commits) and diff (work tree, index),
// with git's default rule, built-in drivers selected by .gitattributes,
// an xfuncname and an old-style funcname from the repository's
// configuration. Every mismatch names its seed.
func TestHunkHeadersMatchGit(t *testing.T) {
	orcNeedGit(t)
	orcSetHome(t)
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	withText := 0
	for seed := int64(1); seed <= int64(seeds); seed++ {
		withText += hunkHeaderCase(t, seed)
	}
	if withText == 0 {
		t.Fatal("no hunk header carried function text: the generator exercises nothing")
	}
	t.Logf("%d hunk headers with function text, all equal to git's", withText)
}

func hunkHeaderCase(t *testing.T, seed int64) int {
	rng := rand.New(rand.NewSource(seed))
	dir := t.TempDir()
	orcGit(t, dir, "init", "-q", "-b", "main")
	orcGit(t, dir, "config", "diff.custom.xfuncname", "!^[ \t]*//\n^[ \t]*((function|class|export)[ \t].*)$")
	orcGit(t, dir, "config", "diff.oldbre.funcname", `^\\\(sub\)*section.*$`)
	var attrs strings.Builder
	files := map[string][]string{}
	for _, l := range funcLangs {
		if l.driver != "" {
			fmt.Fprintf(&attrs, "%s diff=%s\n", l.file, l.driver)
		}
		files[l.file] = genFuncFile(rng, l.def, l.body)
	}
	write := func() {
		for name, lines := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte(attrs.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	write()
	orcGit(t, dir, "add", "-A")
	orcGit(t, dir, "commit", "-q", "-m", "one")
	mutate := func() {
		for _, l := range funcLangs {
			fresh := func() string {
				if rng.Intn(2) == 0 {
					return l.body
				}
				return l.def(rng, fmt.Sprintf("g%d", rng.Intn(1000)), rng.Intn(2))
			}
			files[l.file] = mutateLines(rng, files[l.file], fresh)
		}
		write()
	}
	mutate()
	orcGit(t, dir, "commit", "-q", "-a", "-m", "two")
	mutate()
	orcGit(t, dir, "add", "-A")
	mutate()

	r, err := Open(newWorkdirFS(t, "wd="+dir), "wd")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	show, err := r.Show(ctx, "HEAD", nil, MaxDiffBytes)
	if err != nil {
		t.Fatal(err)
	}
	n := compareHunkHeaders(t, seed, "show HEAD", show.Patch, orcGit(t, dir, "show", "--format=", "-p", "HEAD"))
	for _, staged := range []bool{false, true} {
		var names []string
		for _, l := range funcLangs {
			names = append(names, l.file)
		}
		res, err := r.Diff(ctx, staged, names, MaxDiffBytes)
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"diff"}
		if staged {
			args = append(args, "--cached")
		}
		n += compareHunkHeaders(t, seed, strings.Join(args, " "), res.Patch, orcGit(t, dir, args...))
	}
	return n
}

// compareHunkHeaders compares every file's hunks, headers included, and
// returns how many headers carried function text.
func compareHunkHeaders(t *testing.T, seed int64, what, ours, git string) int {
	t.Helper()
	want, got := patchHunks(git), patchHunks(ours)
	n := 0
	for hdr, h := range want {
		if got[hdr] != h {
			t.Errorf("seed %d: %s: %s: hunks differ from git's:\n git:\n%s\nours:\n%s", seed, what, hdr, h, got[hdr])
		}
		for _, l := range strings.Split(h, "\n") {
			if strings.HasPrefix(l, "@@ -") && !strings.HasSuffix(l, "@@") {
				n++
			}
		}
	}
	for hdr := range got {
		if _, ok := want[hdr]; !ok {
			t.Errorf("seed %d: %s: %s is in our patch only", seed, what, hdr)
		}
	}
	return n
}

// TestFuncNameHostile: a driver's patterns run in time linear in the line
// (RE2), so a 10 MB line and a pattern git would backtrack on cost no more
// than a scan; the text is cut to git's 80 bytes.
func TestFuncNameHostile(t *testing.T) {
	fn := patternFuncName("^(a+)+$\n^(([a-z]+[ \t]*)*[(].*)$", false)
	line := []byte(strings.Repeat("a", 10<<20) + "!\n")
	start := time.Now()
	if _, ok := fn(line); ok {
		t.Fatal("matched a line no pattern matches")
	}
	t.Logf("10 MB line: %v", time.Since(start))
	long := strings.Repeat("abc ", 100) + "(x)\n"
	if text, ok := fn([]byte(long)); !ok || text != strings.TrimSpace(long[:80]) {
		t.Fatalf("got %q %v; want the first 80 bytes, trailing space trimmed", text, ok)
	}
	if got, ok := unidiff.DefaultFuncName([]byte("func x() {   \t\r\n")); !ok || got != "func x() {" {
		t.Fatalf("default rule: %q %v", got, ok)
	}
	bad := patternFuncName("([unclosed", false)
	if _, ok := bad([]byte("anything\n")); ok {
		t.Fatal("a pattern that does not compile matched")
	}
}

// FuzzFuncNamePattern: any configured pattern and line give an answer,
// never a panic; the text is at most git's 80 bytes.
func FuzzFuncNamePattern(f *testing.F) {
	for _, d := range builtinDrivers {
		f.Add(d.pattern, "func main() {\n", d.icase)
	}
	f.Add(`^\(sub\)*sec[\]]tion\{`, "section{\n", false)
	f.Fuzz(func(t *testing.T, pattern, line string, icase bool) {
		for _, p := range []string{pattern, breToERE(pattern)} {
			if text, _ := patternFuncName(p, icase)([]byte(line)); len(text) > 80 {
				t.Fatalf("%d bytes of function text", len(text))
			}
		}
	})
}
