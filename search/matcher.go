package search

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// matcher finds a literal query in a buffer. It is the "grep-matcher" part
// of the engine: it knows nothing about files or lines.
type matcher interface {
	// index returns the offset in b of the first match starting at or
	// after from, or -1.
	index(b []byte, from int) int
}

// chunkMatcher picks the matcher for one buffer; only the ASCII case-fold
// matcher ever answers differently (see foldASCII).
type chunkMatcher interface {
	forChunk(b []byte) matcher
}

// newMatcher returns the fastest correct matcher for query.
//
//   - case-sensitive: literal with a prefilter on its two rarest bytes
//     (see pair; where the CPU lacks AVX2, on its rarest byte);
//   - case-insensitive, ASCII query: foldASCII, the same prefilter on two
//     bytes in either case (without AVX2: two IndexByte cursors on the
//     rarest letter). Matches spelled with the two non-ASCII letters that
//     fold to ASCII (K KELVIN SIGN and ſ LONG S) are verified around each
//     candidate when the pair can be chosen outside the query's k and s;
//     otherwise buffers holding those letters are searched with Unicode
//     folding;
//   - case-insensitive, non-ASCII query: Unicode simple case folding (the
//     same folding ripgrep's -i uses) through regexp, slower but correct.
func newMatcher(query string, caseSensitive bool) chunkMatcher {
	if caseSensitive || !hasLetters(query) {
		return fixed{newLiteral([]byte(query))}
	}
	if isASCII(query) {
		return newFoldASCII(query)
	}
	return fixed{newFoldUnicode(query)}
}

// fixed is a chunkMatcher that always uses the same matcher.
type fixed struct{ m matcher }

func (f fixed) forChunk([]byte) matcher { return f.m }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// hasLetters reports whether case folding can change what s matches.
func hasLetters(s string) bool {
	for _, r := range s {
		if unicode.SimpleFold(r) != r {
			return true
		}
	}
	return false
}

// byteRank approximates how common each byte is in source code and logs
// (higher is more common), in the spirit of the frequency table of Rust's
// memchr crate. Only the order matters: the prefilter searches for the
// needle's least common byte.
var byteRank = func() [256]uint8 {
	var r [256]uint8
	for i := range r {
		r[i] = 10 // control bytes and non-ASCII: rare in code, common in CJK text
	}
	for b := 0x80; b < 0x100; b++ {
		r[b] = 60
	}
	set := func(chars string, rank uint8) {
		for i := 0; i < len(chars); i++ {
			r[chars[i]] = rank
		}
	}
	set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", 120)
	set("0123456789", 130)
	// Capitals start words: graded by English letter frequency (E T A O
	// I N S H R D L C U M W F G Y P B V K J X Q Z), as the lower case
	// letters are, so that in "EOF" the scan is for F, not E.
	set("ETAOINS", 118)
	set("HRDLCUM", 112)
	set("WFGYPBV", 104)
	set("K", 90)
	set("JQXZ", 70)
	set("jqxz", 90)
	set("bkvwyg", 150)
	set("fmpuc", 170)
	set("hldr", 190)
	set("sinoa", 210)
	set("te", 230)
	set("(),.;_=\"", 160)
	set("\t/", 170)
	set("\n", 200)
	set(" ", 255)
	return r
}()

// literal is the case-sensitive matcher: IndexByte on the needle's rarest
// byte, then a full comparison.
type literal struct {
	needle  []byte
	rare    byte
	rareOff int
	pair    *pair // with the vector scan: the two rarest bytes together
}

func newLiteral(needle []byte) *literal {
	m := &literal{needle: needle}
	best := -1
	for i, b := range needle {
		if best < 0 || byteRank[b] < byteRank[needle[best]] {
			best = i
		}
	}
	m.rareOff = best
	m.rare = needle[best]
	m.pair = newPair(needle, false, func(i int) int { return int(byteRank[needle[i]]) })
	return m
}

