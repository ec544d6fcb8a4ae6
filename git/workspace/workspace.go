// Package workspace keeps isolated workspaces: private
// checkouts of a repository workdir's commit, each served by every file
// tool as a workdir of its own, "ALIAS@ID", so that one agent's task never
// edits the live tree another agent or a service reads.
//
// A workspace is created from git objects in process (Repo.Checkout: no
// git process, no .git in it) in server-owned storage outside every
// workdir: <state dir>/workspaces/<ID>/tree, beside its meta.json. It is
// attached to the FS (fs.FS.AttachWorkspace) with the parent's policy and
// limits, so hidden and deny rules, revision guards and write limits
// apply unchanged, and the live repository's .git is not in it at all.
//
// The API other packages use (the merge queue of submit_workspace):
//
//   - Manager.Get(ws) answers, for "ALIAS@ID", the Workspace (parent
//     workdir alias, base commit, branch at creation, owner, creation
//     time) and the *fs.Workdir that serves its files through the policy
//     (the same object the read and write tools use; its Control reads
//     beneath the root without the hidden rules, for engines).
//   - Manager.Parent(ws) is the live repository's workdir: git.Open(fs,
//     Workspace.Parent) opens the repository.
//   - Manager.Discard removes one; Manager.List lists them.
//
// Writes to a workspace take the writer lease of its own alias
// (fs.FS.Lease, key "ALIAS@ID"), as writes to any workdir do; a submit
// holds the same key to see a quiet tree.
package workspace

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git"
	"github.com/serverfs/serverfs/internal/errs"
)

// Workspace describes one workspace.
type Workspace struct {
	// Alias is "ALIAS@ID", the workdir alias every file tool takes.
	Alias string `json:"workspace"`
	// ID is the random part of Alias.
	ID string `json:"-"`
	// Parent is the alias of the workdir (and live repository) it was
	// checked out from.
	Parent string `json:"workdir"`
	// Base is the full id of the commit checked out.
	Base string `json:"base"`
	// Branch is the local branch the base was taken from (the branch
	// HEAD was on for base HEAD); "" for a tag, a commit id or a
	// detached HEAD.
	Branch string `json:"branch,omitempty"`
	// Owner names the caller that created it (mcp: the MCP client's
	// name and a digest of its session id).
	Owner string `json:"owner,omitempty"`
	// Created is when it was created (UTC).
	Created time.Time `json:"created_at"`
	// Files and Bytes are what the checkout wrote.
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

// Manager creates, lists and discards the workspaces of one FS. It is
// safe for concurrent use.
type Manager struct {
	fs   *sfs.FS
	cfg  Config
	root string // <state>/workspaces, server-owned
	now  func() time.Time

	mu       sync.Mutex
	spaces   map[string]*Workspace // by alias
	pending  map[string]int        // creations in progress per parent
	closed   bool
	discards int // removals, for tests
}

// StartReport says what Open found in the state directory.
type StartReport struct {
	// Attached workspaces are served again; Expired ones (older than
	// MaxAge) and Incomplete ones (a creation that did not finish) were
	// removed; Orphaned ones belong to a workdir no longer configured
	// (or no longer rw with repo ops) and are kept until they expire.
	Attached, Expired, Incomplete, Orphaned int
}

const metaFile = "meta.json"

// Open prepares the state directory (creating <dir>/workspaces, 0700),
// removes the workspaces older than cfg.MaxAge and the unfinished ones,
// and attaches the others to f. The server calls it once at start-up.
func Open(f *sfs.FS, cfg Config) (*Manager, StartReport, error) {
	var rep StartReport
	cfg = cfg.withDefaults()
	if cfg.StateDir == "" || !filepath.IsAbs(cfg.StateDir) {
		return nil, rep, errors.New("workspaces need an absolute state directory (SERVERFS_STATE_DIR or --state-dir)")
	}
	if err := outsideWorkdirs(f, filepath.Clean(cfg.StateDir)); err != nil {
		return nil, rep, err
	}
	root := filepath.Join(filepath.Clean(cfg.StateDir), "workspaces")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, rep, fmt.Errorf("SERVERFS_STATE_DIR: cannot create its workspaces directory: %v", unwrapPath(err))
	}
	m := &Manager{fs: f, cfg: cfg, root: root, now: time.Now, spaces: map[string]*Workspace{}, pending: map[string]int{}}
	f.EnableWorkspaces(cfg.Limits())
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, rep, fmt.Errorf("SERVERFS_STATE_DIR: cannot read its workspaces directory: %v", unwrapPath(err))
	}
	for _, e := range ents {
		name := e.Name()
		if !sfs.ValidWorkspaceID(strings.TrimSuffix(name, ".tmp")) {
			continue // not ours: left alone
		}
		ws, err := m.readMeta(name)
		switch {
		case err != nil || strings.HasSuffix(name, ".tmp"):
			m.remove(name)
			rep.Incomplete++
		case m.now().Sub(ws.Created) > cfg.MaxAge:
			m.remove(name)
			rep.Expired++
		case m.eligible(ws.Parent) != nil:
			rep.Orphaned++
		default:
			if err := m.attach(ws); err != nil {
				rep.Orphaned++
				continue
			}
			rep.Attached++
		}
	}
	return m, rep, nil
}

