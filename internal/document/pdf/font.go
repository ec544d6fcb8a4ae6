package pdf

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
)

// font is what text extraction needs of a font: how its string bytes
// split into codes, each code's text and width.
type font struct {
	composite bool
	ranges    []codeRange       // composite: code lengths by first byte
	uni       map[uint32]string // ToUnicode
	enc       [256]string       // simple fonts: text by code from the encoding
	widths    map[uint32]float64
	dw        float64 // width of codes /Widths or /W do not give
	scale     float64 // glyph space to text space (1/1000, or a Type 3 FontMatrix)
	ucs2      bool    // composite with a UCS-2/UTF-16 CMap and no ToUnicode
}

type codeRange struct {
	lo, hi uint32
	n      int
}

// fallbackFont reads text shown with no font set as Latin-1.
var fallbackFont = func() *font {
	f := &font{dw: 500, scale: 0.001}
	for i := 32; i < 256; i++ {
		f.enc[i] = string(rune(i))
	}
	return f
}()

// maxCMap bounds the entries a ToUnicode map may expand to.
const maxCMap = 1 << 17

// decode calls fn for each code of s: its text, width (glyph space
// scaled to text space) and whether it is a single-byte 32 (word spacing
// applies).
func (f *font) decode(s string, fn func(text string, w float64, space bool)) {
	for i := 0; i < len(s); {
		n := 1
		if f.composite {
			n = f.codeLen(s[i])
		}
		if i+n > len(s) {
			n = len(s) - i
		}
		var code uint32
		for _, c := range []byte(s[i : i+n]) {
			code = code<<8 | uint32(c)
		}
		i += n
		t, ok := f.uni[code]
		switch {
		case ok:
		case !f.composite:
			t = f.enc[code&0xff]
		case f.ucs2:
			t = string(utf16.Decode([]uint16{uint16(code)}))
		}
		w, ok := f.widths[code]
		if !ok {
			w = f.dw
		}
		fn(t, w*f.scale, n == 1 && code == 32)
	}
}

func (f *font) codeLen(c byte) int {
	for _, r := range f.ranges {
		if r.n > 0 && uint32(c) >= r.lo>>(8*(r.n-1)) && uint32(c) <= r.hi>>(8*(r.n-1)) {
			return r.n
		}
	}
	return 2
}

// font returns the font resource nm of res, loaded once per file.
func (in *interp) font(res dict, nm name) *font {
	fonts, _ := in.f.dictOf(res["Font"])
	if fonts == nil {
		return nil
	}
	key := fonts[nm]
	if r, ok := key.(ref); ok {
		if f, ok := in.f.fonts[r]; ok {
			return f
		}
	}
	d, err := in.f.dictOf(key)
	if err != nil || d == nil {
		return nil
	}
	f := in.f.loadFont(d)
	if r, ok := key.(ref); ok {
		in.f.fonts[r] = f
	}
	return f
}

func (f *file) loadFont(d dict) *font {
	ft := &font{scale: 0.001, dw: 500}
	sub, _ := d["Subtype"].(name)
	if sub == "Type0" {
		f.loadComposite(ft, d)
	} else {
		f.loadSimple(ft, d, sub)
	}
	if s, _ := f.resolve(d["ToUnicode"]); s != nil {
		if st, ok := s.(*stream); ok {
			if data, err := f.streamData(st); err == nil {
				ranges, m := parseCMap(data)
				ft.uni = m
				if ft.composite && len(ranges) > 0 && len(ft.ranges) == 0 {
					ft.ranges = ranges
				}
			}
		}
	}
	return ft
}

