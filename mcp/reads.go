package mcp

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/serverfs/serverfs/search/symbols"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/decompress"
	"github.com/serverfs/serverfs/internal/errs"
)

type readTextFileIn struct {
	Workdir   string `json:"workdir"`
	Path      string `json:"path"`
	StartLine int    `json:"start_line,omitempty"`
	MaxLines  int    `json:"max_lines,omitempty"`
	Tail      int    `json:"tail,omitempty" jsonschema:"last lines instead (not with start_line)"`
	Symbol    string `json:"symbol,omitempty" jsonschema:"a definition's name (Type.Method too): read whole; path may be a directory; * outlines the file"`
}

type readTextFileOut struct {
	sfs.TextWindow
	Compressed bool `json:"compressed,omitempty"`
	// CutAtCap: decompression stopped at SERVERFS_SEARCH_MAX_FILE_BYTES,
	// so the window's end is the cap's, not the file's.
	CutAtCap bool `json:"cut_at_cap,omitempty"`
	// Definition is what a symbol read found ("method Dialer.Dial");
	// Others the other definitions of that name (path:line).
	Definition string   `json:"definition,omitempty"`
	Others     []string `json:"others,omitempty"`
	// Outline is a file's definitions (symbol "*"), in place of a window.
	Outline []symbols.Symbol `json:"outline,omitempty"`
	// Image describes an image file shown to the model as image content,
	// in place of a window; its bytes are the image content's only.
	Image *imageOut `json:"image,omitempty"`
	// kind is the compression (decompress.Kind) and tail the tail
	// asked for: what the text header says of the window.
	kind string
	tail int
}

// readTextFileTool is read_text_file; only rw workdirs (s.write) have a
// revision (no write can use it on a read-only workdir, and it costs a
// pass over the file).
func readTextFileTool(lim sfs.Limits, s surface, maxRead int) tool {
	revision := ""
	if s.write {
		revision = fmt.Sprintf(" In rw workdirs `revision R` (files up to %s): R is the expected_revision of a change.", sizeText(lim.MaxWriteBytes))
	}
	return tool{
		def: &sdk.Tool{
			Name: "read_text_file",
			Description: fmt.Sprintf("Read a UTF-8 text file (.gz, .zst; PDF, office files as text; images shown): a header line, then its lines exactly as in the file. "+
				"Header `==> wd:path lines 1-40 next start_line 41 <==`: call again with start_line 41 for more; `of N` once the end is read.%s "+
				"At most %s (`cut at byte cap`: a compressed file past %s).", revision, sizeText(lim.MaxReadBytes), sizeText(lim.SearchMaxFileBytes)),
			Annotations: readOnly("Read text file"),
			InputSchema: inputSchema[readTextFileIn](map[string]bound{"start_line": {1, 1 << 30, 1}, "max_lines": {1, lim.MaxReadLines, maxRead}, "tail": {0, lim.MaxReadLines, 0}}),
		},
		// A plain read is bounded by SERVERFS_MAX_READ_BYTES; a compressed
		// one runs a decompressor.
		cost:     heavyIf(func(_ *Deps, in readTextFileIn) bool { return compressedPath(in.Path) }),
		register: register(readTextFile),
	}
}

func readTextFile(ctx context.Context, d *Deps, in readTextFileIn) (*readTextFileOut, callInfo, error) {
	if in.Symbol != "" {
		return readSymbol(ctx, d, in)
	}
	info := callInfo{workdir: in.Workdir, path: in.Path}
	if sfs.ImageKind(in.Path) != "" && in.Tail == 0 && in.StartLine <= 1 {
		return readImage(ctx, d, in, info)
	}
	o := sfs.ReadOptions{StartLine: in.StartLine, MaxLines: in.MaxLines}
	if in.Tail > 0 {
		// start_line and max_lines hold their defaults unless sent.
		if in.StartLine != 1 {
			return nil, info, argErr("tail reads the last lines: it cannot be combined with start_line")
		}
		o = sfs.ReadOptions{Tail: in.Tail}
	}
	w, err := readText(ctx, d, in.Workdir, in.Path, o)
	if err != nil {
		return nil, info, err
	}
	info.bytes = w.BytesReturned
	return w, info, nil
}

