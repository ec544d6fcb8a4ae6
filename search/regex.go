package search

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/serverfs/serverfs/internal/errs"
)

// MaxRegexInsts bounds the compiled program of a regular expression; Go's
// parser already refuses repetition counts over 1000 and nesting deeper
// than 1000, this bounds what is left: Go's NFA pays per byte for every
// live thread of the program, so (\w+\s*){400} (2,402 instructions) took
// seconds per 256 KiB buffer; real patterns stay far below 1000.
const MaxRegexInsts = 1000

// regexOverlap is how far a regex match is looked for across the windows
// of a line longer than the read buffer (256 KiB); a longer match that
// straddles two windows of such a line is missed.
const regexOverlap = 4096

// regexMatcher finds lines that hold a match of a regular expression.
// Matches never span lines: the parsed pattern is rewritten so that no
// part of it can match '\n' (classes lose it, "." is always [^\n], ^ and $
// match at line boundaries, \A and \z too, as every line is searched on its
// own). When every match must contain a literal, that literal is found
// first with the literal engine and the regexp runs only on the lines
// holding it, ripgrep's "inner literal" prefilter.
type regexMatcher struct {
	re    *regexp.Regexp
	check int          // checkBytesFor the program: how often a long line's scan checks stopped
	pre   chunkMatcher // nil: no literal every match must contain
	lit   string       // the prefilter literal, for tests
	set   []reqLit     // or the prefilter's literals, one in every match, for tests
	// win, when set, bounds where a match can lie around an occurrence of
	// the literal: the regexp runs on that window instead of the line.
	win *litWindow
	// also are other literals every match contains, looked for in a
	// candidate line (without a window) before the regexp runs on it.
	also []chunkMatcher
	// stopped, when set, is checked between lines (and segments of
	// lines): a regexp cannot be interrupted inside one call, so calls are
	// kept short; a stopped scan reports no further match.
	stopped func() bool
}

// regexSegment is how many bytes of whole lines one regexp call scans
// before the scan checks stopped.
const regexSegment = 4 << 10

// regexCheckBytes bounds the input one regexp call reads between two
// checks of stopped: a line longer than this (up to the 256 KiB read
// buffer) is fed to the regexp through a stoppableInput, so a pattern
// sees its deadline within a fraction of a second rather than after a
// whole buffer (~1.5 s for (\w+\s*){166}); the match found is the same as
// over the whole line, as the regexp still reads the line in one pass.
// A program of more than checkInsts instructions is checked more often
// (checkBytesFor): Go's NFA pays per byte for each live thread, so the
// cost of a byte grows with the program.
const regexCheckBytes = 16 << 10

// checkInsts and minCheckBytes scale the check interval: 16 KiB up to 250
// instructions, then inversely to the program's size, at least 4 KiB.
// (?:\w+\s*){249}[^\w\s] (999 instructions) reads "abc def " text at ~6
// µs a byte on an idle 2-CPU machine and ~16 when loaded: 4 KiB is ~25-65
// ms of it, where 16 KiB let a 1 s search end up to ~0.5 s late.
const (
	checkInsts    = 250
	minCheckBytes = 4 << 10
)

// checkBytesFor is the check interval of a program of insts instructions.
func checkBytesFor(insts int) int {
	if insts <= checkInsts {
		return regexCheckBytes
	}
	return max(minCheckBytes, regexCheckBytes*checkInsts/insts)
}

// stoppableInput is a line read rune by rune by one regexp call, which
// checks stopped before every `every` bytes of it (0: regexCheckBytes);
// once stopped, the input ends there (the caller then discards the
// result).
type stoppableInput struct {
	b         []byte
	off, next int // next: where stopped is checked again
	every     int
	stopped   func() bool
	stop      bool
}

