package search

import (
	"context"
	"strings"
	"sync"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/fs/ignore"
	"github.com/serverfs/serverfs/internal/archive"
)

// Both searches, search_text's (Engine.Search) and ChatGPT's (Engine.Rank),
// run the same pipeline, the parts kept apart as ripgrep's crates keep
// them: a walker (walkSpec: fs.Workdir.Walk with the ignore stack, the
// cursor and the glob) hands batches of files to workers, each a searcher
// feeding one file through a matcher, and a sink takes the workers'
// results: Search's collector (in walk order, see collector.drain) or
// Rank's ranking (rankSink).

// walkSpec is what the walker of one workdir needs to know.
type walkSpec struct {
	w    *sfs.Workdir
	root string // the walk's start, workdir-relative
	// rules are the .gitignore rules in force; nil when ignored files are
	// searched too.
	rules      *ignore.Stack
	cursor     *sfs.Cursor // where a continued search resumes; nil for all
	glob       *sfs.Glob   // files to search, relative to root; nil for all
	maxEntries int
	readAhead  int  // fs.WalkOptions.ReadAhead
	ignored    int  // files the rules skipped
	archives   bool // Request.Archives
	// only, when set, is the one archive the search reads (its path or
	// a path inside it was the request's).
	only string
}

// resumeArchiveOnly is visit's verdict on a file the glob does not name
// but that is named like an archive, with Request.Archives: searched only
// if it is one (its members face the glob).
const resumeArchiveOnly sfs.Resume = -1

// walk walks the tree and calls file for each file to search (with where
// the cursor resumes in it); file returns false to stop the walk.
// Repository internals, symlinks and special files are never searched.
func (ws *walkSpec) walk(ctx context.Context, file func(ent *sfs.WalkEntry, resume sfs.Resume) bool) (sfs.WalkResult, error) {
	opts := sfs.WalkOptions{
		MaxEntries:  ws.maxEntries,
		StopAtLimit: true,
		ReadAhead:   ws.readAhead,
		// What Visit skips is not read ahead.
		Ahead: func(path, name string, depth int) bool {
			return name != ".git" && ws.cursor.Resume(path, true) != sfs.ResumeSkip &&
				(ws.rules == nil || !ws.rules.Ignored(path, true, depth))
		},
		Visit: func(ent *sfs.WalkEntry) sfs.WalkAction {
			if ctx.Err() != nil {
				return sfs.WalkStop
			}
			return ws.visit(ent, file)
		},
	}
	if ws.rules != nil {
		opts.Enter = ws.rules.Enter
	}
	return ws.w.Walk(ctx, ws.root, opts)
}

// visit decides one entry of the walk.
func (ws *walkSpec) visit(ent *sfs.WalkEntry, file func(ent *sfs.WalkEntry, resume sfs.Resume) bool) sfs.WalkAction {
	resume := ws.cursor.Resume(ent.Path, ent.Type == sfs.TypeDirectory)
	if ws.only != "" {
		switch {
		case ent.Type == sfs.TypeDirectory:
			return sfs.WalkSkipDir
		case ent.Path != ws.only:
			return sfs.WalkContinue
		case ws.cursor != nil && strings.HasPrefix(ws.cursor.Path, ent.Path+"/"):
			resume = sfs.ResumePartial
		}
		if resume != sfs.ResumeSkip && !file(ent, resume) {
			return sfs.WalkStop
		}
		return sfs.WalkContinue
	}
	switch ent.Type {
	case sfs.TypeDirectory:
		if ent.Name == ".git" || resume == sfs.ResumeSkip {
			return sfs.WalkSkipDir // repository internals are never searched
		}
		if ws.rules != nil && ws.rules.Ignored(ent.Path, true, ent.Depth) {
			return sfs.WalkSkipDir
		}
		return sfs.WalkContinue
	case sfs.TypeFile:
	default:
		return sfs.WalkContinue // symlinks and special files are never searched
	}
	inArchive := ws.archives && archive.Named(ent.Name)
	if inArchive && ws.cursor != nil && strings.HasPrefix(ws.cursor.Path, ent.Path+"/") {
		resume = sfs.ResumePartial // the cursor is inside this archive
	}
	if resume == sfs.ResumeSkip {
		return sfs.WalkContinue
	}
	globbed := false
	if ws.glob != nil {
		rel := ent.Path
		if ws.root != "" {
			rel = strings.TrimPrefix(rel, ws.root+"/")
		}
		if globbed = ws.glob.Match(rel, ent.Name); !globbed {
			if !inArchive {
				return sfs.WalkContinue
			}
			if resume == sfs.ResumeTake {
				resume = resumeArchiveOnly
			}
		}
	}
	// As in ripgrep, a file the glob names explicitly is searched even
	// when ignore rules would skip it.
	if ws.rules != nil && !globbed && ws.rules.Ignored(ent.Path, false, ent.Depth) {
		ws.ignored++
		return sfs.WalkContinue
	}
	if !file(ent, resume) {
		return sfs.WalkStop
	}
	return sfs.WalkContinue
}

