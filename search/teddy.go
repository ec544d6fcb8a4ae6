package search

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// teddy finds every match of up to 8 needles in one pass over a buffer, as
// ripgrep's "Teddy" does: needle i is bucket i, and the first m bytes of
// every needle (m = min(3, shortest needle)) form its fingerprint. For
// each fingerprint byte k there are two nibble tables (low and high
// nibble of a byte) whose entry j has bit i set when needle i's byte k,
// in either ASCII case when folding, has nibble j. A position whose bytes
// k, looked up by both nibbles in the tables of k, AND to a nonzero bucket
// set is a candidate for those needles; the vector scan (teddyBlocks)
// does this 64 positions per step with byte shuffles (VPSHUFB), and each
// candidate bucket is then compared in full. One scan for all needles instead of
// one per needle: ranked search looks for up to 8 terms in every file.
type teddy struct {
	needles []teddyNeedle
	fold    bool
	m       int // fingerprint length: 1 to 3
	minLen  int // the shortest needle
	// tables[2k] and tables[2k+1]: the low- and high-nibble tables of
	// fingerprint byte k < m.
	tables [6][16]byte
	// byteSets[k][c]: the buckets whose fingerprint byte k can be c, the
	// two nibble tables in one, for the starts the vector scan leaves.
	byteSets [3][256]uint8
}

// newTeddy returns nil when Teddy cannot be used: without the vector scan
// (no AVX2), with 0 or more than 8 needles, an empty needle, or fold with a
// non-ASCII needle. fold: ASCII case-insensitive ('A'-'Z' match 'a'-'z',
// nothing else folds).
func newTeddy(needles []string, fold bool) *teddy {
	if !haveVectorPair {
		return nil
	}
	return buildTeddy(needles, fold)
}

// buildTeddy is newTeddy without the CPU check (tests run the generic scan
// where there is no vector one).
func buildTeddy(needles []string, fold bool) *teddy {
	if len(needles) == 0 || len(needles) > 8 {
		return nil
	}
	t := &teddy{fold: fold, minLen: len(needles[0])}
	for _, s := range needles {
		if s == "" {
			return nil
		}
		n := []byte(s)
		if fold {
			for j, c := range n {
				if c >= 0x80 {
					return nil
				}
				n[j] = toLowerASCII(c)
			}
		}
		t.needles = append(t.needles, newTeddyNeedle(n, fold))
		t.minLen = min(t.minLen, len(n))
	}
	t.m = min(3, t.minLen)
	for i, tn := range t.needles {
		n := tn.b
		for k := 0; k < t.m; k++ {
			c := n[k]
			t.addByte(k, c, uint8(1)<<i)
			if fold && 'a' <= c && c <= 'z' {
				t.addByte(k, c-'a'+'A', uint8(1)<<i)
			}
		}
	}
	for k := 0; k < t.m; k++ {
		for c := range 256 {
			t.byteSets[k][c] = t.tables[2*k][c&15] & t.tables[2*k+1][c>>4]
		}
	}
	return t
}

func (t *teddy) addByte(k int, c byte, bucket uint8) {
	t.tables[2*k][c&15] |= bucket
	t.tables[2*k+1][c>>4] |= bucket
}

// indexAll stores in pos[k] and which[k] the k-th match starting at or
// after from, in ascending order of start: pos the start, which the set
// of needles (bit i: needles[i]) matching in full there, one entry per
// start. It stops when pos is full and returns the count: fewer than
// len(pos) means no further match in b. len(which) >= len(pos). A caller
// with a full pos resumes at pos[len(pos)-1]+1. Entries past the count
// may be overwritten. No allocation; any length of b (starts the vector
// scan cannot cover, fewer than 32 a call, are looked at one by one).
func (t *teddy) indexAll(b []byte, from int, pos []int, which []uint8) int {
	from = max(from, 0)
	last := len(b) - t.minLen // the last start of a match
	if len(pos) == 0 || from > last {
		return 0
	}
	which = which[:len(pos)]
	seg := b[from:]
	// A block of 32 starts reads m-1 bytes past its last start, which
	// every start up to last has: the positions are last-from+1.
	blocks := (last - from + 1) &^ 31
	k := 0
	var batch teddyBatch
	for i := 0; i < blocks; {
		c, next := teddyBlocks(seg[i:], blocks-i, &t.tables, t.m, &batch)
		for j := 0; j < c; j++ {
			at := from + i + batch.at[j]
			for mask := batch.mask[j]; mask != 0; mask &= mask - 1 {
				e := bits.TrailingZeros32(mask)
				// Stored whether or not it holds a match, counted when
				// it does: no branch on the outcome, which frequent
				// needles make unpredictable.
				w := t.verify(b, at+e, batch.sets[j][e])
				pos[k], which[k] = at+e, w
				if k += int((uint(w) + 0xff) >> 8); k == len(pos) {
					return k
				}
			}
		}
		i += next
	}
	// The last starts, fewer than 32, one at a time.
	for s := from + blocks; s <= last; s++ {
		w := t.byteSets[0][b[s]]
		if w == 0 {
			continue
		}
		if t.m > 1 {
			w &= t.byteSets[1][b[s+1]]
			if t.m > 2 {
				w &= t.byteSets[2][b[s+2]]
			}
		}
		if w != 0 {
			if w = t.verify(b, s, w); w != 0 {
				pos[k], which[k], k = s, w, k+1
				if k == len(pos) {
					return k
				}
			}
		}
	}
	return k
}

