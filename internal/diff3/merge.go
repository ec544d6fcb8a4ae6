// Package diff3 is the three-way text merge of git merge-file, in
// process: the same line diff (xdiff's Myers with its heuristics), the
// same merge level (zealous, alphanumeric-aware: conflicts are narrowed
// to the lines that really differ, and conflicts separated by at most
// three lines, or by lines without letters or digits, become one), the
// same "<<<<<<< ours / ======= / >>>>>>> theirs" markers and end-of-line
// handling. A clean merge is byte for byte what git merge-file -p writes,
// and a conflicted one has the same conflicts.
//
// It is leaf code: it knows bytes and lines, nothing of repositories.
package diff3

import (
	"bytes"
	"errors"
)

// Default limits of Merge: each input at most DefaultMaxBytes bytes and
// DefaultMaxLines lines. The diff costs about lines × √lines in the worst
// case; the caps keep a hostile input to a fraction of a second.
const (
	DefaultMaxBytes = 8 << 20
	DefaultMaxLines = 100_000
)

// markerSize is git's DEFAULT_CONFLICT_MARKER_SIZE.
const markerSize = 7

// binaryProbe is how far git's buffer_is_binary looks for a NUL.
const binaryProbe = 8000

// Errors of Merge.
var (
	// ErrTooLarge: an input is over the byte or line limit; nothing was
	// merged.
	ErrTooLarge = errors.New("diff3: input too large to merge")
	// ErrBinary: an input has a NUL byte in its first 8000 bytes, which
	// git merge-file refuses to merge as text.
	ErrBinary = errors.New("diff3: cannot merge binary content")
)

// Options are the labels of the conflict markers and the limits.
type Options struct {
	// Ours and Theirs follow "<<<<<<<" and ">>>>>>>" (git merge-file's
	// -L labels); empty leaves the marker bare.
	Ours, Theirs string
	// MaxBytes and MaxLines bound each input (0: the defaults, negative:
	// no bound).
	MaxBytes, MaxLines int
}

// Conflict is one conflicted region: lines of ours and theirs (0-based
// start, count) that the merge could not reconcile, and the base lines of
// the region they came from (for a narrowed conflict the base of the
// whole region, which may be wider). Base, Ours and Theirs are those lines
// (slices of the inputs). Line is where its "<<<<<<<" marker is in the
// merged text (0-based).
type Conflict struct {
	Line                     int
	BaseStart, BaseLines     int
	OursStart, OursLines     int
	TheirsStart, TheirsLines int
	Base, Ours, Theirs       []byte
}

// Result is a merge: the merged text (with conflict markers if any) and
// its conflicts, in order. No conflicts means a clean merge.
type Result struct {
	Merged    []byte
	Conflicts []Conflict
}

// IsBinary reports whether git would treat b as binary (a NUL in its
// first 8000 bytes).
func IsBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), binaryProbe)], 0) >= 0
}

// Merge merges the changes from base to ours and from base to theirs,
// as git merge-file -p ours base theirs does with its default options.
func Merge(base, ours, theirs []byte, opt Options) (*Result, error) {
	maxBytes, maxLines := opt.MaxBytes, opt.MaxLines
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	if maxLines == 0 {
		maxLines = DefaultMaxLines
	}
	for _, b := range [][]byte{base, ours, theirs} {
		if maxBytes > 0 && len(b) > maxBytes {
			return nil, ErrTooLarge
		}
		if maxLines > 0 && lineCount(b) > maxLines {
			return nil, ErrTooLarge
		}
		if IsBinary(b) {
			return nil, ErrBinary
		}
	}
	rb, ro, rt := splitRecs(base), splitRecs(ours), splitRecs(theirs)
	xe1, xscr1 := diff(rb, ro)
	xe2, xscr2 := diff(rb, rt)
	if len(xscr1) == 0 {
		return &Result{Merged: append([]byte(nil), theirs...)}, nil
	}
	if len(xscr2) == 0 {
		return &Result{Merged: append([]byte(nil), ours...)}, nil
	}
	m := &merger{xe1: xe1, xe2: xe2, opt: opt}
	m.doMerge(xscr1, xscr2)
	return m.fill(), nil
}

// xmerge is xdmerge_t. mode 0 is a conflict, 1 a change of ours, 2 of
// theirs, 4 a conflict found identical on refinement.
type xmerge struct {
	mode               int
	i0, chg0           int
	i1, chg1, i2, chg2 int
}

type merger struct {
	xe1, xe2 *xdenv
	opt      Options
	changes  []*xmerge
}

// appendMerge is xdl_append_merge: a change touching the previous one is
// folded into it (a conflict if the sides differ).
func (m *merger) appendMerge(mode, i0, chg0, i1, chg1, i2, chg2 int) {
	if n := len(m.changes); n > 0 {
		last := m.changes[n-1]
		if i1 <= last.i1+last.chg1 || i2 <= last.i2+last.chg2 {
			if mode != last.mode {
				last.mode = 0
			}
			last.chg0 = i0 + chg0 - last.i0
			last.chg1 = i1 + chg1 - last.i1
			last.chg2 = i2 + chg2 - last.i2
			return
		}
	}
	m.changes = append(m.changes, &xmerge{mode: mode, i0: i0, chg0: chg0, i1: i1, chg1: chg1, i2: i2, chg2: chg2})
}