// err is the error of a walk whose ignore rules went over their bound.
func (ws *walkSpec) err() error {
	if ws.rules == nil {
		return nil
	}
	return ws.rules.Err(ws.w.Alias())
}

// pipeline connects a walker to the workers (jobs J, in batches) and the
// workers to a sink (results R, a batch for each batch of jobs).
type pipeline[J, R any] struct {
	ctx     context.Context
	jobs    chan []J
	results chan []R
	// tokens, when not nil, bounds the batches in flight or waiting for
	// the sink: the walker takes one per batch, the sink gives it back.
	tokens  chan struct{}
	release func(J) // gives back a job not handed to a worker
	batch   []J
	seq     int           // the batches handed to workers so far
	done    chan struct{} // closed when every goroutine has ended
	// freeJobs and freeResults are batches done with, reused: a tree
	// search hands over a batch of each per 8 files, 1,400 for
	// GOROOT/src, a sixth of the bytes it allocated.
	freeJobs    chan []J
	freeResults chan []R
}

// newBatch is an empty batch from free, or a new one of capacity n.
func newBatch[T any](free chan []T, n int) []T {
	select {
	case b := <-free:
		return b
	default:
		return make([]T, 0, n)
	}
}

// freeBatch clears b (it holds no file or result any more) and keeps it
// for reuse when free has room.
func freeBatch[T any](free chan []T, b []T) {
	clear(b)
	select {
	case free <- b[:0]:
	default:
	}
}

// recycle gives back a batch of results the sink is done with.
func (p *pipeline[J, R]) recycle(rs []R) { freeBatch(p.freeResults, rs) }

// startPipeline starts workers that run work for each job (a result is
// kept when ok) with a searcher of their own, and walk in a goroutine of
// its own; the results channel is closed once the walk and every worker
// have ended.
func startPipeline[J, R any](ctx context.Context, workers, resultsCap int, tokens chan struct{}, release func(J),
	work func(s *searcher, j J) (R, bool), walk func(p *pipeline[J, R])) *pipeline[J, R] {
	p := &pipeline[J, R]{ctx: ctx, jobs: make(chan []J, workers), results: make(chan []R, resultsCap), tokens: tokens,
		release: release, done: make(chan struct{}),
		freeJobs: make(chan []J, 2*workers), freeResults: make(chan []R, resultsCap+workers)}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := getSearcher()
			defer putSearcher(s)
			for batch := range p.jobs {
				out := newBatch(p.freeResults, batchFiles)
				for _, j := range batch {
					if r, ok := work(s, j); ok {
						out = append(out, r)
					}
				}
				freeBatch(p.freeJobs, batch)
				p.results <- out
			}
		}()
	}
	go func() {
		defer close(p.done)
		defer func() {
			close(p.jobs)
			wg.Wait()
			close(p.results)
		}()
		walk(p)
	}()
	return p
}

// add queues a job for the workers; false when the search ended.
func (p *pipeline[J, R]) add(j J) bool {
	if p.batch == nil {
		p.batch = newBatch(p.freeJobs, batchFiles)
	}
	p.batch = append(p.batch, j)
	return len(p.batch) < batchFiles || p.flush()
}

// flush hands the batch to a worker; false when the search ended.
func (p *pipeline[J, R]) flush() bool {
	if len(p.batch) == 0 {
		return true
	}
	if p.tokens != nil {
		select {
		case p.tokens <- struct{}{}:
		case <-p.ctx.Done():
			p.drop()
			return false
		}
	}
	select {
	case p.jobs <- p.batch:
		p.seq++
		p.batch = nil
		return true
	case <-p.ctx.Done():
		p.drop()
		return false
	}
}

func (p *pipeline[J, R]) drop() {
	for _, j := range p.batch {
		p.release(j)
	}
	p.batch = nil
}
