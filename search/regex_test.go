package search

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// rgPattern translates an RE2 pattern for ripgrep: Go's \w \d \s \b (and
// their negations) are ASCII-only, Rust's are Unicode; (?-u:...) makes
// ripgrep's ASCII. The patterns of the tests use these escapes outside
// classes only.
func rgPattern(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			if strings.IndexByte("wWdDsSbB", p[i+1]) >= 0 {
				b.WriteString(`(?-u:\` + string(p[i+1]) + `)`)
			} else {
				b.WriteString(p[i : i+2])
			}
			i++
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// diffRegexQueries are the regular expressions compared with rg on the
// generated corpus. Documented difference, avoided here: on invalid UTF-8
// Go's "." and negated classes match each bad byte (as U+FFFD), ripgrep's
// do not.
var diffRegexQueries = []diffQuery{
	{query: `func \w+\(`},                        // literal prefix, class, repetition
	{query: `needle\d+$`},                        // end anchor
	{query: `^marker`},                           // start anchor
	{query: `needle$`},                           // end anchor with CRLF lines around
	{query: `\bneedle\b`},                        // word boundaries
	{query: `\Bneedle`},                          // not a boundary
	{query: `Hello|HELLO|hElLo`},                 // alternation of literals
	{query: `h[aeiou]llo`, ignoreCase: true},     // class, folded
	{query: `(?i)hello`},                         // inline fold
	{query: `[[:upper:]]{3,}`},                   // POSIX class
	{query: `\d+ and \d+`},                       // perl class
	{query: `世界`},                                // Chinese literal
	{query: `[世界]+`},                             // Chinese class
	{query: `\p{Greek}+`},                        // Unicode script
	{query: `σοφος`, ignoreCase: true},           // Greek fold Σ σ ς
	{query: `(?i)жук`},                           // Cyrillic fold
	{query: `ΣΟΦ.Σ`},                             // dot on a multibyte rune
	{query: `(?i)kelvin`},                        // K KELVIN SIGN
	{query: `(?i)straße`},                        // ß ẞ
	{query: `a\.b\*c`},                           // escaped metacharacters
	{query: `\$HOME`},                            // escaped anchor
	{query: `\(x\|y\)`},                          // escaped group
	{query: `^$`},                                // empty lines
	{query: `x*`},                                // empty matches on every line
	{query: `needle.*needle`},                    // dot-star between literals
	{query: `straddle-\w+`},                      // across the buffer boundary
	{query: `hugeneedle`},                        // in a line longer than the buffer
	{query: `line \d+ filler text needle9[0-6]`}, // prefilter, class at the end
	{query: `tail 1[0-9]{3} needle`},             // numbers in a big file
	{query: `needle(?: in| at)`},                 // non-capturing group
	{query: `(foo|needle)\d`},                    // alternation then class
	{query: `\s{2,}`},                            // runs of spaces
	{query: `[^a-z ]needle`},                     // negated class (never a line break)
	{query: `(?s)needle.x`},                      // (?s): "." still stays in a line
	{query: `.{490,}`},                           // long lines, cut text
	{query: `needle`, glob: "*.go"},              // with a glob
	{query: `(?i)needle (in|at) [a-z]+`, glob: "*.txt"},
	{query: `[0-9]{4}-[0-9]{2}`},          // one-byte literal, bounded window around it
	{query: `needle\d{1,2}`},              // window after the literal
	{query: `(?i)k.lvin`},                 // folded window (K is 3 bytes)
	{query: `[a-z]{2}(ab|cde)?-\w`},       // alternation in a window
	{query: `absent-(zzqx|qqqz)`},         // absent
	{query: `hugeneedle|marker|straddle`}, // a set of literals (Teddy)
	{query: `(?i)(kelvin|straße|needle)`}, // a folded set with K and ß: each literal's matcher
	{query: `\b(needle|Hello)\d*`},        // a set inside a concatenation
	{query: `-e`},                         // an option, as a pattern
	{query: `\$\(touch /tmp/pwned\)`},     // shell, as a pattern
}

func TestDiffRegex(t *testing.T) {
	pwned := watchPwned()
	root := t.TempDir()
	buildDiffCorpus(t, root)
	c := newDiffCorpus(t, root)
	if len(diffRegexQueries) < 30 {
		t.Fatalf("%d regex queries, want at least 30", len(diffRegexQueries))
	}
	for _, q := range diffRegexQueries {
		q.regex = true
		n := c.compare(t, q, false)
		t.Logf("%v: %d lines", q, n)
	}
	pwned.check(t)
}

func TestRegexPrefilter(t *testing.T) {
	for _, c := range []struct {
		pattern, lit string
		ci           bool
	}{
		{`func \w+Dial`, "Dial", false},
		{`Err[A-Z]\w*EOF`, "EOF", false},
		{`foo\d+bar`, "bar", false},
		{`ab\d+xyzw`, "xyzw", false},
		{`(?i)unexpected eof`, "UNEXPECTED EOF", false},
		{`unexpected eof`, "UNEXPECTED EOF", true},
		{`[0-9]{4}-[0-9]{2}`, "-", false},
		{`[0-9]{4}[a-z]`, "", false},
		{`foo|bar`, "", false}, // a set: see below
		{`(abc)+x?`, "abc", false},
		{`a(bcd)e`, "abcde", false},
		{`[Ee]rror: (?:\w+)`, "Error: ", false},
		{`x{2}yy`, "x", false},
		{`(ab)*cd`, "cd", false},
	} {
		m, err := compileRegex(c.pattern, !c.ci)
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		if !strings.EqualFold(m.lit, c.lit) || (m.pre == nil) != (c.lit == "" && m.set == nil) {
			t.Errorf("%q: prefilter %q, want %q", c.pattern, m.lit, c.lit)
		}
	}
	// Sets of literals, one in every match: alternations.
	for pattern, want := range map[string]string{
		`foo|bar`:                        "foo bar",
		`Deadline|Kelvin|quokka`:         "Deadline Kelvin quokka",
		`(?i)(error|warn|fatal)`:         "(?i)ERROR (?i)WARN (?i)FATAL",
		`x(foo|barbaz)\d`:                "foo barbaz", // better than the one-byte x
		`func (Dial|Listen)\w*`:          "func ",      // a literal of 3 bytes stays
		`(ab|cd)+-(efg|hij)`:             "efg hij",    // the longer set
		`foo|b`:                          "",           // a one-byte branch
		`foo|\d+`:                        "",           // a branch without a literal
		`(foo|bar)?x`:                    "x",          // an optional set
		`a1|b2|c3|d4|e5|f6|g7|h8|i9`:     "",           // more than maxSet literals
		`Hello|HELLO|hElLo`:              "ello ELLO hElLo",
		`(?:alpha|beta)(?:gamma|delta)+`: "gamma delta", // ties: the set of longer shortest literal
	} {
		m, err := compileRegex(pattern, true)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range m.set {
			if l.fold {
				l.s = "(?i)" + l.s
			}
			got = append(got, l.s)
		}
		if m.set == nil {
			got = []string{m.lit}
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%q: prefilter set %q, want %q", pattern, got, want)
		}
	}
	// Windows around the literal: bounded parts only, no assertions.
	for pattern, want := range map[string]string{
		`[0-9]{4}-[0-9]{2}`:   "4+3",
		`(?i)unexpected eof`:  "0+56",
		`x(ab|cde)?-\d{1,3}`:  "0+8",
		`func \w+Dial`:        "none",
		`\bab-\d`:             "none",
		`ab-\d$`:              "none",
		`[0-9]{40}-[0-9]{40}`: "none",
	} {
		m, err := compileRegex(pattern, true)
		if err != nil {
			t.Fatal(err)
		}
		got := "none"
		if m.win != nil {
			got = fmt.Sprintf("%d+%d", m.win.before, m.win.after)
		}
		if got != want {
			t.Errorf("%q: window %s, want %s", pattern, got, want)
		}
	}
}

// TestRegexHostile: oversized or runaway patterns are refused before any
// file is read, fast, and leave no goroutine behind.
func TestRegexHostile(t *testing.T) {
	e := newTenv(t)
	e.write(t, "a.txt", []byte("aaaa\n"))
	base := runtime.NumGoroutine()
	for _, c := range []struct{ name, pattern, want string }{
		{"100 KB pattern", strings.Repeat("a", 100<<10), "bytes long"},
		{"1 KB + 1 pattern", strings.Repeat("(", 1025), "bytes long"},
		{"huge repetition", `a{100000}`, "invalid repeat count"},
		{"nested repetition", `((a{100}){100}){100}`, "invalid repeat count"},
		{"wide repetition", `(a1|b2|c3|d4|e5|f6|g7|h8|i9|j0){1000}`, "instructions"},
		{"many live threads", `(\w+\s*){400}`, "instructions"},
		{"classes repeated", `(\pL\pN\pM\pS\pP\w\s\d){1000}`, "instructions"},
		{"line break", `a\nb`, "line break"},
		{"unclosed", `(abc`, "missing closing )"},
		{"bad escape", `\C`, "invalid escape sequence"},
	} {
		start := time.Now()
		_, err := e.eng.Search(context.Background(), Request{Workdir: "wd", Query: c.pattern, Regex: true, CaseSensitive: true})
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: refused after %v", c.name, d)
		}
		wantCode(t, err, errs.InvalidPattern)
		if err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to say %q", c.name, err, c.want)
		}
		if err == nil {
			t.Errorf("%s: accepted", c.name)
		}
		if n := goroutinesBack(base); n > base {
			t.Fatalf("%s: %d goroutines, baseline %d", c.name, n, base)
		}
	}
	// Deep nesting within the size bound compiles and runs in linear time.
	deep := strings.Repeat("(", 200) + "a" + strings.Repeat(")*", 200)
	res := e.search(t, Request{Query: deep, Regex: true, CaseSensitive: true})
	if res.Returned != 1 {
		t.Errorf("deep nesting: %+v", res)
	}
}

// goroutinesBack waits a bounded time for the goroutine count to fall to
// base or below and returns the count. Below is fine: goroutines an earlier
// test left winding down may end while this one runs.
func goroutinesBack(base int) int {
	for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() > base && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	return runtime.NumGoroutine()
}

func TestLiteralHint(t *testing.T) {
	e := newTenv(t)
	e.write(t, "a.go", []byte("func Dial() {}\nfunc (c *Conn) DialContext() {}\n"))
	res := e.search(t, Request{Query: `func.*Dial`, CaseSensitive: true})
	if res.Returned != 0 || res.Hint != literalHint {
		t.Errorf("literal with metacharacters: %+v", res)
	}
	res = e.search(t, Request{Query: `func.*Dial`, Regex: true, CaseSensitive: true})
	if res.Returned != 2 || res.Hint != "" {
		t.Errorf("regex: %+v", res)
	}
	if res := e.search(t, Request{Query: `absent`, CaseSensitive: true}); res.Hint != "" {
		t.Errorf("plain absent word: hint %q", res.Hint)
	}
	if res := e.search(t, Request{Query: `Dial()`, CaseSensitive: true}); res.Returned != 1 || res.Hint != "" {
		t.Errorf("literal that matches: %+v", res)
	}
}

// TestRegexHeavyPatternHonoursTimeout: the heaviest pattern accepted, with
// no literal to prefilter on, costs Go's NFA about a thousand steps per
// byte; the scan checks the deadline between segments of lines, so the
// search ends near the timeout (SEARCH_TIMEOUT or truncated "timeout")
// instead of finishing each 256 KiB buffer, and leaves no goroutine.
func TestRegexHeavyPatternHonoursTimeout(t *testing.T) {
	e := newTenv(t, "SERVERFS_SEARCH_TIMEOUT_SECONDS=1")
	line := strings.Repeat("abc def ", 30) + "\n"
	for i := 0; i < 4; i++ {
		e.write(t, fmt.Sprintf("f%d.txt", i), []byte(strings.Repeat(line, (1<<20)/len(line))))
	}
	base := runtime.NumGoroutine()
	start := time.Now()
	res, err := e.eng.Search(context.Background(), Request{Workdir: "wd", Query: `(\w+\s*){160}[xy]`, Regex: true, CaseSensitive: true})
	d := time.Since(start)
	if err == nil && (!res.Truncated || res.TruncatedReason != sfs.TruncatedTimeout) {
		t.Fatalf("finished without the timeout in %v: %+v (the workload is too small)", d, res)
	}
	if err != nil {
		wantCode(t, err, errs.SearchTimeout)
	}
	if d > 5*time.Second {
		t.Errorf("a 1 s search timeout ended after %v", d)
	}
	if n := goroutinesBack(base); n > base {
		t.Errorf("%d goroutines, baseline %d", n, base)
	}
}

// TestRegexScanChecksStop: without a prefilter the regexp scans a buffer
// in segments of whole lines and asks stopped between them; with the
// prefilter it asks before every 16th candidate line. Stopped from the start,
// neither goes past its first segment or line.
func TestRegexScanChecksStop(t *testing.T) {
	buf := []byte(strings.Repeat(strings.Repeat("abc def ", 30)+"\n", 1000))
	for _, c := range []struct{ heavy, light string }{
		{`(\w+\s*){160}[xy]`, `[0-9]+[xy]`}, // no literal
		{`def (\w+\s*){100}x`, `def [0-9]`}, // prefilter "def "
	} {
		m, err := compileRegex(c.heavy, true)
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		m.stopped = func() bool { calls++; return true }
		if i := m.forChunk(buf).index(buf, 0); i != -1 || calls != 1 {
			t.Errorf("%s: index %d after %d stop checks, want -1 after 1", c.heavy, i, calls)
		}
		// A whole scan (of a cheap pattern) asks all along.
		if m, err = compileRegex(c.light, true); err != nil {
			t.Fatal(err)
		}
		calls = 0
		m.stopped = func() bool { calls++; return false }
		if i := m.forChunk(buf).index(buf, 0); i != -1 || calls < 10 {
			t.Errorf("%s: a full scan checked stop %d times", c.light, calls)
		}
	}
}

// TestRegexOtherLiterals: a candidate line must hold every required
// literal of 3 bytes or more, not only the prefilter's; the lines reported
// are those the regexp matches.
func TestRegexOtherLiterals(t *testing.T) {
	for _, c := range []struct {
		pattern string
		fold    bool
		also    int
	}{
		{`Err[A-Z]\w*EOF`, false, 1},
		{`(?i)unexpected\s+eof`, false, 1},
		{`foo.*bar.*baz`, true, 2},
		{`ab.*cd`, false, 0}, // too short to check
	} {
		m, err := compileRegex(c.pattern, !c.fold)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.also) != c.also {
			t.Errorf("%s: %d other literals, want %d", c.pattern, len(m.also), c.also)
		}
		text := "EOF alone\nErrXEOF\nErr then EOF\nunexpected EOF\nUNEXPECTED   eof\nfoo bar baz\nFOO BAZ BAR\nab cd\nabcd EOF Err\n"
		var got, want []int
		for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			if regexp.MustCompile(map[bool]string{true: "(?i)", false: ""}[c.fold] + c.pattern).MatchString(line) {
				want = append(want, i+1)
			}
		}
		newSearcher().search(strings.NewReader(text), m, regexOverlap, func() bool { return false }, func(lm lineMatch) bool {
			got = append(got, lm.line)
			return true
		})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: lines %v, want %v", c.pattern, got, want)
		}
	}
}

// TestRegexWindowFoldedPart: the window is anchored on a part that folds
// as the prefilter does. The parser stores (?i:err) as "ERR", its
// smallest fold: anchoring the case-sensitive prefilter ERR on it put the
// window before the real ERR, and err1ERR was missed.
func TestRegexWindowFoldedPart(t *testing.T) {
	text := "err1ERR\nerr1err\nabc-ABC\nABC-abc\nσοφcdΣΟΦ\nσοφcdσοφ\nΣοφabcΣΟΦabc\n"
	for _, pattern := range []string{
		`(?i:err)\dERR`,
		`(?i:abc).ABC`,
		`(?i:σοφ)(ab|cd)ΣΟΦ(x)?`,
		`(?i:σοφ)(?:abc){1,2}ΣΟΦ(?:abc){1,2}`,
	} {
		m, err := compileRegex(pattern, true)
		if err != nil {
			t.Fatal(err)
		}
		var got, want []int
		for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			if regexp.MustCompile(pattern).MatchString(line) {
				want = append(want, i+1)
			}
		}
		newSearcher().search(strings.NewReader(text), m, regexOverlap, func() bool { return false }, func(lm lineMatch) bool {
			got = append(got, lm.line)
			return true
		})
		if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s (prefilter %q, window %+v): lines %v, want %v", pattern, m.lit, m.win, got, want)
		}
	}
}

// TestRegexLongLineChecksStop: a line longer than regexCheckBytes is read
// by one regexp call that checks stopped every regexCheckBytes, and reads
// nothing once stopped; stopped on its second check, a scan of a 1 MiB line
// whose only match is at its end reports none.
func TestRegexLongLineChecksStop(t *testing.T) {
	line := strings.Repeat("abc def ", (1<<20)/8) + "x"
	buf := []byte(line + "\n")
	re := regexp.MustCompile(`(\w+\s*){3}x`)
	var at []int
	in := &stoppableInput{b: []byte(line)}
	in.stopped = func() bool { at = append(at, in.off); return len(at) == 3 }
	if loc := re.FindReaderIndex(in); !in.stop || in.off != 2*regexCheckBytes {
		t.Fatalf("stopped on the third check: loc %v, read %d bytes, stop %v; want %d bytes", loc, in.off, in.stop, 2*regexCheckBytes)
	}
	for i, off := range at {
		if off != i*regexCheckBytes {
			t.Errorf("check %d at byte %d, want %d", i, off, i*regexCheckBytes)
		}
	}
	for _, p := range []string{`(\w+\s*){3}x`, `def (\w+\s*){3}x`} {
		m, err := compileRegex(p, true)
		if err != nil {
			t.Fatal(err)
		}
		if i := m.forChunk(buf).index(buf, 0); i != 0 {
			t.Fatalf("%s: not stopped: index %d, want 0", p, i)
		}
		calls := 0
		m.stopped = func() bool { calls++; return calls >= 2 }
		if i := m.forChunk(buf).index(buf, 0); i != -1 {
			t.Errorf("%s: stopped: index %d after %d checks, want -1", p, i, calls)
		}
	}
}

// TestRegexLongLineSameMatch: reading a long line through stoppableInput
// finds the same match as regexp over the bytes, anchors, word boundaries,
// multibyte runes across a check and bad UTF-8 included.
func TestRegexLongLineSameMatch(t *testing.T) {
	pad := strings.Repeat("ab ", regexCheckBytes/3)
	lines := []string{
		pad + "世界 needle" + pad,
		pad[:regexCheckBytes-1] + "世界x" + pad,
		pad + "\xff\xfeneedle" + pad + "end",
		"start" + pad + pad,
		pad + pad + "ab",
	}
	pats := []string{`needle`, `^start`, `end$`, `\bneedle\b`, `世界x`, `.needle`, `(?:ab ){3}ab$`, `b ab a`, `zz`, `\Bneedle`}
	for _, p := range pats {
		re := regexp.MustCompile(p)
		for i, l := range lines {
			want := re.FindIndex([]byte(l))
			got, stop := findIndex(re, []byte(l), regexCheckBytes, func() bool { return false })
			if stop || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s on line %d: %v (stop %v), want %v", p, i, got, stop, want)
			}
			if ok, _ := matchLine(re, []byte(l), regexCheckBytes, func() bool { return false }); ok != (want != nil) {
				t.Errorf("%s on line %d: matchLine %v", p, i, ok)
			}
		}
	}
}

// TestRegexCheckScalesWithProgram: a program of more than checkInsts
// instructions checks stopped more often than every regexCheckBytes, down
// to minCheckBytes for the largest accepted, and a long line's scan by the
// matcher checks at that interval.
func TestRegexCheckScalesWithProgram(t *testing.T) {
	for _, c := range []struct {
		pattern  string
		min, max int
	}{
		{`(\w+\s*){3}x`, regexCheckBytes, regexCheckBytes},
		{`(?:\w+\s*){40}[^\w\s]`, regexCheckBytes, regexCheckBytes},             // 163 instructions
		{`(?:\w+\s*){125}[^\w\s]`, regexCheckBytes/2 - 64, regexCheckBytes / 2}, // 503
		{`(?:\w+\s*){249}[^\w\s]`, minCheckBytes, minCheckBytes + 64},           // 999: the largest accepted
	} {
		m, err := compileRegex(c.pattern, true)
		if err != nil {
			t.Fatal(err)
		}
		if m.check < c.min || m.check > c.max {
			t.Errorf("%s: checks every %d bytes, want %d-%d", c.pattern, m.check, c.min, c.max)
		}
	}
	m, err := compileRegex(`(?:\w+\s*){249}[^\w\s]`, true)
	if err != nil {
		t.Fatal(err)
	}
	buf := []byte(strings.Repeat("abc def ", 64<<10/8) + "\n")
	var checks int
	m.stopped = func() bool { checks++; return checks == 3 }
	if i := m.forChunk(buf).index(buf, 0); i != -1 || checks != 3 {
		t.Fatalf("index %d after %d checks, want -1 after 3", i, checks)
	}
	in := &stoppableInput{b: buf, every: m.check}
	in.stopped = func() bool { return in.off >= 2*m.check }
	if m.re.MatchReader(in); !in.stop || in.off != 2*m.check {
		t.Errorf("stopped after %d bytes (stop %v), want %d", in.off, in.stop, 2*m.check)
	}
}
