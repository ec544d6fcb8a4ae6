package git

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"

	sfs "github.com/serverfs/serverfs/fs"
)

// Object sizes from headers alone. go-git's EncodedObjectSize inflates a
// packed delta's whole delta data to read the result size it starts with:
// a delta whose data is mostly inserted bytes is as large as the object.
// headerSize reads only what git's own packed_object_info reads: a loose
// object's "type size" prefix; a packed entry's header, and for a delta
// the first bytes of its inflated data.

// errNoHeader sends headerSize's caller to go-git (an index format it
// does not read, an object it did not find).
var errNoHeader = errors.New("object header not found")

// headerSize is the size of object h from its headers, reading a few
// bytes: the loose object, else the pack index entries (binary search
// with positioned reads, nothing loaded) and the pack entry.
func (r *Repo) headerSize(h plumbing.Hash) (int64, error) {
	hx := h.String()
	f, err := r.ctl.Open(".git/objects/" + hx[:2] + "/" + hx[2:])
	if err == nil {
		defer f.Close()
		or, err := objfile.NewReader(f)
		if err != nil {
			return 0, err
		}
		defer or.Close()
		_, size, err := or.Header()
		return size, err
	}
	if c := sfs.CodeOf(err); c != sfs.CodePathNotFound && c != sfs.CodeNotADirectory {
		return 0, err
	}
	r.packsOnce.Do(func() {
		ents, _, err := r.ctl.ReadDir(".git/objects/pack", maxStorageDirEntries)
		if err != nil {
			return
		}
		for _, e := range ents {
			if name, ok := strings.CutSuffix(e.Name, ".idx"); ok && strings.HasPrefix(name, "pack-") {
				r.packs = append(r.packs, ".git/objects/pack/"+name)
			}
		}
	})
	for _, p := range r.packs {
		off, err := r.packOffset(p+".idx", h)
		if err == errNoHeader {
			continue
		}
		if err != nil {
			return 0, err
		}
		return r.packedSize(p+".pack", off)
	}
	return 0, errNoHeader
}

// packOffset finds h in a version 2 pack index by positioned reads: the
// header and fan-out table, then idxSearch.
func (r *Repo) packOffset(idxPath string, h plumbing.Hash) (int64, error) {
	f, err := r.ctl.Open(idxPath)
	if err != nil {
		return 0, errNoHeader
	}
	defer f.Close()
	var head [8 + 256*4]byte
	if _, err := f.ReadAt(head[:], 0); err != nil || !bytes.Equal(head[:8], []byte("\377tOc\x00\x00\x00\x02")) {
		return 0, errNoHeader // version 1, or not an index: go-git decides
	}
	off, ok, err := idxSearch(&fileIndex{ra: f}, head[8:], h)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, errNoHeader
	}
	return off, nil
}

// Pack entry types (gitformat-pack).
const (
	packOfsDelta = 6
	packRefDelta = 7
)

// packedSize reads the pack entry at off: its type and size; for a delta,
// past the base reference, the result size from the start of the delta
// data (the base's size, then the result's, as varints), inflating only
// those bytes.
func (r *Repo) packedSize(packPath string, off int64) (int64, error) {
	f, err := r.ctl.Open(packPath)
	if err != nil {
		return 0, errNoHeader
	}
	defer f.Close()
	var buf [64]byte
	n, err := f.ReadAt(buf[:], off)
	if n == 0 {
		return 0, err
	}
	b := buf[:n]
	bad := errors.New("a pack entry header ServerFS cannot read")
	i := 0
	c := b[i]
	typ := (c >> 4) & 7
	size := int64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if i++; i >= len(b) || shift > 56 {
			return 0, bad
		}
		c = b[i]
		size |= int64(c&0x7f) << shift
	}
	i++
	switch typ {
	case 1, 2, 3, 4: // commit, tree, blob, tag
		return size, nil
	case packOfsDelta:
		for i < len(b) && b[i]&0x80 != 0 {
			i++
		}
		i++
	case packRefDelta:
		i += 20
	default:
		return 0, bad
	}
	if i > len(b) {
		return 0, bad
	}
	zr, err := zlib.NewReader(io.NewSectionReader(f, off+int64(i), 1<<62))
	if err != nil {
		return 0, err
	}
	defer zr.Close()
	var d [20]byte // two varints of at most 10 bytes
	k, _ := io.ReadFull(zr, d[:])
	varint := func(p []byte) (int64, []byte, bool) {
		var v int64
		for j, shift := 0, 0; j < len(p) && shift <= 56; j, shift = j+1, shift+7 {
			v |= int64(p[j]&0x7f) << shift
			if p[j]&0x80 == 0 {
				return v, p[j+1:], true
			}
		}
		return 0, nil, false
	}
	_, rest, ok := varint(d[:k])
	if !ok {
		return 0, bad
	}
	target, _, ok := varint(rest)
	if !ok {
		return 0, bad
	}
	return target, nil
}
