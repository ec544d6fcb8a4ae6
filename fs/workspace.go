package fs

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

// Workspaces are private checkouts of a repository workdir,
// served as workdirs of their own, "ALIAS@ID". Package workspace creates
// and stores them; this file only makes one reachable through the same
// resolver, policy and limits as every configured workdir, so that every
// tool (reads, searches, writes, revision guards) works on it unchanged.

// WorkspaceIDLen is the length of a workspace ID: 16 characters of
// lower-case base32 (a-z, 2-7), 80 random bits.
const WorkspaceIDLen = 16

var workspaceIDRE = regexp.MustCompile(`^[a-z2-7]{16}$`)

// ValidWorkspaceID reports whether id has the form of a workspace ID. It
// is checked before an ID is used in any name, so that no hostile ID
// ("../x", "a/b", "@", a long one) reaches the storage.
func ValidWorkspaceID(id string) bool { return workspaceIDRE.MatchString(id) }

// SplitWorkspaceAlias splits "ALIAS@ID" into the parent alias and the ID;
// ok is false unless both parts are well formed (an alias by the
// configuration's rule, an ID by ValidWorkspaceID).
func SplitWorkspaceAlias(s string) (parent, id string, ok bool) {
	parent, id, found := strings.Cut(s, "@")
	if !found || !aliasRE.MatchString(parent) || !ValidWorkspaceID(id) {
		return "", "", false
	}
	return parent, id, true
}

// WorkspaceMeta is what list_workdirs shows of a workspace besides its
// alias and mode.
type WorkspaceMeta struct {
	// Base is the full commit id the workspace was checked out at.
	Base string
	// Owner names the caller that created it (see package workspace).
	Owner string
	// Created is when it was created.
	Created time.Time
}

// workspaceDetachDelay is how long a detached workspace's root
// descriptor stays open: a request that looked the workspace up just
// before it was discarded may still use the descriptor number, which
// must not be reused for another directory meanwhile. Longer than any
// request runs (searches stop at SERVERFS_SEARCH_TIMEOUT_SECONDS, at most
// 300 s). Its directory is gone already, so such a request finds nothing.
const workspaceDetachDelay = 15 * time.Minute

// AttachWorkspace makes the directory open at rootFD (an O_PATH or
// O_RDONLY directory descriptor, handed over: the FS closes it) reachable
// as the rw workdir "parent@id", with parent's description and the FS's
// policy and limits. It has no repository tools (no .git: RepoOps is
// false). Attaching an alias twice is an error.
func (f *FS) AttachWorkspace(parent, id string, rootFD int, meta WorkspaceMeta) (*Workdir, error) {
	p, ok := f.byAlias[parent]
	if !ok || !ValidWorkspaceID(id) {
		unix.Close(rootFD)
		return nil, errs.New(errs.InvalidArgument, "not a workspace of a configured workdir")
	}
	alias := parent + "@" + id
	w := &Workdir{alias: alias, description: p.description, mode: ModeReadWrite, rootFD: rootFD, open: p.open, policy: p.policy, workspace: &meta}
	f.wsMu.Lock()
	defer f.wsMu.Unlock()
	if f.spaces == nil {
		f.spaces = map[string]*Workdir{}
	}
	if _, dup := f.spaces[alias]; dup {
		unix.Close(rootFD)
		return nil, errs.At(errs.InvalidArgument, alias, "", "is attached already")
	}
	f.spaces[alias] = w
	return w, nil
}

// DetachWorkspace makes the workspace alias unreachable (WORKDIR_NOT_FOUND
// from then on) and reports whether it was attached. Its root descriptor
// is closed after workspaceDetachDelay (or by Close), not at once.
func (f *FS) DetachWorkspace(alias string) bool {
	f.wsMu.Lock()
	w, ok := f.spaces[alias]
	delete(f.spaces, alias)
	f.wsMu.Unlock()
	if !ok {
		return false
	}
	fd := w.rootFD
	f.wsMu.Lock()
	f.detached = append(f.detached, fd)
	f.wsMu.Unlock()
	time.AfterFunc(workspaceDetachDelay, func() {
		f.wsMu.Lock()
		defer f.wsMu.Unlock()
		for i, d := range f.detached {
			if d == fd {
				f.detached = append(f.detached[:i], f.detached[i+1:]...)
				unix.Close(fd)
				return
			}
		}
	})
	return true
}

