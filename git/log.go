package git

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/serverfs/serverfs/git/internal/commitgraph"
	"github.com/serverfs/serverfs/internal/errs"
)

// LogCommit is one commit of a log, with the files it changed.
type LogCommit struct {
	CommitInfo
	// Files are the visible paths changed against the parent (a root
	// commit: against nothing; a merge lists none, as git log does), at
	// most maxLogFiles, restricted to the log's paths when it has some.
	Files          []ChangedFile `json:"files,omitempty"`
	FilesTruncated bool          `json:"files_truncated,omitempty"`
	// MoreFiles counts the visible changed paths past maxLogFiles.
	MoreFiles int `json:"more_files,omitempty"`
	// HiddenFiles counts changed paths the policy hides; never named.
	HiddenFiles int `json:"hidden_files,omitempty"`
}

// MaxLogFiles is how many changed files log lists per commit.
const MaxLogFiles = maxLogFiles

// LogResult is one page of `git log`.
type LogResult struct {
	Commits []LogCommit `json:"commits"`
	// Truncated: the walk stopped before the end of history, for
	// TruncatedReason: "limit" (NextCursor continues), "commit_cap" or
	// "timeout" (narrow with paths, since or until).
	Truncated       bool   `json:"truncated,omitempty"`
	TruncatedReason string `json:"truncated_reason,omitempty"`
	NextCursor      string `json:"next_cursor,omitempty"`
}

// LogOptions are the arguments of Log.
type LogOptions struct {
	Rev    string   // "" or HEAD, a local branch, a tag, a commit id or a unique prefix of >= 7 hex digits
	Paths  []string // literal paths (files or directories): commits that changed them
	Since  string   // RFC 3339: stop at commits committed before
	Until  string   // RFC 3339: skip commits committed after
	Limit  int      // 1..MaxLogCommits (default DefaultLogCommits)
	Cursor string   // NextCursor of the previous page
	// Files lists each commit's changed files (LogCommit.Files); without
	// it no commit's trees are compared for them.
	Files bool
	// MaxWalk overrides MaxWalkCommits (tests); 0 is the default.
	MaxWalk int
}

// useGraph has a log walk with the commit-graph, when there is one git
// would use as well: not in a shallow repository, nor with grafts or
// replaced objects (the graph records the commits as written). With
// changed-path Bloom filters, the paths' keys too.
func (h *history) useGraph(ps pathspec) {
	if h.shallow != nil || h.grafts != nil || h.r.objs.HasReplacements() {
		return
	}
	if h.graph = commitgraph.Open(h.r.ctl); h.graph == nil || len(ps) == 0 {
		return
	}
	for _, p := range ps {
		keys, ok := h.graph.Keys(p)
		if !ok {
			h.bloom = nil
			return
		}
		h.bloom = append(h.bloom, keys)
	}
}

// walkCommit is the commit id as a walk needs it: from the commit-graph
// when it holds the commit (its id, tree, parents and committer time
// only: h.commit reads the rest), else read whole by h.commit.
func (h *history) walkCommit(id plumbing.Hash) (*object.Commit, error) {
	// simplify reads a parent, then the walk queues it.
	if h.lastWalked != nil && h.lastWalked.Hash == id {
		return h.lastWalked, nil
	}
	if h.graph != nil {
		if pos, ok := h.graph.Find(id); ok {
			tree, ps, when, ok := h.graph.Commit(pos, h.graphParents)
			h.graphParents = ps
			if ok {
				c := &object.Commit{Hash: id, TreeHash: tree, ParentHashes: make([]plumbing.Hash, len(ps))}
				for i, p := range ps {
					c.ParentHashes[i] = h.graph.ID(p)
				}
				c.Committer.When = time.Unix(when, 0)
				graphCommits.Add(1)
				h.lastWalked = c
				return c, nil
			}
		}
	}
	return h.commit(id)
}

