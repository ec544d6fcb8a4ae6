package git

import (
	"context"
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git/internal/indexfile"
	"github.com/serverfs/serverfs/git/internal/pathrule"
	"github.com/serverfs/serverfs/internal/errs"
)

// The live checkout follows a merge into the branch HEAD is on, by git
// read-tree -m -u's two-tree rules: every path the merge changed must be
// unstaged (its index entry is the old commit's) and either untouched in
// the work tree (then it is rewritten or removed) or already holding the
// new version; the index entries of those paths move with the branch, and
// nothing else is touched (the operator's other edits and staged changes
// stay). Anything else refuses before the branch moves. Were the branch
// to move alone, git would show the merge reversed and staged, and the
// operator's next commit would undo it.

// followAction is what a path's work-tree entry gets.
type followAction int

const (
	wtKeep   followAction = iota // it already holds the new side (or neither side has it)
	wtWrite                      // written with the new side (from tmp)
	wtRemove                     // removed (it holds the old side)
)

// followStep is one path the merge changed.
type followStep struct {
	c   patchChange
	act followAction
	tmp string // wtWrite: the new content, ready to rename into place
	// had and was: the work-tree entry replaced or removed, as planned
	// (an entry changed since is left alone).
	had     bool
	was     sfs.StatData
	written *sfs.StatData // the entry written, for the index's stat data
}

// liveFollow is a planned update of the live index and work tree. It
// holds .git/index.lock from planFollow until apply or abort.
type liveFollow struct {
	r       *Repo
	lock    *sfs.WFile
	idx     *indexfile.File
	entries map[string]*indexfile.Entry
	steps   []followStep
	// renamed: the lock is the index now (abort must not remove a lock
	// another git may have taken since).
	renamed bool
	// rmdirs: directories the merge empties, deepest first (a file
	// replacing a directory needs it gone; the others git removes too).
	rmdirs []string
	done   bool
}

