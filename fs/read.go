package fs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/serverfs/serverfs/internal/errs"
	"io"
	"unicode/utf8"
)

// DefaultReadLines is the number of lines a read returns when the caller
// does not say (capped by Limits.MaxReadLines).
const DefaultReadLines = 200

// SniffBytes is how much of a file's start is checked for NUL bytes to
// decide it is binary.
const SniffBytes = 8 << 10

var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
)

// TextWindow is a window of lines of a text file. Content keeps the file's
// own line endings ("\n" or "\r\n"); a UTF-8 byte order mark is stripped.
// When the file has no more lines after the window, HasMore is false and
// NextStartLine is nil. An empty window (EndLine == StartLine-1) happens only
// for an empty file. A tail window of a plain file too large to number
// (see ReadTail) has negative line numbers counted from the end: -1 is the
// last line.
type TextWindow struct {
	Workdir       string `json:"workdir"`
	Path          string `json:"path"`
	StartLine     int    `json:"start_line"`
	EndLine       int    `json:"end_line"`
	Content       string `json:"content"`
	BytesReturned int    `json:"bytes_returned"`
	HasMore       bool   `json:"has_more"`
	NextStartLine *int   `json:"next_start_line,omitempty"`
	// TotalLines is the number of lines of the file, in every window that
	// reached its end and knows its line numbers.
	TotalLines *int `json:"total_lines,omitempty"`
	// Revision is "sha256:<hex>" of the whole file (not the window), for
	// files up to SERVERFS_MAX_WRITE_BYTES read as they are (not
	// decompressed) in rw workdirs: the expected revision of a write that
	// changes it. Read-only workdirs have none (no write could use it).
	Revision string `json:"revision,omitempty"`
	// Document, for a document read as text (a PDF, an office file), says
	// so and which pages, sheets or slides the window shows: "pdf text,
	// page 3 to page 4 of 12".
	Document string `json:"document,omitempty"`
	// CutByBytes: the byte cap, not the line count, ended the window
	// early (for callers sharing one cap between files; never shown).
	CutByBytes bool `json:"-"`
}

// ReadText reads up to maxLines lines (0: the default) starting at the
// 1-based startLine (0: 1) of the text file raw. It streams from the
// descriptor and holds at most Limits.MaxReadBytes of content: the window
// ends early, with HasMore, when the next line would pass that cap, and a
// single line larger than the cap is LINE_TOO_LARGE. A NUL in the first
// SniffBytes or in the window is BINARY_FILE; bytes that are not UTF-8 are
// UNSUPPORTED_TEXT_ENCODING (nothing is decoded lossily). A startLine past
// the last line is LINE_OUT_OF_RANGE, naming how many lines the file has.
func (f *FS) ReadText(ctx context.Context, alias, raw string, startLine, maxLines int) (*TextWindow, error) {
	return f.ReadTextDecoded(ctx, alias, raw, startLine, maxLines, nil)
}

// Decoder turns a file's bytes into the text to page through (e.g. a
// decompressor for rotated logs). Its errors are reported as BINARY_FILE:
// the bytes are not text ServerFS can read.
type Decoder func(r io.Reader) (io.ReadCloser, error)

// ReadTextDecoded is ReadText with the file's bytes passed through decode
// (nil: read as they are). Arguments, policy and limits are exactly
// ReadText's.
func (f *FS) ReadTextDecoded(ctx context.Context, alias, raw string, startLine, maxLines int, decode Decoder) (*TextWindow, error) {
	return f.ReadWindow(ctx, alias, raw, ReadOptions{StartLine: startLine, MaxLines: maxLines, Decode: decode})
}

// ReadOptions select the window of a ReadWindow.
type ReadOptions struct {
	StartLine int // 1-based; 0: 1
	MaxLines  int // 0: the default
	// Tail, when > 0, asks for the last Tail lines instead (see ReadTail);
	// StartLine and MaxLines must then be 0.
	Tail int
	// MaxBytes lowers the byte cap below Limits.MaxReadBytes (0: the
	// limit): what is left of a multi-file read's total.
	MaxBytes int
	Decode   Decoder // nil: the bytes as they are
}

