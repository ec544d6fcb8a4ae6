package pdf

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strconv"
)

// xent is one cross-reference entry: an object at a file offset (typ 1),
// inside object stream stm at index idx (typ 2), or free (typ 0, which
// hides older entries of the same number).
type xent struct {
	num int
	typ uint8
	gen uint16
	off int64 // typ 1: offset; typ 2: the object stream's number
	idx int
}

// file is one PDF being read: its cross-reference, the objects loaded so
// far and what is left of the call's budgets.
type file struct {
	ctx     context.Context
	ra      io.ReaderAt
	size    int64
	lim     Limits
	xref    []xent // sorted by num, one entry per number
	trailer dict
	cache   map[int]any
	objstm  map[int]*objStream
	fonts   map[ref]*font // loaded once per call: a font program is parsed once
	loaded  int           // objects loaded: bounded by lim.MaxObjects
	inflate int64         // decompressed bytes: bounded by lim.MaxStream
	rebuilt bool
}

type objStream struct {
	data []byte
	offs map[int]int64 // object number → offset in data
}

// maxSections bounds a chain of /Prev cross-reference sections.
const maxSections = 1024

func (f *file) lexerAt(off int64) *lexer {
	l := newLexer(f.ra, f.size, f.lim.MaxObjects)
	l.pos = off
	return l
}

// readXref reads the cross-reference sections from startxref back along
// /Prev; the newest entry for a number wins.
func (f *file) readXref() error {
	off, err := f.startxref()
	if err != nil {
		return err
	}
	var ents []xent
	seen := map[int64]bool{}
	for off >= 0 && !seen[off] && len(seen) < maxSections {
		seen[off] = true
		if err := f.ctx.Err(); err != nil {
			return err
		}
		got, tr, err := f.section(off)
		if err != nil {
			return err
		}
		ents = append(ents, got...)
		if f.trailer == nil {
			f.trailer = tr
		}
		if x, ok := tr["XRefStm"].(int); ok && !seen[int64(x)] { // a hybrid file
			seen[int64(x)] = true
			if got, _, err := f.section(int64(x)); err == nil {
				ents = append(ents, got...)
			}
		}
		off = -1
		if p, ok := tr["Prev"].(int); ok {
			off = int64(p)
		}
	}
	f.setXref(ents)
	if f.trailer == nil {
		return errCorrupt("no trailer")
	}
	return nil
}

// setXref sorts entries by number keeping the first (newest) of each.
func (f *file) setXref(ents []xent) {
	slices.SortStableFunc(ents, func(a, b xent) int { return a.num - b.num })
	out := ents[:0]
	for i, e := range ents {
		if i > 0 && e.num == ents[i-1].num {
			continue
		}
		out = append(out, e)
	}
	f.xref = slices.Clip(out)
}

func (f *file) startxref() (int64, error) {
	n := int64(1024)
	if n > f.size {
		n = f.size
	}
	buf := make([]byte, n)
	if _, err := f.ra.ReadAt(buf, f.size-n); err != nil && err != io.EOF {
		return 0, errCorrupt("cannot read the file's end")
	}
	i := bytes.LastIndex(buf, []byte("startxref"))
	if i < 0 {
		return 0, errCorrupt("no startxref")
	}
	l := bytesLexer(buf[i+len("startxref"):], 64)
	t, _ := l.token()
	if t.kind != tokNum || t.num < 0 || int64(t.num) >= f.size {
		return 0, errCorrupt("startxref points outside the file")
	}
	return int64(t.num), nil
}

// section reads one cross-reference table or stream at off.
func (f *file) section(off int64) ([]xent, dict, error) {
	l := f.lexerAt(off)
	t, err := l.token()
	if err != nil {
		return nil, nil, err
	}
	if t.kind == tokWord && t.s == "xref" {
		return f.table(l)
	}
	v, err := f.objectAt(off, -1)
	if err != nil {
		return nil, nil, err
	}
	s, ok := v.(*stream)
	if !ok || s.d["Type"] != name("XRef") {
		return nil, nil, errCorrupt("startxref points at no cross-reference")
	}
	return f.xrefStream(s)
}

// table reads a classic table: subsections of "start count" then count
// entries of "offset gen n|f", then the trailer dictionary.
func (f *file) table(l *lexer) ([]xent, dict, error) {
	var ents []xent
	for {
		t, err := l.token()
		if err != nil {
			return nil, nil, err
		}
		if t.kind == tokWord && t.s == "trailer" {
			v, err := l.object(0, f.lim.MaxDepth)
			if err != nil {
				return nil, nil, err
			}
			d, _ := v.(dict)
			return ents, d, nil
		}
		c, _ := l.token()
		if t.kind != tokNum || c.kind != tokNum || t.num < 0 || c.num < 0 {
			return nil, nil, errCorrupt("malformed cross-reference table")
		}
		start, count := int(t.num), int64(c.num)
		// Each entry takes 18 bytes or more: a count the rest of the file
		// cannot hold is a lie, not a loop to run.
		if count > (f.size-l.pos)/18+1 {
			return nil, nil, errCorrupt("cross-reference count larger than the file")
		}
		for i := 0; i < int(count); i++ {
			o, _ := l.token()
			g, _ := l.token()
			k, _ := l.token()
			if o.kind != tokNum || g.kind != tokNum || k.kind != tokWord {
				return nil, nil, errCorrupt("malformed cross-reference entry")
			}
			e := xent{num: start + i, gen: uint16(g.num), off: int64(o.num)}
			if k.s == "n" {
				e.typ = 1
			}
			ents = append(ents, e)
		}
	}
}

