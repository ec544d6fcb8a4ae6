// Package pack reads the objects of a repository's packs (.git/objects/pack)
// straight from their bytes: the pack index searched in place, entries
// inflated and delta chains applied, small objects only; and the limits
// and the damage error the object code above it shares.
package pack

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"

	sfs "github.com/serverfs/serverfs/fs"
)

// Reader reads the small objects of a request straight
// from the repository's packs: the object's offset from the pack index (a
// binary search; no offset-to-id table is built), its data inflated and
// its delta chain applied (bases cached), without hashing what it reads.
// Objects it cannot answer (loose ones, ones of an odd pack, ones larger
// than MaxObject) are left to the caller's streams by Get answering ok
// false.
type Reader struct {
	packs []*readPack
	// cache holds inflated objects by pack and offset (delta bases are
	// read again for each object of their chain); it is dropped whole
	// when it holds more than maxPackCacheBytes.
	cache      map[packOffset]*Object
	cacheBytes int
	// byID is the objects get answered, by id (no index search again);
	// dropped with cache.
	byID map[plumbing.Hash]*Object
	inf  inflater
	// scratch holds a delta while it is applied.
	scratch []byte
	zr      io.ReadCloser
	br      *bufio.Reader
}

type readPack struct {
	idx  *Index
	f    *sfs.File
	size int64
	// chunks caches the pack's bytes read so far, by packChunk-sized
	// chunk (one pread each instead of one per object); dropped whole
	// beyond maxPackChunks.
	chunks map[int64][]byte
	free   [][]byte // chunks of a dropped cache, for reuse
}

const (
	packChunk     = 16 << 10
	maxPackChunks = 32 // 512 KiB: fresh memory costs page faults, reading again costs a copy
)

// chunk is chunk ci of the pack, from the cache or read into it.
func (p *readPack) chunk(ci int64) ([]byte, error) {
	if c, ok := p.chunks[ci]; ok {
		return c, nil
	}
	if len(p.chunks) >= maxPackChunks {
		for _, c := range p.chunks {
			p.free = append(p.free, c[:cap(c)])
		}
		clear(p.chunks)
	}
	cn := min(packChunk, p.size-ci*packChunk)
	var c []byte
	if k := len(p.free); k > 0 {
		c, p.free = p.free[k-1][:cn], p.free[:k-1]
	} else {
		c = make([]byte, cn, packChunk)
	}
	m, err := p.f.ReadAt(c, ci*packChunk)
	if m < len(c) {
		p.free = append(p.free, c)
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	p.chunks[ci] = c
	return c, nil
}

// ReadAt reads the pack through its chunk cache.
func (p *readPack) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		if off >= p.size {
			return n, io.EOF
		}
		ci := off / packChunk
		c, err := p.chunk(ci)
		if err != nil {
			return n, err
		}
		k := copy(b[n:], c[off-ci*packChunk:])
		n += k
		off += int64(k)
	}
	return n, nil
}

// span is the pack's bytes from off, at least want of them (fewer only at
// the end of the pack or after a read error): in place in the chunk cache
// when one chunk holds them, else a copy. The slice is for reading at
// once: a later read may reuse its chunk.
func (p *readPack) span(off int64, want int) []byte {
	if off < 0 || off >= p.size {
		return nil
	}
	want = int(min(int64(want), p.size-off))
	ci := off / packChunk
	if in := off - ci*packChunk; in+int64(want) <= packChunk {
		c, err := p.chunk(ci)
		if err != nil {
			return nil
		}
		return c[in:]
	}
	b := make([]byte, want)
	m, _ := p.ReadAt(b, off)
	return b[:m]
}

type packOffset struct {
	pack int
	off  int64
}

// Object is an inflated object: its type and content.
type Object struct {
	Type plumbing.ObjectType
	Data []byte
	// TreeForm caches the caller's check of a tree (git's rawTree): 0
	// not checked, 1 in quickTree's form, 2 not.
	TreeForm uint8
}

