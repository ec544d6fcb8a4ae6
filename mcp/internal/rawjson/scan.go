// Package rawjson reads and writes JSON bytes without reflection, for the
// hot paths of the MCP server: a scanner over valid JSON, the checks the
// stdio transport makes before splicing bytes, and string quoting exactly as
// encoding/json and log/slog's JSON handler quote, and the splicing of
// pre-encoded content into encoded messages (Splicer). A leaf: it imports
// nothing of ServerFS.
package rawjson

import "bytes"

// PlainString: printable ASCII without quotes or backslashes, which JSON
// encodes as itself.
func PlainString[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// Compact reports whether the valid JSON b has no whitespace outside
// its strings.
func Compact(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			return false
		case '"':
			end := StringEnd(b, i)
			if end < 0 {
				return false
			}
			i = end
		}
	}
	return true
}

// StringEnd is the index of the quote closing the string whose opening
// quote is b[i], or -1.
func StringEnd(b []byte, i int) int {
	for j := i + 1; ; {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		bs := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			bs++
		}
		if bs%2 == 0 {
			return q
		}
		j = q + 1
	}
}

// MaxDepth is go-sdk's nesting limit for decoded JSON.
const MaxDepth = 1000

// TooDeep reports whether b nests objects and arrays deeper than go-sdk's
// decoder accepts (counted as go-sdk counts them).
func TooDeep(b []byte) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			end := StringEnd(b, i)
			if end < 0 {
				return false
			}
			i = end
		case '{', '[':
			if depth++; depth > MaxDepth {
				return true
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}

// Scanner walks valid JSON.
type Scanner struct {
	B []byte // the JSON
	I int    // the offset reached
}

// Space moves past white space.
func (p *Scanner) Space() {
	for p.I < len(p.B) {
		switch p.B[p.I] {
		case ' ', '\t', '\n', '\r':
			p.I++
		default:
			return
		}
	}
}

// Consume moves past white space and c, if c is next.
func (p *Scanner) Consume(c byte) bool {
	p.Space()
	if p.I < len(p.B) && p.B[p.I] == c {
		p.I++
		return true
	}
	return false
}

// Plain reads a string of printable ASCII without escapes and returns its
// bytes.
func (p *Scanner) Plain() ([]byte, bool) {
	if !p.Consume('"') {
		return nil, false
	}
	start := p.I
	k := bytes.IndexByte(p.B[start:], '"')
	if k < 0 {
		return nil, false
	}
	s := p.B[start : start+k]
	if !PlainString(s) {
		return nil, false
	}
	p.I = start + k + 1
	return s, true
}

// SkipValue moves past one value.
func (p *Scanner) SkipValue() bool {
	depth := 0
	for p.I < len(p.B) {
		c := p.B[p.I]
		switch c {
		case '"':
			end := StringEnd(p.B, p.I)
			if end < 0 {
				return false
			}
			p.I = end + 1
		case '{', '[':
			depth++
			p.I++
		case '}', ']':
			if depth == 0 {
				return true
			}
			depth--
			p.I++
		case ',':
			if depth == 0 {
				return true
			}
			p.I++
		case ' ', '\t', '\n', '\r':
			if depth == 0 {
				return true
			}
			p.I++
		default:
			p.I++
		}
		if depth == 0 && (c == '"' || c == '}' || c == ']') {
			return true
		}
	}
	return depth == 0
}
