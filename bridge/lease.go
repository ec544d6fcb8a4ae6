package bridge

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	sfs "github.com/serverfs/serverfs/fs"
)

// Leases are the bridge's exclusive writer leases, one per workdir,
// shared by every process that changes a workdir: the MCP server's writes
// and commits, and the bridge's own actions and pushes. A lease expires
// when its holder stops renewing it (a crashed server); before the next
// holder gets it, the recovery guard runs: an index snapshot the dead
// holder registered (a commit in flight) is put back.
type Leases struct {
	mu       sync.Mutex
	now      func() time.Time
	held     map[string]*lease // by workdir alias
	stateDir string            // private: index snapshots of guards
	roots    map[string]string // alias -> host root (to restore an index)
}

type lease struct {
	id      string
	purpose string
	expires time.Time
	guard   string // path of an index snapshot to restore if the holder dies
}

// Lease timing.
const (
	DefaultLeaseTTL = 30 * time.Second
	MaxLeaseTTL     = 10 * time.Minute
)

// NewLeases returns the lease table; stateDir holds guard snapshots.
func NewLeases(stateDir string, roots map[string]string) *Leases {
	return &Leases{now: time.Now, held: map[string]*lease{}, stateDir: stateDir, roots: roots}
}

// RecoverAll applies the guards a previous bridge process left behind: a
// bridge that died held every lease it had granted, so each snapshot in
// the state directory belongs to a commit that never finished. It runs
// before the new bridge grants any lease.
func (l *Leases) RecoverAll() (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for alias := range l.roots {
		snap := filepath.Join(l.stateDir, "guard-"+alias+".index")
		if _, err := os.Stat(snap); err != nil {
			continue
		}
		if err := l.recover(alias, &lease{guard: snap}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func busy(alias, purpose string) error {
	return &sfs.Error{Code: sfs.CodeLeaseBusy, Workdir: alias, Msg: fmt.Sprintf("is busy: another change (%s) holds its writer lease; try again", purpose)}
}

// Acquire takes the workdir's lease for ttl, or answers LEASE_BUSY. An
// expired lease is taken over after its guard is applied.
func (l *Leases) Acquire(alias, purpose string, ttl time.Duration) (string, error) {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	ttl = min(ttl, MaxLeaseTTL)
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur := l.held[alias]; cur != nil {
		if l.now().Before(cur.expires) {
			return "", busy(alias, cur.purpose)
		}
		if err := l.recover(alias, cur); err != nil {
			return "", err
		}
	}
	var b [16]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	l.held[alias] = &lease{id: id, purpose: purpose, expires: l.now().Add(ttl)}
	return id, nil
}

func (l *Leases) get(alias, id string) (*lease, error) {
	cur := l.held[alias]
	if cur == nil || cur.id != id || !l.now().Before(cur.expires) {
		return nil, &sfs.Error{Code: sfs.CodeLeaseBusy, Workdir: alias, Msg: "the writer lease was lost (expired or released); start again"}
	}
	return cur, nil
}

// Renew extends a held lease by ttl (the holder's heartbeat).
func (l *Leases) Renew(alias, id string, ttl time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur, err := l.get(alias, id)
	if err != nil {
		return err
	}
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	cur.expires = l.now().Add(min(ttl, MaxLeaseTTL))
	return nil
}

// Release ends a held lease; its guard is discarded (the holder finished).
func (l *Leases) Release(alias, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur, err := l.get(alias, id)
	if err != nil {
		return err
	}
	if cur.guard != "" {
		os.Remove(cur.guard)
	}
	delete(l.held, alias)
	return nil
}

// GuardIndex snapshots the workdir's .git/index under a held lease: if the
// holder dies before Release, the snapshot is restored before anyone
// else gets the lease (a half-done commit leaves the index as it was).
func (l *Leases) GuardIndex(alias, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur, err := l.get(alias, id)
	if err != nil {
		return err
	}
	root, ok := l.roots[alias]
	if !ok {
		return &sfs.Error{Code: sfs.CodeWorkdirNotFound, Msg: "no such workdir on the bridge"}
	}
	data, err := os.ReadFile(filepath.Join(root, ".git", "index"))
	if os.IsNotExist(err) {
		data, err = nil, nil
	}
	if err != nil {
		return fmt.Errorf("guard: reading the index: %w", err)
	}
	snap := filepath.Join(l.stateDir, "guard-"+alias+".index")
	if err := leaseWriteFile(snap, data, 0o600); err != nil {
		return fmt.Errorf("guard: %w", err)
	}
	cur.guard = snap
	return nil
}

// recover applies a dead holder's guard: the index snapshot goes back in
// place and a leftover index.lock (the dead commit's) is removed.
func (l *Leases) recover(alias string, dead *lease) error {
	delete(l.held, alias)
	if dead.guard == "" {
		return nil
	}
	root := l.roots[alias]
	data, err := os.ReadFile(dead.guard)
	if err != nil {
		return fmt.Errorf("recovery guard: %w", err)
	}
	if err := leaseWriteFile(filepath.Join(root, ".git", "index"), data, 0o644); err != nil {
		return fmt.Errorf("recovery guard: restoring the index: %w", err)
	}
	os.Remove(filepath.Join(root, ".git", "index.lock"))
	os.Remove(dead.guard)
	return nil
}

// leaseWriteFile writes data to name through a temporary in the same
// directory, fsynced and renamed.
func leaseWriteFile(name string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".serverfs-bridge-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}
