package archive

import (
	"context"
	"fmt"
	"io"
	"path"
	"sort"

	"github.com/serverfs/serverfs/internal/errs"
)

// A name stored twice (a tar appended to): the first is the one listed,
// stated and read.

// Page is one page of a directory's members, sorted by name.
type Page struct {
	Members []Member
	// Total is the directory's visible members.
	Total int
}

// visible reports whether name (and every directory above it) passes the
// filter.
func (o Options) visible(name string, isDir bool) bool {
	if o.Filter == nil {
		return true
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '/' && !o.Filter(name[:i], true) {
			return false
		}
	}
	return o.Filter(name, isDir)
}

// index is an archive's visible members by name, implied directories
// included, and each directory's children.
type index struct {
	byName   map[string]Member
	children map[string][]string
}

// readIndex scans every member's header.
func readIndex(ctx context.Context, src Source, f Format, opt Options) (*index, error) {
	g := &guard{ctx: ctx, lim: opt.Limits.withDefaults()}
	s, err := open(g, src, f)
	if err != nil {
		return nil, err
	}
	defer s.close()
	ix := &index{byName: map[string]Member{"": {Type: Dir, Implied: true}}, children: map[string][]string{}}
	add := func(m Member) error {
		if _, ok := ix.byName[m.Name]; ok {
			return nil
		}
		if len(ix.byName) > g.lim.MaxMembers {
			return tooLarge(fmt.Sprintf("more than %d members", g.lim.MaxMembers))
		}
		ix.byName[m.Name] = m
		parent := path.Dir(m.Name)
		if parent == "." {
			parent = ""
		}
		ix.children[parent] = append(ix.children[parent], m.Name)
		return nil
	}
	err = s.each(func(e entry) error {
		if e.Name == "" || !opt.visible(e.Name, e.Type == Dir) {
			return nil
		}
		// The directories above it, implied when they have no entry.
		for i := 0; i < len(e.Name); i++ {
			if e.Name[i] == '/' {
				if err := add(Member{Name: e.Name[:i], Type: Dir, Implied: true}); err != nil {
					return err
				}
			}
		}
		if m, ok := ix.byName[e.Name]; ok && m.Implied && e.Type == Dir {
			e.Member.Implied = false
			ix.byName[e.Name] = e.Member // its own entry, after a member below it
			return nil
		}
		return add(e.Member)
	})
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// List returns a page of the members directly under dir ("" for the
// archive's root), sorted by name: Options.Limit of them from
// Options.Offset.
func List(ctx context.Context, src Source, f Format, dir string, opt Options) (Page, error) {
	ix, err := readIndex(ctx, src, f, opt)
	if err != nil {
		return Page{}, err
	}
	d, ok := ix.byName[dir]
	switch {
	case !ok:
		return Page{}, errs.New(errs.PathNotFound, "no such member in the archive")
	case d.Type != Dir:
		return Page{}, errs.New(errs.NotADirectory, "the member is not a directory")
	}
	names := ix.children[dir]
	sort.Strings(names)
	limit := opt.Limit
	if limit <= 0 {
		limit = DefaultPageSize
	}
	p := Page{Total: len(names)}
	for _, n := range names[min(opt.Offset, len(names)):min(opt.Offset+limit, len(names))] {
		p.Members = append(p.Members, ix.byName[n])
	}
	return p, nil
}

// Stat describes one member ("" is the archive's root).
func Stat(ctx context.Context, src Source, f Format, name string, opt Options) (Member, error) {
	ix, err := readIndex(ctx, src, f, opt)
	if err != nil {
		return Member{}, err
	}
	m, ok := ix.byName[name]
	if !ok {
		return Member{}, errs.New(errs.PathNotFound, "no such member in the archive")
	}
	return m, nil
}

// Open returns a reader of a file member's bytes, bounded by the call's
// limits; closing it ends the pass over the archive. Directories, links
// and devices are NOT_A_FILE: a link is never followed.
func Open(ctx context.Context, src Source, f Format, name string, opt Options) (io.ReadCloser, Member, error) {
	g := &guard{ctx: ctx, lim: opt.Limits.withDefaults()}
	s, err := open(g, src, f)
	if err != nil {
		return nil, Member{}, err
	}
	var found *entry
	err = s.each(func(e entry) error {
		if e.Name != name || !opt.visible(e.Name, e.Type == Dir) {
			return nil
		}
		found = &e
		return errStop
	})
	if err != nil && err != errStop {
		s.close()
		return nil, Member{}, err
	}
	if found == nil {
		s.close()
		return nil, Member{}, errs.New(errs.PathNotFound, "no such member in the archive")
	}
	if found.Type != File {
		s.close()
		return nil, found.Member, errs.New(errs.NotAFile, fmt.Sprintf("the member is a %s, which is named, never opened or followed", found.Type))
	}
	rc, err := s.data(*found)
	if err != nil {
		s.close()
		return nil, found.Member, err
	}
	return &memberReader{r: rc, close: s.close}, found.Member, nil
}

type memberReader struct {
	r     io.ReadCloser
	close func()
}

func (m *memberReader) Read(p []byte) (int, error) { return m.r.Read(p) }

func (m *memberReader) Close() error {
	err := m.r.Close()
	m.close()
	return err
}

// Walk calls fn with every visible file member, in stored order, and a
// reader of its bytes (valid until fn returns), in one pass over the
// archive: what a search reads. Encrypted members and those compressed
// by a method not read are passed with a nil reader. fn's error ends the
// walk and is returned.
func Walk(ctx context.Context, src Source, f Format, opt Options, fn func(m Member, r io.Reader) error) error {
	g := &guard{ctx: ctx, lim: opt.Limits.withDefaults()}
	s, err := open(g, src, f)
	if err != nil {
		return err
	}
	defer s.close()
	seen := map[string]bool{}
	return s.each(func(e entry) error {
		if e.Type != File || e.Name == "" || seen[e.Name] || !opt.visible(e.Name, false) {
			return nil
		}
		seen[e.Name] = true
		rc, err := s.data(e)
		if err != nil {
			if c := errs.CodeOf(err); c == errs.ArchiveEncrypted || c == errs.UnsupportedFileType {
				return fn(e.Member, nil)
			}
			return err
		}
		defer rc.Close()
		return fn(e.Member, rc)
	})
}
