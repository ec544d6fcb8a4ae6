package gitignore

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// hostile ignore files: what an agent that can write a .gitignore may
// leave for every later walk of the tree.
func hostileFiles() map[string][]byte {
	var many strings.Builder // 30,000 ordinary patterns, mostly wildcards
	for i := 0; i < 30000; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&many, "build-%d/\n", i)
		case 1:
			fmt.Fprintf(&many, "*.ext%d\n", i)
		default:
			fmt.Fprintf(&many, "src/**/gen%d_*.go\n", i)
		}
	}
	var wild strings.Builder // 1 MiB of "**/a*b*c*..." patterns
	for wild.Len() < 1<<20-64 {
		wild.WriteString("**/a*b*c*d*e*f*g*h*i*j*k*l*m*n*o*p*q*r*s*t*u*v*w*x*y*z*\n")
	}
	long := "a" + strings.Repeat("*a", 1<<19-8) + "b\n" // one 1 MiB pattern
	tiny := strings.Repeat("a\n", 1<<19)                // the most patterns 1 MiB holds
	return map[string][]byte{"tiny1MiB": []byte(tiny), "30k": []byte(many.String()), "wild1MiB": []byte(wild.String()), "long1MiB": []byte(long)}
}

// hostilePath is a long path of many 'a's: the worst case of a backtracking star matcher.
var hostilePath = "src/" + strings.Repeat("a", 200) + "/" + strings.Repeat("abcdefghijklmnopqrstuvwxy", 8)

func BenchmarkParseHostile(b *testing.B) {
	for name, data := range hostileFiles() {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				Parse(data, []string{"src"})
			}
		})
	}
}

func BenchmarkDecideHostile(b *testing.B) {
	for name, data := range hostileFiles() {
		ps := Parse(data, nil)
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				Decide(ps, hostilePath, false)
			}
		})
	}
}

// TestHostileIgnoreBounds bounds what a hostile ignore file costs: parsing
// (time and allocation) and matching paths against it. With a regexp
// compiled per pattern, the wildcard-heavy 1 MiB file took ~0.8 s and
// ~180 MiB to parse and ~0.8 s per path; the single 1 MiB pattern ~1.9 s
// and ~130 MiB; 30,000 patterns cost ~36 ms per path (all without -race).
func TestHostileIgnoreBounds(t *testing.T) {
	paths := []string{hostilePath, "x/y/z.go", "src/a/b/gen1_x.go", strings.Repeat("ab/", 300) + "c"}
	for name, data := range hostileFiles() {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		t0 := time.Now()
		ps := Parse(data, []string{"src"})
		parse := time.Since(t0)
		runtime.ReadMemStats(&m1)
		alloc := m1.TotalAlloc - m0.TotalAlloc
		// A pattern is a 40-byte header plus its share of one copy of the file.
		if limit := uint64(48*len(ps) + 2*len(data) + 1<<20); alloc > limit {
			t.Errorf("%s: parsing allocated %d bytes, want <= %d", name, alloc, limit)
		}
		if parse > 2*time.Second {
			t.Errorf("%s: parsing took %v", name, parse)
		}
		t0 = time.Now()
		for _, p := range paths {
			Decide(ps, "src/"+p, false)
		}
		match := time.Since(t0)
		if match > 2*time.Second {
			t.Errorf("%s: %d paths took %v to match", name, len(paths), match)
		}
		t.Logf("%s: %d patterns: parse %v, %d bytes allocated; %d paths matched in %v", name, len(ps), parse, alloc, len(paths), match)
	}
}

// TestDecideContext: a cancelled call stops matching (and says so).
func TestDecideContext(t *testing.T) {
	ps := Parse(hostileFiles()["wild1MiB"], nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t0 := time.Now()
	if _, _, err := DecideContext(ctx, ps, hostilePath, false); err == nil {
		t.Fatal("a cancelled context did not stop the match")
	}
	if d := time.Since(t0); d > time.Second { // it stops at its first check
		t.Errorf("cancelled match took %v", d)
	}
	if ign, ok, err := DecideContext(context.Background(), ps, "q/abcdefghijklmnopqrstuvwxyz", false); err != nil || !ok || !ign {
		t.Errorf("DecideContext = %v %v %v, want ignored", ign, ok, err)
	}
}
