package git

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/fs/ignore"
	"github.com/serverfs/serverfs/git/internal/indexfile"
	"github.com/serverfs/serverfs/git/internal/pathrule"
	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/internal/unidiff"
)

// The patch artifact of a workspace: the change from
// a base commit to the commit made of the workspace's files, named by a
// content address that the merge queue recomputes from the objects before
// it trusts anything else in it.

// diffstatMaxBlob is the largest blob whose lines the diffstat counts.
const diffstatMaxBlob = 1 << 20

// Diffstat counts a patch's changes as git diff --shortstat does (binary
// and very large files count as changed, without lines).
type Diffstat struct {
	Files      int `json:"files"`
	Insertions int `json:"insertions"`
	Deletions  int `json:"deletions"`
}

// Patch is the artifact of a submitted workspace: Head is a commit whose
// parent is Base and whose tree is Tree; FilesChanged and Diffstat
// describe the change; SHA256 is the content address over a canonical
// encoding of the base, the tree and every change (mode and blob id before
// and after, per path). An empty patch (no change) has no Head.
type Patch struct {
	SHA256       string   `json:"sha256"`
	Base         string   `json:"base"`
	Head         string   `json:"head,omitempty"`
	Tree         string   `json:"tree"`
	FilesChanged []string `json:"files_changed,omitempty"`
	Diffstat     Diffstat `json:"diffstat"`
	Empty        bool     `json:"empty,omitempty"`
}

// patchChange is one path of a patch: absent on a side is a zero hash.
type patchChange struct {
	path             string
	oldMode, newMode filemode.FileMode
	old, new         plumbing.Hash
}

