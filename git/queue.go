package git

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git/internal/refs"
	"github.com/serverfs/serverfs/internal/errs"
)

// The merge queue: one worker per (repository,
// branch) applies submitted patches one at a time. strict fast-forwards
// only a patch whose base is the branch head; replay merges each changed
// file onto the head (text three-way as git merge-file; binary, mode and
// type changes only when one side left them alone) and commits on the
// head. The branch moves by compare-and-swap under git's ref lock and
// never on a conflict. Every event goes to an append-only ledger
// (.git/serverfs/queue/<branch>.jsonl) from which the merged set can be
// replayed; a worker starting in a new process first settles what a crash
// left (an apply whose ref moved is recorded merged, one whose ref did
// not is recorded interrupted).
//
// The subsystem's files: queue.go (the workers, Submit, applying a patch
// and advancing the branch), queue_patch.go (a workspace's changes made a
// patch: CommitWorkspace, verifyPatch), queue_replay.go (replay's
// three-way merges and the conflicts they answer), queue_ledger.go (the
// ledger: appending, reading, pruning, RecoverQueue, CheckLedger), and
// follow.go (the checked-out work tree following its branch as git
// read-tree -m -u would).

// Merge modes of Submit.
const (
	MergeStrict = "strict"
	MergeReplay = "replay"
)

// Merge statuses.
const (
	StatusMerged        = "merged"
	StatusNoChange      = "no_change"
	StatusAlreadyMerged = "already_merged"
	StatusConflict      = "conflict"
	StatusBaseMoved     = "base_moved"
)

// Conflict answer bounds.
const (
	maxConflictHunks     = 20
	maxConflictHunkBytes = 2048
)

// Bounds of the conflict bundles (variables so tests can lower them):
// one bundle's size and files, and how many bundles, and bytes in all,
// the conflicts directory keeps (the newest; the one just written always).
var (
	maxConflictBundleBytes    = 32 << 20
	maxConflictBundleFiles    = 256
	maxConflictArtifacts      = 32
	maxConflictArtifactsBytes = int64(64 << 20)
)

// MergeResult is the answer of Submit. On BASE_MOVED and MERGE_CONFLICT it
// comes with the error (the branch did not move).
type MergeResult struct {
	Status  string `json:"status"`
	Mode    string `json:"mode"`
	Branch  string `json:"branch"`
	QueueID string `json:"queue_id,omitempty"`
	Patch   *Patch `json:"patch,omitempty"`
	// From and To: the branch head before and after (To only when it
	// moved or, for already_merged, the commit that merged the patch).
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Checkout: "updated" when the branch is checked out in the live
	// work tree (the merge's paths are at To in the index and work tree;
	// the operator's other changes stay), "behind" when an I/O error
	// stopped that after the branch moved (files not rewritten show as
	// unstaged changes against To).
	Checkout     string            `json:"checkout,omitempty"`
	Files        []string          `json:"files,omitempty"`
	Hunks        []ConflictHunk    `json:"hunks,omitempty"`
	HunksOmitted int               `json:"hunks_omitted,omitempty"`
	Artifact     *ConflictArtifact `json:"artifact,omitempty"`
	Recovered    []LedgerEvent     `json:"recovered,omitempty"`
}

// queueWorker serialises the merges of one (repository, branch).
type queueWorker struct {
	mu        sync.Mutex
	jobs      []*queueJob
	running   bool
	recovered bool
}

type queueJob struct {
	ctx  context.Context
	r    *Repo
	p    *Patch
	mode string
	msg  string
	res  *MergeResult
	err  error
	done chan struct{}
}

var queues sync.Map // key -> *queueWorker

func (r *Repo) queueKey(branch string) (string, error) {
	st, err := r.ctl.Lstat(".git")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d:%d:%s", st.Dev, st.Ino, branch), nil
}

// Submit enqueues the patch for branch and waits for its turn and outcome.
// mode is MergeStrict or MergeReplay; message is the merge commit's
// message (replay onto a moved head). The patch is recomputed from its
// objects first (PATCH_MISMATCH when it does not match). An empty patch
// is no_change; one the ledger shows merged is already_merged. strict
// answers BASE_MOVED when base is not the head; replay answers
// MERGE_CONFLICT with the files, hunks and artifact. Neither moves the
// branch. When the branch is checked out in the live work tree, its index
// and files follow (advance), or the submit is refused before the branch
// moves.
func (r *Repo) Submit(ctx context.Context, branch string, p *Patch, mode, message string) (*MergeResult, error) {
	if mode != MergeStrict && mode != MergeReplay {
		return nil, errs.New(errs.InvalidArgument, `mode must be "strict" or "replay"`)
	}
	if !refs.ValidName("refs/heads/" + branch) {
		return nil, errs.New(errs.InvalidArgument, "branch is not a valid branch name")
	}
	if r.w.Mode() != sfs.ModeReadWrite {
		return nil, errs.At(errs.WorkdirReadOnly, r.w.Alias(), "", "is read-only; merges need a read-write workdir")
	}
	key, err := r.queueKey(branch)
	if err != nil {
		return nil, err
	}
	v, _ := queues.LoadOrStore(key, &queueWorker{})
	w := v.(*queueWorker)
	job := &queueJob{ctx: ctx, r: r, p: p, mode: mode, msg: message, done: make(chan struct{})}
	w.mu.Lock()
	w.jobs = append(w.jobs, job)
	if !w.running {
		w.running = true
		go w.run(branch)
	}
	w.mu.Unlock()
	<-job.done
	return job.res, job.err
}

