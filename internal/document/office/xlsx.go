package office

import "errors"

// workbook is what xl/workbook.xml says: its sheets in order (at most
// MaxParts of total) and its date system.
type workbook struct {
	names, ids []string
	total      int
	date1904   bool
}

// readXlsx reads the workbook's sheets in order.
func readXlsx(p *pkg) error {
	const main = "xl/workbook.xml"
	wb, err := readWorkbook(p, main)
	if errors.Is(err, errMissing) {
		return missing(main)
	}
	if err != nil {
		return err
	}
	wanted := make(map[string]bool, len(wb.ids))
	for _, id := range wb.ids {
		wanted[id] = true
	}
	rels, err := p.rels(main, func(id, typ string) bool {
		return wanted[id] || typeIs(typ, "sharedStrings") || typeIs(typ, "styles")
	})
	if err != nil {
		return err
	}
	sstPart, stylesPart := "xl/sharedStrings.xml", "xl/styles.xml"
	for _, r := range rels {
		switch {
		case typeIs(r.typ, "sharedStrings"):
			sstPart = r.target
		case typeIs(r.typ, "styles"):
			stylesPart = r.target
		}
	}
	x := &xlsx{p: p, g: grid{o: p.o}, date1904: wb.date1904}
	if err := x.readStrings(sstPart); err != nil {
		return err
	}
	if err := x.readStyles(stylesPart); err != nil {
		return err
	}
	for i, id := range wb.ids {
		if err := x.readSheet(wb.names[i], rels[id].target); err != nil {
			return err
		}
	}
	if wb.total > len(wb.ids) {
		return p.o.stop("only the first %d of %d sheets are read", len(wb.ids), wb.total)
	}
	return nil
}

func readWorkbook(p *pkg, main string) (*workbook, error) {
	wb := &workbook{}
	err := p.scan(main, func(s *scanner) error {
		first := true
		for {
			tok, err := s.Next()
			if err != nil || tok == tokEOF {
				if err == nil && first {
					err = s.corrupt("no workbook element")
				}
				return err
			}
			if tok != tokStart {
				continue
			}
			if first && !s.is("workbook") {
				return s.corrupt("its root is <%s>, not a workbook", s.local)
			}
			first = false
			switch {
			case s.is("workbookPr"):
				v, _ := s.attr("date1904")
				wb.date1904 = string(v) == "1" || string(v) == "true"
			case s.is("sheet"):
				wb.total++
				if len(wb.ids) < p.lim.MaxParts {
					name, _ := s.attr("name")
					wb.names = append(wb.names, cleanLabel(string(name)))
					wb.ids = append(wb.ids, string(s.attrPrefixed("id")))
				}
			}
		}
	})
	return wb, err
}

// xlsx reads one workbook's parts.
type xlsx struct {
	p        *pkg
	g        grid
	date1904 bool
	strs     sst
	xfs      []dateKind // per cellXfs index
}

// sst is the shared strings, kept in one buffer up to a budget: twice
// MaxText, counting 8 bytes per string (a hostile part of millions of
// empty strings must not fill memory either). Each string keeps at most
// MaxText+1 bytes: more could never be written.
type sst struct {
	data []byte
	ends []uint32
	full bool // strings past the budget were not kept
}

func (t *sst) get(i int64) ([]byte, bool) {
	if i < 0 || i >= int64(len(t.ends)) {
		return nil, false
	}
	start := uint32(0)
	if i > 0 {
		start = t.ends[i-1]
	}
	return t.data[start:t.ends[i]], true
}

func (x *xlsx) readStrings(part string) error {
	budget := min(2*x.p.lim.MaxText, 1<<31) // ends are uint32
	perString := x.p.lim.MaxText + 1
	t := &x.strs
	err := x.p.scan(part, func(s *scanner) error {
		inSI, inT, start := false, false, 0
		for {
			tok, err := s.Next()
			if err != nil || tok == tokEOF {
				return err
			}
			switch {
			case tok == tokStart && s.is("si"):
				inSI, start = true, len(t.data)
			case tok == tokStart && s.is("rPh"):
				// A phonetic reading, not the string's text.
				if err := s.skip(); err != nil {
					return err
				}
			case tok == tokStart && s.is("t"):
				inT = inSI
			case tok == tokEnd && s.is("t"):
				inT = false
			case tok == tokText && inT:
				keep := min(int64(len(s.text)), perString-int64(len(t.data)-start))
				t.data = append(t.data, s.text[:max(keep, 0)]...)
			case tok == tokEnd && s.is("si"):
				inSI = false
				if int64(len(t.data))+8*int64(len(t.ends)+1) > budget {
					t.data, t.full = t.data[:start], true
					return nil
				}
				t.ends = append(t.ends, uint32(len(t.data)))
			}
		}
	})
	if errors.Is(err, errMissing) {
		return nil
	}
	return err
}

func (x *xlsx) readStyles(part string) error {
	custom := map[int64]dateKind{}
	err := x.p.scan(part, func(s *scanner) error {
		inXfs := false
		for {
			tok, err := s.Next()
			if err != nil || tok == tokEOF {
				return err
			}
			switch {
			case tok == tokStart && s.is("numFmt") && len(custom) < 4096:
				id, _ := s.attr("numFmtId")
				code, _ := s.attr("formatCode")
				if n, ok := parseIndex(id); ok {
					custom[n] = formatKind(string(code))
				}
			case tok == tokStart && s.is("cellXfs"):
				inXfs = true
			case tok == tokEnd && s.is("cellXfs"):
				inXfs = false
			case tok == tokStart && inXfs && s.is("xf") && len(x.xfs) < 1<<20:
				id, _ := s.attr("numFmtId")
				n, _ := parseIndex(id)
				k, ok := custom[n]
				if !ok {
					k = builtinKind(n)
				}
				x.xfs = append(x.xfs, k)
			}
		}
	})
	if errors.Is(err, errMissing) {
		return nil
	}
	return err
}

