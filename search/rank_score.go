package search

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"io"
	"math"
	"math/bits"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// How a ranked search scores files (measured on a question set over Go's
// net tree, see relevance_test.go): Okapi BM25 over the file's lines, the
// document frequencies counted in the same pass over every file, so that
// a word in every file ("file", "license") weighs little and a rare one
// ("cache") much; a line that occurs identically at the head of many
// files (a licence header, a common import) is boilerplate and counts for
// nothing; a term in the file's name or in a name the file defines (func,
// type, const, class, def...) counts as a strong match; a line holding
// several terms adds their weight once more; tests, testdata, vendored and
// generated files weigh less.

const (
	// headerLines is where licence headers, package clauses and imports
	// are: matching lines there are hashed to find boilerplate.
	headerLines = 30
	// maxHeads bounds the hashed header lines kept per file.
	maxHeads = 8
	// maxSpots bounds the title candidates kept per file: the first line
	// of each distinct set of terms.
	maxSpots = 8
	// maxCandidates bounds the files a ranked search keeps for scoring
	// (the files holding a term). Past it, the half holding the fewest
	// distinct terms (plain order, better) is dropped; they still count
	// in document frequencies and boilerplate.
	maxCandidates = 50_000
	// A header line is boilerplate when at least boilerShare of the
	// files read, and boilerMinFiles of them, hold it identically.
	boilerShare    = 0.05
	boilerMinFiles = 5

	bm25K1 = 1.2
	bm25B  = 0.75
	// Weights of a term, in units of its idf (a BM25 line match is worth
	// up to k1+1 = 2.2): in the file's base name, elsewhere in its path,
	// in a name the file defines, and again on the file's best line
	// holding two terms or more.
	wBase, wDir, wDef, wProx = 1.5, 0.4, 1.5, 0.5
	// Factors of whole files: tests, testdata/vendored code, generated.
	fTest, fAside, fGenerated = 0.5, 0.3, 0.3
)

// lineSeed hashes header lines, the same in every worker.
var lineSeed = maphash.MakeSeed()

// headLine is a matching line among a file's first headerLines: its
// hash and terms.
type headLine struct {
	hash uint64
	mask uint8
}

// spot is a title candidate: the first line holding a set of terms (a
// later one replaces it when it defines a name with a term, or when it
// was a header line).
type spot struct {
	hash     uint64 // of a header line
	line     int32
	off, len uint16 // its text in fileStats.text
	mask     uint8
	def      bool // the line defines a name holding a term
	head     bool // among the first headerLines
	cut      bool // its text is cut at maxTitleText
}

// fileStats is what a ranked search keeps of a file for scoring, small
// and of fixed size (the terms are at most MaxTerms = 8: a set is a
// uint8).
type fileStats struct {
	tf        [MaxTerms]int32 // lines holding each term
	heads     [maxHeads]headLine
	spots     [maxSpots]spot
	nheads    uint8
	nspots    uint8
	content   uint8 // terms in the content
	defs      uint8 // terms in a defined name
	path      uint8 // terms in the path
	generated bool  // "Code generated ... DO NOT EDIT" at its head
	// text holds the spots' texts, each at most maxTitleText bytes: one
	// buffer, not a string per spot (most are never shown).
	text []byte
}

