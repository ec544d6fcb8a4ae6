package search

import (
	"slices"

	sfs "github.com/serverfs/serverfs/fs"
)

// collector builds the answer from file results taken in walk order.
type collector struct {
	req      Request
	res      *Result
	capBytes int
	bytes    int
	returned int
	done     bool       // nothing more is taken
	reason   string     // why done: limit, bytes or "" (a partial file: timeout)
	last     sfs.Cursor // the position after the last result taken
	// paged (count and files modes): the page is full, but files are
	// still read, aggregated, so that the answer covers every file.
	paged bool
	// fromCursor: the search continues an earlier answer, whose first
	// page aggregated the files past it: this page ends at its own end,
	// so that paging through a tree reads it once, not once per page.
	fromCursor bool
	// partial (count mode, or files mode once paged): a file's search was
	// cut (timeout).
	partial bool
}

func newCollector(alias, rootPath string, req Request, lim sfs.Limits) *collector {
	res := &Result{Workdir: alias, Path: rootPath, Query: req.Query}
	switch {
	case req.Output != OutputLines:
		res.Files = []FileHit{}
	case req.before()+req.after() > 0:
		res.Blocks = []Block{}
	default:
		res.Matches = []Match{}
	}
	// The byte cap is SERVERFS_MAX_READ_BYTES, as for one read; matching
	// lines without context are bounded by the limit already.
	capBytes := lim.MaxReadBytes
	if res.Blocks == nil {
		capBytes = max(capBytes, req.Limit*MaxLineText)
	}
	return &collector{req: req, res: res, capBytes: capBytes}
}

// fileLineBytes is what a file of the files and count modes adds to the
// answer besides its path: a separator, its count and a line ending.
const fileLineBytes = 8

// full reports whether one more result would exceed the limit or the
// byte cap; it sets the reason.
func (c *collector) full() bool {
	switch {
	case c.returned == c.req.Limit:
		c.done, c.reason = true, sfs.TruncatedLimit
	case c.bytes >= c.capBytes:
		c.done, c.reason = true, TruncatedBytes
	}
	return c.done
}

// take folds one file's result into the answer.
func (c *collector) take(r fileResult) {
	c.res.count(r)
	switch {
	case c.req.Output == OutputCount:
		if r.partial {
			c.done, c.partial = true, true // a partial count is not a count: resume at this file
			return
		}
		if r.count == 0 {
			break
		}
		if !c.paged && c.full() {
			if c.fromCursor {
				return // a later page lists only: the first aggregated the rest
			}
			// The page ends here (reason and last stay its own), the
			// scan does not: the rest is aggregated and the total
			// counts on.
			c.done, c.paged = false, true
		}
		c.res.Total += r.count
		if c.paged {
			c.res.MoreFiles++
			c.res.MoreLines += r.count
			return
		}
		c.res.Files = append(c.res.Files, FileHit{Path: r.path, Count: r.count, Compressed: r.compressed})
		c.bytes += len(r.path) + fileLineBytes
		c.returned++
	case c.req.Output == OutputFiles:
		if len(r.matches) > 0 {
			if !c.paged && c.full() {
				if c.fromCursor {
					return
				}
				c.done, c.paged = false, true // as in count mode: the rest is aggregated
			}
			if c.paged {
				c.res.MoreFiles++
				return
			}
			hit := FileHit{Path: r.path, Compressed: r.compressed}
			if r.countExact {
				hit.Count = r.count
			}
			c.res.Files = append(c.res.Files, hit)
			c.bytes += len(r.path) + fileLineBytes
			c.returned++
		} else if r.partial {
			c.done, c.partial = true, c.paged
			return
		}
	case c.res.Blocks != nil:
		c.takeBlocks(r)
	default:
		c.res.Matches = slices.Grow(c.res.Matches, min(len(r.matches), c.req.Limit-c.returned))
		for _, m := range r.matches {
			if c.full() {
				return
			}
			c.res.Matches = append(c.res.Matches, Match{Path: r.path, Line: m.line, Text: m.text, TextTruncated: m.cut, Compressed: r.compressed, InArchive: r.member, Document: r.document})
			c.bytes += len(m.text)
			c.returned++
			c.last = sfs.Cursor{Path: r.path, Line: m.line}
		}
	}
	if c.done || c.paged {
		return // past the page the position stays the page's end
	}
	if r.partial {
		// Stopped from outside (timeout) inside this file: what it found
		// is a true prefix; resume after it.
		c.done = true
		return
	}
	c.last = sfs.Cursor{Path: r.path}
}

// takeBlocks adds a file's matches with their context lines, merged into
// blocks.
func (c *collector) takeBlocks(r fileResult) {
	before, after := c.req.before(), c.req.after()
	var blk *Block
	lastLine := 0
	add := func(m lineMatch, match bool) {
		if blk == nil || m.line != lastLine+1 {
			c.res.Blocks = append(c.res.Blocks, Block{Path: r.path, Compressed: r.compressed, InArchive: r.member, Document: r.document})
			blk = &c.res.Blocks[len(c.res.Blocks)-1]
		}
		blk.Lines = append(blk.Lines, BlockLine{Line: m.line, Text: m.text, Match: match, TextTruncated: m.cut})
		lastLine = m.line
		c.bytes += len(m.text)
	}
	ci := 0
	prev := -1 // line of the previous match taken
	for _, m := range r.matches {
		if c.full() {
			break
		}
		for ci < len(r.context) && r.context[ci].line < m.line {
			if l := r.context[ci].line; l >= m.line-before || (prev >= 0 && l <= prev+after) {
				add(r.context[ci], false)
			}
			ci++
		}
		add(m, true)
		c.returned++
		c.last = sfs.Cursor{Path: r.path, Line: m.line}
		prev = m.line
	}
	for prev >= 0 && ci < len(r.context) && r.context[ci].line <= prev+after {
		if r.context[ci].line > prev {
			add(r.context[ci], false)
		}
		ci++
	}
}

// count folds one file's outcome into the statistics.
func (res *Result) count(r fileResult) {
	switch {
	case r.skippedArchive:
		res.Skipped.Archives++
	case r.skippedDocument:
		res.Skipped.Documents++
	case r.tooLarge, r.err == errArchiveLarge:
		res.Skipped.TooLarge++
	case r.err == errCorrupt:
		res.Skipped.Corrupt++
	case r.err == errWindow:
		res.Skipped.WindowTooLarge++
	case r.err != nil && r.err != errStopped:
		res.Skipped.Unreadable++
	case r.outcome == outcomeBinary:
		res.Skipped.Binary++
	default:
		res.FilesScanned++
		if r.outcome == outcomeBinaryLate {
			res.Skipped.BinaryLate++
		}
		if r.capped {
			res.Skipped.CutAtCap++
		}
	}
}
