package fs

import (
	"bytes"
	"context"
	"errors"
	"github.com/serverfs/serverfs/internal/errs"
	"io"
	"path"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// The fuzz targets below double as unit tests: under plain `go test` each
// runs its seed corpus. Run one for real with e.g.
//
//	go test -run XXX -fuzz FuzzReadLines -fuzztime 30s ./fs/

// fuzzAsError returns err as an *Error or fails the test.
func fuzzAsError(t *testing.T, err error) *errs.Error {
	t.Helper()
	var e *errs.Error
	if !errors.As(err, &e) {
		t.Fatalf("error is %T, not *Error: %v", err, err)
	}
	return e
}

// fuzzCheckShown fails unless s is safe to echo to an agent: valid UTF-8, no NUL.
func fuzzCheckShown(t *testing.T, what, s string) {
	t.Helper()
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		t.Fatalf("%s %q is not safe to show (invalid UTF-8 or NUL)", what, s)
	}
}

func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{
		"", ".", "./", "/", "..", "../", "../../etc/passwd", "foo/../../../etc/passwd",
		"/etc/passwd", "//etc/passwd", "a\x00b", "\x00", `..\..\x`, `C:\foo`, `C:/foo`,
		`\\host\share\x`, `\x`, "C:", "c:x", "z:/", `a\b.txt`, `a\..\..\b`, `a/..\b`, "1:/x",
		"~", "~/x", "~root/.ssh", "a//b", "a/./b/", "a/b/../../..", "a/b/../../../",
		"a/b/../..", "a/../b", "./../x", "x/./../..", "...", ".../x", "....//x",
		"．．/x", "\u2024\u2024/x", "\u2025/x", "..\u200b/x", "%2e%2e/x", "..%2fx",
		"a/b/c/", ".env", "src/.env", "a/.ssh/id_rsa", "key.PEM", " ../x", ".. /x",
		"\xff", "a/\xc0\xaf", "\xed\xa0\x80", "\xef\xbf\xbd", "a/\xe2\x80",
		strings.Repeat("a/", 2048), strings.Repeat("x", 4096), strings.Repeat("x", 4095),
		strings.Repeat("a", 255) + "/b", strings.Repeat("a", 256) + "/..",
		strings.Repeat("../", 1365), strings.Repeat("a/", 100) + strings.Repeat("../", 101),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p, e := cleanPath(raw)

		// Independent model: the textual checks, then path.Clean, which
		// keeps a leading ".." exactly when some ".." climbs above the start.
		// A backslash is refused only where Windows would read the path
		// as absolute: leading (rooted, UNC) or after a drive letter.
		// The same holds for what the path cleans to ("./\\x", "a/../C:").
		winAbs := func(s string) bool {
			drive := len(s) >= 2 && s[1] == ':' && strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", rune(s[0])) &&
				(len(s) == 2 || s[2] == '/' || s[2] == '\\')
			return drive || strings.HasPrefix(s, `\`)
		}
		cleaned := path.Clean(raw)
		climbs := cleaned == ".." || strings.HasPrefix(cleaned, "../")
		textOK := strings.IndexByte(raw, 0) < 0 && utf8.ValidString(raw) &&
			!winAbs(raw) && !strings.HasPrefix(raw, "/") && len(raw) <= maxPathBytes &&
			(climbs || !winAbs(cleaned))
		longComp := false
		for _, c := range strings.Split(raw, "/") {
			if len(c) > maxNameBytes {
				longComp = true
			}
		}

		if e != nil {
			if e.Workdir != "" {
				t.Fatalf("cleanPath(%q) error has Workdir %q", raw, e.Workdir)
			}
			fuzzCheckShown(t, "error path", e.Path)
			fuzzCheckShown(t, "error message", e.Error())
			// At most 200 input bytes are echoed; NUL becomes 4 bytes, a
			// run of invalid bytes 3.
			if len(e.Path) > 4*200+3 {
				t.Fatalf("cleanPath(%q) error path is %d bytes long", raw, len(e.Path))
			}
			switch {
			case !textOK:
				if e.Code != errs.InvalidPath {
					t.Fatalf("cleanPath(%q) = %s, want INVALID_PATH", raw, e.Code)
				}
			case climbs && !longComp:
				if e.Code != errs.PathOutsideWorkdir {
					t.Fatalf("cleanPath(%q) = %s, want PATH_OUTSIDE_WORKDIR", raw, e.Code)
				}
			case climbs:
				if e.Code != errs.PathOutsideWorkdir && e.Code != errs.InvalidPath {
					t.Fatalf("cleanPath(%q) = %s, want PATH_OUTSIDE_WORKDIR or INVALID_PATH", raw, e.Code)
				}
			case longComp:
				if e.Code != errs.InvalidPath {
					t.Fatalf("cleanPath(%q) = %s, want INVALID_PATH", raw, e.Code)
				}
			default:
				t.Fatalf("cleanPath(%q) = %v, want success", raw, e)
			}
			return
		}

		if !textOK || climbs || longComp {
			t.Fatalf("cleanPath(%q) succeeded (%q); want an error (text ok %v, climbs %v, long component %v)", raw, p.String(), textOK, climbs, longComp)
		}
		for _, c := range p.comps {
			if c == "" || c == "." || c == ".." || strings.ContainsAny(c, "/\x00") || len(c) > maxNameBytes || !utf8.ValidString(c) {
				t.Fatalf("cleanPath(%q) has bad component %q (all: %q)", raw, c, p.comps)
			}
		}
		s := p.String()
		if len(s) > maxPathBytes {
			t.Fatalf("cleanPath(%q) is %d bytes long", raw, len(s))
		}
		want := cleaned
		if want == "." {
			want = ""
		}
		if s != want {
			t.Fatalf("cleanPath(%q) = %q, want %q (path.Clean)", raw, s, want)
		}
		if p.wantDir != strings.HasSuffix(raw, "/") {
			t.Fatalf("cleanPath(%q).wantDir = %v", raw, p.wantDir)
		}
		// Idempotent: cleaning the rendered path gives the same components.
		p2, e2 := cleanPath(s)
		if e2 != nil {
			t.Fatalf("cleanPath(%q) = %q, which does not re-clean: %v", raw, s, e2)
		}
		if p2.String() != s || len(p2.comps) != len(p.comps) {
			t.Fatalf("cleanPath not idempotent: %q -> %q -> %q", raw, s, p2.String())
		}
	})
}

// fuzzRefWindow is the expected outcome of ReadLines, computed independently.
type fuzzRefWindow struct {
	code    errs.Code // "" on success
	content string
	start   int
	end     int
	hasMore bool
}

// fuzzRefReadLines is a naive reference implementation of ReadLines on the whole
// input held in memory.
func fuzzRefReadLines(data []byte, startLine, maxLines, maxBytes int) fuzzRefWindow {
	sniff := data[:min(len(data), SniffBytes)]
	switch {
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return fuzzRefWindow{code: errs.UnsupportedTextEncoding}
	case bytes.IndexByte(sniff, 0) >= 0:
		return fuzzRefWindow{code: errs.BinaryFile}
	}
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	var lines [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			lines = append(lines, data)
			break
		}
		lines = append(lines, data[:i+1])
		data = data[i+1:]
	}
	if startLine > len(lines) && !(startLine == 1 && len(lines) == 0) {
		return fuzzRefWindow{code: errs.LineOutOfRange}
	}
	var out []byte
	n := 0
	for i := startLine - 1; i < len(lines) && n < maxLines; i++ {
		if len(out)+len(lines[i]) > maxBytes {
			if n == 0 {
				return fuzzRefWindow{code: errs.LineTooLarge}
			}
			break
		}
		out = append(out, lines[i]...)
		n++
	}
	if bytes.IndexByte(out, 0) >= 0 {
		return fuzzRefWindow{code: errs.BinaryFile}
	}
	if !utf8.Valid(out) {
		return fuzzRefWindow{code: errs.UnsupportedTextEncoding}
	}
	return fuzzRefWindow{content: string(out), start: startLine, end: startLine + n - 1, hasMore: startLine-1+n < len(lines)}
}

// fuzzCountLines counts '\n'-terminated lines plus a final unterminated one.
func fuzzCountLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

func FuzzReadLines(f *testing.F) {
	type seed struct {
		data                      string
		start, maxLines, maxBytes int
		padAt                     int
		padLen                    uint16
		oneByte                   bool
	}
	for _, s := range []seed{
		{"", 1, 10, 100, 0, 0, false},
		{"", 2, 10, 100, 0, 0, false},
		{"a", 1, 1, 1, 0, 0, false},
		{"a\n", 2, 1, 10, 0, 0, false},
		{"a\n", 3, 1, 10, 0, 0, false},
		{"a\nb", 2, 5, 10, 0, 0, false},
		{"a\r\nb\r\nc", 1, 2, 100, 0, 0, false},
		{"one\ntwo\nthree\n", 2, 1, 100, 0, 0, true},
		{"one\ntwo\nthree\n", 1, 3, 7, 0, 0, false},
		{"one\ntwo\nthree\n", 1, 3, 3, 0, 0, false},
		{"\xef\xbb\xbfbom\nline\n", 1, 10, 100, 0, 0, false},
		{"\xef\xbb\xbf", 1, 10, 100, 0, 0, false},
		{"\xef\xbb", 1, 10, 100, 0, 0, false},
		{"\xff\xfeh\x00i\x00", 1, 10, 100, 0, 0, false},
		{"\xfe\xff\x00h\x00i", 1, 10, 100, 0, 0, false},
		{"bin\x00ary", 1, 10, 100, 0, 0, false},
		{"ok\n\xff\xfe\n", 1, 1, 100, 0, 0, false},
		{"ok\n\xff\xfe\n", 1, 2, 100, 0, 0, false},
		{"ok\n\xe2\x82", 1, 2, 100, 0, 0, false},
		{"héllo wörld\n日本語\n", 2, 1, 100, 0, 0, false},
		{"\n\n\n", 3, 5, 100, 0, 0, false},
		{"\n\n\n", 4, 5, 100, 0, 0, false},
		// Long lines across the 64 KiB bufio buffer, in the skip and read phases.
		{"head\ntail\n", 1, 5, 1 << 20, 5, 40000, false},
		{"head\ntail\n", 2, 5, 1 << 20, 5, 40000, false},
		{"head\ntail\n", 3, 5, 1 << 20, 5, 40000, false},
		{"head\ntail\n", 2, 5, 1000, 5, 40000, false},
		{"head\ntail", 2, 5, 1 << 20, 10, 40000, false},
		{"head\n", 2, 5, 1 << 20, 5, 32768, false},
		{"x\n", 1, 5, 1 << 20, 0, 65535, true},
		// A NUL past the sniff window is still caught inside the window.
		{"late\x00nul\n", 1, 5, 1 << 20, 0, 5000, false},
	} {
		f.Add([]byte(s.data), s.start, s.maxLines, s.maxBytes, s.padAt, s.padLen, s.oneByte)
	}
	f.Fuzz(func(t *testing.T, data []byte, startLine, maxLines, maxBytes, padAt int, padLen uint16, oneByte bool) {
		// padLen*2 bytes of 'a' inserted at padAt reach past the 64 KiB
		// read buffer without the fuzzer having to grow the input.
		if padLen > 0 {
			at := fuzzClamp(padAt, 0, len(data))
			pad := bytes.Repeat([]byte{'a'}, int(padLen)*2)
			data = append(append(append([]byte{}, data[:at]...), pad...), data[at:]...)
		}
		startLine = 1 + fuzzClamp(startLine, 0, 1<<30)%(fuzzCountLines(string(data))+3)
		maxLines = 1 + fuzzClamp(maxLines, 0, 1<<30)%64
		maxBytes = 1 + fuzzClamp(maxBytes, 0, 1<<30)%(len(data)+64)

		var r io.Reader = bytes.NewReader(data)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		// Byte by byte without a size hint; whole, with the size hint
		// ReadText passes for regular files (small buffers).
		hint := int64(len(data))
		if oneByte {
			hint = -1
		}
		win, err := readLines(context.Background(), r, startLine, maxLines, maxBytes, hint)
		want := fuzzRefReadLines(data, startLine, maxLines, maxBytes)

		if err != nil {
			if win != nil {
				t.Fatalf("ReadLines returned both a window and an error: %v", err)
			}
			e := fuzzAsError(t, err)
			switch e.Code {
			case errs.BinaryFile, errs.UnsupportedTextEncoding, errs.LineTooLarge, errs.LineOutOfRange:
			default:
				t.Fatalf("ReadLines: unexpected code %v", err)
			}
			fuzzCheckShown(t, "error", e.Error())
			if e.Code != want.code {
				t.Fatalf("ReadLines(start %d, lines %d, bytes %d) = %v; reference says %q", startLine, maxLines, maxBytes, err, want.code)
			}
			return
		}
		if want.code != "" {
			t.Fatalf("ReadLines(start %d, lines %d, bytes %d) succeeded (%q); reference says %s", startLine, maxLines, maxBytes, fuzzTrunc(win.Content), want.code)
		}
		c := win.Content
		if !utf8.ValidString(c) || strings.IndexByte(c, 0) >= 0 {
			t.Fatalf("content is not NUL-free UTF-8: %q", fuzzTrunc(c))
		}
		if len(c) > maxBytes || win.BytesReturned != len(c) {
			t.Fatalf("content is %d bytes, BytesReturned %d, maxBytes %d", len(c), win.BytesReturned, maxBytes)
		}
		if win.StartLine != startLine {
			t.Fatalf("StartLine %d, want %d", win.StartLine, startLine)
		}
		if got := win.EndLine - win.StartLine + 1; got != fuzzCountLines(c) || got > maxLines || got < 0 {
			t.Fatalf("lines %d..%d but content holds %d lines (maxLines %d)", win.StartLine, win.EndLine, fuzzCountLines(c), maxLines)
		}
		if win.HasMore != (win.NextStartLine != nil) {
			t.Fatalf("HasMore %v but NextStartLine %v", win.HasMore, win.NextStartLine)
		}
		if win.NextStartLine != nil && *win.NextStartLine != win.EndLine+1 {
			t.Fatalf("NextStartLine %d, EndLine %d", *win.NextStartLine, win.EndLine)
		}
		if win.EndLine < win.StartLine && len(bytes.TrimPrefix(data, bomUTF8)) != 0 {
			t.Fatalf("empty window for a non-empty file")
		}
		if c != want.content || win.EndLine != want.end || win.HasMore != want.hasMore {
			t.Fatalf("ReadLines(start %d, lines %d, bytes %d) = %q [%d..%d more=%v]; reference %q [%d..%d more=%v]",
				startLine, maxLines, maxBytes, fuzzTrunc(c), win.StartLine, win.EndLine, win.HasMore,
				fuzzTrunc(want.content), want.start, want.end, want.hasMore)
		}
	})
}

func fuzzClamp(v, lo, hi int) int {
	if v < 0 {
		v = -(v + 1) // no overflow on math.MinInt
	}
	if hi > lo {
		return lo + v%(hi-lo+1)
	}
	return lo
}

func fuzzTrunc(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

func FuzzCompileGlob(f *testing.F) {
	for _, s := range [][2]string{
		{"*.go", "main.go"}, {"**/*.go", "a/b/c.go"}, {"src/**", "src/x/y"}, {"?", "a"},
		{"[a-z]*", "abc"}, {"[!a-z]", "A"}, {"{a,b}", "b"}, {"{a,{b,c}}", "c"},
		{"", "x"}, {"/abs", "abs"}, {"a\x00b", "a"}, {"[", "["}, {"]", "]"}, {"{", "{"},
		{"}", "}"}, {"{a,b", "a"}, {"[a-", "a"}, {"[z-a]", "b"}, {"[]", ""}, {"[!]", "x"},
		{`\`, `\`}, {`a\`, "a"}, {`\*`, "*"}, {`[\]]`, "]"}, {"{,}", ""}, {"{{{{{{", ""},
		{"**", "a/b"}, {"***", "a"}, {"a/**/b", "a/b"}, {"**/", "a/"}, {"a//b", "a//b"},
		{"\xff*", "\xffx"}, {"[\xff-\xfe]", "\xff"}, {"*\u00e9*", "caf\u00e9"},
		{strings.Repeat("*a", 300) + "b", strings.Repeat("a", 256)},
		{strings.Repeat("{a,", 200) + strings.Repeat("}", 200), "a"},
		{strings.Repeat("[", 1024), "["}, {strings.Repeat("x", 1025), "x"},
		{strings.Repeat("**/", 300) + "x", strings.Repeat("a/", 128)},
		{strings.Repeat("?", 1000), strings.Repeat("a", 256)},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if len(name) > 256 {
			name = name[:256]
		}
		g, err := CompileGlob(pattern)
		if err != nil {
			if g != nil {
				t.Fatalf("CompileGlob(%q) returned a Glob and an error", pattern)
			}
			if e := fuzzAsError(t, err); e.Code != errs.InvalidPattern {
				t.Fatalf("CompileGlob(%q) = %v, want INVALID_PATTERN", pattern, err)
			}
			fuzzCheckShown(t, "error", err.Error())
			return
		}
		switch {
		case pattern == "", len(pattern) > maxPatternBytes, strings.HasPrefix(pattern, "/"), strings.IndexByte(pattern, 0) >= 0:
			t.Fatalf("CompileGlob(%q) accepted a pattern it must reject", pattern)
		}
		if g.String() != pattern {
			t.Fatalf("String() = %q, want %q", g.String(), pattern)
		}
		base := path.Base(name)
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			base = name[i+1:]
		}
		got := g.Match(name, base)
		g.Match(base, base)
		g.Match("", "")
		// A pattern without meta characters matches exactly its own text.
		if utf8.ValidString(pattern) && !strings.ContainsAny(pattern, `*?[]{}\!,`) {
			if !g.Match(pattern, path.Base(pattern)) && !strings.HasSuffix(pattern, "/") {
				t.Fatalf("literal %q does not match itself", pattern)
			}
			if !strings.Contains(pattern, "/") && utf8.ValidString(name) && got != (base == pattern) {
				t.Fatalf("literal %q: Match(%q) = %v", pattern, base, got)
			}
		}
		// "*" and "**" match any base name.
		if (pattern == "*" || pattern == "**") && !got {
			t.Fatalf("%q does not match %q", pattern, name)
		}
	})
}

func FuzzPolicyDenied(f *testing.F) {
	for _, s := range []string{
		".env", "a/.env", ".ENV", ".Env/x", "x.pem", "a/b/KEY.PEM", "a/b.Pem/c", ".pem",
		"x.pem.txt", ".env.local", "id_rsa", ".ssh/config", "a/.ssh", "deep/.aws/credentials",
		"ok.txt", "", "env", "pem", "x\xff.pem", "\u0130.pem", "\u212a.env", ".ｅｎｖ",
	} {
		f.Add(s)
	}
	hidden, err := NewPolicy(false, nil)
	if err != nil {
		f.Fatal(err)
	}
	allow, err := NewPolicy(true, []string{"extra/**", "*.secret"})
	if err != nil {
		f.Fatal(err)
	}
	mustDeny := func(c string) bool {
		l := fuzzASCIILower(c)
		return l == ".env" || strings.HasSuffix(l, ".pem")
	}
	f.Fuzz(func(t *testing.T, raw string) {
		// As a cleaned path, the way tools see it.
		if rp, e := cleanPath(raw); e == nil {
			deny := false
			for _, c := range rp.comps {
				deny = deny || mustDeny(c)
			}
			for _, p := range []*Policy{hidden, allow} {
				got := p.Denied(rp.comps)
				code, _ := p.check(rp)
				if deny && (!got || code != errs.DeniedPath) {
					t.Fatalf("%q (allowHidden %v): Denied %v, check %q; want DENIED_PATH", rp.String(), p.AllowHidden(), got, code)
				}
				if got != (code == errs.DeniedPath) {
					t.Fatalf("%q: Denied %v but check %q", rp.String(), got, code)
				}
			}
		}
		// As a directory entry name, which may be any bytes but '/' and NUL
		// (names read from disk need not be UTF-8).
		name := strings.NewReplacer("/", "_", "\x00", "_").Replace(raw)
		if name == "" || name == "." || name == ".." {
			return
		}
		for _, p := range []*Policy{hidden, allow} {
			for _, dir := range []relPath{{}, {comps: []string{"sub", "dir"}}} {
				if p.visible(dir, name) && mustDeny(name) {
					t.Fatalf("entry %q in %q is visible (allowHidden %v)", name, dir.String(), p.AllowHidden())
				}
			}
		}
	})
}

// fuzzASCIILower folds only A-Z, independently of the Unicode rules the policy
// uses.
func fuzzASCIILower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