// addLine counts a matching line: line is its bytes (valid during the
// call only), mask its terms.
func (st *fileStats) addLine(q *rankQuery, lineNo int, mask uint8, line []byte, doc bool) {
	for m := mask; m != 0; m &= m - 1 {
		st.tf[bits.TrailingZeros8(m)]++
	}
	st.content |= mask
	var def uint8
	if mask&^st.defs != 0 {
		// Only terms not yet found in a defined name are looked for.
		def = q.definedTerms(line, mask, doc)
		st.defs |= def
	}
	head := lineNo <= headerLines
	var h uint64
	if head {
		h = maphash.Bytes(lineSeed, bytes.TrimSpace(line))
		// Once per file: boilerplate is a line many files share, not a
		// line one file repeats.
		seen := false
		for _, hl := range st.heads[:st.nheads] {
			seen = seen || hl.hash == h
		}
		if !seen && st.nheads < maxHeads {
			st.heads[st.nheads] = headLine{hash: h, mask: mask}
			st.nheads++
		}
	}
	if len(st.text)+maxTitleText > math.MaxUint16 {
		return // the texts of some 400 spots: no more (offsets are uint16)
	}
	at := -1
	for i := range st.spots[:st.nspots] {
		if sp := &st.spots[i]; sp.mask == mask {
			if !(sp.head && !head) && !(def != 0 && !sp.def) {
				return
			}
			at = i
			break
		}
	}
	if at < 0 {
		if st.nspots < maxSpots {
			at = int(st.nspots)
			st.nspots++
		} else {
			// Full: the new set replaces one with fewer terms.
			low := 0
			for i := range st.spots {
				if bits.OnesCount8(st.spots[i].mask) < bits.OnesCount8(st.spots[low].mask) {
					low = i
				}
			}
			if bits.OnesCount8(st.spots[low].mask) >= bits.OnesCount8(mask) {
				return
			}
			at = low
		}
	}
	line = bytes.TrimSpace(line)
	cut := len(line) > maxTitleText
	if cut {
		n := maxTitleText
		for n > 0 && !utf8.RuneStart(line[n]) {
			n--
		}
		line = line[:n]
	}
	st.spots[at] = spot{hash: h, line: int32(lineNo), off: uint16(len(st.text)), len: uint16(len(line)), mask: mask, def: def != 0, head: head, cut: cut}
	if st.text == nil {
		st.text = make([]byte, 0, 384) // room for 8 lines of some 40 bytes
	}
	st.text = append(st.text, line...)
}

// defStarts are the words that begin a definition, by their first byte:
// keywords (followed by the name) and modifiers (followed by more words).
var defStarts [256][]defWord

type defWord struct {
	word     string
	modifier bool
}

func init() {
	for _, w := range strings.Fields("func fn def class type const var let interface struct enum trait function module #define object record") {
		defStarts[w[0]] = append(defStarts[w[0]], defWord{word: w + " "})
	}
	for _, w := range strings.Fields("export pub pub(crate) public private protected static async abstract final default extern inline override open internal sealed") {
		defStarts[w[0]] = append(defStarts[w[0]], defWord{word: w + " ", modifier: true})
	}
}

// definedName is the name line defines (func Name, func (r *T) Name, type
// Name, class Name, export const Name, a Markdown heading in a doc...),
// or nil.
func definedName(line []byte, doc bool) []byte {
	if len(line) > 0 && line[0] == '\t' {
		// Code indented by tabs (Go, C) defines its names at the left
		// edge; the lines in a body are most of the lines a search
		// matches.
		return nil
	}
	l := trimBlank(line)
	if doc && len(l) > 1 && l[0] == '#' {
		return bytes.TrimLeft(l, "# ")
	}
	kw := ""
next:
	for len(l) > 0 {
		for _, w := range defStarts[l[0]] {
			if bytes.HasPrefix(l, []byte(w.word)) {
				l = trimBlank(l[len(w.word):])
				if !w.modifier {
					kw = w.word
					break next
				}
				continue next
			}
		}
		return nil
	}
	if kw == "" {
		return nil
	}
	if kw == "func " && len(l) > 0 && l[0] == '(' {
		i := bytes.IndexByte(l, ')')
		if i < 0 {
			return nil
		}
		l = trimBlank(l[i+1:])
	}
	n := 0
	for n < len(l) && (l[n] == '_' || l[n] == '$' || 'a' <= l[n]|0x20 && l[n]|0x20 <= 'z' || '0' <= l[n] && l[n] <= '9') {
		n++
	}
	return l[:n]
}

// trimBlank is b without its leading spaces and tabs (bytes.TrimLeft
// with a cutset was a third of definedName's time).
func trimBlank(b []byte) []byte {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return b[i:]
}

// definedTerms is the set of mask's terms in the name line defines.
func (q *rankQuery) definedTerms(line []byte, mask uint8, doc bool) uint8 {
	name := definedName(line, doc)
	if len(name) == 0 {
		return 0
	}
	var def uint8
	for m := mask; m != 0; m &= m - 1 {
		i := bits.TrailingZeros8(m)
		if containsFold(name, q.lower[i]) {
			def |= 1 << i
		}
	}
	return def
}

