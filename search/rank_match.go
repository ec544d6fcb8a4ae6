package search

import "bytes"

// The matchers of a ranked search: every term's matches in a buffer, one
// scan per term or one Teddy pass for all, with the terms of each line.

// anyTerm is the chunkMatcher of a ranked search: the first match of any
// term. With c set (one worker's, see rankFile) every buffer reuses it:
// no allocation per file. With td set, a buffer without the non-ASCII
// letters special lists (K KELVIN SIGN, ſ LONG S: they fold to the
// terms' k and s, which Teddy's ASCII folding does not see) is searched
// for all terms in one pass; other buffers term by term.
type anyTerm struct {
	terms   []chunkMatcher
	c       *anyChunk
	td      *teddyChunk
	special [][]byte
}

func newAnyChunk(n int) *anyChunk {
	return &anyChunk{ms: make([]matcher, n), cur: make([]termCursor, n)}
}

func (a anyTerm) forChunk(b []byte) matcher {
	if a.td != nil && !containsAny(b, a.special) {
		a.td.reset()
		return a.td
	}
	c := a.c
	if c == nil {
		c = newAnyChunk(len(a.terms))
	}
	c.blen = -1
	for i, t := range a.terms {
		c.ms[i] = t.forChunk(b)
		c.cur[i].started = false
	}
	return c
}

// anyChunk remembers, per term, the next matches found in this buffer, a
// batch at a time (see batchMatcher), so that each term scans the buffer
// once, not once per matching line nor once per match.
type anyChunk struct {
	ms   []matcher
	cur  []termCursor
	blen int // the length of the buffer the positions are of
}

// termBatch is how many matches of a term one scan lists.
const termBatch = 32

// termCursor is one term's matches in a buffer: pos[i:n] are the next,
// every match at or after base is in pos or at or after scan.
type termCursor struct {
	pos        [termBatch]int
	i, n       int
	base, scan int
	started    bool
	done       bool // none at or after scan
}

// next is the first match of m at or after from in b, or -1.
func (k *termCursor) next(m matcher, b []byte, from int) int {
	for {
		if p, ok := k.at(from); ok {
			return p
		}
		k.listed(indexAll(m, b, max(from, k.scan), k.pos[:]))
	}
}

// at is the first listed position at or after from, or -1 when there is
// none; ok is false when the batch is used up and the next one is to be
// listed (from k.scan on, see listed) before asking again.
func (k *termCursor) at(from int) (p int, ok bool) {
	if !k.started || from < k.base {
		*k = termCursor{started: true, base: from, scan: from}
	}
	for k.i < k.n && k.pos[k.i] < from {
		k.i++
	}
	if k.i < k.n {
		return k.pos[k.i], true
	}
	return -1, k.done
}

// listed takes the n positions just listed into k.pos as the batch.
func (k *termCursor) listed(n int) {
	k.n, k.i = n, 0
	k.done = n < termBatch
	if n > 0 {
		k.scan = k.pos[n-1] + 1
	}
}

func (c *anyChunk) index(b []byte, from int) int {
	if len(b) != c.blen {
		c.blen = len(b)
		for i := range c.cur {
			c.cur[i].started = false
		}
	}
	best := -1
	for i, m := range c.ms {
		if p := c.cur[i].next(m, b, from); p >= 0 && (best < 0 || p < best) {
			best = p
		}
	}
	return best
}

// termsBefore is the set of terms (bit i for term i) whose next match,
// as the last index call found it, starts before end: right after index
// found a line's first match, the terms matching in that line, whole,
// found without scanning the line again.
func (c *anyChunk) termsBefore(end int) uint64 {
	var mask uint64
	for i := range c.cur {
		if k := &c.cur[i]; k.i < k.n && k.pos[k.i] < end {
			mask |= 1 << i
		}
	}
	return mask
}

// containsAny tells whether b holds one of subs.
func containsAny(b []byte, subs [][]byte) bool {
	for _, s := range subs {
		if bytes.Contains(b, s) {
			return true
		}
	}
	return false
}

// teddyChunk is anyChunk for a query Teddy finds in one pass: the next
// matches of all terms, a batch at a time (in cur), with the terms
// matching at each position.
type teddyChunk struct {
	t     *teddy
	b     []byte // the buffer the positions are of
	which [termBatch]uint8
	cur   termCursor
}

func (c *teddyChunk) reset() { c.cur.started, c.b = false, nil }

// list lists the next batch of matches, from scan on.
func (c *teddyChunk) list(scan int) {
	c.cur.listed(c.t.indexAll(c.b, scan, c.cur.pos[:], c.which[:]))
}

func (c *teddyChunk) index(b []byte, from int) int {
	if !c.cur.started || len(b) != len(c.b) {
		c.b, c.cur.started = b, false // a new buffer: at starts the batch over
	}
	for {
		if p, ok := c.cur.at(from); ok {
			return p
		}
		c.list(max(from, c.cur.scan))
	}
}

// termsBefore is the set of terms matching from the match index last
// found to end; those matches are used up (the next index call starts
// past the line end).
func (c *teddyChunk) termsBefore(end int) uint64 {
	var mask uint64
	k := &c.cur
	for {
		for k.i < k.n && k.pos[k.i] < end {
			mask |= uint64(c.which[k.i])
			k.i++
		}
		if k.i < k.n || k.done {
			return mask
		}
		c.list(k.scan)
	}
}

// termsIn is the set of terms matching in line (bit i for term i).
func (q *rankQuery) termsIn(line []byte) uint64 {
	var lm uint64
	for i, t := range q.terms {
		if t.forChunk(line).index(line, 0) >= 0 {
			lm |= 1 << i
		}
	}
	return lm
}
