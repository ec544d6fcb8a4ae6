package fs

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"github.com/serverfs/serverfs/internal/errs"
	"io"
	"unicode/utf8"
)

// A plain-file tail reads back from the end in preads of tailFirstChunk
// bytes, doubling up to tailChunk: most tails are a few KiB (as tail -n
// reads them), a long one still takes few calls.
const (
	tailFirstChunk = 8 << 10
	tailChunk      = 64 << 10
)

// ReadTail returns the last n lines (1..Limits.MaxReadLines) of the text
// file raw, within the same byte cap as ReadText: when the last n lines
// together pass Limits.MaxReadBytes the window starts later (fewer lines),
// and a last line alone over the cap is LINE_TOO_LARGE. The window always
// reaches the end (HasMore false).
//
// A plain file is read backwards from its end with pread, never from its
// start: at most the cap plus one chunk, plus the first SniffBytes for the
// binary check. Its lines are numbered (StartLine, TotalLines) by counting
// the newlines before the window when those are at most
// Limits.SearchMaxFileBytes; a larger file's window is numbered from the
// end (-1 is the last line) and has no TotalLines.
//
// With decode (a .gz or .zst log) the decoded stream is read once from its
// start through a ring of at most about twice the byte cap: however long
// the stream, only the last lines that can still be in the window are
// held, and the lines are always numbered.
func (f *FS) ReadTail(ctx context.Context, alias, raw string, n int, decode Decoder) (*TextWindow, error) {
	return f.readTail(ctx, alias, raw, n, f.limits.MaxReadBytes, decode)
}

func (f *FS) readTail(ctx context.Context, alias, raw string, n, maxBytes int, decode Decoder) (*TextWindow, error) {
	if n < 1 || n > f.limits.MaxReadLines {
		return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("tail must be between 1 and %d", f.limits.MaxReadLines))
	}
	return f.readWith(alias, raw, decode, false, func(src io.Reader, file *File, size int64) (*TextWindow, error) {
		if decode != nil || size < 0 {
			return tailStream(ctx, src, n, maxBytes)
		}
		return tailFile(ctx, file, size, n, maxBytes, f.limits.SearchMaxFileBytes)
	})
}

// sniff applies the checks of a file's first bytes: UTF-16 and NUL bytes
// are refused; it returns the length of a UTF-8 byte order mark to skip.
func sniff(sample []byte) (int, error) {
	switch {
	case bytes.HasPrefix(sample, bomUTF16LE) || bytes.HasPrefix(sample, bomUTF16BE):
		return 0, errs.New(errs.UnsupportedTextEncoding, "is UTF-16 text; only UTF-8 is supported")
	case bytes.IndexByte(sample, 0) >= 0:
		return 0, errs.New(errs.BinaryFile, "is a binary file (it contains NUL bytes)")
	case bytes.HasPrefix(sample, bomUTF8):
		return len(bomUTF8), nil
	}
	return 0, nil
}

// tailFile is ReadTail of a plain file of the given size.
func tailFile(ctx context.Context, file *File, size int64, n, maxBytes int, countBudget int64) (*TextWindow, error) {
	sample := make([]byte, min(int64(SniffBytes), size))
	if _, err := file.ReadAt(sample, 0); err != nil && err != io.EOF {
		return nil, readErr(err)
	}
	bom, err := sniff(sample)
	if err != nil {
		return nil, err
	}
	if size <= int64(bom) {
		zero := 0
		return &TextWindow{StartLine: 1, EndLine: 0, TotalLines: &zero}, nil
	}
	// A window holds at most maxBytes, so the newline before its first
	// line is at or after lo: nothing before lo is ever read.
	lo := max(0, size-int64(maxBytes)-1)
	var chunks [][]byte // read so far, in file order, from chunkLo to size
	chunkLo := size
	start, k := size, 0 // the window [start, size) holds k lines
	step := int64(tailFirstChunk)
	for chunkLo > lo && k < n {
		if ctx.Err() != nil {
			return nil, canceled(ctx)
		}
		clo := max(lo, chunkLo-step)
		step = min(2*step, tailChunk)
		c := make([]byte, chunkLo-clo)
		if _, err := file.ReadAt(c, clo); err != nil && err != io.EOF {
			return nil, readErr(err)
		}
		chunks = append([][]byte{c}, chunks...)
		// A newline at p < size-1 ends a line and starts the next one at
		// p+1; the file's final newline starts nothing.
		end := len(c)
		if chunkLo == size {
			end--
		}
		for end > 0 && k < n {
			i := bytes.LastIndexByte(c[:end], '\n')
			if i < 0 {
				break
			}
			start, k = clo+int64(i)+1, k+1
			end = i
		}
		chunkLo = clo
	}
	if k < n && chunkLo == 0 && start > 0 && size <= int64(maxBytes) {
		start, k = 0, k+1 // the file's first line
	}
	if k == 0 {
		return nil, errs.New(errs.LineTooLarge, fmt.Sprintf("its last line alone is larger than the %d-byte read limit (SERVERFS_MAX_READ_BYTES); search_text can still find text in it", maxBytes))
	}
	out := chunks[0]
	if len(chunks) > 1 {
		out = bytes.Join(chunks, nil)
	}
	out = out[start-chunkLo:]
	if start == 0 {
		out = out[bom:]
	}

	// Number the window: count the newlines before it when that is cheap
	// enough, else number it from the end.
	startLine := 1
	numbered := true
	switch {
	case start == 0:
	case start <= countBudget:
		nl, err := countNewlines(ctx, file, start)
		if err != nil {
			return nil, err
		}
		startLine = nl + 1
	default:
		numbered, startLine = false, -k
	}
	if err := checkWindow(out, startLine, numbered); err != nil {
		return nil, err
	}
	win := &TextWindow{StartLine: startLine, EndLine: startLine + k - 1, Content: string(out), BytesReturned: len(out), CutByBytes: k < n && start > 0}
	if numbered {
		total := win.EndLine
		win.TotalLines = &total
	}
	return win, nil
}

