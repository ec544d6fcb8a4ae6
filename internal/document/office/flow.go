package office

// flow writes the paragraphs and tables of a text document or a slide as
// lines: a paragraph is a line, a table row is a line of tab-separated
// cells. A paragraph inside another (a text box anchored in a paragraph)
// starts a line of its own; a table inside a cell, and a cell's several
// paragraphs, stay within the cell, separated by spaces.
type flow struct {
	o         *out
	keepEmpty bool // an empty paragraph is an empty line (documents, not slides)
	collapse  bool // ODF: a run of white space in the text is one space
	para      int  // paragraphs open
	table     int  // tables open
	cells     int  // cells begun in the current row of the outermost table
	inRow     bool
	cellText  bool // the current cell has text
	space     bool // a space is due before the next text of the cell
	lastSpace bool // ODF: the paragraph so far ends with white space (or is empty)
	buf       []byte
}

func (f *flow) inCell() bool { return f.table > 0 && f.inRow && f.cells > 0 }

// separate marks a space due within a cell that has text.
func (f *flow) separate() {
	if f.cellText {
		f.space = true
	}
}

func (f *flow) startPara() error {
	f.para++
	f.lastSpace = true
	if f.inCell() {
		f.separate()
		return nil
	}
	if f.para > 1 && f.o.lineOpen {
		return f.o.endLine()
	}
	return nil
}

func (f *flow) endPara() error {
	if f.para == 0 {
		return nil
	}
	f.para--
	switch {
	case f.inCell():
		return nil
	case f.o.lineOpen || (f.para == 0 && f.keepEmpty):
		return f.o.endLine()
	}
	return nil
}

// write writes text of the open paragraph; text outside paragraphs
// (white space between elements) is not the document's.
func (f *flow) write(b []byte) error {
	if f.para == 0 || len(b) == 0 {
		return nil
	}
	if f.collapse {
		b = f.collapseSpace(b)
		if len(b) == 0 {
			return nil
		}
	}
	if f.space {
		f.space = false
		if err := f.o.inline([]byte{' '}); err != nil {
			return err
		}
	}
	f.cellText = f.cellText || f.inCell()
	return f.o.inline(b)
}

// collapseSpace applies ODF's white-space rule: a run of spaces, tabs
// and newlines in the text is one space, none at a paragraph's start.
func (f *flow) collapseSpace(b []byte) []byte {
	out := f.buf[:0]
	for _, c := range b {
		if !isSpace(c) {
			out = append(out, c)
			f.lastSpace = false
		} else if !f.lastSpace {
			out = append(out, ' ')
			f.lastSpace = true
		}
	}
	f.buf = out
	return out
}

// spaces writes n explicit spaces (ODF's text:s), at most a line's worth.
func (f *flow) spaces(n int64) error {
	n = min(max(n, 1), 1024)
	f.lastSpace = true
	sp := make([]byte, n)
	for i := range sp {
		sp[i] = ' '
	}
	return f.writeRaw(sp)
}

func (f *flow) writeRaw(b []byte) error {
	if f.para == 0 {
		return nil
	}
	collapse := f.collapse
	f.collapse = false
	err := f.write(b)
	f.collapse = collapse
	return err
}

func (f *flow) tab() error {
	if f.para == 0 {
		return nil
	}
	if f.inCell() {
		return f.writeRaw([]byte{' '})
	}
	f.lastSpace = true
	return f.o.tabs(1)
}

func (f *flow) lineBreak() error {
	if f.para == 0 {
		return nil
	}
	if f.inCell() {
		return f.writeRaw([]byte{' '})
	}
	f.lastSpace = true
	return f.o.endLine()
}

func (f *flow) startTable() error {
	f.table++
	if f.table == 1 && f.o.lineOpen {
		return f.o.endLine()
	}
	return nil
}

func (f *flow) endTable() {
	if f.table > 0 {
		f.table--
	}
	if f.table == 0 {
		f.inRow = false
	}
}

func (f *flow) startRow() error {
	if f.table != 1 {
		f.separate()
		return nil
	}
	f.inRow, f.cells = true, 0
	if f.o.lineOpen {
		return f.o.endLine()
	}
	return nil
}

func (f *flow) endRow() error {
	if f.table != 1 || !f.inRow {
		return nil
	}
	f.inRow = false
	return f.o.endLine()
}

func (f *flow) startCell() error {
	if f.table != 1 || !f.inRow {
		f.separate()
		return nil
	}
	f.cellText, f.space = false, false
	f.cells++
	if f.cells > 1 {
		return f.o.tabs(1)
	}
	return nil
}