// linesEqual is xdl_merge_cmp_lines.
func linesEqual(a [][]byte, i1 int, b [][]byte, i2, n int) bool {
	for i := range n {
		if !bytes.Equal(a[i1+i], b[i2+i]) {
			return false
		}
	}
	return true
}

// doMerge is the walk of xdl_do_merge over both scripts, then the
// zealous refinement.
func (m *merger) doMerge(s1, s2 []change) {
	ours, theirs := m.xe1.xdf2.recs, m.xe2.xdf2.recs
	p, q := 0, 0
	for p < len(s1) && q < len(s2) {
		x1, x2 := s1[p], s2[q]
		if x1.i1+x1.chg1 < x2.i1 {
			m.appendMerge(1, x1.i1, x1.chg1, x1.i2, x1.chg2, x2.i2-x2.i1+x1.i1, x1.chg1)
			p++
			continue
		}
		if x2.i1+x2.chg1 < x1.i1 {
			m.appendMerge(2, x2.i1, x2.chg1, x1.i2-x1.i1+x2.i1, x2.chg1, x2.i2, x2.chg2)
			q++
			continue
		}
		if x1.i1 != x2.i1 || x1.chg1 != x2.chg1 || x1.chg2 != x2.chg2 ||
			!linesEqual(ours, x1.i2, theirs, x2.i2, x1.chg2) {
			off := x1.i1 - x2.i1
			ffo := off + x1.chg1 - x2.chg1
			i0, i1, i2 := x1.i1, x1.i2, x2.i2
			if off > 0 {
				i0 -= off
				i1 -= off
			} else {
				i2 += off
			}
			chg0 := x1.i1 + x1.chg1 - i0
			chg1 := x1.i2 + x1.chg2 - i1
			chg2 := x2.i2 + x2.chg2 - i2
			if ffo < 0 {
				chg0 -= ffo
				chg1 -= ffo
			} else {
				chg2 += ffo
			}
			m.appendMerge(0, i0, chg0, i1, chg1, i2, chg2)
		}
		e1, e2 := x1.i1+x1.chg1, x2.i1+x2.chg1
		if e1 >= e2 {
			q++
		}
		if e2 >= e1 {
			p++
		}
	}
	for ; p < len(s1); p++ {
		x1 := s1[p]
		m.appendMerge(1, x1.i1, x1.chg1, x1.i2, x1.chg2, x1.i1+m.xe2.xdf2.nrec()-m.xe2.xdf1.nrec(), x1.chg1)
	}
	for ; q < len(s2); q++ {
		x2 := s2[q]
		m.appendMerge(2, x2.i1, x2.chg1, x2.i1+m.xe1.xdf2.nrec()-m.xe1.xdf1.nrec(), x2.chg1, x2.i2, x2.chg2)
	}
	m.refineConflicts()
	m.simplifyNonConflicts()
}

// refineConflicts is xdl_refine_conflicts: a conflict whose sides differ
// in only some lines becomes conflicts of just those lines (or none, if
// the sides are the same).
func (m *merger) refineConflicts() {
	ours, theirs := m.xe1.xdf2.recs, m.xe2.xdf2.recs
	var out []*xmerge
	for _, c := range m.changes {
		if c.mode != 0 || c.chg1 == 0 || c.chg2 == 0 {
			out = append(out, c)
			continue
		}
		// The C code re-splits the bytes of the two regions; their lines
		// are the same records.
		_, xscr := diff(ours[c.i1:c.i1+c.chg1], theirs[c.i2:c.i2+c.chg2])
		if len(xscr) == 0 {
			c.mode = 4
			out = append(out, c)
			continue
		}
		i1, i2 := c.i1, c.i2
		for _, x := range xscr {
			out = append(out, &xmerge{mode: 0, i0: c.i0, chg0: c.chg0,
				i1: x.i1 + i1, chg1: x.chg1, i2: x.i2 + i2, chg2: x.chg2})
		}
	}
	m.changes = out
}

// simplifyNonConflicts is xdl_simplify_non_conflicts at the alphanumeric
// level: two conflicts with at most three lines between them, or only
// lines without a letter or digit, become one.
func (m *merger) simplifyNonConflicts() {
	ours := m.xe1.xdf2.recs
	if len(m.changes) == 0 {
		return
	}
	out := []*xmerge{m.changes[0]}
	for _, next := range m.changes[1:] {
		c := out[len(out)-1]
		begin, end := c.i1+c.chg1, next.i1
		if c.mode != 0 || next.mode != 0 || (end-begin > 3 && linesContainAlnum(ours[begin:end])) {
			out = append(out, next)
			continue
		}
		c.chg0 = next.i0 + next.chg0 - c.i0
		c.chg1 = next.i1 + next.chg1 - c.i1
		c.chg2 = next.i2 + next.chg2 - c.i2
	}
	m.changes = out
}

