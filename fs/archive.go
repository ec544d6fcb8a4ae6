package fs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/serverfs/serverfs/internal/archive"
	"github.com/serverfs/serverfs/internal/errs"
)

// Archives (zip, jar, whl, tar, tar.gz, tar.zst, tar.bz2) are read in
// place as read-only directories: a path that goes through an archive
// file names a member below it (logs/2025-11.tar.gz/app/app.log), and
// the archive itself lists as a directory. The path policy applies to
// members as to files on disk; nothing is extracted or cached.

// InArchive reports whether a path may go through an archive (or name
// one): a component named like one. Only its name is read: what admission
// control uses to class a call as heavy before any file is opened.
func InArchive(path string) bool {
	for c := range strings.SplitSeq(path, "/") {
		if archive.Named(c) {
			return true
		}
	}
	return false
}

// openArchive is an archive file open for one call, and the member a path
// names in it.
type openArchive struct {
	file   *File
	src    archive.Source
	format archive.Format
	at     relPath // the archive file
	member string  // below it; "" for its root
	opt    archive.Options
}

func (a *openArchive) Close() error { return a.file.Close() }

// path is the member's workdir path, as agents write it.
func (a *openArchive) path() string {
	if a.member == "" {
		return a.at.String()
	}
	return a.at.String() + "/" + a.member
}

// archiveAt opens the archive raw reaches into: through a component
// before its last, or, when asDir, its last (the archive listed as a
// directory). ok is false when raw reaches into no archive (its
// resolution is then the disk's, errors included).
func (w *Workdir) archiveAt(raw string, asDir bool) (*openArchive, bool, error) {
	if !InArchive(raw) {
		return nil, false, nil // the common case: no name to check, nothing cleaned twice
	}
	rp, err := w.clean(raw)
	if err != nil {
		return nil, false, nil
	}
	for i, c := range rp.comps {
		if !archive.Named(c) || i == len(rp.comps)-1 && !asDir {
			continue
		}
		at := relPath{comps: rp.comps[:i+1]}
		fd, st, err := w.openVerified(w.rootFD, at.comps, at, TypeFile)
		if err != nil {
			continue // not a regular file (a directory named x.zip): the disk answers
		}
		file := newFile(fd, w.alias+":/"+at.String())
		head := make([]byte, 512)
		n, _ := file.ReadAt(head, 0)
		format := archive.Detect(c, head[:n])
		if format == archive.None {
			file.Close()
			continue
		}
		a := &openArchive{file: file, src: archive.Source{R: file, Size: st.Size}, format: format, at: at,
			member: strings.Join(rp.comps[i+1:], "/")}
		a.opt.Filter = w.memberFilter(at)
		w.nest(a, asDir)
		return a, true, nil
	}
	return nil, false, nil
}

// memberFilter is the path policy for the members of the archive at: the
// same hidden and deny rules as on disk, for the member's every
// component and the whole path's suffixes.
func (w *Workdir) memberFilter(at relPath) archive.Filter {
	return func(name string, isDir bool) bool {
		comps := strings.Split(name, "/")
		dir := relPath{comps: append(append([]string(nil), at.comps...), comps[:len(comps)-1]...)}
		return w.policy.visible(dir, comps[len(comps)-1])
	}
}

// notWalkable is err, the failure to open raw as a directory to walk or
// search, unless raw is an archive or inside one: then it says so.
func (w *Workdir) notWalkable(raw string, err error) error {
	if a, ok, _ := w.archiveAt(raw, true); ok {
		a.Close()
		return errs.At(errs.NotADirectory, w.alias, a.path(), "is an archive or inside one: find_files and search_text go inside with archives true; list_directory and read_text_file always do")
	}
	return err
}

// memberError gives an archive error the member's workdir and path.
func (a *openArchive) memberError(alias string, err error) error {
	var e *errs.Error
	if errors.As(err, &e) {
		e.Workdir, e.Path = alias, a.path()
		return e
	}
	return errs.At(errs.Internal, alias, a.path(), "could not be read").Wrap(err)
}

// archiveContext bounds a call on an archive that has no context of its
// own (a listing) by the search timeout.
func (f *FS) archiveContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), f.limits.SearchTimeout)
}

func memberType(t archive.Type) EntryType {
	switch t {
	case archive.File:
		return TypeFile
	case archive.Dir:
		return TypeDirectory
	case archive.Symlink:
		return TypeSymlink
	}
	return TypeOther
}

func memberTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// listArchive is List of a directory in an archive.
func (f *FS) listArchive(w *Workdir, a *openArchive, offset, limit int) (*Listing, error) {
	ctx, cancel := f.archiveContext()
	defer cancel()
	opt := a.opt
	opt.Offset, opt.Limit = offset, limit
	p, err := archive.List(ctx, a.src, a.format, a.member, opt)
	if err != nil {
		return nil, a.memberError(w.alias, err)
	}
	l := &Listing{Workdir: w.alias, Path: a.path(), Entries: []Entry{}, Offset: offset, Limit: limit, Total: p.Total}
	for _, m := range p.Members {
		e := Entry{Name: m.Name[strings.LastIndexByte(m.Name, '/')+1:], Path: a.at.String() + "/" + m.Name, Type: memberType(m.Type), ModifiedAt: memberTime(m.ModTime)}
		if e.Type == TypeFile {
			size := m.Size
			e.Size = &size
		}
		l.Entries = append(l.Entries, e)
	}
	if end := offset + len(l.Entries); end < p.Total {
		l.HasMore, l.NextOffset = true, &end
	}
	l.Returned = len(l.Entries)
	return l, nil
}

// statMember is Stat of a member.
func (f *FS) statMember(w *Workdir, a *openArchive) (FileInfo, error) {
	ctx, cancel := f.archiveContext()
	defer cancel()
	m, err := archive.Stat(ctx, a.src, a.format, a.member, a.opt)
	if err != nil {
		return FileInfo{}, a.memberError(w.alias, err)
	}
	fi := FileInfo{Workdir: w.alias, Path: a.path(), Type: memberType(m.Type), ModifiedAt: memberTime(m.ModTime)}
	if fi.Type == TypeFile {
		size := m.Size
		fi.Size = &size
		fi.MIMEType = MIMEType(a.member[strings.LastIndexByte(a.member, '/')+1:])
	}
	return fi, nil
}

// readMember is readWith for a file member: its bytes streamed (the
// size unknown to the reader, so a tail streams too), decoded when asked
// (a .gz log inside a tar), with no revision (archives are read-only).
func (f *FS) readMember(w *Workdir, a *openArchive, decode Decoder, read func(src io.Reader, file *File, hint int64) (*TextWindow, error)) (*TextWindow, error) {
	ctx, cancel := f.archiveContext()
	defer cancel()
	rc, _, err := archive.Open(ctx, a.src, a.format, a.member, a.opt)
	if err != nil {
		return nil, a.memberError(w.alias, err)
	}
	defer rc.Close()
	var src io.Reader = rc
	if decode != nil {
		dec, err := decode(rc)
		if err != nil {
			return nil, errs.At(errs.BinaryFile, w.alias, a.path(), "cannot be decoded as text (corrupt compressed data?)").Wrap(err)
		}
		defer dec.Close()
		src = dec
	}
	win, err := read(src, nil, -1)
	if err != nil {
		return nil, a.memberError(w.alias, err)
	}
	win.Workdir, win.Path = w.alias, a.path()
	return win, nil
}

// ArchiveFormat tells the archive format of file, open at the workdir
// path p, from its name and first bytes: archive.None when it is not
// one (a plain .gz log, a file merely named .zip).
func ArchiveFormat(p string, file *File) archive.Format {
	name := p[strings.LastIndexByte(p, '/')+1:]
	if !archive.Named(name) {
		return archive.None
	}
	head := make([]byte, 512)
	n, _ := file.ReadAt(head, 0)
	return archive.Detect(name, head[:n])
}

// WalkArchive calls fn with every file member of the archive file (at the
// workdir path p, size bytes, of format f) that the path policy shows, in
// stored order, with a reader of its bytes (nil for an encrypted member):
// what a search inside archives reads. Members are named by their path
// in the archive; lim bounds the call.
func (w *Workdir) WalkArchive(ctx context.Context, p string, file *File, size int64, f archive.Format, lim archive.Limits, fn func(m archive.Member, r io.Reader) error) error {
	rp, err := w.clean(p)
	if err != nil {
		return err
	}
	opt := archive.Options{Filter: w.memberFilter(rp), Limits: lim}
	return archive.Walk(ctx, archive.Source{R: file, Size: size}, f, opt, fn)
}