// planFollow checks that the live checkout can follow the branch from
// old to next and prepares it: .git/index.lock taken, every new file
// and symlink written to a temporary. Refusals (nothing changed, the
// branch must not move): REPO_LOCKED (another git holds the index),
// REPO_OPERATION_IN_PROGRESS, REPO_STAGED_CHANGES (staged changes on the
// merge's paths), REPO_DIRTY (the operator's edits, or untracked files,
// where the merge writes), REPO_UNSUPPORTED (submodules, core.symlinks
// off), GIT_PATH_REJECTED.
func (r *Repo) planFollow(ctx context.Context, old, next plumbing.Hash) (_ *liveFollow, err error) {
	alias := r.w.Alias()
	a, _, err := r.flatTree(ctx, old)
	if err != nil {
		return nil, err
	}
	b, _, err := r.flatTree(ctx, next)
	if err != nil {
		return nil, err
	}
	changes := diffTrees(a, b)
	for _, c := range changes {
		if rule := pathrule.Commit(c.path, c.newMode); !c.new.IsZero() && rule != nil {
			return nil, pathrule.Err(alias, c.path, rule)
		}
		if c.oldMode == filemode.Submodule || c.newMode == filemode.Submodule {
			return nil, notFollowed(errs.RepoUnsupported, alias, "the merge changes a submodule, which ServerFS does not check out in the live tree", "update the live checkout with git, then submit again")
		}
		if !r.symlinks && (c.oldMode == filemode.Symlink || c.newMode == filemode.Symlink) {
			return nil, notFollowed(errs.RepoUnsupported, alias, "the merge changes a symlink and core.symlinks is false", "update the live checkout with git, then submit again")
		}
	}
	for _, f := range []string{"MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply"} {
		if _, err := r.ctl.Lstat(".git/" + f); err == nil {
			return nil, notFollowed(errs.RepoBusy, alias, fmt.Sprintf("the live checkout has a merge, rebase, cherry-pick or revert in progress (.git/%s)", f), "finish it with git, then submit again")
		}
	}
	lock, err := r.ctl.CreateExclusive(".git/index.lock", 0o644)
	if errs.CodeOf(err) == errs.PathExists {
		return nil, notFollowed(errs.RepoLocked, alias, "another git process holds the live index (.git/index.lock exists)", "submit again when it has finished")
	}
	if err != nil {
		return nil, err
	}
	f := &liveFollow{r: r, lock: lock}
	defer func() {
		if err != nil {
			f.abort()
		}
	}()
	var idxStat sfs.StatData
	if f.idx, idxStat, f.entries, err = r.readSmudgedIndex(); err != nil {
		return nil, err
	}
	for _, e := range f.idx.Entries {
		if e.Stage != 0 {
			return nil, notFollowed(errs.RepoBusy, alias, "the live index has unmerged paths", "resolve them with git, then submit again")
		}
	}
	if err := f.checkStaged(changes); err != nil {
		return nil, err
	}
	if err := f.planWorktree(ctx, changes, a, b, idxStat); err != nil {
		return nil, err
	}
	if err := f.writeTemporaries(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// notFollowed is a refusal to move the branch because its live checkout
// cannot follow.
func notFollowed(code errs.Code, alias, why, next string) error {
	return errs.At(code, alias, "", why+"; the branch did not move: "+next)
}

// pathList names at most maxNamedInRefusal of paths (visible ones; the
// others counted).
func (r *Repo) pathList(paths []string) string {
	var shown []string
	hidden := 0
	for _, p := range paths {
		switch {
		case !r.visible(p):
			hidden++
		case len(shown) < maxNamedInRefusal:
			shown = append(shown, strconv.Quote(p))
		}
	}
	list := strings.Join(shown, ", ")
	if n := len(paths) - hidden - len(shown); n > 0 {
		list += fmt.Sprintf(" and %d more", n)
	}
	if hidden > 0 {
		if list != "" {
			list += "; "
		}
		list += fmt.Sprintf("%d path(s) hidden by the workdir's policy", hidden)
	}
	return list
}

// checkStaged refuses when a path the merge changes is staged (its index
// entry is not the old commit's: a staged edit, an intent-to-add, a
// skip-worktree entry) or when an index entry the operator added clashes
// with the merge's paths (a file where the merge needs a directory).
func (f *liveFollow) checkStaged(changes []patchChange) error {
	var staged []string
	for _, c := range changes {
		ie := f.entries[c.path]
		same := ie == nil && c.old.IsZero() ||
			ie != nil && !c.old.IsZero() && ie.Hash == c.old && ie.Mode == c.oldMode && !ie.IntentToAdd && !ie.SkipWorktree
		if !same {
			staged = append(staged, c.path)
		}
	}
	if len(staged) == 0 {
		after := make(map[string]treeEntry, len(f.entries)+len(changes))
		for p := range f.entries {
			after[p] = treeEntry{}
		}
		for _, c := range changes {
			if c.new.IsZero() {
				delete(after, c.path)
			} else {
				after[c.path] = treeEntry{}
			}
		}
		if clash := fileDirClash(after); clash != "" {
			staged = append(staged, clash)
		}
	}
	if len(staged) == 0 {
		return nil
	}
	return notFollowed(errs.RepoStagedChanges, f.r.w.Alias(),
		fmt.Sprintf("the live index has staged changes on %d path(s) the merge changes (%s)", len(staged), f.r.pathList(staged)),
		"commit or unstage them with git, then submit again")
}

// ctlEntry is a work-tree path read through the control reader, for
// worktreeChange.
type ctlEntry struct {
	ctl  *sfs.Control
	path string
}

func (e ctlEntry) Lstat() (sfs.StatData, error) { return e.ctl.Lstat(e.path) }
func (e ctlEntry) Readlink() (string, error)    { return e.ctl.Readlink(e.path) }
func (e ctlEntry) OpenFile() (*sfs.File, int64, error) {
	fl, err := e.ctl.Open(e.path)
	if err != nil {
		return nil, 0, err
	}
	st, err := fl.Fstat()
	if err != nil {
		fl.Close()
		return nil, 0, err
	}
	return fl, st.Size, nil
}

// absent reports an Lstat error that means nothing is at the path as git
// sees it: a leading component missing, a file, or a symlink (which the
// leading-directory check then finds in the way).
func absent(err error) bool {
	c := errs.CodeOf(err)
	return c == errs.PathNotFound || c == errs.NotADirectory || c == errs.SymlinkNotAllowed
}

// planWorktree decides each changed path's work-tree action and refuses
// (REPO_DIRTY) what would overwrite or remove anything the operator has:
// a modified or deleted tracked file, an untracked entry where the merge
// writes (or in a directory the merge replaces by a file).
func (f *liveFollow) planWorktree(ctx context.Context, changes []patchChange, a, b map[string]treeEntry, idxStat sfs.StatData) error {
	r := f.r
	aDirs, bDirs := leadingDirs(a), leadingDirs(b)
	var dirty []string
	holds := func(p string, h plumbing.Hash, m filemode.FileMode) (bool, error) {
		// An entry without stat data: only the content decides.
		code, err := r.worktreeChange(ctx, ctlEntry{r.ctl, p}, &index.Entry{Name: p, Hash: h, Mode: m}, sfs.StatData{})
		return code == ".", err
	}
	byPath := map[string]*followStep{}
	f.steps = make([]followStep, len(changes))
	for i, c := range changes {
		if ctx.Err() != nil {
			return canceled(r.w.Alias())
		}
		s := &f.steps[i]
		s.c = c
		byPath[c.path] = s
		st, err := r.ctl.Lstat(c.path)
		if err != nil && !absent(err) {
			return err
		}
		exists := err == nil
		isDir := exists && st.Type() == sfs.TypeDirectory
		switch {
		case !exists && c.old.IsZero():
			s.act = wtWrite
		case !exists:
			// Deleted by the operator: as good as removed when the merge
			// deletes it too; else their deletion would be undone.
			if !c.new.IsZero() {
				dirty = append(dirty, c.path)
			}
		case c.old.IsZero() && isDir && aDirs[c.path]:
			s.act = wtWrite // a file replacing a directory: checked below
		case !c.old.IsZero() && !isDir:
			code, err := r.worktreeChange(ctx, ctlEntry{r.ctl, c.path}, f.entries[c.path].Entry, idxStat)
			if err != nil {
				return err
			}
			if code == "." {
				s.act, s.had, s.was = wtWrite, true, st
				if c.new.IsZero() {
					s.act = wtRemove
				}
				break
			}
			fallthrough
		default:
			ok := false
			if !c.new.IsZero() && !isDir {
				if ok, err = holds(c.path, c.new, c.newMode); err != nil {
					return err
				}
			}
			if !ok {
				dirty = append(dirty, c.path)
			}
		}
	}
	more, err := f.planTemporaries(byPath)
	if err != nil {
		return err
	}
	dirty = append(dirty, more...)
	if more, err = f.planDirectories(aDirs, bDirs); err != nil {
		return err
	}
	dirty = append(dirty, more...)
	if len(dirty) == 0 {
		return nil
	}
	sort.Strings(dirty)
	return notFollowed(errs.RepoDirty, r.w.Alias(),
		fmt.Sprintf("the live checkout has local changes the merge would overwrite on %d path(s) (%s): tracked files modified or deleted, or untracked files where the merge writes", len(dirty), r.pathList(dirty)),
		"commit, stash or move them with git, then submit again")
}

// planTemporaries checks a written path's leading directories: each
// must be a directory, or absent, or a tracked file the merge removes (a
// file that becomes a directory); the temporary goes into the deepest
// that stays. It returns the paths in the way.
func (f *liveFollow) planTemporaries(byPath map[string]*followStep) ([]string, error) {
	r := f.r
	var dirty []string
	for i := range f.steps {
		s := &f.steps[i]
		if s.act != wtWrite {
			continue
		}
		tmpDir := ""
		for d := range leading(s.c.path) {
			if o := byPath[d]; o != nil && o.c.new.IsZero() {
				break // removed first (or already absent)
			}
			st, err := r.ctl.Lstat(d)
			if absent(err) {
				break
			}
			if err != nil {
				return nil, err
			}
			if st.Type() != sfs.TypeDirectory {
				dirty = append(dirty, d)
				break
			}
			tmpDir = d
		}
		s.tmp = path.Join(tmpDir, ".serverfs-tmp-"+newQueueID())
	}
	return dirty, nil
}

// planDirectories checks that a directory which becomes a file holds
// nothing but tracked files the merge removes (returning what else it
// holds), and plans the removal of the directories the merge empties,
// as git removes them.
func (f *liveFollow) planDirectories(aDirs, bDirs map[string]bool) ([]string, error) {
	r := f.r
	var dirty []string
	removed := map[string]bool{}
	for _, s := range f.steps {
		if s.act == wtRemove {
			removed[s.c.path] = true
		}
	}
	rmdirs := map[string]bool{}
	for _, s := range f.steps {
		if s.act == wtWrite && aDirs[s.c.path] {
			if st, err := r.ctl.Lstat(s.c.path); err == nil && st.Type() == sfs.TypeDirectory {
				in, err := f.onlyRemoved(s.c.path, removed, rmdirs, 2*len(removed)+64)
				if err != nil {
					return nil, err
				}
				dirty = append(dirty, in...)
			}
		}
	}
	for _, s := range f.steps {
		if s.act == wtRemove {
			for d := range leading(s.c.path) {
				if !bDirs[d] {
					rmdirs[d] = true
				}
			}
		}
	}
	for d := range rmdirs {
		f.rmdirs = append(f.rmdirs, d)
	}
	sort.Slice(f.rmdirs, func(i, j int) bool { return strings.Count(f.rmdirs[i], "/") > strings.Count(f.rmdirs[j], "/") })
	return dirty, nil
}

// leading yields the leading directories of p, outermost first.
func leading(p string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for i := 0; i < len(p); i++ {
			if p[i] == '/' && !yield(p[:i]) {
				return
			}
		}
	}
}

// leadingDirs is the set of directories a flattened tree has.
func leadingDirs(flat map[string]treeEntry) map[string]bool {
	dirs := map[string]bool{}
	for p := range flat {
		for d := range leading(p) {
			dirs[d] = true
		}
	}
	return dirs
}

// onlyRemoved lists what is in the work-tree directory dir besides the
// files the merge removes (and directories holding only those), and adds
// dir and the directories below it to rmdirs; budget bounds the entries
// read.
func (f *liveFollow) onlyRemoved(dir string, removed, rmdirs map[string]bool, budget int) ([]string, error) {
	rmdirs[dir] = true
	if budget <= 0 {
		return []string{dir}, nil
	}
	ents, more, err := f.r.ctl.ReadDir(dir, budget)
	if err != nil {
		return nil, err
	}
	if more {
		return []string{dir}, nil
	}
	var in []string
	for _, e := range ents {
		p := dir + "/" + e.Name
		switch {
		case e.Stat.Type() == sfs.TypeDirectory:
			sub, err := f.onlyRemoved(p, removed, rmdirs, budget-len(ents))
			if err != nil {
				return nil, err
			}
			in = append(in, sub...)
		case !removed[p]:
			in = append(in, p)
		}
	}
	return in, nil
}

// writeTemporaries writes every new file and symlink to its temporary
// (abort removes them).
func (f *liveFollow) writeTemporaries(ctx context.Context) error {
	r := f.r
	buf := make([]byte, 64<<10)
	for i := range f.steps {
		s := &f.steps[i]
		if s.act != wtWrite {
			continue
		}
		if s.c.newMode == filemode.Symlink {
			target, err := r.readBlob(s.c.new, maxSymlinkTarget)
			if _, ok := tooLargeSize(err); ok || err == nil && (len(target) == 0 || strings.IndexByte(string(target), 0) >= 0) {
				return errs.At(errs.RepoUnsupported, r.w.Alias(), "", fmt.Sprintf("the merge has a symlink %q whose target git cannot check out (empty, with NUL, or longer than PATH_MAX)", displayName(s.c.path)))
			}
			if err != nil {
				return err
			}
			if err := r.ctl.Symlink(string(target), s.tmp); err != nil {
				return err
			}
			continue
		}
		// Streamed to its file: a blob of any size costs a copy buffer.
		blob, err := r.openBlob(s.c.new, math.MaxInt64)
		if err != nil {
			return err
		}
		perm := uint32(0o644)
		if s.c.newMode == filemode.Executable {
			perm = 0o755
		}
		// Named like the temporaries of writes: a crash's leftover is
		// swept when the server starts.
		w, err := r.ctl.CreateExclusive(s.tmp, perm)
		if err != nil {
			blob.Close()
			return err
		}
		werr := copyBlob(ctx, w, blob, buf)
		if werr == nil {
			werr = w.Sync()
		}
		w.Close()
		blob.Close()
		if werr != nil {
			return werr
		}
	}
	return ctx.Err()
}

// abort releases what apply did not use: the temporaries and the lock.
func (f *liveFollow) abort() {
	if f.done {
		return
	}
	f.done = true
	for _, s := range f.steps {
		if s.act == wtWrite && s.tmp != "" {
			f.r.ctl.Remove(s.tmp)
		}
	}
	f.lock.Close()
	if !f.renamed {
		f.r.ctl.Remove(".git/index.lock")
	}
}

// apply carries out the plan once the branch has moved: removals, then
// the new files renamed into place, then the index. A work-tree entry
// changed since it was planned is left alone, and any failure is
// returned, but the index is written whatever happens to the work tree:
// the merge's paths never stay staged in reverse.
func (f *liveFollow) apply() error {
	r := f.r
	var firstErr error
	fail := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	unchanged := func(s *followStep) bool {
		st, err := r.ctl.Lstat(s.c.path)
		ok := err == nil && st.Mode == s.was.Mode && st.Size == s.was.Size && st.Ino == s.was.Ino &&
			st.Mtime.Equal(s.was.Mtime) && st.Ctime.Equal(s.was.Ctime)
		if !ok {
			fail(errs.At(errs.RevisionMismatch, r.w.Alias(), s.c.path, "changed while the live checkout was being updated; left as it is"))
		}
		return ok
	}
	for i := range f.steps {
		if s := &f.steps[i]; s.act == wtRemove && unchanged(s) {
			if err := r.ctl.Remove(s.c.path); err != nil {
				fail(err)
			}
		}
	}
	for _, d := range f.rmdirs {
		r.ctl.RemoveDir(d) // ENOTEMPTY: something else lives there; a file replacing it fails below
	}
	for i := range f.steps {
		s := &f.steps[i]
		if s.act != wtWrite || s.had && !unchanged(s) {
			continue
		}
		if err := r.ctl.MkdirAll(path.Dir(s.c.path), 0o755); err != nil {
			fail(err)
			continue
		}
		if err := r.ctl.Rename(s.tmp, s.c.path); err != nil {
			fail(err)
			continue
		}
		s.tmp = ""
		if st, err := r.ctl.Lstat(s.c.path); err == nil {
			s.written = &st
		}
	}
	for _, s := range f.steps {
		if s.c.new.IsZero() {
			delete(f.entries, s.c.path)
			continue
		}
		// Without stat data (size 0, as git smudges) an entry is
		// compared by content: right for the paths not written.
		e := &indexfile.Entry{Entry: &index.Entry{Name: s.c.path, Hash: s.c.new, Mode: s.c.newMode}}
		if st := s.written; st != nil {
			e.CreatedAt, e.ModifiedAt = st.Ctime, st.Mtime
			e.Dev, e.Inode, e.UID, e.GID = uint32(st.Dev), uint32(st.Ino), st.Uid, st.Gid
			e.Size = uint32(st.Size)
		}
		f.entries[s.c.path] = e
	}
	if err := f.writeIndex(); err != nil {
		fail(err)
	}
	f.abort() // the temporaries not renamed; the lock is gone once renamed
	return firstErr
}

// writeIndex writes the entries into the lock and renames it over the
// index (git's lock protocol).
func (f *liveFollow) writeIndex() error {
	list := make([]indexfile.Entry, 0, len(f.entries))
	for _, e := range f.entries {
		list = append(list, *e)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	if _, err := f.lock.Write(indexfile.Encode(f.idx.Version, list, nil)); err != nil {
		return err
	}
	if err := f.lock.Sync(); err != nil {
		return err
	}
	if err := f.lock.Close(); err != nil {
		return err
	}
	if err := f.r.ctl.Rename(".git/index.lock", ".git/index"); err != nil {
		return err
	}
	f.renamed = true
	f.r.ctl.SyncDir(".git")
	return nil
}

// readSmudgedIndex reads the index for rewriting. Racily clean entries
// would look clean forever under the new, later index: smudged as git
// does (see Commit).
func (r *Repo) readSmudgedIndex() (*indexfile.File, sfs.StatData, map[string]*indexfile.Entry, error) {
	idx, idxStat, err := r.readIndex()
	if err != nil {
		return nil, idxStat, nil, err
	}
	entries := map[string]*indexfile.Entry{}
	for i, e := range idx.Entries {
		if e.Mode != filemode.Submodule && !idxStat.Mtime.IsZero() && e.ModifiedAt.Unix() >= idxStat.Mtime.Unix() {
			smudged := *e
			smudged.Size = 0
			e = &smudged
		}
		entries[e.Name] = &indexfile.Entry{Entry: e, AssumeValid: idx.AssumeValid[i]}
	}
	return idx, idxStat, entries, nil
}
