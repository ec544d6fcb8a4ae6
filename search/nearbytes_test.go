package search

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// windowPatterns have a bounded window around their literal: with bytes
// pinned on both sides (exact: no regexp call), on one side, or none.
var windowPatterns = []struct {
	pattern string
	near    int
	exact   bool
}{
	{`[0-9]{4}-[0-9]{2}`, 6, true},
	{`-`, 0, true},
	{`ab-[a-c]x`, 2, true},                  // the literal is ab-
	{`(?:[0-9][a-f]){2}-[0-9]?`, 4, false},  // pinned before only
	{`\d{2}:\d{2}\.\w`, 6, true},            // \w is ASCII: pinned too
	{`[0-9]{2}-.`, 2, false},                // . is any rune
	{`[0-9]{2}[éè]-[0-9]`, 1, false},        // [éè] is two bytes: pinned up to it
	{`[A-Z]{3}-[0-9](?i:k)`, 4, false},      // a folded k may be K (3 bytes)
	{`(?:x|yz)-[0-9]{3}`, 3, false},         // an alternation: variable width
	{`[[:digit:]]{1}:(ab){2}`, 5, true},     // POSIX class, repeated group
	{`[^0-9]-[0-9]`, 1, false},              // a negated class reaches past ASCII
	{`[a-z]\x{7f}-\x{7f}`, 1, true},         // the last ASCII byte, in the literal
	{`[0-9]{4}-[0-9]{2}-[0-9]{2}`, 9, true}, // two literals: the first anchors, the second is pinned
}

func TestRegexWindowNearBytes(t *testing.T) {
	for _, c := range windowPatterns {
		m, err := compileRegex(c.pattern, true)
		if err != nil {
			t.Fatal(err)
		}
		if m.win == nil {
			t.Errorf("%s: no window", c.pattern)
			continue
		}
		if len(m.win.near) != c.near || m.win.exact != c.exact {
			t.Errorf("%s (literal %q): %d pinned bytes, exact %v; want %d, %v", c.pattern, m.lit, len(m.win.near), m.win.exact, c.near, c.exact)
		}
	}
	m, err := compileRegex(`[0-9]{4}-[0-9]{2}`, true)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int
	for _, n := range m.win.near {
		offs = append(offs, n.off)
	}
	if fmt.Sprint(offs) != "[-1 1 -2 2 -3 -4]" {
		t.Errorf("pinned offsets %v, want the nearest first", offs)
	}
}

// windowText makes lines from pieces that match, nearly match and do not
// match the window patterns: digits and dashes, CRLF endings, multibyte
// runes (é, 世, K KELVIN SIGN), invalid UTF-8, and lines longer than the
// searcher's buffer.
func windowText(r *rand.Rand, lines, bufSize int) []byte {
	pieces := []string{"0", "7", "12", "2024", "-", "--", "-1", "ab", "x", "yz", "é", "è", "世", "\u212A", "k", "K", "\xff", " ", "\t", ":", ".", "\x7f", "\r", "c", "f", "3a"}
	var b bytes.Buffer
	for range lines {
		n := r.IntN(12)
		if r.IntN(40) == 0 {
			n = bufSize/2 + r.IntN(2*bufSize) // longer than the buffer, often
		}
		for range n {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		if r.IntN(4) == 0 {
			b.WriteByte('\r')
		}
		b.WriteByte('\n')
	}
	if r.IntN(2) == 0 {
		b.WriteString("2024-12") // a last line without a line ending
	}
	return b.Bytes()
}

// regexReference is the specification of a regex search: every line on
// which regexp matches, reported by makeLine, cut when it cannot fit the
// buffer.
func regexReference(data []byte, re *regexp.Regexp, bufSize int) []lineMatch {
	var out []lineMatch
	for i, line := range bytes.Split(data, []byte("\n")) {
		if i == len(bytes.Split(data, []byte("\n")))-1 && len(line) == 0 {
			break
		}
		if re.Match(line) {
			m := makeLine(i+1, line)
			m.cut = m.cut || len(line) >= bufSize
			out = append(out, m)
		}
	}
	return out
}

// checkRegexAgainstReference searches data with the compiled pattern on a
// small buffer and compares with regexReference.
func checkRegexAgainstReference(t *testing.T, pattern string, data []byte, bufSize int) {
	t.Helper()
	m, err := compileRegex(pattern, true)
	if err != nil {
		t.Fatal(err)
	}
	var got []lineMatch
	if _, err := newSearcherSize(bufSize).search(bytes.NewReader(data), m, regexOverlap, func() bool { return false }, func(lm lineMatch) bool {
		got = append(got, lm)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	want := regexReference(data, regexp.MustCompile(pattern), bufSize)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s on %d bytes (buffer %d):\n got %v\nwant %v", pattern, len(data), bufSize, got, want)
	}
}

// TestRegexWindowAgainstRegexp: with the pinned bytes (and without a
// regexp call when exact) a window search finds the lines regexp finds,
// on generated text.
func TestRegexWindowAgainstRegexp(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range windowPatterns {
		for round := range 20 {
			bufSize := []int{8192, 9000, 16384}[round%3]
			checkRegexAgainstReference(t, c.pattern, windowText(r, 300, bufSize), bufSize)
		}
	}
}

func FuzzRegexWindow(f *testing.F) {
	f.Add([]byte("2024-12\n1-2\r\n12345-678\n"), uint8(0), uint8(0))
	f.Add([]byte("ab-cx\nab-dx\né1-2\n"), uint8(2), uint8(1))
	f.Add([]byte(strings.Repeat("9", 9000)+"-12\n"), uint8(0), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, patSel, sizeSel uint8) {
		if bytes.IndexByte(data, 0) >= 0 {
			return
		}
		bufSize := []int{8192, 9000, 16384}[sizeSel%3]
		checkRegexAgainstReference(t, windowPatterns[int(patSel)%len(windowPatterns)].pattern, data, bufSize)
	})
}

// goSource is the Go source of GOROOT/src/net, concatenated: text where
// '-' is common and dates are rare.
func goSource(b *testing.B) []byte {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "src", "net", "*.go"))
	if err != nil || len(files) == 0 {
		b.Fatal(err, files)
	}
	var buf []byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		buf = append(buf, data...)
	}
	return buf
}

