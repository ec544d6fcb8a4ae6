// Package office reads office documents in place as text: Word and
// OpenDocument text (docx, odt), spreadsheets (xlsx, ods) and
// presentations (pptx, odp). It uses the standard library only:
// archive/zip and its own bounded XML scanner (xmlscan.go says why not
// encoding/xml); a spreadsheet library such as excelize would be a large
// dependency for reading cells as text.
//
// What each format becomes, lines ended by '\n':
//
//   - docx, odt: one line per paragraph (an empty paragraph is an empty
//     line); a tab is '\t', a line break starts a new line; a table is
//     one line per row, its cells separated by '\t' (a cell's
//     paragraphs joined by spaces). Headers, footers, footnotes,
//     comments and deleted text are left out (Note says so when the
//     document has headers, footers or notes).
//   - xlsx, ods: each sheet begins with a line "# sheet NAME" (a Part),
//     then one line per row, cells separated by '\t' up to the row's last
//     non-empty cell. Line k after the header is row k: up to 100 empty
//     rows before a non-empty one are empty lines, a longer run is one
//     line "# … N empty rows"; empty rows at the end are left out. A cell
//     is its value as written (numbers unformatted, a formula's cached
//     value, TRUE/FALSE, errors such as #DIV/0!), dates in date-formatted
//     xlsx cells (built-in formats 14–22 and custom formats with days or
//     years) and ods date cells as 2006-01-02 or 2006-01-02 15:04:05;
//     tabs and newlines in a cell become spaces.
//   - pptx, odp: each slide begins with a line "# slide N" (a Part), then
//     one line per non-empty paragraph of its text, in the presentation's
//     order. Speaker notes and masters are left out.
//
// Every call is bounded by Limits: text produced, XML decompressed (in
// total and per member's expansion ratio), element nesting, cells, and
// sheets or slides read. A bound on the output ends the text early
// (Doc.Truncated, Note says which); a bound on the input does the same
// once some text was produced, and is DOCUMENT_TOO_LARGE before.
package office

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/serverfs/serverfs/internal/document"
	"github.com/serverfs/serverfs/internal/errs"
)

// Kind is an office document's format: "" for a file that is not one.
type Kind string

// The formats read.
const (
	Docx Kind = "docx"
	Xlsx Kind = "xlsx"
	Pptx Kind = "pptx"
	Odt  Kind = "odt"
	Ods  Kind = "ods"
	Odp  Kind = "odp"
)

// Limits bound one Read. A field ≤ 0 takes DefaultLimits' value.
type Limits struct {
	MaxText  int64 // bytes of text produced; past it: Truncated
	MaxXML   int64 // decompressed bytes of XML parts read in total per call (zip bombs)
	MaxRatio int64 // expansion ratio per zip member past 16 MiB
	MaxDepth int   // XML element nesting
	MaxCells int64 // spreadsheet cells produced; past it: Truncated
	MaxParts int   // sheets or slides read
}

// DefaultLimits are the bounds of a read that no document needs more of.
func DefaultLimits() Limits {
	return Limits{MaxText: 8 << 20, MaxXML: 256 << 20, MaxRatio: 256, MaxDepth: 256, MaxCells: 2_000_000, MaxParts: 1000}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	pick := func(v, def int64) int64 {
		if v <= 0 {
			return def
		}
		return v
	}
	l.MaxText = pick(l.MaxText, d.MaxText)
	l.MaxXML = pick(l.MaxXML, d.MaxXML)
	l.MaxRatio = pick(l.MaxRatio, d.MaxRatio)
	l.MaxDepth = int(pick(int64(l.MaxDepth), int64(d.MaxDepth)))
	l.MaxCells = pick(l.MaxCells, d.MaxCells)
	l.MaxParts = int(pick(int64(l.MaxParts), int64(d.MaxParts)))
	return l
}

// byExtension maps file extensions to kinds: the macro-enabled and
// template variants have the same parts.
var byExtension = map[string]Kind{
	".docx": Docx, ".docm": Docx, ".dotx": Docx, ".dotm": Docx,
	".xlsx": Xlsx, ".xlsm": Xlsx, ".xltx": Xlsx, ".xltm": Xlsx,
	".pptx": Pptx, ".pptm": Pptx, ".potx": Pptx, ".potm": Pptx, ".ppsx": Pptx, ".ppsm": Pptx,
	".odt": Odt, ".ott": Odt, ".ods": Ods, ".ots": Ods, ".odp": Odp, ".otp": Odp,
}