// ReadWindow is ReadText and ReadTail with every option.
func (f *FS) ReadWindow(ctx context.Context, alias, raw string, o ReadOptions) (*TextWindow, error) {
	maxBytes := f.limits.MaxReadBytes
	if o.MaxBytes < 0 || o.MaxBytes > maxBytes {
		return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("max_bytes must be between 1 and %d", maxBytes))
	}
	if o.MaxBytes > 0 {
		maxBytes = o.MaxBytes
	}
	if o.Tail != 0 {
		if o.StartLine != 0 || o.MaxLines != 0 {
			return nil, errs.New(errs.InvalidArgument, "tail reads the last lines: it cannot be combined with start_line or max_lines")
		}
		return f.readTail(ctx, alias, raw, o.Tail, maxBytes, o.Decode)
	}
	startLine, maxLines := o.StartLine, o.MaxLines
	if startLine == 0 {
		startLine = 1
	}
	if maxLines == 0 {
		maxLines = min(DefaultReadLines, f.limits.MaxReadLines)
	}
	if startLine < 1 || maxLines < 1 || maxLines > f.limits.MaxReadLines {
		return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("start_line must be >= 1 and max_lines between 1 and %d", f.limits.MaxReadLines))
	}
	return f.readWith(alias, raw, o.Decode, true, func(src io.Reader, _ *File, hint int64) (*TextWindow, error) {
		return readLines(ctx, src, startLine, maxLines, maxBytes, hint)
	})
}

// readWith opens the text file raw, passes its bytes (through decode when
// set) to read, and fills in the window's workdir, path and revision. hint
// is the file's size when read undecoded, -1 otherwise; file is the open
// file itself (for readers that seek). seq says read consumes src in
// order from its start and reads file no other way: the revision is then
// hashed from the bytes it reads and the rest of the file after them, so
// the file is read once.
func (f *FS) readWith(alias, raw string, decode Decoder, seq bool, read func(src io.Reader, file *File, hint int64) (*TextWindow, error)) (*TextWindow, error) {
	w, err := f.Workdir(alias)
	if err != nil {
		return nil, err
	}
	if kind := DocumentKind(raw); kind != "" && decode == nil {
		return f.readDocumentWindow(w, raw, kind, read)
	}
	if a, ok, _ := w.archiveAt(raw, false); ok {
		defer a.Close()
		return f.readMember(w, a, decode, read)
	}
	file, info, err := w.OpenFile(raw)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	if decode == nil && ImageKind(raw) != "" {
		return nil, errs.At(errs.BinaryFile, w.alias, info.Path, "is an image, not text: read_text_file without start_line or tail shows it")
	}
	var src io.Reader = file
	hint := int64(-1)
	if info.Size != nil {
		hint = *info.Size
	}
	maxRev := int64(f.limits.MaxWriteBytes)
	// A revision only where a write can use it: rw workdirs, files read
	// as they are, up to the write limit.
	revision := decode == nil && hint >= 0 && hint <= maxRev && w.mode == ModeReadWrite
	var tee *hashingReader
	if revision && seq {
		tee = newHashingReader(file, maxRev)
		defer tee.release()
		src = tee
	}
	if decode != nil {
		hint = -1
		dec, err := decode(file)
		if err != nil {
			return nil, errs.At(errs.BinaryFile, w.alias, info.Path, "cannot be decoded as text (corrupt compressed data?)").Wrap(err)
		}
		defer dec.Close()
		src = dec
	}
	win, err := read(src, file, hint)
	if err != nil {
		var e *errs.Error
		if errors.As(err, &e) {
			e.Workdir, e.Path = w.alias, info.Path
			if decode != nil && e.Code == errs.Internal {
				e.Code, e.Msg = errs.BinaryFile, "cannot be decoded as text (corrupt compressed data?)"
			}
		}
		return nil, err
	}
	win.Workdir, win.Path = w.alias, info.Path
	if tee != nil {
		if win.Revision, err = tee.revision(); err != nil {
			return nil, errs.At(errs.Internal, w.alias, info.Path, "could not be read").Wrap(err)
		}
	} else if revision {
		// Hashed from the descriptor the window was read from, so the
		// revision is of this file even if the path was replaced since.
		if win.Revision, err = fileRevision(file, f.limits.MaxWriteBytes); err != nil {
			return nil, errs.At(errs.Internal, w.alias, info.Path, "could not be read").Wrap(err)
		}
	}
	return win, nil
}

