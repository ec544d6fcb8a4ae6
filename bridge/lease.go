package bridge

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/serverfs/serverfs/bridge/wire"
	"github.com/serverfs/serverfs/internal/errs"
)

// Leases are the bridge's exclusive writer leases, one per workdir,
// shared by every process that changes a workdir: the MCP server's writes
// and commits, and the bridge's own actions and pushes. A lease expires
// when its holder stops renewing it (a crashed server); before the next
// holder gets it, the recovery guard runs: a commit the dead holder had in
// flight is finished or undone (see GuardCommit).
type Leases struct {
	mu       sync.Mutex
	now      func() time.Time
	held     map[string]*lease // by workdir alias
	stateDir string            // private: the guards of commits in flight
	roots    map[string]string // alias -> host root (to restore an index)
}

type lease struct {
	id      string
	purpose string
	expires time.Time
	guard   string // path of the commit guard to apply if the holder dies
}

// Lease timing.
const (
	DefaultLeaseTTL = wire.DefaultLeaseTTL
	MaxLeaseTTL     = 10 * time.Minute
)

// NewLeases returns the lease table; stateDir holds guard snapshots.
func NewLeases(stateDir string, roots map[string]string) *Leases {
	return &Leases{now: time.Now, held: map[string]*lease{}, stateDir: stateDir, roots: roots}
}

// RecoverAll takes over the guards a previous bridge process left behind
// (a bridge that died held every lease it had granted): each becomes a
// lease that expires one TTL from now, so that a commit still running in
// the server can finish; after that the guard is applied before anyone
// gets the lease. It runs before the new bridge grants any lease.
func (l *Leases) RecoverAll() (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for alias := range l.roots {
		file := filepath.Join(l.stateDir, "guard-"+alias+".json")
		if _, err := os.Stat(file); err != nil {
			continue
		}
		// The holder may still be alive (only the bridge died): it gets a
		// lease's time to finish before the guard is applied.
		l.held[alias] = &lease{id: "recovered", purpose: "a commit in flight when the bridge restarted", expires: l.now().Add(DefaultLeaseTTL), guard: file}
		n++
	}
	return n, nil
}

func busy(alias, purpose string) error {
	return errs.At(errs.LeaseBusy, alias, "", fmt.Sprintf("is busy: another change (%s) holds its writer lease; try again", purpose))
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
		return nil, errs.At(errs.LeaseBusy, alias, "", "the writer lease was lost (expired or released); start again")
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

// commitGuard is what a commit in flight registers: its index.lock (by
// inode, so that a lock another git took is never touched), and the ref
// it is about to move with the value it had.
type commitGuard struct {
	// The lock by inode, size and its last 20 bytes (an index ends with
	// the SHA-1 of its content): inode numbers alone are reused.
	LockIno  uint64 `json:"lock_ino"`
	LockSize int64  `json:"lock_size"`
	LockSum  string `json:"lock_sum"`
	Ref      string `json:"ref"` // "refs/heads/<b>" or "HEAD"
	Old      string `json:"old"` // the ref's value before the commit ("" before the first)
}

// GuardCommit registers, under a held lease, the commit the holder is
// making, once its .git/index.lock holds the complete new index and just
// before the ref moves. If the holder dies before
// Release, the next holder first gets the commit finished or undone:
// when the ref still has its old value the lock is removed (the index
// never changed); when the ref moved the lock, which holds the complete
// new index, is renamed into place (what the dead commit would have done
// next). A lock that is not the guarded one is left alone.
func (l *Leases) GuardCommit(alias, id, ref, old string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur, err := l.get(alias, id)
	if err != nil {
		return err
	}
	root, ok := l.roots[alias]
	if !ok {
		return errs.New(errs.WorkdirNotFound, "no such workdir on the bridge")
	}
	if ref != "HEAD" && !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") {
		return errs.New(errs.InvalidArgument, "a guard names HEAD or a branch ref")
	}
	ino, size, sum, err := lockIdentity(filepath.Join(root, ".git", "index.lock"))
	if err != nil {
		return errs.At(errs.InvalidArgument, alias, "", "no complete index.lock to guard").Wrap(err)
	}
	g := commitGuard{LockIno: ino, LockSize: size, LockSum: sum, Ref: ref, Old: old}
	b, _ := json.Marshal(g)
	file := filepath.Join(l.stateDir, "guard-"+alias+".json")
	if err := atomicWriteFile(file, b, 0o600); err != nil {
		return fmt.Errorf("guard: %w", err)
	}
	cur.guard = file
	return nil
}

// recover applies a dead holder's guard (see GuardCommit).
func (l *Leases) recover(alias string, dead *lease) error {
	delete(l.held, alias)
	if dead.guard == "" {
		return nil
	}
	defer os.Remove(dead.guard)
	b, err := os.ReadFile(dead.guard)
	if err != nil {
		return nil // nothing to do
	}
	var g commitGuard
	if json.Unmarshal(b, &g) != nil {
		return nil
	}
	gitDir := filepath.Join(l.roots[alias], ".git")
	lock := filepath.Join(gitDir, "index.lock")
	if ino, size, sum, err := lockIdentity(lock); err != nil || ino != g.LockIno || size != g.LockSize || sum != g.LockSum {
		return nil // the commit finished (or someone else holds a new lock)
	}
	if readRef(gitDir, g.Ref) == g.Old {
		return os.Remove(lock) // the ref never moved: undo
	}
	return os.Rename(lock, filepath.Join(gitDir, "index")) // the ref moved: finish
}

// readRef is a ref's value as git resolves it: the loose ref file, else
// its line in packed-refs; "" when it has none.
func readRef(gitDir, ref string) string {
	if b, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(ref))); err == nil {
		return strings.TrimSpace(string(b))
	}
	b, err := os.ReadFile(filepath.Join(gitDir, "packed-refs"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if h, name, ok := strings.Cut(strings.TrimSpace(line), " "); ok && name == ref {
			return h
		}
	}
	return ""
}

// lockIdentity is an index lock's inode, size and last 20 bytes (the
// index's own SHA-1 trailer), without following a symlink.
func lockIdentity(name string) (ino uint64, size int64, sum string, err error) {
	f, err := os.OpenFile(name, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return 0, 0, "", err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0, 0, "", err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size < 32 {
		return 0, 0, "", fmt.Errorf("not a complete index")
	}
	var tail [20]byte
	if _, err := f.ReadAt(tail[:], st.Size-20); err != nil {
		return 0, 0, "", err
	}
	return st.Ino, st.Size, hex.EncodeToString(tail[:]), nil
}

// atomicWriteFile writes data to name with mode perm through a temporary
// in the same directory: written, fsynced, renamed, and the directory
// fsynced. A reader sees the old file or the new one, never a part.
func atomicWriteFile(name string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(name)
	f, err := os.CreateTemp(dir, ".serverfs-bridge-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, name); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		serr := d.Sync()
		d.Close()
		if serr != nil && !errors.Is(serr, syscall.EINVAL) {
			return serr
		}
	}
	return nil
}