func (in *stoppableInput) ReadRune() (rune, int, error) {
	if in.off >= in.next && in.off < len(in.b) {
		if in.stopped() {
			in.stop, in.b = true, in.b[:in.off]
		}
		in.next = in.off + cmp.Or(in.every, regexCheckBytes)
	}
	if in.off >= len(in.b) {
		return 0, 0, io.EOF
	}
	if c := in.b[in.off]; c < utf8.RuneSelf {
		in.off++
		return rune(c), 1, nil
	}
	r, n := utf8.DecodeRune(in.b[in.off:]) // a bad byte is U+FFFD of width 1, as regexp reads a []byte
	in.off += n
	return r, n, nil
}

// findIndex is re.FindIndex(b), checking stopped at least every `every`
// bytes; stopped true means it stopped early (loc is nil).
func findIndex(re *regexp.Regexp, b []byte, every int, stopped func() bool) (loc []int, stop bool) {
	if len(b) <= every {
		return re.FindIndex(b), false
	}
	in := &stoppableInput{b: b, every: every, stopped: stopped}
	loc = re.FindReaderIndex(in)
	if in.stop {
		return nil, true
	}
	return loc, false
}

// compileRegex parses pattern (RE2 syntax), refusing what would not fit.
// caseSensitive false adds (?i) to the whole pattern.
func compileRegex(pattern string, caseSensitive bool) (*regexMatcher, error) {
	bad := func(msg string) error {
		return errs.New(errs.InvalidPattern, "regular expression "+msg)
	}
	if len(pattern) > MaxQueryBytes {
		return nil, bad(fmt.Sprintf("is %d bytes long, more than %d", len(pattern), MaxQueryBytes))
	}
	flags := syntax.Perl &^ syntax.OneLine
	if !caseSensitive {
		flags |= syntax.FoldCase
	}
	ast, err := syntax.Parse(pattern, flags)
	if err != nil {
		msg := err.Error()
		if e, ok := err.(*syntax.Error); ok {
			msg = e.Code.String()
			if e.Expr != "" {
				msg += ": " + displayExpr(e.Expr)
			}
		}
		return nil, bad("is invalid: " + msg)
	}
	if err := oneLine(ast); err != nil {
		return nil, bad(err.Error())
	}
	prog, err := syntax.Compile(ast.Simplify())
	if err != nil {
		return nil, bad("cannot be compiled: " + err.Error())
	}
	if n := len(prog.Inst); n > MaxRegexInsts {
		return nil, bad(fmt.Sprintf("is too large: it compiles to %d instructions, more than %d (use smaller repetition counts)", n, MaxRegexInsts))
	}
	re, err := regexp.Compile(ast.String())
	if err != nil {
		return nil, bad("cannot be compiled: " + err.Error())
	}
	m := &regexMatcher{re: re, check: checkBytesFor(len(prog.Inst))}
	lits := requiredLiterals(ast)
	l, ok := bestLiteral(lits)
	if set := requiredSet(ast); len(set) > 1 && setWorth(set, l, ok) {
		// An alternation of words (ERROR|WARN|FATAL): one of its
		// literals is in every match, where no single one is.
		m.set, m.pre = set, newLiteralSet(set)
		return m, nil
	}
	if ok {
		m.lit = l.s
		m.pre = newMatcher(l.s, !l.fold)
		m.win = windowOf(ast, l)
		// The other required literals of 3 bytes or more must be on a
		// candidate line too: looking costs less than running the regexp
		// (in Err[A-Z]\w*EOF, a line with EOF but no Err is passed over).
		seen := map[reqLit]bool{l: true}
		for _, o := range lits {
			if len(o.s) >= 3 && !seen[o] && len(m.also) < maxAlso {
				seen[o] = true
				m.also = append(m.also, newMatcher(o.s, !o.fold))
			}
		}
	}
	return m, nil
}

// LineRegexp is a search's query as one Go regexp that finds its matches
// in a line's text: a regex as compileRegex rewrites it (matches within
// the line, ^ and $ at its ends), a literal quoted; case_sensitive false
// folds case as both engines do (Unicode simple folding). It is what the
// file view's highlights come from (mcp's search spans): Go's regexp runs
// in time linear in the text, where the view's JavaScript engine
// backtracks.
func LineRegexp(query string, regex, caseSensitive bool) (*regexp.Regexp, error) {
	if regex {
		m, err := compileRegex(query, caseSensitive)
		if err != nil {
			return nil, err
		}
		return m.re, nil
	}
	if !caseSensitive {
		return regexp.Compile("(?i)" + regexp.QuoteMeta(query))
	}
	return regexp.Compile(regexp.QuoteMeta(query))
}