func (f *file) loadSimple(ft *font, d dict, sub name) {
	if sub == "Type3" {
		if m, _ := f.resolve(d["FontMatrix"]); m != nil {
			if a, ok := m.(array); ok && len(a) == 6 {
				ft.scale, _ = num(a[0])
			}
		}
	}
	desc, _ := f.dictOf(d["FontDescriptor"])
	if mw, ok := num(desc["MissingWidth"]); ok && mw > 0 {
		ft.dw = mw
	}
	ft.widths = map[uint32]float64{}
	first, _ := num(d["FirstChar"])
	if w, _ := f.resolve(d["Widths"]); w != nil {
		if a, ok := w.(array); ok {
			for i, v := range a {
				v, _ := f.resolve(v)
				if n, ok := num(v); ok && int(first)+i >= 0 && int(first)+i < 256 {
					ft.widths[uint32(int(first)+i)] = n
				}
			}
		}
	}
	names := f.baseEncoding(d, desc, sub)
	if e, _ := f.resolve(d["Encoding"]); e != nil {
		switch e := e.(type) {
		case name:
			if t := namedEncoding(e); t != nil {
				names = *t
			}
		case dict:
			if b, ok := e["BaseEncoding"].(name); ok && namedEncoding(b) != nil {
				names = *namedEncoding(b)
			}
			diffs, _ := f.resolve(e["Differences"])
			a, _ := diffs.(array)
			code := 0
			for _, v := range a {
				switch v := v.(type) {
				case int:
					code = v
				case name:
					if code >= 0 && code < 256 {
						names[code] = string(v)
					}
					code++
				}
			}
		}
	}
	for i, n := range names {
		ft.enc[i] = glyphText(n)
	}
}

// baseEncoding is a simple font's encoding before /Encoding: the one
// built into an embedded Type 1 font program (TeX's fonts rely on it),
// else StandardEncoding for Type 1, WinAnsi for the rest.
func (f *file) baseEncoding(d, desc dict, sub name) [256]string {
	if ff, _ := f.resolve(desc["FontFile"]); ff != nil {
		if s, ok := ff.(*stream); ok {
			if data, err := f.streamData(s); err == nil {
				if names, ok := builtinEncoding(data); ok {
					return names
				}
			}
		}
	}
	if sub == "Type1" || sub == "MMType1" {
		return standardNames
	}
	return winAnsiNames
}

var dupPut = regexp.MustCompile(`dup\s+(\d+)\s*/([^\s/\[\]{}()<>]+)\s+put`)

// builtinEncoding reads the encoding in a Type 1 program's clear text.
func builtinEncoding(data []byte) ([256]string, bool) {
	var names [256]string
	i := bytes.Index(data, []byte("/Encoding"))
	if i < 0 {
		return names, false
	}
	head := data[i:]
	if e := bytes.Index(head, []byte("eexec")); e >= 0 {
		head = head[:e]
	}
	if bytes.HasPrefix(bytes.TrimSpace(head[len("/Encoding"):]), []byte("StandardEncoding")) {
		return standardNames, true
	}
	found := false
	for _, m := range dupPut.FindAllSubmatch(head, 256) {
		c, err := strconv.Atoi(string(m[1]))
		if err == nil && c >= 0 && c < 256 {
			names[c] = string(m[2])
			found = true
		}
	}
	return names, found
}

func (f *file) loadComposite(ft *font, d dict) {
	ft.composite = true
	ft.dw = 1000
	enc, _ := f.resolve(d["Encoding"])
	switch e := enc.(type) {
	case name:
		s := string(e)
		ft.ucs2 = strings.Contains(s, "UCS2") || strings.Contains(s, "UTF16")
		ft.ranges = []codeRange{{0, 0xffff, 2}}
	case *stream:
		if data, err := f.streamData(e); err == nil {
			ft.ranges, _ = parseCMap(data)
		}
	}
	kids, _ := f.resolve(d["DescendantFonts"])
	ka, _ := kids.(array)
	if len(ka) == 0 {
		return
	}
	cid, _ := f.dictOf(ka[0])
	if n, ok := num(cid["DW"]); ok {
		ft.dw = n
	}
	w, _ := f.resolve(cid["W"])
	ft.widths = f.cidWidths(w)
}

