package bridge

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The grant state of a bridge lives in <state-dir>/grants/: state.json
// (uses per grant, the nonce each grant carried, revocations), replaced
// atomically (temporary file, fsync, rename, fsync of the directory)
// under an flock that `serverfs grant revoke` takes too, and ledger.jsonl,
// the append-only audit log (one fsynced JSON line per verification,
// run or revocation; rotated once to ledger.jsonl.1 past
// MaxLedgerBytes).

// Grant state bounds.
const (
	// MaxLedgerBytes is the size past which the ledger is rotated (one
	// older generation, ledger.jsonl.1, is kept).
	MaxLedgerBytes = 16 << 20
	// MaxLiveGrants bounds the grants state.json tracks; an entry goes
	// pruneMargin after its grant is past expiry (plus GrantClockSkew), when no
	// bridge accepts it any more.
	MaxLiveGrants = 10000
	// maxStateBytes bounds the state file read back.
	maxStateBytes = 8 << 20
	// pruneMargin is how long past its Until an entry is kept: longer
	// than any call can wait for the locks between its own checks and
	// the update, so no call finds the entry of a grant it accepted
	// already pruned (and counts its uses from zero again).
	pruneMargin = 10 * time.Minute
)

// GrantStateDir is the grant directory inside a bridge state directory.
func GrantStateDir(stateDir string) string { return filepath.Join(stateDir, "grants") }

// grantState is state.json.
type grantState struct {
	// Grants by grant_id: its nonce, uses so far, and until when the
	// entry matters (expires_at + skew, Unix seconds).
	Grants map[string]*grantUse `json:"grants"`
	// Revoked: grant_id -> until when the revocation is kept (Unix
	// seconds).
	Revoked map[string]int64 `json:"revoked"`
}

type grantUse struct {
	Nonce string `json:"nonce"`
	Uses  int    `json:"uses"`
	Until int64  `json:"until"`
}

// GrantStore is a bridge's grant state directory.
type GrantStore struct {
	dir string
	mu  sync.Mutex // this process; the flock serialises processes
	// now is the clock read under the locks (time.Now; tests move it).
	now func() time.Time
}

func (s *GrantStore) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// OpenGrantStore creates (0700) and opens the grant directory of stateDir.
func OpenGrantStore(stateDir string) (*GrantStore, error) {
	if stateDir == "" {
		return nil, errors.New("grants need a state directory")
	}
	dir := GrantStateDir(stateDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("the grant state directory: %s", describeFSError(err))
	}
	return &GrantStore{dir: dir}, nil
}

// ExistingGrantStore opens the grant directory of stateDir that a bridge
// with grants created; it refuses a directory without one (most likely
// not the bridge's --state-dir).
func ExistingGrantStore(stateDir string) (*GrantStore, error) {
	dir := GrantStateDir(stateDir)
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return nil, errors.New("no grant state there: give the bridge's --state-dir (a bridge with grant keys creates grants/ in it at start)")
	}
	return &GrantStore{dir: dir}, nil
}

