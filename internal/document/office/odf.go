package office

import (
	"errors"
	"fmt"

	"github.com/serverfs/serverfs/internal/errs"
)

const odfContent = "content.xml"

// odfSkipped are elements of content.xml whose text is not the body's:
// styles, footnotes and endnotes, comments, tracked changes (deleted
// text), speaker notes and forms.
var odfSkipped = map[string]bool{
	"automatic-styles": true, "font-face-decls": true, "scripts": true, "forms": true,
	"note": true, "annotation": true, "tracked-changes": true, "notes": true,
	"named-expressions": true, "database-ranges": true, "table-columns": true, "table-column": true,
	"content-validations": true, "calculation-settings": true,
}

// scanContent checks the manifest for encryption, then reads
// content.xml with fn.
func scanContent(p *pkg, fn func(s *scanner) error) error {
	encrypted := false
	err := p.scan("META-INF/manifest.xml", func(s *scanner) error {
		for {
			tok, err := s.Next()
			if err != nil || tok == tokEOF {
				return err
			}
			if tok == tokStart && s.is("encryption-data") {
				encrypted = true
				return nil
			}
		}
	})
	switch {
	case encrypted:
		return errs.New(errs.DocumentEncrypted, "the document is encrypted (its manifest has encryption data)")
	case err != nil && !errors.Is(err, errMissing):
		return err
	}
	err = p.scan(odfContent, func(s *scanner) error {
		tok, err := s.Next()
		for err == nil && tok == tokText {
			tok, err = s.Next()
		}
		switch {
		case err != nil:
			return err
		case tok != tokStart || !s.is("document-content"):
			return s.corrupt("no document-content element")
		}
		return fn(s)
	})
	if errors.Is(err, errMissing) {
		return missing(odfContent)
	}
	return err
}

// readOdt reads an OpenDocument text's paragraphs, headings and tables.
func readOdt(p *pkg) error {
	f := &flow{o: p.o, keepEmpty: true, collapse: true}
	return scanContent(p, func(s *scanner) error { return odfText(s, f, nil) })
}

// readOdp reads an OpenDocument presentation's pages as slides.
func readOdp(p *pkg) error {
	slides := 0
	f := &flow{o: p.o, collapse: true}
	page := func(s *scanner) error {
		slides++
		if slides > p.lim.MaxParts {
			return p.o.stop("only the first %d slides are read", p.lim.MaxParts)
		}
		*f = flow{o: p.o, collapse: true, buf: f.buf}
		return p.o.part(fmt.Sprintf("slide %d", slides))
	}
	return scanContent(p, func(s *scanner) error { return odfText(s, f, page) })
}

// odfText writes the text of content.xml's body through f; page, when
// not nil, begins a draw:page (a slide).
func odfText(s *scanner, f *flow, page func(*scanner) error) error {
	for {
		tok, err := s.Next()
		if err != nil || tok == tokEOF {
			return err
		}
		switch tok {
		case tokStart:
			err = odfStart(s, f, page)
		case tokEnd:
			switch string(s.local) {
			case "p", "h":
				err = f.endPara()
			case "table":
				f.endTable()
			case "table-row":
				err = f.endRow()
			}
		case tokText:
			err = f.write(s.text)
		}
		if err != nil {
			return err
		}
	}
}

func odfStart(s *scanner, f *flow, page func(*scanner) error) error {
	switch name := string(s.local); {
	case odfSkipped[name]:
		return s.skip()
	case name == "page" && page != nil:
		return page(s)
	case name == "p" || name == "h":
		return f.startPara()
	case name == "s":
		c, _ := s.attr("c")
		n, ok := parseIndex(c)
		if !ok {
			n = 1
		}
		return f.spaces(n)
	case name == "tab":
		return f.tab()
	case name == "line-break":
		return f.lineBreak()
	case name == "table":
		return f.startTable()
	case name == "table-row":
		return f.startRow()
	case name == "table-cell" || name == "covered-table-cell":
		return f.startCell()
	}
	return nil
}