const (
	// maxPackCacheBytes bounds Reader's cache (within the 64 MiB a
	// heavy call is admitted at, with history's own caches).
	maxPackCacheBytes = 4 << 20
	// MaxObject is the largest object Reader inflates; larger ones
	// are streamed.
	MaxObject = 4 << 20
	// MaxDeltaDepth bounds a delta chain (git writes at most 4095).
	MaxDeltaDepth = 10_000
	// maxPackIndexBytes bounds one pack index read into memory.
	maxPackIndexBytes = 256 << 20
	// maxPacks bounds the packs Reader opens; with more, every
	// object is streamed.
	maxPacks = 256
	// maxDirEntries bounds the listing of .git/objects/pack, as every
	// directory of .git is bounded.
	maxDirEntries = 1 << 20
)

// ErrDamaged marks an object whose stored form cannot be read:
// a bad header, data that does not inflate, a short or overlong stream,
// a delta that does not apply.
var ErrDamaged = errors.New("damaged object")

// Damaged is an ErrDamaged saying what is damaged.
func Damaged(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrDamaged, fmt.Sprintf(format, args...))
}

// Open opens the packs of ctl's .git/objects/pack. It answers nil (and
// every object is streamed) when the packs cannot be listed or read.
func Open(ctl *sfs.Control) *Reader {
	ents, more, err := ctl.ReadDir(".git/objects/pack", maxDirEntries)
	if err != nil || more {
		return nil
	}
	names := map[string]bool{}
	for _, e := range ents {
		names[e.Name] = true
	}
	pr := &Reader{cache: map[packOffset]*Object{}, byID: map[plumbing.Hash]*Object{}}
	for _, e := range ents {
		base, ok := strings.CutSuffix(e.Name, ".idx")
		if !ok || !strings.HasPrefix(base, "pack-") || !names[base+".pack"] {
			continue
		}
		if len(pr.packs) == maxPacks {
			pr.Close()
			return nil
		}
		p, err := openPack(ctl, ".git/objects/pack/"+base)
		if err != nil {
			pr.Close()
			return nil
		}
		pr.packs = append(pr.packs, p)
	}
	return pr
}

// Preloaded is a Reader that answers the objects of objs and no others
// (for tests of the code above it).
func Preloaded(objs map[plumbing.Hash]*Object) *Reader {
	return &Reader{cache: map[packOffset]*Object{}, byID: objs}
}

func openPack(ctl *sfs.Control, base string) (*readPack, error) {
	fi, err := ctl.Open(base + ".idx")
	if err != nil {
		return nil, err
	}
	idx, err := ReadIndex(fi)
	fi.Close()
	if err != nil {
		return nil, err
	}
	f, err := ctl.Open(base + ".pack")
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

// ReadIndex is the pack index f, from packIndexes when it holds this very
// file, else read and parsed (and then kept there).
func ReadIndex(f *sfs.File) (*Index, error) {
	st, err := f.Fstat()
	if err != nil {
		return nil, err
	}
	key := indexKey{st.Dev, st.Ino, st.Size, st.Mtime.UnixNano(), st.Ctime.UnixNano()}
	if idx := packIndexes.get(key); idx != nil {
		return idx, nil
	}
	indexReads.Add(1)
	b, err := readAllSized(f, maxPackIndexBytes)
	if err != nil {
		return nil, err
	}
	if len(b) > maxPackIndexBytes {
		return nil, errPackTooLarge
	}
	idx, err := parseRawIndex(b)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) == st.Size {
		packIndexes.put(key, idx)
	}
	return idx, nil
}

// packIndexes keeps the pack indexes history requests read, for the next
// requests of a long-lived server (a 5,000-commit repository's index is
// 650 KB, read and copied at every request otherwise).
var packIndexes = &indexCache{max: maxCachedIndexBytes}

// indexReads counts the pack indexes read from their files.
var indexReads atomic.Int64

