package search

import (
	"context"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/fs/ignore"
	"github.com/serverfs/serverfs/internal/decompress"
	"github.com/serverfs/serverfs/internal/errs"
)

// Ranked search (ChatGPT's search tool): the query is what a model writes
// in research ("where is the database url configured"), split into terms;
// every file of the workdirs is scanned in process, as search_text does
// (no index, no cache), counting per file the lines holding each term and
// per term the files holding it; once the pass is done, files are ranked
// by BM25 with those document frequencies, boilerplate (a header line many
// files share) left out, names and definitions up, tests, test data,
// vendored and generated code down (rank_score.go). A model asks
// questions: a word in every file (a licence header's "file") must not
// outweigh the one word that names the answer.

// MaxTerms bounds the terms of a ranked search; further words are dropped.
const MaxTerms = 8

// MaxRankResults bounds the files a ranked search returns.
const MaxRankResults = 20

// maxTitleText bounds the best line a ranked file carries.
const maxTitleText = 160

// stopWords are the words of a research question that say nothing about
// where to look.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about all an and any are as at be been but by can could did do does doing
		each find for from get had has have how i if in into is it its me my not of on or our show so some
		than that the their them then there these they this those to us use used using was we were what when where which
		who whom why will with would you your`) {
		stopWords[w] = true
	}
}

// QueryTerms splits a research query into search terms: "quoted phrases"
// stay whole; other words split at every character that is not a letter,
// digit or '_', are lower-cased, and lose English stop words and the
// endings -ing, -ed, -es and -s (a stem is a substring of the word, so
// "configured" still finds "configure" and "configuration"). Duplicates
// go; at most MaxTerms remain. A query of stop words only keeps them.
func QueryTerms(query string) []string {
	var words, all []string
	add := func(list *[]string, w string) {
		if w != "" && !slices.Contains(*list, w) {
			*list = append(*list, w)
		}
	}
	rest := query
	for rest != "" {
		i := strings.IndexByte(rest, '"')
		if i < 0 {
			i = len(rest)
		}
		for _, w := range strings.FieldsFunc(strings.ToLower(rest[:i]), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
		}) {
			add(&all, w)
			if !stopWords[w] && (utf8.RuneCountInString(w) > 1 || unicode.IsDigit(rune(w[0]))) {
				add(&words, stem(w))
			}
		}
		if i == len(rest) {
			break
		}
		rest = rest[i+1:]
		j := strings.IndexByte(rest, '"')
		if j < 0 {
			j = len(rest)
		}
		phrase := strings.ToLower(strings.TrimSpace(rest[:j]))
		add(&all, phrase)
		add(&words, phrase)
		if j == len(rest) {
			break
		}
		rest = rest[j+1:]
	}
	if len(words) == 0 {
		words = all
	}
	if len(words) > MaxTerms {
		words = words[:MaxTerms]
	}
	return words
}

// stem drops one English inflection ending when at least four letters
// remain.
func stem(w string) string {
	for _, suf := range []string{"ing", "ed", "es", "s"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 4 && !strings.HasSuffix(w, "ss") {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

// RankRequest is one ranked search.
type RankRequest struct {
	Workdirs []string // aliases, in the order ties are broken
	Terms    []string // from QueryTerms
	Limit    int      // 0: MaxRankResults

	plain bool // the plain order of before (better), for the relevance test
}

// RankedFile is one file of a ranked search.
type RankedFile struct {
	Workdir, Path string
	// Terms is how many distinct terms the file holds, in its path or its
	// content; NameTerms those in its path.
	Terms, NameTerms int
	// Line is the line whose terms weigh most (the first holding the
	// most distinct terms in the plain order; LineTerms is that most)
	// and Text its text (trimmed, at most 160 bytes); 0 when only the
	// path matched.
	Line, LineTerms int
	Text            string
	// HitLines of Lines lines hold a term.
	HitLines, Lines int
	// Score is the file's relevance (see rank_score.go).
	Score float64

	order int        // the workdir's place in the request
	st    *fileStats // of a file holding a term, for the score
	spot  int        // the spot of st that is the title, -1 for none
}

// RankResult is the answer of a ranked search, best first.
type RankResult struct {
	Files           []RankedFile
	Truncated       bool
	TruncatedReason string // timeout, walk_limit
	FilesScanned    int
}

// better orders ranked files: more distinct terms, more terms on one
// line, denser matches, more terms in the path, then workdir and path.
func better(a, b *RankedFile) bool {
	if a.Terms != b.Terms {
		return a.Terms > b.Terms
	}
	if a.LineTerms != b.LineTerms {
		return a.LineTerms > b.LineTerms
	}
	// HitLines/Lines, compared without division.
	da, db := int64(a.HitLines)*int64(max(b.Lines, 1)), int64(b.HitLines)*int64(max(a.Lines, 1))
	if da != db {
		return da > db
	}
	if a.NameTerms != b.NameTerms {
		return a.NameTerms > b.NameTerms
	}
	if a.order != b.order {
		return a.order < b.order
	}
	return a.Path < b.Path
}

// rankJob is one file handed from the walker to a worker.
type rankJob struct {
	order      int
	alias      string
	ref        *sfs.FileRef
	path       string
	compressed string
}

// Rank runs a ranked search over whole workdirs: every file that the
// policy, .gitignore rules and SERVERFS_SEARCH_MAX_FILE_BYTES let
// search_text search (and, for its path only, larger ones), bounded by
// Limits.SearchTimeout, SERVERFS_MAX_WALK_ENTRIES per workdir, and ctx.
// On timeout it returns the best files found so far with truncated_reason
// "timeout", or SEARCH_TIMEOUT when it found none. It runs search_text's
// pipeline (walkSpec, workers with a searcher each) into its own sink.
func (e *Engine) Rank(ctx context.Context, req RankRequest) (*RankResult, error) {
	lim := e.fs.Limits()
	if req.Limit <= 0 || req.Limit > MaxRankResults {
		req.Limit = MaxRankResults
	}
	if len(req.Terms) == 0 || len(req.Terms) > MaxTerms {
		return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("a search needs 1 to %d terms", MaxTerms))
	}
	var workdirs []*sfs.Workdir
	for _, a := range req.Workdirs {
		w, err := e.fs.Workdir(a)
		if err != nil {
			return nil, err
		}
		workdirs = append(workdirs, w)
	}
	rq := newRankQuery(req.Terms, lim.SearchMaxFileBytes)

	ctx, cancel := context.WithTimeout(ctx, lim.SearchTimeout)
	defer cancel()
	stopped := func() bool { return ctx.Err() != nil }
	sink := &rankSink{res: &RankResult{}, limit: req.Limit, plain: req.plain}
	var walkErr error
	p := startPipeline(ctx, e.workers, e.workers, nil, func(j rankJob) { j.ref.Release() },
		func(s *searcher, j rankJob) (RankedFile, bool) {
			if e.beforeFile != nil {
				e.beforeFile(ctx, j.path)
			}
			return e.rankFile(ctx, s, j, rq, stopped)
		},
		func(p *pipeline[rankJob, RankedFile]) {
			walkErr = rankWalk(ctx, p, workdirs, lim.MaxWalkEntries, e.readers, sink.res)
		})
	sink.drain(p.results)
	<-p.done
	sink.finish(rq.lower)
	if walkErr != nil {
		return nil, walkErr
	}
	res := sink.res
	if ctx.Err() != nil {
		if len(res.Files) == 0 {
			if context.Cause(ctx) == context.Canceled {
				return nil, errs.New(errs.Canceled, "the search was cancelled")
			}
			return nil, errs.New(errs.SearchTimeout, fmt.Sprintf("nothing found within the %s search timeout; use fewer or rarer terms", lim.SearchTimeout))
		}
		res.Truncated, res.TruncatedReason = true, sfs.TruncatedTimeout
	}
	return res, nil
}

// rankWalk walks the workdirs in order, the whole of each under its
// .gitignore rules, and queues their files; the first walk cut short
// sets res's truncation.
func rankWalk(ctx context.Context, p *pipeline[rankJob, RankedFile], workdirs []*sfs.Workdir, maxEntries, readers int, res *RankResult) error {
	for order, w := range workdirs {
		ws := &walkSpec{w: w, rules: ignore.New(ctx, ignore.Ripgrep()), maxEntries: maxEntries, readAhead: readers}
		wr, err := ws.walk(ctx, func(ent *sfs.WalkEntry, _ sfs.Resume) bool {
			return p.add(rankJob{order: order, alias: w.Alias(), ref: ent.Ref(), path: ent.Path, compressed: decompress.Kind(ent.Name)})
		})
		if err == nil {
			err = ws.err()
		}
		if err != nil {
			return err
		}
		if wr.Truncated && wr.TruncatedReason != "" && res.TruncatedReason == "" {
			res.Truncated, res.TruncatedReason = true, wr.TruncatedReason
		}
		if !p.flush() {
			return nil
		}
	}
	return nil
}

// rankQuery is the matchers of a ranked search's terms.
type rankQuery struct {
	terms    []chunkMatcher // each term, case-insensitive
	lower    []string       // each term lower-cased, for paths
	maxLen   int            // the longest match a buffer boundary may cut
	capBytes int64          // SERVERFS_SEARCH_MAX_FILE_BYTES
	// teddy finds all the terms in one pass when they are ASCII (with
	// the vector scan); special are the non-ASCII letters that fold to
	// their letters, whose buffers it leaves to the terms' matchers.
	teddy   *teddy
	special [][]byte
}

// useTeddy tells whether ranked searches use Teddy (tests turn it off).
var useTeddy = true

func newRankQuery(terms []string, capBytes int64) *rankQuery {
	q := &rankQuery{terms: make([]chunkMatcher, len(terms)), lower: make([]string, len(terms)), capBytes: capBytes}
	for i, t := range terms {
		q.terms[i] = newMatcher(t, false)
		q.lower[i] = strings.ToLower(t)
		q.maxLen = max(q.maxLen, utf8.RuneCountInString(t)*utf8.UTFMax)
	}
	if useTeddy {
		for _, t := range terms {
			q.special = foldSpecials(q.special, t)
		}
		q.teddy = newTeddy(terms, true) // nil for a non-ASCII term
	}
	return q
}

// matcher is the chunkMatcher of q for the worker owning s, its state
// kept in s from file to file.
func (q *rankQuery) matcher(s *searcher) anyTerm {
	if s.terms == nil {
		s.terms = newAnyChunk(len(q.terms))
	}
	a := anyTerm{terms: q.terms, c: s.terms}
	if q.teddy != nil {
		if s.teddyTerms == nil {
			s.teddyTerms = &teddyChunk{}
		}
		s.teddyTerms.t = q.teddy
		a.td, a.special = s.teddyTerms, q.special
	}
	return a
}

// rankFile scores one file; ok is false when it was not searched and its
// path holds no term. Lines is -1 for a file whose content was not read.
func (e *Engine) rankFile(ctx context.Context, s *searcher, j rankJob, q *rankQuery, stopped func() bool) (RankedFile, bool) {
	r := RankedFile{Workdir: j.alias, Path: j.path, order: j.order, Lines: -1}
	var mask uint64
	lp := strings.ToLower(j.path)
	for i, t := range q.lower {
		if strings.Contains(lp, t) {
			mask |= 1 << i
		}
	}
	r.NameTerms = bits.OnesCount64(mask)
	if mask != 0 {
		r.st = &fileStats{path: uint8(mask)}
	}
	nameOnly := func() (RankedFile, bool) {
		r.Terms = r.NameTerms
		return r, r.Terms > 0
	}
	if stopped() {
		j.ref.Release()
		return r, false
	}
	file, size, err := j.ref.Open()
	if err != nil {
		return nameOnly()
	}
	defer file.Close()
	if size > q.capBytes {
		return nameOnly()
	}
	n := size
	if n == 0 {
		n = 1 << 62
	}
	s.sec = *io.NewSectionReader(file, 0, n) // the worker's, reused
	var src io.Reader = &s.sec
	if j.compressed != "" {
		dec, err := decompress.NewReader(ctx, j.compressed, src)
		if err != nil {
			return nameOnly()
		}
		defer dec.Close()
		src = decompress.Cap(dec, q.capBytes)
	}
	doc := isDoc(j.path)
	emit := func(m lineMatch) bool {
		r.HitLines++
		lm := m.terms
		var line []byte
		if m.raw != nil {
			line = m.raw[lineStart(m.raw):]
		} else {
			// A line longer than the buffer: its head.
			s.line = append(s.line[:0], m.text...)
			line = s.line
		}
		if !m.masked {
			lm = q.termsIn(line)
		}
		mask |= lm
		r.LineTerms = max(r.LineTerms, bits.OnesCount64(lm))
		if r.st == nil {
			r.st = &fileStats{}
		}
		r.st.addLine(q, m.line, uint8(lm), line, doc)
		return true
	}
	s.countOnly, s.rawLines, s.linesIfMatched = false, true, true
	outcome, err := s.search(src, q.matcher(s), q.maxLen, stopped, emit)
	if err == errStopped {
		return r, false // the timeout: a partial file is not ranked
	}
	if err != nil || outcome == outcomeBinary {
		return RankedFile{}, false
	}
	r.Lines = s.lines
	r.Terms = bits.OnesCount64(mask)
	if r.st != nil && r.st.content != 0 {
		r.st.generated = isGenerated(fileHead(s, file, size, j.compressed))
	}
	return r, true
}
