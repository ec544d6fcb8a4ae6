package office

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/serverfs/serverfs/internal/document"
)

func TestDocx(t *testing.T) {
	body := `<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr><w:r><w:t>Hello,</w:t></w:r><w:r><w:t xml:space="preserve"> wörld &amp; co</w:t></w:r></w:p>` +
		`<w:p/>` +
		`<w:p><w:r><w:t>a</w:t><w:tab/><w:t>b</w:t><w:br/><w:t>c</w:t></w:r><w:del><w:r><w:delText>gone</w:delText></w:r></w:del><w:r><w:instrText>PAGE</w:instrText></w:r></w:p>` +
		`<w:tbl><w:tblPr/><w:tblGrid><w:gridCol/></w:tblGrid><w:tr><w:tc><w:tcPr/><w:p><w:r><w:t>r1c1</w:t></w:r></w:p><w:p><w:r><w:t>more</w:t></w:r></w:p></w:tc><w:tc><w:p/></w:tc><w:tc><w:p><w:r><w:t>r1c3</w:t></w:r></w:p></w:tc></w:tr>` +
		`<w:tr><w:tc><w:p><w:r><w:t>r2</w:t><w:tab/><w:t>x</w:t></w:r></w:p></w:tc></w:tr></w:tbl>` +
		`<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><w:txbxContent><w:p><w:r><w:t>in a box</w:t></w:r></w:p></w:txbxContent></w:drawing></mc:Choice><mc:Fallback><w:pict><w:p><w:r><w:t>in a box</w:t></w:r></w:p></w:pict></mc:Fallback></mc:AlternateContent><w:t>after</w:t></w:r></w:p>`
	d := mustRead(t, docxOf(t, body), Docx)
	want := "Hello, wörld & co\n\na\tb\nc\nr1c1 more\t\tr1c3\nr2 x\nin a box\nafter\n"
	if d.Text != want || len(d.Parts) != 0 || d.Truncated {
		t.Errorf("docx: %q %v %v, want %q", d.Text, d.Parts, d.Truncated, want)
	}
}

func TestXlsx(t *testing.T) {
	shared := []string{"name", "tab\there", "ünï € 😀"}
	rows := `<row r="1"><c r="A1" t="s"><v>0</v></c><c r="C1" t="s"><v>1</v></c><c r="D1" s="1"/></row>` +
		`<row r="2"><c r="A2"><v>3.5</v></c><c r="B2" t="b"><v>1</v></c><c r="C2" s="1"><v>45292</v></c><c r="D2" s="2"><v>45292.5</v></c><c r="E2" t="e"><v>#DIV/0!</v></c><c r="F2"><f>A2*2</f><v>7</v></c><c r="G2" t="str"><f>"x"</f><v>x</v></c></row>` +
		`<row r="4"><c r="B4" t="inlineStr"><is><r><t>in</t></r><r><t>line</t></r><rPh><t>phonetic</t></rPh></is></c><c r="C4" s="3"><v>1</v></c></row>` +
		`<row r="300"><c r="A300" t="s"><v>2</v></c></row><row r="301" s="1"><c r="A301" s="1"/></row>`
	d := mustRead(t, xlsxOf(t, shared, xsheet{"Q1 & Q2", rows}, xsheet{"empty", ""}), Xlsx)
	want := "# sheet Q1 & Q2\nname\t\ttab here\n3.5\tTRUE\t2024-01-01\t2024-01-01 12:00:00\t#DIV/0!\t7\tx\n\n\tinline\t1900-01-01\n# … 295 empty rows\nünï € 😀\n# sheet empty\n"
	if d.Text != want {
		t.Errorf("xlsx:\n%q\nwant\n%q", d.Text, want)
	}
	wantParts := []document.Part{{Label: "sheet Q1 & Q2", Line: 1}, {Label: "sheet empty", Line: 8}}
	if !reflect.DeepEqual(d.Parts, wantParts) {
		t.Errorf("parts %v, want %v", d.Parts, wantParts)
	}
}