func (m *literal) index(b []byte, from int) int {
	n := len(m.needle)
	if m.pair != nil {
		return m.pair.each(b, from, len(b)-n, func(s int) bool { return bytes.Equal(b[s:s+n], m.needle) })
	}
	if n == 1 {
		if i := bytes.IndexByte(b[from:], m.rare); i >= 0 {
			return from + i
		}
		return -1
	}
	last := len(b) - n // last possible start
	for pos := from + m.rareOff; ; {
		if pos-m.rareOff > last {
			return -1
		}
		i := bytes.IndexByte(b[pos:last+m.rareOff+1], m.rare)
		if i < 0 {
			return -1
		}
		start := pos + i - m.rareOff
		if bytes.Equal(b[start:start+n], m.needle) {
			return start
		}
		pos += i + 1
	}
}

// foldASCII is the case-insensitive matcher for ASCII queries.
type foldASCII struct {
	lower   []byte // the needle, lower-cased
	anchor  int    // offset of the rarest byte in the needle
	lo, up  byte   // the anchor byte in lower and upper case (equal for non-letters)
	unicode *foldUnicode
	special [][]byte // non-ASCII letters that fold to a letter of the needle
	pair    *pair    // with the vector scan: the two cheapest bytes together, either case
	// pairUnicode: the pair holds neither k nor s and has none between
	// its bytes, so that every match, K KELVIN SIGN or ſ LONG S included,
	// holds the pair at its distance: index finds those matches too (they
	// start before the ASCII start of their pair when K or ſ precedes it),
	// and no buffer needs the scan for the special letters first.
	pairUnicode bool
}

var (
	kelvinSign = []byte("\u212A") // folds to k
	longS      = []byte("\u017F") // folds to s
)

func toLowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func newFoldASCII(query string) *foldASCII {
	m := &foldASCII{lower: make([]byte, len(query))}
	for i := 0; i < len(query); i++ {
		m.lower[i] = toLowerASCII(query[i])
	}
	// A letter costs two scans (both cases): rank it by the sum.
	cost := func(b byte) int {
		if 'a' <= b && b <= 'z' {
			return int(byteRank[b]) + int(byteRank[b-'a'+'A'])
		}
		return 2 * int(byteRank[b])
	}
	for i, b := range m.lower {
		if cost(b) < cost(m.lower[m.anchor]) {
			m.anchor = i
		}
	}
	m.special = foldSpecials(nil, query)
	m.lo = m.lower[m.anchor]
	m.up = m.lo
	if 'a' <= m.lo && m.lo <= 'z' {
		m.up = m.lo - 'a' + 'A'
	}
	// One scan for both cases: a letter costs what its two cases cost.
	pairCost := func(i int) int { return cost(m.lower[i]) }
	if len(m.special) == 0 {
		m.pair = newPair(m.lower, true, pairCost)
		return m
	}
	m.unicode = newFoldUnicode(query)
	var ranges []int // the runs of the needle without k or s
	lo := 0
	for i := 0; i <= len(m.lower); i++ {
		if i == len(m.lower) || m.lower[i] == 'k' || m.lower[i] == 's' {
			ranges = append(ranges, lo, i)
			lo = i + 1
		}
	}
	if m.pair = newPair(m.lower, true, pairCost, ranges...); m.pair != nil {
		m.pairUnicode = true
		return m
	}
	m.pair = newPair(m.lower, true, pairCost) // and forChunk looks for the special letters
	return m
}

// foldSpecials adds to list the non-ASCII letters that fold to a letter
// of s (K KELVIN SIGN for k, ſ LONG S for s, in either case): what an
// ASCII-folding scan does not see.
func foldSpecials(list [][]byte, s string) [][]byte {
	if strings.ContainsAny(s, "kK") {
		list = appendOnce(list, kelvinSign)
	}
	if strings.ContainsAny(s, "sS") {
		list = appendOnce(list, longS)
	}
	return list
}

func appendOnce(list [][]byte, b []byte) [][]byte {
	for _, x := range list {
		if bytes.Equal(x, b) {
			return list
		}
	}
	return append(list, b)
}

