// Package search is ServerFS's in-process search (search_text): ripgrep's
// -F semantics (or RE2 regular expressions with a literal prefilter)
// without a subprocess, walking only through fs's policy-checked
// descriptors.
//
// The parts are kept apart as in ripgrep, and both searches, search_text's
// (Engine.Search) and ChatGPT's (Engine.Rank, rank.go), run the same
// pipeline (pipeline.go): walkSpec is the walker (fs.Workdir.Walk with
// package ignore's stack for .gitignore), matcher and regexMatcher find
// the query in a buffer, searcher feeds one stream (decompressed by
// package decompress) through a matcher and reports matching lines (and
// reads context lines), and each search has its sink: the collector keeps
// results in path order, enforces the limit and the byte cap, builds the
// lines, blocks, files or count answer and the position a next_cursor
// resumes after; rankSink keeps the best files.
package search

import (
	"context"
	"fmt"
	"io"
	"path"
	"runtime"
	"strings"

	"sync/atomic"
	"unicode/utf8"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/fs/ignore"
	"github.com/serverfs/serverfs/internal/archive"
	"github.com/serverfs/serverfs/internal/decompress"
	"github.com/serverfs/serverfs/internal/errs"
)

// MaxQueryBytes bounds a query.
const MaxQueryBytes = 1024

// Output modes of a search.
const (
	OutputLines = "lines" // each matching line (the default)
	OutputFiles = "files" // each file with a match, once (rg -l)
	OutputCount = "count" // matching lines per file and in total (rg -c)
)

// MaxContext bounds Request.Context, Before and After.
const MaxContext = 10

// TruncatedBytes is the truncation reason when the text of the answer
// reached Limits.MaxReadBytes.
const TruncatedBytes = "bytes"

// Request is one search.
type Request struct {
	Workdir       string
	Path          string // directory to search, workdir-relative ("" = root)
	Query         string // literal text, or an RE2 regular expression when Regex
	Regex         bool
	CaseSensitive bool
	Glob          string // optional; without "/" it matches base names, with "/" the path below Path
	Limit         int    // 0: Limits.DefaultSearchResults; matching lines, or files in the files and count modes
	// IncludeIgnored searches files that .gitignore or .git/info/exclude
	// would skip. Hidden and denied paths stay unreachable regardless.
	IncludeIgnored bool
	// Context lines before and after each match (0 to MaxContext); Before
	// and After, when set, override it on their side. Lines mode only.
	Context, Before, After int
	Output                 string // OutputLines (""), OutputFiles or OutputCount
	// Archives searches inside archive files (zip, tar, tar.gz, tar.zst,
	// tar.bz2): each member is a file named archive/member. Without it
	// archives are skipped and counted.
	Archives bool
	// Documents searches the text of PDF and office documents (docx,
	// xlsx, pptx, odt, ods, odp), extracted per call; without it they
	// are skipped and counted.
	Documents bool
	// Cursor is the next_cursor of an earlier answer to the same request:
	// the search resumes right after that answer's last result.
	Cursor string
}

// Match is one matching line.
type Match struct {
	Path          string `json:"path"`
	Line          int    `json:"line"`
	Text          string `json:"text"`
	TextTruncated bool   `json:"text_truncated,omitempty"`
	Compressed    bool   `json:"compressed,omitempty"`
	InArchive     bool   `json:"in_archive,omitempty"` // an archive's member: read-only, no revision
	Document      bool   `json:"document,omitempty"`   // a document's extracted text: no revision
}

// Block is a run of consecutive lines of one file around matches, as
// `rg -C` prints them: overlapping or touching windows merge into one
// block; a gap between windows starts a new block.
type Block struct {
	Path       string      `json:"path"`
	Compressed bool        `json:"compressed,omitempty"`
	InArchive  bool        `json:"in_archive,omitempty"`
	Document   bool        `json:"document,omitempty"`
	Lines      []BlockLine `json:"lines"`
}

// BlockLine is one line of a Block; Match marks the matching lines.
type BlockLine struct {
	Line          int    `json:"line"`
	Text          string `json:"text"`
	Match         bool   `json:"match,omitempty"`
	TextTruncated bool   `json:"text_truncated,omitempty"`
}

