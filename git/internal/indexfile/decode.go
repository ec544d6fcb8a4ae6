// Package indexfile reads and writes git's index file (.git/index),
// versions 2 to 4, with the flags and the cache tree go-git's codec drops.
package indexfile

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"strconv"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// File is a decoded .git/index. ServerFS decodes it itself: go-git's
// decoder reads every field through reflection (most of a status's CPU
// on 50,000 entries), drops the assume-unchanged bit, and does not say
// whether the cache tree is valid.
type File struct {
	Version     uint32
	Entries     []*index.Entry
	AssumeValid []bool
	// CacheTrees are the valid nodes of the cache tree (the TREE
	// extension): directory path ("" for the root) -> the tree id the
	// index entries below it hash to. git invalidates the nodes on the
	// way to every path it changes in the index.
	CacheTrees map[string]plumbing.Hash
}

var errFormat = errors.New("index: unexpected format")

// Decode parses an index of version 2, 3 or 4 and checks its
// trailing SHA-1. A split index ("link") or a sparse index ("sdir") is
// refused: their entries are not all here.
func Decode(b []byte) (*File, error) {
	if len(b) < 12+20 || string(b[:4]) != "DIRC" {
		return nil, errFormat
	}
	body, sum := b[:len(b)-20], b[len(b)-20:]
	if !bytes.Equal(sum, make([]byte, 20)) { // index.skipHash writes zeros
		if s := sha1.Sum(body); !bytes.Equal(s[:], sum) {
			return nil, errors.New("index: checksum mismatch (corrupt index)")
		}
	}
	version := binary.BigEndian.Uint32(b[4:8])
	n := int(binary.BigEndian.Uint32(b[8:12]))
	if version < 2 || version > 4 || n < 0 || n > len(body)/40 {
		return nil, errFormat
	}
	f := &File{Version: version, Entries: make([]*index.Entry, n), AssumeValid: make([]bool, n)}
	all := make([]index.Entry, n) // one allocation for every entry
	pos := 12
	prev := ""
	u32 := func(at int) uint32 { return binary.BigEndian.Uint32(body[at : at+4]) }
	for i := range n {
		start := pos
		if pos+62 > len(body) {
			return nil, errFormat
		}
		e := &all[i]
		e.CreatedAt = indexTimeOf(u32(pos), u32(pos+4))
		e.ModifiedAt = indexTimeOf(u32(pos+8), u32(pos+12))
		e.Dev, e.Inode = u32(pos+16), u32(pos+20)
		e.Mode = filemode.FileMode(u32(pos + 24))
		e.UID, e.GID, e.Size = u32(pos+28), u32(pos+32), u32(pos+36)
		copy(e.Hash[:], body[pos+40:pos+60])
		flags := binary.BigEndian.Uint16(body[pos+60 : pos+62])
		f.AssumeValid[i] = flags&0x8000 != 0
		e.Stage = index.Stage((flags >> 12) & 0x3)
		pos += 62
		if flags&0x4000 != 0 {
			if version < 3 || pos+2 > len(body) {
				return nil, errFormat
			}
			ext := binary.BigEndian.Uint16(body[pos : pos+2])
			e.IntentToAdd = ext&0x2000 != 0
			e.SkipWorktree = ext&0x4000 != 0
			pos += 2
		}
		if version == 4 {
			strip, w := decodeOffset(body[pos:])
			if w == 0 || strip > len(prev) {
				return nil, errFormat
			}
			pos += w
			end := bytes.IndexByte(body[pos:], 0)
			if end < 0 {
				return nil, errFormat
			}
			e.Name = prev[:len(prev)-strip] + string(body[pos:pos+end])
			pos += end + 1
			prev = e.Name
		} else {
			end := bytes.IndexByte(body[pos:], 0)
			if end < 0 {
				return nil, errFormat
			}
			e.Name = string(body[pos : pos+end])
			pos = start + ((pos+end-start)/8+1)*8
			if pos > len(body) {
				return nil, errFormat
			}
		}
		f.Entries[i] = e
	}
	// Extensions: a 4-byte signature, a 4-byte size, the data.
	for pos+8 <= len(body) {
		sig := string(body[pos : pos+4])
		size := int(binary.BigEndian.Uint32(body[pos+4 : pos+8]))
		pos += 8
		if size < 0 || pos+size > len(body) {
			return nil, errFormat
		}
		data := body[pos : pos+size]
		pos += size
		switch sig {
		case "link":
			return nil, errors.New("index: split index")
		case "sdir":
			return nil, errors.New("index: sparse index")
		case "TREE":
			f.CacheTrees = map[string]plumbing.Hash{}
			if _, ok := parseCacheTree(data, "", true, f.CacheTrees); !ok {
				f.CacheTrees = nil // malformed: not used
			}
		}
	}
	return f, nil
}

func indexTimeOf(sec, nsec uint32) time.Time {
	if sec == 0 && nsec == 0 {
		return time.Time{}
	}
	return time.Unix(int64(sec), int64(nsec))
}

// decodeOffset reads index v4's varint; w is 0 on malformed input.
func decodeOffset(b []byte) (n, w int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	n = int(c & 0x7f)
	w = 1
	for c&0x80 != 0 {
		if w >= len(b) || w > 8 {
			return 0, 0
		}
		c = b[w]
		w++
		n = ((n + 1) << 7) | int(c&0x7f)
	}
	return n, w
}

// parseCacheTree reads one node and its subtrees from data, recording the
// valid ones under their paths; it returns the bytes left.
func parseCacheTree(data []byte, parent string, root bool, out map[string]plumbing.Hash) ([]byte, bool) {
	nul := bytes.IndexByte(data, 0)
	if nul < 0 {
		return nil, false
	}
	name := string(data[:nul])
	path := name
	if !root {
		if parent != "" {
			path = parent + "/" + name
		}
	} else if name != "" {
		return nil, false
	}
	data = data[nul+1:]
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return nil, false
	}
	fields := bytes.SplitN(data[:nl], []byte{' '}, 2)
	if len(fields) != 2 {
		return nil, false
	}
	count, err1 := strconv.Atoi(string(fields[0]))
	subs, err2 := strconv.Atoi(string(fields[1]))
	if err1 != nil || err2 != nil || subs < 0 {
		return nil, false
	}
	data = data[nl+1:]
	if count >= 0 {
		if len(data) < 20 {
			return nil, false
		}
		var h plumbing.Hash
		copy(h[:], data[:20])
		out[path] = h
		data = data[20:]
	}
	for range subs {
		var ok bool
		if data, ok = parseCacheTree(data, path, false, out); !ok {
			return nil, false
		}
	}
	return data, true
}
