package search

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/archive"
	"github.com/serverfs/serverfs/internal/decompress"
	"github.com/serverfs/serverfs/internal/errs"
)

// Searching inside archives (Request.Archives): an archive file (zip,
// tar, tar.gz, tar.zst, tar.bz2) is one job, read once as a stream; each
// file member the path policy shows is searched as a file of its own,
// named archive/member, in the archive's stored order. Without
// Request.Archives an archive is skipped and counted (Skipped.Archives):
// its raw bytes (tar headers, zip deflate) are not lines of any file.

// memberBufferMax: a member up to this size is read into memory when
// context lines are asked for, so that the context pass reads it again
// (an archive's stream cannot be rewound); a larger member's matches come
// without context. Memory per worker is bounded by it.
const memberBufferMax = 4 << 20

// MaxArchivesNamed bounds Result.Archives: the archives a search opened
// are named up to it, and counted past it.
const MaxArchivesNamed = 20

// errArchiveLarge marks an archive that passed a bound (a bomb, too many
// members); errUnreadable a member that cannot be read (encrypted, or a
// compression method not read).
var (
	errArchiveLarge = errors.New("archive over a bound")
	errUnreadable   = errors.New("member unreadable")
)

// searchArchive searches the members of the archive file (of format f)
// and returns the archive's result: its members' results in stored order.
func (e *Engine) searchArchive(ctx context.Context, s *searcher, j job, pl *plan, file *sfs.File, size int64, f archive.Format) fileResult {
	r := fileResult{seq: j.seq, path: j.path, archive: true}
	resume, after := j.member, j.after
	kept := 0 // matches kept over the members: the archive stops at pl.perFile
	err := pl.w.WalkArchive(ctx, j.path, file, size, f, archive.Limits{}, func(m archive.Member, rd io.Reader) error {
		if pl.stopped() {
			return errStopped
		}
		skipLines := 0
		if resume != "" {
			if m.Name != resume {
				return nil // reported by the answer this one continues
			}
			resume, skipLines = "", after
			if skipLines == 0 {
				return nil
			}
		}
		if pl.memberPrefix != "" && !strings.HasPrefix(m.Name, pl.memberPrefix+"/") || !pl.glob(j, m.Name) {
			return nil
		}
		mr := e.searchMember(ctx, s, pl, j.path+"/"+m.Name, m, rd, skipLines)
		if mr.archiveErr != nil {
			return mr.archiveErr // the archive's failure, counted once, as its own
		}
		r.members = append(r.members, mr)
		kept += len(mr.matches)
		if mr.err == errStopped {
			return errStopped
		}
		if !pl.countOnly && !pl.files && kept >= pl.perFile {
			return errStopped // enough for the answer: the collector stops here
		}
		return nil
	})
	switch {
	case err == nil:
	case err == errStopped:
		r.partial = !(!pl.countOnly && !pl.files && kept >= pl.perFile)
		if len(r.members) > 0 && r.members[len(r.members)-1].err == errStopped {
			r.partial = false // the member carries the stop
		}
	case errs.CodeOf(err) == errs.ArchiveTooLarge:
		r.err = errArchiveLarge
	case errs.CodeOf(err) == errs.Canceled || ctx.Err() != nil:
		r.err, r.partial = errStopped, true
	default:
		r.err = errCorrupt
	}
	return r
}

