// Package odb reads a repository's object database: objects located
// loose or in a pack, sized from their headers, and streamed (deltas
// applied as they are read), whatever their size, in bounded memory.
package odb

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git/internal/pack"
	"github.com/serverfs/serverfs/internal/errs"
)

// Objects located and sized from their headers alone, as git's own
// packed_object_info reads them: a loose object's "type size" prefix (its
// first inflated bytes); a packed entry's header, and for a delta the
// first bytes of its inflated data (the base's size, then the result's).
// Nothing of an object's content is inflated before its size is known
// (go-git's storage, which reads no object here, inflates a loose object
// whole when it is looked up without a large-object threshold, and a
// packed delta's whole data to learn the size it starts with).

// Loc is where an object is: a loose object, or an entry of a pack.
type Loc struct {
	loose *sfs.File // the open loose object; nil when packed
	pack  int       // index in st.packList()
	off   int64
}

// Packed reports whether the object is in a pack (not loose).
func (l Loc) Packed() bool { return l.loose == nil }

// Close closes the open loose object, if any.
func (l Loc) Close() {
	if l.loose != nil {
		l.loose.Close()
	}
}

// Header is what an object's headers tell.
type Header struct {
	// Type is the object's type; for a pack delta, OFSDeltaObject or
	// REFDeltaObject (the result has its base's type).
	Type plumbing.ObjectType
	// Size is the object's size (a delta's: the result's).
	Size int64
	// deltaLen is a pack delta's own data size, inflated; dataOff where
	// an entry's zlib data starts; baseOff (OFS) and baseID (REF) name
	// a delta's base.
	deltaLen int64
	dataOff  int64
	baseOff  int64
	baseID   plumbing.Hash
}

// errObjectDamaged marks an object whose stored form cannot be read
// (pack.ErrDamaged, which the pack reader answers too).
var errObjectDamaged = pack.ErrDamaged

func damaged(format string, args ...any) error { return pack.Damaged(format, args...) }

// maxDirEntries bounds the listing of .git/objects/pack, as every
// directory of .git is bounded.
const maxDirEntries = 1 << 20

// Store is a repository's object store as ServerFS reads it: objects
// located loose or in a pack, sized from their headers, streamed.
type Store struct {
	ctl   *sfs.Control
	alias string // the workdir, in errors
	// packs are the pack files, listed once (packList).
	packsOnce sync.Once
	packs     []*repoPack
	// replaced are the objects refs/replace names (git reads their
	// replacements instead; ServerFS refuses to read them).
	replaced map[plumbing.Hash]bool
}

// New is the object store of the repository ctl holds, the workdir
// alias.
func New(ctl *sfs.Control, alias string) *Store { return &Store{ctl: ctl, alias: alias} }

// Replace marks id as an object a replace ref replaces: Locate then
// refuses it.
func (st *Store) Replace(id plumbing.Hash) {
	if st.replaced == nil {
		st.replaced = map[plumbing.Hash]bool{}
	}
	st.replaced[id] = true
}

// HasReplacements reports whether any object is replaced (git then
// ignores the commit-graph, which records the objects as written).
func (st *Store) HasReplacements() bool { return len(st.replaced) > 0 }

// repoPack is one pack of the object store, its index read on first use.
type repoPack struct {
	base   string // ".git/objects/pack/pack-<id>", without .idx or .pack
	idx    *pack.Index
	idxErr error
	loaded bool
}

// packList is the packs of .git/objects/pack (those with an index and a
// pack file), listed once.
func (st *Store) packList() []*repoPack {
	st.packsOnce.Do(func() {
		ents, _, err := st.ctl.ReadDir(".git/objects/pack", maxDirEntries)
		if err != nil {
			return
		}
		names := map[string]bool{}
		for _, e := range ents {
			names[e.Name] = true
		}
		for _, e := range ents {
			if name, ok := strings.CutSuffix(e.Name, ".idx"); ok && strings.HasPrefix(name, "pack-") && names[name+".pack"] {
				st.packs = append(st.packs, &repoPack{base: ".git/objects/pack/" + name})
			}
		}
	})
	return st.packs
}