// IndexReads is how many pack indexes were read from their files (not
// answered from the cache) since the process started (tests watch it).
func IndexReads() int64 { return indexReads.Load() }

// maxCachedIndexBytes bounds packIndexes.
const maxCachedIndexBytes = 32 << 20

// indexKey identifies an index file's content: git writes a pack's index
// once, under the pack's new name, and a file changed in place has a new
// ctime (or size, or inode when replaced), so an entry is never stale.
type indexKey struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

// indexCache holds parsed indexes by file identity, at most max bytes of
// them; the least recently used go first. Indexes are read-only, shared
// by concurrent requests.
type indexCache struct {
	mu    sync.Mutex
	max   int64
	bytes int64
	tick  uint64
	m     map[indexKey]*cachedIndex
}

type cachedIndex struct {
	idx  *Index
	used uint64
}

func (c *indexCache) get(k indexKey) *Index {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[k]
	if e == nil {
		return nil
	}
	c.tick++
	e.used = c.tick
	return e.idx
}

func (c *indexCache) put(k indexKey, idx *Index) {
	n := int64(len(idx.b))
	if n > c.max/2 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[indexKey]*cachedIndex{}
	}
	if _, ok := c.m[k]; ok {
		return
	}
	for c.bytes+n > c.max {
		var oldest indexKey
		var min uint64 = 1<<64 - 1
		for k, e := range c.m {
			if e.used < min {
				oldest, min = k, e.used
			}
		}
		c.bytes -= int64(len(c.m[oldest].idx.b))
		delete(c.m, oldest)
	}
	c.tick++
	c.m[k] = &cachedIndex{idx: idx, used: c.tick}
	c.bytes += n
}

// readAllSized reads f whole (at most limit+1 bytes) into one buffer of
// the size fstat gives, read again by io.ReadAll only if the file grew.
func readAllSized(f *sfs.File, limit int64) ([]byte, error) {
	st, err := f.Fstat()
	if err != nil {
		return nil, err
	}
	b := make([]byte, min(max(st.Size, 0), limit+1))
	n, err := io.ReadFull(f, b)
	switch {
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		return b[:n], nil // shrunk since the fstat
	case err != nil:
		return nil, err
	case int64(n) > limit:
		return b, nil
	}
	more, err := io.ReadAll(io.LimitReader(f, limit+1-int64(n)))
	return append(b, more...), err
}

func (pr *Reader) Close() {
	if pr == nil {
		return
	}
	for _, p := range pr.packs {
		p.f.Close()
		clear(p.chunks)
		p.free = nil
	}
	pr.packs = nil
	clear(pr.cache)
	clear(pr.byID)
}

// Get reads the object id from the packs; ok is false when it is in none
// of them (or too large), and the caller should stream it.
func (pr *Reader) Get(id plumbing.Hash) (o *Object, ok bool, err error) {
	return pr.Load(id, true)
}

// GetOnce is Get for an object the caller keeps decoded (a commit): it
// is not cached, unless it is read again as a delta base.
func (pr *Reader) GetOnce(id plumbing.Hash) (o *Object, ok bool, err error) {
	return pr.Load(id, false)
}

// Load is Get when keep, else GetOnce.
func (pr *Reader) Load(id plumbing.Hash, keep bool) (o *Object, ok bool, err error) {
	if pr == nil {
		return nil, false, nil
	}
	if o, ok := pr.byID[id]; ok {
		return o, true, nil
	}
	for i, p := range pr.packs {
		off, found := p.idx.Find(id)
		if !found {
			continue
		}
		o, err := pr.at(i, off, 0, keep)
		if errors.Is(err, errPackTooLarge) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		if keep {
			pr.byID[id] = o
		}
		return o, true, nil
	}
	return nil, false, nil
}

var errPackTooLarge = errors.New("pack object too large for the pack reader")

