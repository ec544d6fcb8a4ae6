// Package glob compiles the glob patterns ServerFS accepts (find_files,
// search_text's glob, the deny list) into a non-backtracking automaton:
// matching takes time linear in the input for a given pattern (at most
// O(len(pattern) × len(input)) steps), whatever the pattern.
//
// The syntax and meaning are those of github.com/gobwas/glob v1.1.0
// compiled with '/' as the only separator and globstar on, which ServerFS
// used before; gobwas matches by backtracking, which a crafted pattern
// such as `{**/,*}{**/,*}…` drives into exponential time.
//
//	pattern  matches
//	*        any sequence of characters but '/'
//	**       any sequence of characters, '/' included; "**/" at the start
//	         of a segment matches zero or more whole segments
//	?        any one character but '/'
//	[abc]    one of the listed characters ([!abc]: any other, '/' included)
//	[a-z]    one character in the range ([!a-z]: outside it)
//	{a,b}    one of the comma-separated alternatives (they may nest)
//	\c       the character c itself
//
// Characters are UTF-8 decoded the way utf8.DecodeRuneInString does (an
// invalid byte is one U+FFFD character, which a literal U+FFFD in the
// pattern does not match). It is a leaf package: it imports nothing of
// ServerFS.
package glob

import (
	"fmt"
	"unicode/utf8"
)

// Limits on what Compile accepts. A pattern within them compiles to at most
// a few thousand automaton states; matching costs states × input length.
const (
	MaxPatternBytes = 1024 // pattern length
	MaxBraceDepth   = 8    // nesting of {…} groups
	MaxAlternatives = 256  // alternatives of all {…} groups together
)

// Error is a pattern that does not compile: Offset is the byte offset in
// the pattern where the problem was found.
type Error struct {
	Offset int
	Reason string
	// Limit is true when the pattern is well-formed but over one of the
	// limits above.
	Limit bool
}

func (e *Error) Error() string {
	if e.Limit {
		return e.Reason
	}
	return fmt.Sprintf("syntax error at byte %d: %s", e.Offset, e.Reason)
}

// node is the parsed pattern, in the shape gobwas gives it before
// matching, so that the globstar rule (which depends on that shape) is
// applied the same way.
type node interface{}

type (
	nText  struct{ s string } // a literal, never empty
	nAny1  struct{}           // ?
	nStar  struct{ super bool }
	nClass struct {
		not    bool
		ranged bool // [lo-hi]; otherwise set
		lo, hi rune
		set    []rune
	}
	nSeq  []node
	nAlt  []node
	nVoid struct{}
)

// parser reads the pattern token by token the way gobwas's lexer does,
// building sequences and alternative groups as its stack-based parser does.
type parser struct {
	src   string
	pos   int
	depth int // open {…} groups
	alts  int
}

func (p *parser) fail(reason string) error { return &Error{Offset: p.pos, Reason: reason} }

// peek decodes the rune at pos without consuming it; w is 0 at the end.
func (p *parser) peek() (rune, int, error) {
	if p.pos >= len(p.src) {
		return 0, 0, nil
	}
	r, w := utf8.DecodeRuneInString(p.src[p.pos:])
	if r == utf8.RuneError && w == 1 {
		return 0, 0, p.fail("invalid UTF-8 sequence")
	}
	return r, w, nil
}

func (p *parser) read() (rune, bool, error) {
	r, w, err := p.peek()
	if err != nil || w == 0 {
		return 0, false, err
	}
	p.pos += w
	return r, true, nil
}

// group is one {…} being parsed: the finished alternatives and the terms
// of the current one.
type group struct {
	alts  nAlt
	terms nSeq
}

func parse(src string) (node, error) {
	if len(src) > MaxPatternBytes {
		return nil, &Error{Reason: fmt.Sprintf("is longer than %d bytes", MaxPatternBytes), Limit: true}
	}
	p := &parser{src: src}
	stack := []*group{{}} // stack[0] is the top level
	top := func() *group { return stack[len(stack)-1] }
	for {
		r, ok, err := p.read()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		switch {
		case r == '{':
			if p.depth == MaxBraceDepth {
				return nil, &Error{Offset: p.pos - 1, Reason: fmt.Sprintf("nests {…} deeper than %d levels", MaxBraceDepth), Limit: true}
			}
			p.depth++
			stack = append(stack, &group{})
			if err := p.countAlt(); err != nil {
				return nil, err
			}
		case r == ',' && p.depth > 0:
			g := top()
			g.alts = append(g.alts, g.terms)
			g.terms = nil
			if err := p.countAlt(); err != nil {
				return nil, err
			}
		case r == '}' && p.depth > 0:
			g := top()
			g.alts = append(g.alts, g.terms)
			stack = stack[:len(stack)-1]
			p.depth--
			top().terms = append(top().terms, g.alts)
		case r == '[':
			c, err := p.class()
			if err != nil {
				return nil, err
			}
			top().terms = append(top().terms, c)
		case r == '?':
			top().terms = append(top().terms, nAny1{})
		case r == '*':
			super := false
			if n, w, err := p.peek(); err != nil {
				return nil, err
			} else if w > 0 && n == '*' {
				p.pos += w
				super = true
			}
			top().terms = append(top().terms, nStar{super: super})
		default:
			p.pos -= utf8.RuneLen(r)
			breakers := "?*[{"
			if p.depth > 0 {
				breakers = "?*[{},"
			}
			s, err := p.text(breakers)
			if err != nil {
				return nil, err
			}
			top().terms = append(top().terms, nText{s})
		}
	}
	if p.depth > 0 {
		return nil, p.fail("unclosed `{`")
	}
	return simplify(stack[0].terms), nil
}

