package mcp

import (
	"strconv"
	"strings"

	sfs "github.com/serverfs/serverfs/fs"
)

// The text channel of content-bearing answers is plain text, not JSON:
// most hosts hand a model only the text content, and code inside a JSON
// string reaches it escaped (\n, \t, \u0026). structuredContent keeps the
// JSON for programs. A file window is one header line and then the
// window's bytes exactly as in the file (like head with several files:
// the header is the separator, nothing is escaped or added).

// compressionNames are the header's words for decompress.Kind.
var compressionNames = map[string]string{"gz": "gzip", "zst": "zstd"}

// windowView is what a window's header needs besides the window.
type windowView struct {
	workdir, path string
	w             *sfs.TextWindow
	kind          string // decompress.Kind of the path; "" plain
	tail          int    // the tail asked for; 0: a start_line read
	cutAtCap      bool
	// definition and others: a symbol read's find (readSymbol).
	definition string
	others     []string
}

// appendHeader writes the window's header line (without its newline).
func (v windowView) appendHeader(b []byte) []byte {
	w := v.w
	b = append(b, "==> "...)
	b = append(b, v.workdir...)
	b = append(b, ':')
	b = append(b, v.path...)
	if name := compressionNames[v.kind]; name != "" {
		b = append(b, " ("+name+")"...)
	}
	if w.Document != "" {
		b = append(b, " ("+w.Document+")"...)
	}
	n := w.EndLine - w.StartLine + 1
	switch {
	case n <= 0:
		b = append(b, " empty"...)
	case v.tail > 0:
		b = append(b, " last "...)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, " lines ("...)
		if w.StartLine < 0 {
			// A file too large to number: counted from its end.
			b = strconv.AppendInt(b, int64(w.StartLine), 10)
			b = append(b, " to "...)
			b = strconv.AppendInt(b, int64(w.EndLine), 10)
			b = append(b, " from the end"...)
		} else {
			b = appendRange(b, w)
			b = v.appendTotal(b)
		}
		b = append(b, ')')
	default:
		b = append(b, " lines "...)
		b = appendRange(b, w)
		b = v.appendTotal(b)
	}
	if w.Revision != "" {
		b = append(b, " revision "...)
		b = append(b, w.Revision...)
	}
	if w.NextStartLine != nil {
		b = append(b, " next start_line "...)
		b = strconv.AppendInt(b, int64(*w.NextStartLine), 10)
	}
	if v.cutAtCap {
		b = append(b, " cut at byte cap"...)
	}
	if v.definition != "" {
		b = append(b, " definition "...)
		b = append(b, v.definition...)
	}
	if len(v.others) > 0 {
		b = append(b, " also at "...)
		b = append(b, strings.Join(v.others, ", ")...)
	}
	return append(b, " <=="...)
}

func appendRange(b []byte, w *sfs.TextWindow) []byte {
	b = strconv.AppendInt(b, int64(w.StartLine), 10)
	b = append(b, '-')
	return strconv.AppendInt(b, int64(w.EndLine), 10)
}

// appendTotal writes " of N" when the file's line count is known, " of
// N+" when only a lower bound is (decompression stopped at the cap),
// nothing while more lines follow unread.
func (v windowView) appendTotal(b []byte) []byte {
	w := v.w
	switch {
	case w.TotalLines != nil:
		b = append(b, " of "...)
		b = strconv.AppendInt(b, int64(*w.TotalLines), 10)
	case v.cutAtCap:
		least := w.EndLine
		if w.HasMore {
			least++
		}
		b = append(b, " of "...)
		b = strconv.AppendInt(b, int64(least), 10)
		b = append(b, '+')
	}
	return b
}

// appendWindow writes the header line and the window's content.
func (v windowView) appendWindow(b []byte) []byte {
	b = v.appendHeader(b)
	if v.w.EndLine >= v.w.StartLine {
		b = append(b, '\n')
		b = append(b, v.w.Content...)
	}
	return b
}
