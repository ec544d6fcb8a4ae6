package git

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git/internal/pack"
)

// Objects located and sized from their headers alone, as git's own
// packed_object_info reads them: a loose object's "type size" prefix (its
// first inflated bytes); a packed entry's header, and for a delta the
// first bytes of its inflated data (the base's size, then the result's).
// Nothing of an object's content is inflated before its size is known
// (go-git's storage, which reads no object here, inflates a loose object
// whole when it is looked up without a large-object threshold, and a
// packed delta's whole data to learn the size it starts with).

// objectLoc is where an object is: a loose object, or an entry of a pack.
type objectLoc struct {
	loose *sfs.File // the open loose object; nil when packed
	pack  int       // index in r.packList()
	off   int64
}

func (l objectLoc) close() {
	if l.loose != nil {
		l.loose.Close()
	}
}

// objHeader is what an object's headers tell.
type objHeader struct {
	// typ is the object's type; for a pack delta, OFSDeltaObject or
	// REFDeltaObject (the result has its base's type).
	typ plumbing.ObjectType
	// size is the object's size (a delta's: the result's).
	size int64
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

// repoPack is one pack of the object store, its index read on first use.
type repoPack struct {
	base   string // ".git/objects/pack/pack-<id>", without .idx or .pack
	idx    *pack.Index
	idxErr error
	loaded bool
}

// packList is the packs of .git/objects/pack (those with an index and a
// pack file), listed once.
func (r *Repo) packList() []*repoPack {
	r.packsOnce.Do(func() {
		ents, _, err := r.ctl.ReadDir(".git/objects/pack", maxStorageDirEntries)
		if err != nil {
			return
		}
		names := map[string]bool{}
		for _, e := range ents {
			names[e.Name] = true
		}
		for _, e := range ents {
			if name, ok := strings.CutSuffix(e.Name, ".idx"); ok && strings.HasPrefix(name, "pack-") && names[name+".pack"] {
				r.packs = append(r.packs, &repoPack{base: ".git/objects/pack/" + name})
			}
		}
	})
	return r.packs
}

// index is the pack's index (from the indexes history requests keep).
func (r *Repo) packIndex(p *repoPack) (*pack.Index, error) {
	if !p.loaded {
		p.loaded = true
		f, err := r.ctl.Open(p.base + ".idx")
		if err != nil {
			p.idxErr = err
		} else {
			p.idx, p.idxErr = pack.ReadIndex(f)
			f.Close()
		}
		if errors.Is(p.idxErr, pack.ErrIndex) {
			p.idxErr = repoErr(sfs.CodeRepoUnsupported, r.w.Alias(), fmt.Sprintf("has a pack index that is not a version 2 index (%s.idx); git index-pack writes one", p.base[len(".git/"):]))
		}
	}
	return p.idx, p.idxErr
}

// locate finds object id: loose (the file opened), else in a pack. It is
// plumbing.ErrObjectNotFound when the repository has no such object,
// REPO_UNSUPPORTED for an object a replace ref replaces (git would read
// the replacement).
func (r *Repo) locate(id plumbing.Hash) (objectLoc, error) {
	if r.replaced[id] {
		return objectLoc{}, repoErr(sfs.CodeRepoUnsupported, r.w.Alias(), fmt.Sprintf("replaces the object %s (refs/replace/%s): git reads the replacement in its place, ServerFS does not; remove the replace ref or set core.useReplaceRefs=false", id, id))
	}
	hx := id.String()
	f, err := r.ctl.Open(".git/objects/" + hx[:2] + "/" + hx[2:])
	if err == nil {
		return objectLoc{loose: f}, nil
	}
	if c := sfs.CodeOf(err); c != sfs.CodePathNotFound && c != sfs.CodeNotADirectory {
		return objectLoc{}, err
	}
	for i, p := range r.packList() {
		idx, err := r.packIndex(p)
		if err != nil {
			return objectLoc{}, err
		}
		if off, ok := idx.Find(id); ok {
			return objectLoc{pack: i, off: off}, nil
		}
	}
	return objectLoc{}, plumbing.ErrObjectNotFound
}

// header reads the headers of the object at loc.
func (r *Repo) header(loc objectLoc) (objHeader, error) {
	if loc.loose != nil {
		if _, err := loc.loose.Seek(0, io.SeekStart); err != nil {
			return objHeader{}, err
		}
		zr, err := newInflater(loc.loose)
		if err != nil {
			return objHeader{}, damaged("a loose object that does not inflate: %v", err)
		}
		defer zr.Close()
		return looseHeader(zr)
	}
	f, err := r.ctl.Open(r.packList()[loc.pack].base + ".pack")
	if err != nil {
		return objHeader{}, err
	}
	defer f.Close()
	return packedHeader(f, loc.off)
}

// headerSize is the size of object h from its headers.
func (r *Repo) headerSize(h plumbing.Hash) (int64, error) {
	loc, err := r.locate(h)
	if err != nil {
		return 0, err
	}
	defer loc.close()
	hd, err := r.header(loc)
	return hd.size, err
}

// objectType is the type of object id from its headers (for a delta,
// its base's, down the chain).
func (r *Repo) objectType(id plumbing.Hash) (plumbing.ObjectType, error) {
	loc, err := r.locate(id)
	if err != nil {
		return 0, err
	}
	for depth := 0; ; depth++ {
		hd, err := r.header(loc)
		loc.close()
		if err != nil {
			return 0, err
		}
		switch {
		case hd.typ != plumbing.OFSDeltaObject && hd.typ != plumbing.REFDeltaObject:
			return hd.typ, nil
		case depth == pack.MaxDeltaDepth:
			return 0, damaged("a delta chain deeper than %d", pack.MaxDeltaDepth)
		case hd.typ == plumbing.OFSDeltaObject:
			loc = objectLoc{pack: loc.pack, off: hd.baseOff}
		default:
			if loc, err = r.locate(hd.baseID); err != nil {
				return 0, err
			}
		}
	}
}

// maxLooseHeader bounds a loose object's "type size\0" prefix.
const maxLooseHeader = 32

// looseHeader reads a loose object's "type size\0" from its inflated
// stream, leaving zr at the content.
func looseHeader(zr io.Reader) (objHeader, error) {
	var b [1]byte
	var head []byte
	for {
		if _, err := io.ReadFull(zr, b[:]); err != nil {
			return objHeader{}, damaged("a loose object whose header does not inflate: %v", err)
		}
		if b[0] == 0 {
			break
		}
		if head = append(head, b[0]); len(head) > maxLooseHeader {
			return objHeader{}, damaged("a loose object with an overlong header")
		}
	}
	ts, ss, ok := strings.Cut(string(head), " ")
	typ, err := plumbing.ParseObjectType(ts)
	size, serr := strconv.ParseInt(ss, 10, 64)
	if !ok || err != nil || serr != nil || size < 0 || !typ.Valid() || typ > plumbing.TagObject || strconv.FormatInt(size, 10) != ss {
		return objHeader{}, damaged("a loose object with the header %q", head)
	}
	return objHeader{typ: typ, size: size}, nil
}

// Pack entry types (gitformat-pack).
const (
	packOfsDelta = 6
	packRefDelta = 7
)

// packedHeader reads the pack entry at off of pack f: its type and size;
// for a delta, past the base reference, the result size from the start
// of the delta data, inflating only those bytes.
func packedHeader(f io.ReaderAt, off int64) (objHeader, error) {
	var buf [64]byte
	n, err := f.ReadAt(buf[:], off)
	if n == 0 {
		if err == io.EOF {
			err = damaged("a pack entry past the end of its pack")
		}
		return objHeader{}, err
	}
	b := buf[:n]
	i := 0
	c := b[i]
	typ := (c >> 4) & 7
	size := int64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if i++; i >= len(b) || shift > 56 {
			return objHeader{}, damaged("a pack entry header that does not end")
		}
		c = b[i]
		size |= int64(c&0x7f) << shift
	}
	i++
	hd := objHeader{typ: plumbing.ObjectType(typ), size: size}
	switch typ {
	case 1, 2, 3, 4: // commit, tree, blob, tag
		hd.dataOff = off + int64(i)
		return hd, nil
	case packOfsDelta:
		if i >= len(b) {
			return objHeader{}, damaged("a pack delta header that does not end")
		}
		c := b[i]
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if i++; i >= len(b) || rel > 1<<55 {
				return objHeader{}, damaged("a pack delta base offset that does not end")
			}
			c = b[i]
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		i++
		if hd.baseOff = off - rel; rel <= 0 || hd.baseOff < 12 {
			return objHeader{}, damaged("a pack delta base out of its pack")
		}
	case packRefDelta:
		if i+20 > len(b) {
			return objHeader{}, damaged("a pack delta header that does not end")
		}
		copy(hd.baseID[:], b[i:])
		i += 20
	default:
		return objHeader{}, damaged("a pack entry of type %d", typ)
	}
	hd.deltaLen, hd.dataOff = size, off+int64(i)
	zr, err := newInflater(io.NewSectionReader(f, hd.dataOff, 1<<62))
	if err != nil {
		return objHeader{}, damaged("a pack delta that does not inflate: %v", err)
	}
	defer zr.Close()
	var d [20]byte // two varints of at most 10 bytes
	k, _ := io.ReadFull(zr, d[:])
	_, rest, ok := deltaVarint(d[:k])
	if !ok {
		return objHeader{}, damaged("a pack delta without its sizes")
	}
	target, _, ok := deltaVarint(rest)
	if !ok || target > 1<<62 {
		return objHeader{}, damaged("a pack delta without its sizes")
	}
	hd.size = target
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

// hasObject reports whether the repository holds id (loose or packed).
func (r *Repo) hasObject(id plumbing.Hash) bool {
	loc, err := r.locate(id)
	loc.close()
	return err == nil
}

// hasAlternates reports whether the object store borrows objects from
// others (objects/info/alternates, as git clone --shared and --reference
// leave it), which ServerFS does not read.
func (r *Repo) hasAlternates() bool {
	b, err := r.readControl(".git/objects/info/alternates")
	return err == nil && len(bytes.TrimSpace(b)) > 0
}
