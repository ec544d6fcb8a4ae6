package indexfile

import (
	"crypto/sha1"
	"encoding/binary"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// Entry is an index entry with the flag go-git drops.
type Entry struct {
	*index.Entry
	AssumeValid bool
}

// Encode writes an index file as git does (versions 2 to 4), keeping
// every entry flag, with the cache tree (TREE extension) when treeExt is
// not nil. Other extensions are not written: they are caches git
// recreates.
func Encode(version uint32, entries []Entry, treeExt []byte) []byte {
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].Name != entries[j].Name {
			return entries[i].Name < entries[j].Name
		}
		return entries[i].Stage < entries[j].Stage
	})
	if version < 2 || version > 4 {
		version = 2
	}
	for _, e := range entries {
		if (e.IntentToAdd || e.SkipWorktree) && version == 2 {
			version = 3 // extended flags need version 3
		}
	}
	be := binary.BigEndian
	b := make([]byte, 0, 12+len(entries)*80+len(treeExt)+28)
	b = append(b, "DIRC"...)
	b = be.AppendUint32(b, version)
	b = be.AppendUint32(b, uint32(len(entries)))
	prev := ""
	for _, e := range entries {
		start := len(b)
		cs, cn := indexTime(e.CreatedAt)
		ms, mn := indexTime(e.ModifiedAt)
		for _, v := range [...]uint32{cs, cn, ms, mn, e.Dev, e.Inode, uint32(e.Mode), e.UID, e.GID, e.Size} {
			b = be.AppendUint32(b, v)
		}
		b = append(b, e.Hash[:]...)
		flags := uint16(e.Stage&0x3) << 12
		if l := len(e.Name); l < 0xfff {
			flags |= uint16(l)
		} else {
			flags |= 0xfff
		}
		if e.AssumeValid {
			flags |= 0x8000
		}
		extended := e.IntentToAdd || e.SkipWorktree
		if extended {
			flags |= 0x4000
		}
		b = be.AppendUint16(b, flags)
		if extended {
			var ext uint16
			if e.IntentToAdd {
				ext |= 0x2000
			}
			if e.SkipWorktree {
				ext |= 0x4000
			}
			b = be.AppendUint16(b, ext)
		}
		if version == 4 {
			common := commonPrefix(prev, e.Name)
			b = append(b, encodeOffset(len(prev)-common)...)
			b = append(b, e.Name[common:]...)
			b = append(b, 0)
			prev = e.Name
			continue
		}
		b = append(b, e.Name...)
		pad := 8 - (len(b)-start)%8
		b = append(b, make([]byte, pad)...)
	}
	if treeExt != nil {
		b = append(b, "TREE"...)
		b = be.AppendUint32(b, uint32(len(treeExt)))
		b = append(b, treeExt...)
	}
	sum := sha1.Sum(b)
	return append(b, sum[:]...)
}

// indexTime is a time as the index stores it; go-git decodes 0 as the
// zero time.Time (year 1), which git writes as 0.
func indexTime(t time.Time) (uint32, uint32) {
	if t.IsZero() {
		return 0, 0
	}
	return uint32(t.Unix()), uint32(t.Nanosecond())
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// encodeOffset is git's varint of index v4 (offset encoding of ofs-delta).
func encodeOffset(n int) []byte {
	var buf [16]byte
	pos := len(buf) - 1
	buf[pos] = byte(n & 0x7f)
	for n >>= 7; n > 0; n >>= 7 {
		n--
		pos--
		buf[pos] = 0x80 | byte(n&0x7f)
	}
	return buf[pos:]
}
