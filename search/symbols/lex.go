package symbols

import (
	"bytes"
	"unicode/utf8"
)

// What the brace scanner passes over as text: comments, directives,
// strings (raw, verbatim, with shell substitutions) and characters.

// lineStart reports whether only blanks precede src[i] on its line.
func lineStart(src []byte, i int) bool {
	for j := i - 1; j >= 0 && src[j] != '\n'; j-- {
		if src[j] != ' ' && src[j] != '\t' {
			return false
		}
	}
	return true
}

// skipDirective returns the index of the newline ending the directive at
// i (lines continued by a backslash included), counting lines.
func (s *braceScan) skipDirective(i int) int {
	for j := i; j < len(s.src); j++ {
		if s.src[j] == '\n' {
			if j > 0 && s.src[j-1] == '\\' {
				s.line++
				continue
			}
			return j
		}
	}
	return len(s.src)
}

// skipTo returns the index just past the next end at or after i (counting
// lines), or len(src) when there is none.
func (s *braceScan) skipTo(i int, end string) int {
	j := bytes.Index(s.src[i:], []byte(end))
	if j < 0 {
		s.line += bytes.Count(s.src[i:], newline)
		return len(s.src)
	}
	s.line += bytes.Count(s.src[i:i+j], newline)
	if end == "\n" {
		return i + j
	}
	return i + j + len(end) - 1
}

// skipString returns the index of the quote closing the string opened at
// i (backslash escapes; a shell single-quoted string has none).
func (s *braceScan) skipString(i int, q byte) int {
	if q == '"' {
		if end, ok := s.skipRawString(i); ok {
			return end
		}
	}
	if q == '`' && (s.syn.lang == JavaScript || s.syn.lang == TypeScript) {
		return s.skipTemplate(i)
	}
	escapes := !(s.syn.lang == Shell && q == '\'') && !(s.syn.lang == Go && q == '`')
	for j := i + 1; j < len(s.src); j++ {
		if s.syn.lang == Shell && q != '\'' && s.src[j] == '$' && j+1 < len(s.src) && s.src[j+1] == '(' {
			j = s.skipShellSubst(j + 1)
			continue
		}
		switch s.src[j] {
		case '\\':
			if escapes {
				j++
				if j < len(s.src) && s.src[j] == '\n' {
					s.line++
				}
			}
		case '\n':
			s.line++
		case q:
			return j
		}
	}
	return len(s.src)
}

// skipShellSubst returns the index of the ) closing the command
// substitution opened at i, whose quotes nest inside the string around it
// ("$(printf "%s" x)"); depth-bounded by the source's length.
func (s *braceScan) skipShellSubst(i int) int {
	depth := 0
	for j := i; j < len(s.src); j++ {
		switch c := s.src[j]; c {
		case '\\':
			j++
		case '\n':
			s.line++
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return j
			}
		case '"', '\'', '`':
			j = s.skipString(j, c)
		}
	}
	return len(s.src)
}

// skipRawString skips a raw string opening at the quote at i, where
// a backslash is text: Rust's r"..." and r#"..."# (b too), C++'s
// R"delim(...)delim". ok is false for any other string.
func (s *braceScan) skipRawString(i int) (end int, ok bool) {
	src := s.src
	var closing []byte
	switch s.syn.lang {
	case Rust:
		j := i
		for j > 0 && src[j-1] == '#' {
			j--
		}
		if j == 0 || src[j-1] != 'r' {
			return 0, false
		}
		k := j - 1 // the r: a token's start, or after a b that is
		if k > 0 && src[k-1] == 'b' {
			k--
		}
		if k > 0 && isIdent(src[k-1]) {
			return 0, false
		}
		closing = append([]byte{'"'}, src[j:i]...)
	case CSharp:
		// @"..." (and $@, @$): "" is a quote, a backslash is text.
		if i == 0 || src[i-1] != '@' && !(src[i-1] == '$' && i > 1 && src[i-2] == '@') {
			return 0, false
		}
		for j := i + 1; j < len(src); j++ {
			switch src[j] {
			case '\n':
				s.line++
			case '"':
				if j+1 < len(src) && src[j+1] == '"' {
					j++
					continue
				}
				return j, true
			}
		}
		return len(src), true
	case CPP:
		if i == 0 || src[i-1] != 'R' {
			return 0, false
		}
		open := bytes.IndexByte(src[i+1:min(len(src), i+18)], '(')
		if open < 0 {
			return 0, false
		}
		closing = append(append([]byte{')'}, src[i+1:i+1+open]...), '"')
	default:
		return 0, false
	}
	k := bytes.Index(src[i+1:], closing)
	if k < 0 {
		s.line += bytes.Count(src[i+1:], newline)
		return len(src), true
	}
	s.line += bytes.Count(src[i+1:i+1+k], newline)
	return i + k + len(closing), true
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// skipChar skips a character literal ('a', '\n', '\u00e9') when it closes
// within a few bytes on its line; otherwise the quote is text (a Rust
// lifetime, a C++ digit separator).
func (s *braceScan) skipChar(i int) int {
	if i+1 < len(s.src) && s.src[i+1] == '\\' {
		for j := i + 2; j < len(s.src) && j <= i+12; j++ {
			switch s.src[j] {
			case '\n':
				return i
			case '\'':
				return j
			}
		}
		return i
	}
	_, size := utf8.DecodeRune(s.src[i+1:])
	if j := i + 1 + size; size > 0 && j < len(s.src) && s.src[j] == '\'' && s.src[i+1] != '\n' {
		return j
	}
	return i
}
