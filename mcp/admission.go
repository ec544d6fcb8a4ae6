package mcp

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sfs "github.com/serverfs/serverfs/fs"

	"github.com/serverfs/serverfs/internal/settings"

	"github.com/serverfs/serverfs/internal/decompress"
	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/search"
)

// Admission control: the one gate every heavy tool call passes
// before it runs. Heavy calls are those whose memory or CPU grows with the
// data they touch (a search's workers and decompressors, a walk of a whole
// tree, a repository status, diff or commit, the listing of a huge
// directory, the decompression of a .gz/.zst read). At most MaxHeavy of them
// run at once; up to Queue more wait, each at most Wait, for a slot; any
// other is refused at once with SERVER_BUSY and a retry hint (see
// Admission for the order and the reserve slot). Cheap calls
// (stat_file, plain reads, listings of ordinary directories, writes, the
// bridge's tools whose work runs in the host bridge) never pass the gate, so
// they never wait behind heavy ones.

// AdmissionConfig sizes the gate.
type AdmissionConfig struct {
	MemoryBudget int64         // SERVERFS_MEMORY_BUDGET_MB, in bytes: what heavy calls may hold together
	MaxHeavy     int           // SERVERFS_MAX_HEAVY_CALLS: heavy calls running at once
	Queue        int           // SERVERFS_HEAVY_QUEUE: heavy calls waiting for a slot
	Wait         time.Duration // SERVERFS_HEAVY_WAIT_SECONDS: how long one waits before SERVER_BUSY
}

// Admission defaults.
const (
	DefaultMemoryBudgetMB   = 1024
	DefaultHeavyWaitSeconds = 5
	// DefaultHeavyQueue sizes the queue: a waiting call holds a goroutine
	// and its decoded arguments, not the memory of a heavy call, and waits
	// at most SERVERFS_HEAVY_WAIT_SECONDS, so a hundred agents' parallel
	// calls wait briefly rather than fail.
	DefaultHeavyQueue = 256
	// workerBytes is the memory budgeted per search worker: a .zst
	// decoder's window (at most decompress.MaxZstdWindow, 8 MiB, plus ~0.5
	// MiB) and the worker's 256 KiB buffers, with room to spare.
	workerBytes = 16 << 20
	// minHeavyCallBytes is the least a heavy call is budgeted at: a
	// listing or walk of SERVERFS_MAX_WALK_ENTRIES (200,000) names held
	// ~23-38 MB per call (measured).
	minHeavyCallBytes = 64 << 20
)

// HeavyCallBytes is the memory one heavy call is budgeted at: a search
// runs search.Workers() workers; walks, listings and repository calls are
// budgeted at no less than 64 MiB.
func HeavyCallBytes() int64 { return max(minHeavyCallBytes, int64(search.Workers())*workerBytes) }

// DefaultMaxHeavy is the number of heavy calls run at once when
// SERVERFS_MAX_HEAVY_CALLS is unset: one per two CPUs, fewer when the
// memory budget holds fewer heavy calls, and at least one. A search keeps
// two workers per CPU busy, so one heavy call per two CPUs already uses
// them all; more would add memory and the latency of cheap calls, not
// throughput (measured on 2 CPUs with searches of .zst logs: stat_file p99
// ~100 ms beside one search, 170-470 ms beside two).
func DefaultMaxHeavy(budget int64) int {
	return max(1, min(runtime.GOMAXPROCS(0)/2, int(budget/HeavyCallBytes())))
}

// RuntimeMemoryLimit is the Go runtime's soft memory limit serve sets for
// a memory budget (unless GOMEMLIMIT is set): 7/8 of it, the rest for the
// memory the limit does not count and its overshoot.
func RuntimeMemoryLimit(budget int64) int64 { return budget - budget/8 }

// DefaultAdmissionConfig is the configuration with no variable set.
func DefaultAdmissionConfig() AdmissionConfig {
	budget := int64(DefaultMemoryBudgetMB) << 20
	n := DefaultMaxHeavy(budget)
	return AdmissionConfig{MemoryBudget: budget, MaxHeavy: n, Queue: DefaultHeavyQueue, Wait: DefaultHeavyWaitSeconds * time.Second}
}

// loadAdmissionConfig reads the admission variables of env, adding one
// problem line per bad value.
func loadAdmissionConfig(env map[string]string, probs *[]string) AdmissionConfig {
	c := AdmissionConfig{MemoryBudget: settings.Limit(env, probs, "SERVERFS_MEMORY_BUDGET_MB") << 20}
	c.MaxHeavy = int(settings.LimitOr(env, probs, "SERVERFS_MAX_HEAVY_CALLS", int64(DefaultMaxHeavy(c.MemoryBudget))))
	c.Queue = int(settings.Limit(env, probs, "SERVERFS_HEAVY_QUEUE"))
	c.Wait = time.Duration(settings.Limit(env, probs, "SERVERFS_HEAVY_WAIT_SECONDS")) * time.Second
	return c
}

