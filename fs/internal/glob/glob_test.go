package glob

import (
	"bufio"
	"errors"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestGolden replays testdata/gobwas.txt: what gobwas/glob v1.1.0 (the
// matcher ServerFS used before) said about generated patterns and paths,
// recorded by TestWriteGolden (glob/diff_test.go, commit 75f1703) before the
// dependency was dropped. The same patterns compile, and every path
// matches as the meaning of gobwas's compiled tree says (where gobwas's
// backtracking matcher itself missed a match, the line says so).
func TestGolden(t *testing.T) {
	f, err := os.Open("testdata/gobwas.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var p *Pattern
	var pat string
	patterns, paths := 0, 0
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || text[0] == '#' {
			continue
		}
		q, err := strconv.QuotedPrefix(text[2:])
		if err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		s, _ := strconv.Unquote(q)
		switch text[0] {
		case 'P', 'E':
			pat, patterns = s, patterns+1
			var err error
			p, err = Compile(s)
			if (err == nil) != (text[0] == 'P') {
				t.Fatalf("line %d: Compile(%q) = %v, gobwas said %c", line, s, err, text[0])
			}
		case '+', '-':
			paths++
			if got := p.Match(s); got != (text[0] == '+') {
				t.Errorf("line %d: pattern %q path %q: got %v", line, pat, s, got)
			}
		default:
			t.Fatalf("line %d: %q", line, text)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if patterns < 1000 || paths < 8000 {
		t.Fatalf("only %d patterns and %d paths", patterns, paths)
	}
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pattern string
		yes, no []string
	}{
		{"*.go", []string{"a.go", ".go"}, []string{"a/b.go", "a.gox"}},
		{"src/**/*.go", []string{"src/a.go", "src/x/y/a.go"}, []string{"src/a.c", "lib/a.go"}},
		{"**/x", []string{"x", "a/x", "a/b/x"}, []string{"ax", "a/bx"}},
		{"a/**/b", []string{"a/b", "a/x/b", "a/x/y/b"}, []string{"ab", "a/xb"}},
		{"a/**", []string{"a/", "a/b", "a/b/c"}, []string{"a", "b/a"}},
		{"?", []string{"a", "é", "\xff"}, []string{"", "/", "ab"}},
		{"[a-c]x", []string{"ax", "cx"}, []string{"dx", "Ax"}},
		{"[!a-c]x", []string{"dx", "/x"}, []string{"ax"}},
		{"[!/]", []string{"a"}, []string{"/"}},
		{"{a,b/c}", []string{"a", "b/c"}, []string{"b", "ab/c"}},
		{"{}x{,}", []string{"x"}, []string{""}},
		{"\\*", []string{"*"}, []string{"a"}},
		{"a}b,c", []string{"a}b,c"}, nil},
		{"\uFFFD", []string{"\uFFFD"}, []string{"\xff"}},
		{"[\uFFFD]", []string{"\uFFFD", "\xff"}, []string{"a"}},
		// "**/" matches zero segments only where a segment starts.
		{"x**/y", []string{"x/y", "xa/b/y"}, []string{"xy"}},
		{"x/**/y", []string{"x/y", "x/a/b/y"}, []string{"xy"}},
		{"{**/,*}y", []string{"y", "a/b/y", "ay"}, []string{"a/by"}},
	} {
		p, err := Compile(c.pattern)
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		for _, s := range c.yes {
			if !p.Match(s) {
				t.Errorf("%q should match %q", c.pattern, s)
			}
		}
		for _, s := range c.no {
			if p.Match(s) {
				t.Errorf("%q should not match %q", c.pattern, s)
			}
		}
	}
}

func TestLimits(t *testing.T) {
	for _, c := range []struct {
		pattern string
		limit   bool
	}{
		{strings.Repeat("{a,", MaxBraceDepth) + "b" + strings.Repeat("}", MaxBraceDepth), false},
		{strings.Repeat("{a,", MaxBraceDepth+1) + "b" + strings.Repeat("}", MaxBraceDepth+1), true},
		{strings.Repeat("{a,b}", MaxAlternatives/2), false},
		{strings.Repeat("{a,b}", MaxAlternatives/2) + "{c}", true},
		{strings.Repeat("*", MaxPatternBytes), false},
		{strings.Repeat("*", MaxPatternBytes+1), true},
	} {
		_, err := Compile(c.pattern)
		var ge *Error
		if got := errors.As(err, &ge) && ge.Limit; got != c.limit {
			t.Errorf("%.30q (%d bytes): %v, want limit=%v", c.pattern, len(c.pattern), err, c.limit)
		}
	}
}

// TestLinear: the exponential families of backtracking matchers, and the
// largest automaton the limits allow, match in time proportional to the
// input. Bounds are loose (2-core CI under -race): a backtracking matcher
// takes minutes to hours here.
func TestLinear(t *testing.T) {
	path := "aaaaaaaa/bbbbbbbb/cccccccc/dddddddd/eeeeeeee"
	long := strings.Repeat("a", 200)
	for _, c := range []struct{ pattern, s string }{
		{strings.Repeat("{**/,*}", 10) + "*/*/{*Q,Q*}", path},
		{strings.Repeat("*a", 100) + "*b*", long},
		{strings.Repeat("?*", 100) + "b*", long},
		{strings.Repeat("*{a,}", 100) + "*b*", long},
		{strings.Repeat("**/", 50) + strings.Repeat("*a", 50) + "*b*", path + "/" + long},
		{strings.Repeat("{a,", 8) + strings.Repeat("*a", 40) + "*b*" + strings.Repeat("}", 8), long},
		{strings.Repeat("*[a]", 200), strings.Repeat(long+"/", 20)},
	} {
		p, err := Compile(c.pattern)
		if err != nil {
			t.Fatalf("%.30q: %v", c.pattern, err)
		}
		start := time.Now()
		p.Match(c.s)
		if took := time.Since(start); took > time.Second {
			t.Errorf("%.30q on %d bytes took %s", c.pattern, len(c.s), took)
		}
	}
}

// FuzzMatch checks the automaton against RE2 on what the pattern parses
// to (UTF-8 inputs), and the bit-set form against the general one.
func FuzzMatch(f *testing.F) {
	for _, s := range []string{"*.go", "src/**/*.go", "{**/,*}x", "[!a-c]?", "a{b,{c,}}*", "\\*"} {
		f.Add(s, "src/a/b.go")
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		p, err := Compile(pattern)
		if err != nil {
			return
		}
		tree, _ := parse(pattern)
		tree, _ = globstar(tree, true)
		want := automaton(tree, false).Match(s)
		if got := p.Match(s); got != want {
			t.Fatalf("pattern %q path %q: Match %v, general automaton %v", pattern, s, got, want)
		}
		if small := automaton(tree, true); small.small && small.Match(s) != want {
			t.Fatalf("pattern %q path %q: bit-set automaton disagrees", pattern, s)
		}
		if utf8.ValidString(s) {
			re := regexp.MustCompile("^" + toRegexp(tree) + "$")
			if re.MatchString(s) != want {
				t.Fatalf("pattern %q path %q: automaton %v, RE2 %s disagrees", pattern, s, want, re)
			}
		}
	})
}

// TestAgainstRE2 runs generated cases through FuzzMatch's checks.
func TestAgainstRE2(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		pat := randFrom(r, patTokens, 12)
		p, err := Compile(pat)
		if err != nil {
			continue
		}
		tree, _ := parse(pat)
		tree, _ = globstar(tree, true)
		re := regexp.MustCompile("^" + toRegexp(tree) + "$")
		small, large := automaton(tree, true), automaton(tree, false)
		for range 10 {
			var b strings.Builder
			sample(r, tree, &b)
			s := b.String()
			want := large.Match(s)
			if p.Match(s) != want || small.Match(s) != want {
				t.Fatalf("pattern %q path %q: forms disagree", pat, s)
			}
			if utf8.ValidString(s) && re.MatchString(s) != want {
				t.Fatalf("pattern %q path %q: automaton %v, RE2 %s disagrees", pat, s, want, re)
			}
		}
	}
}
