package symbols

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// goRootSrc is GOROOT/src of the go command on PATH.
func goRootSrc(t testing.TB) string {
	t.Helper()
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(goroot)), "src")
}

// TestBraceScannerAgainstGoParser: the brace scanner, reading Go as it
// reads the other brace languages, finds the functions and methods the
// standard library's parser finds in GOROOT, with the same last line.
// It measures the scanner the languages without a parser here rely on.
func TestBraceScannerAgainstGoParser(t *testing.T) {
	root := goRootSrc(t)
	files, found, missed := 0, 0, 0
	var misses []string
	max := 3000
	if testing.Short() {
		max = 300
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || files >= max {
			return filepath.SkipDir
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		want, err := goOutline(context.Background(), src)
		if err != nil {
			return nil // not Go the parser accepts
		}
		files++
		got, err := scanOutline(context.Background(), braceSyntax(Go), src, DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		ends := map[string]int{}
		for _, s := range got {
			if s.Kind == "func" || s.Kind == "method" {
				ends[s.Name+"@"+itoa(s.End)] = 1
			}
		}
		lines := strings.Split(string(src), "\n")
		for _, s := range want {
			// Declarations without a body (assembly, linkname) hold no
			// block for the scanner to find.
			if s.Kind != "func" && s.Kind != "method" || !strings.Contains(lines[s.End-1], "}") {
				continue
			}
			if ends[s.Name+"@"+itoa(s.End)] == 1 {
				found++
			} else {
				missed++
				if len(misses) < 10 {
					rel, _ := filepath.Rel(root, p)
					misses = append(misses, rel+" "+s.QualifiedName()+" ends "+itoa(s.End))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rate := float64(found) / float64(found+missed)
	t.Logf("%d files: %d of %d functions and methods found with their last line (%.2f%%); missed, e.g.: %q", files, found, found+missed, 100*rate, misses)
	if rate < 0.98 {
		t.Errorf("the brace scanner agrees with go/parser on %.2f%% of the functions (want at least 98%%)", 100*rate)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestHostileInputs: a million nested brackets, a 7 MB line, strings and
// comments that never end, invalid UTF-8 and binary are answered within
// the limits, in time linear in the input, for every language.
func TestHostileInputs(t *testing.T) {
	k := 1 // the inputs' scale: 1/8 under the race detector (race_on_test.go)
	if raceOn {
		k = 8
	}
	inputs := map[string][]byte{
		"nested braces":       []byte(strings.Repeat("{", 1_000_000/k) + strings.Repeat("}", 1_000_000/k)),
		"nested parens":       []byte("f" + strings.Repeat("(", 1_000_000/k) + "{"),
		"minified line":       []byte(strings.Repeat("function a(){return{b:1}};", 7<<20/26/k)),
		"unterminated string": []byte("x = \"" + strings.Repeat("a{", 1<<20/k)),
		"unterminated block":  []byte("/* " + strings.Repeat("{\n", 1<<20/k)),
		"unterminated triple": []byte("'''" + strings.Repeat("def f():\n", 1<<17/k)),
		"invalid utf-8":       []byte(strings.Repeat("\xff\xfe{ class \xc3", 1<<18/k)),
		"many definitions":    []byte(strings.Repeat("def f():\n  pass\nfunction g() {}\n", 1<<16/k)),
		"braces in a call":    []byte("f(" + strings.Repeat("{}", 1_000_000/k)),
		"callbacks in a call": []byte("f(" + strings.Repeat("a => {}, x = 1, ", 300_000/k)),
		"statements, no ;":    []byte(strings.Repeat("a = b\nc = (d) => e\n", 300_000/k) + "{"),
		"here documents":      []byte(strings.Repeat("cat <<EOF <<'E2' <<-E3\n{\n", 200_000/k)),
		"nested templates":    []byte(strings.Repeat("`${{'/", 500_000/k)),
		"pairs in a call":     []byte("f({" + strings.Repeat("a: () => b, ", 300_000/k)),
	}
	for name, src := range inputs {
		for _, lang := range []Lang{Go, Python, JavaScript, TypeScript, Java, C, CPP, CSharp, Rust, Ruby, PHP, Shell} {
			// What one call allocates, garbage included (no collection
			// runs inside it at this size): the heap in use after it,
			// less the heap in use after a collection before it.
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			syms, _, err := Outline(ctx, lang, src, DefaultLimits)
			cancel()
			runtime.ReadMemStats(&after)
			if grown := int64(after.TotalAlloc - before.TotalAlloc); grown > 256<<20 && !raceOn {
				t.Errorf("%s, %s: one call allocated %d MiB", name, lang, grown>>20)
			}
			if grown := int64(after.HeapInuse) - int64(before.HeapInuse); grown > 64<<20 {
				t.Errorf("%s, %s: the heap in use grew by %d MiB", name, lang, grown>>20)
			}
			if err != nil {
				t.Errorf("%s, %s: %v", name, lang, err)
			}
			if len(syms) > DefaultLimits.MaxSymbols {
				t.Errorf("%s, %s: %d symbols", name, lang, len(syms))
			}
		}
	}
	if _, _, err := Outline(context.Background(), C, make([]byte, DefaultLimits.MaxBytes+1), DefaultLimits); err != ErrTooLarge {
		t.Errorf("over the size limit: %v", err)
	}
	if _, _, err := Outline(context.Background(), C, []byte("int main() {\x00}"), DefaultLimits); err != ErrBinary {
		t.Errorf("binary: %v", err)
	}
}

// FuzzOutline: any input in any language gives an outline whose every
// definition lies within the file and starts before it ends, and a code
// line flag for every line, or an error, never a panic.