// readText is read_text_file's, read_text_files' and the resource
// template's reader: plain files through fs.ReadWindow, .gz/.zst through a
// decompressor capped at SERVERFS_SEARCH_MAX_FILE_BYTES of output and the
// same line pager (o.Decode is set here).
func readText(ctx context.Context, d *Deps, alias, path string, o sfs.ReadOptions) (*readTextFileOut, error) {
	kind := decompress.Kind(path[strings.LastIndexByte(path, '/')+1:])
	var capped *decompress.CapReader
	if kind != "" {
		capBytes := d.FS.Limits().SearchMaxFileBytes
		o.Decode = func(r io.Reader) (io.ReadCloser, error) {
			dec, err := decompress.NewReader(ctx, kind, r)
			if err != nil {
				return nil, err
			}
			capped = decompress.Cap(dec, capBytes)
			return struct {
				io.Reader
				io.Closer
			}{capped, dec}, nil
		}
	}
	w, err := d.FS.ReadWindow(ctx, alias, path, o)
	if err != nil {
		return nil, err
	}
	out := &readTextFileOut{TextWindow: *w, Compressed: kind != "", kind: kind, tail: o.Tail}
	if capped != nil && capped.Capped() {
		// The stream ended at the cap: the file's end, and so its line
		// count, are not known.
		out.CutAtCap, out.TotalLines = true, nil
	}
	return out, nil
}

// maxReadPaths bounds the paths of one read_text_files call.
const maxReadPaths = 20

// read_text_files is a tool of its own rather than paths on
// read_text_file: its answer is a list of per-file results, each a window
// or an error, under one total byte cap, while read_text_file's answer is
// one window and its errors are the call's. One tool with both shapes
// would make every read_text_file caller handle the list form, and a
// per-file error could not be the call's error.

type readTextFilesIn struct {
	Workdir  string   `json:"workdir"`
	Paths    []string `json:"paths"`
	MaxLines int      `json:"max_lines,omitempty"`
	Tail     int      `json:"tail,omitempty"`
}

// fileWindow is one file's part of a read_text_files answer: its window,
// or its error ("CODE: message", as a tool error reads).
type fileWindow struct {
	Path          string `json:"path"`
	Error         string `json:"error,omitempty"`
	StartLine     int    `json:"start_line,omitempty"`
	EndLine       int    `json:"end_line,omitempty"`
	Content       string `json:"content,omitempty"`
	HasMore       bool   `json:"has_more,omitempty"`
	NextStartLine *int   `json:"next_start_line,omitempty"`
	TotalLines    *int   `json:"total_lines,omitempty"`
	Revision      string `json:"revision,omitempty"`
	Compressed    bool   `json:"compressed,omitempty"`
	CutAtCap      bool   `json:"cut_at_cap,omitempty"`
	Document      string `json:"document,omitempty"`
	kind          string // as in readTextFileOut
	tail          int
}

type readTextFilesOut struct {
	Workdir       string       `json:"workdir"`
	Files         []fileWindow `json:"files"`
	BytesReturned int          `json:"bytes_returned"`
	// Truncated: the call's total byte cap cut a file's window short or
	// left files unread (their error says so).
	Truncated bool `json:"truncated,omitempty"`
	// unread counts the files the total left unread, of total bytes.
	unread, total int
}

func readFilesTool(lim sfs.Limits, maxRead int) tool {
	schema := inputSchema[readTextFilesIn](map[string]bound{"max_lines": {1, lim.MaxReadLines, maxRead}, "tail": {0, lim.MaxReadLines, 0}})
	schema.Properties["paths"].MinItems = ptr(1)
	schema.Properties["paths"].MaxItems = ptr(maxReadPaths)
	return tool{
		def: &sdk.Tool{
			Name: "read_text_files",
			Description: fmt.Sprintf("Several files of one workdir in one call (max_lines each), each under its read_text_file header; a failing file is `==> wd:path CODE: message <==`, the others are read. "+
				"At most %s in all; `truncated: ...` last when files were left unread.", sizeText(lim.MaxReadBytes)),
			Annotations: readOnly("Read text files"),
			InputSchema: schema,
		},
		cost: heavyIf(func(_ *Deps, in readTextFilesIn) bool {
			for _, p := range in.Paths {
				if compressedPath(p) {
					return true
				}
			}
			return false
		}),
		register: register(readTextFiles),
	}
}

