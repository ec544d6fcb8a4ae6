package fs

import (
	"bytes"
	"context"
	"fmt"
	"github.com/serverfs/serverfs/internal/errs"
	"io"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
)

// tailPlain reads the tail of a plain file (seeking back from its end).
func tailPlain(t *testing.T, e *testEnv, path string, n int) (*TextWindow, error) {
	t.Helper()
	return e.fs.ReadTail(context.Background(), "wd", path, n, nil)
}

// tailStreamed reads the same tail through the streaming ring (the path a
// .gz or .zst log takes), with an identity decoder.
func tailStreamed(t *testing.T, e *testEnv, path string, n int) (*TextWindow, error) {
	t.Helper()
	return e.fs.ReadTail(context.Background(), "wd", path, n, func(r io.Reader) (io.ReadCloser, error) { return io.NopCloser(r), nil })
}

// wantTail is the tail computed the obvious way: split the file into lines
// (keeping their endings), take the last n, drop lines from the front while
// they pass maxBytes.
func wantTail(content string, n, maxBytes int) (start, end int, text string, tooLarge bool) {
	content = strings.TrimPrefix(content, "\xEF\xBB\xBF")
	var lines []string
	for rest := content; rest != ""; {
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			lines = append(lines, rest)
			break
		}
		lines = append(lines, rest[:i+1])
		rest = rest[i+1:]
	}
	if len(lines) == 0 {
		return 1, 0, "", false
	}
	first := max(0, len(lines)-n)
	size := 0
	for i := len(lines) - 1; i >= first; i-- {
		if size+len(lines[i]) > maxBytes {
			first = i + 1
			break
		}
		size += len(lines[i])
	}
	if first == len(lines) {
		return 0, 0, "", true
	}
	return first + 1, len(lines), strings.Join(lines[first:], ""), false
}