// searchMember searches one member (rd nil: unreadable); skipLines are
// lines reported by the answer a cursor continues. A read error of the
// archive itself ends the walk (archiveErr): the stream past it is lost.
func (e *Engine) searchMember(ctx context.Context, s *searcher, pl *plan, path string, m archive.Member, rd io.Reader, skipLines int) fileResult {
	r := fileResult{path: path, member: true}
	switch {
	case rd == nil:
		r.err = errUnreadable
		return r
	case m.Size > pl.capBytes:
		r.tooLarge = true
		return r
	}
	var src io.Reader = rd
	var cr *decompress.CapReader
	if kind := decompress.Kind(path[strings.LastIndexByte(path, '/')+1:]); kind != "" {
		dec, err := decompress.NewReader(ctx, kind, rd)
		if err != nil {
			r.err = errCorrupt
			return r
		}
		defer dec.Close()
		cr = decompress.Cap(dec, pl.capBytes)
		src, r.compressed = cr, true
	}
	var held []byte // the member in memory, for the context pass
	if (pl.before > 0 || pl.after > 0) && cr == nil && m.Size <= memberBufferMax {
		s.member = s.member[:0]
		buf := bytes.NewBuffer(s.member)
		if _, err := buf.ReadFrom(io.LimitReader(rd, memberBufferMax+1)); err != nil {
			r.err, r.archiveErr = errCorrupt, err
			return r
		}
		held, s.member = buf.Bytes(), buf.Bytes()
		src = bytes.NewReader(held)
	}
	// As on disk, the files mode counts a member read by one buffer.
	small := pl.files && cr == nil && m.Size > 0 && m.Size <= int64(len(s.buf))
	emit := func(lm lineMatch) bool {
		if lm.line <= skipLines {
			return true
		}
		if pl.countOnly || small {
			r.count++
			return true
		}
		r.matches = append(r.matches, lm)
		return len(r.matches) < pl.perFile
	}
	s.countOnly = pl.countOnly || small
	r.outcome, r.err = s.search(src, pl.cm, pl.maxLen, pl.stopped, emit)
	if r.err == errStopped && !pl.countOnly && len(r.matches) >= pl.perFile {
		r.err = nil
	}
	if small {
		r.countExact = r.err == nil
		if r.count > 0 {
			r.matches = []lineMatch{{line: 1}}
		}
	}
	if r.err != nil && r.err != errStopped {
		if _, ok := r.err.(*errs.Error); ok || cr == nil {
			r.archiveErr = r.err // the archive's stream failed, not the member's encoding
		}
		r.err, r.matches, r.count = errCorrupt, nil, 0
	}
	if r.err == nil && cr == nil {
		// Drain what the search left (a binary member, a full page) so
		// that a short read of the archive shows as its error here.
		if _, err := io.Copy(io.Discard, rd); err != nil {
			r.archiveErr = err
		}
	}
	r.partial = r.err == errStopped
	r.capped = cr != nil && cr.Capped()
	if held != nil && len(r.matches) > 0 && r.err == nil {
		r.context = s.readContext(bytes.NewReader(held), r.matches, pl.before, pl.after, pl.stopped)
	}
	return r
}

// glob reports whether the member name of job j's archive passes the
// request's glob: matched against the archive's path below the search
// root joined with the member's, and the member's base name.
func (pl *plan) glob(j job, name string) bool {
	if pl.globber == nil {
		return true
	}
	rel := j.path + "/" + name
	if pl.root != "" {
		rel = strings.TrimPrefix(rel, pl.root+"/")
	}
	return pl.globber.Match(rel, name[strings.LastIndexByte(name, '/')+1:])
}

// takeArchive folds an archive's members into the answer, then moves the
// position past the archive.
func (c *collector) takeArchive(r fileResult) {
	if len(c.res.Archives) < MaxArchivesNamed {
		c.res.Archives = append(c.res.Archives, r.path)
	} else {
		c.res.ArchivesMore++
	}
	for _, m := range r.members {
		c.take(m)
		if c.done {
			return
		}
	}
	if r.err != nil || r.partial {
		c.take(fileResult{path: r.path, err: r.err, partial: r.partial})
		return
	}
	if !c.paged {
		c.last = sfs.Cursor{Path: r.path}
	}
}

// searchDocument searches the text of the document file (a PDF, an office
// document) extracted per call, as a file of its own.
func (e *Engine) searchDocument(ctx context.Context, s *searcher, j job, pl *plan, file *sfs.File, size int64) fileResult {
	r := fileResult{seq: j.seq, path: j.path, document: true}
	if size > pl.capBytes {
		r.tooLarge = true
		return r
	}
	text, _, err := sfs.ReadDocument(ctx, j.path, file, size)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		r.err, r.partial = errStopped, true
		return r
	case errs.CodeOf(err) == errs.DocumentEncrypted:
		r.err = errUnreadable
		return r
	case errs.CodeOf(err) == errs.DocumentTooLarge:
		r.tooLarge = true
		return r
	default:
		r.err = errCorrupt
		return r
	}
	m := archive.Member{Size: int64(len(text))}
	mr := e.searchMember(ctx, s, pl, j.path, m, strings.NewReader(text), j.after)
	mr.seq, mr.member, mr.document = j.seq, false, true
	return mr
}
