package symbols

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkOutline10k outlines a 10,000-line file in each reader's
// language (go test -bench Outline10k ./search/symbols).
func BenchmarkOutline10k(b *testing.B) {
	gen := map[Lang]func(i int) string{
		Go: func(i int) string {
			return fmt.Sprintf("// F%d does.\nfunc F%d(a int) int {\n\tif a > 0 {\n\t\treturn a\n\t}\n\treturn %d\n}\n\n", i, i, i)
		},
		Python: func(i int) string {
			return fmt.Sprintf("class C%d:\n    def m(self, a):\n        if a:\n            return a\n        return %d\n\n\n", i, i)
		},
		Java: func(i int) string {
			return fmt.Sprintf("class C%d {\n  int m(int a) {\n    if (a > 0) { return a; }\n    return %d;\n  }\n}\n\n", i, i)
		},
		Ruby: func(i int) string {
			return fmt.Sprintf("class C%d\n  def m(a)\n    if a\n      a\n    end\n  end\nend\n", i)
		},
	}
	for lang, g := range gen {
		var sb strings.Builder
		for i := 0; strings.Count(sb.String(), "\n") < 10_000; i++ {
			sb.WriteString(g(i))
		}
		src := []byte(sb.String())
		b.Run(string(lang), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, _, err := Outline(context.Background(), lang, src, DefaultLimits); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