func (f *file) xrefStream(s *stream) ([]xent, dict, error) {
	data, err := f.streamData(s)
	if err != nil {
		return nil, nil, err
	}
	w, _ := s.d["W"].(array)
	if len(w) != 3 {
		return nil, nil, errCorrupt("cross-reference stream without /W")
	}
	var ws [3]int
	rowLen := 0
	for i := range ws {
		ws[i], _ = w[i].(int)
		if ws[i] < 0 || ws[i] > 8 {
			return nil, nil, errCorrupt("bad /W in cross-reference stream")
		}
		rowLen += ws[i]
	}
	if rowLen == 0 {
		return nil, nil, errCorrupt("bad /W in cross-reference stream")
	}
	index, _ := s.d["Index"].(array)
	if index == nil {
		size, _ := s.d["Size"].(int)
		index = array{0, size}
	}
	var ents []xent
	for i := 0; i+1 < len(index); i += 2 {
		start, _ := index[i].(int)
		count, _ := index[i+1].(int)
		for j := 0; j < count && len(data) >= rowLen; j++ {
			row := data[:rowLen]
			data = data[rowLen:]
			typ := 1
			if ws[0] > 0 {
				typ = int(be(row[:ws[0]]))
			}
			a := be(row[ws[0] : ws[0]+ws[1]])
			b := be(row[ws[0]+ws[1]:])
			e := xent{num: start + j, typ: uint8(typ), off: a}
			if typ == 2 {
				e.idx = int(b)
			} else {
				e.gen = uint16(b)
			}
			ents = append(ents, e)
		}
	}
	return ents, s.d, nil
}

func be(b []byte) int64 {
	var v int64
	for _, c := range b {
		v = v<<8 | int64(c)
	}
	return v
}

// rebuild scans the whole file for "N G obj" and "trailer", as readers do
// for a file whose cross-reference is broken: a damaged or truncated file
// still shows the pages it holds.
func (f *file) rebuild() error {
	f.rebuilt = true
	f.cache = map[int]any{}
	f.objstm = map[int]*objStream{}
	var ents []xent
	var stms []int
	var root any
	const chunk = 1 << 20
	buf := make([]byte, chunk+64)
	for base := int64(0); base < f.size; base += chunk {
		if err := f.ctx.Err(); err != nil {
			return err
		}
		n, _ := f.ra.ReadAt(buf, base)
		b := buf[:n]
		for i := 0; ; {
			j := bytes.Index(b[i:], []byte("obj"))
			if j < 0 {
				break
			}
			at := i + j
			i = at + 3
			if at >= chunk {
				break // the next chunk's, read again there
			}
			num, gen, start, ok := objHeader(b, at)
			if !ok {
				continue
			}
			ents = append(ents, xent{num: num, typ: 1, gen: uint16(gen), off: base + int64(start)})
			head := b[at:min(at+256, len(b))]
			if bytes.Contains(head, []byte("/ObjStm")) {
				stms = append(stms, num)
			}
			if bytes.Contains(head, []byte("/Catalog")) {
				root = ref{num, gen}
			}
		}
		for i := 0; ; {
			j := bytes.Index(b[i:], []byte("trailer"))
			if j < 0 || i+j >= chunk {
				break
			}
			i += j + 7
			l := bytesLexer(b[i:], f.lim.MaxObjects)
			if v, err := l.object(0, f.lim.MaxDepth); err == nil {
				if d, ok := v.(dict); ok && d["Root"] != nil {
					f.trailer = d
				}
			}
		}
	}
	// Later definitions of a number win in a scan: reverse, then keep
	// the first of each.
	slices.Reverse(ents)
	f.setXref(ents)
	f.addObjStreams(stms)
	if f.trailer == nil && root != nil {
		f.trailer = dict{"Root": root}
	}
	if f.trailer == nil {
		return errCorrupt("no cross-reference and no document catalog")
	}
	return nil
}

// addObjStreams adds the objects of the object streams a scan found,
// where no top-level object has their number.
func (f *file) addObjStreams(stms []int) {
	ents := f.xref
	for _, n := range stms {
		os, err := f.objStream(n)
		if err != nil {
			continue
		}
		for num := range os.offs {
			ents = append(ents, xent{num: num, typ: 2, off: int64(n)})
		}
	}
	f.setXref(ents)
}

