package pdf

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/serverfs/serverfs/internal/document"
	"github.com/serverfs/serverfs/internal/errs"
)

// builder writes a PDF by hand: numbered objects, then a classic
// cross-reference table and trailer.
type builder struct {
	buf  bytes.Buffer
	offs map[int]int
	max  int
}

func newBuilder() *builder {
	b := &builder{offs: map[int]int{}}
	b.buf.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	return b
}

func (b *builder) obj(n int, body string) {
	b.offs[n] = b.buf.Len()
	b.max = max(b.max, n)
	fmt.Fprintf(&b.buf, "%d 0 obj\n%s\nendobj\n", n, body)
}

// stream writes a stream object; flate compresses its data.
func (b *builder) stream(n int, data []byte, flate bool) {
	extra := ""
	if flate {
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		w.Write(data)
		w.Close()
		data, extra = z.Bytes(), " /Filter /FlateDecode"
	}
	b.offs[n] = b.buf.Len()
	b.max = max(b.max, n)
	fmt.Fprintf(&b.buf, "%d 0 obj\n<< /Length %d%s >>\nstream\n", n, len(data), extra)
	b.buf.Write(data)
	b.buf.WriteString("\nendstream\nendobj\n")
}

// finish writes the cross-reference and trailer (with extra entries).
func (b *builder) finish(extra string) []byte {
	x := b.buf.Len()
	fmt.Fprintf(&b.buf, "xref\n0 %d\n0000000000 65535 f \n", b.max+1)
	for i := 1; i <= b.max; i++ {
		if off, ok := b.offs[i]; ok {
			fmt.Fprintf(&b.buf, "%010d 00000 n \n", off)
		} else {
			b.buf.WriteString("0000000000 65535 f \n")
		}
	}
	fmt.Fprintf(&b.buf, "trailer\n<< /Size %d /Root 1 0 R %s >>\nstartxref\n%d\n%%%%EOF\n", b.max+1, extra, x)
	return b.buf.Bytes()
}

const helvetica = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"

// pagesPDF makes a PDF of pages with the given content streams, each
// page using Helvetica as /F1 (object 2 is the page tree).
func pagesPDF(contents ...string) []byte {
	b := newBuilder()
	b.obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	var kids []string
	for i := range contents {
		kids = append(kids, fmt.Sprintf("%d 0 R", 10+2*i))
	}
	b.obj(2, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(contents)))
	b.obj(3, helvetica)
	for i, c := range contents {
		b.obj(10+2*i, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 11+2*i))
		b.stream(11+2*i, []byte(c), i%2 == 1)
	}
	return b.finish("")
}

// threePages has text on pages 1 and 3 and none on page 2; page 3 shows
// a WinAnsi byte (0xE9, é) and a TJ kerning gap that is a word break.
var threePages = pagesPDF(
	"BT /F1 12 Tf 72 700 Td (Hello world) Tj 0 -14 Td (Second line) Tj ET",
	"0 0 1 rg 72 72 100 100 re f",
	"BT /F1 12 Tf 72 700 Td [(Caf\\351) -400 (au) 20 (lait)] TJ ET",
)

func read(t testing.TB, data []byte, lim Limits) (*document.Doc, error) {
	t.Helper()
	return Read(context.Background(), bytes.NewReader(data), int64(len(data)), lim)
}

func TestReadThreePages(t *testing.T) {
	doc, err := read(t, threePages, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	want := "Hello world\nSecond line\n\nCafé aulait\n"
	if doc.Text != want {
		t.Errorf("text %q, want %q", doc.Text, want)
	}
	wantParts := []document.Part{{Label: "page 1", Line: 1}, {Label: "page 2", Line: 3}, {Label: "page 3", Line: 4}}
	if fmt.Sprint(doc.Parts) != fmt.Sprint(wantParts) {
		t.Errorf("parts %v, want %v", doc.Parts, wantParts)
	}
	if doc.Truncated || doc.Note != "" {
		t.Errorf("truncated %v %q", doc.Truncated, doc.Note)
	}
}

func TestReadLimitsTruncate(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxPages = 2
	doc, err := read(t, threePages, lim)
	if err != nil {
		t.Fatal(err)
	}
	if !doc.Truncated || len(doc.Parts) != 2 || doc.Text != "Hello world\nSecond line\n\n" {
		t.Errorf("MaxPages 2: %+v", doc)
	}
	lim = DefaultLimits()
	lim.MaxText = 15
	doc, err = read(t, threePages, lim)
	if err != nil {
		t.Fatal(err)
	}
	if !doc.Truncated || !strings.HasPrefix("Hello world\nSecond line\n", doc.Text) {
		t.Errorf("MaxText 15: %+v", doc)
	}
}

func TestIs(t *testing.T) {
	for head, want := range map[string]bool{
		"%PDF-1.7\n":                        true,
		strings.Repeat(" ", 1000) + "%PDF-": true,
		strings.Repeat(" ", 1020) + "%PDF-": false,
		"PK\x03\x04":                        false,
	} {
		if got := Is([]byte(head)); got != want {
			t.Errorf("Is(%.20q...) = %v", head, got)
		}
	}
}

func TestReadCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Read(ctx, bytes.NewReader(threePages), int64(len(threePages)), DefaultLimits())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

// errCode returns an error's errs code, "" for none.
func errCode(err error) errs.Code {
	var e *errs.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// TestLigaturesSpelledOut: an fi ligature glyph (TeX sets "definition"
// with one) reads as "fi", as pdftotext writes it, so that the word is
// found by a search.
func TestLigaturesSpelledOut(t *testing.T) {
	b := newBuilder()
	b.obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	b.obj(2, "<< /Type /Pages /Kids [10 0 R] /Count 1 >>")
	b.obj(3, "<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman /Encoding << /Type /Encoding /BaseEncoding /WinAnsiEncoding /Differences [128 /fi 129 /ffl] >> >>")
	b.obj(10, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 11 0 R >>")
	b.stream(11, []byte("BT /F1 12 Tf 72 700 Td (de\\200nition of a\\201uent) Tj ET"), false)
	d, err := read(t, b.finish(""), DefaultLimits())
	if err != nil || d.Text != "definition of affluent\n" {
		t.Fatalf("%q %v", d.Text, err)
	}
}
