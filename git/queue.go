package git

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git/internal/indexfile"
	"github.com/serverfs/serverfs/git/internal/refs"
	"github.com/serverfs/serverfs/internal/diff3"
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

// ConflictHunk is one conflicted region of a file: where its markers start
// in the merged text (1-based line), and the base, ours (the branch) and
// theirs (the patch) lines, each cut to 2 KiB (Truncated).
type ConflictHunk struct {
	File      string `json:"file"`
	Line      int    `json:"line,omitempty"`
	Base      string `json:"base"`
	Ours      string `json:"ours"`
	Theirs    string `json:"theirs"`
	Reason    string `json:"reason,omitempty"` // binary, mode, type, deleted, too_large, not_utf8 (text not shown)
	Truncated bool   `json:"truncated,omitempty"`
}

// ConflictArtifact names the conflict bundle kept in the ledger's
// directory: every conflicted file's merged text with markers.
// The bundle is bounded (maxConflictBundleFiles files' texts,
// maxConflictBundleBytes in all; past them files are named without their
// text and Truncated is set), and only the newest maxConflictArtifacts
// bundles are kept.
type ConflictArtifact struct {
	SHA256    string `json:"sha256"`
	Bytes     int    `json:"bytes"`
	Truncated bool   `json:"truncated,omitempty"`
}

// Bounds of the conflict bundles (variables so tests can lower them):
// one bundle's size and files, and how many bundles, and bytes in all,
// the conflicts directory keeps (the newest; the one just written always).
var (
	maxConflictBundleBytes    = 32 << 20
	maxConflictBundleFiles    = 256
	maxConflictArtifacts      = 32
	maxConflictArtifactsBytes = int64(64 << 20)
)

