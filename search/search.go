// Package search is ServerFS's in-process literal search (search_text):
// ripgrep's -F semantics without a subprocess, walking only through fs's
// policy-checked descriptors.
//
// The parts are kept apart as in ripgrep: fs.Workdir.Walk is the walker
// (plus ignoreRules for .gitignore), matcher finds the query in a buffer,
// searcher feeds one stream through a matcher and reports matching lines,
// and the collector in Engine.Search is the sink that keeps results in path
// order and enforces the limit.
package search

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	sfs "github.com/serverfs/serverfs/fs"
)

// MaxQueryBytes bounds a query.
const MaxQueryBytes = 1024

// Request is one search.
type Request struct {
	Workdir       string
	Path          string // directory to search, workdir-relative ("" = root)
	Query         string // literal text, or an RE2 regular expression when Regex
	Regex         bool
	CaseSensitive bool
	Glob          string // optional; without "/" it matches base names, with "/" the path below Path
	Limit         int    // 0: Limits.DefaultSearchResults
	// IncludeIgnored searches files that .gitignore or .git/info/exclude
	// would skip. Hidden and denied paths stay unreachable regardless.
	IncludeIgnored bool
}

// Match is one matching line.
type Match struct {
	Path          string `json:"path"`
	Line          int    `json:"line"`
	Text          string `json:"text"`
	TextTruncated bool   `json:"text_truncated,omitempty"`
	Compressed    bool   `json:"compressed,omitempty"`
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
}

// Result is the answer of a search. Matches are sorted by path (in the
// walk's order: each directory sorted by name) and line.
type Result struct {
	Workdir         string  `json:"workdir"`
	Path            string  `json:"path"`
	Query           string  `json:"query"`
	Matches         []Match `json:"matches"`
	Returned        int     `json:"returned"`
	Truncated       bool    `json:"truncated"`
	TruncatedReason string  `json:"truncated_reason,omitempty"` // limit, timeout, walk_limit, depth
	FilesScanned    int     `json:"files_scanned"`
	FilesSkipped    int     `json:"files_skipped,omitempty"`
	Skipped         Skipped `json:"skipped,omitzero"` // absent when nothing was skipped
	// Hint, when set, says why a search may have found nothing.
	Hint string `json:"hint,omitempty"`
}

// literalHint is the answer's hint when a literal query holding regular
// expression metacharacters finds nothing.
const literalHint = "nothing matched the query as literal text; queries are literal unless regex is true (then RE2 syntax)"

