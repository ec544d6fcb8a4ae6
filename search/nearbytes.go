package search

import (
	"regexp/syntax"
	"sort"
	"unicode/utf8"
)

// byteSet is a set of bytes.
type byteSet [4]uint64

func (s *byteSet) add(lo, hi int) {
	for c := lo; c <= hi; c++ {
		s[c>>6] |= 1 << (c & 63)
	}
}

func (s *byteSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }

// nearByte says that in every match the byte at off from the start of the
// prefilter literal is one of set.
type nearByte struct {
	off int
	set byteSet
}

// nearBytesOf fills w.near for the window of the case-sensitive literal
// subs[at] of a concatenation: the parts next to the literal that always
// match one ASCII byte per position (ASCII literals, ASCII classes, fixed
// repetitions of them) pin the bytes around each occurrence, nearest
// first. In [0-9]{4}-[0-9]{2} a '-' is a candidate only between digits:
// checking two bytes costs far less than a regexp call, and most '-' of
// source code (x-1, --flag, a - b) fail it. When such parts make up the
// whole pattern the check is the match (exact) and no regexp runs.
func nearBytesOf(w *litWindow, subs []*syntax.Regexp, at int, litLen int) {
	var near []nearByte
	dist := map[int]int{} // off -> distance from the literal, for the order
	off, covered := 0, 0
	for k := at - 1; k >= 0; k-- {
		seq, ok := fixedBytes(subs[k], nil)
		if !ok {
			break
		}
		covered++
		for j := len(seq) - 1; j >= 0; j-- {
			off--
			near = append(near, nearByte{off: off, set: seq[j]})
			dist[off] = -off
		}
	}
	exact := covered == at
	off, covered = litLen, 0
	for k := at + 1; k < len(subs); k++ {
		seq, ok := fixedBytes(subs[k], nil)
		if !ok {
			break
		}
		covered++
		for _, s := range seq {
			near = append(near, nearByte{off: off, set: s})
			dist[off] = off - litLen + 1
			off++
		}
	}
	exact = exact && covered == len(subs)-at-1
	sort.SliceStable(near, func(i, j int) bool { return dist[near[i].off] < dist[near[j].off] })
	w.near, w.exact = near, exact
}

// fixedBytes appends to seq the byte sets of the text re matches when
// that is always one ASCII byte per position: false otherwise (a class
// reaching past ASCII, case folding, a variable repetition, an assertion).
func fixedBytes(re *syntax.Regexp, seq []byteSet) ([]byteSet, bool) {
	if len(seq) > maxWindow {
		return nil, false
	}
	switch re.Op {
	case syntax.OpEmptyMatch:
		return seq, true
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil, false // K KELVIN SIGN matches k: not one byte
		}
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf {
				return nil, false
			}
			var s byteSet
			s.add(int(r), int(r))
			seq = append(seq, s)
		}
		return seq, true
	case syntax.OpCharClass:
		if len(re.Rune) == 0 || re.Rune[len(re.Rune)-1] >= utf8.RuneSelf {
			return nil, false
		}
		var s byteSet
		for i := 0; i+1 < len(re.Rune); i += 2 {
			s.add(int(re.Rune[i]), int(re.Rune[i+1]))
		}
		return append(seq, s), true
	case syntax.OpCapture:
		return fixedBytes(re.Sub[0], seq)
	case syntax.OpRepeat:
		if re.Min != re.Max || re.Max > maxWindow {
			return nil, false
		}
		for range re.Min {
			var ok bool
			if seq, ok = fixedBytes(re.Sub[0], seq); !ok {
				return nil, false
			}
		}
		return seq, true
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			var ok bool
			if seq, ok = fixedBytes(sub, seq); !ok {
				return nil, false
			}
		}
		return seq, true
	}
	return nil, false
}

// nearOK checks the pinned bytes around the occurrence of the literal at
// i, all of which must lie within b[lo:hi] (the window inside its line).
func (w *litWindow) nearOK(b []byte, i, lo, hi int) bool {
	for k := range w.near {
		p := i + w.near[k].off
		if p < lo || p >= hi || !w.near[k].set.has(b[p]) {
			return false
		}
	}
	return true
}