func TestPptx(t *testing.T) {
	b := pptxOf(t, [][]string{{"Title"}, {}, {"a ", "b", "\n", "c"}}, [][]string{{"second"}})
	d := mustRead(t, b, Pptx)
	want := "# slide 1\nTitle\na b\nc\n# slide 2\nsecond\n"
	wantParts := []document.Part{{Label: "slide 1", Line: 1}, {Label: "slide 2", Line: 5}}
	if d.Text != want || !reflect.DeepEqual(d.Parts, wantParts) {
		t.Errorf("pptx: %q %v, want %q %v", d.Text, d.Parts, want, wantParts)
	}
}

func TestOdt(t *testing.T) {
	body := `<text:h text:outline-level="1">Title</text:h><text:p>Hello   <text:span>wide</text:span><text:s text:c="3"/>world<text:tab/>x<text:line-break/>y<text:note><text:note-citation>1</text:note-citation><text:note-body><text:p>foot</text:p></text:note-body></text:note></text:p>` +
		"<text:p/>\n  <text:list><text:list-item><text:p>item</text:p></text:list-item></text:list>" +
		`<table:table table:name="T"><table:table-column/><table:table-row><table:table-cell office:value-type="string"><text:p>a</text:p><text:p>b</text:p></table:table-cell><table:covered-table-cell/><table:table-cell><text:p>c</text:p></table:table-cell></table:table-row></table:table>` +
		`<office:annotation><text:p>comment</text:p></office:annotation>`
	d := mustRead(t, odfOf(t, "text", body, ""), Odt)
	want := "Title\nHello wide   world\tx\ny\n\nitem\na b\t\tc\n"
	if d.Text != want {
		t.Errorf("odt: %q, want %q", d.Text, want)
	}
}

func TestOds(t *testing.T) {
	body := `<table:table table:name="Data"><table:table-column table:number-columns-repeated="1024"/>` +
		`<table:table-row><table:table-cell office:value-type="string" calcext:value-type="string"><text:p>name</text:p></table:table-cell><table:table-cell table:number-columns-repeated="2"/><table:table-cell office:value-type="float" office:value="1.5"><text:p>1,50 €</text:p></table:table-cell><table:table-cell table:number-columns-repeated="1048572"/></table:table-row>` +
		`<table:table-row table:number-rows-repeated="2"><table:table-cell office:value-type="boolean" office:boolean-value="true"><text:p>TRUE</text:p></table:table-cell><table:table-cell office:value-type="date" office:date-value="2024-01-02T03:04:05"/><table:table-cell office:value-type="time" office:time-value="PT12H30M05S"/><table:table-cell table:number-columns-repeated="2"><text:p>r</text:p></table:table-cell></table:table-row>` +
		`<table:table-row table:number-rows-repeated="200"><table:table-cell table:number-columns-repeated="1024"/></table:table-row>` +
		`<table:table-row><table:table-cell><text:p>last</text:p><text:p>line</text:p></table:table-cell></table:table-row>` +
		`<table:table-row table:number-rows-repeated="1048000"><table:table-cell table:number-columns-repeated="1024"/></table:table-row></table:table>` +
		`<table:table table:name="Two"><table:table-row><table:table-cell office:value-type="date" office:date-value="2024-05-06"/></table:table-row></table:table>`
	d := mustRead(t, odfOf(t, "spreadsheet", body, ""), Ods)
	want := "# sheet Data\nname\t\t\t1.5\nTRUE\t2024-01-02 03:04:05\t12:30:05\tr\tr\nTRUE\t2024-01-02 03:04:05\t12:30:05\tr\tr\n# … 200 empty rows\nlast line\n# sheet Two\n2024-05-06\n"
	if d.Text != want {
		t.Errorf("ods:\n%q\nwant\n%q", d.Text, want)
	}
	wantParts := []document.Part{{Label: "sheet Data", Line: 1}, {Label: "sheet Two", Line: 7}}
	if !reflect.DeepEqual(d.Parts, wantParts) {
		t.Errorf("parts %v, want %v", d.Parts, wantParts)
	}
}

