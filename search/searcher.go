package search

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxLineText is how much of a matching line a result carries; longer lines
// are cut (on a UTF-8 boundary) and flagged.
const MaxLineText = 500

// sniffBytes: a NUL in the first 8 KiB marks a file as binary.
const sniffBytes = 8 << 10

// bufferSize is each worker's fixed read buffer. Memory per worker is this
// buffer plus MaxLineText, whatever the file or its line lengths.
const bufferSize = 256 << 10

// errStopped reports that the search was stopped from outside.
var errStopped = errors.New("search stopped")

// errCorrupt marks a compressed file that does not decompress; errWindow
// a .zst file whose window is over decompress.MaxZstdWindow.
var (
	errCorrupt = errors.New("corrupt compressed file")
	errWindow  = errors.New("zstd window over the limit")
)

// fileOutcome is what searching one stream produced besides its matches.
type fileOutcome int

const (
	outcomeSearched   fileOutcome = iota
	outcomeBinary                 // NUL in the first 8 KiB: skipped
	outcomeBinaryLate             // NUL later: searched up to the buffer holding it
)

// lineMatch is one matching line as the searcher reports it.
type lineMatch struct {
	line int
	text string
	cut  bool
	// raw, with searcher.rawLines, is the line in the buffer (valid during
	// emit only) instead of text: the bytes after raw's last newline (the
	// lines before it, if any, hold no match; see rawLine); terms, when
	// masked, are the terms of a termMasker matching in it.
	raw    []byte
	terms  uint64
	masked bool
}

// rawLine is the matching line of a raw lineMatch, found only when
// wanted: most reported lines of a ranked search are not shown.
func rawLine(raw []byte) []byte {
	return raw[bytes.LastIndexByte(raw, '\n')+1:]
}

// termMasker is a matcher of several terms that tells, right after index
// found the first match at or after from, which terms match in
// b[from:end] (anyChunk: from the positions index found, no new scan).
type termMasker interface {
	termsBefore(end int) uint64
}

// searcher runs a matcher over a stream and reports matching lines, the
// "grep-searcher" part of the engine. A searcher is reused by one worker for
// file after file; it holds no per-file state between calls.
type searcher struct {
	buf  []byte
	head []byte // the first MaxLineText+1 bytes of a line longer than buf

	// midFile: the stream starts inside a file (a range of a big file, see
	// parallel.go): no binary sniff of its start, no BOM.
	midFile bool
	// lines is the number of lines the last search went through (up to
	// where it stopped), so ranges can number their lines globally; it is
	// counted to the end only when needLines is set.
	lines     int
	needLines bool
	// linesIfMatched: lines are counted to the end of a file that has a
	// matching line (Rank's match density), not of the others.
	linesIfMatched bool
	// countOnly: matches are reported without their text (count mode);
	// without needLines, without their line numbers either (see search).
	countOnly bool
	// rawLines: matching lines that fit the buffer are reported as raw
	// bytes (lineMatch.raw), with the matcher's terms when it is a
	// termMasker: a ranked search builds the text of few of them.
	rawLines bool
	// sec is the section of the current file that is read, reused from
	// file to file (set by Engine.searchFile).
	sec io.SectionReader
	// line is Engine.Rank's copy of a matching line, and terms its
	// matcher of the query's terms, reused.
	line       []byte
	terms      *anyChunk
	teddyTerms *teddyChunk
	// ctxBuf is the reader of context passes, reused.
	ctxBuf *bufio.Reader
	// member holds an archive member for its context pass, reused.
	member []byte
	// sinceYield counts the bytes read since the searcher last yielded
	// its CPU (see search); it carries over from file to file.
	sinceYield int
}

func newSearcher() *searcher { return newSearcherSize(bufferSize) }

// searchers are idle searchers of bufferSize, reused from search to
// search: a search's workers and ranges would otherwise allocate (and
// clear, and fault in) a 256 KiB buffer each, a megabyte per call on 2
// CPUs and a third of the garbage a tree search leaves for the collector.
var searchers = sync.Pool{New: func() any { return newSearcher() }}