// Admission is the gate. Its zero value is not usable: use NewAdmission.
//
// Fairness: calls are counted per client (clientOf). A waiting call of a
// client with fewer calls running is admitted before one of a client with
// more, then that of the client admitted longest ago, then the oldest, so
// a client looping heavy calls waits behind everyone else's. And no client holds every slot while
// another waits: when the memory budget holds one more heavy call than
// MaxHeavy, a call of a client with nothing running is admitted to that
// one reserve slot (a search that runs to its timeout would otherwise keep
// every other client's heavy calls waiting until SERVER_BUSY). A full
// queue makes room for a newcomer by refusing the newest waiting call of
// the client with the most waiting, when that is more than the
// newcomer's client has waiting.
type Admission struct {
	cfg     AdmissionConfig
	reserve int // 1: the reserve slot exists (the budget holds MaxHeavy+1 calls)

	mu        sync.Mutex
	running   int
	perClient map[string]int // running calls per client
	waiters   []*admissionWaiter
	// served is when (admissions counted) each client with a call
	// running or waiting was last admitted: among clients running as
	// many calls, the one served longest ago goes first (round-robin).
	served     map[string]uint64
	admissions uint64

	peak, refused atomic.Int64
}

// admissionWaiter is a call waiting for a slot; state (under mu) says what
// became of it.
type admissionWaiter struct {
	client string
	state  int // waitQueued, waitAdmitted, waitEvicted
	ready  chan struct{}
}

const (
	waitQueued = iota
	waitAdmitted
	waitEvicted
)

// NewAdmission returns a gate sized by c.
func NewAdmission(c AdmissionConfig) *Admission {
	c.MaxHeavy = max(1, c.MaxHeavy)
	a := &Admission{cfg: c, perClient: map[string]int{}, served: map[string]uint64{}}
	if c.MemoryBudget >= int64(c.MaxHeavy+1)*HeavyCallBytes() {
		a.reserve = 1
	}
	return a
}

// AdmissionStats are counters for logs and tests.
type AdmissionStats struct {
	Running, Peak, Refused int64
	Waiting                int64
}

// Stats returns the current counters.
func (a *Admission) Stats() AdmissionStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return AdmissionStats{Running: int64(a.running), Peak: a.peak.Load(), Refused: a.refused.Load(), Waiting: int64(len(a.waiters))}
}

// clientKey is the context key of the client a call comes from.
type clientKey struct{}

// clientOf is the client recorded by WithClient: "" (one client, as on
// stdio) when none.
func clientOf(ctx context.Context) string {
	c, _ := ctx.Value(clientKey{}).(string)
	return c
}

// Acquire admits one heavy call of the client of ctx (clientOf): at once
// when a slot is free for it, after a wait of at most Wait when the queue
// has room, or never (SERVER_BUSY). ctx ending while waiting is CANCELED.
// release must be called exactly once when the call ends.
func (a *Admission) Acquire(ctx context.Context) (release func(), err error) {
	client := clientOf(ctx)
	a.mu.Lock()
	if len(a.waiters) == 0 && a.eligible(client) {
		a.admitLocked(client)
		a.mu.Unlock()
		return a.releaser(client), nil
	}
	if len(a.waiters) >= a.cfg.Queue && !a.evictLocked(client) {
		a.mu.Unlock()
		return nil, a.busy("and as many are waiting")
	}
	w := &admissionWaiter{client: client, ready: make(chan struct{})}
	a.waiters = append(a.waiters, w)
	a.dispatchLocked() // a reserve slot may be free for this client
	if w.state == waitAdmitted {
		a.mu.Unlock()
		return a.releaser(client), nil // admitted without waiting
	}
	a.mu.Unlock()

	t := time.NewTimer(a.cfg.Wait)
	defer t.Stop()
	var why error
	select {
	case <-w.ready:
	case <-t.C:
		why = a.busy(fmt.Sprintf("and none freed within %s", a.cfg.Wait))
	case <-ctx.Done():
		why = errs.New(errs.Canceled, "the request ended while waiting for a heavy-call slot").Wrap(ctx.Err())
	}
	a.mu.Lock()
	state := w.state
	if state == waitQueued {
		a.removeLocked(w)
	}
	a.mu.Unlock()
	switch {
	case state == waitEvicted:
		return nil, a.busy("and its queue was full, this client having the most calls waiting")
	case state == waitAdmitted && (why == nil || ctx.Err() == nil):
		return a.releaser(client), nil // admitted as the wait ended: run it
	case state == waitAdmitted:
		a.releaser(client)()
	}
	return nil, why
}

