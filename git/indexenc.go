package git

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// indexEntry is an index entry with the flag go-git drops.
type indexEntry struct {
	*index.Entry
	assumeValid bool
}

// encodeIndex writes an index file as git does (versions 2 to 4), keeping
// every entry flag. Extensions are not written: the cache tree would be
// stale after a commit changes entries (git rebuilds it), the others are
// caches git recreates too.
func encodeIndex(version uint32, entries []indexEntry) []byte {
	sort.SliceStable(entries, func(i, j int) bool {
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
	var b bytes.Buffer
	b.WriteString("DIRC")
	binary.Write(&b, binary.BigEndian, version)
	binary.Write(&b, binary.BigEndian, uint32(len(entries)))
	prev := ""
	for _, e := range entries {
		start := b.Len()
		cs, cn := indexTime(e.CreatedAt)
		ms, mn := indexTime(e.ModifiedAt)
		for _, v := range []uint32{
			cs, cn, ms, mn,
			e.Dev, e.Inode, uint32(e.Mode), e.UID, e.GID, e.Size,
		} {
			binary.Write(&b, binary.BigEndian, v)
		}
		b.Write(e.Hash[:])
		flags := uint16(e.Stage&0x3) << 12
		if l := len(e.Name); l < 0xfff {
			flags |= uint16(l)
		} else {
			flags |= 0xfff
		}
		if e.assumeValid {
			flags |= 0x8000
		}
		extended := e.IntentToAdd || e.SkipWorktree
		if extended {
			flags |= 0x4000
		}
		binary.Write(&b, binary.BigEndian, flags)
		if extended {
			var ext uint16
			if e.IntentToAdd {
				ext |= 0x2000
			}
			if e.SkipWorktree {
				ext |= 0x4000
			}
			binary.Write(&b, binary.BigEndian, ext)
		}
		if version == 4 {
			common := commonPrefix(prev, e.Name)
			b.Write(encodeOffset(len(prev) - common))
			b.WriteString(e.Name[common:])
			b.WriteByte(0)
			prev = e.Name
			continue
		}
		b.WriteString(e.Name)
		pad := 8 - (b.Len()-start)%8
		b.Write(make([]byte, pad))
	}
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
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