// index is the pack's index (from the indexes history requests keep).
func (st *Store) packIndex(p *repoPack) (*pack.Index, error) {
	if !p.loaded {
		p.loaded = true
		f, err := st.ctl.Open(p.base + ".idx")
		if err != nil {
			p.idxErr = err
		} else {
			p.idx, p.idxErr = pack.ReadIndex(f)
			f.Close()
		}
		if errors.Is(p.idxErr, pack.ErrIndex) {
			p.idxErr = errs.At(errs.RepoUnsupported, st.alias, "", fmt.Sprintf("has a pack index that is not a version 2 index (%s.idx); git index-pack writes one", p.base[len(".git/"):]))
		}
	}
	return p.idx, p.idxErr
}

// Locate finds object id: loose (the file opened), else in a pack. It is
// plumbing.ErrObjectNotFound when the repository has no such object,
// REPO_UNSUPPORTED for an object a replace ref replaces (git would read
// the replacement).
func (st *Store) Locate(id plumbing.Hash) (Loc, error) {
	if st.replaced[id] {
		return Loc{}, errs.At(errs.RepoUnsupported, st.alias, "", fmt.Sprintf("replaces the object %s (refs/replace/%s): git reads the replacement in its place, ServerFS does not; remove the replace ref or set core.useReplaceRefs=false", id, id))
	}
	hx := id.String()
	f, err := st.ctl.Open(".git/objects/" + hx[:2] + "/" + hx[2:])
	if err == nil {
		return Loc{loose: f}, nil
	}
	if c := errs.CodeOf(err); c != errs.PathNotFound && c != errs.NotADirectory {
		return Loc{}, err
	}
	for i, p := range st.packList() {
		idx, err := st.packIndex(p)
		if err != nil {
			return Loc{}, err
		}
		if off, ok := idx.Find(id); ok {
			return Loc{pack: i, off: off}, nil
		}
	}
	return Loc{}, plumbing.ErrObjectNotFound
}

// ReadHeader reads the headers of the object at loc.
func (st *Store) ReadHeader(loc Loc) (Header, error) {
	if loc.loose != nil {
		if _, err := loc.loose.Seek(0, io.SeekStart); err != nil {
			return Header{}, err
		}
		zr, err := newInflater(loc.loose)
		if err != nil {
			return Header{}, damaged("a loose object that does not inflate: %v", err)
		}
		defer zr.Close()
		return looseHeader(zr)
	}
	f, err := st.ctl.Open(st.packList()[loc.pack].base + ".pack")
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	return packedHeader(f, loc.off)
}

// HeaderSize is the size of object h from its headers.
func (st *Store) HeaderSize(h plumbing.Hash) (int64, error) {
	loc, err := st.Locate(h)
	if err != nil {
		return 0, err
	}
	defer loc.Close()
	hd, err := st.ReadHeader(loc)
	return hd.Size, err
}

// ObjectType is the type of object id from its headers (for a delta,
// its base's, down the chain).
func (st *Store) ObjectType(id plumbing.Hash) (plumbing.ObjectType, error) {
	loc, err := st.Locate(id)
	if err != nil {
		return 0, err
	}
	for depth := 0; ; depth++ {
		hd, err := st.ReadHeader(loc)
		loc.Close()
		if err != nil {
			return 0, err
		}
		switch {
		case hd.Type != plumbing.OFSDeltaObject && hd.Type != plumbing.REFDeltaObject:
			return hd.Type, nil
		case depth == pack.MaxDeltaDepth:
			return 0, damaged("a delta chain deeper than %d", pack.MaxDeltaDepth)
		case hd.Type == plumbing.OFSDeltaObject:
			loc = Loc{pack: loc.pack, off: hd.baseOff}
		default:
			if loc, err = st.Locate(hd.baseID); err != nil {
				return 0, err
			}
		}
	}
}

// maxLooseHeader bounds a loose object's "type size\0" prefix.
const maxLooseHeader = 32

