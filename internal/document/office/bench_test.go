package office

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkReadXLSX reads a generated sheet of 100k cells (1000 rows of
// 100: numbers, shared strings, dates).
func BenchmarkReadXLSX(b *testing.B) {
	var rows strings.Builder
	shared := make([]string, 0, 1000)
	for i := range 1000 {
		shared = append(shared, fmt.Sprintf("label %d ünï", i))
	}
	for r := 1; r <= 1000; r++ {
		fmt.Fprintf(&rows, `<row r="%d">`, r)
		for c := 1; c <= 100; c++ {
			ref := colName(c) + fmt.Sprint(r)
			switch c % 3 {
			case 0:
				fmt.Fprintf(&rows, `<c r="%s" t="s"><v>%d</v></c>`, ref, (r*c)%1000)
			case 1:
				fmt.Fprintf(&rows, `<c r="%s" s="4"><v>%d.%d</v></c>`, ref, r*c, c)
			default:
				fmt.Fprintf(&rows, `<c r="%s" s="1"><v>%d</v></c>`, ref, 40000+r)
			}
		}
		rows.WriteString(`</row>`)
	}
	doc := xlsxOf(b, shared, xsheet{"bench", rows.String()})
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := Read(context.Background(), bytes.NewReader(doc), int64(len(doc)), Xlsx, DefaultLimits())
		if err != nil || d.Truncated {
			b.Fatal(err, d.Note)
		}
	}
}
