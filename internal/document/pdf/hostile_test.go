package pdf

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/serverfs/serverfs/internal/document"
	"github.com/serverfs/serverfs/internal/errs"
)

// hostileCase is a hand-made hostile PDF and what reading it must give:
// an error code, or a document (truncated or not) whose text contains
// text.
type hostileCase struct {
	name      string
	data      func() []byte
	lim       func(Limits) Limits
	code      errs.Code
	truncated bool
	text      string
	bomb      bool // memory is asserted: allocation stays under 64 MiB
}

func loopPDF() []byte {
	b := newBuilder()
	b.obj(1, "<< /Type /Catalog /Pages 2 0 R /Next 5 0 R >>")
	b.obj(2, "<< /Type /Pages /Kids [2 0 R 3 0 R 2 0 R 6 0 R] /Count 1000 >>")
	b.obj(3, "<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 7 0 R >> >> /Contents 4 0 R >>")
	b.stream(4, []byte("BT /F1 12 Tf 72 700 Td (loop page) Tj ET"), false)
	b.obj(5, "<< /Next 5 0 R >>")
	b.obj(6, "6 0 R")
	b.obj(7, helvetica)
	return b.finish("")
}

func deepCatalogPDF() []byte {
	b := newBuilder()
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	b.obj(1, "<< /Type /Catalog /Pages 2 0 R /Deep "+deep+" >>")
	b.obj(2, "<< /Type /Pages /Kids [] /Count 0 >>")
	return b.finish("")
}

func deepContentPDF() []byte {
	return pagesPDF(strings.Repeat("[", 100_000) + "(deep) Tj")
}