func (m *foldASCII) forChunk(b []byte) matcher {
	if m.pairUnicode {
		return m
	}
	for _, s := range m.special {
		if bytes.Contains(b, s) {
			return m.unicode
		}
	}
	return m
}

func (m *foldASCII) index(b []byte, from int) int {
	n := len(m.lower)
	last := len(b) - n
	if from > last {
		return -1
	}
	if m.pair != nil {
		found := -1
		m.pair.each(b, from, last, func(s int) bool {
			if equalFoldASCII(b[s:s+n], m.lower) {
				found = s
				return true
			}
			if !m.pairUnicode {
				return false
			}
			// A match spelled with special letters starts where the runes
			// before the pair, read backwards from it, fold to the
			// query's bytes before the pair: at most one start per
			// candidate, earlier than s when K or ſ is among them, and
			// found in as many steps as the query has bytes before its
			// pair that the text matches (trying every start up to 2 bytes
			// back per k and 1 per s instead cost up to 2046 match
			// attempts at every candidate for a 1 KiB query).
			p := s + m.pair.off1
			st := m.unicode.startBefore(b, from, p, m.pair.off1)
			if st >= 0 && m.unicode.matchFrom(b, p, m.pair.off1) {
				found = st
				return true
			}
			return false
		})
		return found
	}
	end := last + m.anchor + 1 // the anchor byte of a match lies before end
	pos := from + m.anchor
	// Two cursors: the next upper- and lower-case anchor at or after pos.
	nextLo, nextUp := -2, -2
	for pos < end {
		if nextLo != -1 && nextLo < pos {
			nextLo = indexFrom(b[:end], pos, m.lo)
		}
		if m.up == m.lo {
			nextUp = -1
		} else if nextUp != -1 && nextUp < pos {
			nextUp = indexFrom(b[:end], pos, m.up)
		}
		i := nextLo
		if i < 0 || (nextUp >= 0 && nextUp < i) {
			i = nextUp
		}
		if i < 0 {
			return -1
		}
		start := i - m.anchor
		if equalFoldASCII(b[start:start+n], m.lower) {
			return start
		}
		pos = i + 1
	}
	return -1
}

func indexFrom(b []byte, from int, c byte) int {
	if i := bytes.IndexByte(b[from:], c); i >= 0 {
		return from + i
	}
	return -1
}

// equalFoldASCII compares s with the lower-case ASCII needle lower.
func equalFoldASCII(s, lower []byte) bool {
	for i, c := range lower {
		if toLowerASCII(s[i]) != c {
			return false
		}
	}
	return true
}

// foldUnicode matches with Unicode simple case folding (the folding of
// regexp's (?i) and of ripgrep's -i) without a regular expression: the
// encodings of every case variant of the query's first rune are searched
// with bytes.Index, one cursor each, and each candidate is verified rune by
// rune. Bytes that are not valid UTF-8 never match (ripgrep matches U+FFFD
// only where the file holds its encoding).
type foldUnicode struct {
	folds    [][]rune // folds[i]: every rune equal to the query's i-th under folding
	variants [][]byte // UTF-8 encodings of folds[0]
}

func newFoldUnicode(query string) *foldUnicode {
	m := &foldUnicode{}
	for _, r := range query {
		orbit := []rune{r}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			orbit = append(orbit, f)
		}
		m.folds = append(m.folds, orbit)
	}
	for _, r := range m.folds[0] {
		m.variants = append(m.variants, utf8.AppendRune(nil, r))
	}
	return m
}

func (m *foldUnicode) index(b []byte, from int) int {
	var cursors [8]int // an orbit has at most 4 runes
	next := cursors[:len(m.variants)]
	for j := range next {
		next[j] = -2 // not searched yet
	}
	for pos := from; pos < len(b); {
		best := -1
		for j, v := range m.variants {
			if next[j] != -1 && next[j] < pos {
				next[j] = -1
				if k := bytes.Index(b[pos:], v); k >= 0 {
					next[j] = pos + k
				}
			}
			if next[j] >= 0 && (best < 0 || next[j] < best) {
				best = next[j]
			}
		}
		if best < 0 {
			return -1
		}
		if m.matchAt(b, best) {
			return best
		}
		pos = best + 1
	}
	return -1
}