// objHeader parses "num gen " backwards from the "obj" at at.
func objHeader(b []byte, at int) (num, gen, start int, ok bool) {
	i := at
	digits := func() (int, bool) {
		for i > 0 && isSpace(b[i-1]) {
			i--
		}
		end := i
		for i > 0 && b[i-1] >= '0' && b[i-1] <= '9' && end-i < 10 {
			i--
		}
		if i == end {
			return 0, false
		}
		v, err := strconv.Atoi(string(b[i:end]))
		return v, err == nil
	}
	if at+3 < len(b) && !isSpace(b[at+3]) && !isDelim(b[at+3]) {
		return 0, 0, 0, false
	}
	gen, ok1 := digits()
	num, ok2 := digits()
	if !ok1 || !ok2 || (i > 0 && !isSpace(b[i-1]) && !isDelim(b[i-1])) {
		return 0, 0, 0, false
	}
	return num, gen, i, true
}

func (f *file) find(num int) (xent, bool) {
	i, ok := slices.BinarySearchFunc(f.xref, num, func(e xent, n int) int { return e.num - n })
	if !ok {
		return xent{}, false
	}
	return f.xref[i], true
}

// resolve follows references to a value; a reference to nothing is null.
// Chains of references count toward the nesting limit.
func (f *file) resolve(v any) (any, error) {
	var chain []int
	for depth := 0; ; depth++ {
		r, ok := v.(ref)
		if !ok {
			return v, nil
		}
		if slices.Contains(chain, r.num) {
			return nil, nil // a reference to itself: null
		}
		chain = append(chain, r.num)
		if depth >= f.lim.MaxDepth {
			return nil, errLimit("references nested deeper than the limit")
		}
		if c, ok := f.cache[r.num]; ok {
			v = c
			continue
		}
		var err error
		if v, err = f.load(r.num); err != nil {
			return nil, err
		}
	}
}

// load reads object num from the file, counting it toward MaxObjects.
func (f *file) load(num int) (any, error) {
	if f.loaded >= f.lim.MaxObjects {
		return nil, errLimit("more objects than the limit")
	}
	f.loaded++
	if f.loaded%1024 == 0 {
		if err := f.ctx.Err(); err != nil {
			return nil, err
		}
	}
	f.cache[num] = nil // a reference loop through a stream's /Length ends here
	e, ok := f.find(num)
	var v any
	var err error
	switch {
	case !ok || e.typ == 0:
	case e.typ == 1:
		v, err = f.objectAt(e.off, num)
	case e.typ == 2:
		v, err = f.inObjStream(int(e.off), num)
	}
	if err != nil {
		if isLimit(err) || f.ctx.Err() != nil {
			return nil, err
		}
		v = nil // a damaged object reads as null, as readers do
	}
	f.cache[num] = v
	return v, nil
}

// objectAt reads "num gen obj value" at off; want is the number expected
// (-1: any).
func (f *file) objectAt(off int64, want int) (any, error) {
	if off < 0 || off >= f.size {
		return nil, errCorrupt("object offset outside the file")
	}
	l := f.lexerAt(off)
	n, _ := l.token()
	g, _ := l.token()
	o, _ := l.token()
	if n.kind != tokNum || g.kind != tokNum || o.kind != tokWord || o.s != "obj" || (want >= 0 && int(n.num) != want) {
		return nil, errCorrupt("no object where the cross-reference says")
	}
	v, err := l.object(0, f.lim.MaxDepth)
	if err != nil {
		return nil, err
	}
	if d, ok := v.(dict); ok {
		v, _ = l.streamAfter(d)
	}
	return v, nil
}

func (f *file) objStream(n int) (*objStream, error) {
	if os, ok := f.objstm[n]; ok {
		if os == nil {
			return nil, errCorrupt("object stream inside itself")
		}
		return os, nil
	}
	f.objstm[n] = nil
	e, ok := f.find(n)
	if !ok || e.typ != 1 {
		return nil, errCorrupt("missing object stream")
	}
	v, err := f.objectAt(e.off, n)
	if err != nil {
		return nil, err
	}
	s, ok := v.(*stream)
	if !ok {
		return nil, errCorrupt("object stream is not a stream")
	}
	data, err := f.streamData(s)
	if err != nil {
		return nil, err
	}
	first, _ := s.d["First"].(int)
	count, _ := s.d["N"].(int)
	if first < 0 || first > len(data) || count < 0 || count > len(data)/2 {
		return nil, errCorrupt("malformed object stream")
	}
	os := &objStream{data: data, offs: map[int]int64{}}
	l := bytesLexer(data[:first], 64)
	for i := 0; i < count; i++ {
		a, _ := l.token()
		b, _ := l.token()
		if a.kind != tokNum || b.kind != tokNum {
			break
		}
		if _, dup := os.offs[int(a.num)]; !dup {
			os.offs[int(a.num)] = int64(first) + int64(b.num)
		}
	}
	f.objstm[n] = os
	return os, nil
}

func (f *file) inObjStream(n, num int) (any, error) {
	os, err := f.objStream(n)
	if err != nil {
		return nil, err
	}
	off, ok := os.offs[num]
	if !ok || off < 0 || off >= int64(len(os.data)) {
		return nil, errCorrupt("object missing from its object stream")
	}
	l := bytesLexer(os.data, f.lim.MaxObjects)
	l.pos = off
	return l.object(0, f.lim.MaxDepth)
}
