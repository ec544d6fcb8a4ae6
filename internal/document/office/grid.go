package office

import "fmt"

// maxEmptyLines is the longest run of empty rows written as empty lines;
// a longer one is a single "# … N empty rows" line.
const maxEmptyLines = 100

// grid writes a sheet's rows: a row's cells are gathered into one line
// (so that a repeated ODS row can be written again) and written when the
// row ends, if it has a non-empty cell; runs of empty rows are written
// only before a non-empty one.
type grid struct {
	o        *out
	written  int64 // number of the last row written, 0 before any
	line     []byte
	fields   int64 // fields in line
	col      int64 // column of line's last field, 0 before any
	cutCells bool  // line stopped at MaxCells
}

// startSheet begins a sheet's rows.
func (g *grid) startSheet() {
	g.written = 0
	g.reset()
}

func (g *grid) reset() {
	g.line, g.fields, g.col, g.cutCells = g.line[:0], 0, 0, false
}

// full says the row being gathered can take no more cells: past
// MaxCells, or longer than the text left.
func (g *grid) full() bool {
	return g.cutCells || int64(len(g.line)) > g.o.room()
}

// cell adds a non-empty value in column col (1-based) of the current row,
// with an empty field for each column skipped since the last one (or a
// single separator when col does not advance: cells out of order).
func (g *grid) cell(col int64, value []byte) {
	if g.full() {
		return
	}
	var tabs, fields int64
	switch {
	case g.col == 0:
		tabs = max(col, 1) - 1
		fields = tabs + 1
	case col > g.col:
		tabs = col - g.col
		fields = tabs
	default:
		tabs, fields = 1, 1
		col = g.col + 1
	}
	if g.o.cells+g.fields+fields > g.o.maxCells {
		g.cutCells = true
		return
	}
	// At most the text left: more could never be written.
	tabs = min(tabs, max(g.o.room()-int64(len(g.line)), 0)+1)
	for range tabs {
		g.line = append(g.line, '\t')
	}
	if clean(value) {
		g.line = append(g.line, value...)
	} else {
		g.line = appendClean(g.line, value)
	}
	g.fields += fields
	g.col = col
}

// endRow writes the row gathered as rows row … row+times-1 (a repeated
// ODS row), after the empty rows since the last written; an empty row
// is only counted.
func (g *grid) endRow(row, times int64) error {
	defer g.reset()
	if g.fields == 0 && !g.cutCells {
		return nil
	}
	if err := g.emptyRows(row - g.written - 1); err != nil {
		return err
	}
	if g.cutCells {
		times = 1 // the row is written once, cut, and the text ends
	}
	for i := range times {
		if i%4096 == 4095 {
			if err := g.o.ctxErr(); err != nil {
				return err
			}
		}
		if err := g.o.addCells(g.fields); err != nil {
			return err
		}
		if err := g.o.write(g.line); err != nil {
			return err
		}
		if err := g.o.endLine(); err != nil {
			return err
		}
		g.written = row + i
	}
	if g.cutCells {
		return g.o.stop("more than %d cells", g.o.maxCells)
	}
	return nil
}

func (g *grid) emptyRows(n int64) error {
	if n > maxEmptyLines {
		return g.o.line(fmt.Sprintf("# … %d empty rows", n))
	}
	for range max(n, 0) {
		if err := g.o.endLine(); err != nil {
			return err
		}
	}
	return nil
}

// cellText gathers a cell's text, at most the text left plus one byte
// (more could never be written).
type cellText struct {
	b []byte
}

func (c *cellText) add(o *out, s []byte) {
	if room := o.room() + 1 - int64(len(c.b)); room > 0 {
		c.b = append(c.b, s[:min(int64(len(s)), room)]...)
	}
}