// diffTrees lists the paths whose entry differs between two flattened
// trees, sorted.
func diffTrees(a, b map[string]treeEntry) []patchChange {
	var out []patchChange
	for p, ea := range a {
		eb, ok := b[p]
		if !ok {
			out = append(out, patchChange{path: p, oldMode: ea.mode, old: ea.hash})
		} else if ea != eb {
			out = append(out, patchChange{path: p, oldMode: ea.mode, old: ea.hash, newMode: eb.mode, new: eb.hash})
		}
	}
	for p, eb := range b {
		if _, ok := a[p]; !ok {
			out = append(out, patchChange{path: p, newMode: eb.mode, new: eb.hash})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// patchAddress is the sha256 of the canonical encoding: a version line,
// the base and tree ids, then one line per change (sorted by path):
// old mode, new mode (octal, 0 when absent), old id, new id, the path
// quoted as Go quotes strings.
func patchAddress(base, tree plumbing.Hash, changes []patchChange) string {
	h := sha256.New()
	fmt.Fprintf(h, "serverfs-patch 1\nbase %s\ntree %s\n", base, tree)
	for _, c := range changes {
		fmt.Fprintf(h, "%o %o %s %s %q\n", uint32(c.oldMode), uint32(c.newMode), c.old, c.new, c.path)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// flatTree flattens the tree of a commit (nil map for the zero hash).
func (r *Repo) flatTree(ctx context.Context, commit plumbing.Hash) (map[string]treeEntry, plumbing.Hash, error) {
	if commit.IsZero() {
		return map[string]treeEntry{}, emptyTree, nil
	}
	c, err := r.getCommit(commit)
	if errors.Is(err, plumbing.ErrObjectNotFound) && !r.hasAlternates() {
		return nil, plumbing.ZeroHash, errs.At(errs.RevNotFound, r.w.Alias(), "", fmt.Sprintf("has no commit %s", commit))
	}
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	m, _, err := r.headTreeExcept(ctx, commit, nil)
	return m, c.TreeHash, err
}

// diffstat counts the lines of the changes (text blobs up to
// diffstatMaxBlob; others count as a changed file only).
func (r *Repo) diffstat(changes []patchChange) Diffstat {
	ds := Diffstat{Files: len(changes)}
	load := func(h plumbing.Hash) ([]byte, bool) {
		if h.IsZero() {
			return nil, true
		}
		b, err := r.readBlob(h, diffstatMaxBlob)
		if err != nil || isBinary(b) {
			return nil, false
		}
		return b, true
	}
	for _, c := range changes {
		if c.oldMode == filemode.Submodule || c.newMode == filemode.Submodule {
			continue
		}
		a, ok1 := load(c.old)
		b, ok2 := load(c.new)
		if !ok1 || !ok2 {
			continue
		}
		_, add, del := unidiff.HunksStat(a, b)
		ds.Insertions += add
		ds.Deletions += del
	}
	return ds
}

// CommitWorkspace makes the patch of a workspace: the visible files of ws
// (a checkout of base, read through the path policy) become a commit on
// top of base in this repository's object store (blobs streamed, trees and
// the commit written as git writes them; no ref moves). What the policy
// hides in ws keeps its base version; new files the repository's ignore
// rules exclude are not added; submodules keep their base commit. A
// workspace equal to base gives an empty patch and no commit.
func (r *Repo) CommitWorkspace(ctx context.Context, ws *sfs.Workdir, base, message string) (*Patch, error) {
	return r.commitWorkspace(ctx, ws, base, message, nil)
}

// reviewIdentity signs the commit a review makes: it is never on a
// branch (the change is shown, not merged), so it needs no user's name,
// and a repository without one can be reviewed.
var reviewIdentity = identity{name: "ServerFS review", email: "review@serverfs.invalid"}

// ReviewWorkspace is CommitWorkspace for a review: the same patch, its
// commit signed by reviewIdentity, which no ref will name.
func (r *Repo) ReviewWorkspace(ctx context.Context, ws *sfs.Workdir, base string) (*Patch, error) {
	return r.commitWorkspace(ctx, ws, base, "review of "+ws.Alias(), &reviewIdentity)
}

func (r *Repo) commitWorkspace(ctx context.Context, ws *sfs.Workdir, base, message string, signer *identity) (*Patch, error) {
	defer r.packScope()()
	if !plumbing.IsHash(base) {
		return nil, errs.New(errs.InvalidArgument, "base must be a full commit id")
	}
	if err := checkMessage(message); err != nil {
		return nil, err
	}
	baseHash := plumbing.NewHash(base)
	baseFlat, baseTree, err := r.flatTree(ctx, baseHash)
	if err != nil {
		return nil, err
	}
	entries, seen, err := r.walkWorkspace(ctx, ws, baseFlat)
	if err != nil {
		return nil, err
	}
	// Base files the workspace no longer has (and the policy would have
	// shown) are deleted; hidden ones keep their base version.
	for p := range baseFlat {
		if !seen[p] && r.visible(p) && baseFlat[p].mode != filemode.Submodule {
			delete(entries, p)
		}
	}
	newFlat := make(map[string]treeEntry, len(entries))
	for p, e := range entries {
		newFlat[p] = treeEntry{hash: e.Hash, mode: e.Mode}
	}
	if p := fileDirClash(newFlat); p != "" {
		return nil, errs.At(errs.InvalidArgument, ws.Alias(), "", fmt.Sprintf("the workspace replaces a directory holding hidden files by a file (%d bytes of path); git cannot record both", len(p)))
	}
	changes := diffTrees(baseFlat, newFlat)
	for _, c := range changes {
		if c.new.IsZero() {
			continue
		}
		if rule := pathrule.Commit(c.path, c.newMode); rule != nil {
			return nil, pathrule.Err(ws.Alias(), c.path, rule)
		}
		if err := r.dotfileContentErr(ws.Alias(), c.path, c.newMode, c.new); err != nil {
			return nil, err
		}
	}
	if len(changes) == 0 {
		return &Patch{SHA256: patchAddress(baseHash, baseTree, nil), Base: base, Tree: baseTree.String(), Empty: true}, nil
	}
	tree, _, err := r.writeTrees(entries)
	if err != nil {
		return nil, err
	}
	ident, err := r.identity()
	if signer != nil {
		ident, err = *signer, nil
	}
	if err != nil {
		return nil, err
	}
	sig := object.Signature{Name: ident.name, Email: ident.email, When: time.Now()}
	c := &object.Commit{Author: sig, Committer: sig, Message: cleanupMessage(message), TreeHash: tree, ParentHashes: []plumbing.Hash{baseHash}}
	head, err := r.writeCommit(c)
	if err != nil {
		return nil, err
	}
	return r.patchOf(baseHash, head, tree, changes), nil
}

// workspaceWalk carries a workspace's walk: the entries it will commit
// (the base's, replaced by what the workspace holds) and the paths seen.
type workspaceWalk struct {
	r        *Repo
	ctx      context.Context
	ws       *sfs.Workdir
	wctl     *sfs.Control
	baseFlat map[string]treeEntry
	// sortedBase holds baseFlat's paths, sorted, for hasBelow.
	sortedBase  []string
	entries     map[string]*indexfile.Entry
	seen        map[string]bool
	ign         *ignore.Stack
	ignoredDirs map[string]bool
	budget      int64
	err         error
}

// walkWorkspace walks ws and returns the index entries of the commit (the
// base's, with the workspace's files staged over them) and the paths seen.
func (r *Repo) walkWorkspace(ctx context.Context, ws *sfs.Workdir, baseFlat map[string]treeEntry) (map[string]*indexfile.Entry, map[string]bool, error) {
	w := &workspaceWalk{
		r: r, ctx: ctx, ws: ws, wctl: ws.Control(), baseFlat: baseFlat,
		entries: map[string]*indexfile.Entry{}, seen: map[string]bool{},
		ign: r.newIgnoreStack(ctx, nil), ignoredDirs: map[string]bool{}, budget: int64(maxCommitBytes),
	}
	for p, e := range baseFlat {
		w.entries[p] = &indexfile.Entry{Entry: &index.Entry{Name: p, Hash: e.hash, Mode: e.mode}}
	}
	w.sortedBase = make([]string, 0, len(baseFlat))
	for p := range baseFlat {
		w.sortedBase = append(w.sortedBase, p)
	}
	sort.Strings(w.sortedBase)

	res, err := ws.Walk(ctx, "", sfs.WalkOptions{MaxEntries: r.fs.Limits().MaxWalkEntries, Enter: w.ign.Enter, Visit: w.visit})
	if err == nil {
		err = w.err
	}
	if err == nil {
		err = w.ign.Err(ws.Alias())
	}
	if err != nil {
		return nil, nil, err
	}
	if res.Truncated {
		if res.TruncatedReason == sfs.TruncatedTimeout {
			return nil, nil, canceled(r.w.Alias())
		}
		return nil, nil, errs.At(errs.DirectoryTooLarge, ws.Alias(), "", "the workspace is too large to commit (more than SERVERFS_MAX_WALK_ENTRIES entries or too deep)")
	}
	return w.entries, w.seen, nil
}

func (w *workspaceWalk) fail(err error) sfs.WalkAction {
	w.err = err
	return sfs.WalkStop
}

// hasBelow says whether the base tracks anything below dir.
func (w *workspaceWalk) hasBelow(dir string) bool {
	i := sort.SearchStrings(w.sortedBase, dir+"/")
	return i < len(w.sortedBase) && strings.HasPrefix(w.sortedBase[i], dir+"/")
}

// visit stages one walked entry, skipping what git would not commit.
func (w *workspaceWalk) visit(we *sfs.WalkEntry) sfs.WalkAction {
	if w.ctx.Err() != nil {
		return w.fail(canceled(w.r.w.Alias()))
	}
	if we.Name == ".git" {
		return sfs.WalkSkipDir
	}
	// Other spellings of .git (.GIT, ".git.", git~1, a\.git) are
	// refused, not skipped: on case-insensitive file systems they are
	// the live repository's metadata (hooks), and skipping would hide
	// what the workspace holds.
	if pathrule.HasDotGit(we.Name) {
		return w.fail(pathrule.Err(w.ws.Alias(), we.Path, &pathrule.RuleHasDotgit))
	}
	old, tracked := w.baseFlat[we.Path]
	if tracked && old.mode == filemode.Submodule {
		w.seen[we.Path] = true
		return sfs.WalkSkipDir
	}
	parent := ""
	if i := strings.LastIndexByte(we.Path, '/'); i >= 0 {
		parent = we.Path[:i]
	}
	ignored := w.ignoredDirs[parent] || w.ign.Ignored(we.Path, we.Type == sfs.TypeDirectory, we.Depth)
	switch we.Type {
	case sfs.TypeDirectory:
		if ignored {
			if !w.hasBelow(we.Path) {
				return sfs.WalkSkipDir
			}
			w.ignoredDirs[we.Path] = true
		}
		return sfs.WalkContinue
	case sfs.TypeOther:
		return sfs.WalkContinue // sockets, FIFOs: git does not commit them
	}
	if ignored && !tracked {
		return sfs.WalkContinue
	}
	w.seen[we.Path] = true
	e, err := w.r.workspaceEntry(w.ctx, w.ws.Alias(), w.wctl, we, old, tracked, &w.budget)
	if err != nil {
		return w.fail(err)
	}
	w.entries[we.Path] = e
	return sfs.WalkContinue
}

func (r *Repo) patchOf(base, head, tree plumbing.Hash, changes []patchChange) *Patch {
	p := &Patch{SHA256: patchAddress(base, tree, changes), Base: base.String(), Head: head.String(), Tree: tree.String(), Diffstat: r.diffstat(changes)}
	for _, c := range changes {
		p.FilesChanged = append(p.FilesChanged, c.path)
	}
	return p
}

func (r *Repo) writeCommit(c *object.Commit) (plumbing.Hash, error) {
	enc := &plumbing.MemoryObject{}
	if err := c.EncodeWithoutSignature(enc); err != nil {
		return plumbing.ZeroHash, err
	}
	content, _ := io.ReadAll(mustReader(enc))
	return r.writeObject(plumbing.CommitObject, content)
}

// fileDirClash returns a path that is a file and also a leading
// directory of another path ("" when none).
func fileDirClash(flat map[string]treeEntry) string {
	for p := range flat {
		for i := 0; i < len(p); i++ {
			if p[i] == '/' {
				if _, ok := flat[p[:i]]; ok {
					return p[:i]
				}
			}
		}
	}
	return ""
}

// workspaceEntry is the tree entry of a workspace file: its blob (stored
// only when it differs from the base version), mode and the executable
// bit as git records them.
func (r *Repo) workspaceEntry(ctx context.Context, wsAlias string, wctl *sfs.Control, we *sfs.WalkEntry, old treeEntry, tracked bool, budget *int64) (*indexfile.Entry, error) {
	e := &indexfile.Entry{Entry: &index.Entry{Name: we.Path}}
	if we.Type == sfs.TypeSymlink {
		target, err := wctl.Readlink(we.Path)
		if err != nil {
			return nil, err
		}
		h, err := r.writeObject(plumbing.BlobObject, []byte(target))
		e.Hash, e.Mode = h, filemode.Symlink
		return e, err
	}
	f, size, err := we.OpenFile()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Fstat()
	if err != nil {
		return nil, err
	}
	e.Mode = filemode.Regular
	exec := st.Mode&0o100 != 0
	if !r.fileMode {
		exec = tracked && old.mode == filemode.Executable
	}
	if exec {
		e.Mode = filemode.Executable
	}
	// Unchanged files (most of them, of any size) are only hashed, not
	// stored again.
	if tracked && (old.mode == filemode.Regular || old.mode == filemode.Executable) {
		if bs, err := r.blobSize(old.hash); err == nil && bs == size {
			h := plumbing.NewHasher(plumbing.BlobObject, size)
			if _, err := io.Copy(h, ctxReader{ctx, f}); err != nil {
				return nil, err
			}
			if h.Sum() == old.hash {
				e.Hash = old.hash
				return e, nil
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return nil, err
			}
		}
	}
	if size > maxStagedFileSize {
		return nil, tooLargeToCommit(wsAlias, we.Path, size)
	}
	if *budget -= size; *budget < 0 {
		return nil, errs.New(errs.WriteLimitExceeded, fmt.Sprintf("the workspace's changed files hold more than a commit through ServerFS takes (%d bytes)", maxCommitBytes))
	}
	h, err := r.writeBlob(ctxReader{ctx, f}, size, nil, nil)
	if err == errContentChanged {
		return nil, errs.At(errs.RevisionMismatch, "", we.Path, "changed while it was being committed; try again")
	}
	e.Hash = h
	return e, err
}

// verifyPatch recomputes a patch from the objects it names and refuses
// one whose address or metadata does not match (PATCH_MISMATCH). It
// returns the changes.
func (r *Repo) verifyPatch(ctx context.Context, p *Patch) ([]patchChange, error) {
	alias := r.w.Alias()
	bad := func(why string) error {
		return errs.At(errs.PatchMismatch, alias, "", "the patch does not match its objects: "+why)
	}
	if !plumbing.IsHash(p.Base) || !plumbing.IsHash(p.Head) {
		return nil, bad("base and head must be commit ids")
	}
	head, err := object.GetCommit(r.storage, plumbing.NewHash(p.Head))
	if err != nil {
		return nil, bad("its head commit is not in the repository")
	}
	if len(head.ParentHashes) != 1 || head.ParentHashes[0].String() != p.Base {
		return nil, bad("its head is not a commit on its base")
	}
	if head.TreeHash.String() != p.Tree {
		return nil, bad("its tree is not its head's")
	}
	baseFlat, _, err := r.flatTree(ctx, plumbing.NewHash(p.Base))
	if err != nil {
		return nil, err
	}
	headFlat, _, err := r.flatTree(ctx, head.Hash)
	if err != nil {
		return nil, err
	}
	changes := diffTrees(baseFlat, headFlat)
	if patchAddress(plumbing.NewHash(p.Base), head.TreeHash, changes) != p.SHA256 {
		return nil, bad("its sha256 is not the address of its changes")
	}
	if len(changes) != len(p.FilesChanged) {
		return nil, bad("files_changed is not the list of its changes")
	}
	for i, c := range changes {
		if p.FilesChanged[i] != c.path {
			return nil, bad("files_changed is not the list of its changes")
		}
		if rule := pathrule.Commit(c.path, c.newMode); !c.new.IsZero() && rule != nil {
			return nil, pathrule.Err(alias, c.path, rule)
		}
	}
	return changes, nil
}