// maxAlso bounds the other literals a candidate line is checked for.
const maxAlso = 4

// maxWindow bounds a litWindow: wider ones gain little over the line.
const maxWindow = 64

// litWindow says that every match holds the prefilter literal with at
// most before bytes ahead of it and after bytes behind its first byte
// (the literal included). Then a line matches exactly when the regexp
// matches one of the windows [i-before, i+after) around an occurrence i
// of the literal: no need to run it over the whole line, which costs a
// pattern with a one-byte literal ([0-9]{4}-[0-9]{2}) most of its time.
type litWindow struct {
	before, after int
	// near are bytes every match pins around the literal, nearest first
	// (see nearBytesOf); exact: they are the whole pattern.
	near  []nearByte
	exact bool
}

// windowOf returns the window of lit in re when re is a concatenation (or
// a literal) whose parts other than lit all have a bounded width and no
// part is an assertion (^, $, \b, \B look outside any window); nil
// otherwise.
func windowOf(re *syntax.Regexp, lit reqLit) *litWindow {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	at := -1
	for i, sub := range subs {
		for sub.Op == syntax.OpCapture {
			sub = sub.Sub[0]
		}
		// The part must also fold as the prefilter does: the parser
		// stores (?i:err) as its smallest fold, "ERR", so in
		// (?i:err)\dERR the case-sensitive prefilter ERR is the last
		// part, not the first (anchoring on it missed err1ERR).
		if at < 0 && sub.Op == syntax.OpLiteral && string(sub.Rune) == lit.s && (sub.Flags&syntax.FoldCase != 0) == lit.fold {
			at = i
		}
	}
	if at < 0 {
		return nil
	}
	w := &litWindow{}
	for i, sub := range subs {
		n, ok := maxBytes(sub)
		if !ok {
			return nil
		}
		if i < at {
			w.before += n
		} else {
			w.after += n
		}
	}
	if w.before+w.after > maxWindow {
		return nil
	}
	if !lit.fold {
		nearBytesOf(w, subs, at, len(lit.s))
	}
	return w
}

// maxBytes is the longest text re can match, in bytes; false when
// unbounded or when re holds an assertion.
func maxBytes(re *syntax.Regexp) (int, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return 0, true
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				n += utf8.UTFMax // K (3 bytes) matches k, for one
			} else {
				n += utf8.RuneLen(r)
			}
		}
		return n, true
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return 0, true
		}
		return utf8.RuneLen(re.Rune[len(re.Rune)-1]), true
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return utf8.UTFMax, true
	case syntax.OpCapture, syntax.OpQuest:
		return maxBytes(re.Sub[0])
	case syntax.OpRepeat:
		if re.Max < 0 {
			return 0, false
		}
		n, ok := maxBytes(re.Sub[0])
		return n * re.Max, ok && n*re.Max <= maxWindow
	case syntax.OpConcat, syntax.OpAlternate:
		total := 0
		for _, sub := range re.Sub {
			n, ok := maxBytes(sub)
			if !ok {
				return 0, false
			}
			if re.Op == syntax.OpConcat {
				total += n
			} else {
				total = max(total, n)
			}
			if total > maxWindow {
				return 0, false
			}
		}
		return total, true
	}
	return 0, false // star, plus, assertions, no match
}

