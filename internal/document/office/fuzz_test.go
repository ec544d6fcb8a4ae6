package office

import (
	"archive/zip"
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/serverfs/serverfs/internal/errs"
)

// FuzzRead: any bytes, read as each kind, and any XML, read as each
// kind's main part (a zip of mutated bytes rarely inflates), give a text
// within the bounds or an error with a document code; never a panic.
func FuzzRead(f *testing.F) {
	seedDocs := [][]byte{
		docxOf(f, `<w:p><w:r><w:t>a</w:t><w:tab/><w:br/></w:r></w:p><w:tbl><w:tr><w:tc><w:p/></w:tc></w:tr></w:tbl>`),
		xlsxOf(f, []string{"s"}, xsheet{"a", `<row r="2"><c r="B2" t="s"><v>0</v></c><c r="C2" s="1"><v>45000</v></c></row>`}),
		pptxOf(f, [][]string{{"t", "\n", "u"}}),
		odfOf(f, "text", `<text:p>a<text:s text:c="2"/>b</text:p>`, ""),
		odfOf(f, "spreadsheet", `<table:table table:name="x"><table:table-row table:number-rows-repeated="3"><table:table-cell table:number-columns-repeated="2"><text:p>x</text:p></table:table-cell></table:table-row></table:table>`, ""),
		odfOf(f, "presentation", `<draw:page><text:p>x</text:p></draw:page>`, ""),
		oleEncryptedDocx(),
	}
	for _, d := range seedDocs {
		f.Add(d)
	}
	for _, x := range []string{
		`<w:document><w:body><w:p><w:r><w:t>x&amp;&#x1F600;</w:t></w:r></w:p></w:body></w:document>`,
		`<worksheet><sheetData><row r="1"><c r="XFD1" t="inlineStr"><is><t><![CDATA[a]]b]]></t></is></c></row></sheetData></worksheet>`,
		`<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>`,
		`<office:document-content><office:body><office:spreadsheet><table:table><table:table-row><table:table-cell table:number-columns-repeated="99999999"/><table:table-cell office:value-type="time" office:time-value="PT1H"/></table:table-row></table:table></office:spreadsheet></office:body></office:document-content>`,
		`<p:sld><a:p><a:r><a:t>x</a:t></a:r></a:p><!-- c --><?pi x?></p:sld>`,
	} {
		f.Add([]byte(x))
	}
	lim := Limits{MaxText: 4 << 10, MaxXML: 1 << 20, MaxRatio: 64, MaxDepth: 32, MaxCells: 1000, MaxParts: 4}
	f.Fuzz(func(t *testing.T, data []byte) {
		docs := []struct {
			kind Kind
			b    []byte
		}{
			{Docx, zipMethod(t, zip.Store, member{"word/document.xml", string(data)})},
			{Xlsx, zipMethod(t, zip.Store, member{"xl/workbook.xml", `<workbook><sheets><sheet name="a" r:id="r1"/><sheet name="b" r:id="r2"/></sheets></workbook>`},
				member{"xl/_rels/workbook.xml.rels", `<Relationships><Relationship Id="r1" Target="s.xml"/><Relationship Id="r2" Target="/xl/s.xml"/></Relationships>`},
				member{"xl/s.xml", string(data)}, member{"xl/sharedStrings.xml", string(data)}, member{"xl/styles.xml", string(data)})},
			{Pptx, zipMethod(t, zip.Store, member{"ppt/presentation.xml", `<p:presentation><p:sldIdLst><p:sldId r:id="a"/></p:sldIdLst></p:presentation>`},
				member{"ppt/_rels/presentation.xml.rels", `<Relationships><Relationship Id="a" Target="slides/s.xml"/></Relationships>`}, member{"ppt/slides/s.xml", string(data)})},
			{Odt, zipMethod(t, zip.Store, member{"content.xml", string(data)})},
			{Ods, zipMethod(t, zip.Store, member{"content.xml", string(data)}, member{"META-INF/manifest.xml", string(data)})},
			{Odp, zipMethod(t, zip.Store, member{"content.xml", string(data)})},
		}
		for _, kind := range []Kind{Docx, Xlsx, Pptx, Odt, Ods, Odp} {
			docs = append(docs, struct {
				kind Kind
				b    []byte
			}{kind, data})
		}
		for _, d := range docs {
			Detect("f."+string(d.kind), bytes.NewReader(d.b), int64(len(d.b)))
			doc, err := Read(context.Background(), bytes.NewReader(d.b), int64(len(d.b)), d.kind, lim)
			if err != nil {
				if c := errs.CodeOf(err); !strings.HasPrefix(string(c), "DOCUMENT_") {
					t.Fatalf("%s: an error without a document code: %v", d.kind, err)
				}
				continue
			}
			checkDoc(t, d.kind, doc.Text, len(doc.Parts), lim)
			for _, p := range doc.Parts {
				if p.Line < 1 || p.Line > strings.Count(doc.Text, "\n") || !strings.HasPrefix(strings.Split(doc.Text, "\n")[p.Line-1], "# "+p.Label) {
					t.Fatalf("%s: part %v is not at its line in %q", d.kind, p, doc.Text)
				}
			}
		}
	})
}

func checkDoc(t *testing.T, kind Kind, text string, parts int, lim Limits) {
	t.Helper()
	switch {
	case int64(len(text)) > lim.MaxText:
		t.Fatalf("%s: %d bytes of text", kind, len(text))
	case text != "" && !strings.HasSuffix(text, "\n"):
		t.Fatalf("%s: the text does not end its last line: %q", kind, text)
	case !utf8.ValidString(text):
		t.Fatalf("%s: invalid UTF-8: %q", kind, text)
	case strings.ContainsAny(text, "\r\f\x00"):
		t.Fatalf("%s: a control character: %q", kind, text)
	case parts > lim.MaxParts:
		t.Fatalf("%s: %d parts", kind, parts)
	}
}