// FileHit is one file of the files and count modes.
type FileHit struct {
	Path       string `json:"path"`
	Count      int    `json:"count,omitempty"` // matching lines: always in count mode; in files mode for files up to 256 KiB (read whole anyway)
	Compressed bool   `json:"compressed,omitempty"`
}

// Skipped counts files the search did not search, by reason.
type Skipped struct {
	Binary     int `json:"binary,omitempty"`      // NUL in the first 8 KiB
	TooLarge   int `json:"too_large,omitempty"`   // over SERVERFS_SEARCH_MAX_FILE_BYTES
	Unreadable int `json:"unreadable,omitempty"`  // permission denied, vanished, special file
	Corrupt    int `json:"corrupt,omitempty"`     // a .gz/.zst that does not decompress
	Ignored    int `json:"ignored,omitempty"`     // excluded by .gitignore rules (files only)
	CutAtCap   int `json:"cut_at_cap,omitempty"`  // compressed files searched only up to the decompressed-bytes cap
	BinaryLate int `json:"binary_late,omitempty"` // binary data after the first 8 KiB: searched up to it

	// Archives: archive files not searched (Request.Archives is false);
	// Documents: PDF and office documents (Request.Documents is false).
	Archives  int `json:"archives,omitempty"`
	Documents int `json:"documents,omitempty"`

	// WindowTooLarge: .zst files whose frame needs a window over
	// decompress.MaxZstdWindow (zstd --long or --ultra), not decompressed.
	WindowTooLarge int `json:"window_too_large,omitempty"`
}

// Result is the answer of a search. Results are sorted by path (in the
// walk's order: each directory sorted by name) and line. Exactly one of
// Matches (lines), Blocks (lines with context) and Files (files, count)
// is set.
type Result struct {
	Workdir string    `json:"workdir"`
	Path    string    `json:"path"`
	Query   string    `json:"query"`
	Matches []Match   `json:"matches,omitzero"`
	Blocks  []Block   `json:"blocks,omitzero"`
	Files   []FileHit `json:"files,omitzero"`
	// Total (count mode) is the number of matching lines of every file
	// the search read, those past the limit included; TotalIncomplete
	// says why that is not every file's, when it is not: the walk or the
	// timeout stopped the scan, or it started at a cursor (and a full page
	// from a cursor counts its own files only).
	Total           int    `json:"total,omitempty"`
	TotalIncomplete string `json:"total_incomplete,omitempty"`
	// MoreFiles and MoreLines (count mode; files mode MoreFiles only, and
	// TotalIncomplete then says only why MoreFiles is not every file's)
	// aggregate the files with matches after the listed ones (the limit or
	// the byte cap ended the list) and their matching lines, so that one
	// answer covers the whole tree; exact unless TotalIncomplete is
	// timeout or walk_limit.
	MoreFiles       int    `json:"more_files,omitempty"`
	MoreLines       int    `json:"more_lines,omitempty"`
	Returned        int    `json:"returned"`                   // matching lines, or files in the files and count modes
	Truncated       bool   `json:"truncated"`                  // false: complete (in count mode: every count is exact and final)
	TruncatedReason string `json:"truncated_reason,omitempty"` // limit, bytes, timeout, walk_limit, depth
	// NextCursor, on a truncated answer that can be continued, resumes
	// right after its last result when passed back as cursor.
	NextCursor string `json:"next_cursor,omitempty"`
	// Archives names the archives the search opened (Request.Archives),
	// up to MaxArchivesNamed; ArchivesMore counts the others.
	Archives     []string `json:"archives,omitempty"`
	ArchivesMore int      `json:"archives_more,omitempty"`
	FilesScanned int      `json:"files_scanned"`
	FilesSkipped int      `json:"files_skipped,omitempty"`
	Skipped      Skipped  `json:"skipped,omitzero"` // absent when nothing was skipped
	// Hint, when set, says why a search may have found nothing.
	Hint string `json:"hint,omitempty"`
}

