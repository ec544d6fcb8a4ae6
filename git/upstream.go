package git

import (
	"container/heap"
	"context"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxAheadBehindCommits bounds the history walked for ahead/behind.
const maxAheadBehindCommits = 1_000_000

// upstream fills in the branch's upstream and, when its ref exists, how
// far HEAD is ahead of and behind it (as `git status --branch` does).
func (r *Repo) upstream(ctx context.Context, h headInfo, st *Status) error {
	remote := r.get("branch", h.branch, "remote")
	merge := r.get("branch", h.branch, "merge")
	if remote == "" || merge == "" {
		return nil
	}
	short, ok := strings.CutPrefix(merge, "refs/heads/")
	if !ok {
		return nil
	}
	ref := plumbing.ReferenceName("refs/remotes/" + remote + "/" + short)
	st.Upstream = remote + "/" + short
	if remote == "." {
		ref, st.Upstream = plumbing.ReferenceName(merge), short
	}
	up, err := r.storage.Reference(ref)
	if err != nil {
		return nil // gone: git shows the upstream without ahead/behind
	}
	if up.Type() == plumbing.SymbolicReference {
		if up, err = r.storage.Reference(up.Target()); err != nil {
			return nil
		}
	}
	ahead, behind, err := r.aheadBehind(ctx, h.commit, up.Hash())
	if err != nil {
		return err
	}
	st.Ahead, st.Behind = &ahead, &behind
	return nil
}

const (
	fromLocal = 1 << iota
	fromUpstream
)

// aheadBehind counts the commits reachable from local but not upstream,
// and the reverse. It walks both histories at once, newest commit first,
// painting each commit with the side(s) it is reachable from, and stops
// when every commit still queued is reachable from both: everything
// older is common. (go-git's MergeBase takes about a second on 20k
// commits; this stops where the histories meet.)
func (r *Repo) aheadBehind(ctx context.Context, local, upstream plumbing.Hash) (int, int, error) {
	if local == upstream {
		return 0, 0, nil
	}
	flags := map[plumbing.Hash]int{}
	q := &commitQueue{}
	push := func(h plumbing.Hash, f int) error {
		old := flags[h]
		if old&f == f {
			return nil
		}
		flags[h] = old | f
		c, err := r.getCommit(h)
		if err != nil {
			return err
		}
		heap.Push(q, c)
		return nil
	}
	if err := push(local, fromLocal); err != nil {
		return 0, 0, err
	}
	if err := push(upstream, fromUpstream); err != nil {
		return 0, 0, err
	}
	for n := 0; q.Len() > 0; n++ {
		if n%256 == 0 && ctx.Err() != nil {
			return 0, 0, canceled(r.w.Alias())
		}
		if n > maxAheadBehindCommits {
			return 0, 0, canceled(r.w.Alias())
		}
		if q.allCommon(flags) {
			break
		}
		c := heap.Pop(q).(*object.Commit)
		f := flags[c.Hash]
		for _, p := range c.ParentHashes {
			if err := push(p, f); err != nil {
				return 0, 0, err
			}
		}
	}
	ahead, behind := 0, 0
	for _, f := range flags {
		switch f {
		case fromLocal:
			ahead++
		case fromUpstream:
			behind++
		}
	}
	return ahead, behind, nil
}

// commitQueue pops the newest commit (committer time) first.
type commitQueue []*object.Commit

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	return q[i].Committer.When.After(q[j].Committer.When)
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(*object.Commit)) }
func (q *commitQueue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}

func (q commitQueue) allCommon(flags map[plumbing.Hash]int) bool {
	for _, c := range q {
		if flags[c.Hash] != fromLocal|fromUpstream {
			return false
		}
	}
	return true
}
