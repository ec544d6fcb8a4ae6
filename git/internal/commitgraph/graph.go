// Package commitgraph reads git's commit-graph file
// (.git/objects/info/commit-graph): each commit's tree, parents and
// commit time without inflating the commit, and the changed-path Bloom
// filters (git commit-graph write --changed-paths) that tell a history
// walk which commits certainly did not touch a path.
//
// The file is a cache of the commits: a reader that cannot trust it
// (a bad checksum, a chunk out of bounds, an unknown version) answers no
// graph, and the caller reads the objects as it would without one.
package commitgraph

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"io"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	sfs "github.com/serverfs/serverfs/fs"
)

// MaxFileBytes bounds the commit-graph file read: larger ones (a history
// of more than about a million commits with Bloom filters) are not used.
const MaxFileBytes = 64 << 20

const (
	hashLen      = 20
	cdatLen      = hashLen + 16
	noParent     = 0x70000000
	extraEdges   = 0x80000000
	lastEdge     = 0x80000000
	maxChunks    = 64
	bdatHeader   = 12
	maxNumHashes = 32
)

var errBad = errors.New("commit-graph: malformed")

// Graph is one parsed commit-graph file; read-only, shared by requests.
type Graph struct {
	b      []byte
	n      uint32
	fanout []byte // OIDF: 256 big-endian cumulative counts
	oids   []byte // OIDL: n sorted ids
	cdat   []byte // CDAT: n entries of tree, parent 1, parent 2, level and time
	edges  []byte // EDGE: the third and later parents of octopus merges
	bidx   []byte // BIDX: n cumulative end offsets into bdat's filters
	bdat   []byte // BDAT filters, after its 12-byte header
	// Bloom settings of BDAT's header.
	bloomVersion, numHashes uint32
}

// Len is the number of commits the graph holds.
func (g *Graph) Len() uint32 { return g.n }

// Parse validates and parses a whole commit-graph file: the header, every
// chunk offset inside the file, the chunk sizes against the commit count,
// the fanout monotonic, and the trailing SHA-1 of the content, so that a
// truncated or damaged file is refused rather than read wrong.
func Parse(b []byte) (*Graph, error) {
	if len(b) < 8+12+hashLen || string(b[:4]) != "CGPH" || b[4] != 1 || b[5] != 1 || b[7] != 0 {
		return nil, errBad // version 1, SHA-1, no base graphs (a split chain is not read)
	}
	sum := sha1.Sum(b[:len(b)-hashLen])
	if !bytes.Equal(sum[:], b[len(b)-hashLen:]) {
		return nil, errBad
	}
	nc := int(b[6])
	if nc > maxChunks || 8+(nc+1)*12 > len(b)-hashLen {
		return nil, errBad
	}
	end := uint64(len(b) - hashLen)
	chunks := map[string][]byte{}
	for i := range nc {
		e := b[8+i*12:]
		id := string(e[:4])
		off, next := binary.BigEndian.Uint64(e[4:]), binary.BigEndian.Uint64(e[16:])
		if off < uint64(8+(nc+1)*12) || off > next || next > end {
			return nil, errBad
		}
		if _, dup := chunks[id]; dup {
			return nil, errBad
		}
		chunks[id] = b[off:next]
	}
	if t := b[8+nc*12:]; binary.BigEndian.Uint32(t) != 0 || binary.BigEndian.Uint64(t[4:]) != end {
		return nil, errBad
	}
	g := &Graph{b: b, fanout: chunks["OIDF"], oids: chunks["OIDL"], cdat: chunks["CDAT"], edges: chunks["EDGE"]}
	if len(g.fanout) != 256*4 {
		return nil, errBad
	}
	prev := uint32(0)
	for i := range 256 {
		v := binary.BigEndian.Uint32(g.fanout[i*4:])
		if v < prev {
			return nil, errBad
		}
		prev = v
	}
	g.n = prev
	if uint64(len(g.oids)) != uint64(g.n)*hashLen || uint64(len(g.cdat)) != uint64(g.n)*cdatLen || len(g.edges)%4 != 0 {
		return nil, errBad
	}
	for i := uint32(1); i < g.n; i++ {
		if bytes.Compare(g.oids[(i-1)*hashLen:i*hashLen], g.oids[i*hashLen:(i+1)*hashLen]) >= 0 {
			return nil, errBad
		}
	}
	// Bloom filters: used only when both chunks are whole and sane;
	// without them the graph still serves parents and trees.
	bidx, bdat := chunks["BIDX"], chunks["BDAT"]
	if bidx != nil && bdat != nil && uint64(len(bidx)) == uint64(g.n)*4 && len(bdat) >= bdatHeader {
		v, k := binary.BigEndian.Uint32(bdat), binary.BigEndian.Uint32(bdat[4:])
		ok := (v == 1 || v == 2) && k >= 1 && k <= maxNumHashes
		data := bdat[bdatHeader:]
		last := uint32(0)
		for i := uint32(0); ok && i < g.n; i++ {
			e := binary.BigEndian.Uint32(bidx[i*4:])
			ok = e >= last && uint64(e) <= uint64(len(data))
			last = e
		}
		if ok {
			g.bidx, g.bdat, g.bloomVersion, g.numHashes = bidx, data, v, k
		}
	}
	return g, nil
}

