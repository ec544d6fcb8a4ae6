package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/serverfs/serverfs/internal/archive"
	"github.com/serverfs/serverfs/internal/document"
	"github.com/serverfs/serverfs/internal/document/office"
	"github.com/serverfs/serverfs/internal/document/pdf"
	"github.com/serverfs/serverfs/internal/errs"
)

// Documents (PDF, docx, xlsx, pptx, odt, ods, odp) are read as text: a
// read of one extracts its text per call, bounded by the readers' limits,
// and pages through it as through any file's lines; the window says which
// pages, sheets or slides it shows. Nothing is cached: a later window
// extracts again.

// maxMemberDocument bounds a document read from inside an archive: its
// bytes are held in memory (a PDF's cross-reference table is at its end;
// a zip's directory too).
const maxMemberDocument = 64 << 20

// DocumentKind names the document a file's name says it is ("pdf",
// "docx", ...), "" for any other file.
func DocumentKind(name string) string {
	name = strings.ToLower(name[strings.LastIndexByte(name, '/')+1:])
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return ""
	}
	switch ext := name[i+1:]; ext {
	case "pdf", "docx", "xlsx", "pptx", "odt", "ods", "odp":
		return ext
	}
	return ""
}

// ReadDocument is readDocument for a search: the document's text, valid
// UTF-8 without NUL, and whether a bound cut it.
func ReadDocument(ctx context.Context, name string, r io.ReaderAt, size int64) (string, bool, error) {
	d, err := readDocument(ctx, name, r, size)
	if err != nil {
		return "", false, err
	}
	return documentText(d), d.Truncated, nil
}

// readDocument extracts the text of the document r (size bytes), of the
// kind its name says, as it is in the file: a PDF by its header, an
// office document by its parts.
func readDocument(ctx context.Context, name string, r io.ReaderAt, size int64) (*document.Doc, error) {
	kind := DocumentKind(name)
	if kind == "pdf" {
		head := make([]byte, 1024)
		n, _ := r.ReadAt(head, 0)
		if !pdf.Is(head[:n]) {
			return nil, errs.New(errs.DocumentCorrupt, "is named .pdf but is not a PDF")
		}
		return pdf.Read(ctx, r, size, pdf.DefaultLimits())
	}
	k := office.Detect(name, r, size)
	if k == "" {
		k = office.Kind(kind) // Read answers what is wrong with it
	}
	return office.Read(ctx, r, size, k, office.DefaultLimits())
}

// documentText is a document's text as a file's lines: valid UTF-8, no
// NUL (a reader's stray bytes would read as a binary file).
func documentText(d *document.Doc) string {
	t := strings.ToValidUTF8(d.Text, "\uFFFD")
	return strings.ReplaceAll(t, "\x00", "\uFFFD")
}

// describeDocument is what a window of a document says of it: its kind,
// the parts the window shows ("pages 3-4 of 12", "sheet Q3"), and why the
// text stops early when a bound cut it.
func describeDocument(kind string, d *document.Doc, start, end int) string {
	s := kind + " text"
	if p := windowParts(d.Parts, start, end); p != "" {
		s += ", " + p
	}
	if d.Truncated {
		s += "; cut: " + d.Note
	} else if d.Note != "" {
		s += "; " + d.Note
	}
	return s
}

// windowParts names the parts lines start..end show: "page 3", "page 3
// to page 4 of 12".
func windowParts(parts []document.Part, start, end int) string {
	if len(parts) == 0 || end < start {
		return ""
	}
	first, last := -1, -1
	for i, p := range parts {
		if p.Line <= start {
			first = i
		}
		if p.Line <= end {
			last = i
		}
	}
	if first < 0 {
		first = 0
	}
	if last < 0 {
		return ""
	}
	s := parts[first].Label
	if last > first {
		s += " to " + parts[last].Label
	}
	return s + fmt.Sprintf(" of %d", len(parts))
}

// memberBytes reads the file member name of archive a into memory, up
// to limit bytes: what a document reader (a PDF's cross-reference is at
// its end) and a nested archive need; over limit is DOCUMENT_TOO_LARGE.
func memberBytes(ctx context.Context, a *openArchive, name string, limit int64) ([]byte, error) {
	rc, m, err := archive.Open(ctx, a.src, a.format, name, a.opt)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	tooLarge := errs.New(errs.DocumentTooLarge, fmt.Sprintf("is %d bytes inside an archive, more than the %d read from one", m.Size, limit))
	if m.Size > limit {
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, tooLarge
	}
	return b, nil
}

// readDocumentWindow is readWith for a document (on disk or an archive's
// member): its text extracted, then paged by read as a stream. It has no
// revision: no text edit applies to a document.
func (f *FS) readDocumentWindow(w *Workdir, raw, kind string, read func(src io.Reader, file *File, hint int64) (*TextWindow, error)) (*TextWindow, error) {
	ctx, cancel := f.archiveContext()
	defer cancel()
	var r io.ReaderAt
	var size int64
	var p string
	if a, ok, _ := w.archiveAt(raw, false); ok {
		defer a.Close()
		b, err := memberBytes(ctx, a, a.member, maxMemberDocument)
		if err != nil {
			return nil, a.memberError(w.alias, err)
		}
		r, size, p = bytes.NewReader(b), int64(len(b)), a.path()
	} else {
		file, info, err := w.OpenFile(raw)
		if err != nil {
			return nil, err
		}
		defer file.Close()
		r, size, p = file, *info.Size, info.Path
	}
	d, err := readDocument(ctx, raw, r, size)
	if err != nil {
		return nil, locate(err, w.alias, p, "could not be read as a document")
	}
	win, err := read(strings.NewReader(documentText(d)), nil, -1)
	if err != nil {
		return nil, locate(err, w.alias, p, "could not be read")
	}
	win.Workdir, win.Path = w.alias, p
	win.Document = describeDocument(kind, d, win.StartLine, win.EndLine)
	return win, nil
}

// locate gives err the workdir and path it is about; an error without a
// code is INTERNAL with msg.
func locate(err error, alias, p, msg string) error {
	var e *errs.Error
	if errors.As(err, &e) {
		e.Workdir, e.Path = alias, p
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return errs.At(errs.Canceled, alias, p, "reading the document ran out of time or was cancelled").Wrap(err)
	}
	return errs.At(errs.Internal, alias, p, msg).Wrap(err)
}
