package archive

import (
	"strings"
	"unicode/utf8"
)

// DisplayName turns a stored member name into the name shown and
// addressed: relative and '/'-separated, "." and empty components
// dropped, and everything that could mislead a reader or a path resolver
// escaped as %XX of its bytes: ".." (%2E%2E), control characters (C0,
// DEL, C1), bidirectional and line-separator marks, backslashes, invalid
// UTF-8, and a '%' that would read as an escape. The mapping is a
// function of the stored bytes, so the same member always has the same
// name; escaped reports a name that was absolute or needed escapes.
// A stored name of only "/" and "." components (tar's "./") is the
// archive's root and has the name "".
func DisplayName(raw string) (name string, escaped bool) {
	escaped = strings.HasPrefix(raw, "/")
	var b strings.Builder
	for comp := range strings.SplitSeq(raw, "/") {
		if comp == "" || comp == "." {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		if comp == ".." {
			b.WriteString("%2E%2E")
			escaped = true
			continue
		}
		if escapeTo(&b, comp) {
			escaped = true
		}
	}
	return b.String(), escaped
}

// displayLink escapes a link target's bytes like a name's, keeping its
// shape (a leading '/', "..") since it is only shown.
func displayLink(raw string) string {
	var b strings.Builder
	escapeTo(&b, raw)
	return b.String()
}

// escapeTo writes s to b with the bytes DisplayName escapes as %XX, and
// reports whether any was.
func escapeTo(b *strings.Builder, s string) bool {
	const hex = "0123456789ABCDEF"
	esc := func(p string) {
		for i := 0; i < len(p); i++ {
			b.WriteByte('%')
			b.WriteByte(hex[p[i]>>4])
			b.WriteByte(hex[p[i]&15])
		}
	}
	escaped := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1, unsafeRune(r),
			r == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			esc(s[i : i+size])
			escaped = true
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return escaped
}

// unsafeRune: characters that must not reach a terminal or a path as they
// are: controls, backslash (a separator elsewhere), and the marks that
// reorder or break displayed text.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, r == '\\':
		return true
	case r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
		r == 0x2028, r == 0x2029, r == 0xfeff:
		return true
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
