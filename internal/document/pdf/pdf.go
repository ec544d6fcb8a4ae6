// Package pdf reads a PDF's text page by page, in pure Go, for ServerFS's
// document reading. It parses the file itself (cross-reference tables and
// streams, object streams, the page tree, content streams, fonts'
// ToUnicode maps and encodings) so that every step is bounded: objects
// loaded, nesting, pages, text, and decompressed bytes are all capped by
// Limits, and a hostile file ends in an error or a truncated document,
// never in a hang or a crash. Encrypted PDFs are refused, never decrypted.
package pdf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/serverfs/serverfs/internal/document"
	"github.com/serverfs/serverfs/internal/errs"
)

// Limits bound one Read call.
type Limits struct {
	MaxObjects int   // objects loaded from the file, and entries in one array or dictionary
	MaxDepth   int   // nesting of arrays, dictionaries, references, page tree and forms
	MaxPages   int   // pages read; past it the document is Truncated
	MaxText    int64 // bytes of text produced; past it the document is Truncated
	MaxStream  int64 // bytes decompressed in total (FlateDecode bombs)
}

// DefaultLimits are generous for real documents and small enough that a
// hostile file costs little.
func DefaultLimits() Limits {
	return Limits{
		MaxObjects: 200_000,
		MaxDepth:   64,
		MaxPages:   2000,
		MaxText:    8 << 20,
		MaxStream:  64 << 20,
	}
}

// withDefaults fills limits left at zero (or below) with the defaults.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxObjects <= 0 {
		l.MaxObjects = d.MaxObjects
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxPages <= 0 {
		l.MaxPages = d.MaxPages
	}
	if l.MaxText <= 0 {
		l.MaxText = d.MaxText
	}
	if l.MaxStream <= 0 {
		l.MaxStream = d.MaxStream
	}
	return l
}

// Is reports whether head, a file's first bytes, looks like a PDF:
// "%PDF-" within its first 1024 bytes (readers accept junk before it).
func Is(head []byte) bool {
	if len(head) > 1024 {
		head = head[:1024]
	}
	return bytes.Contains(head, []byte("%PDF-"))
}

// pdfError is an error of this package before it becomes an errs.Error:
// limit says a bound was reached (DOCUMENT_TOO_LARGE, or a truncation
// once some text exists), otherwise the file is malformed.
type pdfError struct {
	msg   string
	limit bool
}

func (e *pdfError) Error() string { return e.msg }

func errCorrupt(msg string) error { return &pdfError{msg: msg} }
func errLimit(msg string) error   { return &pdfError{msg: msg, limit: true} }

func isLimit(err error) bool {
	var e *pdfError
	return errors.As(err, &e) && e.limit
}

