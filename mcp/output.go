package mcp

import (
	"strconv"
	"unicode/utf8"

	sfs "github.com/serverfs/serverfs/fs"
)

// appendFileInfo appends stat_file's output as json.Marshal writes it
// (same field order, omissions and escaping) without reflection: stat_file
// is the cheapest call and the most frequent one.
func appendFileInfo(b []byte, fi *sfs.FileInfo) []byte {
	b = append(b, `{"workdir":`...)
	b = appendJSONString(b, fi.Workdir)
	b = append(b, `,"path":`...)
	b = appendJSONString(b, fi.Path)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, string(fi.Type))
	if fi.Size != nil {
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, *fi.Size, 10)
	}
	b = append(b, `,"modified_at":`...)
	b = appendJSONString(b, fi.ModifiedAt)
	if fi.MIMEType != "" {
		b = append(b, `,"mime_type":`...)
		b = appendJSONString(b, fi.MIMEType)
	}
	if fi.Revision != "" {
		b = append(b, `,"revision":`...)
		b = appendJSONString(b, fi.Revision)
	}
	return append(b, '}')
}

// appendJSONString appends s quoted as encoding/json quotes a string
// (HTML-safe: <, > and & escaped; U+2028 and U+2029 escaped; invalid
// UTF-8 as U+FFFD).
func appendJSONString(b []byte, s string) []byte { return appendQuoted(b, s, true) }

// appendLogString appends s quoted as log/slog's JSON handler quotes a
// string: as encoding/json does, but without the HTML escapes, and \b and
// \f as \u0008 and \u000c.
func appendLogString(b []byte, s string) []byte { return appendQuoted(b, s, false) }

// appendQuoted is appendJSONString (html) or appendLogString.
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
