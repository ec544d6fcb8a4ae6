package office

import (
	"bytes"
	"fmt"
	"strings"
)

// maxRepeat bounds a repeat count read from an attribute; expanding is
// bounded anyway (by MaxCells and MaxText), this keeps sums in int64.
const maxRepeat = 1 << 31

// ods reads an OpenDocument spreadsheet's tables as sheets.
type ods struct {
	p      *pkg
	g      grid
	sheets int
	table  int // tables open: a table in a cell is text of the cell
	inRow  bool
	row    int64 // rows of the sheet so far
	rowRep int64
	col    int64 // columns of the row so far
	// the cell being read
	inCell  bool
	cellRep int64
	value   []byte // the value its attributes give, if any
	text    cellText
	para    int
	f       flow // collapses the cell text's white space
}

func readOds(p *pkg) error {
	d := &ods{p: p, g: grid{o: p.o}}
	return scanContent(p, d.body)
}

func (d *ods) body(s *scanner) error {
	for {
		tok, err := s.Next()
		if err != nil || tok == tokEOF {
			return err
		}
		switch tok {
		case tokStart:
			err = d.start(s)
		case tokEnd:
			err = d.end(s)
		case tokText:
			if d.inCell && d.para > 0 {
				d.text.add(d.p.o, d.f.collapseSpace(s.text))
			}
		}
		if err != nil {
			return err
		}
	}
}

// repeat reads a repeat attribute, 1 when absent or absurd.
func repeat(s *scanner, name string) int64 {
	v, _ := s.attr(name)
	n, ok := parseIndex(v)
	if !ok || n < 1 {
		return 1
	}
	return min(n, maxRepeat)
}

func (d *ods) start(s *scanner) error {
	name := string(s.local)
	switch {
	case odfSkipped[name] || name == "shapes":
		return s.skip()
	case name == "table":
		d.table++
		if d.table == 1 {
			return d.startSheet(s)
		}
	case d.table != 1:
		// Text of a table nested in a cell.
		if name == "p" || name == "h" {
			d.startPara()
		}
	case name == "table-row":
		d.inRow, d.col, d.rowRep = true, 0, repeat(s, "number-rows-repeated")
	case (name == "table-cell" || name == "covered-table-cell") && d.inRow:
		d.startCell(s)
	case !d.inCell:
	case name == "p" || name == "h":
		d.startPara()
	case name == "s":
		c, _ := s.attr("c")
		n, ok := parseIndex(c)
		if !ok {
			n = 1
		}
		d.text.add(d.p.o, bytes.Repeat([]byte{' '}, int(min(max(n, 1), 1024))))
		d.f.lastSpace = true
	case name == "tab" || name == "line-break":
		d.text.add(d.p.o, []byte{' '})
		d.f.lastSpace = true
	}
	return nil
}

func (d *ods) startSheet(s *scanner) error {
	d.sheets++
	if d.sheets > d.p.lim.MaxParts {
		return d.p.o.stop("only the first %d sheets are read", d.p.lim.MaxParts)
	}
	name, _ := s.attr("name")
	if err := d.p.o.part("sheet " + cleanLabel(string(name))); err != nil {
		return err
	}
	d.g.startSheet()
	d.row, d.inRow, d.inCell = 0, false, false
	return nil
}

// startPara separates a cell's paragraphs by a space.
func (d *ods) startPara() {
	if d.inCell {
		if d.para == 0 && len(d.text.b) > 0 {
			d.text.add(d.p.o, []byte{' '})
		}
		d.para++
		d.f.lastSpace = true
	}
}

func (d *ods) startCell(s *scanner) {
	d.inCell, d.para = true, 0
	d.cellRep = repeat(s, "number-columns-repeated")
	d.text.b = d.text.b[:0]
	d.value = d.value[:0]
	typ, _ := s.attr("value-type")
	switch string(typ) {
	case "float", "percentage", "currency":
		v, _ := s.attr("value")
		d.value = append(d.value, v...)
	case "date":
		v, _ := s.attr("date-value")
		d.value = append(d.value, strings.Replace(string(v), "T", " ", 1)...)
	case "time":
		v, _ := s.attr("time-value")
		d.value = append(d.value, isoDuration(string(v))...)
	case "boolean":
		v, _ := s.attr("boolean-value")
		switch string(v) {
		case "true":
			d.value = append(d.value, "TRUE"...)
		case "false":
			d.value = append(d.value, "FALSE"...)
		}
	}
}

func (d *ods) end(s *scanner) error {
	name := string(s.local)
	switch {
	case name == "table":
		d.table--
		if d.table == 0 {
			d.inRow, d.inCell = false, false
		}
	case (name == "p" || name == "h") && d.inCell && d.para > 0:
		d.para--
	case d.table != 1:
	case (name == "table-cell" || name == "covered-table-cell") && d.inCell:
		d.inCell = false
		return d.endCell()
	case name == "table-row" && d.inRow:
		d.inRow = false
		err := d.g.endRow(d.row+1, d.rowRep)
		d.row += d.rowRep
		return err
	}
	return nil
}

// endCell adds the cell, repeated, to the row: a value-typed cell's
// value, otherwise its text.
func (d *ods) endCell() error {
	v := d.value
	if len(v) == 0 {
		v = d.text.b
	}
	if len(v) == 0 || d.g.full() {
		d.col += d.cellRep
		return nil
	}
	for i := range d.cellRep {
		if i%4096 == 4095 {
			if err := d.p.o.ctxErr(); err != nil {
				return err
			}
		}
		if d.g.full() {
			break
		}
		d.g.cell(d.col+1+i, v)
	}
	d.col += d.cellRep
	return nil
}

// isoDuration shows an ODF time value, an ISO 8601 duration such as
// PT12H30M05S, as 12:30:05; anything else as written.
func isoDuration(v string) string {
	var h, m, sec int64
	rest, ok := strings.CutPrefix(v, "PT")
	if !ok {
		return v
	}
	for _, unit := range []struct {
		sep byte
		n   *int64
	}{{'H', &h}, {'M', &m}, {'S', &sec}} {
		i := strings.IndexByte(rest, unit.sep)
		if i < 0 {
			continue
		}
		whole, _, _ := strings.Cut(rest[:i], ".")
		n, ok := parseIndex([]byte(whole))
		if !ok {
			return v
		}
		*unit.n, rest = n, rest[i+1:]
	}
	if rest != "" {
		return v
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, sec)
}
