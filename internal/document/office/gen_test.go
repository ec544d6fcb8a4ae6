package office

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/serverfs/serverfs/internal/document"
	"github.com/serverfs/serverfs/internal/errs"
)

// The generators write real documents: a zip of minimal but valid OOXML
// or ODF parts, hand-written.

type member struct{ name, body string }

// zipOf writes members in order, deflated; an ODF "mimetype" is stored,
// as ODF requires.
func zipOf(t testing.TB, members ...member) []byte {
	return zipMethod(t, zip.Deflate, members...)
}

// zipMethod is zipOf with members compressed by method (the fuzz target
// stores them: a deflate writer per member would be most of its time).
func zipMethod(t testing.TB, method uint16, members ...member) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		method := method
		if m.name == "mimetype" {
			method = zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(m.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const xmlHead = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"

func contentTypes(overrides ...string) member {
	var b strings.Builder
	b.WriteString(xmlHead + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">`)
	b.WriteString(`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>`)
	b.WriteString(`<Default Extension="xml" ContentType="application/xml"/>`)
	for i := 0; i+1 < len(overrides); i += 2 {
		fmt.Fprintf(&b, `<Override PartName="/%s" ContentType="%s"/>`, overrides[i], overrides[i+1])
	}
	b.WriteString(`</Types>`)
	return member{"[Content_Types].xml", b.String()}
}

// relsOf writes a relationships part: id, type (the last segment), target.
func relsOf(name string, rels ...string) member {
	var b strings.Builder
	b.WriteString(xmlHead + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`)
	for i := 0; i+2 < len(rels); i += 3 {
		fmt.Fprintf(&b, `<Relationship Id="%s" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/%s" Target="%s"/>`, rels[i], rels[i+1], rels[i+2])
	}
	b.WriteString(`</Relationships>`)
	return member{name, b.String()}
}

const wordNS = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"`

// docxOf writes a docx whose body is body (w: elements).
func docxOf(t testing.TB, body string) []byte {
	return zipOf(t,
		contentTypes("word/document.xml", "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"),
		relsOf("_rels/.rels", "rId1", "officeDocument", "word/document.xml"),
		member{"word/document.xml", xmlHead + `<w:document ` + wordNS + `><w:body>` + body + `<w:sectPr><w:pgSz w:w="12240" w:h="15840"/></w:sectPr></w:body></w:document>`},
		relsOf("word/_rels/document.xml.rels"),
	)
}

// xsheet is one generated worksheet: its name and sheetData's rows.
type xsheet struct{ name, rows string }

// xlsxOf writes a workbook: its sheets, shared strings and styles (cellXfs
// 0 General, 1 numFmtId 14, 2 numFmtId 22, 3 custom yyyy-mm-dd, 4 0.00).
func xlsxOf(t testing.TB, shared []string, sheets ...xsheet) []byte {
	var wb, sst strings.Builder
	wb.WriteString(xmlHead + `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><workbookPr/><sheets>`)
	relList := []string{"rIdS", "sharedStrings", "sharedStrings.xml", "rIdT", "styles", "styles.xml"}
	members := []member{relsOf("_rels/.rels", "rId1", "officeDocument", "xl/workbook.xml")}
	overrides := []string{"xl/workbook.xml", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"}
	for i, sh := range sheets {
		fmt.Fprintf(&wb, `<sheet name="%s" sheetId="%d" r:id="rId%d"/>`, xmlEscape(sh.name), i+1, i+1)
		part := fmt.Sprintf("worksheets/sheet%d.xml", i+1)
		relList = append(relList, fmt.Sprintf("rId%d", i+1), "worksheet", part)
		overrides = append(overrides, "xl/"+part, "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml")
		members = append(members, member{"xl/" + part, xmlHead + `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1"/><sheetData>` + sh.rows + `</sheetData><pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/></worksheet>`})
	}
	wb.WriteString(`</sheets></workbook>`)
	fmt.Fprintf(&sst, xmlHead+`<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="%d" uniqueCount="%d">`, len(shared), len(shared))
	for _, s := range shared {
		fmt.Fprintf(&sst, `<si><t xml:space="preserve">%s</t></si>`, xmlEscape(s))
	}
	sst.WriteString(`</sst>`)
	styles := xmlHead + `<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy\-mm\-dd"/></numFmts>` +
		`<cellStyleXfs count="1"><xf numFmtId="14"/></cellStyleXfs>` +
		`<cellXfs count="5"><xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/><xf numFmtId="22" applyNumberFormat="1"/><xf numFmtId="164" applyNumberFormat="1"/><xf numFmtId="2"/></cellXfs></styleSheet>`
	members = append(members,
		member{"xl/workbook.xml", wb.String()},
		relsOf("xl/_rels/workbook.xml.rels", relList...),
		member{"xl/sharedStrings.xml", sst.String()},
		member{"xl/styles.xml", styles},
	)
	return zipOf(t, append([]member{contentTypes(overrides...)}, members...)...)
}

func xmlEscape(s string) string {
	var b bytes.Buffer
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\t':
			b.WriteString("&#9;")
		case '\n':
			b.WriteString("&#10;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

const pptNS = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"`

// pptxOf writes a presentation of slides (each a list of paragraphs of
// runs); the slide parts are named in reverse so that only the
// relationships give the order.
func pptxOf(t testing.TB, slides ...[][]string) []byte {
	var pres strings.Builder
	pres.WriteString(xmlHead + `<p:presentation ` + pptNS + `><p:sldMasterIdLst/><p:sldIdLst>`)
	var relList []string
	members := []member{relsOf("_rels/.rels", "rId1", "officeDocument", "ppt/presentation.xml")}
	for i, paras := range slides {
		id := fmt.Sprintf("rId%d", i+10)
		part := fmt.Sprintf("slides/slide%d.xml", len(slides)-i)
		fmt.Fprintf(&pres, `<p:sldId id="%d" r:id="%s"/>`, 256+i, id)
		relList = append(relList, id, "slide", part)
		var body strings.Builder
		for _, runs := range paras {
			body.WriteString(`<a:p><a:pPr algn="l"/>`)
			for _, r := range runs {
				if r == "\n" {
					body.WriteString(`<a:br><a:rPr lang="en-US"/></a:br>`)
					continue
				}
				fmt.Fprintf(&body, `<a:r><a:rPr lang="en-US" dirty="0"/><a:t>%s</a:t></a:r>`, xmlEscape(r))
			}
			body.WriteString(`<a:endParaRPr lang="en-US"/></a:p>`)
		}
		members = append(members, member{"ppt/" + part, xmlHead + `<p:sld ` + pptNS + `><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>` +
			`<p:sp><p:nvSpPr><p:cNvPr id="2" name="Title 1"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:lstStyle/>` + body.String() + `</p:txBody></p:sp></p:spTree></p:cSld></p:sld>`})
	}
	pres.WriteString(`</p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/></p:presentation>`)
	members = append(members, member{"ppt/presentation.xml", pres.String()}, relsOf("ppt/_rels/presentation.xml.rels", relList...))
	return zipOf(t, append([]member{contentTypes("ppt/presentation.xml", "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml")}, members...)...)
}

const odfNS = `xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" xmlns:calcext="urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0" office:version="1.3"`

// odfOf writes an ODF document of the kind ("text", "spreadsheet",
// "presentation") whose office:body holds body.
func odfOf(t testing.TB, kind, body, manifestExtra string) []byte {
	mime := "application/vnd.oasis.opendocument." + kind
	return zipOf(t,
		member{"mimetype", mime},
		member{"content.xml", xmlHead + `<office:document-content ` + odfNS + `><office:automatic-styles><style:style xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" style:name="P1"><text:p>not body</text:p></style:style></office:automatic-styles><office:body><office:` + kind + `>` + body + `</office:` + kind + `></office:body></office:document-content>`},
		member{"META-INF/manifest.xml", xmlHead + `<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3"><manifest:file-entry manifest:full-path="/" manifest:media-type="` + mime + `"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml">` + manifestExtra + `</manifest:file-entry></manifest:manifest>`},
	)
}

func read(t testing.TB, b []byte, kind Kind, lim Limits) (*document.Doc, error) {
	t.Helper()
	return Read(context.Background(), bytes.NewReader(b), int64(len(b)), kind, lim)
}

func mustRead(t testing.TB, b []byte, kind Kind) *document.Doc {
	t.Helper()
	d, err := read(t, b, kind, DefaultLimits())
	if err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	return d
}

func codeOf(err error) errs.Code { return errs.CodeOf(err) }