func linesContainAlnum(recs [][]byte) bool {
	for _, r := range recs {
		for _, ch := range r {
			if ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' {
				return true
			}
		}
	}
	return false
}

// isEOLCRLF is is_eol_crlf: 1 if line i ends in CR LF (for a last line
// without one, the line before), 0 if in LF, -1 if unknown.
func isEOLCRLF(recs [][]byte, i int) int {
	b2i := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	crlf := func(r []byte) bool { return len(r) > 1 && r[len(r)-2] == '\r' }
	n := len(recs)
	if i < n-1 {
		return b2i(crlf(recs[i]))
	}
	if n == 0 {
		return -1
	}
	if r := recs[i]; len(r) > 0 && r[len(r)-1] == '\n' {
		return b2i(crlf(r))
	}
	if i == 0 {
		return -1
	}
	return b2i(crlf(recs[i-1]))
}

// crNeeded is is_cr_needed: whether lines the merge adds (markers, a
// missing final newline) end in CR LF.
func (m *merger) crNeeded(c *xmerge) bool {
	at := func(i int) int {
		if i > 0 {
			return i - 1
		}
		return 0
	}
	needs := isEOLCRLF(m.xe1.xdf2.recs, at(c.i1))
	if needs != 0 {
		needs = isEOLCRLF(m.xe2.xdf2.recs, at(c.i2))
	}
	if needs != 0 {
		needs = isEOLCRLF(m.xe1.xdf1.recs, 0)
	}
	return needs > 0
}

// copyRecs is xdl_recs_copy: lines, and with addNL a newline after a
// last line that lacks one.
func copyRecs(out *bytes.Buffer, recs [][]byte, needsCR, addNL bool) {
	if len(recs) == 0 {
		return
	}
	for _, r := range recs {
		out.Write(r)
	}
	if addNL {
		last := recs[len(recs)-1]
		if len(last) == 0 || last[len(last)-1] != '\n' {
			if needsCR {
				out.WriteByte('\r')
			}
			out.WriteByte('\n')
		}
	}
}

func writeMarker(out *bytes.Buffer, ch byte, label string, needsCR bool) {
	for range markerSize {
		out.WriteByte(ch)
	}
	if label != "" {
		out.WriteByte(' ')
		out.WriteString(label)
	}
	if needsCR {
		out.WriteByte('\r')
	}
	out.WriteByte('\n')
}

// fill is xdl_fill_merge_buffer in git's default ("merge") style.
func (m *merger) fill() *Result {
	base, ours, theirs := m.xe1.xdf1.recs, m.xe1.xdf2.recs, m.xe2.xdf2.recs
	var out bytes.Buffer
	res := &Result{}
	lines := 0
	cp := func(recs [][]byte, needsCR, addNL bool) {
		before := out.Len()
		copyRecs(&out, recs, needsCR, addNL)
		lines += bytes.Count(out.Bytes()[before:], []byte{'\n'})
	}
	i := 0
	for _, c := range m.changes {
		switch {
		case c.mode == 0:
			needsCR := m.crNeeded(c)
			cp(ours[i:c.i1], false, false)
			res.Conflicts = append(res.Conflicts, Conflict{
				Line:      lines,
				BaseStart: c.i0, BaseLines: c.chg0,
				OursStart: c.i1, OursLines: c.chg1,
				TheirsStart: c.i2, TheirsLines: c.chg2,
				Base:   joinRecs(base[c.i0 : c.i0+c.chg0]),
				Ours:   joinRecs(ours[c.i1 : c.i1+c.chg1]),
				Theirs: joinRecs(theirs[c.i2 : c.i2+c.chg2]),
			})
			writeMarker(&out, '<', m.opt.Ours, needsCR)
			lines++
			cp(ours[c.i1:c.i1+c.chg1], needsCR, true)
			writeMarker(&out, '=', "", needsCR)
			lines++
			cp(theirs[c.i2:c.i2+c.chg2], needsCR, true)
			writeMarker(&out, '>', m.opt.Theirs, needsCR)
			lines++
		case c.mode&3 != 0:
			cp(ours[i:c.i1], false, false)
			if c.mode&1 != 0 {
				cp(ours[c.i1:c.i1+c.chg1], m.crNeeded(c), c.mode&2 != 0)
			}
			if c.mode&2 != 0 {
				cp(theirs[c.i2:c.i2+c.chg2], false, false)
			}
		default:
			continue
		}
		i = c.i1 + c.chg1
	}
	cp(ours[i:], false, false)
	res.Merged = out.Bytes()
	return res
}

// lineCount is the number of lines of b (a last one without a newline
// counts).
func lineCount(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// joinRecs is the bytes of consecutive lines (one slice of the input).
func joinRecs(recs [][]byte) []byte {
	if len(recs) == 0 {
		return nil
	}
	var n int
	for _, r := range recs {
		n += len(r)
	}
	out := make([]byte, 0, n)
	for _, r := range recs {
		out = append(out, r...)
	}
	return out
}