// displayExpr quotes a part of a pattern for a message, shortened.
func displayExpr(s string) string {
	if len(s) > 40 {
		n := 40
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return "`" + s + "`"
}

// oneLine rewrites re in place so that it never matches a line break, and
// refuses a literal line break (like ripgrep: patterns match within a line).
func oneLine(re *syntax.Regexp) error {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return fmt.Errorf("contains a line break (\\n); it matches within one line at a time")
			}
		}
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpBeginText:
		re.Op = syntax.OpBeginLine
	case syntax.OpEndText:
		re.Op, re.Flags = syntax.OpEndLine, re.Flags&^syntax.WasDollar
	case syntax.OpCharClass:
		re.Rune = removeNL(re.Rune)
		if len(re.Rune) == 0 {
			re.Op, re.Rune = syntax.OpNoMatch, nil
		}
	}
	for _, s := range re.Sub {
		if err := oneLine(s); err != nil {
			return err
		}
	}
	return nil
}

// removeNL removes '\n' from a class given as sorted rune ranges.
func removeNL(ranges []rune) []rune {
	out := make([]rune, 0, len(ranges)+2)
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo <= '\n' && '\n' <= hi {
			if lo < '\n' {
				out = append(out, lo, '\n'-1)
			}
			if hi > '\n' {
				out = append(out, '\n'+1, hi)
			}
			continue
		}
		out = append(out, lo, hi)
	}
	return out
}

// reqLit is a literal every match contains; fold: compared case-insensitively.
type reqLit struct {
	s    string
	fold bool
}

// requiredLiterals returns literals each of which every match of re
// contains (a conservative analysis: alternations, optional parts and
// classes contribute nothing).
func requiredLiterals(re *syntax.Regexp) []reqLit {
	switch re.Op {
	case syntax.OpLiteral:
		return []reqLit{{string(re.Rune), re.Flags&syntax.FoldCase != 0}}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		var out []reqLit
		var run strings.Builder
		fold := false
		flush := func() {
			if run.Len() > 0 {
				out = append(out, reqLit{run.String(), fold})
				run.Reset()
				fold = false
			}
		}
		for _, sub := range re.Sub {
			for sub.Op == syntax.OpCapture {
				sub = sub.Sub[0]
			}
			if sub.Op == syntax.OpLiteral {
				// Adjacent literals form one; one folded part makes the
				// whole run case-insensitive (a superset: fine for a
				// prefilter).
				run.WriteString(string(sub.Rune))
				fold = fold || sub.Flags&syntax.FoldCase != 0
				continue
			}
			flush()
			out = append(out, requiredLiterals(sub)...)
		}
		flush()
		return out
	}
	return nil
}

// maxSet bounds the literals of a prefilter set: Teddy's buckets.
const maxSet = 8

// requiredSet returns literals one of which every match of re holds, at
// most maxSet, none empty: re's literal, or one from each branch of an
// alternation, or the best set of a concatenation's parts (see
// betterSet); nil when there is none.
func requiredSet(re *syntax.Regexp) []reqLit {
	switch re.Op {
	case syntax.OpLiteral:
		return []reqLit{{string(re.Rune), re.Flags&syntax.FoldCase != 0}}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredSet(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredSet(re.Sub[0])
		}
	case syntax.OpAlternate:
		var out []reqLit
		for _, sub := range re.Sub {
			branch := requiredSet(sub)
			if branch == nil {
				return nil // a branch without a literal: any line may match
			}
			for _, l := range branch {
				if !slices.Contains(out, l) {
					out = append(out, l)
				}
			}
			if len(out) > maxSet {
				return nil
			}
		}
		return out
	case syntax.OpConcat:
		var best []reqLit
		for _, sub := range re.Sub {
			if set := requiredSet(sub); set != nil && betterSet(set, best) {
				best = set
			}
		}
		return best
	}
	return nil
}

// setMinLen is the length of the shortest literal of set.
func setMinLen(set []reqLit) int {
	n := 1 << 30
	for _, l := range set {
		n = min(n, len(l.s))
	}
	return n
}

// betterSet tells whether a prefilters better than b (nil: none): its
// shortest literal is longer (a short one hits everywhere), then it has
// fewer literals.
func betterSet(a, b []reqLit) bool {
	if b == nil {
		return true
	}
	if la, lb := setMinLen(a), setMinLen(b); la != lb {
		return la > lb
	}
	return len(a) < len(b)
}