func TestReadTail(t *testing.T) {
	const maxBytes = 1024
	e := newEnv(t, ResolverOpenat2, fmt.Sprintf("SERVERFS_MAX_READ_BYTES=%d", maxBytes), "SERVERFS_MAX_READ_LINES=50")
	files := map[string]string{
		"empty.txt":     "",
		"one.txt":       "only line\n",
		"nofinal.txt":   "a\nb\nlast without newline",
		"crlf.txt":      "one\r\ntwo\r\nthree\r\n",
		"newlines.txt":  "\n\n\n",
		"single-nl.txt": "\n",
		"bom.txt":       "\xEF\xBB\xBFfirst\nsecond\n",
		"numbered.txt":  numbered(300),
		"fits.txt":      strings.Repeat("x", maxBytes-1) + "\n",
		"huge.txt":      "short\n" + strings.Repeat("y", maxBytes) + "\n",
		"hugelast.txt":  "short\n" + strings.Repeat("y", maxBytes+5),
		"hugemid.txt":   "a\n" + strings.Repeat("z", 3*maxBytes) + "\nb\nc\n",
		"bytecap.txt":   strings.Repeat(strings.Repeat("w", 99)+"\n", 30),
	}
	for name, c := range files {
		e.write(t, name, c)
	}
	for name, c := range files {
		for _, n := range []int{1, 2, 3, 7, 50} {
			ws, we, wt, tooLarge := wantTail(c, n, maxBytes)
			for mode, read := range map[string]func(*testing.T, *testEnv, string, int) (*TextWindow, error){"plain": tailPlain, "stream": tailStreamed} {
				w, err := read(t, e, name, n)
				if tooLarge {
					if errs.CodeOf(err) != errs.LineTooLarge {
						t.Errorf("%s %s tail %d: %v, want LINE_TOO_LARGE", mode, name, n, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s %s tail %d: %v", mode, name, n, err)
					continue
				}
				if w.StartLine != ws || w.EndLine != we || w.Content != wt || w.HasMore || w.NextStartLine != nil || w.BytesReturned != len(wt) {
					t.Errorf("%s %s tail %d: lines %d-%d %q has_more %v, want %d-%d %q", mode, name, n, w.StartLine, w.EndLine, w.Content, w.HasMore, ws, we, wt)
				}
				if w.TotalLines == nil || *w.TotalLines != we {
					t.Errorf("%s %s tail %d: total_lines %v, want %d", mode, name, n, w.TotalLines, we)
				}
			}
		}
	}
	// The byte cap trims the front: 30 lines of 100 bytes, 1024 allowed.
	if w, _ := tailPlain(t, e, "bytecap.txt", 50); w == nil || w.StartLine != 21 || w.EndLine != 30 {
		t.Errorf("bytecap: %+v", w)
	}
	// A forward read that reaches the end says total_lines; one that does
	// not, does not.
	if w := mustRead(t, e, "numbered.txt", 290, 20); w.TotalLines == nil || *w.TotalLines != 300 {
		t.Errorf("forward read to the end: total_lines %v", w.TotalLines)
	}
	if w := mustRead(t, e, "numbered.txt", 1, 20); w.TotalLines != nil {
		t.Errorf("forward read not at the end: total_lines %v", *w.TotalLines)
	}
	if w := mustRead(t, e, "empty.txt", 1, 20); w.TotalLines == nil || *w.TotalLines != 0 {
		t.Errorf("empty file: total_lines %v", w.TotalLines)
	}
	// Refusals: binary, UTF-16, invalid UTF-8 in the window, bad n.
	e.write(t, "nul.txt", "text\nmore\x00text\nend\n")
	e.write(t, "utf16.txt", "\xFF\xFEa\x00")
	e.write(t, "latin1.txt", "ok\ncaf\xE9\n")
	for name, code := range map[string]errs.Code{"nul.txt": errs.BinaryFile, "utf16.txt": errs.UnsupportedTextEncoding, "latin1.txt": errs.UnsupportedTextEncoding} {
		for mode, read := range map[string]func(*testing.T, *testEnv, string, int) (*TextWindow, error){"plain": tailPlain, "stream": tailStreamed} {
			if _, err := read(t, e, name, 5); errs.CodeOf(err) != code {
				t.Errorf("%s %s: %v, want %s", mode, name, err, code)
			}
		}
	}
	// A bad byte before the window is not in it.
	e.write(t, "latin1-head.txt", "caf\xE9\nok\n")
	if w, err := tailPlain(t, e, "latin1-head.txt", 1); err != nil || w.Content != "ok\n" || w.StartLine != 2 {
		t.Errorf("bad byte before the window: %+v %v", w, err)
	}
	if _, err := tailPlain(t, e, "one.txt", 0); errs.CodeOf(err) != errs.InvalidArgument {
		t.Errorf("tail 0: %v", err)
	}
	if _, err := tailPlain(t, e, "numbered.txt", 51); errs.CodeOf(err) != errs.InvalidArgument {
		t.Errorf("tail over max_lines: %v", err)
	}
	if _, err := tailPlain(t, e, "nofile.txt", 5); errs.CodeOf(err) != errs.PathNotFound {
		t.Errorf("missing: %v", err)
	}
}

// TestReadTailRandom compares both tail engines with wantTail on random
// files: line lengths around the byte cap and the read chunk, CRLF, no
// final newline.
func TestReadTailRandom(t *testing.T) {
	const maxBytes = 4096
	e := newEnv(t, ResolverOpenat2, fmt.Sprintf("SERVERFS_MAX_READ_BYTES=%d", maxBytes), "SERVERFS_MAX_READ_LINES=40")
	rng := rand.New(rand.NewSource(17))
	for i := 0; i < 60; i++ {
		var b strings.Builder
		for range rng.Intn(200) {
			l := rng.Intn(100)
			switch rng.Intn(10) {
			case 0:
				l = rng.Intn(3 * maxBytes)
			case 1:
				l = maxBytes - 1 - rng.Intn(3)
			}
			b.WriteString(strings.Repeat(string(rune('a'+rng.Intn(26))), l))
			if rng.Intn(4) == 0 {
				b.WriteString("\r")
			}
			b.WriteString("\n")
		}
		if rng.Intn(3) == 0 {
			b.WriteString("tail without newline")
		}
		name := fmt.Sprintf("r%d.txt", i)
		e.write(t, name, b.String())
		n := 1 + rng.Intn(40)
		ws, we, wt, tooLarge := wantTail(b.String(), n, maxBytes)
		for mode, read := range map[string]func(*testing.T, *testEnv, string, int) (*TextWindow, error){"plain": tailPlain, "stream": tailStreamed} {
			w, err := read(t, e, name, n)
			if tooLarge {
				if errs.CodeOf(err) != errs.LineTooLarge {
					t.Fatalf("%s %s tail %d: %v, want LINE_TOO_LARGE", mode, name, n, err)
				}
				continue
			}
			if err != nil || w.StartLine != ws || w.EndLine != we || w.Content != wt {
				t.Fatalf("%s %s tail %d: %+v %v, want %d-%d (%d bytes)", mode, name, n, w, err, ws, we, len(wt))
			}
		}
	}
}

// rchar is this process's read(2)/pread(2) byte count so far.
func rchar(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Fatalf("this test counts the bytes read through /proc/self/io: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no rchar in /proc/self/io")
	return 0
}

// TestReadTailHugeFileReadsItsEnd: the last 50 lines of a 2 GiB file
// (sparse: text at both ends, a hole between) read less than 1 MiB, counted
// by the kernel (rchar), and are numbered from the end because numbering
// them would mean reading 2 GiB. With a count budget that covers the
// prefix the same window is numbered from the start.
func TestReadTailHugeFileReadsItsEnd(t *testing.T) {
	e := newEnv(t, ResolverOpenat2)
	const size = 2 << 30
	head := numbered(2000) // more than the sniffed 8 KiB, no NUL
	var tail strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&tail, "end %d\n", i)
	}
	f, err := os.Create(e.path("big.log"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(head + "\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("\n"+tail.String()), size-int64(tail.Len())-1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before := rchar(t)
	w, err := tailPlain(t, e, "big.log", 50)
	read := rchar(t) - before
	if err != nil {
		t.Fatal(err)
	}
	if read >= 1<<20 {
		t.Errorf("tail of a 2 GiB file read %d bytes, want < 1 MiB", read)
	}
	t.Logf("tail 50 of a 2 GiB file: %d bytes read", read)
	lines := strings.Split(strings.TrimSuffix(w.Content, "\n"), "\n")
	if len(lines) != 50 || lines[0] != "end 11" || lines[49] != "end 60" {
		t.Fatalf("tail: %d lines %q ... %q", len(lines), lines[0], lines[len(lines)-1])
	}
	if w.StartLine != -50 || w.EndLine != -1 || w.TotalLines != nil || w.HasMore {
		t.Errorf("numbering of an uncounted tail: %d-%d total %v has_more %v, want -50..-1 and no total", w.StartLine, w.EndLine, w.TotalLines, w.HasMore)
	}

	// A file whose prefix fits the count budget is numbered from the start.
	small := newEnv(t, ResolverOpenat2, "SERVERFS_SEARCH_MAX_FILE_BYTES=100000")
	small.write(t, "a.log", numbered(20000)) // ~190 KB
	w, err = tailPlain(t, small, "a.log", 3)
	if err != nil || w.StartLine != -3 || w.Content != "line 19998\nline 19999\nline 20000\n" {
		t.Errorf("over the budget: %+v %v", w, err)
	}
	small.write(t, "b.log", numbered(1000))
	w, err = tailPlain(t, small, "b.log", 3)
	if err != nil || w.StartLine != 998 || w.EndLine != 1000 || w.TotalLines == nil || *w.TotalLines != 1000 {
		t.Errorf("within the budget: %+v %v", w, err)
	}
	// A NUL in the window of an unnumbered tail is still refused.
	nul := bytes.Repeat([]byte("x\n"), 60000)
	nul[len(nul)-3] = 0
	small.write(t, "nul.log", string(nul))
	if _, err := tailPlain(t, small, "nul.log", 3); errs.CodeOf(err) != errs.BinaryFile {
		t.Errorf("NUL in an unnumbered window: %v", err)
	}
}