// containsFold tells whether s holds the lower-case term t, ASCII
// letters compared without case (a name is short: no copy, no setup).
func containsFold[S []byte | string](s S, t string) bool {
	for i := 0; i+len(t) <= len(s); i++ {
		j := 0
		for j < len(t) && (s[i+j] == t[j] || 'A' <= s[i+j] && s[i+j] <= 'Z' && s[i+j]+'a'-'A' == t[j]) {
			j++
		}
		if j == len(t) {
			return true
		}
	}
	return false
}

// lineStart is the offset of the last line of raw: after its last '\n',
// 0 when there is none. It reads 8 bytes at a time from the end
// (bytes.LastIndexByte reads one at a time, and most lines a ranked
// search looks at are a few dozen bytes).
func lineStart(raw []byte) int {
	const ones, highs, nl = 0x0101010101010101, 0x8080808080808080, 0x0a0a0a0a0a0a0a0a
	end := len(raw)
	for end >= 8 {
		v := binary.LittleEndian.Uint64(raw[end-8:]) ^ nl
		if z := (v - ones) &^ v & highs; z != 0 {
			// The highest flagged byte is a '\n' unless a borrow from
			// a lower one flagged it (a 0x0b byte above a '\n').
			if i := end - 8 + (63-bits.LeadingZeros64(z))/8; raw[i] == '\n' {
				return i + 1
			}
			return bytes.LastIndexByte(raw[:end], '\n') + 1
		}
		end -= 8
	}
	return bytes.LastIndexByte(raw[:end], '\n') + 1
}

// title is the text of spot i: trimmed, at most maxTitleText bytes cut
// on a rune boundary, "…" after a cut.
func (st *fileStats) title(i int) string {
	sp := &st.spots[i]
	t := strings.ToValidUTF8(string(st.text[sp.off:sp.off+sp.len]), "\uFFFD")
	if sp.cut {
		t += "…"
	}
	return t
}

// isGenerated tells whether a file's head says it is generated.
func isGenerated(head []byte) bool {
	i := bytes.Index(head, []byte("Code generated"))
	return i >= 0 && bytes.Contains(head[i:], []byte("DO NOT EDIT"))
}

// rankSink is Rank's sink: it keeps every file holding a term (up to
// maxCandidates), with the document frequencies and header lines of all,
// and scores them once the pass is done (finish).
type rankSink struct {
	res   *RankResult
	limit int
	plain bool // the plain order (better), for the relevance test
	// cands are the files kept, in blocks that never move (a file's
	// stats are a few hundred bytes: growing one slice copied them).
	cands [][]RankedFile
	n     int
	df    [MaxTerms]int
	heads map[uint64]int32 // header line: the files holding it
}

// candBlock is how many files a block of rankSink.cands holds.
const candBlock = 512

// drain takes every worker's results.
func (k *rankSink) drain(results <-chan []RankedFile) {
	k.heads = make(map[uint64]int32, 1024)
	for rs := range results {
		for i := range rs {
			r := &rs[i]
			if r.Lines >= 0 {
				k.res.FilesScanned++
			}
			if r.Terms == 0 {
				continue
			}
			for m := r.st.content | r.st.path; m != 0; m &= m - 1 {
				k.df[bits.TrailingZeros8(m)]++
			}
			for _, h := range r.st.heads[:r.st.nheads] {
				k.heads[h.hash]++
			}
			if k.n == maxCandidates {
				k.evict()
			}
			if k.n%candBlock == 0 {
				k.cands = append(k.cands, make([]RankedFile, 0, candBlock))
			}
			last := &k.cands[len(k.cands)-1]
			*last = append(*last, *r)
			k.n++
		}
	}
}

// all is every file kept.
func (k *rankSink) all(yield func(*RankedFile) bool) {
	for _, b := range k.cands {
		for i := range b {
			if !yield(&b[i]) {
				return
			}
		}
	}
}