// regexMeta are the characters that suggest a query was meant as a regexp
// ("." is left out: it is common in literal names).
const regexMeta = `*+?|()[]{}^$\`

// Engine searches the workdirs of one fs.FS.
type Engine struct {
	fs      *sfs.FS
	workers int

	// beforeFile, in tests, runs in the worker before each file.
	beforeFile func(ctx context.Context, path string)
}

// New returns an Engine with two workers per CPU: a worker in a read or
// open system call leaves its CPU to another (measured: 2 workers per CPU
// cut a GOROOT/src search from 100 to 82 ms on 2 CPUs).
func New(f *sfs.FS) *Engine {
	return &Engine{fs: f, workers: Workers()}
}

// job is one file handed from the walker to a worker.
type job struct {
	seq        int
	ref        *sfs.FileRef
	path       string
	compressed string // "", "gz" or "zst"
}

// fileResult is what a worker found in one file.
type fileResult struct {
	seq        int
	path       string
	compressed bool
	matches    []lineMatch
	outcome    fileOutcome
	capped     bool // decompression stopped at the cap
	tooLarge   bool
	err        error
}

// Search runs req. It returns when every goroutine it started has ended.
// The whole call is bounded by Limits.SearchTimeout and by ctx; on timeout
// it returns what it found with truncated_reason "timeout", or
// SEARCH_TIMEOUT when it found nothing.
func (e *Engine) Search(ctx context.Context, req Request) (*Result, error) {
	lim := e.fs.Limits()
	if req.Limit == 0 {
		req.Limit = lim.DefaultSearchResults
	}
	if err := validate(req, lim); err != nil {
		return nil, err
	}
	w, err := e.fs.Workdir(req.Workdir)
	if err != nil {
		return nil, err
	}
	var glob *sfs.Glob
	if req.Glob != "" {
		if glob, err = sfs.CompileGlob(req.Glob); err != nil {
			return nil, err
		}
	}
	root, err := w.OpenDir(req.Path)
	if err != nil {
		return nil, err
	}
	rootPath := root.Path
	root.Close()

	rules := &ignoreRules{}
	if !req.IncludeIgnored {
		rules.ancestors = ancestorFrames(w, rootPath)
	}

	ctx, cancel := context.WithTimeout(ctx, lim.SearchTimeout)
	defer cancel()
	// stop ends every worker's current file at its next buffer; set on
	// the limit, and checked together with ctx (timeout, cancellation).
	var stop atomic.Bool
	stopped := func() bool { return stop.Load() || ctx.Err() != nil }

	var cm chunkMatcher
	var maxLen int
	if req.Regex {
		rm, err := compileRegex(req.Query, req.CaseSensitive)
		if err != nil {
			return nil, err
		}
		cm, maxLen = rm, regexOverlap
	} else {
		cm = newMatcher(req.Query, req.CaseSensitive)
		maxLen = len(req.Query)
		if !req.CaseSensitive {
			maxLen = utf8.RuneCountInString(req.Query) * utf8.UTFMax
		}
	}
	perFile := req.Limit + 1 // one more than the limit tells "truncated"

	// Files in flight or finished out of order, waiting to be collected in
	// path order. A wide window keeps workers busy past one slow file; its
	// worst case holds window*(limit+1) matches, kept near 100,000.
	window := max(64, min(1024, 100_000/perFile))
	jobs := make(chan job, e.workers)
	results := make(chan fileResult, window)
	tokens := make(chan struct{}, window)

	// Workers.
	var wg sync.WaitGroup
	for range e.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newSearcher()
			for j := range jobs {
				if e.beforeFile != nil {
					e.beforeFile(ctx, j.path)
				}
				results <- e.searchFile(s, j, cm, maxLen, perFile, lim.SearchMaxFileBytes, stopped)
			}
		}()
	}

	// Walker.
	var walkRes sfs.WalkResult
	var walkErr error
	var walkSkipped Skipped
	walkerDone := make(chan struct{})
	go func() {
		defer close(walkerDone)
		defer func() {
			close(jobs)
			wg.Wait()
			close(results)
		}()
		seq := 0
		prefix := rootPath
		walkRes, walkErr = w.Walk(ctx, rootPath, sfs.WalkOptions{
			MaxEntries: lim.MaxWalkEntries,
			Enter: func(d *sfs.Dir) {
				if !req.IncludeIgnored {
					rules.enter(d)
				}
			},
			Visit: func(ent *sfs.WalkEntry) sfs.WalkAction {
				if ctx.Err() != nil {
					return sfs.WalkStop
				}
				switch ent.Type {
				case sfs.TypeDirectory:
					if ent.Name == ".git" {
						return sfs.WalkSkipDir // repository internals are never searched
					}
					if !req.IncludeIgnored && rules.ignored(ent.Path, true, ent.Depth) {
						return sfs.WalkSkipDir
					}
					return sfs.WalkContinue
				case sfs.TypeFile:
				default:
					return sfs.WalkContinue // symlinks and special files are never searched
				}
				rel := ent.Path
				if prefix != "" {
					rel = strings.TrimPrefix(rel, prefix+"/")
				}
				globbed := glob != nil && glob.Match(rel, ent.Name)
				if glob != nil && !globbed {
					return sfs.WalkContinue
				}
				// As in ripgrep, a file the glob names explicitly is
				// searched even when ignore rules would skip it.
				if !req.IncludeIgnored && !globbed && rules.ignored(ent.Path, false, ent.Depth) {
					walkSkipped.Ignored++
					return sfs.WalkContinue
				}
				select {
				case tokens <- struct{}{}:
				case <-ctx.Done():
					return sfs.WalkStop
				}
				// The worker opens the file: the walk only reads directories.
				ref := ent.Ref()
				select {
				case jobs <- job{seq: seq, ref: ref, path: ent.Path, compressed: CompressionOf(ent.Name)}:
					seq++
				case <-ctx.Done():
					ref.Release()
					return sfs.WalkStop
				}
				return sfs.WalkContinue
			},
		})
	}()

	// Collector: consume results in walk order.
	res := &Result{Workdir: w.Alias(), Path: rootPath, Query: req.Query, Matches: []Match{}}
	pending := map[int]fileResult{}
	next := 0
	limited := false
	take := func(r fileResult) {
		res.count(r)
		for _, m := range r.matches {
			if len(res.Matches) == req.Limit {
				limited = true
				break
			}
			res.Matches = append(res.Matches, Match{Path: r.path, Line: m.line, Text: m.text, TextTruncated: m.cut, Compressed: r.compressed})
		}
	}
	for r := range results {
		if limited {
			continue // draining after the limit: every worker is stopping
		}
		pending[r.seq] = r
		for {
			r, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-tokens
			take(r)
			if limited {
				stop.Store(true)
				cancel()
				break
			}
		}
	}
	<-walkerDone // every goroutine of this call has ended
	timedOut := !limited && ctx.Err() != nil
	if timedOut {
		// Keep what finished out of order: true matches, still in path order.
		seqs := make([]int, 0, len(pending))
		for s := range pending {
			seqs = append(seqs, s)
		}
		sort.Ints(seqs)
		for _, s := range seqs {
			if !limited {
				take(pending[s])
			}
		}
	}
	if walkErr != nil {
		return nil, walkErr
	}
	res.Skipped.Ignored += walkSkipped.Ignored
	res.FilesSkipped = res.Skipped.Binary + res.Skipped.TooLarge + res.Skipped.Unreadable + res.Skipped.Corrupt + res.Skipped.Ignored
	res.Returned = len(res.Matches)
	if res.Returned == 0 && !req.Regex && strings.ContainsAny(req.Query, regexMeta) {
		res.Hint = literalHint
	}
	switch {
	case limited:
		res.Truncated, res.TruncatedReason = true, sfs.TruncatedLimit
	case timedOut:
		if len(res.Matches) == 0 {
			if err := context.Cause(ctx); err == context.Canceled {
				return nil, &sfs.Error{Code: sfs.CodeCanceled, Workdir: w.Alias(), Path: rootPath, Msg: "the search was cancelled"}
			}
			return nil, &sfs.Error{Code: sfs.CodeSearchTimeout, Workdir: w.Alias(), Path: rootPath,
				Msg: fmt.Sprintf("nothing found within the %s search timeout; narrow the path or add a glob", lim.SearchTimeout)}
		}
		res.Truncated, res.TruncatedReason = true, sfs.TruncatedTimeout
	case walkRes.Truncated:
		res.Truncated, res.TruncatedReason = true, walkRes.TruncatedReason
	}
	return res, nil
}

// count folds one file's outcome into the statistics.
func (res *Result) count(r fileResult) {
	switch {
	case r.tooLarge:
		res.Skipped.TooLarge++
	case r.err == errCorrupt:
		res.Skipped.Corrupt++
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

func validate(req Request, lim sfs.Limits) error {
	bad := func(msg string) error {
		return &sfs.Error{Code: sfs.CodeInvalidArgument, Msg: msg}
	}
	switch {
	case req.Query == "":
		return bad("query is empty")
	case len(req.Query) > MaxQueryBytes && req.Regex:
		return &sfs.Error{Code: sfs.CodeInvalidPattern, Msg: fmt.Sprintf("regular expression is %d bytes long, more than %d", len(req.Query), MaxQueryBytes)}
	case len(req.Query) > MaxQueryBytes:
		return bad(fmt.Sprintf("query is longer than %d bytes", MaxQueryBytes))
	case !utf8.ValidString(req.Query):
		return bad("query is not valid UTF-8")
	case strings.ContainsAny(req.Query, "\n\r\x00"):
		return bad("query must be a single line of text (no newline, carriage return or NUL)")
	case req.Limit < 1 || req.Limit > lim.MaxSearchResults:
		return bad(fmt.Sprintf("limit must be between 1 and %d", lim.MaxSearchResults))
	}
	return nil
}

// ancestorFrames loads the ignore rules of the directories from the workdir
// root down to the search root's parent, so that a search below the root
// honours the .gitignore files above it, as ripgrep does.
func ancestorFrames(w *sfs.Workdir, rootPath string) []ignoreFrame {
	if rootPath == "" {
		return nil
	}
	comps := strings.Split(rootPath, "/")
	var frames []ignoreFrame
	parent := ignoreFrame{}
	for i := 0; i < len(comps); i++ {
		d, err := w.OpenDir(strings.Join(comps[:i], "/"))
		if err != nil {
			break
		}
		parent = loadFrame(d, parent)
		d.Close()
		frames = append(frames, parent)
	}
	return frames
}

// searchFile searches one job's file and closes it.
func (e *Engine) searchFile(s *searcher, j job, cm chunkMatcher, maxLen, perFile int, capBytes int64, stopped func() bool) fileResult {
	r := fileResult{seq: j.seq, path: j.path, compressed: j.compressed != ""}
	if stopped() {
		j.ref.Release()
		r.err = errStopped
		return r
	}
	file, size, err := j.ref.Open()
	if err != nil {
		r.err = err
		return r
	}
	defer file.Close()
	if size > capBytes {
		r.tooLarge = true
		return r
	}
	// Read what fstat saw and no more: a snapshot of a growing log, and
	// no extra read to learn about EOF. (Size 0 may be a lie, as in procfs.)
	var src io.Reader = file
	if size > 0 {
		src = &io.LimitedReader{R: file, N: size}
	}
	var cr *capReader
	if j.compressed != "" {
		dec, err := NewDecompressor(j.compressed, file)
		if err != nil {
			r.err = errCorrupt
			return r
		}
		defer dec.Close()
		cr = &capReader{r: dec, left: capBytes}
		src = cr
	}
	if n := min(e.workers, int(size/minRange)); cr == nil && size >= rangeThreshold && n > 1 {
		r.matches, r.outcome, r.err = searchRanges(file, size, n, cm, maxLen, perFile, stopped)
	} else {
		r.outcome, r.err = s.search(src, cm, maxLen, stopped, func(m lineMatch) bool {
			r.matches = append(r.matches, m)
			return len(r.matches) < perFile
		})
	}
	if r.err == errStopped && len(r.matches) >= perFile {
		r.err = nil // stopped because this file alone filled the limit
	}
	if r.err != nil && cr != nil && r.err != errStopped {
		r.err, r.matches = errCorrupt, nil
	}
	r.capped = cr != nil && cr.capped
	return r
}