// setWorth tells whether a set of literals prefilters better than the
// best single literal (ok false: none): a literal of 3 bytes or more is
// kept; a shorter one gives way to a set of such literals; without one, a
// set of literals of 2 bytes or more still saves running the regexp on
// every line.
func setWorth(set []reqLit, single reqLit, ok bool) bool {
	n := setMinLen(set)
	if !ok {
		return n >= 2
	}
	return len(single.s) < 3 && n >= 3
}

// literalSet is the prefilter of a regexp every match of which holds one
// of several literals: their first occurrence, found by Teddy in one pass
// when it can take them (ASCII when folded, the vector scan) and the
// buffer holds none of the non-ASCII letters that fold to theirs, else by
// each literal's matcher (anyChunk's cursors).
type literalSet struct {
	t       *teddy
	special [][]byte
	each    []chunkMatcher
}

func newLiteralSet(set []reqLit) *literalSet {
	s := &literalSet{}
	fold := false
	needles := make([]string, len(set))
	for i, l := range set {
		s.each = append(s.each, newMatcher(l.s, !l.fold))
		fold = fold || l.fold
		needles[i] = l.s
		if l.fold {
			s.special = foldSpecials(s.special, l.s)
		}
	}
	// Folding every literal when one is folded finds more candidates,
	// never fewer: the regexp decides.
	if usePair { // the vector scans go together (tests turn them off)
		s.t = newTeddy(needles, fold)
	}
	return s
}

func (s *literalSet) forChunk(b []byte) matcher {
	// A buffer's own cursor state: regexPre asks for the next match
	// line after line, and batches spare rescanning (one allocation per
	// buffer, the matcher being shared by the workers).
	if s.t != nil && !containsAny(b, s.special) {
		return &teddyChunk{t: s.t}
	}
	return anyTerm{terms: s.each}.forChunk(b)
}

// bestLiteral picks the prefilter among the required literals: one of at
// least 3 bytes if there is one (a shorter literal hits too many lines),
// then the one whose rarest byte is rarest (the literal matcher scans for
// that byte; see byteRank), then the rarer on average, then the longer, a
// case-sensitive one on ties. In `func \w+Dial` that is "Dial", not
// "func ".
func bestLiteral(lits []reqLit) (reqLit, bool) {
	type score struct{ short, minRank, sumRank, negLen, fold int }
	scoreOf := func(l reqLit) score {
		sc := score{minRank: 1 << 30, negLen: -len(l.s)}
		if len(l.s) < 3 {
			sc.short = 1
		}
		if l.fold {
			sc.fold = 1
		}
		for i := 0; i < len(l.s); i++ {
			r := int(byteRank[l.s[i]])
			if l.fold {
				r += int(byteRank[toUpperASCII(l.s[i])]) + int(byteRank[toLowerASCII(l.s[i])]) - r
			}
			sc.minRank = min(sc.minRank, r)
			sc.sumRank += r
		}
		sc.sumRank /= max(1, len(l.s))
		return sc
	}
	less := func(a, b score) bool {
		switch {
		case a.short != b.short:
			return a.short < b.short
		case a.minRank != b.minRank:
			return a.minRank < b.minRank
		case a.sumRank != b.sumRank:
			return a.sumRank < b.sumRank
		case a.negLen != b.negLen:
			return a.negLen < b.negLen
		}
		return a.fold < b.fold
	}
	var best reqLit
	var bestScore score
	ok := false
	for _, l := range lits {
		if l.s == "" {
			continue
		}
		if sc := scoreOf(l); !ok || less(sc, bestScore) {
			best, bestScore, ok = l, sc, true
		}
	}
	return best, ok
}

func toUpperASCII(b byte) byte {
	if 'a' <= b && b <= 'z' {
		return b - 'a' + 'A'
	}
	return b
}