// Read reads a PDF's text: r holds size bytes. Each page's text starts on
// a line of its own, named by a Part "page N"; a page without text still
// has one (empty) line.
func Read(ctx context.Context, r io.ReaderAt, size int64, lim Limits) (doc *document.Doc, err error) {
	defer func() {
		// Every input is bounded above; this only turns a bug into an
		// error rather than a crashed server.
		if x := recover(); x != nil {
			doc, err = nil, errs.New(errs.DocumentCorrupt, "the PDF could not be read").Wrap(fmt.Errorf("panic: %v", x))
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f := &file{ctx: ctx, ra: r, size: size, lim: lim.withDefaults(), cache: map[int]any{}, objstm: map[int]*objStream{}, fonts: map[ref]*font{}}
	pages, err := f.open()
	if err != nil {
		return nil, f.convert(err)
	}
	return f.readPages(pages)
}

// convert maps an internal error to the error Read returns.
func (f *file) convert(err error) error {
	if ctxErr := f.ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	var pe *pdfError
	var ee *errs.Error
	switch {
	case errors.As(err, &ee):
		return ee
	case errors.As(err, &pe) && pe.limit:
		return errs.New(errs.DocumentTooLarge, "the PDF is past a reading limit: "+pe.msg)
	case errors.As(err, &pe):
		return errs.New(errs.DocumentCorrupt, "the PDF is malformed: "+pe.msg)
	}
	return errs.New(errs.DocumentCorrupt, "the PDF could not be read").Wrap(err)
}

// open reads the cross-reference and returns the page tree's root. A
// broken cross-reference is rebuilt by scanning the file once.
func (f *file) open() (dict, error) {
	if f.size < 8 {
		return nil, errCorrupt("too short for a PDF")
	}
	err := f.readXref()
	var pages dict
	if err == nil {
		pages, err = f.catalog()
	}
	if err != nil && !isLimit(err) && f.ctx.Err() == nil {
		if err = f.rebuild(); err == nil {
			pages, err = f.catalog()
		}
	}
	return pages, err
}

// catalog checks the trailer for encryption and returns the page tree.
func (f *file) catalog() (dict, error) {
	if f.trailer["Encrypt"] != nil {
		return nil, errs.New(errs.DocumentEncrypted, "the PDF is encrypted; it is not decrypted")
	}
	root, err := f.dictOf(f.trailer["Root"])
	if err != nil {
		return nil, err
	}
	pages, err := f.dictOf(root["Pages"])
	if err != nil {
		return nil, err
	}
	if pages == nil {
		return nil, errCorrupt("no page tree")
	}
	return pages, nil
}

func (f *file) dictOf(v any) (dict, error) {
	v, err := f.resolve(v)
	if err != nil {
		return nil, err
	}
	switch d := v.(type) {
	case dict:
		return d, nil
	case *stream:
		return d.d, nil
	}
	return nil, nil
}

// pageNode is a node of the page tree still to visit, with the resources
// it inherits and how deep it is.
type pageNode struct {
	v     any
	res   any
	depth int
}

// readPages walks the page tree depth first with an explicit stack: a
// node seen before (a loop) is skipped, /Count is never trusted.
func (f *file) readPages(root dict) (*document.Doc, error) {
	out := &docWriter{max: f.lim.MaxText}
	stack := []pageNode{{v: root}}
	seen := map[any]bool{}
	var note string
	for len(stack) > 0 && note == "" {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if r, ok := n.v.(ref); ok {
			if seen[r] {
				continue
			}
			seen[r] = true
		}
		d, err := f.dictOf(n.v)
		if err == nil && d == nil {
			continue
		}
		if err != nil {
			if note, err = f.stop(out, err); err != nil {
				return nil, err
			}
			break
		}
		res := n.res
		if d["Resources"] != nil {
			res = d["Resources"]
		}
		kids, _ := f.resolve(d["Kids"])
		if ks, ok := kids.(array); ok && d["Type"] != name("Page") {
			if n.depth >= f.lim.MaxDepth {
				note, _ = f.stop(out, errLimit("page tree deeper than the limit"))
				break
			}
			for i := len(ks) - 1; i >= 0; i-- {
				stack = append(stack, pageNode{v: ks[i], res: res, depth: n.depth + 1})
			}
			continue
		}
		if out.pages >= f.lim.MaxPages {
			note = fmt.Sprintf("stopped after %d pages (the page limit)", f.lim.MaxPages)
			break
		}
		if err := f.page(out, d, res); err != nil {
			if note, err = f.stop(out, err); err != nil {
				return nil, err
			}
		}
	}
	return out.doc(note), nil
}

// stop decides what an error met while reading pages means: a cancelled
// context or a malformed file before any page is an error; a limit with
// nothing read yet is DOCUMENT_TOO_LARGE; otherwise the document is
// truncated there, and the note says why.
func (f *file) stop(out *docWriter, err error) (string, error) {
	if ctxErr := f.ctx.Err(); ctxErr != nil {
		return "", ctxErr
	}
	if out.done == 0 && out.text.Len() == 0 && out.line.Len() == 0 {
		return "", f.convert(err)
	}
	msg := err.Error()
	var pe *pdfError
	if errors.As(err, &pe) {
		msg = pe.msg
	}
	return fmt.Sprintf("stopped at page %d: %s", out.pages, strings.TrimSpace(msg)), nil
}