func (p *parser) countAlt() error {
	p.alts++
	if p.alts > MaxAlternatives {
		return &Error{Offset: p.pos - 1, Reason: fmt.Sprintf("has more than %d {…} alternatives", MaxAlternatives), Limit: true}
	}
	return nil
}

// text reads literal characters up to an unescaped breaker or the end.
func (p *parser) text(breakers string) (string, error) {
	var b []byte
	escaped := false
	for {
		r, w, err := p.peek()
		if err != nil {
			return "", err
		}
		if w == 0 {
			if escaped {
				return "", p.fail("trailing backslash")
			}
			break
		}
		if !escaped {
			if r == '\\' {
				escaped = true
				p.pos += w
				continue
			}
			if containsRune(breakers, r) {
				break
			}
		}
		escaped = false
		b = utf8.AppendRune(b, r)
		p.pos += w
	}
	return string(b), nil
}

func containsRune(s string, r rune) bool {
	for _, c := range s {
		if c == r {
			return true
		}
	}
	return false
}

// class reads a character class after its '['. As in gobwas it is either
// exactly one range "[lo-hi]" (lo and hi taken verbatim, no escapes) or a
// set of characters with escapes, either one optionally negated by a
// leading '!'.
func (p *parser) class() (node, error) {
	c := nClass{}
	seenNot := false
	for {
		r, ok, err := p.read()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, p.fail("unclosed `[`")
		}
		if !seenNot && r == '!' {
			c.not, seenNot = true, true
			continue
		}
		if n, w, err := p.peek(); err != nil {
			return nil, err
		} else if w > 0 && n == '-' {
			p.pos += w
			hi, ok, err := p.read()
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, p.fail("unclosed `[`")
			}
			if err := p.closeClass(); err != nil {
				return nil, err
			}
			if hi < r {
				return nil, p.fail("range hi character is less than lo")
			}
			c.ranged, c.lo, c.hi = true, r, hi
			return c, nil
		}
		p.pos -= utf8.RuneLen(r)
		s, err := p.text("]")
		if err != nil {
			return nil, err
		}
		if err := p.closeClass(); err != nil {
			return nil, err
		}
		if s == "" {
			return nil, p.fail("empty character class")
		}
		c.set = []rune(s)
		return c, nil
	}
}

func (p *parser) closeClass() error {
	r, ok, err := p.read()
	switch {
	case err != nil:
		return err
	case !ok:
		return p.fail("unclosed `[`")
	case r != ']':
		return p.fail("expected `]`")
	}
	return nil
}

// simplify is gobwas's: bottom up, sequences are flattened, voids dropped,
// adjacent literals merged and adjacent stars coalesced into the most
// general; a sequence or group of one is that one, an empty sequence is a
// void.
func simplify(n node) node {
	switch v := n.(type) {
	case nSeq:
		var out nSeq
		var push func(m node)
		push = func(m node) {
			switch m := m.(type) {
			case nSeq:
				for _, c := range m {
					push(c)
				}
				return
			case nVoid:
				return
			case nText:
				if k := len(out); k > 0 {
					if prev, ok := out[k-1].(nText); ok {
						out[k-1] = nText{prev.s + m.s}
						return
					}
				}
			case nStar:
				if k := len(out); k > 0 {
					if prev, ok := out[k-1].(nStar); ok {
						out[k-1] = nStar{super: prev.super || m.super}
						return
					}
				}
			}
			out = append(out, m)
		}
		for _, c := range v {
			push(simplify(c))
		}
		switch len(out) {
		case 0:
			return nVoid{}
		case 1:
			return out[0]
		}
		return out
	case nAlt:
		out := make(nAlt, len(v))
		for i, c := range v {
			out[i] = simplify(c)
		}
		if len(out) == 1 {
			return out[0]
		}
		return out
	}
	return n
}

// globstar rewrites a "**" that begins a segment and is followed by a
// literal starting with '/' into an optional run of segments, {**/,}, with
// gobwas's notion of "begins a segment" (start): the pattern's start, or
// after a literal ending in '/', a rewritten "**/", or a group all of whose
// alternatives end so. It reports whether n ends at a segment start.
func globstar(n node, start bool) (node, bool) {
	switch v := n.(type) {
	case nAlt:
		end := true
		out := make(nAlt, len(v))
		for i, c := range v {
			var e bool
			out[i], e = globstar(c, start)
			end = end && e
		}
		return out, end
	case nSeq:
		v = append(nSeq(nil), v...)
		var out nSeq
		merged := false // out ends with a rewritten {**/,}
		for i := 0; i < len(v); i++ {
			if rest, ok := splitGlobstar(v, i); start && ok {
				if !merged {
					out = append(out, nAlt{nSeq{nStar{super: true}, nText{"/"}}, nVoid{}})
					merged = true
				}
				if rest != "" {
					v[i+1] = nText{rest}
				} else {
					i++
				}
				continue
			}
			merged = false
			var c node
			c, start = globstar(v[i], start)
			out = append(out, c)
		}
		if len(out) == 1 {
			return out[0], start
		}
		return out, start
	case nText:
		return v, v.s[len(v.s)-1] == '/'
	case nVoid:
		return v, start
	}
	return n, false
}

// splitGlobstar reports whether v[i] is "**" followed by a literal that
// starts with '/', and returns the rest of that literal.
func splitGlobstar(v nSeq, i int) (string, bool) {
	if i+1 >= len(v) {
		return "", false
	}
	if s, ok := v[i].(nStar); !ok || !s.super {
		return "", false
	}
	t, ok := v[i+1].(nText)
	if !ok || t.s[0] != '/' {
		return "", false
	}
	return t.s[1:], true
}
