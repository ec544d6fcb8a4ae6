package pdf

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/serverfs/serverfs/internal/document"
)

// docWriter builds the document's text: pages, their lines, and where
// each page begins. Text comes as runs placed on the page; a run far from
// the previous one starts a new line or a new word.
type docWriter struct {
	text  strings.Builder
	parts []document.Part
	lines int
	pages int
	done  int // pages read to their end
	max   int64
	line  strings.Builder
	// The previous run on this page: where it ended, its baseline and
	// font size, in device space.
	have           bool
	endX, y, size  float64
	pageHasAnyLine bool
}

var errTextLimit = errLimit("text past the limit")

func (w *docWriter) startPage() {
	w.pages++
	w.parts = append(w.parts, document.Part{Label: fmt.Sprintf("page %d", w.pages), Line: w.lines + 1})
	w.have, w.pageHasAnyLine = false, false
}

// endPage ends the last line; a page without text gets one empty line so
// that every page's Part has a line of its own.
func (w *docWriter) endPage() error {
	err := w.flush()
	w.done++
	if !w.pageHasAnyLine {
		w.text.WriteByte('\n')
		w.lines++
	}
	return err
}

// run places text starting at (x, y) and ending at endX, with font size
// size (device space).
func (w *docWriter) run(s string, x, y, endX, size float64) error {
	s = clean(s)
	if s == "" {
		return nil
	}
	size = math.Abs(size)
	if size < 1e-3 {
		size = 1e-3
	}
	if w.have {
		ref := math.Max(size, w.size)
		switch dy := math.Abs(y - w.y); {
		case dy > 0.5*ref:
			if err := w.flush(); err != nil {
				return err
			}
		case x-w.endX > 0.1*ref || w.endX-x > 1.5*ref:
			// A gap, or a jump back on the same baseline (another column
			// or an overprint): a word break.
			w.space()
		}
	}
	w.line.WriteString(s)
	w.have, w.endX, w.y, w.size = true, endX, y, size
	if int64(w.text.Len()+w.line.Len()) > w.max {
		return errTextLimit
	}
	return nil
}

func (w *docWriter) space() {
	if l := w.line.String(); l != "" && l[len(l)-1] != ' ' {
		w.line.WriteByte(' ')
	}
}

// flush ends the current line, trimmed; empty lines inside a page are
// dropped (layout gaps, not text).
func (w *docWriter) flush() error {
	l := strings.TrimSpace(w.line.String())
	w.line.Reset()
	if l == "" {
		return nil
	}
	if int64(w.text.Len()+len(l)+1) > w.max {
		return errTextLimit
	}
	w.text.WriteString(l)
	w.text.WriteByte('\n')
	w.lines++
	w.pageHasAnyLine = true
	return nil
}

// clean turns control characters into spaces (Text holds lines, no '\f'),
// drops invalid UTF-8 and the replacement for unmapped glyphs, and
// spells out the Latin ligatures (U+FB00-FB06) as pdftotext does: TeX
// sets "definition" with an fi glyph, and a search for the word must
// find it.
func clean(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == utf8.RuneError || r == 0xfeff:
		case unicode.IsControl(r) || unicode.IsSpace(r):
			b.WriteByte(' ')
		case r >= 0xfb00 && r <= 0xfb06:
			b.WriteString(ligatures[r-0xfb00])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ligatures are U+FB00-FB06 spelled out.
var ligatures = [...]string{"ff", "fi", "fl", "ffi", "ffl", "st", "st"}

func (w *docWriter) doc(note string) *document.Doc {
	_ = w.flush()
	if n := len(w.parts); n > 0 && w.parts[n-1].Line > w.lines {
		w.text.WriteByte('\n') // a page cut before its first line
		w.lines++
	}
	d := &document.Doc{Text: w.text.String(), Parts: w.parts}
	if note != "" {
		d.Truncated, d.Note = true, note
	}
	if d.Parts == nil {
		d.Parts = []document.Part{}
	}
	return d
}
