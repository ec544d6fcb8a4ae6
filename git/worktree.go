package git

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/fs/ignore"
	"github.com/serverfs/serverfs/internal/errs"
)

// The work-tree scan of a status: every visible entry is compared with the
// index (tracked files), the ignore rules (untracked ones), or pruned
// (ignored directories without tracked files, nested repositories). It
// runs in parallel like git's preloaded index: one walk per top-level
// directory at a time on every core.

type scanInput struct {
	tracked   map[string]trackedEntry
	seen      []bool // by tracked slot; set by the walk that meets the path
	stages    map[string]int
	unchecked map[string]bool
	paths     []string // every index path, sorted
	idxStat   sfs.StatData
}

type scanResult struct {
	untracked []string     // an untracked repository ends in "/"
	changes   []statResult // unstaged codes of tracked files
}

// walkWorkers walk top-level directories in parallel; each compares the
// tracked files it meets (a stat, and a hash when the stat differs).
var walkWorkers = max(2, 2*runtime.GOMAXPROCS(0))

type statResult struct {
	path, code string
}

// worktreeEntry is a work-tree file as worktreeChange needs it (a walk
// entry, or a FileRef kept beyond the visit).
type worktreeEntry interface {
	Lstat() (sfs.StatData, error)
	Readlink() (string, error)
	OpenFile() (*sfs.File, int64, error)
}

// subtree is a top-level directory to walk on its own.
type subtree struct {
	path    string
	ignored bool // excluded, but holding tracked files
}

// treeWalk is one walk's state; the walks share only read-only input,
// the job channel and the entry budget.
type treeWalk struct {
	ctx     context.Context // the scan's deadline, for hashing inside a file
	r       *Repo
	in      *scanInput
	ign     *ignore.Stack
	budget  *atomic.Int64
	root    bool      // the walk of the root directory: queue subdirectories
	queue   []subtree // root walk: directories to walk next
	ignored map[string]bool
	untrack []string
	changes []statResult
	err     error
	over    bool // the budget ran out
}

func (r *Repo) scanWorktree(ctx context.Context, in scanInput) (*scanResult, error) {
	alias := r.w.Alias()
	ctx, cancel := context.WithTimeout(ctx, r.fs.Limits().SearchTimeout)
	defer cancel()
	budget := &atomic.Int64{}
	budget.Store(int64(r.fs.Limits().MaxWalkEntries))

	fromIndex := r.skipWorktreeBlobs(func(p string) *index.Entry { return in.tracked[p].Entry })
	rootIgn := r.newIgnoreStack(ctx, fromIndex)
	root := &treeWalk{ctx: ctx, r: r, in: &in, ign: rootIgn, budget: budget, root: true, ignored: map[string]bool{}}
	rootRes, rootErr := r.w.Walk(ctx, "", sfs.WalkOptions{MaxEntries: r.fs.Limits().MaxWalkEntries, Enter: rootIgn.Enter, Visit: root.visit})

	walks := []*treeWalk{root}
	walkRes := []sfs.WalkResult{rootRes}
	walkErrs := []error{rootErr}
	if rootErr == nil {
		sub := make([]*treeWalk, len(root.queue))
		subRes := make([]sfs.WalkResult, len(root.queue))
		subErrs := make([]error, len(root.queue))
		next := atomic.Int64{}
		var wg sync.WaitGroup
		for range min(walkWorkers, len(root.queue)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1) - 1)
					if i >= len(root.queue) {
						return
					}
					st := root.queue[i]
					ign := rootIgn.Below(1)
					tw := &treeWalk{ctx: ctx, r: r, in: &in, ign: ign, budget: budget, ignored: map[string]bool{st.path: st.ignored}}
					sub[i] = tw
					subRes[i], subErrs[i] = r.w.Walk(ctx, st.path, sfs.WalkOptions{MaxEntries: r.fs.Limits().MaxWalkEntries, Enter: ign.Enter, Visit: tw.visit})
				}
			}()
		}
		wg.Wait()
		walks = append(walks, sub...)
		walkRes = append(walkRes, subRes...)
		walkErrs = append(walkErrs, subErrs...)
	}

	out := &scanResult{}
	for i, tw := range walks {
		if walkErrs[i] != nil {
			return nil, walkErrs[i]
		}
		if tw.err != nil {
			return nil, tw.err
		}
		if err := tw.ign.Err(alias); err != nil {
			return nil, err
		}
		switch {
		case walkRes[i].TruncatedReason == sfs.TruncatedTimeout || ctx.Err() != nil:
			return nil, canceled(alias)
		case walkRes[i].Truncated || tw.over:
			reason := walkRes[i].TruncatedReason
			if tw.over {
				reason = sfs.TruncatedWalkLimit
			}
			return nil, errs.At(errs.DirectoryTooLarge, alias, "", fmt.Sprintf("the work tree is too large to compare (%s: more than SERVERFS_MAX_WALK_ENTRIES entries or too deep)", reason))
		}
		out.untracked = append(out.untracked, tw.untrack...)
		out.changes = append(out.changes, tw.changes...)
	}
	return out, nil
}

