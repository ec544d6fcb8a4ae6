package glob

import (
	"strings"
	"testing"
)

var benchPaths = []string{"src/server/handlers/user_test.go", "docs/README.md", "deploy/compose.prod.yml", "a/b/c/d/e/f/g/main.go", "vendor/github.com/x/y/z.py"}

// BenchmarkMatch: typical find_files patterns on typical paths, and issue
// 12's hostile pattern (minutes per path with gobwas's backtracking).
func BenchmarkMatch(b *testing.B) {
	for _, pat := range []string{"*.go", "src/**/*.go", "*compose*.yml", "{cmd,src}/**/*_test.go", "**/test_*.py", "[a-z]*.md", strings.Repeat("{**/,*}", 10) + "*/*/{*Q,Q*}"} {
		p := MustCompile(pat)
		b.Run(pat[:min(len(pat), 24)], func(b *testing.B) {
			for b.Loop() {
				for _, s := range benchPaths {
					p.Match(s)
				}
			}
		})
	}
}