// bloomSame reports whether the Bloom filter of c says it certainly did
// not change any log path against its first parent (for a root: has
// none of them).
func (h *history) bloomSame(c *object.Commit) bool {
	if h.bloom == nil {
		return false
	}
	pos, ok := h.graph.Find(c.Hash)
	if !ok {
		return false
	}
	for _, keys := range h.bloom {
		if h.graph.MaybeChanged(pos, keys) {
			return false
		}
	}
	bloomSkips.Add(1)
	return true
}

// graphCommits and bloomSkips count the commits walked from the
// commit-graph and the tree diffs Bloom filters spared (tests watch them).
var graphCommits, bloomSkips atomic.Int64

// commitQueue is git's date-ordered commit list (commit_list_insert_by_date:
// a commit goes after every commit with the same or a later date).
type dateQueue []*object.Commit

func (q *dateQueue) insert(c *object.Commit) {
	d := c.Committer.When.Unix()
	i := sort.Search(len(*q), func(i int) bool { return (*q)[i].Committer.When.Unix() < d })
	*q = append(*q, nil)
	copy((*q)[i+1:], (*q)[i:])
	(*q)[i] = c
}

func (q *dateQueue) pop() *object.Commit {
	c := (*q)[0]
	*q = (*q)[1:]
	return c
}

func parseTime(name, s string) (int64, bool, error) {
	if s == "" {
		return 0, false, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0, false, errs.New(errs.InvalidArgument, fmt.Sprintf("%s must be an RFC 3339 time such as 2024-05-01T00:00:00Z", name))
	}
	return t.Unix(), true, nil
}

func logCursor(start plumbing.Hash, skip int, key uint32) string {
	return fmt.Sprintf("%s.%d.%08x", start, skip, key)
}

func (o *LogOptions) key(paths pathspec) uint32 {
	f := fnv.New32a()
	fmt.Fprintf(f, "%q %q %q %q", o.Rev, []string(paths), o.Since, o.Until)
	return f.Sum32()
}

// Log is `git log [rev] [--since] [--until] -- paths` as git walks it by
// default: newest committer date first, and with paths git's default
// history simplification (a commit is shown when it differs from its
// parents on the paths; a merge that equals one of its parents there
// follows only that parent; a root commit is shown when it has the paths).
// Each commit carries the files it changed (git log --name-status
// --no-renames). At most Limit commits; NextCursor continues.
func (r *Repo) Log(ctx context.Context, o LogOptions) (*LogResult, error) {
	ctx, cancel := context.WithTimeout(ctx, r.fs.Limits().SearchTimeout)
	defer cancel()
	if o.Limit <= 0 {
		o.Limit = DefaultLogCommits
	}
	if o.Limit > MaxLogCommits {
		return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("limit must be between 1 and %d", MaxLogCommits))
	}
	maxWalk := MaxWalkCommits
	if o.MaxWalk > 0 {
		maxWalk = o.MaxWalk
	}
	ps, err := r.checkHistoryPaths(o.Paths)
	if err != nil {
		return nil, err
	}
	since, hasSince, err := parseTime("since", o.Since)
	if err != nil {
		return nil, err
	}
	until, hasUntil, err := parseTime("until", o.Until)
	if err != nil {
		return nil, err
	}
	h, done, err := r.newHistory()
	if err != nil {
		return nil, err
	}
	defer done()
	key := o.key(ps)
	var start plumbing.Hash
	skip := 0
	if o.Cursor != "" {
		f := strings.Split(o.Cursor, ".")
		n, nerr := strconv.Atoi(safeIndex(f, 1))
		if len(f) != 3 || !plumbing.IsHash(f[0]) || nerr != nil || n < 0 || f[2] != fmt.Sprintf("%08x", key) {
			return nil, errs.New(errs.InvalidArgument, "cursor is not a next_cursor of a log with these rev, paths, since and until")
		}
		start, skip = plumbing.NewHash(f[0]), n
	} else if start, err = h.resolveRev(o.Rev); err != nil {
		return nil, err
	}
	h.useGraph(ps)
	first, err := h.walkCommit(start)
	if err != nil {
		return nil, err
	}
	res := &LogResult{Commits: []LogCommit{}}
	q := dateQueue{first}
	hint := 0
	if h.graph != nil {
		hint = int(min(h.graph.Len(), uint32(maxWalk), 1<<16))
	}
	seen := make(map[plumbing.Hash]bool, hint)
	seen[start] = true
	shown, walked := 0, 0
	for len(q) > 0 {
		if walked++; walked > maxWalk {
			res.Truncated, res.TruncatedReason = true, "commit_cap"
			return res, nil
		}
		if walked%64 == 0 && ctx.Err() != nil {
			if ctx.Err() == context.DeadlineExceeded {
				res.Truncated, res.TruncatedReason = true, "timeout"
				return res, nil
			}
			return nil, canceled(h.alias)
		}
		c := q.pop()
		if hasSince && c.Committer.When.Unix() < since {
			continue // git stops walking this line here
		}
		parents := h.parents(c)
		same := false
		if len(ps) > 0 {
			if same, parents, err = h.simplify(c, parents, ps); err != nil {
				return nil, err
			}
		}
		for _, p := range parents {
			if seen[p] {
				continue
			}
			seen[p] = true
			pc, err := h.walkCommit(p)
			if err != nil {
				return nil, err
			}
			q.insert(pc)
		}
		if same || hasUntil && c.Committer.When.Unix() > until {
			continue
		}
		if shown++; shown <= skip {
			continue
		}
		if len(res.Commits) == o.Limit {
			res.Truncated, res.TruncatedReason = true, "limit"
			res.NextCursor = logCursor(start, skip+o.Limit, key)
			return res, nil
		}
		if h.graph != nil {
			if c, err = h.commit(c.Hash); err != nil { // all of it
				return nil, err
			}
		}
		lc, err := h.logCommit(c, ps, o.Files)
		if err != nil {
			return nil, err
		}
		res.Commits = append(res.Commits, lc)
	}
	return res, nil
}