// eligible reports whether a call of client may run now (under mu).
func (a *Admission) eligible(client string) bool {
	return a.running < a.cfg.MaxHeavy || (a.running < a.cfg.MaxHeavy+a.reserve && a.perClient[client] == 0)
}

func (a *Admission) admitLocked(client string) {
	a.running++
	a.perClient[client]++
	a.admissions++
	a.served[client] = a.admissions
	if n := int64(a.running); n > a.peak.Load() {
		a.peak.Store(n)
	}
}

// dispatchLocked admits waiting calls while slots are free for them: of
// the eligible, the one whose client runs the fewest calls, then whose
// client was admitted longest ago, then the oldest.
func (a *Admission) dispatchLocked() {
	for {
		best := -1
		for i, w := range a.waiters {
			if a.eligible(w.client) && (best < 0 || a.before(w.client, a.waiters[best].client)) {
				best = i
			}
		}
		if best < 0 {
			return
		}
		w := a.waiters[best]
		a.waiters = append(a.waiters[:best], a.waiters[best+1:]...)
		a.admitLocked(w.client)
		w.state = waitAdmitted
		close(w.ready)
	}
}

// before reports whether a waiting call of client c goes before one of d.
func (a *Admission) before(c, d string) bool {
	if a.perClient[c] != a.perClient[d] {
		return a.perClient[c] < a.perClient[d]
	}
	return a.served[c] < a.served[d]
}

// forgetIdleLocked drops what the gate keeps of client once it has no call
// running or waiting: the gate holds state only for clients it serves.
func (a *Admission) forgetIdleLocked(client string) {
	if a.perClient[client] > 0 {
		return
	}
	delete(a.perClient, client)
	for _, w := range a.waiters {
		if w.client == client {
			return
		}
	}
	delete(a.served, client)
}

// evictLocked makes room in a full queue for a call of client: it refuses
// the newest waiting call of the client with the most waiting, when that
// is more than client has waiting; false when it did not.
func (a *Admission) evictLocked(client string) bool {
	count := map[string]int{}
	for _, w := range a.waiters {
		count[w.client]++
	}
	victim := ""
	for c, n := range count {
		if n > count[victim] || (n == count[victim] && c < victim) {
			victim = c
		}
	}
	if len(a.waiters) == 0 || count[victim] <= count[client]+1 {
		return false
	}
	for i := len(a.waiters) - 1; i >= 0; i-- {
		if w := a.waiters[i]; w.client == victim {
			a.waiters = append(a.waiters[:i], a.waiters[i+1:]...)
			w.state = waitEvicted
			close(w.ready)
			a.forgetIdleLocked(victim)
			return true
		}
	}
	return false
}

func (a *Admission) removeLocked(w *admissionWaiter) {
	for i, o := range a.waiters {
		if o == w {
			a.waiters = append(a.waiters[:i], a.waiters[i+1:]...)
			a.forgetIdleLocked(w.client)
			return
		}
	}
}

func (a *Admission) releaser(client string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			a.running--
			a.perClient[client]--
			a.dispatchLocked()
			a.forgetIdleLocked(client)
			a.mu.Unlock()
		})
	}
}

func (a *Admission) busy(why string) error {
	a.refused.Add(1)
	return errs.New(errs.ServerBusy, fmt.Sprintf("the server is running its limit of %d heavy calls (searches, finds, repository status/diff/commit/history, huge listings, compressed reads) %s; nothing ran: retry in a few seconds, or meanwhile use cheap calls (stat_file, read_text_file)", a.cfg.MaxHeavy, why))
}

// defaultAdmission is the gate of Deps built without one (tests).
var defaultAdmission = sync.OnceValue(func() *Admission { return NewAdmission(DefaultAdmissionConfig()) })

// admission is d's gate.
func (d *Deps) admission() *Admission {
	if d.Admit != nil {
		return d.Admit
	}
	return defaultAdmission()
}

// hugeDirBytes is the directory size (st_size) above which listing it is
// heavy: some thousands of entries on ext4, xfs and tmpfs. A listing reads
// every name to sort them (up to SERVERFS_MAX_WALK_ENTRIES): 200,000
// entries held ~23 MB per call.
const hugeDirBytes = 256 << 10

// compressedPath reports whether a read of path decompresses.
func compressedPath(path string) bool {
	return decompress.Kind(path[strings.LastIndexByte(path, '/')+1:]) != "" || sfs.InArchive(path) || sfs.DocumentKind(path) != "" || sfs.ImageKind(path) != ""
}