// at reads the object at off of pack i, and caches it if keep (delta
// bases always are).
func (pr *Reader) at(i int, off int64, depth int, keep bool) (*Object, error) {
	key := packOffset{i, off}
	if o, ok := pr.cache[key]; ok {
		return o, nil
	}
	if depth > MaxDeltaDepth {
		return nil, Damaged("a pack delta chain deeper than %d", MaxDeltaDepth)
	}
	p := pr.packs[i]
	if off < 12 || off >= p.size {
		return nil, Damaged("a pack offset %d out of its pack", off)
	}
	// The header: type and size, then a delta's base (at most 10 + 10
	// or 20 bytes).
	hdr := p.span(off, 32)
	n := 0
	next := func() (byte, error) {
		if n >= len(hdr) {
			return 0, io.ErrUnexpectedEOF
		}
		n++
		return hdr[n-1], nil
	}
	c, err := next()
	if err != nil {
		return nil, err
	}
	typ := plumbing.ObjectType((c >> 4) & 7)
	size := uint64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if shift > 60 {
			return nil, Damaged("a pack entry size that overflows")
		}
		if c, err = next(); err != nil {
			return nil, err
		}
		size |= uint64(c&0x7f) << shift
	}
	if size > MaxObject {
		return nil, errPackTooLarge
	}
	var baseOff int64 = -1
	var baseID plumbing.Hash
	switch typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case plumbing.OFSDeltaObject:
		if c, err = next(); err != nil {
			return nil, err
		}
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if rel > 1<<55 {
				return nil, Damaged("a pack delta offset that overflows")
			}
			if c, err = next(); err != nil {
				return nil, err
			}
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		if baseOff = off - rel; rel <= 0 || baseOff < 12 {
			return nil, Damaged("a pack delta base out of its pack")
		}
	case plumbing.REFDeltaObject:
		if n+20 > len(hdr) {
			return nil, io.ErrUnexpectedEOF
		}
		copy(baseID[:], hdr[n:])
		n += 20
	default:
		return nil, Damaged("a pack entry of type %d", typ)
	}
	var o *Object
	switch {
	case baseOff >= 0 || typ == plumbing.REFDeltaObject:
		// The base first: its reading may reuse scratch, which then
		// holds the delta until it is applied.
		var base *Object
		if baseOff >= 0 {
			base, err = pr.at(i, baseOff, depth+1, true)
		} else {
			base, err = pr.refBase(baseID, depth+1)
		}
		if err != nil {
			return nil, err
		}
		if uint64(cap(pr.scratch)) < size {
			pr.scratch = make([]byte, size)
		}
		delta := pr.scratch[:size]
		if err := pr.inflate(p, off+int64(n), delta); err != nil {
			return nil, err
		}
		out, err := applyDelta(base.Data, delta)
		if err != nil {
			return nil, err
		}
		o = &Object{Type: base.Type, Data: out}
	default:
		data := make([]byte, size)
		if err := pr.inflate(p, off+int64(n), data); err != nil {
			return nil, err
		}
		o = &Object{Type: typ, Data: data}
	}
	if !keep {
		return o, nil
	}
	if pr.cacheBytes += len(o.Data) + 64; pr.cacheBytes > maxPackCacheBytes {
		clear(pr.cache)
		clear(pr.byID)
		pr.cacheBytes = len(o.Data) + 64
	}
	pr.cache[key] = o
	return o, nil
}