// update runs fn on the state under the locks and writes the state back
// when fn reports a change. fn gets the time read once the locks are
// held, the one both pruning and its own expiry checks use: a caller
// that waited for the locks decides on the time it acts at, not the time
// it started. Entries expired more than pruneMargin ago are pruned first.
func (s *GrantStore) update(fn func(st *grantState, now time.Time) (changed bool, err error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	lock, err := os.OpenFile(filepath.Join(s.dir, "lock"), os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return err
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	st, err := s.read()
	if err != nil {
		return err
	}
	now := s.clock()
	pruned := st.prune(now.Add(-pruneMargin))
	changed, err := fn(st, now)
	if err != nil || !(changed || pruned) {
		return err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return atomicWriteFile(filepath.Join(s.dir, "state.json"), b, 0o600)
}

func (s *GrantStore) read() (*grantState, error) {
	st := &grantState{Grants: map[string]*grantUse{}, Revoked: map[string]int64{}}
	f, err := os.OpenFile(filepath.Join(s.dir, "state.json"), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStateBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxStateBytes {
		return nil, errors.New("the grant state file is too large")
	}
	// Written by atomic rename only: a file that does not decode is
	// damage, and refusing every grant is the safe answer.
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("the grant state file is damaged: %v", err)
	}
	if st.Grants == nil {
		st.Grants = map[string]*grantUse{}
	}
	if st.Revoked == nil {
		st.Revoked = map[string]int64{}
	}
	return st, nil
}

// prune drops entries whose Until is before cutoff: their grant is
// refused as expired anyway.
func (st *grantState) prune(cutoff time.Time) bool {
	n := cutoff.Unix()
	changed := false
	for id, u := range st.Grants {
		if u.Until < n {
			delete(st.Grants, id)
			changed = true
		}
	}
	for id, until := range st.Revoked {
		if until < n {
			delete(st.Revoked, id)
			changed = true
		}
	}
	return changed
}

// Revoke records that grantID must not run again. The revocation is
// kept as long as any grant with that id could still be accepted: past
// its expiry when the bridge has seen it, else for the longest lifetime
// a grant issued before now can have.
func (s *GrantStore) Revoke(grantID string, now time.Time) error {
	if !grantIDRE.MatchString(grantID) {
		return errors.New("a grant id is 8 to 64 letters, digits, _ or -")
	}
	err := s.update(func(st *grantState, _ time.Time) (bool, error) {
		until := now.Add(MaxGrantTTL + 2*GrantClockSkew).Unix()
		if u := st.Grants[grantID]; u != nil && u.Until > until {
			until = u.Until
		}
		st.Revoked[grantID] = until
		return true, nil
	})
	if err != nil {
		return err
	}
	return s.Append(LedgerEntry{Event: "revoked", GrantID: grantID, Outcome: "revoked"}, now)
}

// LedgerEntry is one line of the audit ledger. It never holds an argv
// (its hash only) or a host path (the workdir alias only). Before the
// signature is verified, grant_id, key_id and argv_hash are what the
// grant claimed.
type LedgerEntry struct {
	Time     string `json:"time"`
	Event    string `json:"event"` // "run" or "revoked"
	GrantID  string `json:"grant_id,omitempty"`
	KeyID    string `json:"key_id,omitempty"`
	ArgvHash string `json:"argv_hash,omitempty"`
	Workdir  string `json:"workdir,omitempty"`
	// Outcome is "ran" (the command ran; ExitCode and Sandbox say how),
	// "failed" (it was allowed but stopped or could not start: Code
	// says why), "refused" (Code, nothing ran) or "revoked".
	Outcome  string `json:"outcome"`
	Code     string `json:"code,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Sandbox  string `json:"sandbox,omitempty"`
	Uses     int    `json:"uses,omitempty"`
}

// Append writes one fsynced line to the ledger (O_APPEND: lines of
// concurrent writers never interleave), rotating it first when it has
// grown past MaxLedgerBytes.
func (s *GrantStore) Append(e LedgerEntry, now time.Time) error {
	e.Time = now.UTC().Format(time.RFC3339Nano)
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	name := filepath.Join(s.dir, "ledger.jsonl")
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, err := os.Lstat(name); err == nil && st.Size() > MaxLedgerBytes {
		os.Rename(name, name+".1")
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		return err
	}
	return f.Sync()
}

// Ledger reads the ledger, oldest line first (the rotated generation,
// then the current file). A line a crash cut short is skipped.
func (s *GrantStore) Ledger() ([]LedgerEntry, error) {
	var out []LedgerEntry
	for _, name := range []string{"ledger.jsonl.1", "ledger.jsonl"} {
		f, err := os.OpenFile(filepath.Join(s.dir, name), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 64<<10)
		for sc.Scan() {
			var e LedgerEntry
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				out = append(out, e)
			}
		}
		f.Close()
	}
	return out, nil
}
