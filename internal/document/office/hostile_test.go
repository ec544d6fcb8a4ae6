package office

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/serverfs/serverfs/internal/document"
	"github.com/serverfs/serverfs/internal/errs"
)

// streamed is a zip member whose body is written by a function, so that
// a test can make a part of hundreds of megabytes without holding it.
type streamed struct {
	name string
	body func(w io.Writer)
}

func zipStreamed(t testing.TB, members ...streamed) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		m.body(w)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func text(s string) func(io.Writer) { return func(w io.Writer) { io.WriteString(w, s) } }

// repeated writes head, then unit n times, then tail.
func repeated(head, unit string, n int, tail string) func(io.Writer) {
	return func(w io.Writer) {
		io.WriteString(w, head)
		chunk := strings.Repeat(unit, max(1, 64<<10/len(unit)))
		per := len(chunk) / len(unit)
		for ; n >= per; n -= per {
			io.WriteString(w, chunk)
		}
		io.WriteString(w, strings.Repeat(unit, n))
		io.WriteString(w, tail)
	}
}

const sheetHead = `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`
const sheetTail = `</sheetData></worksheet>`

// hostileXlsx is a workbook of one sheet, its parts given.
func hostileXlsx(t testing.TB, sheet, sst func(io.Writer)) []byte {
	members := []streamed{
		{"xl/workbook.xml", text(`<workbook xmlns:r="r"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>`)},
		{"xl/_rels/workbook.xml.rels", text(`<Relationships><Relationship Id="rId1" Type="x/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`)},
		{"xl/worksheets/sheet1.xml", sheet},
	}
	if sst != nil {
		members = append(members, streamed{"xl/sharedStrings.xml", sst})
	}
	return zipStreamed(t, members...)
}

func wordDoc(body func(io.Writer)) streamed { return streamed{"word/document.xml", body} }