// applyDelta is go-git's packfile.PatchDelta (the same checks and
// errors) into a buffer of the target size the delta gives, which it
// fills once (PatchDelta grows a bytes.Buffer); targets larger than
// MaxObject are errPackTooLarge.
func applyDelta(src, delta []byte) ([]byte, error) {
	if len(src) == 0 || len(delta) < 2 {
		return nil, packfile.ErrInvalidDelta
	}
	leb := func() (uint64, bool) {
		var v uint64
		for shift := 0; len(delta) > 0; shift += 7 {
			if shift > 56 {
				return 0, false
			}
			b := delta[0]
			delta = delta[1:]
			v |= uint64(b&0x7f) << shift
			if b&0x80 == 0 {
				break
			}
		}
		return v, true
	}
	srcSize, ok := leb()
	if !ok || srcSize != uint64(len(src)) {
		return nil, packfile.ErrInvalidDelta
	}
	size, ok := leb()
	if !ok {
		return nil, packfile.ErrInvalidDelta
	}
	if size > MaxObject {
		return nil, errPackTooLarge
	}
	out := make([]byte, size)
	op := 0
	for op < len(out) {
		if len(delta) == 0 {
			return nil, packfile.ErrInvalidDelta
		}
		cmd := delta[0]
		delta = delta[1:]
		switch {
		case cmd&0x80 != 0: // copy from the base
			var off, n uint64
			for i := range 7 {
				if cmd&(1<<i) == 0 {
					continue
				}
				if len(delta) == 0 {
					return nil, packfile.ErrInvalidDelta
				}
				if i < 4 {
					off |= uint64(delta[0]) << (8 * i)
				} else {
					n |= uint64(delta[0]) << (8 * (i - 4))
				}
				delta = delta[1:]
			}
			if n == 0 {
				n = 0x10000
			}
			if n > uint64(len(out)-op) || off+n > uint64(len(src)) {
				return nil, packfile.ErrInvalidDelta
			}
			op += copy(out[op:], src[off:off+n])
		case cmd != 0: // insert cmd bytes of the delta
			n := int(cmd)
			if n > len(out)-op || n > len(delta) {
				return nil, packfile.ErrInvalidDelta
			}
			op += copy(out[op:], delta[:n])
			delta = delta[n:]
		default:
			return nil, packfile.ErrDeltaCmd
		}
	}
	if len(delta) != 0 {
		return nil, packfile.ErrInvalidDelta
	}
	return out, nil
}

// refBase is a REF_DELTA's base, in any of the packs.
func (pr *Reader) refBase(id plumbing.Hash, depth int) (*Object, error) {
	for i, p := range pr.packs {
		if off, found := p.idx.Find(id); found {
			return pr.at(i, off, depth, true)
		}
	}
	return nil, errPackTooLarge // a base elsewhere (loose): the caller streams it
}

// inflate inflates the zlib stream at off of p into data, which it
// fills exactly: with the inflater from the pack's bytes in place, or
// else (a stream it does not take, or one longer than the bytes it was
// given) with compress/zlib.
func (pr *Reader) inflate(p *readPack, off int64, data []byte) error {
	// Enough for a stream of stored blocks (5 bytes each 64 KiB) and the
	// zlib header and trailer; deflated data is rarely longer.
	if pr.inf.inflate(p.span(off, len(data)+len(data)/8+64), data) {
		return nil
	}
	sr := io.NewSectionReader(p, off, p.size-off)
	if pr.br == nil {
		pr.br = bufio.NewReaderSize(sr, 4<<10)
	} else {
		pr.br.Reset(sr)
	}
	var err error
	if pr.zr == nil {
		pr.zr, err = zlib.NewReader(pr.br)
	} else {
		err = pr.zr.(zlib.Resetter).Reset(pr.br, nil)
	}
	if err != nil {
		return err
	}
	if _, err := io.ReadFull(pr.zr, data); err != nil {
		return Damaged("a pack entry that inflates short: %v", err)
	}
	// Its end, where zlib checks the Adler-32.
	var b [1]byte
	if n, err := pr.zr.Read(b[:]); n > 0 || err != io.EOF {
		return Damaged("a pack entry whose data does not end as its header says: %v", err)
	}
	return nil
}

// Index is a pack index held in memory and searched in place by
// idxSearch (version 2) or v1Search (version 1, written by git before
// 1.5.2), nothing decoded, hashed or copied beforehand.
type Index struct {
	b  memIndex // without its trailer: reads past the tables fail
	v1 bool
}

var ErrIndex = errors.New("pack index is not a version 2 index")

