package git

import (
	"bytes"
	"container/heap"
	"context"
	"fmt"
	"path"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/internal/unidiff"
)

// Blame limits.
const (
	// MaxBlameLines bounds the lines one blame answers.
	MaxBlameLines = 500
)

// BlameRun is a run of consecutive lines that came from one commit, at
// consecutive lines of that commit's version of the file.
type BlameRun struct {
	// StartLine and Lines are the run in the blamed version (1-based).
	StartLine int `json:"start_line"`
	Lines     int `json:"lines"`
	// Commit introduced the lines; OrigLine is the first one's number in
	// that commit's version (git blame --porcelain's original line).
	Commit   string `json:"commit"`
	OrigLine int    `json:"orig_line"`
	// OrigPath is the file's path in Commit when git followed a rename
	// to it (absent: the blamed path); OrigPathHidden when that path is
	// one the policy hides (never named).
	OrigPath       string `json:"orig_path,omitempty"`
	OrigPathHidden bool   `json:"orig_path_hidden,omitempty"`
	// Unfinished: the walk's commit cap or time cap stopped before these
	// lines reached their origin: Commit changed them or an ancestor did.
	Unfinished bool `json:"unfinished,omitempty"`
}

// BlameCommit is what blame tells of each commit its runs name.
type BlameCommit struct {
	Author  Person `json:"author"`
	Subject string `json:"subject"`
	// Boundary: a shallow clone's boundary commit (git blame's
	// "boundary"): the lines may be older.
	Boundary bool `json:"boundary,omitempty"`
}

// BlameResult is `git blame --porcelain -L start,end rev -- path`,
// grouped into runs.
type BlameResult struct {
	Path       string                 `json:"path"`
	Commit     string                 `json:"commit"`
	StartLine  int                    `json:"start_line"`
	EndLine    int                    `json:"end_line"`
	TotalLines int                    `json:"total_lines"`
	Runs       []BlameRun             `json:"runs"`
	Commits    map[string]BlameCommit `json:"commits"`
	// Truncated: a cap stopped the walk (TruncatedReason commit_cap or
	// timeout); the runs still unfinished are marked.
	Truncated       bool   `json:"truncated,omitempty"`
	TruncatedReason string `json:"truncated_reason,omitempty"`
	// Text is the blamed lines, StartLine to EndLine, as in the file at
	// Commit (for the text answer; the JSON has only the runs).
	Text string `json:"-"`
}

// blameEntry is a run of final lines [final, final+n) whose suspect
// holds them at lines [line, line+n) of its version (0-based).
type blameEntry struct{ final, line, n int }

// origin is a version of the file in one commit (git's blame_origin).
type origin struct {
	c        *object.Commit
	path     string
	blob     plumbing.Hash
	data     []byte
	suspects []blameEntry
	queued   bool
}

type originQueue []*origin

func (q originQueue) Len() int { return len(q) }
func (q originQueue) Less(i, j int) bool {
	return q[i].c.Committer.When.Unix() > q[j].c.Committer.When.Unix()
}
func (q originQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *originQueue) Push(x any)   { *q = append(*q, x.(*origin)) }
func (q *originQueue) Pop() any {
	old := *q
	o := old[len(old)-1]
	*q = old[:len(old)-1]
	return o
}

// blameDone is a finished entry: final lines attributed to an origin.
type blameDone struct {
	blameEntry
	o          *origin
	unfinished bool
}

// Blame is `git blame --porcelain -L start,end rev -- path` as git blames
// by default (no -M, -C or -w): each line is passed from a commit to the
// first parent (in order) whose version keeps it unchanged, a parent with
// the identical file takes all of it, and a path absent from a parent is
// looked for as a rename there (exact, else by git's similarity estimate). start and end are 1-based and inclusive; 0
// means the first line and start+MaxBlameLines-1 (or the last line).
func (r *Repo) Blame(ctx context.Context, rev, file string, start, end int) (*BlameResult, error) {
	return r.blame(ctx, rev, file, start, end, false)
}