// bombPDF's page shows a word, then its content stream inflates to
// 256 MiB of spaces.
func bombPDF() []byte {
	b := newBuilder()
	b.obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	b.obj(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	b.obj(3, "<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>")
	data := append([]byte("BT /F1 12 Tf 72 700 Td (before) Tj ET "), bytes.Repeat([]byte(" "), 256<<20)...)
	b.stream(4, data, true)
	b.obj(5, helvetica)
	return b.finish("")
}

// millionPDF has a million page objects under a thousand page-tree
// nodes: MaxObjects stops it.
func millionPDF() []byte {
	b := newBuilder()
	b.buf.Grow(64 << 20)
	b.obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	var top []string
	for i := 0; i < 1000; i++ {
		top = append(top, fmt.Sprintf("%d 0 R", 3+i))
	}
	b.obj(2, "<< /Type /Pages /Kids ["+strings.Join(top, " ")+"] /Count 1000000 >>")
	next := 1003
	for i := 0; i < 1000; i++ {
		var kids strings.Builder
		for j := 0; j < 1000; j++ {
			fmt.Fprintf(&kids, "%d 0 R ", next+j)
		}
		b.obj(3+i, "<< /Type /Pages /Kids ["+kids.String()+"] /Count 1000 >>")
		for j := 0; j < 1000; j++ {
			b.obj(next, "<< /Type /Page >>")
			next++
		}
	}
	return b.finish("")
}

func xrefOffEndPDF() []byte {
	data := pagesPDF("BT /F1 12 Tf 72 700 Td (still here) Tj ET")
	i := bytes.LastIndex(data, []byte("startxref\n"))
	return append(data[:i:i], []byte("startxref\n99999999999\n%%EOF\n")...)
}

func truncatedPDF() []byte {
	data := threePages
	i := bytes.LastIndex(data, []byte("xref\n"))
	return data[: i+40 : i+40] // into the cross-reference table
}

func encryptedPDF() []byte {
	b := newBuilder()
	b.obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	b.obj(2, "<< /Type /Pages /Kids [] /Count 0 >>")
	b.obj(3, "<< /Filter /Standard /V 1 /R 2 /O <00> /U <00> /P -4 >>")
	return b.finish("/Encrypt 3 0 R /ID [<01> <01>]")
}

func hugeCountPDF() []byte {
	data := pagesPDF("BT /F1 12 Tf 72 700 Td (one page) Tj ET")
	return bytes.Replace(data, []byte("/Count 1 "), []byte("/Count 2147483647 "), 1)
}

// manyOpsPDF's one page runs three million operators.
func manyOpsPDF() []byte {
	ops := strings.Repeat("1 0 Td ", 3_000_000) + " BT /F1 12 Tf (after the ops) Tj ET"
	b := newBuilder()
	b.obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	b.obj(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	b.obj(3, "<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>")
	b.stream(4, []byte(ops), true)
	b.obj(5, helvetica)
	return b.finish("")
}

var hostileCases = []hostileCase{
	{name: "reference loops", data: loopPDF, text: "loop page"},
	{name: "100k-deep array in the catalog", data: deepCatalogPDF, code: errs.DocumentTooLarge, bomb: true},
	{name: "100k-deep array in content", data: deepContentPDF, code: errs.DocumentTooLarge, bomb: true},
	{name: "FlateDecode bomb (256 MiB)", data: bombPDF, truncated: true, text: "before", bomb: true,
		lim: func(l Limits) Limits { l.MaxStream = 16 << 20; return l }},
	{name: "a million objects", data: millionPDF, truncated: true,
		lim: func(l Limits) Limits { l.MaxPages = 2_000_000; return l }},
	{name: "startxref off the end", data: xrefOffEndPDF, text: "still here"},
	{name: "truncated in the xref", data: truncatedPDF, text: "Café"},
	{name: "not a PDF past its header", data: func() []byte { return []byte("%PDF-1.4\n%%EOF\n") }, code: errs.DocumentCorrupt},
	{name: "/Encrypt", data: encryptedPDF, code: errs.DocumentEncrypted},
	{name: "/Count 2^31-1", data: hugeCountPDF, text: "one page", bomb: true},
	{name: "3M operators", data: manyOpsPDF, text: "after the ops", bomb: true},
}

func TestHostile(t *testing.T) {
	t.Logf("%-32s %-22s %9s %10s %10s", "case", "result", "time", "heap+", "alloc")
	for _, c := range hostileCases {
		data := c.data()
		lim := DefaultLimits()
		if c.lim != nil {
			lim = c.lim(lim)
		}
		// A backstop only, far past any machine's time for these inputs
		// (3M operators took 2 s idle, 10 s under -race on a loaded
		// one): the bounds asserted are the answer and the allocation.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		doc, err := Read(ctx, bytes.NewReader(data), int64(len(data)), lim)
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		cancel()
		result := hostileResult(doc, err)
		t.Logf("%-32s %-22s %9v %8.1fMB %8.1fMB", c.name, result, took.Round(time.Millisecond), float64(heap)/(1<<20), float64(alloc)/(1<<20))
		checkHostile(t, c, doc, err)
		if c.bomb && alloc > 64<<20 {
			t.Errorf("%s: allocated %d MiB, over 64 MiB", c.name, alloc>>20)
		}
		runtime.KeepAlive(data)
	}
}

func hostileResult(doc *document.Doc, err error) string {
	switch {
	case err != nil:
		return string(errCode(err))
	case doc.Truncated:
		return fmt.Sprintf("truncated, %d pages", len(doc.Parts))
	}
	return fmt.Sprintf("ok, %d pages", len(doc.Parts))
}

func checkHostile(t *testing.T, c hostileCase, doc *document.Doc, err error) {
	t.Helper()
	if c.code != "" {
		if errCode(err) != c.code {
			t.Errorf("%s: err %v, want %s", c.name, err, c.code)
		}
		return
	}
	if err != nil {
		t.Errorf("%s: %v", c.name, err)
		return
	}
	if doc.Truncated != c.truncated {
		t.Errorf("%s: truncated %v (%s), want %v", c.name, doc.Truncated, doc.Note, c.truncated)
	}
	if !strings.Contains(doc.Text, c.text) {
		t.Errorf("%s: text %.200q lacks %q", c.name, doc.Text, c.text)
	}
}
