package office

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/serverfs/serverfs/internal/errs"
)

const (
	// ratioSlack: a member may expand without a ratio check up to this
	// size, so that small highly repetitive parts are always read.
	ratioSlack = 16 << 20
	// maxDirectory bounds the zip central directory read: archive/zip
	// keeps a File (a few hundred bytes) per entry, and reads entries
	// for as long as their signatures continue, whatever the end record
	// declares. 4 MiB is tens of thousands of entries.
	maxDirectory = 4 << 20
)

// dirBudget limits the bytes zip.NewReader reads, then steps aside for
// the members' reads.
type dirBudget struct {
	r    io.ReaderAt
	left int64
	over bool
	done bool
}

var errDirectory = errors.New("office: central directory too large")

func (d *dirBudget) ReadAt(p []byte, off int64) (int, error) {
	if !d.done {
		if d.left < int64(len(p)) {
			d.over = true
			return 0, errDirectory
		}
		d.left -= int64(len(p))
	}
	return d.r.ReadAt(p, off)
}

// openZip reads a zip's central directory and indexes its members by
// lower-cased name (OPC part names compare case-insensitively; the first
// of duplicates wins).
func openZip(r io.ReaderAt, size int64) (map[string]*zip.File, error) {
	d := &dirBudget{r: r, left: maxDirectory + 128<<10}
	zr, err := zip.NewReader(d, size)
	d.done = true
	switch {
	case d.over:
		return nil, errs.New(errs.DocumentTooLarge, fmt.Sprintf("its zip directory is larger than %d bytes", maxDirectory))
	case err != nil && !errors.Is(err, zip.ErrInsecurePath):
		return nil, errs.New(errs.DocumentCorrupt, "it is not a readable zip file").Wrap(err)
	}
	files := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		key := strings.ToLower(f.Name)
		if _, dup := files[key]; !dup {
			files[key] = f
		}
	}
	return files, nil
}

// pkg is one call's open document: its members, its bounds, what it has
// read so far and the text it produces.
type pkg struct {
	ctx     context.Context
	lim     Limits
	files   map[string]*zip.File
	xmlRead int64
	o       *out
	sc      *scanner // reused from part to part: parts are read one at a time
}

// errMissing: the part is not in the zip.
var errMissing = errors.New("office: part missing")

// scan reads the part name with fn, through a scanner over its guarded
// bytes; errMissing when there is no such part.
func (p *pkg) scan(name string, fn func(s *scanner) error) error {
	f := p.files[strings.ToLower(name)]
	if f == nil {
		return errMissing
	}
	if f.Flags&1 != 0 {
		return errs.New(errs.DocumentEncrypted, name+" is encrypted")
	}
	rc, err := f.Open()
	if err != nil {
		return errs.New(errs.DocumentCorrupt, name+": its zip entry cannot be read").Wrap(err)
	}
	defer rc.Close()
	g := &guarded{p: p, r: rc, name: name, in: int64(f.CompressedSize64)}
	if p.sc == nil {
		p.sc = newScanner(g, name, p.lim.MaxDepth)
	} else {
		p.sc.reset(g, name)
	}
	return fn(p.sc)
}

// guarded counts a member's decompressed bytes against the call's
// MaxXML and the member's expansion ratio, and checks the context.
type guarded struct {
	p       *pkg
	r       io.Reader
	name    string
	in, out int64
}

func (g *guarded) Read(b []byte) (int, error) {
	if err := g.p.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := g.r.Read(b)
	g.out += int64(n)
	g.p.xmlRead += int64(n)
	lim := g.p.lim
	switch {
	case g.p.xmlRead > lim.MaxXML:
		return n, errs.New(errs.DocumentTooLarge, fmt.Sprintf("more than %d bytes of XML decompressed", lim.MaxXML))
	case g.out > ratioSlack && g.out > max(g.in, 1)*lim.MaxRatio:
		return n, errs.New(errs.DocumentTooLarge, fmt.Sprintf("%s expands more than %d times: a decompression bomb", g.name, lim.MaxRatio))
	case err != nil && err != io.EOF:
		return n, errs.New(errs.DocumentCorrupt, g.name+": its compressed bytes are corrupt").Wrap(err)
	}
	return n, err
}

// rel is one relationship of a part: the part it targets, resolved.
type rel struct{ target, typ string }

// rels reads the relationships of the part source, keeping those want
// accepts (so that a hostile rels part cannot fill memory): a missing
// rels part is no relationships.
func (p *pkg) rels(source string, want func(id, typ string) bool) (map[string]rel, error) {
	dir, base := path.Split(source)
	out := map[string]rel{}
	err := p.scan(dir+"_rels/"+base+".rels", func(s *scanner) error {
		for {
			tok, err := s.Next()
			if err != nil || tok == tokEOF {
				return err
			}
			if tok != tokStart || !s.is("Relationship") {
				continue
			}
			if mode, _ := s.attr("TargetMode"); strings.EqualFold(string(mode), "External") {
				continue
			}
			id, _ := s.attr("Id")
			typ, _ := s.attr("Type")
			target, _ := s.attr("Target")
			if want(string(id), string(typ)) {
				out[string(id)] = rel{target: resolve(dir, string(target)), typ: string(typ)}
			}
		}
	})
	if errors.Is(err, errMissing) {
		err = nil
	}
	return out, err
}

// resolve returns the part a relationship's target names, relative to
// the source part's folder unless it is absolute.
func resolve(dir, target string) string {
	if strings.HasPrefix(target, "/") {
		return strings.TrimPrefix(path.Clean(target), "/")
	}
	return path.Join(dir, target)
}

// typeIs says whether a relationship type URI ends with /name (the
// strict and transitional OOXML namespaces differ before it).
func typeIs(typ, name string) bool { return strings.HasSuffix(typ, "/"+name) }
