package git

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"

	sfs "github.com/serverfs/serverfs/fs"
)

// packReader reads commits and trees of a history request straight from
// the repository's packs: the object's offset from the pack index (a
// binary search; no offset-to-id table is built), its data inflated and
// its delta chain applied, without hashing what it reads (go-git's
// storage computes the SHA-1 of every object it caches and builds the
// index's reverse table for every request). Objects it cannot answer
// (loose ones, ones of an odd pack, ones larger than maxPackObject) are
// left to go-git's storage by get answering ok false, so the answers stay
// go-git's whatever the repository holds.
type packReader struct {
	packs []*readPack
	// cache holds inflated objects by pack and offset (delta bases are
	// read again for each object of their chain); it is dropped whole
	// when it holds more than maxPackCacheBytes.
	cache      map[packOffset]*packObject
	cacheBytes int
	zr         io.ReadCloser
	br         *bufio.Reader
}

type readPack struct {
	idx  *idxfile.MemoryIndex
	f    *sfs.File
	size int64
	// chunks caches the pack's bytes read so far, by packChunk-sized
	// chunk (one pread each instead of one per object); dropped whole
	// beyond maxPackChunks.
	chunks map[int64][]byte
}

const (
	packChunk     = 64 << 10
	maxPackChunks = 128 // 8 MiB
)

// ReadAt reads the pack through its chunk cache.
func (p *readPack) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		if off >= p.size {
			return n, io.EOF
		}
		ci := off / packChunk
		c, ok := p.chunks[ci]
		if !ok {
			if len(p.chunks) >= maxPackChunks {
				clear(p.chunks)
			}
			c = make([]byte, min(packChunk, p.size-ci*packChunk))
			m, err := p.f.ReadAt(c, ci*packChunk)
			if m < len(c) {
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return n, err
			}
			p.chunks[ci] = c
		}
		k := copy(b[n:], c[off-ci*packChunk:])
		n += k
		off += int64(k)
	}
	return n, nil
}

type packOffset struct {
	pack int
	off  int64
}

// packObject is an inflated object: its type and content.
type packObject struct {
	typ  plumbing.ObjectType
	data []byte
}

const (
	// maxPackCacheBytes bounds packReader's cache (within the 64 MiB a
	// heavy call is admitted at, with history's own caches).
	maxPackCacheBytes = 16 << 20
	// maxPackObject is the largest object packReader inflates; larger
	// ones (never a commit or tree of a sane repository) go to go-git.
	maxPackObject = 4 << 20
	// maxDeltaDepth bounds a delta chain (git writes at most 4095).
	maxDeltaDepth = 10_000
	// maxPackIndexBytes bounds one pack index read into memory.
	maxPackIndexBytes = 256 << 20
	// maxPacks bounds the packs packReader opens; with more, go-git reads.
	maxPacks = 256
)

// newPackReader opens the packs of .git/objects/pack. It answers nil (and
// go-git reads everything) when the packs cannot be listed or read.
func (r *Repo) newPackReader() *packReader {
	ents, more, err := r.ctl.ReadDir(".git/objects/pack", maxStorageDirEntries)
	if err != nil || more {
		return nil
	}
	names := map[string]bool{}
	for _, e := range ents {
		names[e.Name] = true
	}
	pr := &packReader{cache: map[packOffset]*packObject{}}
	for _, e := range ents {
		base, ok := strings.CutSuffix(e.Name, ".idx")
		if !ok || !strings.HasPrefix(base, "pack-") || !names[base+".pack"] {
			continue
		}
		if len(pr.packs) == maxPacks {
			pr.close()
			return nil
		}
		p, err := r.openReadPack(".git/objects/pack/" + base)
		if err != nil {
			pr.close()
			return nil
		}
		pr.packs = append(pr.packs, p)
	}
	return pr
}

func (r *Repo) openReadPack(base string) (*readPack, error) {
	fi, err := r.ctl.Open(base + ".idx")
	if err != nil {
		return nil, err
	}
	defer fi.Close()
	idx := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(bufio.NewReader(io.LimitReader(fi, maxPackIndexBytes))).Decode(idx); err != nil {
		return nil, err
	}
	f, err := r.ctl.Open(base + ".pack")
	if err != nil {
		return nil, err
	}
	st, err := f.Fstat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &readPack{idx: idx, f: f, size: st.Size, chunks: map[int64][]byte{}}, nil
}

func (pr *packReader) close() {
	if pr == nil {
		return
	}
	for _, p := range pr.packs {
		p.f.Close()
		clear(p.chunks)
	}
	pr.packs = nil
	clear(pr.cache)
}

