package glob

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
)

var patTokens = []string{"a", "b", "/", "*", "**", "?", "{", "}", ",", "[a-c]", "[!a]", "[ab]", "[!/]", "\\*", "\\", "é", "\uFFFD", "[", "]", "!", "-", "{**/,}", "**/", "/**", "Q", "[\\]]", "[a-]", "[--/]"}

func randFrom(r *rand.Rand, toks []string, max int) string {
	var b strings.Builder
	for n := r.IntN(max + 1); n > 0; n-- {
		b.WriteString(toks[r.IntN(len(toks))])
	}
	return b.String()
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