// outsideWorkdirs refuses a state directory inside a workdir (or one
// that is a workdir): its parent's tools would serve the workspaces'
// files, and its meta files, as the workdir's own; and a workdir inside
// the state directory, which would serve every workspace and its
// metadata through one alias. It compares devices and inodes: of the
// directory and each of its ancestors (those that exist) with each
// workdir root, and of each workdir root's ancestors (through "..", from
// its descriptor) with the directory.
func outsideWorkdirs(f *sfs.FS, dir string) error {
	type key struct{ dev, ino uint64 }
	roots := map[key]string{}
	for _, w := range f.ConfiguredWorkdirs() {
		st, err := w.Control().Lstat("")
		if err != nil {
			return fmt.Errorf("workdir %q: cannot inspect its root: %v", w.Alias(), err)
		}
		roots[key{st.Dev, st.Ino}] = w.Alias()
	}
	for d := dir; ; d = filepath.Dir(d) {
		var st unix.Stat_t
		if unix.Stat(d, &st) == nil {
			if a, ok := roots[key{uint64(st.Dev), st.Ino}]; ok {
				return fmt.Errorf("SERVERFS_STATE_DIR is inside the workdir %q (or is it): workspaces must be stored outside every workdir", a)
			}
		}
		if d == "/" || d == "." {
			break
		}
	}
	var sd unix.Stat_t
	if unix.Stat(dir, &sd) != nil {
		return nil // created later, empty: no workdir can be inside it
	}
	state := key{uint64(sd.Dev), sd.Ino}
	for _, w := range f.ConfiguredWorkdirs() {
		if w.InsideOf(func(dev, ino uint64) bool { return key{dev, ino} == state }) {
			return fmt.Errorf("the workdir %q is inside SERVERFS_STATE_DIR: it would serve every workspace; store workspaces elsewhere", w.Alias())
		}
	}
	return nil
}

// unwrapPath drops the host path from an *os.PathError.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (m *Manager) readMeta(name string) (*Workspace, error) {
	b, err := os.ReadFile(filepath.Join(m.root, name, metaFile))
	if err != nil {
		return nil, err
	}
	var ws Workspace
	if err := json.Unmarshal(b, &struct {
		*Workspace
		ID *string `json:"id"`
	}{&ws, &ws.ID}); err != nil {
		return nil, err
	}
	if ws.ID != name || ws.Alias != ws.Parent+"@"+ws.ID {
		return nil, errors.New("meta.json does not match its directory")
	}
	if _, _, ok := sfs.SplitWorkspaceAlias(ws.Alias); !ok {
		return nil, errors.New("meta.json names no workspace")
	}
	return &ws, nil
}

func (m *Manager) writeMeta(dir string, ws *Workspace) error {
	b, err := json.Marshal(struct {
		*Workspace
		ID string `json:"id"`
	}{ws, ws.ID})
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, metaFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
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
	return os.Rename(tmp, filepath.Join(dir, metaFile))
}