// WorkspaceLimits are the workspace settings the tool descriptions
// state; package workspace sets them when it serves workspaces.
type WorkspaceLimits struct {
	PerWorkdir, MaxFiles int
	MaxBytes             int64
	MaxAge               time.Duration
}

// EnableWorkspaces records that workspaces are served, with these
// limits (package workspace calls it once, before serving).
func (f *FS) EnableWorkspaces(l WorkspaceLimits) {
	f.wsMu.Lock()
	f.wsLimits = &l
	f.wsMu.Unlock()
}

// Workspaces returns the workspace limits and true when workspaces are
// served (EnableWorkspaces was called).
func (f *FS) Workspaces() (WorkspaceLimits, bool) {
	f.wsMu.RLock()
	defer f.wsMu.RUnlock()
	if f.wsLimits == nil {
		return WorkspaceLimits{}, false
	}
	return *f.wsLimits, true
}

// workspaceLease serves the leases of workspaces (aliases with '@') in
// process and those of configured workdirs from the shared lease.
type workspaceLease struct{ shared, local WriterLease }

func (l workspaceLease) Acquire(ctx context.Context, workdir string) (func(), error) {
	if strings.Contains(workdir, "@") {
		return l.local.Acquire(ctx, workdir)
	}
	return l.shared.Acquire(ctx, workdir)
}

var _ CommitGuard = workspaceLease{}

// GuardCommit forwards to the shared lease's commit guard (the host
// bridge's), so that wrapping it changes nothing for package git.
func (l workspaceLease) GuardCommit(ctx context.Context, workdir, ref, old string) error {
	if g, ok := l.shared.(CommitGuard); ok && !strings.Contains(workdir, "@") {
		return g.GuardCommit(ctx, workdir, ref, old)
	}
	return nil
}

// workspace returns the attached workspace alias, or nil.
func (f *FS) workspace(alias string) *Workdir {
	f.wsMu.RLock()
	defer f.wsMu.RUnlock()
	return f.spaces[alias]
}

// workspaceInfos lists the attached workspaces sorted by alias.
func (f *FS) workspaceInfos() []WorkdirInfo {
	f.wsMu.RLock()
	out := make([]WorkdirInfo, 0, len(f.spaces))
	for _, w := range f.spaces {
		out = append(out, w.Info())
	}
	f.wsMu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Alias < out[j].Alias })
	return out
}

// closeWorkspaces closes every workspace descriptor (FS.Close).
func (f *FS) closeWorkspaces() {
	f.wsMu.Lock()
	defer f.wsMu.Unlock()
	for _, w := range f.spaces {
		unix.Close(w.rootFD)
		w.rootFD = -1
	}
	f.spaces = nil
	for _, fd := range f.detached {
		unix.Close(fd)
	}
	f.detached = nil
}

// InsideOf reports whether some ancestor of the workdir's root (the
// root's parent, its parent, ... up to "/", followed through ".." from
// the root descriptor, at most 4096 levels) is a directory match reports
// true for (by device and inode).
func (w *Workdir) InsideOf(match func(dev, ino uint64) bool) bool {
	fd, err := unix.Openat(w.rootFD, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer func() { unix.Close(fd) }()
	var prev unix.Stat_t
	unix.Fstat(fd, &prev)
	for range 4096 {
		up, err := unix.Openat(fd, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return false
		}
		unix.Close(fd)
		fd = up
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Dev == prev.Dev && st.Ino == prev.Ino {
			return false // "/": its ".." is itself
		}
		if match(uint64(st.Dev), st.Ino) {
			return true
		}
		prev = st
	}
	return false
}

// Workspace reports the workspace metadata of w, or nil when w is a
// configured workdir.
func (w *Workdir) Workspace() *WorkspaceMeta { return w.workspace }

// workspaceNotFound is WORKDIR_NOT_FOUND for an alias with '@'.
func workspaceNotFound(alias string) error {
	return errs.New(errs.WorkdirNotFound, fmt.Sprintf("%q: no workspace has this alias (discarded, expired, or never created; list_workspaces lists them)", displayPath(alias)))
}

// age renders how long ago t was, to the minute ("3m", "2h5m", "4d3h").
func age(t, now time.Time) string {
	d := now.Sub(t)
	if d < time.Minute {
		return "0m"
	}
	days := int(d / (24 * time.Hour))
	d -= time.Duration(days) * 24 * time.Hour
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case days > 0:
		return fmt.Sprintf("%dd%dh", days, h)
	case h > 0:
		return fmt.Sprintf("%dh%dm", h, m)
	}
	return fmt.Sprintf("%dm", m)
}
