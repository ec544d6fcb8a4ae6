package rawjson

import (
	"strings"
	"unicode/utf8"
)

// AppendString appends s quoted as encoding/json quotes a string
// (HTML-safe: <, > and & escaped; U+2028 and U+2029 escaped; invalid
// UTF-8 as U+FFFD).
func AppendString(b []byte, s string) []byte { return appendQuoted(b, s, true) }

// AppendLogString appends s quoted as log/slog's JSON handler quotes a
// string: as encoding/json does, but without the HTML escapes, and \b and
// \f as \u0008 and \u000c.
func AppendLogString(b []byte, s string) []byte { return appendQuoted(b, s, false) }

// appendQuoted is AppendString (html) or AppendLogString.
func appendQuoted(b []byte, s string, html bool) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch {
			case c == '"', c == '\\':
				b = append(b, '\\', c)
			case c == '\b' && html:
				b = append(b, '\\', 'b')
			case c == '\f' && html:
				b = append(b, '\\', 'f')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// LogString bounds a client-supplied string for a log line: at most 300
// bytes and an ellipsis, valid UTF-8.
func LogString(s string) string {
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