// readLines is the line pager behind ReadText, on any stream positioned
// at the start of the text (a file, or a decompressing reader), with the
// stream's size when known (sizeHint >= 0): a small file gets buffers its
// size, not 128 KiB per read. The returned window and errors have Workdir
// and Path unset.
func readLines(ctx context.Context, r io.Reader, startLine, maxLines, maxBytes int, sizeHint int64) (*TextWindow, error) {
	bufSize, outCap := 64<<10, min(maxBytes, 64<<10)
	if sizeHint >= 0 && sizeHint < int64(bufSize) {
		// One byte more than the file, so the first Peek sees EOF and
		// the binary sniff covers the whole file.
		bufSize = max(int(sizeHint)+1, 16)
		outCap = min(outCap, int(sizeHint))
	}
	br := bufio.NewReaderSize(r, bufSize)
	sample, err := br.Peek(SniffBytes)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, readErr(err)
	}
	switch {
	case bytes.HasPrefix(sample, bomUTF16LE) || bytes.HasPrefix(sample, bomUTF16BE):
		return nil, errs.New(errs.UnsupportedTextEncoding, "is UTF-16 text; only UTF-8 is supported")
	case bytes.IndexByte(sample, 0) >= 0:
		return nil, errs.New(errs.BinaryFile, "is a binary file (it contains NUL bytes)")
	case bytes.HasPrefix(sample, bomUTF8):
		br.Discard(len(bomUTF8))
	}

	// Skip to startLine, counting lines without holding them.
	line, partial := 1, false
	for steps := 0; line < startLine; steps++ {
		if steps%64 == 0 && ctx.Err() != nil {
			return nil, canceled(ctx)
		}
		sl, err := br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			partial = true
			continue
		case err == io.EOF:
			total := line - 1
			if len(sl) > 0 || partial {
				total = line
			}
			return nil, outOfRange(startLine, total)
		case err != nil:
			return nil, readErr(err)
		}
		line++
		partial = false
	}

	out := make([]byte, 0, outCap)
	n, eof, full := 0, false, false
	for steps := 0; n < maxLines && !eof && !full; {
		lineStart := len(out)
		for {
			if steps++; steps%64 == 0 && ctx.Err() != nil {
				return nil, canceled(ctx)
			}
			sl, err := br.ReadSlice('\n')
			if len(out)+len(sl) > maxBytes {
				if n == 0 {
					return nil, errs.New(errs.LineTooLarge, fmt.Sprintf("line %d alone is larger than the %d-byte read limit (SERVERFS_MAX_READ_BYTES); search_text can still find text in it", startLine, maxBytes))
				}
				out, full = out[:lineStart], true
				break
			}
			out = append(out, sl...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err == io.EOF {
				eof = true
				if len(out) > lineStart {
					n++
				}
				break
			}
			if err != nil {
				return nil, readErr(err)
			}
			n++
			break
		}
	}
	if n == 0 && startLine > 1 {
		// Only possible when startLine is exactly one past a final "\n".
		return nil, outOfRange(startLine, startLine-1)
	}
	if i := bytes.IndexByte(out, 0); i >= 0 {
		return nil, errs.New(errs.BinaryFile, fmt.Sprintf("is a binary file (NUL byte on line %d)", startLine+bytes.Count(out[:i], []byte{'\n'})))
	}
	if !utf8.Valid(out) {
		i := firstInvalidUTF8(out)
		return nil, errs.New(errs.UnsupportedTextEncoding, fmt.Sprintf("is not valid UTF-8 (line %d); only UTF-8 text is supported", startLine+bytes.Count(out[:i], []byte{'\n'})))
	}
	hasMore := full
	if !eof && !full {
		_, err := br.Peek(1)
		switch {
		case err == nil:
			hasMore = true
		case err != io.EOF:
			return nil, readErr(err)
		}
	}
	win := &TextWindow{StartLine: startLine, EndLine: startLine + n - 1, Content: string(out), BytesReturned: len(out), HasMore: hasMore, CutByBytes: full}
	if hasMore {
		next := startLine + n
		win.NextStartLine = &next
	} else {
		total := win.EndLine
		win.TotalLines = &total
	}
	return win, nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

func outOfRange(start, total int) error {
	return errs.New(errs.LineOutOfRange, fmt.Sprintf("has %d lines; start_line %d is past the end", total, start))
}

func canceled(ctx context.Context) error {
	return errs.New(errs.Canceled, "the request was cancelled or timed out").Wrap(ctx.Err())
}

func readErr(err error) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return e // a decoder's coded refusal, e.g. a zstd window over the limit
	}
	return errs.New(errs.Internal, "could not be read").Wrap(err)
}