// attach opens the workspace's tree and attaches it to the FS.
func (m *Manager) attach(ws *Workspace) error {
	fd, err := unix.Open(filepath.Join(m.root, ws.ID, "tree"), unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	if _, err := m.fs.AttachWorkspace(ws.Parent, ws.ID, fd, sfs.WorkspaceMeta{Base: ws.Base, Owner: ws.Owner, Created: ws.Created}); err != nil {
		return err
	}
	m.mu.Lock()
	m.spaces[ws.Alias] = ws
	m.mu.Unlock()
	return nil
}

// remove deletes a workspace directory (never following a symlink:
// os.RemoveAll works beneath directory descriptors).
func (m *Manager) remove(name string) {
	os.RemoveAll(filepath.Join(m.root, name))
	m.mu.Lock()
	m.discards++
	m.mu.Unlock()
}

// eligible reports why workspaces of alias cannot exist, or nil: the
// workdir must be configured, rw and have repo ops.
func (m *Manager) eligible(alias string) error {
	w, err := m.fs.Workdir(alias)
	if err != nil {
		return err
	}
	if w.Workspace() != nil {
		return errs.At(errs.InvalidArgument, alias, "", "is a workspace; create a workspace of the workdir it came from")
	}
	if !w.RepoOps() {
		return errs.At(errs.RepoOpsDisabled, alias, "", "has no repository tools; workspaces need an rw workdir with repo ops")
	}
	if w.Mode() != sfs.ModeReadWrite {
		return errs.At(errs.WorkdirReadOnly, alias, "", "is read-only; workspaces need an rw workdir with repo ops")
	}
	return nil
}

// newID returns a fresh random workspace ID (80 bits).
func newID() string {
	var b [10]byte
	rand.Read(b[:])
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// Create checks out base ("" means HEAD; a local branch, a tag or a
// commit id, as read_repo_history takes) of the workdir parent into a
// new workspace and attaches it. At most Config.Limit workspaces of one
// workdir exist at a time (WORKSPACE_LIMIT); the checkout is bounded by
// MaxFiles, MaxBytes (WORKSPACE_TOO_LARGE) and Timeout. On any error
// nothing is left behind.
func (m *Manager) Create(ctx context.Context, parent, base, owner string) (Workspace, error) {
	if err := m.eligible(parent); err != nil {
		return Workspace{}, err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return Workspace{}, errs.New(errs.Canceled, "the server is shutting down")
	}
	n := m.pending[parent]
	for _, ws := range m.spaces {
		if ws.Parent == parent {
			n++
		}
	}
	if n >= m.cfg.Limit {
		m.mu.Unlock()
		return Workspace{}, errs.At(errs.WorkspaceLimit, parent, "", fmt.Sprintf("has %d active workspaces, the limit (SERVERFS_WORKSPACE_LIMIT); discard one with discard_workspace first", m.cfg.Limit))
	}
	m.pending[parent]++
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.pending[parent]--
		m.mu.Unlock()
	}()

	repo, err := git.Open(m.fs, parent)
	if err != nil {
		return Workspace{}, err
	}
	id := newID()
	tmpName := id + ".tmp"
	dir := filepath.Join(m.root, tmpName)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return Workspace{}, m.storageErr(parent, err)
	}
	ok := false
	defer func() {
		if !ok {
			m.remove(tmpName)
		}
	}()
	if err := os.Mkdir(filepath.Join(dir, "tree"), 0o755); err != nil {
		return Workspace{}, m.storageErr(parent, err)
	}
	treeFD, err := unix.Open(filepath.Join(dir, "tree"), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return Workspace{}, m.storageErr(parent, err)
	}
	cctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	res, err := repo.Checkout(cctx, base, treeFD, git.CheckoutLimits{MaxFiles: m.cfg.MaxFiles, MaxBytes: m.cfg.MaxBytes})
	timedOut := cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil
	cancel()
	unix.Close(treeFD)
	if err != nil {
		if timedOut {
			return Workspace{}, errs.At(errs.WorkspaceTooLarge, parent, "", fmt.Sprintf("the checkout did not finish within %s (SERVERFS_WORKSPACE_TIMEOUT_SECONDS)", m.cfg.Timeout)).Wrap(err)
		}
		return Workspace{}, err
	}
	ws := &Workspace{Alias: parent + "@" + id, ID: id, Parent: parent, Base: res.Commit, Branch: res.Branch, Owner: owner,
		Created: m.now().UTC().Truncate(time.Second), Files: res.Files, Bytes: res.Bytes}
	if err := m.writeMeta(dir, ws); err != nil {
		return Workspace{}, m.storageErr(parent, err)
	}
	if err := os.Rename(dir, filepath.Join(m.root, id)); err != nil {
		return Workspace{}, m.storageErr(parent, err)
	}
	tmpName = id // from here a failure removes the final directory
	if err := m.attach(ws); err != nil {
		return Workspace{}, m.storageErr(parent, err)
	}
	ok = true
	return *ws, nil
}