func parseRawIndex(b []byte) (*Index, error) {
	if len(b) >= 256*4+40 && string(b[:4]) != "\377tOc" {
		// Version 1: the fan-out table, then (offset, id) entries.
		n := int(binary.BigEndian.Uint32(b[255*4:]))
		if n < 0 || n > len(b)/24 || 256*4+n*24+40 != len(b) {
			return nil, ErrIndex
		}
		return &Index{b: b[:len(b)-40], v1: true}, nil
	}
	if len(b) < 8+256*4+40 || string(b[:4]) != "\377tOc" || binary.BigEndian.Uint32(b[4:8]) != 2 {
		return nil, ErrIndex
	}
	n := int(binary.BigEndian.Uint32(b[8+255*4:]))
	if large := 8 + 256*4 + n*28; n < 0 || n > len(b)/28 || large+40 > len(b) {
		return nil, ErrIndex
	}
	return &Index{b: b[:len(b)-40]}, nil
}

// Find is the offset of id in the pack, ok false when it has none.
func (ix *Index) Find(id plumbing.Hash) (int64, bool) {
	if ix.v1 {
		return v1Search(ix.b, id)
	}
	off, ok, err := idxSearch(ix.b, ix.b[8:8+256*4], id)
	return off, ok && err == nil
}

// v1Search finds id in a version 1 pack index b (without its trailer;
// its size checked by parseRawIndex).
func v1Search(b []byte, id plumbing.Hash) (int64, bool) {
	count := func(i int) int { return int(binary.BigEndian.Uint32(b[i*4:])) }
	lo, hi := 0, count(int(id[0]))
	if id[0] > 0 {
		lo = count(int(id[0]) - 1)
	}
	if n := (len(b) - 256*4) / 24; lo > hi || hi > n {
		return 0, false
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		e := b[256*4+m*24:]
		switch c := bytes.Compare(e[4:24], id[:]); {
		case c == 0:
			return int64(binary.BigEndian.Uint32(e)), true
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return 0, false
}

// indexBytes gives idxSearch n (<= 20) bytes of a pack index at off.
type indexBytes interface {
	at(off int64, n int) ([]byte, error)
}

// memIndex is an index in memory: its bytes in place.
type memIndex []byte

func (b memIndex) at(off int64, n int) ([]byte, error) {
	if off < 0 || off+int64(n) > int64(len(b)) {
		return nil, io.ErrUnexpectedEOF
	}
	return b[off : off+int64(n)], nil
}

// idxSearch finds id in the version 2 pack index ix (from its start),
// whose fan-out table is fan (the 256 counts after the 8-byte header): a
// binary search of the sorted ids within id's bucket, then its 32- or
// 64-bit offset. ok is false when the index has no id, err a read that
// failed.
func idxSearch(ix indexBytes, fan []byte, id plumbing.Hash) (off int64, ok bool, err error) {
	count := func(i int) int64 { return int64(binary.BigEndian.Uint32(fan[i*4:])) }
	n := count(255)
	lo, hi := int64(0), count(int(id[0]))
	if id[0] > 0 {
		lo = count(int(id[0]) - 1)
	}
	if lo > hi || hi > n {
		return 0, false, nil
	}
	const names = 8 + 256*4
	offsets := names + n*24 // after the ids and their CRCs
	for lo < hi {
		m := int64(uint64(lo+hi) >> 1)
		b, err := ix.at(names+m*20, 20)
		if err != nil {
			return 0, false, err
		}
		switch c := bytes.Compare(b, id[:]); {
		case c == 0:
			if b, err = ix.at(offsets+m*4, 4); err != nil {
				return 0, false, err
			}
			o := binary.BigEndian.Uint32(b)
			if o&0x80000000 == 0 {
				return int64(o), true, nil
			}
			if b, err = ix.at(offsets+n*4+int64(o&0x7fffffff)*8, 8); err != nil {
				return 0, false, err
			}
			return int64(binary.BigEndian.Uint64(b) & (1<<63 - 1)), true, nil
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return 0, false, nil
}