// literalHint is the answer's hint when a literal query holding regular
// expression metacharacters finds nothing.
const literalHint = "nothing matched the query as literal text; queries are literal unless regex is true (then RE2 syntax)"

// skippedHint is the answer's hint when nothing matched and archives or
// documents were skipped: how to search them.
func skippedHint(s Skipped) string {
	switch {
	case s.Archives > 0 && s.Documents > 0:
		return "archives and PDF/office documents were skipped, not searched: archives true searches inside archives, documents true the documents' text"
	case s.Archives > 0:
		return "archives were skipped, not searched: archives true searches inside them"
	case s.Documents > 0:
		return "PDF and office documents were skipped, not searched: documents true searches their text"
	}
	return ""
}

// regexMeta are the characters that suggest a query was meant as a regexp
// ("." is left out: it is common in literal names).
const regexMeta = `*+?|()[]{}^$\`

// Engine searches the workdirs of one fs.FS.
type Engine struct {
	fs      *sfs.FS
	workers int
	// readers read directories ahead of the walk (fs.WalkOptions.ReadAhead);
	// 0 walks sequentially.
	readers int

	// beforeFile, in tests, runs in the worker before each file.
	beforeFile func(ctx context.Context, path string)
}

// New returns an Engine with two workers per CPU: a worker in a read or
// open system call leaves its CPU to another (measured: 2 workers per CPU
// cut a GOROOT/src search from 100 to 82 ms on 2 CPUs).
func New(f *sfs.FS) *Engine {
	return &Engine{fs: f, workers: Workers(), readers: max(1, runtime.GOMAXPROCS(0))}
}

// batchFiles is how many files the walker hands a worker at once.
const batchFiles = 8

// job is one file handed from the walker to a worker (in a batch whose
// files share seq, the batch's place in walk order).
type job struct {
	seq        int
	ref        *sfs.FileRef
	path       string
	compressed string // "", "gz" or "zst"
	after      int    // report only the lines after this one (resuming in this file)
	// archive: the file is named like an archive; archiveOnly: the glob
	// did not name it, so it is searched only if it is one (its members
	// then face the glob). member: the archive member a cursor resumes
	// in (after is then its line).
	archive, archiveOnly bool
	member               string
}

// fileResult is what a worker found in one file.
type fileResult struct {
	seq        int
	path       string
	compressed bool
	matches    []lineMatch
	count      int         // count mode: matching lines
	context    []lineMatch // context lines around matches (not the matches)
	outcome    fileOutcome
	capped     bool // decompression stopped at the cap
	tooLarge   bool
	partial    bool // stopped from outside before the end of the file
	countExact bool // files mode: count is every matching line of the file
	err        error
	// archive: the job was an archive searched inside; members are its
	// members' results in stored order. archiveErr (a member's) is the
	// archive stream's failure, which ends its walk. skippedArchive: an
	// archive not searched (Request.Archives false).
	archive, member bool
	members         []fileResult
	// document: a document's text was searched; skippedDocument: a
	// document not searched (Request.Documents false).
	document, skippedDocument bool
	archiveErr                error
	skippedArchive            bool
}

// plan is what every worker needs to know about a request.
type plan struct {
	cm            chunkMatcher
	maxLen        int
	perFile       int // matches kept per file (one more than needed tells "more")
	countOnly     bool
	files         bool // output files
	before, after int
	capBytes      int64
	stopped       func() bool
	// archives: search inside archives, with w's path policy on members
	// and globber (the request's glob, root its base) on their names.
	archives, documents bool
	w                   *sfs.Workdir
	globber             *sfs.Glob
	root                string
	// memberPrefix: only members below it are searched (the request's
	// path inside an archive).
	memberPrefix string
}

// Search runs req. It returns when every goroutine it started has ended.
// The whole call is bounded by Limits.SearchTimeout and by ctx; on timeout
// it returns what it found with truncated_reason "timeout", or
// SEARCH_TIMEOUT when it found nothing.
func (e *Engine) Search(ctx context.Context, req Request) (*Result, error) {
	lim := e.fs.Limits()
	q, err := e.prepare(&req, lim)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, lim.SearchTimeout)
	defer cancel()
	ws := &walkSpec{w: q.w, root: q.walkRoot, cursor: q.cursor, glob: q.glob, maxEntries: lim.MaxWalkEntries, readAhead: e.readers, archives: req.Archives, only: q.archive}
	if !req.IncludeIgnored {
		ws.rules = ignore.New(ctx, ignore.Ripgrep())
		ws.rules.LoadAbove(q.w, q.walkRoot)
	}
	// stop ends every worker's current file at its next buffer; set on
	// the limit, and checked together with ctx (timeout, cancellation).
	var stop atomic.Bool
	pl := q.workerPlan(req, lim, func() bool { return stop.Load() || ctx.Err() != nil })

	// Files in flight or finished out of order, waiting to be collected in
	// path order. A wide window keeps workers busy past one slow file; its
	// worst case holds window*(limit+1) matches, kept near 100,000. Files
	// travel in batches of up to batchFiles: one channel handoff (and
	// goroutine wake-up) per batch instead of three per file.
	window := max(64, min(1024, 100_000/(req.Limit+1)))
	tokens := make(chan struct{}, window/batchFiles)
	var walkRes sfs.WalkResult
	var walkErr error
	p := startPipeline(ctx, e.workers, window/batchFiles, tokens, func(j job) { j.ref.Release() },
		func(s *searcher, j job) (fileResult, bool) {
			if e.beforeFile != nil {
				e.beforeFile(ctx, j.path)
			}
			return e.searchFile(ctx, s, j, pl), true
		},
		func(p *pipeline[job, fileResult]) {
			walkRes, walkErr = ws.walk(ctx, func(ent *sfs.WalkEntry, resume sfs.Resume) bool {
				// The worker opens the file: the walk only reads directories.
				j := job{seq: p.seq, ref: ent.Ref(), path: ent.Path, compressed: decompress.Kind(ent.Name),
					archive: archive.Named(ent.Name), archiveOnly: resume == resumeArchiveOnly}
				if resume == sfs.ResumePartial {
					j.after = q.cursor.Line
					if strings.HasPrefix(q.cursor.Path, ent.Path+"/") {
						j.member = q.cursor.Path[len(ent.Path)+1:]
					}
				}
				return p.add(j)
			})
			p.flush()
		})

	col := newCollector(q.w.Alias(), q.rootPath, req, lim)
	col.fromCursor = q.cursor != nil
	col.drain(p.results, tokens, p.recycle, func() { stop.Store(true); cancel() })
	<-p.done // every goroutine of this call has ended
	if walkErr != nil {
		return nil, walkErr
	}
	if err := ws.err(); err != nil {
		return nil, err
	}
	col.res.Skipped.Ignored += ws.ignored
	return q.answer(ctx, req, lim, col, walkRes)
}

// query is a validated search_text request, ready to run.
type query struct {
	w        *sfs.Workdir
	rootPath string
	// walkRoot is where the walk starts: rootPath, or the directory of
	// archive when rootPath is the archive or inside it (memberPrefix
	// then its path below the archive).
	walkRoot, archive, memberPrefix string
	glob                            *sfs.Glob
	cm                              chunkMatcher
	maxLen                          int // the longest match a buffer boundary may cut (see searcher)
	key                             string
	cursor                          *sfs.Cursor // the position a continued search resumes after
}

// prepare fills req's defaults, validates it and compiles its glob and
// query.
func (e *Engine) prepare(req *Request, lim sfs.Limits) (*query, error) {
	if req.Limit == 0 {
		req.Limit = lim.DefaultSearchResults
	}
	if req.Output == "" {
		req.Output = OutputLines
	}
	if err := validate(*req, lim); err != nil {
		return nil, err
	}
	w, err := e.fs.Workdir(req.Workdir)
	if err != nil {
		return nil, err
	}
	q := &query{w: w}
	if req.Glob != "" {
		if q.glob, err = sfs.CompileGlob(req.Glob); err != nil {
			return nil, err
		}
	}
	if req.Regex {
		rm, err := compileRegex(req.Query, req.CaseSensitive)
		if err != nil {
			return nil, err
		}
		q.cm, q.maxLen = rm, regexOverlap
	} else {
		q.cm = newMatcher(req.Query, req.CaseSensitive)
		q.maxLen = len(req.Query)
		if !req.CaseSensitive {
			q.maxLen = utf8.RuneCountInString(req.Query) * utf8.UTFMax
		}
	}
	if root, err := w.OpenDir(req.Path); err == nil {
		q.rootPath, q.walkRoot = root.Path, root.Path
		root.Close()
	} else if at, member, ok := w.ArchivePath(req.Path); ok && req.Archives {
		// The path is an archive or inside one: the walk visits the
		// archive alone, its members below the path face the glob.
		q.archive, q.memberPrefix = at, member
		q.rootPath, q.walkRoot = path.Join(at, member), path.Dir(at)
		if q.walkRoot == "." {
			q.walkRoot = ""
		}
	} else {
		return nil, err
	}
	q.key = sfs.CursorKey("search", w.Alias(), q.rootPath, req.Query, fmt.Sprint(req.Regex, req.CaseSensitive, req.IncludeIgnored, req.Archives, req.Documents),
		req.Glob, req.Output, fmt.Sprint(req.before(), req.after()))
	if req.Cursor != "" {
		c, err := sfs.DecodeCursor(req.Cursor, q.key)
		if err != nil {
			return nil, err
		}
		q.cursor = &c
	}
	return q, nil
}

// workerPlan is what every worker needs to know about the query; stopped tells
// a worker to end its file.
func (q *query) workerPlan(req Request, lim sfs.Limits, stopped func() bool) *plan {
	pl := &plan{cm: q.cm, maxLen: q.maxLen, perFile: req.Limit + 1, before: req.before(), after: req.after(),
		capBytes: lim.SearchMaxFileBytes, stopped: stopped, archives: req.Archives, documents: req.Documents, w: q.w, globber: q.glob, root: q.rootPath, memberPrefix: q.memberPrefix}
	if rm, ok := q.cm.(*regexMatcher); ok {
		rm.stopped = pl.stopped // a regexp checks it between lines, not only between buffers
	}
	switch req.Output {
	case OutputFiles:
		pl.perFile, pl.files = 1, true
	case OutputCount:
		pl.perFile, pl.countOnly = 0, true
	}
	return pl
}

// drain is the collector's loop: it takes the workers' results in walk
// order (a batch's seq) and gives back a window token per batch taken,
// and each batch once taken (recycle); stop ends the search once the
// answer is complete.
func (c *collector) drain(results <-chan []fileResult, tokens <-chan struct{}, recycle func([]fileResult), stop func()) {
	pending := map[int][]fileResult{}
	next := 0
	for rs := range results {
		if c.done || len(rs) == 0 {
			recycle(rs)
			continue // draining after the limit: every worker is stopping
		}
		pending[rs[0].seq] = rs
		for !c.done {
			rs, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-tokens
			for _, r := range rs {
				if r.archive {
					c.takeArchive(r)
				} else {
					c.take(r)
				}
				if c.done {
					stop()
					break
				}
			}
			recycle(rs) // take copied what it keeps
		}
	}
}

// answer completes the collected result: totals, truncation, the hint
// and the cursor of the next page.
func (q *query) answer(ctx context.Context, req Request, lim sfs.Limits, col *collector, walkRes sfs.WalkResult) (*Result, error) {
	res := col.res
	limited := col.reason == sfs.TruncatedLimit || col.reason == TruncatedBytes
	timedOut := !limited && ctx.Err() != nil
	if req.Output == OutputCount || res.MoreFiles > 0 {
		switch {
		case limited && !col.paged: // a page from a cursor, ended at its limit
			res.TotalIncomplete = TotalPageOnly
		case col.partial || ctx.Err() != nil: // past its page, only the timeout (or the client) cancels
			res.TotalIncomplete = sfs.TruncatedTimeout
		case walkRes.Truncated:
			res.TotalIncomplete = walkRes.TruncatedReason
		case q.cursor != nil && req.Output == OutputCount:
			res.TotalIncomplete = TotalFromCursor
		}
	}
	res.FilesSkipped = res.Skipped.Binary + res.Skipped.TooLarge + res.Skipped.Unreadable + res.Skipped.Corrupt + res.Skipped.WindowTooLarge + res.Skipped.Ignored + res.Skipped.Archives + res.Skipped.Documents
	res.Returned = col.returned
	if res.Returned == 0 && !req.Regex && strings.ContainsAny(req.Query, regexMeta) {
		res.Hint = literalHint
	}
	if res.Returned == 0 && res.Hint == "" {
		res.Hint = skippedHint(res.Skipped)
	}
	var resumeAt *sfs.Cursor
	switch {
	case limited:
		res.Truncated, res.TruncatedReason = true, col.reason
		resumeAt = &col.last
	case timedOut:
		if res.Returned == 0 {
			if err := context.Cause(ctx); err == context.Canceled {
				return nil, errs.At(errs.Canceled, q.w.Alias(), q.rootPath, "the search was cancelled")
			}
			return nil, errs.At(errs.SearchTimeout, q.w.Alias(), q.rootPath, fmt.Sprintf("nothing found within the %s search timeout; narrow the path or add a glob", lim.SearchTimeout))
		}
		res.Truncated, res.TruncatedReason = true, sfs.TruncatedTimeout
		resumeAt = &col.last
	case walkRes.Truncated:
		res.Truncated, res.TruncatedReason = true, walkRes.TruncatedReason
		if walkRes.ResumeAfter != "" && walkRes.ResumeAfter != q.rootPath {
			resumeAt = &sfs.Cursor{Path: walkRes.ResumeAfter}
		}
	}
	if resumeAt != nil && resumeAt.Path != "" && (q.cursor == nil || *resumeAt != (sfs.Cursor{Path: q.cursor.Path, Line: q.cursor.Line})) {
		resumeAt.Key = q.key
		res.NextCursor = resumeAt.Encode()
	}
	return res, nil
}

func (req Request) before() int {
	if req.Before > 0 {
		return req.Before
	}
	return req.Context
}

func (req Request) after() int {
	if req.After > 0 {
		return req.After
	}
	return req.Context
}

// TotalFromCursor is why a count mode total that started at a cursor is
// not every file's: the files before it are not counted.
const TotalFromCursor = "counted from the cursor on"

// TotalPageOnly is why the total of a full page from a cursor is not every
// file's: such a page counts its own files only.
const TotalPageOnly = "this page only"

func validate(req Request, lim sfs.Limits) error {
	bad := func(msg string) error {
		return errs.New(errs.InvalidArgument, msg)
	}
	switch {
	case req.Query == "":
		return bad("query is empty")
	case len(req.Query) > MaxQueryBytes && req.Regex:
		return errs.New(errs.InvalidPattern, fmt.Sprintf("regular expression is %d bytes long, more than %d", len(req.Query), MaxQueryBytes))
	case len(req.Query) > MaxQueryBytes:
		return bad(fmt.Sprintf("query is longer than %d bytes", MaxQueryBytes))
	case !utf8.ValidString(req.Query):
		return bad("query is not valid UTF-8")
	case strings.ContainsAny(req.Query, "\n\r\x00"):
		return bad("query must be a single line of text (no newline, carriage return or NUL)")
	case req.Limit < 1 || req.Limit > lim.MaxSearchResults:
		return bad(fmt.Sprintf("limit must be between 1 and %d", lim.MaxSearchResults))
	case req.Context < 0 || req.Context > MaxContext || req.Before < 0 || req.Before > MaxContext || req.After < 0 || req.After > MaxContext:
		return bad(fmt.Sprintf("context, before and after must be between 0 and %d", MaxContext))
	case req.Output != OutputLines && req.Output != OutputFiles && req.Output != OutputCount:
		return bad(fmt.Sprintf("output must be %q, %q or %q", OutputLines, OutputFiles, OutputCount))
	case req.Output != OutputLines && req.before()+req.after() > 0:
		return bad("context lines go with output \"lines\" only")
	}
	return nil
}

// searchFile searches one job's file and closes it.
func (e *Engine) searchFile(ctx context.Context, s *searcher, j job, pl *plan) fileResult {
	r := fileResult{seq: j.seq, path: j.path, compressed: j.compressed != ""}
	if pl.stopped() {
		j.ref.Release()
		r.err, r.partial = errStopped, true
		return r
	}
	file, size, err := j.ref.Open()
	if err != nil {
		r.err = err
		return r
	}
	defer file.Close()
	if j.archive {
		if f := sfs.ArchiveFormat(j.path, file); f != archive.None {
			if !pl.archives {
				r.skippedArchive = true
				return r
			}
			return e.searchArchive(ctx, s, j, pl, file, size, f)
		}
	}
	if j.archiveOnly {
		return r // named like an archive, not one, and not named by the glob
	}
	if sfs.DocumentKind(j.path) != "" {
		if !pl.documents {
			r.skippedDocument = true
			return r
		}
		return e.searchDocument(ctx, s, j, pl, file, size)
	}
	if size > pl.capBytes {
		r.tooLarge = true
		return r
	}
	// Read what fstat saw and no more: a snapshot of a growing log, and
	// no extra read to learn about EOF. (Size 0 may be a lie, as in procfs.)
	open := func() (io.Reader, *decompress.CapReader, func(), error) {
		var src io.Reader = file
		n := size
		if n == 0 {
			n = 1 << 62
		}
		s.sec = *io.NewSectionReader(file, 0, n) // the worker's, reused: no allocation per file
		src = &s.sec
		if j.compressed == "" {
			return src, nil, func() {}, nil
		}
		dec, err := decompress.NewReader(ctx, j.compressed, src)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, nil, errStopped
			}
			return nil, nil, nil, errCorrupt
		}
		cr := decompress.Cap(dec, pl.capBytes)
		return cr, cr, func() { dec.Close() }, nil
	}
	src, cr, closeSrc, err := open()
	if err != nil {
		r.err, r.partial = err, err == errStopped
		return r
	}
	defer closeSrc() // idempotent
	// In the files mode a file read by one buffer is counted to its end
	// (cheap: it is in memory); a bigger one stops at its first match.
	small := pl.files && cr == nil && size > 0 && size <= int64(len(s.buf))
	emit := func(m lineMatch) bool {
		if m.line <= j.after {
			return true // reported by the answer this one continues
		}
		if pl.countOnly || small {
			r.count++
			return true
		}
		r.matches = append(r.matches, m)
		return len(r.matches) < pl.perFile
	}
	s.countOnly = pl.countOnly || small
	if n := min(e.workers, int(size/minRange)); cr == nil && j.after == 0 && size >= rangeThreshold && n > 1 {
		r.matches, r.count, r.outcome, r.err = searchRanges(file, size, n, pl.cm, pl.maxLen, pl.perFile, pl.countOnly, pl.stopped)
	} else {
		r.outcome, r.err = s.search(src, pl.cm, pl.maxLen, pl.stopped, emit)
	}
	if r.err == errStopped && !pl.countOnly && len(r.matches) >= pl.perFile {
		r.err = nil // stopped because this file alone filled the limit
	}
	if small {
		r.countExact = r.err == nil
		if r.count > 0 {
			r.matches, r.err = []lineMatch{{line: 1}}, nil // one match is all the files mode needs
		}
	}
	if r.err != nil && cr != nil && r.err != errStopped {
		if decompress.WindowTooLarge(r.err) {
			r.err, r.matches, r.count = errWindow, nil, 0
		} else {
			r.err, r.matches, r.count = errCorrupt, nil, 0
		}
	}
	closeSrc() // before the context pass opens its own: a worker holds one decoder at a time
	r.partial = r.err == errStopped
	r.capped = cr != nil && cr.Capped()
	if (pl.before > 0 || pl.after > 0) && len(r.matches) > 0 && r.err == nil {
		// Context: a second pass over the file, for the lines around the
		// matches only (it stops after the last window).
		if src, _, closeCtx, err := open(); err == nil {
			r.context = s.readContext(src, r.matches, pl.before, pl.after, pl.stopped)
			closeCtx()
		}
	}
	return r
}