func (r *Repo) blame(ctx context.Context, rev, file string, start, end int, clamp bool) (*BlameResult, error) {
	ctx, cancel := context.WithTimeout(ctx, r.fs.Limits().SearchTimeout)
	defer cancel()
	ps, err := r.checkHistoryPaths([]string{file})
	if err != nil {
		return nil, err
	}
	if len(ps) != 1 {
		return nil, errs.New(errs.InvalidArgument, "blame needs the path of one file")
	}
	p := ps[0]
	h, _, c, closeHistory, err := r.historyAt(rev, true)
	if err != nil {
		return nil, err
	}
	defer closeHistory()
	top, err := h.originAt(c, p)
	if err != nil {
		return nil, err
	}
	if top == nil {
		return nil, errs.At(errs.PathNotFound, h.alias, p, fmt.Sprintf("is not a file in commit %s", c.Hash))
	}
	if err := h.load(top); err != nil {
		return nil, err
	}
	total := countLines(top.data)
	if start <= 0 {
		start = 1
	}
	if end <= 0 {
		end = min(total, start+MaxBlameLines-1)
	}
	if clamp {
		end = min(end, total)
	}
	switch {
	case total == 0:
		return &BlameResult{Path: p, Commit: c.Hash.String(), Runs: []BlameRun{}, Commits: map[string]BlameCommit{}}, nil
	case start > total:
		return nil, errs.At(errs.LineOutOfRange, h.alias, p, fmt.Sprintf("has %d lines in commit %s; start_line %d is past them", total, c.Hash, start))
	case end < start || end-start+1 > MaxBlameLines:
		return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("end_line must be at least start_line and at most start_line+%d", MaxBlameLines-1))
	}
	end = min(end, total)
	top.suspects = []blameEntry{{final: start - 1, line: start - 1, n: end - start + 1}}
	var done []blameDone
	q := &originQueue{top}
	top.queued = true
	origins := map[string]*origin{originKey(top): top}
	res := &BlameResult{Path: p, Commit: c.Hash.String(), StartLine: start, EndLine: end, TotalLines: total, Commits: map[string]BlameCommit{}, Text: linesOf(top.data, start, end)}
	walked := 0
	for q.Len() > 0 {
		o := heap.Pop(q).(*origin)
		o.queued = false
		if len(o.suspects) == 0 {
			continue
		}
		walked++
		stop := ""
		switch {
		case walked > MaxWalkCommits:
			stop = "commit_cap"
		case ctx.Err() == context.DeadlineExceeded:
			stop = "timeout"
		case ctx.Err() != nil:
			return nil, canceled(h.alias)
		}
		if stop != "" {
			res.Truncated, res.TruncatedReason = true, stop
			for _, x := range append(*q, o) {
				for _, e := range x.suspects {
					done = append(done, blameDone{e, x, true})
				}
				x.suspects = nil
			}
			break
		}
		passed, err := h.passBlame(ctx, o, origins)
		if err != nil && ctx.Err() == context.DeadlineExceeded {
			// The time cap came in the middle of a diff: o keeps what it
			// had not passed on, unfinished like the rest.
			res.Truncated, res.TruncatedReason = true, "timeout"
			for _, x := range append(*q, o) {
				for _, e := range x.suspects {
					done = append(done, blameDone{e, x, true})
				}
				x.suspects = nil
			}
			break
		}
		if err != nil {
			return nil, err
		}
		for _, e := range o.suspects {
			done = append(done, blameDone{blameEntry: e, o: o})
		}
		o.suspects = nil
		o.data = nil // read again only if lines come back to it (clock skew)
		for _, po := range passed {
			if !po.queued && len(po.suspects) > 0 {
				po.queued = true
				heap.Push(q, po)
			}
		}
	}
	res.Runs = h.runs(done, p, res.Commits)
	return res, nil
}

func originKey(o *origin) string { return o.c.Hash.String() + "\x00" + o.path }

// linesOf is lines start to end (1-based, inclusive) of b.
func linesOf(b []byte, start, end int) string {
	from, line := 0, 1
	for line < start {
		i := bytes.IndexByte(b[from:], '\n')
		if i < 0 {
			return ""
		}
		from, line = from+i+1, line+1
	}
	to := from
	for ; line <= end && to < len(b); line++ {
		i := bytes.IndexByte(b[to:], '\n')
		if i < 0 {
			to = len(b)
			break
		}
		to += i + 1
	}
	return string(b[from:to])
}

