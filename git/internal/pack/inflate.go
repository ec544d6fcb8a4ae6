package pack

import (
	"encoding/binary"
	"hash/adler32"
	"math/bits"
	"sync"
)

// inflater inflates the small zlib streams of pack objects whose size the
// object header gives, from bytes in memory into a buffer of that size:
// what compress/zlib does through an io.ByteReader and a 32 KiB window,
// with two-level lookup tables built per block as zlib builds them (the
// table building is most of the cost for objects of a few hundred bytes).
// It accepts only a well-formed stream (RFC 1950 and 1951: a zlib header
// without preset dictionary, complete Huffman codes, distances within the
// output, an end-of-block code, its Adler-32) that inflates to exactly
// len(out) bytes within in; for anything else it answers false, and the
// caller reads the object with compress/zlib instead, so what it accepts
// inflates as compress/zlib would inflate it.
type inflater struct {
	lit, dist, cl huffTable
	lens          [maxLit + maxDist]uint8
}

const (
	maxLit  = 286 // literal/length symbols a dynamic block may code
	maxDist = 30
	// litPrimary and distPrimary are the index bits of the first-level
	// tables (zlib's 9 and 6); longer codes take a second lookup.
	litPrimary  = 9
	distPrimary = 6
)

// huffTable is a canonical Huffman code as lookup tables indexed by the
// next bits of input (least significant first). An entry is value<<16 |
// n for a code of n bits (after the first-level bits for a second-level
// entry), or start<<16 | subBits<<8 | linkFlag for a second-level table
// of 1<<subBits entries at start; 0 is no code (an error).
type huffTable struct {
	t       []uint32
	primary uint
}

const linkFlag = 0x80

// build makes the table for code lengths lens (0: unused symbol). It
// answers false for an over-subscribed code and for an incomplete one,
// except, as zlib, a code of one symbol of one bit (lit and dist tables)
// and a code of no symbol at all (dist tables: any use is an error).
func (h *huffTable) build(lens []uint8, primary uint, codeLengths bool) bool {
	var count [16]int
	for _, l := range lens {
		count[l&15]++
	}
	return h.buildCounted(lens, &count, primary, codeLengths)
}

// buildCounted is build with count[l] the number of lens of l (1..15);
// every len must be below 16.
func (h *huffTable) buildCounted(lens []uint8, count *[16]int, primary uint, codeLengths bool) bool {
	count[0] = 0
	maxLen := 15
	for maxLen > 0 && count[maxLen] == 0 {
		maxLen--
	}
	left := 1
	for l := 1; l <= 15; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return false
		}
	}
	incomplete := left > 0
	if incomplete && maxLen != 0 && (codeLengths || maxLen != 1) {
		return false
	}
	if uint(maxLen) < primary {
		primary = uint(max(maxLen, 1))
	}
	h.primary = primary
	size := 1 << primary
	subBits := uint(0)
	if uint(maxLen) > primary {
		subBits = uint(maxLen) - primary
	}
	if cap(h.t) < size {
		h.t = make([]uint32, size, size+64<<subBits)
	}
	h.t = h.t[:size]
	if incomplete || subBits > 0 {
		clear(h.t) // entries are found empty (links) or left empty
	}
	var next [16]int
	code := 0
	for l := 1; l <= maxLen; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	mask := size - 1
	for s, l8 := range lens {
		l := uint(l8)
		if l == 0 {
			continue
		}
		r := int(bits.Reverse16(uint16(next[l])) >> (16 - l))
		next[l]++
		if l <= primary {
			e := uint32(s)<<16 | uint32(l)
			for i := r; i < size; i += 1 << l {
				h.t[i] = e
			}
			continue
		}
		link := h.t[r&mask]
		if link&linkFlag == 0 {
			start := len(h.t)
			h.t = append(h.t, make([]uint32, 1<<subBits)...)
			link = uint32(start)<<16 | uint32(subBits)<<8 | linkFlag
			h.t[r&mask] = link
		}
		sub := h.t[link>>16 : int(link>>16)+1<<subBits]
		rl := l - primary
		e := uint32(s)<<16 | uint32(rl)
		for i := r >> primary; i < len(sub); i += 1 << rl {
			sub[i] = e
		}
	}
	return true
}