// evict keeps the better half of the files kept, in the plain order.
func (k *rankSink) evict() {
	var ps []*RankedFile
	for r := range k.all {
		ps = append(ps, r)
	}
	slices.SortFunc(ps, func(a, b *RankedFile) int { return cmpBool(better(a, b), better(b, a)) })
	var kept [][]RankedFile
	for i, r := range ps[:len(ps)/2] {
		if i%candBlock == 0 {
			kept = append(kept, make([]RankedFile, 0, candBlock))
		}
		kept[len(kept)-1] = append(kept[len(kept)-1], *r)
	}
	k.cands, k.n = kept, len(ps)/2
}

func cmpBool(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
}

// top keeps the best limit of files in res, best first, by less.
func (k *rankSink) top(r *RankedFile, less func(a, b *RankedFile) bool) {
	fs := k.res.Files
	at := len(fs)
	for at > 0 && less(r, &fs[at-1]) {
		at--
	}
	if at < k.limit {
		fs = slices.Insert(fs, at, *r)
		k.res.Files = fs[:min(len(fs), k.limit)]
	}
}

// finish scores the files kept and leaves the best limit in res, best
// first.
func (k *rankSink) finish(lower []string) {
	if k.plain || k.scoreAll(lower) == 0 {
		// The plain order: asked for (tests), or the files hold the
		// terms only in lines many of them share (thirty files of one
		// word): better those than nothing.
		k.res.Files = k.res.Files[:0]
		for r := range k.all {
			r.spot = r.st.plainTitle()
			if r.Line = 0; r.spot >= 0 {
				r.Line = int(r.st.spots[r.spot].line)
			}
			k.top(r, better)
		}
		k.titles()
	}
}

// scoreAll scores the files kept by BM25 and keeps the best with a score
// in res, best first; it returns how many scored.
func (k *rankSink) scoreAll(lower []string) int {
	n := k.res.FilesScanned
	boiler := int32(max(boilerMinFiles, int(math.Ceil(boilerShare*float64(n)))))
	var dl float64
	docs := 0
	for r := range k.all {
		st := r.st
		for _, h := range st.heads[:st.nheads] {
			if k.heads[h.hash] < boiler {
				continue
			}
			for m := h.mask; m != 0; m &= m - 1 {
				t := bits.TrailingZeros8(m)
				if st.tf[t]--; st.tf[t] == 0 && st.path&(1<<t) == 0 {
					k.df[t]-- // the term is only in boilerplate here
				}
			}
		}
		if r.Lines > 0 {
			dl += float64(r.Lines)
			docs++
		}
	}
	var idf [MaxTerms]float64
	for t := range lower {
		df := float64(min(k.df[t], n))
		idf[t] = math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
	}
	avgdl := dl / float64(max(docs, 1))
	isBoiler := func(h uint64) bool { return k.heads[h] >= boiler }
	scored := 0
	for r := range k.all {
		if r.Score = r.st.score(r, lower, idf[:len(lower)], avgdl, isBoiler); r.Score > 0 {
			k.top(r, scoredBetter)
			scored++
		}
	}
	if scored > 0 {
		k.titles()
	}
	return scored
}

// titles sets the texts of the files kept, only theirs: a text is a
// string made from the file's spots.
func (k *rankSink) titles() {
	for i := range k.res.Files {
		if f := &k.res.Files[i]; f.spot >= 0 {
			f.Text = f.st.title(f.spot)
		}
	}
}

// scoredBetter orders scored files: higher score, then workdir and path.
func scoredBetter(a, b *RankedFile) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if a.order != b.order {
		return a.order < b.order
	}
	return a.Path < b.Path
}

