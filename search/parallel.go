package search

import (
	"bytes"
	"io"
	"sync"
)

// rangeThreshold is the size from which a file is searched by several
// goroutines at once, each on its own byte range. ripgrep searches one file
// on one thread; a big log is where an agent waits longest.
const rangeThreshold = 64 << 20

// minRange is the smallest range worth a goroutine.
const minRange = 16 << 20

// rangeResult is what one range produced.
type rangeResult struct {
	matches []lineMatch
	count   int // countOnly: matching lines
	lines   int // lines that start in the range
	outcome fileOutcome
	err     error
}

// searchRanges searches f (size bytes, a regular file read with pread) in n
// ranges concurrently and merges the matches in order with global line
// numbers. A range owns the lines that start inside it: it skips the line
// that began before it and finishes its own last line past its end. Every
// range has its own fixed buffer; all goroutines are joined before return.
// With countOnly the matching lines are counted, not kept.
func searchRanges(f io.ReaderAt, size int64, n int, cm chunkMatcher, maxLen, perFile int, countOnly bool, stopped func() bool) ([]lineMatch, int, fileOutcome, error) {
	bounds := make([]int64, n+1)
	for i := range bounds {
		bounds[i] = size * int64(i) / int64(n)
	}
	results := make([]rangeResult, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := getSearcher()
			defer putSearcher(s)
			s.midFile, s.countOnly, s.needLines = i > 0, countOnly, true
			rr := &rangeReader{f: f, pos: bounds[i], end: bounds[i+1], size: size}
			if i > 0 {
				rr.pos, rr.skipping = bounds[i]-1, true
			}
			res := &results[i]
			res.outcome, res.err = s.search(rr, cm, maxLen, stopped, func(m lineMatch) bool {
				if countOnly {
					res.count++
					return true
				}
				res.matches = append(res.matches, m)
				return len(res.matches) < perFile
			})
			res.lines = s.lines
		}()
	}
	wg.Wait()

	total := 0
	for _, r := range results {
		total += len(r.matches)
	}
	out := make([]lineMatch, 0, min(total, perFile)) // one allocation, no regrowth
	count := 0
	offset := 0
	for i, r := range results {
		if r.err != nil && r.err != errStopped {
			return nil, 0, outcomeSearched, r.err
		}
		if i == 0 && r.outcome == outcomeBinary {
			return nil, 0, outcomeBinary, nil
		}
		count += r.count
		for _, m := range r.matches {
			if len(out) == perFile {
				return out, count, outcomeSearched, errStopped
			}
			m.line += offset
			out = append(out, m)
		}
		if r.outcome == outcomeBinaryLate || (r.outcome == outcomeBinary && i > 0) {
			// Binary data in this range: nothing after it counts, as
			// when one searcher stops at it.
			return out, count, outcomeBinaryLate, nil
		}
		if r.err == errStopped {
			return out, count, outcomeSearched, errStopped
		}
		offset += r.lines
	}
	return out, count, outcomeSearched, nil
}

// rangeReader reads the lines that start in [pos, end) of a file: when
// skipping, it first discards through the first '\n' at or after pos (the
// line that belongs to the previous range); past end it delivers bytes up
// to and including the next '\n', then ends.
type rangeReader struct {
	f        io.ReaderAt
	pos, end int64
	size     int64
	skipping bool
	done     bool
	lastNL   bool // the last byte delivered was '\n'
	scratch  [4096]byte
}

func (r *rangeReader) Read(p []byte) (int, error) {
	for r.skipping {
		if r.pos >= r.size {
			r.done = true
			break
		}
		n, err := r.f.ReadAt(r.scratch[:min(int64(len(r.scratch)), r.size-r.pos)], r.pos)
		if i := bytes.IndexByte(r.scratch[:n], '\n'); i >= 0 {
			r.pos += int64(i) + 1
			r.skipping = false
			if r.pos >= r.end {
				r.done = true // no line starts in this range
			}
			break
		}
		r.pos += int64(n)
		if err != nil || n == 0 {
			if err != nil && err != io.EOF {
				return 0, err
			}
			r.done = true
		}
	}
	if r.done || r.pos >= r.size {
		return 0, io.EOF
	}
	if r.pos < r.end {
		n, err := r.f.ReadAt(p[:min(int64(len(p)), r.end-r.pos)], r.pos)
		r.pos += int64(n)
		if n > 0 {
			r.lastNL = p[n-1] == '\n'
			return n, nil
		}
		if err == nil {
			err = io.EOF
		}
		return 0, err
	}
	// Past the end: finish the line that started inside the range, unless
	// the range ended exactly at a line end.
	if r.lastNL {
		r.done = true
		return 0, io.EOF
	}
	n, err := r.f.ReadAt(p[:min(int64(len(p)), r.size-r.pos)], r.pos)
	if i := bytes.IndexByte(p[:n], '\n'); i >= 0 {
		n = i + 1
		r.done = true
	}
	r.pos += int64(n)
	if n > 0 {
		return n, nil
	}
	if err == nil {
		err = io.EOF
	}
	return 0, err
}