// verify returns the buckets of buckets whose needle matches b at s in
// full.
func (t *teddy) verify(b []byte, s int, buckets uint8) uint8 {
	var w uint8
	rest := b[s:]
	for ; buckets != 0; buckets &= buckets - 1 {
		i := bits.TrailingZeros8(buckets)
		n := &t.needles[i]
		var match bool
		if len(n.b) <= 8 && len(rest) >= 8 { // most needles: one word, inline
			match = binary.LittleEndian.Uint64(rest)&n.tail|n.fold[0] == n.word[0]
		} else {
			match = n.match(rest, t.fold)
		}
		var hit uint8
		if match {
			hit = 1
		}
		w |= hit << i
	}
	return w
}

// teddyNeedle is a needle and its 8-byte words, for comparing a word at
// a time: a byte c of the text matches the needle's byte n under fold bit
// f (0x20 for a letter when folding, else 0) when c|f == n, as n is lower
// case then.
type teddyNeedle struct {
	b    []byte   // lower-cased when fold
	word []uint64 // b in little-endian words, the last one zero-padded
	fold []uint64 // per word, the fold bits
	tail uint64   // the bytes of the last word that are b's
}

func newTeddyNeedle(b []byte, fold bool) teddyNeedle {
	n := teddyNeedle{b: b, tail: ^uint64(0) >> (8 * ((8 - len(b)%8) % 8))}
	for i := 0; i < len(b); i += 8 {
		var w, f uint64
		for j := i; j < min(i+8, len(b)); j++ {
			w |= uint64(b[j]) << (8 * (j - i))
			if fold && 'a' <= b[j] && b[j] <= 'z' {
				f |= 0x20 << (8 * (j - i))
			}
		}
		n.word, n.fold = append(n.word, w), append(n.fold, f)
	}
	return n
}

// match tells whether the needle is a prefix of rest (ASCII letters
// folded when fold).
func (n *teddyNeedle) match(rest []byte, fold bool) bool {
	if len(n.b) > len(rest) {
		return false
	}
	if len(rest) < 8*len(n.word) { // the last word would read past rest
		if fold {
			return equalFoldASCII(rest, n.b)
		}
		return bytes.Equal(rest[:len(n.b)], n.b)
	}
	last := len(n.word) - 1
	for i := 0; i < last; i++ {
		if binary.LittleEndian.Uint64(rest[8*i:])|n.fold[i] != n.word[i] {
			return false
		}
	}
	return binary.LittleEndian.Uint64(rest[8*last:])&n.tail|n.fold[last] == n.word[last]
}

// teddyBatch is what one call of teddyBlocks hands over: the blocks
// holding a candidate, several per call so that dense candidates (the
// frequent terms of source code) do not cost a call per block. Its
// layout and its 8 slots are written into teddy_amd64.s.
type teddyBatch struct {
	sets [8][32]uint8 // the bucket sets of a block's 32 positions
	at   [8]int       // the block's offset
	mask [8]uint32    // bit i: sets[.][i] != 0
}

// teddyBlocksGeneric is teddyBlocks without vector instructions.
func teddyBlocksGeneric(b []byte, n int, tables *[6][16]byte, m int, out *teddyBatch) (count, next int) {
	for blk := 0; blk < n; blk += 32 {
		var sets [32]uint8
		var mask uint32
		for i := range sets {
			w := uint8(0xff)
			for k := 0; k < m; k++ {
				c := b[blk+i+k]
				w &= tables[2*k][c&15] & tables[2*k+1][c>>4]
			}
			sets[i] = w
			if w != 0 {
				mask |= 1 << i
			}
		}
		if mask != 0 {
			out.sets[count], out.at[count], out.mask[count] = sets, blk, mask
			if count++; count == len(out.at) {
				return count, blk + 32
			}
		}
	}
	return count, n
}