func safeIndex(f []string, i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}

// simplify is git's try_to_simplify_commit with every commit relevant:
// whether c is TREESAME on ps, and the parents the walk follows.
func (h *history) simplify(c *object.Commit, parents []plumbing.Hash, ps pathspec) (bool, []plumbing.Hash, error) {
	// The filter is of the change against the first parent: TREESAME
	// with it, which git's loop would find first.
	if h.bloomSame(c) {
		return true, parents[:min(len(parents), 1)], nil
	}
	if len(parents) == 0 {
		same, err := h.treesame(plumbing.ZeroHash, c.TreeHash, ps)
		return same, parents, err
	}
	for _, p := range parents {
		pc, err := h.walkCommit(p)
		if err != nil {
			return false, nil, err
		}
		same, err := h.treesame(pc.TreeHash, c.TreeHash, ps)
		if err != nil {
			return false, nil, err
		}
		if same {
			return true, []plumbing.Hash{p}, nil
		}
	}
	return false, parents, nil
}

// logCommit is a commit with its changed files against its only parent
// (or nothing for a root); merges list none.
func (h *history) logCommit(c *object.Commit, ps pathspec, files bool) (LogCommit, error) {
	lc := LogCommit{CommitInfo: h.info(c)}
	parents := h.parents(c)
	if len(parents) > 1 || !files {
		return lc, nil
	}
	var from plumbing.Hash
	if len(parents) == 1 {
		pc, err := h.walkCommit(parents[0])
		if err != nil {
			return lc, err
		}
		from = pc.TreeHash
	}
	_, err := h.diffTrees(from, c.TreeHash, "", ps, func(ch change) bool {
		switch {
		case !h.r.visible(ch.Path):
			lc.HiddenFiles++
		case len(lc.Files) == maxLogFiles:
			lc.FilesTruncated = true
			lc.MoreFiles++
		default:
			lc.Files = append(lc.Files, ChangedFile{Status: ch.Status(), Path: ch.Path})
		}
		return true
	})
	return lc, err
}
