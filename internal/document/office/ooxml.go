package office

import (
	"errors"
	"fmt"
	"strings"
)

// readDocx reads word/document.xml's body.
func readDocx(p *pkg) error {
	const main = "word/document.xml"
	f := &flow{o: p.o, keepEmpty: true}
	err := p.scan(main, func(s *scanner) error { return runsBody(s, f, "document", wordStart) })
	if errors.Is(err, errMissing) {
		return missing(main)
	}
	if err == nil && p.hasPrefix("word/header", "word/footer", "word/comments") {
		p.o.note("headers, footers and comments are not read")
	}
	return err
}

// hasPrefix says whether a member's name begins with one of prefixes.
func (p *pkg) hasPrefix(prefixes ...string) bool {
	for name := range p.files {
		for _, pre := range prefixes {
			if strings.HasPrefix(name, pre) {
				return true
			}
		}
	}
	return false
}

// wordSkipped are elements whose content is not the document's text:
// properties (a paragraph's tab stops are w:tab elements too), the
// fallback copy of alternate content, deleted and moved-away text, and
// field instructions.
var wordSkipped = map[string]bool{
	"pPr": true, "rPr": true, "sectPr": true, "tblPr": true, "trPr": true, "tcPr": true, "tblGrid": true,
	"Fallback": true, "delText": true, "instrText": true, "moveFrom": true, "del": true,
}

// runsBody writes the paragraphs and tables of a WordprocessingML or
// DrawingML part: text is in t elements, paragraphs are p, tables tbl,
// tr, tc; start handles the other start tags. root, when not "", is the
// local name the part's root element must have.
func runsBody(s *scanner, f *flow, root string, start func(*scanner, *flow, *bool) error) error {
	inText, first := false, true
	for {
		tok, err := s.Next()
		if err != nil || tok == tokEOF {
			if err == nil && first && root != "" {
				err = s.corrupt("no %s element", root)
			}
			return err
		}
		switch tok {
		case tokStart:
			if first && root != "" && !s.is(root) {
				return s.corrupt("its root is <%s>, not %s", s.local, root)
			}
			first = false
			err = start(s, f, &inText)
		case tokEnd:
			switch string(s.local) {
			case "t":
				inText = false
			case "p":
				err = f.endPara()
			case "tbl":
				f.endTable()
			case "tr":
				err = f.endRow()
			}
		case tokText:
			if inText {
				err = f.write(s.text)
			}
		}
		if err != nil {
			return err
		}
	}
}

func wordStart(s *scanner, f *flow, inText *bool) error {
	switch name := string(s.local); {
	case wordSkipped[name]:
		return s.skip()
	case name == "t":
		*inText = true
	case name == "p":
		return f.startPara()
	case name == "tab":
		return f.tab()
	case name == "br" || name == "cr":
		return f.lineBreak()
	case name == "noBreakHyphen":
		return f.writeRaw([]byte{'-'})
	case name == "tbl":
		return f.startTable()
	case name == "tr":
		return f.startRow()
	case name == "tc":
		return f.startCell()
	}
	return nil
}

// readPptx reads the slides in presentation.xml's order.
func readPptx(p *pkg) error {
	const main = "ppt/presentation.xml"
	var ids []string
	total := 0
	err := p.scan(main, func(s *scanner) error {
		for {
			tok, err := s.Next()
			if err != nil || tok == tokEOF {
				return err
			}
			if tok == tokStart && s.is("sldId") {
				total++
				if len(ids) < p.lim.MaxParts {
					ids = append(ids, string(s.attrPrefixed("id")))
				}
			}
		}
	})
	if errors.Is(err, errMissing) {
		return missing(main)
	}
	if err != nil {
		return err
	}
	wanted := make(map[string]bool, len(ids))
	for _, id := range ids {
		wanted[id] = true
	}
	rels, err := p.rels(main, func(id, _ string) bool { return wanted[id] })
	if err != nil {
		return err
	}
	for i, id := range ids {
		if err := readSlide(p, i+1, rels[id].target); err != nil {
			return err
		}
	}
	if total > len(ids) {
		return p.o.stop("only the first %d of %d slides are read", len(ids), total)
	}
	if p.hasPrefix("ppt/notesslides/") {
		p.o.note("speaker notes are not read")
	}
	return nil
}

func readSlide(p *pkg, n int, part string) error {
	if err := p.o.part(fmt.Sprintf("slide %d", n)); err != nil {
		return err
	}
	f := &flow{o: p.o}
	err := errMissing
	if part != "" {
		err = p.scan(part, func(s *scanner) error { return runsBody(s, f, "", slideStart) })
	}
	if errors.Is(err, errMissing) {
		p.o.note("slide %d has no part", n)
		return nil
	}
	return err
}

// slideStart handles a slide's DrawingML: a:p paragraphs of a:t runs,
// and a:tbl tables.
func slideStart(s *scanner, f *flow, inText *bool) error {
	switch string(s.local) {
	case "Fallback", "pPr", "rPr", "endParaRPr":
		return s.skip()
	case "t":
		*inText = true
	case "p":
		return f.startPara()
	case "br":
		return f.lineBreak()
	case "tbl":
		return f.startTable()
	case "tr":
		return f.startRow()
	case "tc":
		return f.startCell()
	}
	return nil
}