// TestHostile: each hostile document is answered with its code or a
// truncated text, within its bound: quickly, and the heap grows by less
// than 64 MiB. Each case fails without the bound it names.
func TestHostile(t *testing.T) {
	noRatio := DefaultLimits()
	noRatio.MaxRatio = 1 << 40
	small := DefaultLimits()
	small.MaxXML = 4 << 20
	laughs := `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">` +
		`<!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;"><!ENTITY lol9 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>` +
		`<w:document><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>`
	cases := []struct {
		name  string
		doc   []byte
		kind  Kind
		lim   Limits
		want  errs.Code // "" for a truncated text
		check string    // a word of the Note
	}{
		{"zip bomb (MaxRatio)", hostileXlsx(t, repeated(sheetHead, " ", 64<<20, sheetTail), nil), Xlsx, DefaultLimits(), "", "bomb"},
		{"XML bytes (MaxXML)", hostileXlsx(t, repeated(sheetHead, " ", 8<<20, sheetTail), nil), Xlsx, small, "", "bytes of XML"},
		{"100k-deep nesting (MaxDepth)", zipStreamed(t, wordDoc(repeated(`<w:document><w:body>`, `<w:p>`, 100_000, ``))), Docx, DefaultLimits(), errs.DocumentTooLarge, ""},
		{"ODS rows repeated a billion times (MaxCells)", odfOf(t, "spreadsheet", `<table:table table:name="x"><table:table-row table:number-rows-repeated="1000000000"><table:table-cell><text:p>x</text:p></table:table-cell><table:table-cell><text:p>y</text:p></table:table-cell></table:table-row></table:table>`, ""), Ods, DefaultLimits(), "", "cells"},
		{"ODS column repeated a billion times (MaxCells)", odfOf(t, "spreadsheet", `<table:table table:name="x"><table:table-row><table:table-cell table:number-columns-repeated="1000000000"><text:p>x</text:p></table:table-cell></table:table-row></table:table>`, ""), Ods, DefaultLimits(), "", "cells"},
		{"ODS empty columns then a cell (MaxCells)", odfOf(t, "spreadsheet", `<table:table table:name="x"><table:table-row><table:table-cell table:number-columns-repeated="1000000000"/><table:table-cell><text:p>x</text:p></table:table-cell></table:table-row></table:table>`, ""), Ods, DefaultLimits(), "", "cells"},
		{"sharedStrings count of 2 billion", hostileXlsx(t, text(sheetHead+`<row><c t="s"><v>0</v></c></row>`+sheetTail), text(`<sst count="2000000000" uniqueCount="2000000000"><si><t>only</t></si></sst>`)), Xlsx, DefaultLimits(), "", "-"},
		{"shared string index out of range", hostileXlsx(t, text(sheetHead+`<row><c t="s"><v>7</v></c></row>`+sheetTail), text(`<sst><si><t>only</t></si></sst>`)), Xlsx, DefaultLimits(), errs.DocumentCorrupt, ""},
		{"10M tiny cells (MaxCells)", hostileXlsx(t, repeated(sheetHead, `<row><c><v>1</v></c><c><v>2</v></c><c><v>3</v></c><c><v>4</v></c><c><v>5</v></c></row>`, 2_000_000, sheetTail), nil), Xlsx, noRatio, "", "cells"},
		{"10M empty shared strings (sst budget)", hostileXlsx(t, text(sheetHead+`<row><c t="s"><v>9999999</v></c></row>`+sheetTail), repeated(`<sst>`, `<si/>`, 10_000_000, `</sst>`)), Xlsx, noRatio, "", "shared strings"},
		{"missing main part", zipStreamed(t, streamed{"word/other.xml", text("<x/>")}), Docx, DefaultLimits(), errs.DocumentCorrupt, ""},
		{"non-zip bytes", bytes.Repeat([]byte("PK\x03\x04 garbage "), 1000), Xlsx, DefaultLimits(), errs.DocumentCorrupt, ""},
		{"OLE-encrypted docx", oleEncryptedDocx(), Docx, DefaultLimits(), errs.DocumentEncrypted, ""},
		{"billion laughs", zipStreamed(t, wordDoc(text(laughs))), Docx, DefaultLimits(), errs.DocumentCorrupt, ""},
		{"100 MB inline string cell (MaxText)", hostileXlsx(t, repeated(sheetHead+`<row><c t="inlineStr"><is><t>`, "a", 100<<20, `</t></is></c></row>`+sheetTail), nil), Xlsx, noRatio, "", "cut at"},
		{"100 MB run in a docx (MaxText)", zipStreamed(t, wordDoc(repeated(`<w:document><w:body><w:p><w:r><w:t>`, "word ", 20<<20, `</w:t></w:r></w:p></w:body></w:document>`))), Docx, noRatio, "", "cut at"},
		{"100 MB attribute (tag bound)", zipStreamed(t, wordDoc(repeated(`<w:document><w:body><w:p><w:r w:x="`, "a", 100<<20, `"/></w:p></w:body></w:document>`))), Docx, noRatio, errs.DocumentTooLarge, ""},
		{"100 MB comment", zipStreamed(t, wordDoc(repeated(`<w:document><w:body><w:p><w:r><w:t>ok</w:t></w:r></w:p><!--`, "-> ", 30<<20, `--></w:body></w:document>`))), Docx, noRatio, "", "-"},
	}
	t.Logf("%-48s %-60s %10s %8s", "case", "result", "time", "heap")
	for _, c := range cases {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		d, err := read(t, c.doc, c.kind, c.lim)
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		grown := int64(after.HeapInuse) - int64(before.HeapInuse)
		result := resultOf(d, err)
		t.Logf("%-48s %-60.60s %10s %6d MiB", c.name, result, took.Round(time.Millisecond), grown>>20)
		switch {
		case c.want != "" && errs.CodeOf(err) != c.want:
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want a text", c.name, err)
		case c.want == "" && c.check != "-" && (!d.Truncated || !strings.Contains(d.Note, c.check)):
			t.Errorf("%s: truncated %v, note %q, want truncated with %q", c.name, d.Truncated, d.Note, c.check)
		case d != nil && int64(len(d.Text)) > c.lim.MaxText:
			t.Errorf("%s: %d bytes of text", c.name, len(d.Text))
		}
		// Time is printed, never asserted (it depends on the machine and
		// -race): the bounds asserted are the answer and the heap.
		if grown > 64<<20 {
			t.Errorf("%s: the heap grew by %d MiB", c.name, grown>>20)
		}
	}
}

func resultOf(d *document.Doc, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d bytes, truncated %v: %s", len(d.Text), d.Truncated, d.Note)
}

// TestCanceled: a canceled context is answered with its error, before
// and during a read.
func TestCanceled(t *testing.T) {
	b := hostileXlsx(t, repeated(sheetHead, `<row><c><v>1</v></c></row>`, 1_000_000, sheetTail), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Read(ctx, bytes.NewReader(b), int64(len(b)), Xlsx, DefaultLimits()); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled before: %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	r := &cancelAfter{r: bytes.NewReader(b), n: 3, cancel: cancel}
	if _, err := Read(ctx, r, int64(len(b)), Xlsx, DefaultLimits()); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled during: %v", err)
	}
}

// cancelAfter cancels its context after n reads.
type cancelAfter struct {
	r      io.ReaderAt
	n      int
	cancel func()
}

func (c *cancelAfter) ReadAt(p []byte, off int64) (int, error) {
	if c.n--; c.n < 0 {
		c.cancel()
	}
	return c.r.ReadAt(p, off)
}