// score is r's BM25 score, its title line set (Line, Text).
func (st *fileStats) score(r *RankedFile, lower []string, idf []float64, avgdl float64, boiler func(uint64) bool) float64 {
	base := r.Path[strings.LastIndexByte(r.Path, '/')+1:]
	norm := bm25K1 * (1 - bm25B + bm25B*float64(max(r.Lines, 1))/max(avgdl, 1))
	var s float64
	for t := range idf {
		var w float64
		if tf := float64(st.tf[t]); tf > 0 {
			w = tf * (bm25K1 + 1) / (tf + norm)
		}
		switch bit := uint8(1) << t; {
		case st.path&bit != 0 && containsFold(base, lower[t]):
			w += wBase
		case st.path&bit != 0:
			w += wDir
		}
		if st.defs&(1<<t) != 0 {
			w += wDef
		}
		s += idf[t] * w
	}
	if s == 0 {
		return 0
	}
	// The title: the line whose terms weigh most, a definition first.
	best, bestW := -1, 0.0
	for i := range st.spots[:st.nspots] {
		sp := &st.spots[i]
		if sp.head && boiler(sp.hash) {
			continue
		}
		var w float64
		for m := sp.mask; m != 0; m &= m - 1 {
			w += idf[bits.TrailingZeros8(m)]
		}
		if sp.def {
			w *= 1.5
		}
		if w > bestW || w == bestW && best >= 0 && sp.line < st.spots[best].line {
			best, bestW = i, w
		}
	}
	r.Line, r.Text, r.spot = 0, "", best
	if best >= 0 {
		r.Line = int(st.spots[best].line)
		if sp := &st.spots[best]; bits.OnesCount8(sp.mask) > 1 {
			var w float64
			for m := sp.mask; m != 0; m &= m - 1 {
				w += idf[bits.TrailingZeros8(m)]
			}
			s += wProx * w
		}
	}
	return s * fileFactor(r.Path, st.generated)
}

// plainTitle is the spot of the plain order's title, the first line
// holding the most distinct terms; -1 when none.
func (st *fileStats) plainTitle() int {
	best := -1
	for i := range st.spots[:st.nspots] {
		sp := &st.spots[i]
		if best < 0 || bits.OnesCount8(sp.mask) > bits.OnesCount8(st.spots[best].mask) ||
			bits.OnesCount8(sp.mask) == bits.OnesCount8(st.spots[best].mask) && sp.line < st.spots[best].line {
			best = i
		}
	}
	return best
}

// fileFactor weighs whole files: tests, test data, vendored and generated
// code are rarely where a question's answer is.
func fileFactor(p string, generated bool) float64 {
	f := 1.0
	if strings.ContainsFunc(p, unicode.IsUpper) {
		p = strings.ToLower(p)
	}
	switch {
	case inDir(p, asideDirs):
		f = fAside
	case strings.HasSuffix(p, "_test.go") || inDir(p, testDirs) || strings.Contains(p, ".test.") || strings.Contains(p, ".spec.") ||
		strings.HasPrefix(p[strings.LastIndexByte(p, '/')+1:], "test_"):
		f = fTest
	}
	if generated {
		f *= fGenerated
	}
	return f
}

// asideDirs hold code that is not the project's own (test data, vendored
// and third-party code), testDirs tests; each is "name/".
var asideDirs, testDirs = []string{"testdata/", "vendor/", "third_party/", "node_modules/"}, []string{"test/", "tests/"}

// inDir tells whether the lower-case path p is under a directory named
// one of dirs, at any depth.
func inDir(p string, dirs []string) bool {
	for _, d := range dirs {
		if i := strings.Index(p, d); i >= 0 && (i == 0 || p[i-1] == '/') {
			return true
		}
	}
	return false
}

// generatedHead is how much of a file's head is looked at for "Code
// generated ... DO NOT EDIT".
const generatedHead = 1024

// fileHead is the head of a file just searched: in the worker's buffer
// when the file fit in it (the one fill starts at the buffer's start),
// else read again; nil for a compressed file.
func fileHead(s *searcher, file io.ReaderAt, size int64, compressed string) []byte {
	if compressed != "" {
		return nil
	}
	if size > 0 && size <= int64(len(s.buf)) {
		return s.buf[:min(size, generatedHead)]
	}
	s.line = slices.Grow(s.line[:0], generatedHead)[:generatedHead]
	n, _ := file.ReadAt(s.line, 0)
	return s.line[:n]
}

// isDoc tells whether a file is prose whose headings name what it is
// about (Markdown: a "# " line is a heading).
func isDoc(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown":
		return true
	}
	return false
}