func TestOdp(t *testing.T) {
	body := `<draw:page draw:name="p1"><draw:frame><draw:text-box><text:p>Title</text:p><text:p/></draw:text-box></draw:frame><presentation:notes><draw:frame><draw:text-box><text:p>notes</text:p></draw:text-box></draw:frame></presentation:notes></draw:page>` +
		`<draw:page draw:name="p2"><draw:frame><draw:text-box><text:list><text:list-item><text:p>one</text:p></text:list-item></text:list></draw:text-box></draw:frame></draw:page>`
	d := mustRead(t, odfOf(t, "presentation", body, ""), Odp)
	want := "# slide 1\nTitle\n# slide 2\none\n"
	if d.Text != want || len(d.Parts) != 2 || d.Parts[1] != (document.Part{Label: "slide 2", Line: 3}) {
		t.Errorf("odp: %q %v, want %q", d.Text, d.Parts, want)
	}
}

func TestDetect(t *testing.T) {
	docx := docxOf(t, `<w:p/>`)
	xlsx := xlsxOf(t, nil, xsheet{"a", ""})
	ods := odfOf(t, "spreadsheet", "", "")
	cases := []struct {
		name string
		b    []byte
		want Kind
	}{
		{"a.docx", docx, Docx},
		{"A.DOCX", docx, Docx},
		{"a.docm", docx, Docx},
		{"a.xlsx", docx, ""},
		{"a.xlsx", xlsx, Xlsx},
		{"a.pptx", pptxOf(t), Pptx},
		{"a.ods", ods, Ods},
		{"a.odt", ods, ""},
		{"a.odt", odfOf(t, "text", "", ""), Odt},
		{"a.odp", odfOf(t, "presentation", "", ""), Odp},
		{"a.zip", docx, ""},
		{"docx", docx, ""},
		{"a.docx", []byte("not a zip"), ""},
		{"a.docx", oleEncryptedDocx(), Docx},
		{"a.docx", oleFile("WordDocument"), ""},
	}
	for _, c := range cases {
		if got := Detect(c.name, bytes.NewReader(c.b), int64(len(c.b))); got != c.want {
			t.Errorf("Detect(%s): %q, want %q", c.name, got, c.want)
		}
	}
}

// oleFile is a minimal OLE compound file header whose first directory
// sector names the streams.
func oleFile(streams ...string) []byte {
	b := make([]byte, 512*3)
	copy(b, oleMagic)
	b[30] = 9 // 512-byte sectors
	// First directory sector: 0, right after the header.
	for i, s := range append([]string{"Root Entry"}, streams...) {
		copy(b[512+128*i:], utf16le(s))
	}
	return b
}

func oleEncryptedDocx() []byte { return oleFile("EncryptionInfo", "EncryptedPackage") }

func TestErrors(t *testing.T) {
	noMain := zipOf(t, member{"[Content_Types].xml", "<Types/>"})
	cases := []struct {
		name string
		b    []byte
		kind Kind
		want string
	}{
		{"not a zip", []byte("plain text, not a zip at all"), Docx, "DOCUMENT_CORRUPT"},
		{"no main part docx", noMain, Docx, "DOCUMENT_CORRUPT"},
		{"no main part xlsx", noMain, Xlsx, "DOCUMENT_CORRUPT"},
		{"no main part pptx", noMain, Pptx, "DOCUMENT_CORRUPT"},
		{"no main part ods", noMain, Ods, "DOCUMENT_CORRUPT"},
		{"OLE encrypted", oleEncryptedDocx(), Xlsx, "DOCUMENT_ENCRYPTED"},
		{"OLE legacy", oleFile("WordDocument"), Docx, "DOCUMENT_CORRUPT"},
		{"ODF encrypted", odfOf(t, "text", "<text:p>x</text:p>", `<manifest:encryption-data manifest:checksum-type="SHA1/1K"/>`), Odt, "DOCUMENT_ENCRYPTED"},
		{"bad XML", docxOf(t, `<w:p><w:t>x</w:p>`)[:0], Docx, "DOCUMENT_CORRUPT"},
		{"unclosed", zipOf(t, member{"word/document.xml", `<w:document><w:body><w:p>`}), Docx, "DOCUMENT_CORRUPT"},
		{"wrong root", zipOf(t, member{"word/document.xml", `<html/>`}), Docx, "DOCUMENT_CORRUPT"},
		{"kind", noMain, "pdf", "UNSUPPORTED_FILE_TYPE"},
	}
	for _, c := range cases {
		_, err := read(t, c.b, c.kind, DefaultLimits())
		if code := fmt.Sprint(codeOf(err)); code != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
}