// countNewlines counts the newlines in the first n bytes of file.
func countNewlines(ctx context.Context, file *File, n int64) (int, error) {
	buf := make([]byte, min(n, 1<<20))
	count := 0
	for off := int64(0); off < n; {
		if ctx.Err() != nil {
			return 0, canceled(ctx)
		}
		b := buf[:min(int64(len(buf)), n-off)]
		m, err := file.ReadAt(b, off)
		count += bytes.Count(b[:m], []byte{'\n'})
		off += int64(m)
		if err == io.EOF || (err == nil && m == 0) {
			break
		}
		if err != nil {
			return 0, readErr(err)
		}
	}
	return count, nil
}

// checkWindow refuses a window holding a NUL byte or bytes that are not
// UTF-8, naming the line (when numbered).
func checkWindow(out []byte, startLine int, numbered bool) error {
	where := func(i int) string {
		if !numbered {
			return "in its last lines"
		}
		return fmt.Sprintf("line %d", startLine+bytes.Count(out[:i], []byte{'\n'}))
	}
	if i := bytes.IndexByte(out, 0); i >= 0 {
		return errs.New(errs.BinaryFile, fmt.Sprintf("is a binary file (NUL byte %s)", onLine(where(i))))
	}
	if !utf8.Valid(out) {
		i := firstInvalidUTF8(out)
		return errs.New(errs.UnsupportedTextEncoding, fmt.Sprintf("is not valid UTF-8 (%s); only UTF-8 text is supported", where(i)))
	}
	return nil
}

func onLine(where string) string {
	if where == "in its last lines" {
		return where
	}
	return "on " + where
}

// tailStream is ReadTail of a stream read once from its start: a ring
// keeps the last lines that fit in maxBytes (at most n of them) and the
// line being read; a line over maxBytes is dropped as it streams (it can
// never be in the window) and empties the ring.
func tailStream(ctx context.Context, r io.Reader, n, maxBytes int) (*TextWindow, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	sample, err := br.Peek(SniffBytes)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, readErr(err)
	}
	bom, err := sniff(sample)
	if err != nil {
		return nil, err
	}
	br.Discard(bom)

	var buf []byte     // kept lines, then the line being read
	var starts []int   // start in buf of each kept line, oldest first
	head := 0          // starts[head:] are the kept lines
	cur := 0           // start in buf of the line being read
	lines := 0         // complete (or final) lines read
	oversized := false // the line being read passed maxBytes
	lastOversized := 0 // the last line that passed maxBytes
	endLine := func() {
		lines++
		if oversized {
			buf, starts, head, cur, oversized = buf[:0], starts[:0], 0, 0, false
			lastOversized = lines
			return
		}
		starts = append(starts, cur)
		cur = len(buf)
		for len(starts)-head > n || len(buf)-starts[head] > maxBytes {
			head++
		}
		if head > n {
			starts = append(starts[:0], starts[head:]...)
			head = 0
		}
	}
	for steps := 0; ; steps++ {
		if steps%64 == 0 && ctx.Err() != nil {
			return nil, canceled(ctx)
		}
		sl, err := br.ReadSlice('\n')
		if len(sl) > 0 && !oversized {
			if len(buf)-cur+len(sl) > maxBytes {
				oversized, buf = true, buf[:cur]
			} else {
				if len(buf)+len(sl) > cap(buf) {
					buf = compact(buf, starts[head:], &cur, len(sl))
				}
				buf = append(buf, sl...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF:
			if len(sl) > 0 || len(buf) > cur || oversized {
				endLine()
			}
		case err != nil:
			return nil, readErr(err)
		default:
			endLine()
			continue
		}
		break
	}
	k := len(starts) - head
	if k == 0 {
		if lines == 0 {
			zero := 0
			return &TextWindow{StartLine: 1, EndLine: 0, TotalLines: &zero}, nil
		}
		return nil, errs.New(errs.LineTooLarge, fmt.Sprintf("line %d (its last) alone is larger than the %d-byte read limit (SERVERFS_MAX_READ_BYTES); search_text can still find text in it", lastOversized, maxBytes))
	}
	out := buf[starts[head]:]
	startLine := lines - k + 1
	if err := checkWindow(out, startLine, true); err != nil {
		return nil, err
	}
	total := lines
	return &TextWindow{StartLine: startLine, EndLine: lines, Content: string(out), BytesReturned: len(out), TotalLines: &total, CutByBytes: k < n && startLine > 1}, nil
}

// compact moves the kept lines (from starts[0], or the line being read
// when none is kept) and the line being read to the front of buf, shifting
// starts and *cur, and makes room for need more bytes with room to spare,
// so that compactions cost O(1) per byte appended.
func compact(buf []byte, starts []int, cur *int, need int) []byte {
	from := *cur
	if len(starts) > 0 {
		from = starts[0]
	}
	live := len(buf) - from
	if want := 2 * (live + need); cap(buf) < want {
		nb := make([]byte, live, want)
		copy(nb, buf[from:])
		buf = nb
	} else {
		buf = buf[:copy(buf, buf[from:])]
	}
	for i := range starts {
		starts[i] -= from
	}
	*cur -= from
	return buf
}
