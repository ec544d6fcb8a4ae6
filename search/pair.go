package search

import "math/bits"

// pair is the prefilter of a literal of two bytes or more: two of the
// needle's bytes, off1 and off1+d bytes into it, looked for together, 32
// positions per step where the CPU has AVX2 (see indexPairBlocks), as
// ripgrep's "packed pair" does. A candidate must hold both, so far fewer
// candidates reach the full comparison than with one rare byte, and
// case-insensitive queries need one scan instead of one per case of their
// rarest letter: a byte b matches c under mask m when b|m == c (m is 0x20
// for a letter, c then lower case: 'K'|0x20 == 'k'; 0 for other bytes).
type pair struct {
	off1, d        int
	c1, m1, c2, m2 byte
}

// usePair tells whether pairs pay: only with the vector scan.
var usePair = haveVectorPair

// newPair picks the two bytes of needle (lower-cased when fold) that cost
// least as a pair by cost(i): the cheapest and the next cheapest at
// another offset, both in one of the ranges [lo, hi) given as pairs of
// offsets (nil: the whole needle); nil for a needle of one byte, when no
// range holds two bytes, or without the vector scan.
func newPair(needle []byte, fold bool, cost func(i int) int, ranges ...int) *pair {
	if len(needle) < 2 || !usePair {
		return nil
	}
	if ranges == nil {
		ranges = []int{0, len(needle)}
	}
	a, b := -1, -1
	for r := 0; r+1 < len(ranges); r += 2 {
		x, y := -1, -1
		for i := ranges[r]; i < ranges[r+1]; i++ {
			switch {
			case x < 0 || cost(i) < cost(x):
				x, y = i, x
			case y < 0 || cost(i) < cost(y):
				y = i
			}
		}
		if y >= 0 && (a < 0 || cost(x)+cost(y) < cost(a)+cost(b)) {
			a, b = x, y
		}
	}
	if a < 0 {
		return nil
	}
	if a > b {
		a, b = b, a
	}
	p := &pair{off1: a, d: b - a, c1: needle[a], c2: needle[b]}
	if fold {
		p.c1, p.m1 = foldByte(needle[a])
		p.c2, p.m2 = foldByte(needle[b])
	}
	return p
}

// foldByte returns the byte and mask that match c in either case.
func foldByte(c byte) (byte, byte) {
	c = toLowerASCII(c)
	if 'a' <= c && c <= 'z' {
		return c, 0x20
	}
	return c, 0
}

// each calls try for every candidate start s in [from, last] (s+off1 and
// s+off1+d hold the pair), in order, until try returns true; it returns
// that s, or -1. b must extend past last+off1+d. The vector scan hands
// over the candidates of 32 positions at once, as a bit mask: a candidate
// costs a few instructions, not a call.
func (p *pair) each(b []byte, from, last int, try func(s int) bool) int {
	if from > last {
		return -1
	}
	seg := b[from+p.off1 : last+p.off1+p.d+1]
	n := len(seg) - p.d // positions
	blocks := n &^ 31
	for i := 0; i < blocks; i += 32 {
		at, mask := indexPairBlocks(seg[i:], blocks-i, p.c1, p.m1, p.c2, p.m2, p.d)
		if at < 0 {
			break
		}
		i += at
		for ; mask != 0; mask &= mask - 1 {
			if s := from + i + bits.TrailingZeros32(mask); try(s) {
				return s
			}
		}
	}
	for i := blocks; i < n; i++ {
		if seg[i]|p.m1 == p.c1 && seg[i+p.d]|p.m2 == p.c2 && try(from+i) {
			return from + i
		}
	}
	return -1
}

// indexPairGeneric is indexPairBlocks without vector instructions.
func indexPairGeneric(b []byte, n int, c1, m1, c2, m2 byte, d int) (at int, mask uint32) {
	for blk := 0; blk < n; blk += 32 {
		for i := 0; i < 32; i++ {
			if b[blk+i]|m1 == c1 && b[blk+i+d]|m2 == c2 {
				mask |= 1 << i
			}
		}
		if mask != 0 {
			return blk, mask
		}
	}
	return -1, 0
}