// mainPart is the part whose presence confirms an OOXML kind.
var mainPart = map[Kind]string{Docx: "word/document.xml", Xlsx: "xl/workbook.xml", Pptx: "ppt/presentation.xml"}

// odfMime is the "mimetype" member of an ODF kind (templates add
// "-template").
var odfMime = map[Kind]string{
	Odt: "application/vnd.oasis.opendocument.text",
	Ods: "application/vnd.oasis.opendocument.spreadsheet",
	Odp: "application/vnd.oasis.opendocument.presentation",
}

// Detect tells the kind from the file's name (its extension, in any case)
// and confirms it from the zip's directory: the main part of an OOXML
// document, the "mimetype" member of an ODF one. An encrypted OOXML
// document (an OLE compound file, not a zip) keeps its kind, so that Read
// answers DOCUMENT_ENCRYPTED.
func Detect(name string, r io.ReaderAt, size int64) Kind {
	dot := strings.LastIndexByte(name, '.')
	if dot < 0 {
		return ""
	}
	kind := byExtension[strings.ToLower(name[dot:])]
	if kind == "" {
		return ""
	}
	if _, ooxml := mainPart[kind]; ooxml {
		if isOLE(r, size) {
			if oleEncrypted(r, size) {
				return kind
			}
			return ""
		}
	}
	files, err := openZip(r, size)
	if err != nil {
		return ""
	}
	if part, ok := mainPart[kind]; ok {
		if files[part] == nil {
			return ""
		}
		return kind
	}
	f := files["mimetype"]
	if f == nil {
		return ""
	}
	rc, err := f.Open()
	if err != nil {
		return ""
	}
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, 128))
	if m := strings.TrimSpace(string(b)); m != odfMime[kind] && m != odfMime[kind]+"-template" {
		return ""
	}
	return kind
}

// Read reads the document of the given kind as text, within lim. Errors:
// DOCUMENT_CORRUPT (not a zip, malformed XML, no main part),
// DOCUMENT_ENCRYPTED, DOCUMENT_TOO_LARGE (a bound reached before any
// text), UNSUPPORTED_FILE_TYPE for a kind that is not one of these, and
// ctx.Err() once ctx ends.
func Read(ctx context.Context, r io.ReaderAt, size int64, kind Kind, lim Limits) (*document.Doc, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	read := readers[kind]
	if read == nil {
		return nil, errs.New(errs.UnsupportedFileType, "not an office document kind: "+string(kind))
	}
	if size < 0 {
		return nil, errs.New(errs.DocumentCorrupt, "a negative size")
	}
	if isOLE(r, size) {
		if _, ooxml := mainPart[kind]; ooxml && oleEncrypted(r, size) {
			return nil, errs.New(errs.DocumentEncrypted, "the document is encrypted (an OLE EncryptedPackage)")
		}
		return nil, errs.New(errs.DocumentCorrupt, "an OLE compound file (a legacy binary document?), not a zip")
	}
	files, err := openZip(r, size)
	if err != nil {
		return nil, err
	}
	lim = lim.withDefaults()
	o := &out{ctx: ctx, max: lim.MaxText, maxCells: lim.MaxCells}
	p := &pkg{ctx: ctx, lim: lim, files: files, o: o}
	return finish(ctx, o, read(p))
}

var readers = map[Kind]func(*pkg) error{
	Docx: readDocx, Xlsx: readXlsx, Pptx: readPptx,
	Odt: readOdt, Ods: readOds, Odp: readOdp,
}

// finish turns a reader's outcome into Read's answer: a bound on the
// input reached after some text is a truncated document.
func finish(ctx context.Context, o *out, err error) (*document.Doc, error) {
	if err == nil || errors.Is(err, errStop) {
		return o.doc(), nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	var e *errs.Error
	if !errors.As(err, &e) {
		return nil, errs.New(errs.DocumentCorrupt, "the document cannot be read").Wrap(err)
	}
	if e.Code == errs.DocumentTooLarge && o.b.Len() > 0 {
		o.full = true
		o.note("%s", e.Msg)
		return o.doc(), nil
	}
	return nil, e
}

// missing is the error for an absent main part.
func missing(part string) error {
	return errs.New(errs.DocumentCorrupt, "the document has no "+part)
}

func errCorrupt(format string, a ...any) error {
	return errs.New(errs.DocumentCorrupt, fmt.Sprintf(format, a...))
}