// cidWidths reads /W: "c [w1 w2 ...]" and "cfirst clast w" entries,
// expanded up to maxCMap codes.
func (f *file) cidWidths(w any) map[uint32]float64 {
	out := map[uint32]float64{}
	a, _ := w.(array)
	for i := 0; i+1 < len(a) && len(out) < maxCMap; {
		c, _ := num(a[i])
		next, _ := f.resolve(a[i+1])
		if ws, ok := next.(array); ok {
			for j, v := range ws {
				if n, ok := num(v); ok && len(out) < maxCMap {
					out[uint32(int(c)+j)] = n
				}
			}
			i += 2
			continue
		}
		if i+2 >= len(a) {
			break
		}
		hi, _ := num(next)
		wv, _ := num(a[i+2])
		for x := int(c); x <= int(hi) && len(out) < maxCMap; x++ {
			out[uint32(x)] = wv
		}
		i += 3
	}
	return out
}

// parseCMap reads a CMap's codespace ranges and its bfchar and bfrange
// mappings to Unicode (UTF-16BE), expanding ranges up to maxCMap codes.
func parseCMap(data []byte) ([]codeRange, map[uint32]string) {
	l := bytesLexer(data, maxCMap)
	var ranges []codeRange
	m := map[uint32]string{}
	var ops []any
	for {
		t, err := l.token()
		if err != nil || t.kind == tokEOF {
			return ranges, m
		}
		if t.kind != tokWord {
			v, err := l.objectFrom(t, 0, 4)
			if err != nil {
				return ranges, m
			}
			if len(ops) < 3*maxCMap {
				ops = append(ops, v)
			}
			continue
		}
		switch t.s {
		case "endcodespacerange":
			for i := 0; i+1 < len(ops); i += 2 {
				lo, _ := ops[i].(str)
				hi, _ := ops[i+1].(str)
				if len(lo) > 0 && len(lo) <= 4 {
					ranges = append(ranges, codeRange{codeOf(lo), codeOf(hi), len(lo)})
				}
			}
		case "endbfchar":
			for i := 0; i+1 < len(ops) && len(m) < maxCMap; i += 2 {
				src, _ := ops[i].(str)
				dst, _ := ops[i+1].(str)
				m[codeOf(src)] = utf16Text(string(dst))
			}
		case "endbfrange":
			bfRanges(ops, m)
		}
		ops = ops[:0]
	}
}

func bfRanges(ops []any, m map[uint32]string) {
	for i := 0; i+2 < len(ops); i += 3 {
		lo, _ := ops[i].(str)
		hi, _ := ops[i+1].(str)
		a, b := codeOf(lo), codeOf(hi)
		if b < a || b-a > maxCMap {
			continue
		}
		switch dst := ops[i+2].(type) {
		case str:
			base := []rune(utf16Text(string(dst)))
			for c := a; c <= b && len(m) < maxCMap && len(base) > 0; c++ {
				r := append([]rune{}, base...)
				r[len(r)-1] += rune(c - a)
				m[c] = string(r)
			}
		case array:
			for j, v := range dst {
				if s, ok := v.(str); ok && a+uint32(j) <= b && len(m) < maxCMap {
					m[a+uint32(j)] = utf16Text(string(s))
				}
			}
		}
	}
}

func codeOf(s str) uint32 {
	var c uint32
	for i := 0; i < len(s) && i < 4; i++ {
		c = c<<8 | uint32(s[i])
	}
	return c
}

func utf16Text(s string) string {
	u := make([]uint16, 0, len(s)/2)
	for i := 0; i+1 < len(s); i += 2 {
		u = append(u, uint16(s[i])<<8|uint16(s[i+1]))
	}
	if len(s)%2 == 1 { // a one-byte destination: a Latin-1 character
		return string(rune(s[len(s)-1]))
	}
	return string(utf16.Decode(u))
}