func (m *regexMatcher) forChunk(b []byte) matcher {
	stopped := m.stopped
	if stopped == nil {
		stopped = func() bool { return false }
	}
	if m.pre == nil {
		return regexScan{m.re, m.check, stopped}
	}
	return regexPre{re: m.re, check: m.check, pre: m.pre.forChunk(b), win: m.win, also: m.also, stopped: stopped}
}

// regexScan runs the regexp over the buffer (no prefilter), a segment of
// whole lines at a time: a match lies within one line, see regexMatcher.
type regexScan struct {
	re      *regexp.Regexp
	check   int // checkBytesFor the program
	stopped func() bool
}

func (m regexScan) index(b []byte, from int) int {
	for pos := from; pos <= len(b); {
		end := len(b)
		if pos+regexSegment < len(b) {
			if j := bytes.IndexByte(b[pos+regexSegment:], '\n'); j >= 0 {
				end = pos + regexSegment + j
			}
		}
		loc, stop := findIndex(m.re, b[pos:end], m.check, m.stopped)
		if stop {
			return -1
		}
		if loc != nil {
			i := pos + loc[0]
			if i == len(b) && i > 0 && b[i-1] == '\n' {
				return -1 // an empty match after the last line break is no line
			}
			return i
		}
		if end == len(b) || m.stopped() {
			return -1
		}
		pos = end + 1
	}
	return -1
}

// matchLine is re.Match(b) as findIndex is re.FindIndex(b).
func matchLine(re *regexp.Regexp, b []byte, every int, stopped func() bool) (ok, stop bool) {
	if len(b) <= every {
		return re.Match(b), false
	}
	in := &stoppableInput{b: b, every: every, stopped: stopped}
	ok = re.MatchReader(in)
	return ok && !in.stop, in.stop
}

// regexPre finds the prefilter literal, then runs the regexp on the line
// holding it.
type regexPre struct {
	re      *regexp.Regexp
	check   int // checkBytesFor the program
	pre     matcher
	win     *litWindow
	also    []chunkMatcher
	stopped func() bool
}

// hasAlso reports whether line holds every literal of also.
func (m regexPre) hasAlso(line []byte) bool {
	for _, a := range m.also {
		if a.forChunk(line).index(line, 0) < 0 {
			return false
		}
	}
	return true
}

func (m regexPre) index(b []byte, from int) int {
	if m.win != nil {
		return m.indexWindows(b, from)
	}
	for pos, n := from, 0; pos < len(b); n++ {
		if n%16 == 0 && m.stopped() { // the context's mutex is not free: every 16 lines
			return -1
		}
		i := m.pre.index(b, pos)
		if i < 0 {
			return -1
		}
		ls := lastIndexByte(b[pos:i], '\n') + 1 + pos
		le := len(b)
		if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
			le = i + j
		}
		if m.hasAlso(b[ls:le]) {
			ok, stop := matchLine(m.re, b[ls:le], m.check, m.stopped)
			if stop {
				return -1
			}
			if ok {
				return ls
			}
		}
		pos = le + 1
	}
	return -1
}

// indexWindows is index with a litWindow: the regexp runs on the window
// around each occurrence of the literal, within its line, when the bytes
// the pattern pins around the literal are there. It returns where the
// matching window starts (inside the matching line): finding the line's
// start is left to the caller, so that the scan reads back at most
// before bytes per candidate, not every byte between candidates.
func (m regexPre) indexWindows(b []byte, from int) int {
	w := m.win
	for pos, n := from, 0; pos < len(b); n++ {
		if n%64 == 0 && m.stopped() {
			return -1
		}
		i := m.pre.index(b, pos)
		if i < 0 {
			return -1
		}
		lo := max(from, i-w.before)
		if j := bytes.LastIndexByte(b[lo:i], '\n'); j >= 0 {
			lo += j + 1
		}
		hi := min(len(b), i+w.after)
		if j := bytes.IndexByte(b[i:hi], '\n'); j >= 0 {
			hi = i + j
		}
		if w.nearOK(b, i, lo, hi) && (w.exact || m.re.Match(b[lo:hi])) {
			return lo
		}
		pos = i + 1
	}
	return -1
}