// ArchivePath reports whether raw names an archive file, or a path
// inside one: the archive's workdir path, and the member path below it
// ("" for the archive itself). What a search inside one archive starts
// from.
func (w *Workdir) ArchivePath(raw string) (at, member string, ok bool) {
	a, ok, _ := w.archiveAt(raw, true)
	if !ok {
		return "", "", false
	}
	defer a.Close()
	return a.at.String(), a.member, true
}

// findInArchive passes the members of the archive file e (when it is
// one) to add, as paths below it, after the member resume when set; it
// returns false when add does (the find's limit). The archive is named
// in res.Archives, or, when it cannot be read, in res.ArchivesUnreadable.
func (w *Workdir) findInArchive(ctx context.Context, e *WalkEntry, resume string, add func(p, name string, t EntryType) bool, res *FindResult) bool {
	file, size, err := e.OpenFile()
	if err != nil {
		return true
	}
	defer file.Close()
	return w.findMembers(ctx, e.Path, file, size, resume, add, res)
}

// findMembers is findInArchive of the archive file at path p.
func (w *Workdir) findMembers(ctx context.Context, p string, file *File, size int64, resume string, add func(p, name string, t EntryType) bool, res *FindResult) bool {
	f := ArchiveFormat(p, file)
	if f == archive.None {
		return true
	}
	rp, err := w.clean(p)
	if err != nil {
		return true
	}
	full := false
	err = archive.Each(ctx, archive.Source{R: file, Size: size}, f, archive.Options{Filter: w.memberFilter(rp)}, func(m archive.Member) error {
		if resume != "" {
			if m.Name == resume {
				resume = ""
			}
			return nil
		}
		if !add(p+"/"+m.Name, m.Name[strings.LastIndexByte(m.Name, '/')+1:], memberType(m.Type)) {
			full = true
			return errFindFull
		}
		return nil
	})
	switch {
	case full:
		return false
	case err != nil && ctx.Err() == nil:
		res.ArchivesUnreadable = append(res.ArchivesUnreadable, p+" ("+string(errs.CodeOf(err))+")")
	default:
		res.Archives++
	}
	return true
}

// errFindFull ends an archive's pass when the find is full.
var errFindFull = errors.New("find full")

// findArchive is a find whose path is an archive or inside one (a):
// its members below the path, after the cursor's member when it is
// inside the archive.
func (w *Workdir) findArchive(ctx context.Context, a *openArchive, from *Cursor, add func(p, name string, t EntryType) bool, res *FindResult) {
	resume := ""
	if at := a.at.String(); from != nil && strings.HasPrefix(from.Path, at+"/") {
		resume = from.Path[len(at)+1:]
	}
	below := a.path() + "/"
	w.findMembers(ctx, a.at.String(), a.file, a.src.Size, resume, func(p, name string, t EntryType) bool {
		return !strings.HasPrefix(p, below) || add(p, name, t)
	}, res)
}

// Nested archives: one level. A path through an archive member that is
// itself an archive (release.zip/lib/app.jar/META-INF/MANIFEST.MF) reads
// that member into memory, up to maxNestedArchive, and goes on inside
// it; an archive inside that one is a file. Searches and finds do not go
// into nested archives.
const (
	maxNestedArchive = 64 << 20
	nestedTimeout    = 15 * time.Second
)

// nest moves a into the archive member its path goes through, if any:
// a member named like an archive before the path's last component (or at
// it, when asDir) that is a file member and an archive by its bytes.
// Otherwise a stays as it is, and the member path is resolved (or not
// found) in the outer archive.
func (w *Workdir) nest(a *openArchive, asDir bool) {
	if a.member == "" {
		return
	}
	comps := strings.Split(a.member, "/")
	for j, c := range comps {
		if !archive.Named(c) || j == len(comps)-1 && !asDir {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), nestedTimeout)
		defer cancel()
		b, err := memberBytes(ctx, a, strings.Join(comps[:j+1], "/"), maxNestedArchive)
		if err != nil {
			return
		}
		f := archive.Detect(c, b[:min(len(b), 512)])
		if f == archive.None {
			return
		}
		a.at = relPath{comps: append(append([]string(nil), a.at.comps...), comps[:j+1]...)}
		a.src, a.format, a.member = archive.Source{R: bytes.NewReader(b), Size: int64(len(b))}, f, strings.Join(comps[j+1:], "/")
		a.opt.Filter = w.memberFilter(a.at)
		return
	}
}