// Find is the position of commit id in the graph.
func (g *Graph) Find(id plumbing.Hash) (uint32, bool) {
	lo := uint32(0)
	if id[0] > 0 {
		lo = binary.BigEndian.Uint32(g.fanout[(int(id[0])-1)*4:])
	}
	hi := binary.BigEndian.Uint32(g.fanout[int(id[0])*4:])
	for lo < hi {
		m := lo + (hi-lo)/2
		switch c := bytes.Compare(g.oids[m*hashLen:(m+1)*hashLen], id[:]); {
		case c == 0:
			return m, true
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return 0, false
}

// ID is the commit id at position pos (< Len).
func (g *Graph) ID(pos uint32) plumbing.Hash {
	var h plumbing.Hash
	copy(h[:], g.oids[pos*hashLen:])
	return h
}

// Commit is what the graph records of the commit at pos: its tree, its
// parents' positions (appended to parents[:0]) and its committer time;
// ok is false when a position in it is out of range (then the caller
// reads the commit object).
func (g *Graph) Commit(pos uint32, parents []uint32) (tree plumbing.Hash, ps []uint32, when int64, ok bool) {
	e := g.cdat[pos*cdatLen : (pos+1)*cdatLen]
	copy(tree[:], e)
	ps = parents[:0]
	p1, p2 := binary.BigEndian.Uint32(e[20:]), binary.BigEndian.Uint32(e[24:])
	if p1 != noParent {
		if p1 >= g.n {
			return tree, nil, 0, false
		}
		ps = append(ps, p1)
	}
	switch {
	case p2 == noParent:
	case p2&extraEdges == 0:
		if p2 >= g.n || p1 == noParent {
			return tree, nil, 0, false
		}
		ps = append(ps, p2)
	default:
		if p1 == noParent {
			return tree, nil, 0, false
		}
		for i := uint64(p2 &^ extraEdges); ; i++ {
			if (i+1)*4 > uint64(len(g.edges)) || len(ps) > 1<<16 {
				return tree, nil, 0, false
			}
			v := binary.BigEndian.Uint32(g.edges[i*4:])
			if v&^lastEdge >= g.n {
				return tree, nil, 0, false
			}
			ps = append(ps, v&^lastEdge)
			if v&lastEdge != 0 {
				break
			}
		}
	}
	when = int64(binary.BigEndian.Uint32(e[28:])&3)<<32 | int64(binary.BigEndian.Uint32(e[32:]))
	return tree, ps, when, true
}

// HasBloom reports whether the graph carries changed-path Bloom filters.
func (g *Graph) HasBloom() bool { return g.bidx != nil }

// Key is a path's Bloom key: its hashes under the graph's settings.
type Key struct{ hashes []uint32 }

// Keys are the keys of a path and of each of its leading directories
// (a/b/c: a/b/c, a/b, a), all of which git adds to a commit's filter when
// a/b/c changed, so that a commit whose filter lacks any of them did
// not change the path. ok is false when the filters cannot be trusted
// for this path (version 1 filters hash bytes >= 0x80 differently on
// machines whose C char is unsigned).
func (g *Graph) Keys(path string) (keys []Key, ok bool) {
	if g.bidx == nil || path == "" {
		return nil, false
	}
	if g.bloomVersion == 1 {
		for i := 0; i < len(path); i++ {
			if path[i] >= 0x80 {
				return nil, false
			}
		}
	}
	for p := path; ; {
		h0 := murmur3(0x293ae76f, p, g.bloomVersion)
		h1 := murmur3(0x7e646e2c, p, g.bloomVersion)
		k := Key{hashes: make([]uint32, g.numHashes)}
		for i := range k.hashes {
			k.hashes[i] = h0 + uint32(i)*h1
		}
		keys = append(keys, k)
		i := len(p) - 1
		for i >= 0 && p[i] != '/' {
			i--
		}
		if i <= 0 {
			return keys, true
		}
		p = p[:i]
	}
}

// MaybeChanged reports whether the commit at pos may have changed the
// path of keys against its first parent (or, for a root, at all): false
// only when its filter certainly lacks one of the keys. A commit without
// a filter, or with an empty one, may have.
func (g *Graph) MaybeChanged(pos uint32, keys []Key) bool {
	if g.bidx == nil || pos >= g.n {
		return true
	}
	end := binary.BigEndian.Uint32(g.bidx[pos*4:])
	start := uint32(0)
	if pos > 0 {
		start = binary.BigEndian.Uint32(g.bidx[(pos-1)*4:])
	}
	f := g.bdat[start:end] // Parse checked the offsets
	if len(f) == 0 {
		return true
	}
	bits := uint64(len(f)) * 8
	for _, k := range keys {
		for _, h := range k.hashes {
			b := uint64(h) % bits
			if f[b/8]&(1<<(b%8)) == 0 {
				return false
			}
		}
	}
	return true
}

// murmur3 is git's seeded 32-bit murmur3 of the Bloom filters. Version 1
// is the hash as git first wrote it, which read the bytes as C's signed
// char on the machines git ran on (x86: each byte >= 0x80 sign-extended);
// version 2 reads them unsigned.
func murmur3(seed uint32, data string, version uint32) uint32 {
	const (
		c1 = 0xcc9e2d51
		c2 = 0x1b873593
	)
	byteAt := func(i int) uint32 {
		if version == 1 {
			return uint32(int32(int8(data[i])))
		}
		return uint32(data[i])
	}
	rotl := func(v uint32, r uint) uint32 { return v<<r | v>>(32-r) }
	n4 := len(data) / 4
	for i := range n4 {
		k := byteAt(4*i) | byteAt(4*i+1)<<8 | byteAt(4*i+2)<<16 | byteAt(4*i+3)<<24
		k *= c1
		k = rotl(k, 15)
		k *= c2
		seed ^= k
		seed = rotl(seed, 13)*5 + 0xe6546b64
	}
	var k1 uint32
	t := n4 * 4
	switch len(data) & 3 {
	case 3:
		k1 ^= byteAt(t+2) << 16
		fallthrough
	case 2:
		k1 ^= byteAt(t+1) << 8
		fallthrough
	case 1:
		k1 ^= byteAt(t)
		k1 *= c1
		k1 = rotl(k1, 15)
		k1 *= c2
		seed ^= k1
	}
	seed ^= uint32(len(data))
	seed ^= seed >> 16
	seed *= 0x85ebca6b
	seed ^= seed >> 13
	seed *= 0xc2b2ae35
	seed ^= seed >> 16
	return seed
}

// Open is the commit-graph of ctl's repository: from the process cache
// when it holds this very file, else read, checked and cached. It answers
// nil (no graph: read the objects) when there is none or it cannot be
// used: absent, larger than MaxFileBytes, malformed.
func Open(ctl *sfs.Control) *Graph {
	f, err := ctl.Open(".git/objects/info/commit-graph")
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Fstat()
	if err != nil || st.Size > MaxFileBytes || st.Size <= 0 {
		return nil
	}
	key := fileKey{st.Dev, st.Ino, st.Size, st.Mtime.UnixNano(), st.Ctime.UnixNano()}
	if g, ok := graphs.get(key); ok {
		return g
	}
	b := make([]byte, st.Size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil
	}
	if n, _ := f.Read(make([]byte, 1)); n != 0 {
		return nil // grew since the fstat
	}
	g, err := Parse(b)
	if err != nil {
		g = nil // remembered too: a bad file is not hashed again
	}
	graphs.put(key, g, len(b))
	return g
}

// fileKey identifies a file's content: git writes a commit-graph to a
// temporary and renames it over the old one (a new inode), and a file
// changed in place has a new ctime.
type fileKey struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

// graphs keeps parsed graphs for the next requests of a long-lived
// server, at most maxCachedBytes of files; the oldest go first.
var graphs = &cache{max: maxCachedBytes}

const maxCachedBytes = 96 << 20

type cache struct {
	mu    sync.Mutex
	max   int
	bytes int
	order []fileKey
	m     map[fileKey]cached
}

type cached struct {
	g    *Graph
	size int
}

func (c *cache) get(k fileKey) (*Graph, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	return e.g, ok
}

func (c *cache) put(k fileKey, g *Graph, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[fileKey]cached{}
	}
	if _, ok := c.m[k]; ok {
		return
	}
	if g == nil {
		size = 0 // only the key is kept
	}
	for c.bytes+size > c.max && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= c.m[old].size
		delete(c.m, old)
	}
	if len(c.order) >= maxCachedFiles {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= c.m[old].size
		delete(c.m, old)
	}
	c.order = append(c.order, k)
	c.m[k] = cached{g, size}
	c.bytes += size
}

const maxCachedFiles = 256
