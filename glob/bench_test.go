package glob

import (
	"strings"
	"testing"
)

var benchPaths = []string{"src/server/handlers/user_test.go", "docs/README.md", "deploy/compose.prod.yml", "a/b/c/d/e/f/g/main.go", "vendor/github.com/x/y/z.py"}

var benchPatterns = []string{"*.go", "src/**/*.go", "*compose*.yml", "{cmd,src}/**/*_test.go", "**/test_*.py", "[a-z]*.md", strings.Repeat("{**/,*}", 10) + "*/*/{*Q,Q*}"}

func BenchmarkMatch(b *testing.B) {
	for _, pat := range benchPatterns {
		name := pat
		if len(name) > 20 {
			name = name[:20]
		}
		p := MustCompile(pat)
		b.Run("new/"+name, func(b *testing.B) {
			for b.Loop() {
				for _, s := range benchPaths {
					p.Match(s)
				}
			}
		})
		if len(pat) > 40 {
			continue
		}
		o, _ := oldCompile(pat)
		b.Run("old/"+name, func(b *testing.B) {
			for b.Loop() {
				for _, s := range benchPaths {
					o.Match(s)
				}
			}
		})
	}
}