// getSearcher takes an idle searcher; putSearcher gives it back once its
// goroutine is done with it.
func getSearcher() *searcher { return searchers.Get().(*searcher) }

func putSearcher(s *searcher) {
	// Only the buffers carry over: no file, reader or setting does.
	*s = searcher{buf: s.buf, head: s.head[:0], line: s.line[:0], ctxBuf: s.ctxBuf}
	searchers.Put(s)
}

func newSearcherSize(n int) *searcher {
	return &searcher{buf: make([]byte, n), head: make([]byte, 0, MaxLineText+1)}
}

// search reads r to the end (or until emit returns false or stopped says so)
// and calls emit for every line holding a match, in order. Line numbers are
// counted only up to matches. Lines are never held whole: a line longer than
// the buffer is searched in overlapping windows and reported with its first
// MaxLineText bytes. maxLen is the longest match in bytes (for the overlap).
func (s *searcher) search(r io.Reader, cm chunkMatcher, maxLen int, stopped func() bool, emit func(lineMatch) bool) (fileOutcome, error) {
	buf := s.buf
	keep := 0         // bytes carried over at buf[:keep]
	lineNo := 1       // number of the line that starts (or continues) at buf[0]
	first := true     // the first fill: sniff for binary, strip a BOM
	inLong := false   // buf[0] continues a line that began in an earlier window
	reported := false // the long line was already reported
	outcome := outcomeSearched
	// A count needs neither texts nor line numbers: the newlines before a
	// match and after the last are not counted (a pass over every byte).
	noLines := s.countOnly && !s.needLines
	matched := false // a line was reported
	for {
		if stopped() {
			return outcome, errStopped
		}
		s.yield()
		n, eof, err := fill(r, buf[keep:])
		s.sinceYield += n
		if err != nil {
			return outcome, err
		}
		end := keep + n
		chunk := buf[:end]
		start := 0
		unsniffed := keep // chunk[unsniffed:] is not known to be free of NULs
		if first && s.midFile {
			first = false
		}
		if first {
			first = false
			unsniffed = min(end, sniffBytes)
			if bytes.IndexByte(chunk[:unsniffed], 0) >= 0 {
				return outcomeBinary, nil
			}
			if bytes.HasPrefix(chunk, []byte{0xEF, 0xBB, 0xBF}) {
				start = 3
			}
		}
		// Binary data after the sniffed prefix: stop before searching this
		// buffer, as ripgrep does, keeping the matches already reported.
		// Each byte is looked at once: the sniffed prefix (most files of a
		// source tree are smaller) is not scanned again.
		if bytes.IndexByte(chunk[unsniffed:], 0) >= 0 {
			return outcomeBinaryLate, nil
		}
		m := cm.forChunk(chunk)

		cut := end // search chunk[start:cut]: whole lines only, unless at EOF
		if !eof {
			cut = lastIndexByte(chunk, '\n') + 1
		}
		if eof && end <= start {
			s.lines = lineNo - 1
			return outcome, nil // nothing left (an empty file, or one ending at a buffer boundary)
		}
		if cut <= start {
			// No complete line in the buffer.
			if end < len(buf) && !eof {
				keep = end
				continue
			}
			// The buffer is full of one unfinished line: search it in place.
			if !inLong {
				inLong, reported = true, false
				// One byte more than shown, so makeLine cuts on a rune boundary.
				s.head = append(s.head[:0], chunk[start:min(end, start+MaxLineText+1)]...)
			}
			if !reported && m.index(chunk, start) >= 0 {
				reported, matched = true, true
				if !emit(s.longLine(lineNo)) {
					return outcome, errStopped
				}
			}
			ov := min(max(maxLen-1, 0), end)
			keep = copy(buf, chunk[end-ov:end])
			continue
		}

		pos := start
		if inLong {
			// The first line of this window ends a long line.
			nl := bytes.IndexByte(chunk[start:cut], '\n')
			lineEnd := cut
			if nl >= 0 {
				lineEnd = start + nl
			}
			if !reported {
				if i := m.index(chunk[:lineEnd], start); i >= 0 {
					matched = true
					if !emit(s.longLine(lineNo)) {
						return outcome, errStopped
					}
				}
			}
			inLong, reported = false, false
			pos = lineEnd + 1
			lineNo++
		}
		var counted int // newlines before counted are in lineNo
		var ok bool
		lineNo, counted, ok = s.matchLines(m, chunk, pos, cut, lineNo, noLines, emit)
		if !ok {
			return outcome, errStopped
		}
		matched = matched || counted > pos
		if counted < cut && s.countTail(eof, matched) && !noLines {
			lineNo += bytes.Count(chunk[counted:cut], []byte{'\n'})
		}
		if eof {
			s.lines = lineNo - 1
			if end > 0 && chunk[end-1] != '\n' {
				s.lines++ // a last line without a line ending
			}
			return outcome, nil
		}
		keep = copy(buf, chunk[cut:end])
	}
}