// run drains the queue and exits when it is empty.
func (w *queueWorker) run(branch string) {
	for {
		w.mu.Lock()
		if len(w.jobs) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		job := w.jobs[0]
		w.jobs = w.jobs[1:]
		first := !w.recovered
		w.recovered = true
		w.mu.Unlock()
		var recovered []LedgerEvent
		// The job's packs open on this goroutine, for the job.
		done := job.r.packScope()
		if first {
			recovered, job.err = job.r.RecoverQueue(job.ctx, branch)
		}
		if job.err == nil {
			job.res, job.err = job.r.apply(job.ctx, branch, job.p, job.mode, job.msg)
			if job.res != nil {
				job.res.Recovered = recovered
			}
			// Best effort: a ledger that could not be pruned is pruned
			// after the next item.
			job.r.pruneLedger(branch)
		}
		done()
		close(job.done)
	}
}

// branchHead reads refs/heads/branch (loose, else packed).
func (r *Repo) branchHead(branch string) (plumbing.Hash, error) {
	ref, err := r.storage.Reference(plumbing.NewBranchReferenceName(branch))
	if err == plumbing.ErrReferenceNotFound {
		return plumbing.ZeroHash, errs.At(errs.RevNotFound, r.w.Alias(), "", fmt.Sprintf("has no branch %q", branch))
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if ref.Type() != plumbing.HashReference {
		return plumbing.ZeroHash, errs.At(errs.RepoUnsupported, r.w.Alias(), "", "the branch is a symbolic reference")
	}
	return ref.Hash(), nil
}

// apply is one queue item, in the worker.
func (r *Repo) apply(ctx context.Context, branch string, p *Patch, mode, message string) (*MergeResult, error) {
	alias := r.w.Alias()
	res := &MergeResult{Mode: mode, Branch: branch, QueueID: newQueueID(), Patch: p}
	ev := LedgerEvent{QueueID: res.QueueID, Patch: p.SHA256, Base: p.Base, Head: p.Head, Mode: mode}
	if p.Empty {
		if !plumbing.IsHash(p.Base) {
			return nil, errs.At(errs.PatchMismatch, alias, "", "the patch does not match its objects: base must be a commit id")
		}
		_, baseTree, err := r.flatTree(ctx, plumbing.NewHash(p.Base))
		if err != nil {
			return nil, err
		}
		if p.SHA256 != patchAddress(plumbing.NewHash(p.Base), baseTree, nil) || len(p.FilesChanged) > 0 {
			return nil, errs.At(errs.PatchMismatch, alias, "", "the patch does not match its objects: its sha256 is not the address of an empty change")
		}
		res.Status = StatusNoChange
		ev.Event = "no_change"
		return res, r.appendLedger(branch, ev)
	}
	changes, err := r.verifyPatch(ctx, p)
	if err != nil {
		ev.Event, ev.Note = "refused", string(errs.CodeOf(err))
		r.appendLedger(branch, ev)
		return nil, err
	}
	ev.Files = p.FilesChanged
	events, _, err := r.ReadLedger(branch)
	if err != nil {
		return nil, err
	}
	head, err := r.branchHead(branch)
	if err != nil {
		return nil, err
	}
	res.From = head.String()
	ev.From = head.String()
	for _, old := range events {
		if old.Event == "merged" && old.Patch == p.SHA256 {
			res.Status, res.To = StatusAlreadyMerged, old.To
			ev.Event, ev.To = "already_merged", old.To
			return res, r.appendLedger(branch, ev)
		}
	}
	if err := r.appendLedger(branch, LedgerEvent{Event: "queued", QueueID: ev.QueueID, Patch: ev.Patch, Base: ev.Base, Head: ev.Head, Mode: mode, From: ev.From}); err != nil {
		return nil, err
	}
	return r.applyQueued(ctx, branch, p, mode, message, changes, head, res, ev)
}

// applyQueued is apply once the item is in the ledger; an error before
// the branch moves closes the item as interrupted.
func (r *Repo) applyQueued(ctx context.Context, branch string, p *Patch, mode, message string, changes []patchChange, head plumbing.Hash, res *MergeResult, ev LedgerEvent) (out *MergeResult, err error) {
	alias := r.w.Alias()
	closed := false
	defer func() {
		if err != nil && !closed && out == nil {
			r.appendLedger(branch, LedgerEvent{Event: "interrupted", QueueID: ev.QueueID, Patch: ev.Patch, Base: ev.Base, Head: ev.Head, Mode: mode, From: ev.From, Note: string(errs.CodeOf(err))})
		}
	}()
	var next plumbing.Hash
	switch {
	case head.String() == p.Base:
		next = plumbing.NewHash(p.Head)
	case mode == MergeStrict:
		res.Status = StatusBaseMoved
		ev.Event = "base_moved"
		if err := r.appendLedger(branch, ev); err != nil {
			return nil, err
		}
		return res, errs.At(errs.BaseMoved, alias, "", fmt.Sprintf("branch %s is at %s, not at the patch's base %s; the branch did not move (submit with mode replay, or from a workspace at the new head)", branch, short(head), p.Base[:7]))
	default:
		merged, conflict, err := r.replay(ctx, branch, head, changes, p, message)
		if err != nil {
			return nil, err
		}
		if conflict != nil {
			conflict.Mode, conflict.Branch, conflict.QueueID, conflict.Patch, conflict.From = mode, branch, res.QueueID, p, res.From
			ev.Event, ev.Files = "conflict", conflict.Files
			if err := r.appendLedger(branch, ev); err != nil {
				return nil, err
			}
			return conflict, errs.At(errs.MergeConflict, alias, "", fmt.Sprintf("the patch conflicts with branch %s in %d file(s); the branch did not move", branch, len(conflict.Files)))
		}
		if merged.IsZero() {
			res.Status, res.To = StatusAlreadyMerged, head.String()
			ev.Event, ev.To, ev.Note = "already_merged", head.String(), "the branch already has these changes"
			return res, r.appendLedger(branch, ev)
		}
		next = merged
	}
	ev.Event, ev.To = "applying", next.String()
	if err := r.appendLedger(branch, ev); err != nil {
		return nil, err
	}
	checkout, err := r.advance(ctx, branch, head, next)
	if err != nil {
		if now, herr := r.branchHead(branch); herr == nil && now == next {
			// The branch moved and something after it failed (a
			// reflog write): merged all the same, the checkout not
			// brought forward.
			checkout = "behind"
			if h, herr := r.head(); herr == nil && h.branch != branch {
				checkout = ""
			}
		} else {
			ev.Event, ev.To, ev.Note = "interrupted", "", string(errs.CodeOf(err))
			r.appendLedger(branch, ev)
			closed = true
			return nil, err
		}
	}
	res.Status, res.To, res.Checkout = StatusMerged, next.String(), checkout
	ev.Event = "merged"
	return res, r.appendLedger(branch, ev)
}

// advance moves the branch from old to next (compare-and-swap under the
// ref's lock) and, when the branch is checked out, brings the live index
// and work tree along (planFollow: planned, under .git/index.lock, before
// the branch moves; a refusal leaves everything as it was). It returns
// the checkout state: "" (not checked out), "updated", or "behind" when
// an error stopped the update after the branch moved.
func (r *Repo) advance(ctx context.Context, branch string, old, next plumbing.Hash) (string, error) {
	alias := r.w.Alias()
	release, err := r.fs.Lease().Acquire(ctx, alias)
	if err != nil {
		return "", err
	}
	defer release()
	h, err := r.head()
	if err != nil {
		return "", err
	}
	checkedOut := h.branch == branch
	var follow *liveFollow
	if checkedOut {
		if follow, err = r.planFollow(ctx, old, next); err != nil {
			return "", err
		}
		defer follow.abort()
	}
	ident, err := r.identity()
	if err != nil {
		return "", err
	}
	who := object.Signature{Name: ident.name, Email: ident.email, When: time.Now()}
	if err := r.updateBranch(branch, old, next, checkedOut, who, "merge queue: "+short(next)); err != nil {
		return "", err
	}
	if !checkedOut {
		return "", nil
	}
	if err := follow.apply(); err != nil {
		return "behind", nil
	}
	return "updated", nil
}

// updateBranch moves a named branch from old to next (moveRef: under
// refs/heads/<branch>.lock, only if the branch, loose or packed, is still
// old), with reflog entries for it and for HEAD when HEAD is on it.
func (r *Repo) updateBranch(branch string, old, next plumbing.Hash, headOnIt bool, who object.Signature, msg string) error {
	unchanged := func() error {
		now, err := r.branchHead(branch)
		if err != nil {
			return err
		}
		if now != old {
			return errs.At(errs.RepoLocked, r.w.Alias(), "", fmt.Sprintf("branch %s moved while the merge was being made (another git process?); the merge was not applied", branch))
		}
		return nil
	}
	return r.moveRef("refs/heads/"+branch, next, unchanged, headOnIt, refs.Line(old, next, who, msg))
}

// resumeCheckout brings the live checkout of branch from old to next
// when a crash stopped a merge between moving the branch and updating
// the checkout, as a merge would have (planFollow); anything it refuses
// is left alone (the checkout stays behind).
func (r *Repo) resumeCheckout(ctx context.Context, branch, old, next string) bool {
	h, err := r.head()
	if err != nil || h.branch != branch || !plumbing.IsHash(old) || !plumbing.IsHash(next) {
		return false
	}
	release, err := r.fs.Lease().Acquire(ctx, r.w.Alias())
	if err != nil {
		return false
	}
	defer release()
	follow, err := r.planFollow(ctx, plumbing.NewHash(old), plumbing.NewHash(next))
	if err != nil {
		return false
	}
	defer follow.abort()
	return follow.apply() == nil
}