func (m *Manager) storageErr(alias string, err error) error {
	err = unwrapPath(err)
	if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
		return errs.At(errs.NoSpace, alias, "", "the workspace storage is full").Wrap(err)
	}
	return errs.At(errs.Internal, alias, "", "the workspace storage failed").Wrap(err)
}

// lookup parses ws strictly ("ALIAS@ID" of a well-formed alias and ID)
// and returns the workspace, or WORKDIR_NOT_FOUND / INVALID_ARGUMENT.
func (m *Manager) lookup(ws string) (*Workspace, error) {
	if _, _, ok := sfs.SplitWorkspaceAlias(ws); !ok {
		shown := ws
		if len(shown) > 64 {
			shown = shown[:64] + "..."
		}
		return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("%q is not a workspace: workspaces are ALIAS@ID as create_workspace and list_workspaces answer", strings.ToValidUTF8(shown, "\uFFFD")))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.spaces[ws]
	if !ok {
		return nil, errs.New(errs.WorkdirNotFound, fmt.Sprintf("%q: no workspace has this alias (discarded, expired, or never created; list_workspaces lists them)", ws))
	}
	return w, nil
}

// Get returns the workspace "ALIAS@ID" and the workdir that serves its
// files (policy-checked, as the file tools read and write it).
func (m *Manager) Get(ws string) (Workspace, *sfs.Workdir, error) {
	w, err := m.lookup(ws)
	if err != nil {
		return Workspace{}, nil, err
	}
	wd, err := m.fs.Workdir(w.Alias)
	if err != nil {
		return Workspace{}, nil, err
	}
	return *w, wd, nil
}

// Discard detaches the workspace ws (every tool answers WORKDIR_NOT_FOUND
// for it from then on) and deletes its files. It waits for the
// workspace's writer lease, so that no write is half done.
func (m *Manager) Discard(ctx context.Context, ws string) error {
	w, err := m.lookup(ws)
	if err != nil {
		return err
	}
	release, err := m.fs.Lease().Acquire(ctx, w.Alias)
	if err != nil {
		return err
	}
	defer release()
	m.mu.Lock()
	if _, ok := m.spaces[w.Alias]; !ok {
		m.mu.Unlock()
		return errs.New(errs.WorkdirNotFound, fmt.Sprintf("%q: no workspace has this alias (discarded already)", ws))
	}
	delete(m.spaces, w.Alias)
	m.mu.Unlock()
	m.fs.DetachWorkspace(w.Alias)
	m.remove(w.ID)
	return nil
}

// List returns the workspaces, of the workdir parent only when it is not
// "", sorted by creation time then alias.
func (m *Manager) List(parent string) []Workspace {
	m.mu.Lock()
	out := make([]Workspace, 0, len(m.spaces))
	for _, w := range m.spaces {
		if parent == "" || w.Parent == parent {
			out = append(out, *w)
		}
	}
	m.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].Alias < out[j].Alias
	})
	return out
}

// Close refuses further creations. The FS closes the descriptors.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
}