func countLines(b []byte) int {
	n := bytes.Count(b, newline)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// originAt is the file p of commit c (nil when c has no file there).
func (h *history) originAt(c *object.Commit, p string) (*origin, error) {
	e, err := h.entryAt(c.TreeHash, p)
	if err != nil || e == nil {
		return nil, err
	}
	return &origin{c: c, path: p, blob: e.Hash}, nil
}

// entryAt is the blob entry at p in tree root, or nil.
func (h *history) entryAt(root plumbing.Hash, p string) (*object.TreeEntry, error) {
	dir, name := path.Split(p)
	t, err := h.tree(root)
	if err != nil {
		return nil, err
	}
	if dir != "" {
		for _, comp := range splitPath(dir[:len(dir)-1]) {
			var next *object.TreeEntry
			for i := range t.Entries {
				if t.Entries[i].Name == comp && t.Entries[i].Mode == filemode.Dir {
					next = &t.Entries[i]
					break
				}
			}
			if next == nil {
				return nil, nil
			}
			if t, err = h.tree(next.Hash); err != nil {
				return nil, err
			}
		}
	}
	for i := range t.Entries {
		if e := &t.Entries[i]; e.Name == name && e.Mode != filemode.Dir && e.Mode != filemode.Submodule {
			return e, nil
		}
	}
	return nil, nil
}

func splitPath(p string) []string {
	var out []string
	for p != "" {
		i := 0
		for i < len(p) && p[i] != '/' {
			i++
		}
		out = append(out, p[:i])
		if i == len(p) {
			break
		}
		p = p[i+1:]
	}
	return out
}

// load reads an origin's blob, bounded like a diff side (its size from
// its header first).
func (h *history) load(o *origin) error {
	if o.data != nil {
		return nil
	}
	data, err := h.r.readBlob(o.blob, maxDiffFileBytes)
	if size, ok := tooLargeSize(err); ok {
		return errs.At(errs.ReadLimitExceeded, h.alias, o.path, fmt.Sprintf("is %d bytes in commit %s; blame reads files up to %d bytes", size, o.c.Hash, maxDiffFileBytes))
	}
	if err != nil {
		return err
	}
	o.data = data
	return nil
}

// passBlame is git's pass_blame without -M/-C: it moves o's suspect
// lines to the parents that have them unchanged and returns the parent
// origins that received some.
func (h *history) passBlame(ctx context.Context, o *origin, origins map[string]*origin) ([]*origin, error) {
	parents := h.parents(o.c)
	sg := make([]*origin, len(parents))
	get := func(pc *object.Commit, p string, blob plumbing.Hash) *origin {
		k := pc.Hash.String() + "\x00" + p
		if x, ok := origins[k]; ok {
			return x
		}
		x := &origin{c: pc, path: p, blob: blob}
		origins[k] = x
		return x
	}
	pcs := make([]*object.Commit, len(parents))
	for i, id := range parents {
		pc, err := h.commit(id)
		if err != nil {
			return nil, err
		}
		pcs[i] = pc
	}
	for pass := 0; pass < 2; pass++ {
		for i, pc := range pcs {
			if sg[i] != nil {
				continue
			}
			var e *object.TreeEntry
			var p string
			var err error
			if pass == 0 {
				p = o.path
				e, err = h.entryAt(pc.TreeHash, p)
			} else {
				p, e, err = h.findRename(pc, o)
			}
			if err != nil {
				return nil, err
			}
			if e == nil {
				continue
			}
			po := get(pc, p, e.Hash)
			if po.blob == o.blob {
				// The parent has the same file: it takes all the blame.
				po.suspects = append(po.suspects, o.suspects...)
				o.suspects = nil
				return []*origin{po}, nil
			}
			same := false
			for j := 0; j < i; j++ {
				if sg[j] != nil && sg[j].blob == po.blob {
					same = true
				}
			}
			if !same {
				sg[i] = po
			}
		}
	}
	var out []*origin
	for _, po := range sg {
		if po == nil || len(o.suspects) == 0 {
			continue
		}
		if err := h.load(po); err != nil {
			return nil, err
		}
		if err := h.load(o); err != nil {
			return nil, err
		}
		blocks, err := blameMatches(ctx, po.data, o.data)
		if err != nil {
			return nil, err
		}
		var keep []blameEntry
		for _, e := range o.suspects {
			// Split e along the kept blocks: the lines inside one go to
			// the parent, the rest stay.
			cur := e
			for _, b := range blocks {
				if cur.n == 0 || b.New >= cur.line+cur.n {
					break
				}
				if b.New+b.Len <= cur.line {
					continue
				}
				if b.New > cur.line {
					k := b.New - cur.line
					keep = append(keep, blameEntry{cur.final, cur.line, k})
					cur = blameEntry{cur.final + k, cur.line + k, cur.n - k}
				}
				k := min(cur.n, b.New+b.Len-cur.line)
				po.suspects = append(po.suspects, blameEntry{cur.final, b.Old + (cur.line - b.New), k})
				cur = blameEntry{cur.final + k, cur.line + k, cur.n - k}
			}
			if cur.n > 0 {
				keep = append(keep, cur)
			}
		}
		o.suspects = keep
		out = append(out, po)
	}
	return out, nil
}

// blameMatches is the lines git blame keeps from old to new: git's line
// diff (unidiff.Matches) after xdi_diff's trim_common_tail, which leaves
// the common tail, in whole 1 KiB blocks and then back to a line start,
// out of the diff for a diff without context (as blame's is): the trim
// moves where git's heuristics put a repeated line near the end.
func blameMatches(ctx context.Context, old, new []byte) ([]unidiff.Block, error) {
	const blk = 1024
	trimmed, smaller := 0, min(len(old), len(new))
	for blk+trimmed <= smaller && bytes.Equal(old[len(old)-trimmed-blk:len(old)-trimmed], new[len(new)-trimmed-blk:len(new)-trimmed]) {
		trimmed += blk
	}
	recovered := 0
	for tail := old[len(old)-trimmed:]; recovered < trimmed; {
		recovered++
		if tail[recovered-1] == '\n' {
			break
		}
	}
	cut := trimmed - recovered
	a, b := old[:len(old)-cut], new[:len(new)-cut]
	blocks, err := unidiff.Matches(ctx, a, b)
	if err != nil || cut == 0 {
		return blocks, err
	}
	// The trimmed tail is whole lines, the same on both sides.
	la, lb, n := countLines(a), countLines(b), countLines(old[len(old)-cut:])
	if k := len(blocks); k > 0 && blocks[k-1].Old+blocks[k-1].Len == la && blocks[k-1].New+blocks[k-1].Len == lb {
		blocks[k-1].Len += n
		return blocks, nil
	}
	return append(blocks, unidiff.Block{Old: la, New: lb, Len: n}), nil
}

// findRename is git's find_rename (diffcore-rename with the blamed path
// as the only destination): when the diff from pc to o's commit adds o's
// path, the file it deletes with the same content (one of the same base
// name first), else the deleted regular file most similar to it by git's
// estimate (diffcore-delta's chunk hashes) with a score of at least 50%.
func (h *history) findRename(pc *object.Commit, o *origin) (string, *object.TreeEntry, error) {
	var added *change
	var deleted []change
	_, err := h.diffTrees(pc.TreeHash, o.c.TreeHash, "", nil, func(ch change) bool {
		switch {
		case ch.Path == o.path && ch.From.Hash.IsZero():
			c := ch
			added = &c
		case ch.To.Hash.IsZero() && ch.From.Mode != filemode.Submodule:
			deleted = append(deleted, ch)
		}
		return true
	})
	if err != nil || added == nil || len(deleted) == 0 {
		return "", nil, err
	}
	base := path.Base(o.path)
	pick := func(c change) (string, *object.TreeEntry, error) {
		e := c.From
		return c.Path, &e, nil
	}
	var exact []change
	for _, c := range deleted {
		if c.From.Hash == o.blob {
			exact = append(exact, c)
		}
	}
	if len(exact) > 0 {
		sort.SliceStable(exact, func(i, j int) bool {
			return path.Base(exact[i].Path) == base && path.Base(exact[j].Path) != base
		})
		return pick(exact[0])
	}
	if !isRegFile(added.To.Mode) {
		return "", nil, nil
	}
	if err := h.load(o); err != nil {
		return "", nil, err
	}
	dst := spanHashes(o.data)
	best, bestScore, bestName := -1, 0, false
	for i, c := range deleted {
		if !isRegFile(c.From.Mode) {
			continue
		}
		size, err := h.r.blobSize(c.From.Hash)
		if err != nil {
			return "", nil, err
		}
		if size > maxDiffFileBytes {
			continue
		}
		score := similarity(size, int64(len(o.data)), func() (map[uint32]int, error) {
			data, err := h.r.readBlob(c.From.Hash, maxDiffFileBytes)
			if err != nil {
				return nil, err
			}
			return spanHashes(data), nil
		}, dst)
		if score.err != nil {
			return "", nil, score.err
		}
		sameName := path.Base(c.Path) == base
		if score.v >= minRenameScore && (score.v > bestScore || score.v == bestScore && sameName && !bestName) {
			best, bestScore, bestName = i, score.v, sameName
		}
	}
	if best < 0 {
		return "", nil, nil
	}
	return pick(deleted[best])
}

// isRegFile is S_ISREG, which diffcore-rename's estimate requires of
// both sides: 100644 and 100755 alike (go-git's IsRegular is 100644 only).
func isRegFile(m filemode.FileMode) bool {
	return m == filemode.Regular || m == filemode.Executable || m == filemode.Deprecated
}

// git's rename scores (diffcore.h).
const (
	maxRenameScore = 60000
	minRenameScore = 30000 // 50%
)

type scored struct {
	v   int
	err error
}

// similarity is diffcore-rename's estimate_similarity of a source of
// srcSize bytes (its chunk hashes from load) to the destination dst.
func similarity(srcSize, dstSize int64, load func() (map[uint32]int, error), dst map[uint32]int) scored {
	maxSize, baseSize := max(srcSize, dstSize), min(srcSize, dstSize)
	if maxSize*(maxRenameScore-minRenameScore) < (maxSize-baseSize)*maxRenameScore || dstSize == 0 {
		return scored{}
	}
	src, err := load()
	if err != nil {
		return scored{err: err}
	}
	copied := 0
	for k, n := range src {
		copied += min(n, dst[k])
	}
	return scored{v: int(int64(copied) * maxRenameScore / maxSize)}
}

// spanHashes is diffcore-delta's hash_chars: the bytes of each chunk (a
// line, or 64 bytes of a longer one) counted by the chunk's hash; a CR
// before LF is skipped in text; a last chunk without LF is not counted.
func spanHashes(b []byte) map[uint32]int {
	const hashBase = 107927
	text := !isBinary(b)
	out := map[uint32]int{}
	var acc1, acc2 uint32
	n := 0
	for i := 0; i < len(b); i++ {
		c := uint32(b[i])
		if text && c == '\r' && i+1 < len(b) && b[i+1] == '\n' {
			continue
		}
		old1 := acc1
		acc1 = (acc1 << 7) ^ (acc2 >> 25)
		acc2 = (acc2 << 7) ^ (old1 >> 25)
		acc1 += c
		if n++; n < 64 && c != '\n' {
			continue
		}
		out[(acc1+acc2*0x61)%hashBase] += n
		n, acc1, acc2 = 0, 0, 0
	}
	return out
}

// BlameLines is Blame of n lines from start, the end clamped to the
// file's last line.
func (r *Repo) BlameLines(ctx context.Context, rev, file string, start, n int) (*BlameResult, error) {
	if n <= 0 || n > MaxBlameLines {
		return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("max_lines must be between 1 and %d", MaxBlameLines))
	}
	return r.blame(ctx, rev, file, start, start+n-1, true)
}

