package glob

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	gobwas "github.com/gobwas/glob"
)

var (
	patTokens  = []string{"a", "b", "/", "*", "**", "?", "{", "}", ",", "[a-c]", "[!a]", "[ab]", "[!/]", "\\*", "\\", "é", "\uFFFD", "[", "]", "!", "-", "{**/,}", "**/", "/**", "Q", "[\\]]", "[a-]", "[--/]"}
	pathTokens = []string{"a", "b", "c", "/", "é", "\xff", "\xc3", "*", "{", ",", "-", "!", "aa", "Q", "\uFFFD", "ab/", "/", "]"}
)

func randFrom(r *rand.Rand, toks []string, max int) string {
	var b strings.Builder
	for n := r.IntN(max + 1); n > 0; n-- {
		b.WriteString(toks[r.IntN(len(toks))])
	}
	return b.String()
}

func oldCompile(p string) (*gobwas.Pattern, error) {
	return gobwas.Compiler{Separators: []rune{'/'}, Globstar: true}.Compile(p)
}

// oldTree reads the matcher tree gobwas compiled (unexported fields, read
// by reflection) back into this package's nodes: the meaning of the old
// pattern, independent of gobwas's backtracking matcher.
func oldTree(p *gobwas.Pattern) node {
	return fromMatcher(reflect.ValueOf(p).Elem().FieldByName("m").Elem())
}

func fromMatcher(v reflect.Value) node {
	star := func(sep string) node { return nStar{super: sep == ""} }
	children := func() []node {
		var out []node
		for i := range v.Len() {
			out = append(out, fromMatcher(v.Index(i).Elem()))
		}
		return out
	}
	switch t := v.Type().String(); t {
	case "glob.multiMatcher":
		return nSeq(children())
	case "glob.altMatcher", "glob.tailAltMatcher":
		return nAlt(children())
	case "*glob.voidMatcher":
		return nVoid{}
	}
	e := v.Elem()
	str := func(name string) string { return e.FieldByName(name).String() }
	switch t := v.Type().String(); t {
	case "*glob.textMatcher":
		return nText{str("Text")}
	case "*glob.charMatcher":
		return nAny1{}
	case "*glob.starMatcher":
		return star(str("SepStr"))
	case "*glob.runeRangeMatcher":
		return nClass{ranged: true, lo: rune(e.FieldByName("Lo").Int()), hi: rune(e.FieldByName("Hi").Int()), not: e.FieldByName("Not").Bool()}
	case "*glob.runeSetMatcher":
		c := nClass{not: e.FieldByName("Not").Bool()}
		for _, k := range e.FieldByName("Set").MapKeys() {
			c.set = append(c.set, rune(k.Int()))
		}
		return c
	case "*glob.prefixMatcher":
		return nSeq{nText{str("Text")}, star(str("Sep"))}
	case "*glob.suffixMatcher":
		return nSeq{star(str("Sep")), nText{str("Text")}}
	case "*glob.prefixSuffixMatcher":
		return nSeq{nText{str("Prefix")}, star(str("Sep")), nText{str("Suffix")}}
	case "*glob.containsMatcher":
		return nSeq{nStar{super: true}, nText{str("Text")}, nStar{super: true}}
	default:
		panic("unknown gobwas matcher " + t)
	}
}

// automaton compiles a node with this package's automaton, without the
// shortcuts; small selects the bit-set form when it fits.
func automaton(n node, small bool) *Pattern {
	p := &Pattern{}
	c := &compiler{}
	m := c.emit(inst{op: opMatch})
	p.pc = c.compile(n, m)
	p.prog = c.prog
	if small {
		p.prepareSmall()
	}
	return p
}

// toRegexp translates a node to an RE2 expression: an oracle for the
// automaton that shares nothing with it (valid for UTF-8 inputs: RE2
// reads an invalid byte as U+FFFD).
func toRegexp(n node) string {
	switch v := n.(type) {
	case nVoid:
		return ""
	case nText:
		return regexp.QuoteMeta(v.s)
	case nAny1:
		return `[^/]`
	case nStar:
		if v.super {
			return `(?s:.*)`
		}
		return `[^/]*`
	case nClass:
		neg := ""
		if v.not {
			neg = "^"
		}
		if v.ranged {
			return fmt.Sprintf(`[%s\x{%x}-\x{%x}]`, neg, v.lo, v.hi)
		}
		var b strings.Builder
		for _, r := range v.set {
			fmt.Fprintf(&b, `\x{%x}`, r)
		}
		return "[" + neg + b.String() + "]"
	case nSeq:
		var b strings.Builder
		for _, c := range v {
			b.WriteString(toRegexp(c))
		}
		return b.String()
	case nAlt:
		var parts []string
		for _, c := range v {
			parts = append(parts, toRegexp(c))
		}
		return "(?:" + strings.Join(parts, "|") + ")"
	}
	panic("unknown node")
}

// sample writes a string the node likely matches (or nearly does).
func sample(r *rand.Rand, n node, b *strings.Builder) {
	switch v := n.(type) {
	case nText:
		b.WriteString(v.s)
	case nAny1:
		b.WriteString([]string{"a", "é", "\xff", "/", "\uFFFD"}[r.IntN(5)])
	case nStar:
		for k := r.IntN(4); k > 0; k-- {
			b.WriteString([]string{"a", "b", "/", "é", "Q", "\xff"}[r.IntN(6)])
		}
	case nClass:
		if v.ranged {
			b.WriteRune(v.lo + rune(r.IntN(int(v.hi-v.lo)+1)))
		} else {
			b.WriteRune(v.set[r.IntN(len(v.set))])
		}
		if r.IntN(4) == 0 {
			b.WriteString("/")
		}
	case nSeq:
		for _, c := range v {
			sample(r, c, b)
		}
	case nAlt:
		sample(r, v[r.IntN(len(v))], b)
	}
}

