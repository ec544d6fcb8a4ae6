package archive

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

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

// scan is what one pass learns of a member and, when asked, of the
// members directly under it: only those are kept, so a call's memory is
// one directory's, not the archive's.
type scan struct {
	self     Member
	found    bool              // the member exists, as an entry or implied by one below it
	children map[string]Member // by name, nil unless asked
}

// scanMember reads every member's header for name ("" is the root).
func scanMember(ctx context.Context, src Source, f Format, name string, opt Options, children bool) (*scan, error) {
	g := &guard{ctx: ctx, lim: opt.Limits.withDefaults()}
	s, err := open(g, src, f)
	if err != nil {
		return nil, err
	}
	defer s.close()
	sc := &scan{self: Member{Name: name, Type: Dir, Implied: true}, found: name == ""}
	explicit := false // self is an entry of its own
	if children {
		sc.children = map[string]Member{}
	}
	prefix := ""
	if name != "" {
		prefix = name + "/"
	}
	err = s.each(func(e entry) error {
		if e.Name == "" || !opt.visible(e.Name, e.Type == Dir) {
			return nil
		}
		if e.Name == name {
			if !explicit { // a name stored twice: the first
				sc.self, sc.found, explicit = e.Member, true, true
			}
			return nil
		}
		if !strings.HasPrefix(e.Name, prefix) {
			return nil
		}
		sc.found = true // implied by a member below it
		if sc.children == nil {
			return nil
		}
		rest := e.Name[len(prefix):]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			// A directory with no entry of its own (yet), implied.
			if _, ok := sc.children[rest[:i]]; !ok {
				sc.children[rest[:i]] = Member{Name: prefix + rest[:i], Type: Dir, Implied: true}
			}
			return nil
		}
		if c, ok := sc.children[rest]; !ok || c.Implied && e.Type == Dir {
			sc.children[rest] = e.Member
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sc, nil
}

// List returns a page of the members directly under dir ("" for the
// archive's root), sorted by name: Options.Limit of them from
// Options.Offset.
func List(ctx context.Context, src Source, f Format, dir string, opt Options) (Page, error) {
	sc, err := scanMember(ctx, src, f, dir, opt, true)
	if err != nil {
		return Page{}, err
	}
	switch {
	case !sc.found:
		return Page{}, errs.New(errs.PathNotFound, "no such member in the archive")
	case sc.self.Type != Dir:
		return Page{}, errs.New(errs.NotADirectory, "the member is not a directory")
	}
	names := make([]string, 0, len(sc.children))
	for n := range sc.children {
		names = append(names, n)
	}
	sort.Strings(names)
	limit := opt.Limit
	if limit <= 0 {
		limit = DefaultPageSize
	}
	p := Page{Total: len(names)}
	for _, n := range names[min(opt.Offset, len(names)):min(opt.Offset+limit, len(names))] {
		p.Members = append(p.Members, sc.children[n])
	}
	return p, nil
}

// Stat describes one member ("" is the archive's root).
func Stat(ctx context.Context, src Source, f Format, name string, opt Options) (Member, error) {
	sc, err := scanMember(ctx, src, f, name, opt, false)
	if err != nil {
		return Member{}, err
	}
	if !sc.found {
		return Member{}, errs.New(errs.PathNotFound, "no such member in the archive")
	}
	return sc.self, nil
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
	return pass(ctx, src, f, opt, func(s *stream, e entry, seen map[string]bool) error {
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

// pass opens src for one bounded pass and calls fn with each entry in
// stored order and the names seen so far (a name stored twice: the
// first counts): what Walk and Each share.
func pass(ctx context.Context, src Source, f Format, opt Options, fn func(s *stream, e entry, seen map[string]bool) error) error {
	g := &guard{ctx: ctx, lim: opt.Limits.withDefaults()}
	s, err := open(g, src, f)
	if err != nil {
		return err
	}
	defer s.close()
	seen := map[string]bool{}
	return s.each(func(e entry) error { return fn(s, e, seen) })
}

// Each calls fn with every visible member, in stored order, its data not
// read: files, links and directories, and once each the directories only
// implied by a member below them (just before that member). What a find
// inside an archive reads. fn's error ends the pass and is returned.
func Each(ctx context.Context, src Source, f Format, opt Options, fn func(m Member) error) error {
	return pass(ctx, src, f, opt, func(_ *stream, e entry, seen map[string]bool) error {
		if e.Name == "" || seen[e.Name] || !opt.visible(e.Name, e.Type == Dir) {
			return nil
		}
		for i := 0; i < len(e.Name); i++ {
			if dir := e.Name[:i]; e.Name[i] == '/' && !seen[dir] {
				seen[dir] = true
				if err := fn(Member{Name: dir, Type: Dir, Implied: true}); err != nil {
					return err
				}
			}
		}
		seen[e.Name] = true
		return fn(e.Member)
	})
}