// countTail tells whether the lines after a buffer's last match are
// counted: the last buffer's need counting only for lines (a range
// numbering the next one, a ranked file's density); no match follows
// them.
func (s *searcher) countTail(eof, matched bool) bool {
	return !eof || s.needLines || (s.linesIfMatched && matched)
}

// yield gives the CPU away once per buffer's worth of bytes read. A
// worker decompressing or matching what the page cache holds never
// blocks: yielding lets the goroutines of cheap calls (stat_file) waiting
// behind busy CPUs run within a buffer's time, not after several 10 ms
// preemption slices (measured with a .zst search on 2 CPUs: stat_file p99
// 83-132 ms without, 55-80 ms with). It counts bytes across files, so that
// a tree of small files yields as often as one big file, not once per
// file: that was 11,000 trips through the scheduler for a GOROOT/src
// search.
func (s *searcher) yield() {
	if s.sinceYield >= len(s.buf) {
		s.sinceYield = 0
		runtime.Gosched()
	}
}

// matchLines reports the matching lines of chunk[pos:cut], whole lines
// the first of which is numbered lineNo. It returns the number of the
// line at counted (the newlines before counted are numbered; those after
// are not looked at) and false when emit stopped the search. With
// noLines the lines are neither numbered nor cut out: counted stays pos.
func (s *searcher) matchLines(m matcher, chunk []byte, pos, cut, lineNo int, noLines bool, emit func(lineMatch) bool) (int, int, bool) {
	counted := pos
	for pos < cut {
		i := m.index(chunk[:cut], pos)
		if i < 0 {
			break
		}
		le := cut
		if j := bytes.IndexByte(chunk[i:cut], '\n'); j >= 0 {
			le = i + j
		}
		if noLines {
			if !emit(lineMatch{line: lineNo}) {
				return lineNo, counted, false
			}
			pos = le + 1
			continue
		}
		lineNo += bytes.Count(chunk[counted:i], []byte{'\n'})
		var lm lineMatch
		if s.rawLines {
			lm = lineMatch{line: lineNo, raw: chunk[pos:le]}
			if tm, ok := m.(termMasker); ok {
				lm.terms, lm.masked = tm.termsBefore(le), true
			}
		} else {
			ls := lastIndexByte(chunk[pos:i], '\n') + 1 + pos
			lm = s.makeLine(lineNo, chunk[ls:le])
		}
		if !emit(lm) {
			return lineNo, counted, false
		}
		pos = le + 1
		counted = pos
		lineNo++
	}
	return lineNo, counted, true
}

// makeLine is makeLine, or the bare line number when counting.
func (s *searcher) makeLine(lineNo int, line []byte) lineMatch {
	if s.countOnly {
		return lineMatch{line: lineNo}
	}
	return makeLine(lineNo, line)
}

// longLine reports a line that did not fit the buffer, by its head.
func (s *searcher) longLine(lineNo int) lineMatch {
	if s.countOnly {
		return lineMatch{line: lineNo}
	}
	m := makeLine(lineNo, s.head)
	m.cut = true
	return m
}