// TestDifferential compares Compile and Match with gobwas/glob v1.1.0
// (separator '/', globstar), which ServerFS used before, on generated
// patterns and paths: the same patterns compile, and every match agrees
// with the meaning of gobwas's compiled tree (run through this package's
// automaton, and through RE2 for UTF-8 paths). gobwas's own backtracking
// matcher is counted, not trusted: it misses some matches.
func TestDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 100000
	if testing.Short() {
		n = 5000
	}
	compiled, cases, matched, oldWrong := 0, 0, 0, 0
	for range n {
		pat := randFrom(r, patTokens, 12)
		old, oerr := oldCompile(pat)
		neu, nerr := Compile(pat)
		if (oerr == nil) != (nerr == nil) {
			t.Fatalf("compile %q: gobwas err=%v, new err=%v", pat, oerr, nerr)
		}
		if oerr != nil {
			continue
		}
		compiled++
		tree := oldTree(old)
		small, large := automaton(tree, true), automaton(tree, false)
		re := regexp.MustCompile("^" + toRegexp(tree) + "$")
		mine, _ := parse(pat)
		mine, _ = globstar(mine, true)
		for range 20 {
			var b strings.Builder
			if r.IntN(3) == 0 {
				b.WriteString(randFrom(r, pathTokens, 10))
			} else {
				sample(r, mine, &b)
			}
			s := b.String()
			want := small.Match(s)
			cases++
			if want {
				matched++
			}
			if got := neu.Match(s); got != want {
				t.Fatalf("pattern %q path %q: gobwas's tree %v, new %v", pat, s, want, got)
			}
			if l := large.Match(s); l != want {
				t.Fatalf("pattern %q path %q: bit-set automaton %v, general %v", pat, s, want, l)
			}
			if utf8.ValidString(s) {
				if rm := re.MatchString(s); rm != want {
					t.Fatalf("pattern %q path %q: automaton %v, RE2 %v (%s)", pat, s, want, rm, re)
				}
			}
			if old.Match(s) != want {
				oldWrong++
			}
		}
	}
	t.Logf("%d patterns compiled, %d cases, %d matches; gobwas's matcher wrong on %d", compiled, cases, matched, oldWrong)
}

// TestWriteGolden writes testdata/gobwas.txt (GLOB_WRITE_GOLDEN=1): generated
// patterns with gobwas's verdict on compiling, and paths with the verdict of
// gobwas's compiled tree.
func TestWriteGolden(t *testing.T) {
	if os.Getenv("GLOB_WRITE_GOLDEN") == "" {
		t.Skip("GLOB_WRITE_GOLDEN not set")
	}
	r := rand.New(rand.NewPCG(7, 8))
	var b strings.Builder
	b.WriteString("# Generated by TestWriteGolden (commit a0fe61b and its successor) from github.com/gobwas/glob v1.1.0\n")
	b.WriteString("# compiled with separator '/' and globstar: P pattern compiles, E it does not;\n")
	b.WriteString("# + path matches and - path does not, by the meaning of gobwas's compiled tree.\n")
	valid, invalid := 0, 0
	seen := map[string]bool{}
	extra := []string{"/**{**/,}a**/**/a}]/**", "?***{**/,}Q/**[!/]/**", "[a-c]**{**/,}a**/a[a-c]/**{**/,}", strings.Repeat("{**/,*}", 4) + "*/*/{*Q,Q*}", "*.go", "src/**/*.go", "**/x", "a/**/b", "a/**", "**", "{**/,}x", "x/{**/,}y", "[!/]*", "[\\-x]", "[a-]]", "{}", "{,}", "a{}b", "}{", ",", "\\", "[]", "[!]", "é?", "\uFFFD*"}
	for len(extra) > 0 || valid < 800 || invalid < 300 {
		var pat string
		if len(extra) > 0 {
			pat, extra = extra[0], extra[1:]
		} else {
			pat = randFrom(r, patTokens, 12)
		}
		if seen[pat] {
			continue
		}
		seen[pat] = true
		old, err := oldCompile(pat)
		if err != nil {
			if invalid >= 300 {
				continue
			}
			invalid++
			fmt.Fprintf(&b, "E %s\n", strconv.Quote(pat))
			continue
		}
		if valid >= 800 {
			continue
		}
		valid++
		fmt.Fprintf(&b, "P %s\n", strconv.Quote(pat))
		tree := oldTree(old)
		mine, _ := parse(pat)
		mine, _ = globstar(mine, true)
		m := automaton(tree, false)
		for range 10 {
			var sb strings.Builder
			if r.IntN(3) == 0 {
				sb.WriteString(randFrom(r, pathTokens, 10))
			} else {
				sample(r, mine, &sb)
			}
			v, note := "-", ""
			if m.Match(sb.String()) {
				v = "+"
			}
			if old.Match(sb.String()) != (v == "+") {
				note = " # gobwas's backtracking matcher disagreed"
			}
			fmt.Fprintf(&b, "%s %s%s\n", v, strconv.Quote(sb.String()), note)
		}
	}
	if err := os.WriteFile("testdata/gobwas.txt", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