// looseHeader reads a loose object's "type size\0" from its inflated
// stream, leaving zr at the content.
func looseHeader(zr io.Reader) (Header, error) {
	var b [1]byte
	var head []byte
	for {
		if _, err := io.ReadFull(zr, b[:]); err != nil {
			return Header{}, damaged("a loose object whose header does not inflate: %v", err)
		}
		if b[0] == 0 {
			break
		}
		if head = append(head, b[0]); len(head) > maxLooseHeader {
			return Header{}, damaged("a loose object with an overlong header")
		}
	}
	ts, ss, ok := strings.Cut(string(head), " ")
	typ, err := plumbing.ParseObjectType(ts)
	size, serr := strconv.ParseInt(ss, 10, 64)
	if !ok || err != nil || serr != nil || size < 0 || !typ.Valid() || typ > plumbing.TagObject || strconv.FormatInt(size, 10) != ss {
		return Header{}, damaged("a loose object with the header %q", head)
	}
	return Header{Type: typ, Size: size}, nil
}

// Pack entry types (gitformat-pack).
const (
	packOfsDelta = 6
	packRefDelta = 7
)

// packedHeader reads the pack entry at off of pack f: its type and size;
// for a delta, past the base reference, the result size from the start
// of the delta data, inflating only those bytes.
func packedHeader(f io.ReaderAt, off int64) (Header, error) {
	var buf [64]byte
	n, err := f.ReadAt(buf[:], off)
	if n == 0 {
		if err == io.EOF {
			err = damaged("a pack entry past the end of its pack")
		}
		return Header{}, err
	}
	b := buf[:n]
	i := 0
	c := b[i]
	typ := (c >> 4) & 7
	size := int64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if i++; i >= len(b) || shift > 56 {
			return Header{}, damaged("a pack entry header that does not end")
		}
		c = b[i]
		size |= int64(c&0x7f) << shift
	}
	i++
	hd := Header{Type: plumbing.ObjectType(typ), Size: size}
	switch typ {
	case 1, 2, 3, 4: // commit, tree, blob, tag
		hd.dataOff = off + int64(i)
		return hd, nil
	case packOfsDelta:
		if i >= len(b) {
			return Header{}, damaged("a pack delta header that does not end")
		}
		c := b[i]
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if i++; i >= len(b) || rel > 1<<55 {
				return Header{}, damaged("a pack delta base offset that does not end")
			}
			c = b[i]
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		i++
		if hd.baseOff = off - rel; rel <= 0 || hd.baseOff < 12 {
			return Header{}, damaged("a pack delta base out of its pack")
		}
	case packRefDelta:
		if i+20 > len(b) {
			return Header{}, damaged("a pack delta header that does not end")
		}
		copy(hd.baseID[:], b[i:])
		i += 20
	default:
		return Header{}, damaged("a pack entry of type %d", typ)
	}
	hd.deltaLen, hd.dataOff = size, off+int64(i)
	zr, err := newInflater(io.NewSectionReader(f, hd.dataOff, 1<<62))
	if err != nil {
		return Header{}, damaged("a pack delta that does not inflate: %v", err)
	}
	defer zr.Close()
	var d [20]byte // two varints of at most 10 bytes
	k, _ := io.ReadFull(zr, d[:])
	_, rest, ok := deltaVarint(d[:k])
	if !ok {
		return Header{}, damaged("a pack delta without its sizes")
	}
	target, _, ok := deltaVarint(rest)
	if !ok || target > 1<<62 {
		return Header{}, damaged("a pack delta without its sizes")
	}
	hd.Size = target
	return hd, nil
}

// deltaVarint reads a delta header's size (little-endian base 128).
func deltaVarint(p []byte) (int64, []byte, bool) {
	var v int64
	for j, shift := 0, 0; j < len(p) && shift <= 56; j, shift = j+1, shift+7 {
		v |= int64(p[j]&0x7f) << shift
		if p[j]&0x80 == 0 {
			return v, p[j+1:], true
		}
	}
	return 0, nil, false
}

// Has reports whether the repository holds id (loose or packed).
func (st *Store) Has(id plumbing.Hash) bool {
	loc, err := st.Locate(id)
	loc.Close()
	return err == nil
}