// get reads the object id from the packs; ok is false when it is in none
// of them (or too large), and go-git's storage should read it.
func (pr *packReader) get(id plumbing.Hash) (o *packObject, ok bool, err error) {
	if pr == nil {
		return nil, false, nil
	}
	for i, p := range pr.packs {
		off, err := p.idx.FindOffset(id)
		if err != nil {
			continue
		}
		o, err := pr.at(i, off, 0)
		if errors.Is(err, errPackTooLarge) {
			return nil, false, nil
		}
		return o, err == nil, err
	}
	return nil, false, nil
}

var errPackTooLarge = errors.New("pack object too large for the pack reader")

// at reads the object at off of pack i.
func (pr *packReader) at(i int, off int64, depth int) (*packObject, error) {
	key := packOffset{i, off}
	if o, ok := pr.cache[key]; ok {
		return o, nil
	}
	if depth > maxDeltaDepth {
		return nil, fmt.Errorf("pack delta chain deeper than %d", maxDeltaDepth)
	}
	p := pr.packs[i]
	if off < 12 || off >= p.size {
		return nil, fmt.Errorf("pack offset %d out of range", off)
	}
	sr := io.NewSectionReader(p, off, p.size-off)
	if pr.br == nil {
		pr.br = bufio.NewReaderSize(sr, 4<<10)
	} else {
		pr.br.Reset(sr)
	}
	br := pr.br
	c, err := br.ReadByte()
	if err != nil {
		return nil, err
	}
	typ := plumbing.ObjectType((c >> 4) & 7)
	size := uint64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if shift > 60 {
			return nil, errors.New("pack object size overflows")
		}
		if c, err = br.ReadByte(); err != nil {
			return nil, err
		}
		size |= uint64(c&0x7f) << shift
	}
	if size > maxPackObject {
		return nil, errPackTooLarge
	}
	var baseOff int64 = -1
	var baseID plumbing.Hash
	switch typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case plumbing.OFSDeltaObject:
		if c, err = br.ReadByte(); err != nil {
			return nil, err
		}
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if rel > 1<<55 {
				return nil, errors.New("pack delta offset overflows")
			}
			if c, err = br.ReadByte(); err != nil {
				return nil, err
			}
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		if baseOff = off - rel; rel <= 0 || baseOff < 12 {
			return nil, errors.New("pack delta base out of range")
		}
	case plumbing.REFDeltaObject:
		if _, err := io.ReadFull(br, baseID[:]); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("pack object of type %d", typ)
	}
	data, err := pr.inflate(br, size)
	if err != nil {
		return nil, err
	}
	var o *packObject
	switch {
	case baseOff >= 0 || typ == plumbing.REFDeltaObject:
		var base *packObject
		if baseOff >= 0 {
			base, err = pr.at(i, baseOff, depth+1)
		} else {
			base, err = pr.refBase(baseID, depth+1)
		}
		if err != nil {
			return nil, err
		}
		out, err := packfile.PatchDelta(base.data, data)
		if err != nil {
			return nil, err
		}
		if len(out) > maxPackObject {
			return nil, errPackTooLarge
		}
		o = &packObject{typ: base.typ, data: out}
	default:
		o = &packObject{typ: typ, data: data}
	}
	if pr.cacheBytes += len(o.data) + 64; pr.cacheBytes > maxPackCacheBytes {
		clear(pr.cache)
		pr.cacheBytes = len(o.data) + 64
	}
	pr.cache[key] = o
	return o, nil
}

// refBase is a REF_DELTA's base, in any of the packs.
func (pr *packReader) refBase(id plumbing.Hash, depth int) (*packObject, error) {
	for i, p := range pr.packs {
		if off, err := p.idx.FindOffset(id); err == nil {
			return pr.at(i, off, depth)
		}
	}
	return nil, errPackTooLarge // a thin pack's base elsewhere: go-git reads it
}

// inflate reads size bytes of zlib data from br.
func (pr *packReader) inflate(br *bufio.Reader, size uint64) ([]byte, error) {
	var err error
	if pr.zr == nil {
		pr.zr, err = zlib.NewReader(br)
	} else {
		err = pr.zr.(zlib.Resetter).Reset(br, nil)
	}
	if err != nil {
		return nil, err
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(pr.zr, data); err != nil {
		return nil, fmt.Errorf("pack object inflates short: %w", err)
	}
	return data, nil
}

// knownObject is a packObject as a go-git EncodedObject whose id is the
// one it was looked up by (not computed again).
type knownObject struct {
	id plumbing.Hash
	*packObject
}

func (o knownObject) Hash() plumbing.Hash             { return o.id }
func (o knownObject) Type() plumbing.ObjectType       { return o.typ }
func (o knownObject) SetType(plumbing.ObjectType)     {}
func (o knownObject) Size() int64                     { return int64(len(o.data)) }
func (o knownObject) SetSize(int64)                   {}
func (o knownObject) Writer() (io.WriteCloser, error) { return nil, errReadOnly }
func (o knownObject) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.data)), nil
}