// makeLine builds the reported text of a line: without its line ending,
// at most MaxLineText bytes cut on a rune boundary, invalid UTF-8 replaced
// (the text is for display; the file is untouched).
func makeLine(lineNo int, line []byte) lineMatch {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	cut := false
	if len(line) > MaxLineText {
		n := MaxLineText
		for n > 0 && !utf8.RuneStart(line[n]) {
			n--
		}
		line, cut = line[:n], true
	}
	return lineMatch{line: lineNo, text: strings.ToValidUTF8(string(line), "\uFFFD"), cut: cut}
}

// lastIndexBlock is the block lastIndexByte scans backwards by.
const lastIndexBlock = 4 << 10

// lastIndexByte is bytes.LastIndexByte, fast where no c is near the end:
// bytes.LastIndexByte reads one byte at a time, ~1 ns each, which a
// buffer of one long line (a minified JSON, say) pays in full for every
// buffer; IndexByte, vectorized, skips each block without c.
func lastIndexByte(b []byte, c byte) int {
	// Short lines: the last c is in the last few bytes.
	end := max(0, len(b)-64)
	if i := bytes.LastIndexByte(b[end:], c); i >= 0 {
		return end + i
	}
	for end > 0 {
		start := max(0, end-lastIndexBlock)
		if bytes.IndexByte(b[start:end], c) >= 0 {
			return start + bytes.LastIndexByte(b[start:end], c)
		}
		end = start
	}
	return -1
}

// fill reads into b until it is full, the stream ends, or a read fails.
func fill(r io.Reader, b []byte) (n int, eof bool, err error) {
	zero := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err == io.EOF {
			return n, true, nil
		}
		if err != nil {
			return n, false, err
		}
		if m == 0 {
			if zero++; zero > 100 {
				return n, false, io.ErrNoProgress
			}
		}
	}
	return n, false, nil
}

// readContext reads r from its start and returns the lines within before
// lines before or after lines after a match (the matches themselves left
// out), in order. It stops after the last window, at a NUL (binary data,
// where the search stopped too) and when stopped says so. Lines are cut at
// MaxLineText as matches are; memory is the reader's buffer.
func (s *searcher) readContext(r io.Reader, matches []lineMatch, before, after int, stopped func() bool) []lineMatch {
	if s.ctxBuf == nil {
		s.ctxBuf = bufio.NewReaderSize(r, 64<<10)
	} else {
		s.ctxBuf.Reset(r)
	}
	br := s.ctxBuf
	defer br.Reset(nil)
	var out []lineMatch
	win := 0 // the first match whose window may still hold lines
	at := 0  // the first match at or after the current line
	for lineNo := 1; win < len(matches); lineNo++ {
		if lineNo%1024 == 0 && stopped() {
			break
		}
		for win < len(matches) && matches[win].line+after < lineNo {
			win++
		}
		for at < len(matches) && matches[at].line < lineNo {
			at++
		}
		want := win < len(matches) && matches[win].line-before <= lineNo && !(at < len(matches) && matches[at].line == lineNo)
		line, err := br.ReadSlice('\n')
		long := false
		if want {
			s.head = append(s.head[:0], line[:min(len(line), MaxLineText+1)]...)
		}
		for err == bufio.ErrBufferFull {
			long = true
			line, err = br.ReadSlice('\n')
		}
		if err != nil && (err != io.EOF || (len(line) == 0 && !long)) {
			break
		}
		text := line
		if long {
			text = s.head
		}
		if bytes.IndexByte(text, 0) >= 0 {
			break
		}
		if lineNo == 1 {
			text = bytes.TrimPrefix(text, []byte{0xEF, 0xBB, 0xBF})
		}
		if want {
			m := makeLine(lineNo, bytes.TrimSuffix(text, []byte{'\n'}))
			m.cut = m.cut || long
			out = append(out, m)
		}
		if err == io.EOF {
			break
		}
	}
	return out
}