func (in *scanInput) hasTrackedBelow(dir string) bool {
	prefix := dir + "/"
	i := sort.SearchStrings(in.paths, prefix)
	return i < len(in.paths) && strings.HasPrefix(in.paths[i], prefix)
}

// visit decides one entry (see git's dir.c and wt-status.c).
func (tw *treeWalk) visit(we *sfs.WalkEntry) sfs.WalkAction {
	if tw.budget.Add(-1) < 0 {
		tw.over = true
		return sfs.WalkStop
	}
	if we.Name == ".git" {
		return sfs.WalkSkipDir
	}
	in := tw.in
	isDir := we.Type == sfs.TypeDirectory
	if len(in.stages) > 0 && in.stages[we.Path] != 0 && !isDir {
		return sfs.WalkContinue // unmerged: reported from the index
	}
	te := in.tracked[we.Path]
	ie := te.Entry
	if ie != nil && !isDir {
		in.seen[te.slot] = true
		if !ie.IntentToAdd && (len(in.unchecked) == 0 || !in.unchecked[we.Path]) {
			code, err := tw.r.worktreeChange(tw.ctx, we, ie, in.idxStat)
			if err != nil {
				tw.err = err
				return sfs.WalkStop
			}
			if code != "." {
				tw.changes = append(tw.changes, statResult{path: we.Path, code: code})
			}
		}
		return sfs.WalkContinue
	}
	if ie != nil && isDir && ie.Mode == filemode.Submodule {
		// A gitlink: modified when the checkout's HEAD is another commit
		// (git's ce_compare_gitlink); a plain directory or an unborn
		// HEAD compares equal. What changed inside the submodule's own
		// work tree is not looked at (see Status).
		in.seen[te.slot] = true
		if !ie.IntentToAdd && (len(in.unchecked) == 0 || !in.unchecked[we.Path]) && tw.r.visible(we.Path) {
			head, ok, err := tw.r.submoduleHead(we.Path)
			if err != nil {
				tw.err = err
				return sfs.WalkStop
			}
			if ok && head != ie.Hash {
				tw.changes = append(tw.changes, statResult{path: we.Path, code: "M"})
			}
		}
		return sfs.WalkSkipDir
	}
	if isDir && (ie != nil || in.stages[we.Path] != 0) && we.HasChild(".git") {
		// A path of the index (a file, or unmerged) that is now a
		// repository: git neither descends nor calls it untracked; a
		// tracked file there is type-changed when the repository has a
		// commit checked out, and deleted otherwise (check_removed).
		if ie != nil && !ie.IntentToAdd && !in.unchecked[we.Path] && tw.r.visible(we.Path) {
			_, ok, err := tw.r.submoduleHead(we.Path)
			if err != nil {
				tw.err = err
				return sfs.WalkStop
			}
			if ok {
				in.seen[te.slot] = true
				tw.changes = append(tw.changes, statResult{path: we.Path, code: "T"})
			}
		}
		return sfs.WalkSkipDir
	}
	parent := ""
	if i := strings.LastIndexByte(we.Path, '/'); i >= 0 {
		parent = we.Path[:i]
	}
	ignored := tw.ignored[parent] || tw.ign.Ignored(we.Path, isDir, we.Depth)
	if !isDir {
		if !ignored && we.Type != sfs.TypeOther {
			tw.untrack = append(tw.untrack, we.Path)
		}
		return sfs.WalkContinue
	}
	below := in.hasTrackedBelow(we.Path)
	switch {
	case ignored && !below:
		return sfs.WalkSkipDir
	case !ignored && !below && we.HasChild(".git"):
		// An untracked repository: one entry, not descended.
		tw.untrack = append(tw.untrack, we.Path+"/")
		return sfs.WalkSkipDir
	}
	// A top-level directory is walked on its own, unless its name is not
	// a path the resolver takes (invalid UTF-8, a leading backslash or a
	// drive letter): then here.
	if tw.root && we.Depth == 1 && utf8.ValidString(we.Name) && !strings.HasPrefix(we.Name, `\`) && !isDriveName(we.Name) {
		tw.queue = append(tw.queue, subtree{path: we.Path, ignored: ignored})
		return sfs.WalkSkipDir
	}
	if ignored {
		tw.ignored[we.Path] = true
	}
	return sfs.WalkContinue
}

// isDriveName reports whether a top-level name looks like a Windows drive
// ("C:"), which the resolver refuses as a path.
func isDriveName(name string) bool {
	return len(name) == 2 && name[1] == ':' && (name[0]|0x20) >= 'a' && (name[0]|0x20) <= 'z'
}
