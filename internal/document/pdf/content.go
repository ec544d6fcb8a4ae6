package pdf

import (
	"bytes"
	"math"
)

// matrix is a PDF transformation [a b c d e f].
type matrix [6]float64

var identity = matrix{1, 0, 0, 1, 0, 0}

func (m matrix) mul(n matrix) matrix {
	return matrix{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

// gstate is the part of the graphics state text extraction needs.
type gstate struct {
	ctm                        matrix
	tc, tw, th, tl, tfs, trise float64
	font                       *font
}

// maxSaves bounds the q/Q stack: deeper saves are ignored (and so are
// their restores), which misplaces text at worst.
const maxSaves = 256

// interp runs one page's content streams and its forms.
type interp struct {
	f        *file
	out      *docWriter
	gs       gstate
	saves    []gstate
	tm, tlm  matrix
	ops      int
	forms    map[*stream]bool // forms being run: a form inside itself stops
	nesting  int
	dropSave int
}

// page reads one page's text into out. Malformed content ends that
// stream quietly (the text before it stays); only limits and
// cancellation come back as errors.
func (f *file) page(out *docWriter, pg dict, res any) error {
	out.startPage()
	in := &interp{f: f, out: out, forms: map[*stream]bool{}}
	in.gs = gstate{ctm: identity, th: 1}
	contents, err := f.resolve(pg["Contents"])
	if err != nil {
		return err
	}
	var list array
	switch c := contents.(type) {
	case *stream:
		list = array{c}
	case array:
		list = c
	}
	// A page's content streams are one stream cut anywhere: joined with
	// a space before lexing.
	var data []byte
	var cut error
	for i, c := range list {
		v, err := f.resolve(c)
		if err != nil {
			return err
		}
		s, ok := v.(*stream)
		if !ok {
			continue
		}
		b, err := f.streamData(s)
		if i == 0 {
			data = b // one stream, the common case: not copied
		} else {
			data = append(append(data, ' '), b...)
		}
		if err != nil {
			if isLimit(err) || f.ctx.Err() != nil {
				cut = err
				break
			}
		}
	}
	resd, err := f.dictOf(res)
	if err != nil {
		return err
	}
	if err := in.run(data, resd); err != nil {
		return err
	}
	if cut != nil {
		return cut
	}
	return out.endPage()
}

// run interprets a content stream with resources res.
func (in *interp) run(data []byte, res dict) error {
	l := bytesLexer(data, in.f.lim.MaxObjects)
	var args []any
	for {
		t, err := l.token()
		if err != nil || t.kind == tokEOF {
			return nil
		}
		if t.kind != tokWord {
			v, err := l.objectFrom(t, 0, in.f.lim.MaxDepth)
			if err != nil {
				if isLimit(err) {
					return err
				}
				return nil
			}
			if len(args) < 64 { // no operator takes more; junk is dropped
				args = append(args, v)
			}
			continue
		}
		if in.ops++; in.ops%4096 == 0 {
			if err := in.f.ctx.Err(); err != nil {
				return err
			}
		}
		switch t.s {
		case "BI":
			skipInlineImage(l)
		case "true", "false", "null":
			v, _ := l.objectFrom(t, 0, 1)
			args = append(args, v)
			continue
		default:
			if err := in.op(t.s, args, res); err != nil {
				return err
			}
		}
		args = args[:0]
	}
}

// skipInlineImage moves past an inline image's data: to "EI" standing
// alone after "ID".
func skipInlineImage(l *lexer) {
	for {
		t, err := l.token()
		if err != nil || t.kind == tokEOF {
			return
		}
		if t.kind == tokWord && t.s == "ID" {
			break
		}
	}
	l.pos++
	for p := l.pos; p+1 < l.size; p++ {
		a, _ := l.byteAt(p)
		b, _ := l.byteAt(p + 1)
		c, ok := l.byteAt(p + 2)
		prev, _ := l.byteAt(p - 1)
		if a == 'E' && b == 'I' && (p == 0 || isSpace(prev)) && (!ok || isSpace(c) || isDelim(c)) {
			l.pos = p + 2
			return
		}
	}
	l.pos = l.size
}

func num(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// nums returns the last n (at most 6) of args as numbers, or false; an
// array, not a slice, so that an operator costs no allocation.
func nums(args []any, n int) ([6]float64, bool) {
	var out [6]float64
	if len(args) < n || n > 6 {
		return out, false
	}
	for i, a := range args[len(args)-n:] {
		v, ok := num(a)
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			return out, false
		}
		out[i] = v
	}
	return out, true
}

func (in *interp) op(op string, args []any, res dict) error {
	g := &in.gs
	switch op {
	case "q":
		if len(in.saves) >= maxSaves {
			in.dropSave++
			return nil
		}
		in.saves = append(in.saves, *g)
	case "Q":
		if in.dropSave > 0 {
			in.dropSave--
		} else if n := len(in.saves); n > 0 {
			*g = in.saves[n-1]
			in.saves = in.saves[:n-1]
		}
	case "cm":
		if m, ok := nums(args, 6); ok {
			g.ctm = matrix(m).mul(g.ctm)
		}
	case "BT":
		in.tm, in.tlm = identity, identity
	case "Tf":
		if len(args) >= 2 {
			nm, _ := args[len(args)-2].(name)
			g.font = in.font(res, nm)
			g.tfs, _ = num(args[len(args)-1])
		}
	case "Tc", "Tw", "Tz", "TL", "Ts":
		if v, ok := nums(args, 1); ok {
			in.setText(op, v[0])
		}
	case "Td", "TD":
		if v, ok := nums(args, 2); ok {
			if op == "TD" {
				g.tl = -v[1]
			}
			in.tlm = matrix{1, 0, 0, 1, v[0], v[1]}.mul(in.tlm)
			in.tm = in.tlm
		}
	case "Tm":
		if m, ok := nums(args, 6); ok {
			in.tm, in.tlm = matrix(m), matrix(m)
		}
	case "T*":
		in.nextLine()
	case "Tj":
		return in.showArg(args)
	case "'":
		in.nextLine()
		return in.showArg(args)
	case "\"":
		if v, ok := nums(args[:max(len(args)-1, 0)], 2); ok {
			g.tw, g.tc = v[0], v[1]
		}
		in.nextLine()
		return in.showArg(args)
	case "TJ":
		return in.showArray(args)
	case "Do":
		if len(args) > 0 {
			nm, _ := args[len(args)-1].(name)
			return in.form(res, nm)
		}
	}
	return nil
}

func (in *interp) setText(op string, v float64) {
	g := &in.gs
	switch op {
	case "Tc":
		g.tc = v
	case "Tw":
		g.tw = v
	case "Tz":
		g.th = v / 100
	case "TL":
		g.tl = v
	case "Ts":
		g.trise = v
	}
}

func (in *interp) nextLine() {
	in.tlm = matrix{1, 0, 0, 1, 0, -in.gs.tl}.mul(in.tlm)
	in.tm = in.tlm
}

func (in *interp) showArg(args []any) error {
	if len(args) == 0 {
		return nil
	}
	s, ok := args[len(args)-1].(str)
	if !ok {
		return nil
	}
	return in.show(string(s))
}

func (in *interp) showArray(args []any) error {
	if len(args) == 0 {
		return nil
	}
	a, _ := args[len(args)-1].(array)
	for _, e := range a {
		switch v := e.(type) {
		case str:
			if err := in.show(string(v)); err != nil {
				return err
			}
		case int, float64:
			n, _ := num(v)
			g := &in.gs
			in.tm = matrix{1, 0, 0, 1, -n / 1000 * g.tfs * g.th, 0}.mul(in.tm)
		}
	}
	return nil
}

// show places one string: its text from the font, its start and end
// from the text matrix advanced by the glyphs' widths.
func (in *interp) show(s string) error {
	g := &in.gs
	f := g.font
	if f == nil {
		f = fallbackFont
	}
	trm := func() matrix {
		return matrix{g.tfs * g.th, 0, 0, g.tfs, 0, g.trise}.mul(in.tm).mul(g.ctm)
	}
	start := trm()
	var text bytes.Buffer
	f.decode(s, func(t string, w float64, space bool) {
		text.WriteString(t)
		tx := w*g.tfs + g.tc
		if space {
			tx += g.tw
		}
		in.tm = matrix{1, 0, 0, 1, tx * g.th, 0}.mul(in.tm)
	})
	end := trm()
	size := math.Hypot(start[2], start[3])
	return in.out.run(text.String(), start[4], start[5], end[4], size)
}

// form runs a form XObject's content, nested no deeper than MaxDepth.
func (in *interp) form(res dict, nm name) error {
	xo, err := in.f.dictOf(res["XObject"])
	if err != nil || xo == nil {
		return err
	}
	v, err := in.f.resolve(xo[nm])
	if err != nil {
		return err
	}
	s, ok := v.(*stream)
	if !ok || s.d["Subtype"] != name("Form") || in.forms[s] {
		return nil
	}
	if in.nesting >= in.f.lim.MaxDepth {
		return errLimit("forms nested deeper than the limit")
	}
	data, err := in.f.streamData(s)
	if err != nil && (isLimit(err) || in.f.ctx.Err() != nil) {
		return err
	}
	fres := res
	if r, err := in.f.dictOf(s.d["Resources"]); err != nil {
		return err
	} else if r != nil {
		fres = r
	}
	saved, tm, tlm := in.gs, in.tm, in.tlm
	if m, err := in.f.resolve(s.d["Matrix"]); err == nil {
		if a, ok := m.(array); ok {
			if v, ok := nums(a, 6); ok {
				in.gs.ctm = matrix(v).mul(in.gs.ctm)
			}
		}
	}
	in.forms[s] = true
	in.nesting++
	err = in.run(data, fres)
	in.nesting--
	delete(in.forms, s)
	in.gs, in.tm, in.tlm = saved, tm, tlm
	return err
}