// runs groups the finished entries into runs in final-line order.
func (h *history) runs(done []blameDone, p string, commits map[string]BlameCommit) []BlameRun {
	sort.Slice(done, func(i, j int) bool { return done[i].final < done[j].final })
	out := []BlameRun{}
	for _, d := range done {
		id := d.o.c.Hash.String()
		run := BlameRun{StartLine: d.final + 1, Lines: d.n, Commit: id, OrigLine: d.line + 1, Unfinished: d.unfinished}
		if d.o.path != p {
			if h.r.visible(d.o.path) {
				run.OrigPath = d.o.path
			} else {
				run.OrigPathHidden = true
			}
		}
		if n := len(out); n > 0 {
			last := &out[n-1]
			if last.Commit == run.Commit && last.OrigPath == run.OrigPath && last.OrigPathHidden == run.OrigPathHidden && last.Unfinished == run.Unfinished &&
				last.StartLine+last.Lines == run.StartLine && last.OrigLine+last.Lines == run.OrigLine {
				last.Lines += run.Lines
				continue
			}
		}
		out = append(out, run)
		if _, ok := commits[id]; !ok {
			info := h.info(d.o.c)
			commits[id] = BlameCommit{Author: info.Author, Subject: info.Subject, Boundary: info.Shallow}
		}
	}
	return out
}