// Bounds of a branch's ledger (variables so tests can lower them): past
// maxLedgerItems queue items or maxLedgerBytes, the oldest finished items
// are dropped until three quarters of both remain; an item still open is
// never dropped. An event names at most maxLedgerFiles files (the rest
// counted), so that one line stays far below what ReadLedger reads.
var (
	maxLedgerItems = 1000
	maxLedgerBytes = int64(4 << 20)
	maxLedgerFiles = 64
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

// LedgerEvent is one line of the queue ledger.
type LedgerEvent struct {
	Time    string   `json:"time"`
	Event   string   `json:"event"` // queued, applying, merged, no_change, already_merged, conflict, base_moved, refused, interrupted
	QueueID string   `json:"queue_id"`
	Patch   string   `json:"patch_sha,omitempty"`
	Base    string   `json:"base,omitempty"`
	Head    string   `json:"head,omitempty"` // the patch's commit
	Mode    string   `json:"mode,omitempty"`
	From    string   `json:"from,omitempty"`
	To      string   `json:"to,omitempty"`
	Files   []string `json:"files,omitempty"`
	// FilesOmitted counts the files past maxLedgerFiles not named.
	FilesOmitted int    `json:"files_omitted,omitempty"`
	Note         string `json:"note,omitempty"`
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

// ledgerPath is the ledger file of a branch.
func ledgerPath(branch string) string {
	return ".git/serverfs/queue/" + url.PathEscape(branch) + ".jsonl"
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

func newQueueID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// appendLedger appends one event (one write, fsynced).
func (r *Repo) appendLedger(branch string, ev LedgerEvent) error {
	ev.Time = time.Now().UTC().Format(time.RFC3339Nano)
	if len(ev.Files) > maxLedgerFiles {
		ev.FilesOmitted, ev.Files = len(ev.Files)-maxLedgerFiles, ev.Files[:maxLedgerFiles]
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	name := ledgerPath(branch)
	if err := r.ctl.MkdirAll(path.Dir(name), 0o755); err != nil {
		return err
	}
	// A line a crash cut short (power loss; a killed process completes
	// its write) is ended first, so that it spoils only itself.
	line := append(b, '\n')
	if st, err := r.ctl.Lstat(name); err == nil && st.Size > 0 {
		if f, err := r.ctl.Open(name); err == nil {
			var last [1]byte
			if n, _ := f.ReadAt(last[:], st.Size-1); n == 1 && last[0] != '\n' {
				line = append([]byte{'\n'}, line...)
			}
			f.Close()
		}
	}
	f, err := r.ctl.OpenAppend(name, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(line); err != nil {
		return err
	}
	return f.Sync()
}

// ReadLedger returns the events of branch's ledger in order, and how many
// lines it could not read (cut short by a crash) and left out.
func (r *Repo) ReadLedger(branch string) (events []LedgerEvent, torn int, err error) {
	f, err := r.ctl.Open(ledgerPath(branch))
	if errs.CodeOf(err) == errs.PathNotFound {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var ev LedgerEvent
		if len(sc.Bytes()) == 0 {
			continue
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.QueueID == "" {
			torn++
			continue
		}
		events = append(events, ev)
	}
	if err := sc.Err(); err != nil {
		return nil, 0, err
	}
	return events, torn, nil
}

// pruneLedger bounds branch's ledger: past maxLedgerItems items or
// maxLedgerBytes, the ledger is rewritten without its oldest finished
// items (to three quarters of both bounds), open ones always kept. The
// new ledger is written to a temporary, fsynced and renamed over the old
// one, so a crash leaves the old ledger or the new, whole; a temporary a
// crash left is replaced. Only the queue's worker writes the ledger.
func (r *Repo) pruneLedger(branch string) error {
	name := ledgerPath(branch)
	st, err := r.ctl.Lstat(name)
	if err != nil {
		return err
	}
	events, _, err := r.ReadLedger(branch)
	if err != nil {
		return err
	}
	type item struct {
		lines [][]byte
		bytes int64
		open  bool
	}
	var order []string
	items := map[string]*item{}
	for _, ev := range events {
		it := items[ev.QueueID]
		if it == nil {
			it = &item{}
			items[ev.QueueID] = it
			order = append(order, ev.QueueID)
		}
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		it.lines = append(it.lines, append(b, '\n'))
		it.bytes += int64(len(b)) + 1
		it.open = !terminalEvents[ev.Event]
	}
	if len(order) <= maxLedgerItems && st.Size <= maxLedgerBytes {
		return nil
	}
	// Newest first: finished items are kept while they fit in three
	// quarters of the bounds; open ones whatever they cost.
	keepItems, keepBytes := maxLedgerItems*3/4, maxLedgerBytes*3/4
	keep := map[string]bool{}
	n, size := 0, int64(0)
	full := false
	for i := len(order) - 1; i >= 0; i-- {
		it := items[order[i]]
		if !it.open && (full || n+1 > keepItems || size+it.bytes > keepBytes) {
			full = true // older finished items go too: the ledger stays a suffix
			continue
		}
		keep[order[i]] = true
		n++
		size += it.bytes
	}
	var out bytes.Buffer
	for _, ev := range events {
		if keep[ev.QueueID] {
			b, _ := json.Marshal(ev)
			out.Write(b)
			out.WriteByte('\n')
		}
	}
	tmp := name + ".prune"
	r.ctl.Remove(tmp)
	f, err := r.ctl.CreateExclusive(tmp, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(out.Bytes())
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = r.ctl.Rename(tmp, name)
	}
	if werr != nil {
		r.ctl.Remove(tmp)
		return werr
	}
	return r.ctl.SyncDir(path.Dir(name))
}

// terminalEvents end a queue item.
var terminalEvents = map[string]bool{"merged": true, "no_change": true, "already_merged": true, "conflict": true, "base_moved": true, "refused": true, "interrupted": true}

// RecoverQueue settles the items a crash left open in branch's ledger: an
// item whose apply moved the branch to its target is recorded merged, any
// other open item interrupted (the branch is where it was); the ref lock
// the crash left (recognised by its content) is removed, and a checkout
// the crash left exactly at the old head (index equal to its tree, work
// tree equal to the index) is brought forward. It returns the
// events it appended. One server process per repository is assumed: an
// item open in another live process would be settled too.
func (r *Repo) RecoverQueue(ctx context.Context, branch string) ([]LedgerEvent, error) {
	defer r.packScope()()
	events, _, err := r.ReadLedger(branch)
	if err != nil {
		return nil, err
	}
	open := map[string]LedgerEvent{}
	var order []string
	for _, ev := range events {
		if terminalEvents[ev.Event] {
			delete(open, ev.QueueID)
			continue
		}
		if _, ok := open[ev.QueueID]; !ok {
			order = append(order, ev.QueueID)
		}
		open[ev.QueueID] = ev
	}
	if len(open) == 0 {
		return nil, nil
	}
	// A ref lock holding the target of an open apply is this queue's own,
	// left by the crash between writing it and renaming it: removed (the
	// branch did not move). Any other lock belongs to someone else.
	lockName := ".git/refs/heads/" + branch + ".lock"
	if f, err := r.ctl.Open(lockName); err == nil {
		var buf [64]byte
		n, _ := f.ReadAt(buf[:], 0)
		f.Close()
		for _, ev := range open {
			if ev.Event == "applying" && ev.To != "" && strings.HasPrefix(ev.To+"\n", string(buf[:n])) {
				r.ctl.Remove(lockName)
				break
			}
		}
	}
	head, err := r.branchHead(branch)
	if err != nil {
		return nil, err
	}
	var out []LedgerEvent
	for _, id := range order {
		ev, ok := open[id]
		if !ok {
			continue
		}
		done := LedgerEvent{QueueID: id, Patch: ev.Patch, Base: ev.Base, Head: ev.Head, Mode: ev.Mode, From: ev.From}
		if ev.Event == "applying" && ev.To != "" && head.String() == ev.To {
			done.Event, done.To, done.Note = "merged", ev.To, "recovered after a restart: the branch had moved"
			if r.resumeCheckout(ctx, branch, ev.From, ev.To) {
				done.Note += "; the checkout was brought forward"
			}
		} else {
			done.Event, done.Note = "interrupted", "the server stopped before the branch moved; submit again"
		}
		if err := r.appendLedger(branch, done); err != nil {
			return nil, err
		}
		out = append(out, done)
	}
	return out, nil
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

// replay merges the patch's changes onto head: the merge commit (parent
// head), or a conflict answer; a zero commit when the head already has
// every change.
func (r *Repo) replay(ctx context.Context, branch string, head plumbing.Hash, changes []patchChange, p *Patch, message string) (plumbing.Hash, *MergeResult, error) {
	headFlat, headTree, err := r.flatTree(ctx, head)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	merged := make(map[string]treeEntry, len(headFlat))
	for k, v := range headFlat {
		merged[k] = v
	}
	cc := &conflictCollector{conf: &MergeResult{Status: StatusConflict}}
	opts := diff3.Options{Ours: branch, Theirs: "patch " + p.SHA256[:12]}
	for _, c := range changes {
		if ctx.Err() != nil {
			return plumbing.ZeroHash, nil, canceled(r.w.Alias())
		}
		if err := r.mergeChange(c, headFlat[c.path], opts, merged, cc); err != nil {
			return plumbing.ZeroHash, nil, err
		}
	}
	if clash := fileDirClash(merged); clash != "" && len(cc.conf.Files) == 0 {
		cc.conf.Files = append(cc.conf.Files, clash)
		cc.addHunk(ConflictHunk{File: clash, Reason: "type"})
		fmt.Fprintf(&cc.bundle, "--- %q (file and directory)\n", clash)
	}
	if len(cc.conf.Files) > 0 {
		if err := r.saveConflictArtifact(cc); err != nil {
			return plumbing.ZeroHash, nil, err
		}
		return plumbing.ZeroHash, cc.conf, nil
	}
	entries := make(map[string]*indexfile.Entry, len(merged))
	for k, v := range merged {
		entries[k] = &indexfile.Entry{Entry: &index.Entry{Name: k, Hash: v.hash, Mode: v.mode}}
	}
	tree, _, err := r.writeTrees(entries)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	if tree == headTree {
		return plumbing.ZeroHash, nil, nil
	}
	pc, err := r.getCommit(plumbing.NewHash(p.Head))
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	ident, err := r.identity()
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	msg := pc.Message
	if strings.TrimSpace(message) != "" {
		msg = cleanupMessage(message)
	}
	c := &object.Commit{Author: pc.Author, Committer: object.Signature{Name: ident.name, Email: ident.email, When: time.Now()}, Message: msg, TreeHash: tree, ParentHashes: []plumbing.Hash{head}}
	h, err := r.writeCommit(c)
	return h, nil, err
}

// conflictCollector gathers a replay's conflicts: the bounded hunks of the
// answer and the bundle of merged texts saved as its artifact.
type conflictCollector struct {
	conf            *MergeResult
	bundle          bytes.Buffer
	bundleFiles     int
	bundleTruncated bool
}

// addHunk records a hunk within the answer's bounds. Text the JSON answer
// cannot carry byte for byte is not shown; a cut never splits a character.
func (cc *conflictCollector) addHunk(h ConflictHunk) {
	if len(cc.conf.Hunks) >= maxConflictHunks {
		cc.conf.HunksOmitted++
		return
	}
	if !utf8.ValidString(h.Base) || !utf8.ValidString(h.Ours) || !utf8.ValidString(h.Theirs) {
		h.Base, h.Ours, h.Theirs, h.Reason = "", "", "", "not_utf8"
	}
	cut := func(s string) string {
		if len(s) > maxConflictHunkBytes {
			h.Truncated = true
			i := maxConflictHunkBytes
			for i > 0 && !utf8.RuneStart(s[i]) {
				i--
			}
			return s[:i]
		}
		return s
	}
	h.Base, h.Ours, h.Theirs = cut(h.Base), cut(h.Ours), cut(h.Theirs)
	cc.conf.Hunks = append(cc.conf.Hunks, h)
}

// addTextConflicts records a text merge's conflict hunks and its merged
// text (with markers) in the bundle, while the bundle has room.
func (cc *conflictCollector) addTextConflicts(file string, text *diff3.Result) {
	cc.conf.Files = append(cc.conf.Files, file)
	for _, h := range text.Conflicts {
		cc.addHunk(ConflictHunk{File: file, Line: h.Line + 1, Base: string(h.Base), Ours: string(h.Ours), Theirs: string(h.Theirs)})
	}
	if cc.bundleFiles >= maxConflictBundleFiles || cc.bundle.Len()+len(text.Merged) > maxConflictBundleBytes {
		cc.bundleTruncated = true
		fmt.Fprintf(&cc.bundle, "--- %q (text omitted: bundle limit)\n", file)
		return
	}
	cc.bundleFiles++
	fmt.Fprintf(&cc.bundle, "--- %q\n", file)
	cc.bundle.Write(text.Merged)
}

// mergeModes decides a path both sides changed: the merged mode, or the
// reason it cannot merge ("" when it can).
func mergeModes(base, ours, theirs treeEntry) (filemode.FileMode, string) {
	reason := ""
	mergedMode := theirs.mode
	switch {
	case ours.hash.IsZero() || theirs.hash.IsZero() || base.hash.IsZero():
		reason = "deleted or added on both sides"
	case ours.mode == base.mode:
	case theirs.mode == base.mode || theirs.mode == ours.mode:
		mergedMode = ours.mode
	default:
		reason = "mode"
	}
	if reason == "" && !(isFileMode(ours.mode) && isFileMode(theirs.mode) && isFileMode(base.mode)) {
		reason = "type"
	}
	return mergedMode, reason
}

// mergeChange merges one path the patch changes into merged (ours is
// HEAD's entry, zero when absent), or records its conflict in cc.
func (r *Repo) mergeChange(c patchChange, ours treeEntry, opts diff3.Options, merged map[string]treeEntry, cc *conflictCollector) error {
	base := treeEntry{hash: c.old, mode: c.oldMode}
	theirs := treeEntry{hash: c.new, mode: c.newMode}
	switch {
	case ours == base, ours == theirs:
		setEntry(merged, c.path, theirs)
		return nil
	}
	// Both sides changed the path, differently.
	mergedMode, reason := mergeModes(base, ours, theirs)
	if reason == "" {
		switch {
		case ours.hash == theirs.hash:
			setEntry(merged, c.path, treeEntry{hash: ours.hash, mode: mergedMode})
			return nil
		case ours.hash == base.hash:
			setEntry(merged, c.path, treeEntry{hash: theirs.hash, mode: mergedMode})
			return nil
		case theirs.hash == base.hash:
			setEntry(merged, c.path, treeEntry{hash: ours.hash, mode: mergedMode})
			return nil
		}
	}
	var text diff3.Result
	if reason == "" {
		b, o, t, err := r.load3(base.hash, ours.hash, theirs.hash)
		if err != nil {
			return err
		}
		res, err := diff3.Merge(b, o, t, opts)
		switch {
		case errors.Is(err, diff3.ErrBinary):
			reason = "binary"
		case errors.Is(err, diff3.ErrTooLarge):
			reason = "too_large"
		case err != nil:
			return err
		default:
			text = *res
		}
	}
	if reason != "" {
		cc.conf.Files = append(cc.conf.Files, c.path)
		cc.addHunk(ConflictHunk{File: c.path, Reason: reason})
		fmt.Fprintf(&cc.bundle, "--- %q (%s)\n", c.path, reason)
		return nil
	}
	if len(text.Conflicts) > 0 {
		cc.addTextConflicts(c.path, &text)
		return nil
	}
	h, err := r.writeObject(plumbing.BlobObject, text.Merged)
	if err != nil {
		return err
	}
	setEntry(merged, c.path, treeEntry{hash: h, mode: mergedMode})
	return nil
}

// saveConflictArtifact stores the conflict bundle under its SHA-256 (best
// effort: the answer names it either way) and prunes older ones.
func (r *Repo) saveConflictArtifact(cc *conflictCollector) error {
	sum := sha256.Sum256(cc.bundle.Bytes())
	cc.conf.Artifact = &ConflictArtifact{SHA256: hex.EncodeToString(sum[:]), Bytes: cc.bundle.Len(), Truncated: cc.bundleTruncated}
	name := ".git/serverfs/queue/conflicts/" + cc.conf.Artifact.SHA256
	if err := r.ctl.MkdirAll(path.Dir(name), 0o755); err != nil {
		return err
	}
	if f, err := r.ctl.CreateExclusive(name, 0o644); err == nil {
		f.Write(cc.bundle.Bytes())
		f.Sync()
		f.Close()
	}
	r.pruneConflicts(path.Dir(name), cc.conf.Artifact.SHA256)
	return nil
}

func isFileMode(m filemode.FileMode) bool {
	return m == filemode.Regular || m == filemode.Executable
}

// setEntry sets (or, for a zero hash, deletes) a path of a flat tree.
func setEntry(m map[string]treeEntry, p string, e treeEntry) {
	if e.hash.IsZero() {
		delete(m, p)
		return
	}
	m[p] = e
}

// load3 reads three blobs (zero: empty) for a text merge, refusing any
// over the merge's byte limit without reading it.
func (r *Repo) load3(hs ...plumbing.Hash) (b, o, t []byte, err error) {
	out := make([][]byte, 3)
	for i, h := range hs {
		if h.IsZero() {
			continue
		}
		data, err := r.readBlob(h, diff3.DefaultMaxBytes)
		if _, ok := tooLargeSize(err); ok {
			out[i] = make([]byte, diff3.DefaultMaxBytes+1) // refused as too large by Merge
			continue
		}
		if err != nil {
			return nil, nil, nil, err
		}
		out[i] = data
	}
	return out[0], out[1], out[2], nil
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

// pruneConflicts keeps the newest bundles in dir (by modification time)
// within maxConflictArtifacts and maxConflictArtifactsBytes, and always
// current, the one just written (its answer names it); best effort.
func (r *Repo) pruneConflicts(dir, current string) {
	ents, _, err := r.ctl.ReadDir(dir, 4*maxConflictArtifacts+1024)
	if err != nil {
		return
	}
	sort.SliceStable(ents, func(i, j int) bool {
		if (ents[i].Name == current) != (ents[j].Name == current) {
			return ents[i].Name == current
		}
		return ents[i].Stat.Mtime.After(ents[j].Stat.Mtime)
	})
	n, size := 0, int64(0)
	for _, e := range ents {
		if e.Stat.Mode&0o170000 != 0o100000 {
			continue
		}
		if e.Name == current || n < maxConflictArtifacts && size+e.Stat.Size <= maxConflictArtifactsBytes {
			n++
			size += e.Stat.Size
			continue
		}
		r.ctl.Remove(dir + "/" + e.Name)
	}
}

// maxLedgerWalk bounds the first-parent walk of CheckLedger.
const maxLedgerWalk = 100_000

// LedgerCheck is what CheckLedger found.
type LedgerCheck struct {
	Merged     int    `json:"merged"`                // merged events replayed
	Head       string `json:"head"`                  // the branch head now
	LastMerged string `json:"last_merged,omitempty"` // the commit of the last merged event
	// Outside counts the times the branch moved outside the queue
	// between two merges (another commit or push); Torn the ledger lines
	// a crash cut short.
	Outside int `json:"outside,omitempty"`
	Torn    int `json:"torn,omitempty"`
}

// CheckLedger replays branch's ledger against the repository: every
// merged event names a commit whose first parent is the head it was
// merged onto; consecutive merges chain (the next one starts where the
// previous ended, or the branch moved outside the queue in between:
// counted); and the last merged commit is the branch head or on its
// first-parent line. Any break is an error naming the event.
func (r *Repo) CheckLedger(ctx context.Context, branch string) (*LedgerCheck, error) {
	defer r.packScope()()
	events, torn, err := r.ReadLedger(branch)
	if err != nil {
		return nil, err
	}
	head, err := r.branchHead(branch)
	if err != nil {
		return nil, err
	}
	out := &LedgerCheck{Head: head.String(), Torn: torn}
	bad := func(ev LedgerEvent, why string) error {
		return fmt.Errorf("queue ledger of %s: item %s (%s): %s", branch, ev.QueueID, ev.To, why)
	}
	for _, ev := range events {
		if ev.Event != "merged" {
			continue
		}
		if !plumbing.IsHash(ev.To) || !plumbing.IsHash(ev.From) {
			return nil, bad(ev, "not a pair of commit ids")
		}
		c, err := object.GetCommit(r.storage, plumbing.NewHash(ev.To))
		if err != nil {
			return nil, bad(ev, "the merged commit is not in the repository")
		}
		if len(c.ParentHashes) == 0 || c.ParentHashes[0].String() != ev.From {
			return nil, bad(ev, "the merged commit's parent is not the head it was merged onto")
		}
		if out.LastMerged != "" && ev.From != out.LastMerged {
			out.Outside++
		}
		out.LastMerged = ev.To
		out.Merged++
	}
	if out.LastMerged == "" {
		return out, nil
	}
	at := head
	for i := 0; i < maxLedgerWalk && at.String() != out.LastMerged; i++ {
		if i%64 == 0 && ctx.Err() != nil {
			return nil, canceled(r.w.Alias())
		}
		c, err := object.GetCommit(r.storage, at)
		if err != nil || len(c.ParentHashes) == 0 {
			return nil, fmt.Errorf("queue ledger of %s: the last merged commit %s is not on the branch's first-parent line (the branch was reset or rewritten)", branch, out.LastMerged)
		}
		at = c.ParentHashes[0]
	}
	if at.String() != out.LastMerged {
		return nil, fmt.Errorf("queue ledger of %s: the last merged commit %s is not within %d first-parent commits of the head", branch, out.LastMerged, maxLedgerWalk)
	}
	if head != at {
		out.Outside++
	}
	return out, nil
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