// BenchmarkRegexWindow times the window matcher of [0-9]{4}-[0-9]{2} (a
// one-byte literal) over Go source, counting the matching lines as count
// mode does: with the pinned bytes (exact, no regexp call), with the
// regexp on every window, and regexp over every line (no prefilter):
//
//	go test -run '^$' -bench RegexWindow ./search
func BenchmarkRegexWindow(b *testing.B) {
	src := goSource(b)
	pattern := `[0-9]{4}-[0-9]{2}`
	for _, v := range []string{"pinned", "window-regexp", "line-regexp"} {
		b.Run(v, func(b *testing.B) {
			m, err := compileRegex(pattern, true)
			if err != nil {
				b.Fatal(err)
			}
			switch v {
			case "window-regexp":
				w := *m.win
				w.near, w.exact = nil, false
				m.win = &w
			case "line-regexp":
				m.pre, m.win = nil, nil
			}
			s := newSearcher()
			s.countOnly = true
			b.SetBytes(int64(len(src)))
			n := 0
			for b.Loop() {
				n = 0
				if _, err := s.search(bytes.NewReader(src), m, regexOverlap, func() bool { return false }, func(lineMatch) bool { n++; return true }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n), "lines")
		})
	}
}

func TestLastIndexByte(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		b := make([]byte, r.IntN(3*lastIndexBlock))
		for range r.IntN(4) {
			if len(b) > 0 {
				b[r.IntN(len(b))] = '\n'
			}
		}
		if got, want := lastIndexByte(b, '\n'), bytes.LastIndexByte(b, '\n'); got != want {
			t.Fatalf("%d bytes: %d, want %d", len(b), got, want)
		}
	}
}

// BenchmarkLastIndexByte: the last line break of a buffer of one long
// line and of short lines.
func BenchmarkLastIndexByte(b *testing.B) {
	long := bytes.Repeat([]byte("x"), bufferSize)
	long[10] = '\n'
	short := bytes.Repeat([]byte("0123456789abcdef0123456789abcde\n"), bufferSize/32)
	for _, c := range []struct {
		name string
		buf  []byte
	}{{"long-line", long}, {"short-lines", short}} {
		b.Run(c.name+"/bytes", func(b *testing.B) {
			b.SetBytes(int64(len(c.buf)))
			for b.Loop() {
				bytes.LastIndexByte(c.buf, '\n')
			}
		})
		b.Run(c.name+"/blocks", func(b *testing.B) {
			b.SetBytes(int64(len(c.buf)))
			for b.Loop() {
				lastIndexByte(c.buf, '\n')
			}
		})
	}
}
