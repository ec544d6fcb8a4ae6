package office

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/serverfs/serverfs/internal/document"
)

// errStop unwinds a reader once out is full: Read answers what out holds,
// Truncated.
var errStop = errors.New("office: a bound on the text was reached")

// out is the text being produced, with its bounds: MaxText bytes (the
// final '\n' of the open line included) and MaxCells cells.
type out struct {
	ctx      context.Context
	b        strings.Builder
	max      int64
	maxCells int64
	cells    int64
	lines    int  // '\n' written
	lineOpen bool // the current line has bytes
	parts    []document.Part
	full     bool
	notes    []string
	tmp      []byte
}

// room is how many bytes may still be written on the current line,
// keeping one for the '\n' that will end it.
func (o *out) room() int64 { return o.max - int64(o.b.Len()) - 1 }

func (o *out) note(format string, a ...any) {
	n := fmt.Sprintf(format, a...)
	for _, old := range o.notes {
		if old == n {
			return
		}
	}
	o.notes = append(o.notes, n)
}

// stop marks out as full with why, and returns errStop.
func (o *out) stop(format string, a ...any) error {
	o.full = true
	o.note(format, a...)
	return errStop
}

func (o *out) textFull() error {
	return o.stop("the text was cut at %d bytes", o.max)
}

// inline writes text that stays on the current line: control characters
// (tabs and newlines in a cell or a run) become spaces, invalid UTF-8
// becomes U+FFFD.
func (o *out) inline(s []byte) error {
	if !clean(s) {
		o.tmp = appendClean(o.tmp[:0], s)
		s = o.tmp
	}
	return o.write(s)
}

// write writes clean bytes (tabs allowed) on the current line, as many
// as fit.
func (o *out) write(s []byte) error {
	if o.full {
		return errStop
	}
	if len(s) == 0 {
		return nil
	}
	room := o.room()
	if int64(len(s)) <= room {
		o.b.Write(s)
		o.lineOpen = true
		return nil
	}
	if room > 0 {
		o.b.Write(s[:runeCut(s[:room])])
		o.lineOpen = true
	}
	return o.textFull()
}

// appendClean appends s with control characters as spaces and invalid
// UTF-8 as U+FFFD.
func appendClean(dst, s []byte) []byte {
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		if r < 0x20 || r == 0x7f {
			r = ' '
		}
		if n == 1 && r < utf8.RuneSelf {
			dst = append(dst, byte(r))
		} else {
			dst = utf8.AppendRune(dst, r)
		}
		s = s[n:]
	}
	return dst
}

// clean says s is valid UTF-8 without control characters.
func clean(s []byte) bool {
	high := false
	for _, c := range s {
		switch {
		case c < 0x20 || c == 0x7f:
			return false
		case c >= 0x80:
			high = true
		}
	}
	return !high || utf8.Valid(s)
}

// tabs writes n tabs, the separators of n fields.
func (o *out) tabs(n int64) error {
	if o.full {
		return errStop
	}
	if n <= 0 {
		return nil
	}
	room := o.room()
	if n > room {
		o.b.WriteString(strings.Repeat("\t", int(max(room, 0))))
		o.lineOpen = o.lineOpen || room > 0
		return o.textFull()
	}
	for range n {
		o.b.WriteByte('\t')
	}
	o.lineOpen = true
	return nil
}

// endLine ends the current line, empty or not.
func (o *out) endLine() error {
	if o.full {
		return errStop
	}
	if !o.lineOpen && int64(o.b.Len())+1 > o.max {
		return o.textFull()
	}
	o.b.WriteByte('\n')
	o.lines++
	o.lineOpen = false
	return nil
}

// line writes s as a line of its own.
func (o *out) line(s string) error {
	if o.lineOpen {
		if err := o.endLine(); err != nil {
			return err
		}
	}
	if err := o.inline([]byte(s)); err != nil {
		return err
	}
	return o.endLine()
}

// part begins a part with its header line "# label".
func (o *out) part(label string) error {
	if o.lineOpen {
		if err := o.endLine(); err != nil {
			return err
		}
	}
	label = cleanLabel(label)
	if err := o.line("# " + label); err != nil {
		return err
	}
	o.parts = append(o.parts, document.Part{Label: label, Line: o.lines})
	return nil
}

// cleanLabel keeps a sheet's name to one line of at most 200 bytes.
func cleanLabel(s string) string {
	if len(s) > 200 {
		s = s[:runeCut([]byte(s[:200]))]
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

func (o *out) ctxErr() error { return o.ctx.Err() }

// addCells counts n cells produced, failing past MaxCells.
func (o *out) addCells(n int64) error {
	o.cells += n
	if o.cells > o.maxCells {
		return o.stop("more than %d cells", o.maxCells)
	}
	return nil
}

// doc ends the open line and returns the document.
func (o *out) doc() *document.Doc {
	if o.lineOpen {
		o.b.WriteByte('\n')
		o.lines++
		o.lineOpen = false
	}
	return &document.Doc{Text: o.b.String(), Parts: o.parts, Truncated: o.full, Note: strings.Join(o.notes, "; ")}
}