func readTextFiles(ctx context.Context, d *Deps, in readTextFilesIn) (*readTextFilesOut, callInfo, error) {
	info := callInfo{workdir: in.Workdir}
	if len(in.Paths) == 0 || len(in.Paths) > maxReadPaths {
		return nil, info, argErr("paths must hold between 1 and %d files", maxReadPaths)
	}
	if _, err := d.FS.Workdir(in.Workdir); err != nil {
		return nil, info, err
	}
	total := d.FS.Limits().MaxReadBytes
	out := &readTextFilesOut{Workdir: in.Workdir, Files: make([]fileWindow, 0, len(in.Paths)), total: total}
	for _, p := range in.Paths {
		left := total - out.BytesReturned
		fw := fileWindow{Path: p}
		if left <= 0 {
			out.Truncated = true
			out.unread++
			_, fw.Error = errs.Render(errs.New(errs.ReadLimitExceeded, fmt.Sprintf("%q not read: this call's %d-byte total is used up; read it with read_text_file", p, total)))
			out.Files = append(out.Files, fw)
			continue
		}
		o := sfs.ReadOptions{MaxLines: in.MaxLines, MaxBytes: left}
		if in.Tail > 0 {
			o = sfs.ReadOptions{Tail: in.Tail, MaxBytes: left}
		}
		w, err := readText(ctx, d, in.Workdir, p, o)
		switch {
		case err != nil && errs.CodeOf(err) == errs.LineTooLarge && left < total:
			// The line may well fit in a call of its own.
			out.Truncated = true
			out.unread++
			_, fw.Error = errs.Render(errs.New(errs.ReadLimitExceeded, fmt.Sprintf("%q not read: its next line does not fit in the %d bytes left of this call's %d-byte total; read it with read_text_file", p, left, total)))
		case err != nil:
			if errs.CodeOf(err) == errs.Canceled {
				return nil, info, err
			}
			_, fw.Error = errs.Render(err)
		default:
			fw.Path = w.Path
			fw.StartLine, fw.EndLine, fw.Content = w.StartLine, w.EndLine, w.Content
			fw.HasMore, fw.NextStartLine, fw.TotalLines = w.HasMore, w.NextStartLine, w.TotalLines
			fw.Revision, fw.Compressed, fw.CutAtCap = w.Revision, w.Compressed, w.CutAtCap
			fw.kind, fw.tail, fw.Document = w.kind, w.tail, w.Document
			out.BytesReturned += w.BytesReturned
			if w.CutByBytes && left < total {
				out.Truncated = true
			}
		}
		out.Files = append(out.Files, fw)
	}
	info.bytes = out.BytesReturned
	return out, info, nil
}

// Text is read_text_file's text content: the header line, then the
// window's lines exactly as in the file.
func (o *readTextFileOut) Text() string {
	if o.Image != nil {
		return o.Image.text(o.Workdir, o.Path)
	}
	if o.Outline != nil {
		return string(appendOutline(nil, o.Workdir, o.Path, o.Outline))
	}
	v := windowView{workdir: o.Workdir, path: o.Path, w: &o.TextWindow, kind: o.kind, tail: o.tail, cutAtCap: o.CutAtCap, definition: o.Definition, others: o.Others}
	return string(v.appendWindow(make([]byte, 0, len(o.Content)+128)))
}

// Text is read_text_files' text content: each file's block in order, a
// failed file as its header with its error; every block after the first
// starts on a line of its own (one "\n" before its header, as head
// writes it), so a window that does not end in a newline stays exact.
func (o *readTextFilesOut) Text() string {
	size := 128
	for i := range o.Files {
		size += len(o.Files[i].Content) + 128
	}
	b := make([]byte, 0, size)
	for i := range o.Files {
		f := &o.Files[i]
		if i > 0 {
			b = append(b, '\n')
		}
		if f.Error != "" {
			b = append(b, "==> "+o.Workdir+":"+f.Path+" "+f.Error+" <=="...)
			continue
		}
		w := sfs.TextWindow{StartLine: f.StartLine, EndLine: f.EndLine, Content: f.Content, HasMore: f.HasMore, NextStartLine: f.NextStartLine, TotalLines: f.TotalLines, Revision: f.Revision, Document: f.Document}
		b = windowView{workdir: o.Workdir, path: f.Path, w: &w, kind: f.kind, tail: f.tail, cutAtCap: f.CutAtCap}.appendWindow(b)
	}
	if o.unread > 0 {
		files := "files"
		if o.unread == 1 {
			files = "file"
		}
		b = append(b, '\n')
		b = append(b, "truncated: this call's "+strconv.Itoa(o.total)+"-byte total left "+strconv.Itoa(o.unread)+" "+files+" unread; read them with read_text_file"...)
	}
	return string(b)
}