// parseIndex parses a non-negative decimal index of at most 18 digits.
func parseIndex(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// cellRef parses a cell reference's column ("AB12" is 28), 0 when it
// has none or an absurd one.
func cellRef(b []byte) int64 {
	var col int64
	for i, c := range b {
		switch {
		case c >= 'A' && c <= 'Z':
			col = col*26 + int64(c-'A'+1)
		case c >= 'a' && c <= 'z':
			col = col*26 + int64(c-'a'+1)
		case i == 0:
			return 0
		default:
			return col
		}
		if i >= 6 {
			return 0
		}
	}
	return col
}

// cellType is a cell's t attribute: how its value is stored.
type cellType uint8

const (
	number       cellType = iota // "n" or none: a number, maybe a date
	sharedString                 // "s": an index into the shared strings
	inlineString                 // "inlineStr": the text of <is>
	boolean                      // "b": 1 or 0
	asWritten                    // "e" (an error), "str" (a formula's text), "d" (ISO 8601)
)

func typeOf(t []byte) cellType {
	switch string(t) {
	case "", "n":
		return number
	case "s":
		return sharedString
	case "inlineStr":
		return inlineString
	case "b":
		return boolean
	}
	return asWritten
}

// cell is the cell being read.
type cell struct {
	col   int64
	typ   cellType
	style int64
	v     cellText // <v>, or an inline string's text
	inV   bool
	inT   bool
	inIS  bool
}

func (x *xlsx) readSheet(name, part string) error {
	o := x.p.o
	if err := o.part("sheet " + name); err != nil {
		return err
	}
	x.g.startSheet()
	err := errMissing
	if part != "" {
		err = x.p.scan(part, x.sheetRows)
	}
	if errors.Is(err, errMissing) {
		o.note("sheet %s has no part", name)
		return nil
	}
	return err
}

// sheetRows writes a worksheet's sheetData row by row.
func (x *xlsx) sheetRows(s *scanner) error {
	var (
		row, col int64 // the current row's number, the last cell's column
		inRow    bool
		c        cell
		inCell   bool
	)
	for {
		tok, err := s.Next()
		if err != nil || tok == tokEOF {
			return err
		}
		switch tok {
		case tokStart:
			switch {
			case s.is("row"):
				r, ok := s.attr("r")
				n, valid := parseIndex(r)
				row, col, inRow = max(row+1, 1), 0, true
				if ok && valid && n > row {
					row = n
				}
			case s.is("c") && inRow:
				r, _ := s.attr("r")
				col = max(cellRef(r), col+1)
				typ, _ := s.attr("t")
				st, _ := s.attr("s")
				style, _ := parseIndex(st)
				c = cell{col: col, typ: typeOf(typ), style: style, v: cellText{b: c.v.b[:0]}}
				inCell = true
			case inCell && (s.is("f") || s.is("rPh") || s.is("extLst")):
				err = s.skip()
			case inCell:
				c.open(s, true)
			}
		case tokEnd:
			switch {
			case s.is("c") && inCell:
				inCell = false
				err = x.endCell(&c)
			case s.is("row") && inRow:
				inRow = false
				err = x.g.endRow(row, 1)
			case inCell:
				c.open(s, false)
			}
		case tokText:
			if inCell && ((c.inV && c.typ != inlineString) || (c.inIS && c.inT && c.typ == inlineString)) {
				c.v.add(x.p.o, s.text)
			}
		}
		if err != nil {
			return err
		}
	}
}

// open notes the start or end of a cell's v, is and t elements.
func (c *cell) open(s *scanner, start bool) {
	switch {
	case s.is("v"):
		c.inV = start
	case s.is("is"):
		c.inIS = start
	case s.is("t"):
		c.inT = start
	}
}

// endCell adds the cell's value, as the spreadsheet shows it where that
// is cheap, to the row.
func (x *xlsx) endCell(c *cell) error {
	v := c.v.b
	switch c.typ {
	case sharedString:
		i, ok := parseIndex(trimSpace(v))
		if !ok {
			return errCorrupt("a shared string index is not a number")
		}
		str, ok := x.strs.get(i)
		switch {
		case !ok && x.strs.full:
			return x.p.o.stop("shared strings past %d bytes are not kept", 2*x.p.lim.MaxText)
		case !ok:
			return errCorrupt("shared string %d of %d does not exist", i, len(x.strs.ends))
		}
		v = str
	case boolean:
		switch string(trimSpace(v)) {
		case "1":
			v = []byte("TRUE")
		case "0":
			v = []byte("FALSE")
		}
	case number:
		if c.style >= 0 && c.style < int64(len(x.xfs)) && x.xfs[c.style] != notDate {
			if d, ok := excelDate(string(trimSpace(v)), x.xfs[c.style], x.date1904); ok {
				v = []byte(d)
			}
		}
	}
	if len(v) > 0 {
		x.g.cell(c.col, v)
	}
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
