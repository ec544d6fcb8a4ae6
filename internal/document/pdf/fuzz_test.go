package pdf

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/serverfs/serverfs/internal/document"
	"github.com/serverfs/serverfs/internal/errs"
)

// fuzzLimits are small so that each input is read fast; the bounds are
// the same code as at the default limits.
var fuzzLimits = Limits{MaxObjects: 2000, MaxDepth: 32, MaxPages: 20, MaxText: 64 << 10, MaxStream: 1 << 20}

func FuzzRead(f *testing.F) {
	f.Add(threePages)
	f.Add(pagesPDF("BT /F1 9 Tf 1 0 0 1 50 50 Tm (x) ' [(a) -300 (b)] TJ T* (c) Tj ET q 2 0 0 2 0 0 cm Q"))
	for _, c := range []func() []byte{loopPDF, encryptedPDF, hugeCountPDF, xrefOffEndPDF, truncatedPDF} {
		f.Add(c())
	}
	f.Add([]byte("%PDF-1.4\n1 0 obj [[[[[ endobj trailer << /Root 1 0 R >> startxref 9 %%EOF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		doc, err := Read(ctx, bytes.NewReader(data), int64(len(data)), fuzzLimits)
		if err != nil {
			if doc != nil {
				t.Fatalf("both a document and an error: %v", err)
			}
			switch errCode(err) {
			case errs.DocumentCorrupt, errs.DocumentEncrypted, errs.DocumentTooLarge:
			default:
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("error without a document code: %v", err)
				}
			}
			return
		}
		checkDoc(t, doc.Text, doc.Parts, doc.Truncated, doc.Note)
	})
}

// checkDoc checks what every Doc promises: lines ended by '\n' without
// '\f', one part per page on distinct increasing lines, a note exactly
// when truncated, text within the limit (plus the last empty line).
func checkDoc(t *testing.T, text string, parts []document.Part, truncated bool, note string) {
	t.Helper()
	if strings.ContainsRune(text, '\f') || (text != "" && !strings.HasSuffix(text, "\n")) {
		t.Fatalf("text %.100q", text)
	}
	lines := strings.Count(text, "\n")
	prev := 0
	for _, p := range parts {
		if p.Line <= prev || p.Line > lines {
			t.Fatalf("part %v out of order or past line %d", p, lines)
		}
		prev = p.Line
	}
	if truncated != (note != "") {
		t.Fatalf("truncated %v, note %q", truncated, note)
	}
	if int64(len(text)) > fuzzLimits.MaxText+1 {
		t.Fatalf("text of %d bytes past the limit", len(text))
	}
	if len(parts) > fuzzLimits.MaxPages {
		t.Fatalf("%d pages past the limit", len(parts))
	}
}

func BenchmarkRead(b *testing.B) {
	files := corpusFiles(b)
	var data [][]byte
	total := 0
	for _, p := range files {
		d, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, d)
		total += len(d)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range data {
			if _, err := Read(context.Background(), bytes.NewReader(d), int64(len(d)), DefaultLimits()); err != nil {
				b.Fatal(err)
			}
		}
	}
}
