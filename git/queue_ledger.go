package git

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/serverfs/serverfs/internal/errs"
)

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

// ledgerPath is the ledger file of a branch.
func ledgerPath(branch string) string {
	return ".git/serverfs/queue/" + url.PathEscape(branch) + ".jsonl"
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