var (
	fixedOnce          sync.Once
	fixedLit, fixedDst huffTable
)

func fixedTables() {
	fixedOnce.Do(func() {
		var l [288 + 32]uint8
		for i := range 288 {
			switch {
			case i < 144:
				l[i] = 8
			case i < 256:
				l[i] = 9
			case i < 280:
				l[i] = 7
			default:
				l[i] = 8
			}
		}
		for i := range 32 {
			l[288+i] = 5
		}
		fixedLit.build(l[:288], litPrimary, false)
		fixedDst.build(l[288:], distPrimary, false)
	})
}

var (
	lenBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	dstBase  = [30]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	dstExtra = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	// clOrder is the order of the code length code lengths.
	clOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

// bitReader reads in least significant bit first. Past the end it reads
// zero bytes (counted in pos), so that a decode never needs a length
// check; consumed tells whether real input ran out.
type bitReader struct {
	in    []byte
	pos   int // bytes loaded into b, virtual zero bytes past the end included
	b     uint64
	nb    uint // valid bits in b (the bits above are the next input bits)
	limit int  // len(in) + 8: past it the stream is surely short
}

// refill makes at least 56 bits available.
func (r *bitReader) refill() {
	if r.pos+8 <= len(r.in) {
		r.b |= binary.LittleEndian.Uint64(r.in[r.pos:]) << r.nb
		r.pos += int(63-r.nb) >> 3
		r.nb |= 56
		return
	}
	r.slowRefill()
}

// slowRefill is refill near the end of in.
func (r *bitReader) slowRefill() {
	for r.nb <= 56 {
		if r.pos < len(r.in) {
			r.b |= uint64(r.in[r.pos]) << r.nb
		} else {
			r.b &= 1<<r.nb - 1
		}
		r.pos++
		r.nb += 8
	}
}

// bits reads n (<= 32) bits; the caller refilled enough.
func (r *bitReader) bits(n uint) uint32 {
	v := uint32(r.b & (1<<n - 1))
	r.b >>= n
	r.nb -= n
	return v
}

// byteOff is the offset of the next unread whole byte, once aligned.
func (r *bitReader) byteOff() int { return r.pos - int(r.nb>>3) }

// sym decodes one symbol of h; -1 for no code.
func (r *bitReader) sym(h *huffTable) int {
	e := h.t[r.b&(1<<h.primary-1)]
	if e&linkFlag != 0 {
		r.b >>= h.primary
		r.nb -= h.primary
		e = h.t[e>>16+uint32(r.b)&(1<<(e>>8&15)-1)]
	}
	n := uint(e & 31)
	if n == 0 {
		return -1
	}
	r.b >>= n
	r.nb -= n
	return int(e >> 16)
}

// inflate inflates the zlib stream at the start of in into out; ok is
// true only when the stream is well formed, ends within in, and has
// exactly len(out) bytes of content whose Adler-32 it carries.
func (z *inflater) inflate(in, out []byte) (ok bool) {
	if len(in) < 2 {
		return false
	}
	if cmf, flg := in[0], in[1]; cmf&15 != 8 || cmf>>4 > 7 || (uint(cmf)<<8|uint(flg))%31 != 0 || flg&0x20 != 0 {
		return false
	}
	r := bitReader{in: in, pos: 2, limit: len(in) + 8}
	op := 0
	for final := false; !final; {
		if r.pos > r.limit {
			return false
		}
		r.refill()
		final = r.bits(1) == 1
		var lit, dist *huffTable
		switch r.bits(2) {
		case 0: // stored
			r.bits(r.nb & 7)
			p := r.byteOff()
			if p+4 > len(in) {
				return false
			}
			n := int(binary.LittleEndian.Uint16(in[p:]))
			if binary.LittleEndian.Uint16(in[p+2:]) != ^uint16(n) || p+4+n > len(in) || op+n > len(out) {
				return false
			}
			op += copy(out[op:], in[p+4:p+4+n])
			r.pos, r.b, r.nb = p+4+n, 0, 0
			continue
		case 1:
			fixedTables()
			lit, dist = &fixedLit, &fixedDst
		case 2:
			if !z.dynamic(&r) {
				return false
			}
			lit, dist = &z.lit, &z.dist
		default:
			return false
		}
		for {
			r.refill()
			// r.sym(lit), by hand: the call costs as much as the lookup.
			e := lit.t[r.b&(1<<lit.primary-1)]
			if e&linkFlag != 0 {
				r.b >>= lit.primary
				r.nb -= lit.primary
				e = lit.t[e>>16+uint32(r.b)&(1<<(e>>8&15)-1)]
			}
			s := int(e >> 16)
			if n := uint(e & 31); n == 0 {
				s = -1
			} else {
				r.b >>= n
				r.nb -= n
			}
			switch {
			case s < 0:
				return false
			case s < 256:
				if op >= len(out) {
					return false
				}
				out[op] = byte(s)
				op++
				continue
			case s == 256:
			default:
				s -= 257
				if s >= len(lenBase) {
					return false
				}
				n := int(lenBase[s]) + int(r.bits(uint(lenExtra[s])))
				d := r.sym(dist)
				if d < 0 || d >= len(dstBase) {
					return false
				}
				// 15+5+15+13 bits at most since the refill: within its 56.
				dd := int(dstBase[d]) + int(r.bits(uint(dstExtra[d])))
				if dd > op || op+n > len(out) {
					return false
				}
				start, end := op-dd, op+n
				if dd >= 8 && end+8 <= len(out) {
					// Eight bytes at a time, each already written (dd >= 8);
					// the last may write past end, what later output (or the
					// caller's fallback, on a failure) writes over.
					for ; op < end; op += 8 {
						binary.LittleEndian.PutUint64(out[op:], binary.LittleEndian.Uint64(out[op-dd:]))
					}
					op = end
				} else if dd >= n {
					op += copy(out[op:end], out[start:op])
				} else {
					for op < end {
						op += copy(out[op:end], out[start:op])
					}
				}
				continue
			}
			break // end of block
		}
		if r.byteOff() > len(in) {
			return false
		}
	}
	r.bits(r.nb & 7)
	p := r.byteOff()
	if op != len(out) || p+4 > len(in) {
		return false
	}
	return binary.BigEndian.Uint32(in[p:]) == adler32.Checksum(out)
}

// dynamic reads a dynamic block's code lengths and builds its tables.
func (z *inflater) dynamic(r *bitReader) bool {
	r.refill()
	nlit := int(r.bits(5)) + 257
	ndist := int(r.bits(5)) + 1
	nclen := int(r.bits(4)) + 4
	if nlit > maxLit || ndist > maxDist {
		return false
	}
	var cl [19]uint8
	for i := range nclen {
		if i == 14 {
			r.refill()
		}
		cl[clOrder[i]] = uint8(r.bits(3))
	}
	clt := &z.cl
	if !clt.build(cl[:], 7, true) {
		return false
	}
	lens := z.lens[:nlit+ndist]
	var litCount, distCount [16]int
	for i := 0; i < len(lens); {
		if r.pos > r.limit {
			return false
		}
		r.refill()
		s := r.sym(clt)
		var rep int
		var v uint8
		switch {
		case s < 0:
			return false
		case s < 16:
			lens[i] = uint8(s)
			if i < nlit {
				litCount[s]++
			} else {
				distCount[s]++
			}
			i++
			continue
		case s == 16:
			if i == 0 {
				return false
			}
			v, rep = lens[i-1], 3+int(r.bits(2))
		case s == 17:
			rep = 3 + int(r.bits(3))
		default:
			rep = 11 + int(r.bits(7))
		}
		if i+rep > len(lens) {
			return false
		}
		for range rep {
			lens[i] = v
			if i < nlit {
				litCount[v&15]++
			} else {
				distCount[v&15]++
			}
			i++
		}
	}
	if lens[256] == 0 {
		return false
	}
	return z.lit.buildCounted(lens[:nlit], &litCount, litPrimary, false) && z.dist.buildCounted(lens[nlit:], &distCount, distPrimary, false)
}