// matchAt verifies the whole query at b[p:].
func (m *foldUnicode) matchAt(b []byte, p int) bool { return m.matchFrom(b, p, 0) }

// matchFrom verifies the query from its i-th rune on at b[p:].
// foldStepHook, when set (by tests), is called once per rune that
// startBefore or matchFrom compares: their work, counted without a clock.
var foldStepHook func()

func (m *foldUnicode) matchFrom(b []byte, p, i int) bool {
	for _, orbit := range m.folds[i:] {
		if foldStepHook != nil {
			foldStepHook()
		}
		r, w := utf8.DecodeRune(b[p:])
		if w == 0 || (r == utf8.RuneError && w == 1) || !inOrbit(orbit, r) {
			return false
		}
		p += w
	}
	return true
}

// startBefore verifies the query's first i runes backwards from b[:p],
// never reading before from: it returns where they start, or -1. The
// runes read backwards are those read forwards from that start (each is a
// valid encoding), so there is exactly one candidate start.
func (m *foldUnicode) startBefore(b []byte, from, p, i int) int {
	for i--; i >= 0; i-- {
		if foldStepHook != nil {
			foldStepHook()
		}
		r, w := utf8.DecodeLastRune(b[from:p])
		if w == 0 || (r == utf8.RuneError && w == 1) || !inOrbit(m.folds[i], r) {
			return -1
		}
		p -= w
	}
	return p
}

func inOrbit(orbit []rune, r rune) bool {
	for _, f := range orbit {
		if f == r {
			return true
		}
	}
	return false
}

// batchMatcher is a matcher that lists its matches a batch at a time: one
// prefilter scan hands over many, where index starts a scan per match.
type batchMatcher interface {
	// indexAll stores in out the starts of the first len(out) matches at
	// or after from, in order, and returns how many it stored: fewer
	// than len(out) when no more follow.
	indexAll(b []byte, from int, out []int) int
}

// indexAll is m's batch of matches: its own, or index called per match.
func indexAll(m matcher, b []byte, from int, out []int) int {
	if bm, ok := m.(batchMatcher); ok {
		return bm.indexAll(b, from, out)
	}
	n := 0
	for n < len(out) && from <= len(b) {
		i := m.index(b, from)
		if i < 0 {
			break
		}
		out[n], n, from = i, n+1, i+1
	}
	return n
}

func (m *literal) indexAll(b []byte, from int, out []int) int {
	if m.pair == nil {
		return indexAll(indexOnly{m}, b, from, out)
	}
	n, k := len(m.needle), 0
	m.pair.each(b, from, len(b)-n, func(s int) bool {
		if bytes.Equal(b[s:s+n], m.needle) {
			out[k], k = s, k+1
		}
		return k == len(out)
	})
	return k
}

func (m *foldASCII) indexAll(b []byte, from int, out []int) int {
	if m.pair == nil {
		return indexAll(indexOnly{m}, b, from, out)
	}
	n, k := len(m.lower), 0
	prev := from - 1 // starts stay in order, each once
	m.pair.each(b, from, len(b)-n, func(s int) bool {
		st := -1
		if equalFoldASCII(b[s:s+n], m.lower) {
			st = s
		} else if m.pairUnicode {
			// As in index: a match spelled with K or ſ before the pair.
			p := s + m.pair.off1
			if t := m.unicode.startBefore(b, from, p, m.pair.off1); t >= 0 && m.unicode.matchFrom(b, p, m.pair.off1) {
				st = t
			}
		}
		if st > prev {
			out[k], k, prev = st, k+1, st
		}
		return k == len(out)
	})
	return k
}

// indexOnly hides a matcher's indexAll (for its fallback to index).
type indexOnly struct{ matcher }
