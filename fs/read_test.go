package fs

import (
	"context"
	"fmt"
	"github.com/serverfs/serverfs/internal/errs"
	"runtime"
	"strings"
	"testing"
)

func readText(t *testing.T, e *testEnv, path string, start, max int) (*TextWindow, error) {
	t.Helper()
	return e.fs.ReadText(context.Background(), "wd", path, start, max)
}

func mustRead(t *testing.T, e *testEnv, path string, start, max int) *TextWindow {
	t.Helper()
	w, err := readText(t, e, path, start, max)
	if err != nil {
		t.Fatalf("read %s@%d+%d: %v", path, start, max, err)
	}
	if w.BytesReturned != len(w.Content) {
		t.Fatalf("bytes_returned %d != len(content) %d", w.BytesReturned, len(w.Content))
	}
	if w.HasMore != (w.NextStartLine != nil) || (w.HasMore && *w.NextStartLine != w.EndLine+1) {
		t.Fatalf("has_more/next_start_line inconsistent: %+v", w)
	}
	return w
}

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestReadText(t *testing.T) {
	e := newEnv(t, ResolverOpenat2, "SERVERFS_MAX_READ_BYTES=1024", "SERVERFS_MAX_READ_LINES=50")
	e.write(t, "ascii.txt", "hello\nworld\n")
	e.write(t, "zh.txt", "你好，世界\n第二行\n")
	e.write(t, "bom.txt", "\xEF\xBB\xBFfirst\nsecond\n")
	e.write(t, "empty.txt", "")
	e.write(t, "bom-only.txt", "\xEF\xBB\xBF")
	e.write(t, "crlf.txt", "a\r\nb\r\nc")
	e.write(t, "nums.txt", numbered(120))
	e.write(t, "long-line.txt", "short\n"+strings.Repeat("x", 2000)+"\nafter\n")
	e.write(t, "binary.bin", "abc\x00def\n")
	e.write(t, "late-nul.txt", strings.Repeat("a\n", 5000)+"b\x00c\n")
	e.write(t, "latin1.txt", "caf\xe9\n")
	e.write(t, "utf16.txt", "\xFF\xFEh\x00i\x00")
	e.write(t, "dir/x.txt", "x")

	t.Run("ascii", func(t *testing.T) {
		w := mustRead(t, e, "ascii.txt", 0, 0)
		if w.Content != "hello\nworld\n" || w.StartLine != 1 || w.EndLine != 2 || w.HasMore {
			t.Fatalf("%+v", w)
		}
	})
	t.Run("chinese", func(t *testing.T) {
		if w := mustRead(t, e, "zh.txt", 2, 1); w.Content != "第二行\n" || w.EndLine != 2 || w.HasMore {
			t.Fatalf("%+v", w)
		}
	})
	t.Run("bom stripped", func(t *testing.T) {
		if w := mustRead(t, e, "bom.txt", 1, 1); w.Content != "first\n" || !w.HasMore {
			t.Fatalf("%+v", w)
		}
		if w := mustRead(t, e, "bom.txt", 2, 1); w.Content != "second\n" || w.HasMore {
			t.Fatalf("%+v", w)
		}
	})
	t.Run("empty", func(t *testing.T) {
		for _, p := range []string{"empty.txt", "bom-only.txt"} {
			w := mustRead(t, e, p, 1, 10)
			if w.Content != "" || w.EndLine != 0 || w.HasMore || w.NextStartLine != nil {
				t.Fatalf("%s: %+v", p, w)
			}
		}
	})
	t.Run("line endings kept", func(t *testing.T) {
		if w := mustRead(t, e, "crlf.txt", 0, 0); w.Content != "a\r\nb\r\nc" || w.EndLine != 3 {
			t.Fatalf("%+v", w)
		}
	})
	t.Run("pagination to EOF", func(t *testing.T) {
		var got strings.Builder
		start, pages := 1, 0
		for {
			w := mustRead(t, e, "nums.txt", start, 50)
			got.WriteString(w.Content)
			pages++
			if !w.HasMore {
				if w.EndLine != 120 {
					t.Fatalf("last page ends at %d", w.EndLine)
				}
				break
			}
			start = *w.NextStartLine
		}
		if got.String() != numbered(120) {
			t.Fatal("pages do not reassemble the file")
		}
		if pages < 3 {
			t.Fatalf("pages=%d", pages)
		}
	})
	t.Run("max lines", func(t *testing.T) {
		if w := mustRead(t, e, "nums.txt", 10, 5); w.EndLine != 14 || !w.HasMore || *w.NextStartLine != 15 || !strings.HasPrefix(w.Content, "line 10\n") {
			t.Fatalf("%+v", w)
		}
	})
	t.Run("max bytes stops before a line", func(t *testing.T) {
		e2 := newEnv(t, ResolverOpenat2, "SERVERFS_MAX_READ_BYTES=1024")
		e2.write(t, "n.txt", numbered(500))
		w := mustRead(t, e2, "n.txt", 1, 200)
		if w.BytesReturned > 1024 || !w.HasMore || !strings.HasSuffix(w.Content, "\n") {
			t.Fatalf("%d bytes, more=%v", w.BytesReturned, w.HasMore)
		}
		if want := numbered(w.EndLine); w.Content != want {
			t.Fatal("byte-capped window is not whole lines")
		}
	})
	t.Run("line too large", func(t *testing.T) {
		w := mustRead(t, e, "long-line.txt", 1, 10)
		if w.Content != "short\n" || !w.HasMore || *w.NextStartLine != 2 {
			t.Fatalf("window before the long line: %+v", w)
		}
		_, err := readText(t, e, "long-line.txt", 2, 10)
		wantCode(t, err, errs.LineTooLarge)
		if w := mustRead(t, e, "long-line.txt", 3, 10); w.Content != "after\n" {
			t.Fatalf("%+v", w)
		}
	})
	t.Run("start past end", func(t *testing.T) {
		_, err := readText(t, e, "ascii.txt", 3, 1)
		wantCode(t, err, errs.LineOutOfRange)
		if !strings.Contains(err.Error(), "has 2 lines") || !strings.HasPrefix(err.Error(), "LINE_OUT_OF_RANGE: wd:/ascii.txt ") {
			t.Fatalf("%v", err)
		}
		_, err = readText(t, e, "crlf.txt", 4, 1)
		wantCode(t, err, errs.LineOutOfRange)
		_, err = readText(t, e, "empty.txt", 2, 1)
		wantCode(t, err, errs.LineOutOfRange)
	})
	t.Run("binary", func(t *testing.T) {
		_, err := readText(t, e, "binary.bin", 0, 0)
		wantCode(t, err, errs.BinaryFile)
		if w := mustRead(t, e, "late-nul.txt", 1, 10); w.Content != strings.Repeat("a\n", 10) {
			t.Fatal("window before a late NUL must read")
		}
		_, err = readText(t, e, "late-nul.txt", 4990, 50)
		wantCode(t, err, errs.BinaryFile)
	})
	t.Run("encoding", func(t *testing.T) {
		_, err := readText(t, e, "latin1.txt", 0, 0)
		wantCode(t, err, errs.UnsupportedTextEncoding)
		_, err = readText(t, e, "utf16.txt", 0, 0)
		wantCode(t, err, errs.UnsupportedTextEncoding)
	})
	t.Run("missing and directory", func(t *testing.T) {
		_, err := readText(t, e, "nope.txt", 0, 0)
		wantCode(t, err, errs.PathNotFound)
		_, err = readText(t, e, "dir", 0, 0)
		wantCode(t, err, errs.NotAFile)
		_, err = readText(t, e, "", 0, 0)
		wantCode(t, err, errs.NotAFile)
	})
	t.Run("arguments", func(t *testing.T) {
		for _, a := range [][2]int{{-1, 1}, {1, -1}, {1, 51}} {
			_, err := readText(t, e, "ascii.txt", a[0], a[1])
			wantCode(t, err, errs.InvalidArgument)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		e.write(t, "big.txt", numbered(200000))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := e.fs.ReadText(ctx, "wd", "big.txt", 150000, 1)
		wantCode(t, err, errs.Canceled)
	})
}

// TestReadHugeSingleLineIsBounded: skipping past, or refusing, a very long
// line never holds it: the pager's memory is its buffer plus the byte cap.
func TestReadHugeSingleLineIsBounded(t *testing.T) {
	e := newEnv(t, ResolverOpenat2)
	e.write(t, "one-line.txt", strings.Repeat("y", 8<<20)+"\nnext\n")
	_, err := readText(t, e, "one-line.txt", 1, 1)
	wantCode(t, err, errs.LineTooLarge)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	w, err := readText(t, e, "one-line.txt", 2, 1)
	runtime.ReadMemStats(&after)
	if err != nil || w.Content != "next\n" {
		t.Fatalf("%+v %v", w, err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("skipping an 8 MiB line allocated %d bytes", n)
	}
}
