package git

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git/internal/indexfile"
	"github.com/serverfs/serverfs/git/internal/pathrule"
	"github.com/serverfs/serverfs/internal/errs"
)

// Staging for Commit: each named path staged as git add stages it (a
// file, a symlink, a deletion, a directory replaced by a file and the
// reverse), with git's refusals.

// stager is the index while a commit stages its paths.
type stager struct {
	entries map[string]*indexfile.Entry
	sorted  []string        // the index's paths when staging began
	touched map[string]bool // index paths set or removed by staging
	named   map[string]bool
}

func sortedNames(entries map[string]*indexfile.Entry) []string {
	out := make([]string, 0, len(entries))
	for p := range entries {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// below returns the index paths beneath directory p.
func (s *stager) below(p string) []string {
	var out []string
	prefix := p + "/"
	for i := sort.SearchStrings(s.sorted, prefix); i < len(s.sorted) && strings.HasPrefix(s.sorted[i], prefix); i++ {
		if s.entries[s.sorted[i]] != nil {
			out = append(out, s.sorted[i])
		}
	}
	return out
}

func (s *stager) remove(p string) {
	delete(s.entries, p)
	s.touched[p] = true
}

// stagePath does `git add -- p` for one path: the work-tree file becomes
// its index entry, or its absence removes the entry. As in git, an entry
// that is a leading directory of p (a file that became a directory) or
// that lies beneath p (a directory that became a file) is removed. What
// git would do differently (stage a whole directory, or a path inside a
// submodule) is refused.
func (r *Repo) stagePath(ctx context.Context, p string, s *stager) error {
	leading, err := r.leadingEntries(p, s)
	if err != nil {
		return err
	}
	st, err := r.ctl.Lstat(p)
	if errs.CodeOf(err) == errs.PathNotFound || errs.CodeOf(err) == errs.NotADirectory {
		return r.stageMissing(p, s)
	}
	if err != nil {
		return err
	}
	old := s.entries[p]
	if err := r.checkAddable(p, st, old, s); err != nil {
		return err
	}
	if st.Type() == sfs.TypeDirectory {
		return r.stageDirectory(p, st, old, leading, s)
	}
	mode := filemode.Regular
	var hash plumbing.Hash
	switch st.Type() {
	case sfs.TypeOther:
		return errs.At(errs.UnsupportedFileType, r.w.Alias(), p, "is a special file; git cannot commit it")
	case sfs.TypeSymlink:
		target, err := r.ctl.Readlink(p)
		if err != nil {
			return err
		}
		mode = filemode.Symlink
		if hash, err = r.writeObject(plumbing.BlobObject, []byte(target)); err != nil {
			return err
		}
	default:
		if hash, mode, st, err = r.stageRegular(ctx, p, old); err != nil {
			return err
		}
	}
	e := &indexfile.Entry{Entry: &index.Entry{Name: p}}
	if old != nil {
		e.SkipWorktree = old.SkipWorktree
	}
	e.Hash, e.Mode = hash, mode
	e.CreatedAt, e.ModifiedAt = st.Ctime, st.Mtime
	e.Dev, e.Inode, e.UID, e.GID = uint32(st.Dev), uint32(st.Ino), st.Uid, st.Gid
	e.Size = uint32(st.Size)
	s.set(e, leading)
	return nil
}

// leadingEntries returns the index entries at p's leading directories: a
// gitlink there means p is inside a submodule (refused); a file entry
// there is a file that became a directory.
func (r *Repo) leadingEntries(p string, s *stager) ([]string, error) {
	var leading []string
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		if e := s.entries[p[:i]]; e != nil {
			if e.Mode == filemode.Submodule {
				which := fmt.Sprintf("the submodule %q", p[:i])
				if !r.visible(p[:i]) {
					which = "a submodule" // (a deny pattern may match the directory alone)
				}
				return nil, errs.At(errs.InvalidArgument, r.w.Alias(), p, fmt.Sprintf(
					"is inside %s, whose files belong to its own repository; commit there, and name the submodule itself here to record its checked-out commit", which))
			}
			leading = append(leading, p[:i])
		}
	}
	return leading, nil
}

// stageMissing stages a named path absent from the work tree: a tracked
// one is deleted from the index.
func (r *Repo) stageMissing(p string, s *stager) error {
	if _, tracked := s.entries[p]; tracked {
		s.remove(p)
		return nil
	}
	if s.touched[p] {
		return nil // removed already, replaced by an earlier named path
	}
	if len(s.below(p)) > 0 {
		return errs.New(errs.InvalidArgument, fmt.Sprintf("path %q is a directory in the index, deleted from the work tree; name the files in it to commit their deletion", p))
	}
	return errs.At(errs.PathNotFound, r.w.Alias(), p, "is neither in the work tree nor in the index: nothing to commit for it")
}

// checkAddable refuses a name git would refuse to record, and an ignored
// path not yet tracked.
func (r *Repo) checkAddable(p string, st sfs.StatData, old *indexfile.Entry, s *stager) error {
	alias := r.w.Alias()
	kind := filemode.Regular
	switch st.Type() {
	case sfs.TypeSymlink:
		kind = filemode.Symlink
	case sfs.TypeDirectory:
		kind = filemode.Submodule // all a named directory can become
	}
	if rule := pathrule.Commit(p, kind); rule != nil {
		return pathrule.Err(alias, p, rule)
	}
	if old != nil {
		return nil
	}
	ignored, err := r.pathIgnored(p, st.Type() == sfs.TypeDirectory, func(q string) *index.Entry {
		if e := s.entries[q]; e != nil {
			return e.Entry
		}
		return nil
	})
	if err != nil {
		return err
	}
	if ignored {
		return errs.At(errs.InvalidArgument, alias, p, "is ignored (.gitignore or excludes) and not tracked: ignored files are never added")
	}
	return nil
}

// stageRegular writes a regular file's blob and returns its hash, its
// mode and the stat of what was opened (which the index records).
func (r *Repo) stageRegular(ctx context.Context, p string, old *indexfile.Entry) (plumbing.Hash, filemode.FileMode, sfs.StatData, error) {
	alias := r.w.Alias()
	fail := func(err error) (plumbing.Hash, filemode.FileMode, sfs.StatData, error) {
		return plumbing.ZeroHash, 0, sfs.StatData{}, err
	}
	rules, err := r.loadAttrRules(p)
	if err != nil {
		return fail(err)
	}
	state := attrState(rules, p)
	unsupported := func(why string) error {
		return errs.At(errs.RepoUnsupported, alias, p, "cannot be committed exactly like git would: "+why)
	}
	if why := conversionProblem(state, nil); why != "" {
		return fail(unsupported(why))
	}
	f, err := r.ctl.Open(p)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	// The size of what was opened decides, before anything is read.
	st, err := f.Fstat()
	if err != nil {
		return fail(err)
	}
	if st.Size > maxStagedFileSize {
		return fail(tooLargeToCommit(alias, p, st.Size))
	}
	mode := filemode.Regular
	exec := st.Mode&0o100 != 0
	if !r.fileMode {
		exec = old != nil && old.Mode == filemode.Executable
	}
	if exec {
		mode = filemode.Executable
	}
	// Streamed into the object store: hashed, compressed and checked
	// for what line-ending or ident conversion would change, in one
	// pass with a bounded buffer.
	scan := &contentScan{}
	hash, err := r.writeBlob(ctxReader{ctx, f}, st.Size, scan, func() error {
		if why := conversionProblem(state, scan); why != "" {
			return unsupported(why)
		}
		return nil
	})
	if err == errContentChanged {
		return fail(errs.At(errs.RevisionMismatch, alias, p, "changed while it was being committed; try again"))
	}
	if err != nil {
		return fail(err)
	}
	if err := r.dotfileContentErr(alias, p, mode, hash); err != nil {
		return fail(err)
	}
	return hash, mode, st, nil
}

// set puts e in the index with git's directory/file conflict resolution
// (add_index_entry with ADD_CACHE_OK_TO_REPLACE): no entry may be a
// leading directory of the path (leading lists those in the index), and
// none may lie beneath it.
func (s *stager) set(e *indexfile.Entry, leading []string) {
	for _, q := range leading {
		s.remove(q)
	}
	for _, q := range s.below(e.Name) {
		s.remove(q)
	}
	s.entries[e.Name] = e
	s.touched[e.Name] = true
}

// stageDirectory does `git add -- p` for a directory p when git would
// record one gitlink: a submodule's checkout (or an untracked nested
// repository) becomes a gitlink entry at the commit it has checked out.
// Any other directory would be added whole by git: refused.
func (r *Repo) stageDirectory(p string, st sfs.StatData, old *indexfile.Entry, leading []string, s *stager) error {
	alias := r.w.Alias()
	if old != nil && old.Mode != filemode.Submodule {
		return errs.New(errs.InvalidArgument, fmt.Sprintf("path %q was a file and is now a directory; name the files in it (%q) to commit them (the file is then deleted, as git does)", p, p+"/..."))
	}
	gd, err := r.submoduleGitDir(p)
	if err != nil {
		return err
	}
	if gd == "" {
		if old != nil {
			// A submodule that is not checked out: git add changes nothing.
			s.touched[p] = true
			return nil
		}
		return errs.At(errs.InvalidArgument, alias, p, "is a directory; name the files in it to commit them")
	}
	head, ok, err := r.submoduleHead(p)
	if err != nil {
		return err
	}
	if !ok {
		return errs.At(errs.InvalidArgument, alias, p, "is a repository without a commit checked out; git add would refuse it too")
	}
	e := &indexfile.Entry{Entry: &index.Entry{Name: p, Hash: head, Mode: filemode.Submodule}}
	if old != nil {
		e.SkipWorktree = old.SkipWorktree
	}
	e.CreatedAt, e.ModifiedAt = st.Ctime, st.Mtime
	e.Dev, e.Inode, e.UID, e.GID = uint32(st.Dev), uint32(st.Ino), st.Uid, st.Gid
	s.set(e, leading)
	return nil
}

func tooLargeToCommit(alias, p string, size int64) error {
	return errs.At(errs.WriteLimitExceeded, alias, p, fmt.Sprintf("is too large to commit through ServerFS (%d bytes; at most %d)", size, maxStagedFileSize))
}

// ctxReader reads r until ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// pathIgnored reports whether an untracked path (a directory when dir)
// is excluded, itself or through an excluded parent directory, by the
// rules git applies.
func (r *Repo) pathIgnored(p string, dir bool, entry func(string) *index.Entry) (bool, error) {
	fromIndex := r.skipWorktreeBlobs(entry)
	s := r.newIgnoreStack(context.Background(), fromIndex)
	comps := strings.Split(p, "/")
	for i := range comps {
		base := comps[:i]
		name := strings.Join(append(append([]string{}, base...), ".gitignore"), "/")
		// An unreadable .gitignore (a symlink, a directory) counts as
		// absent, as in git.
		b, err := r.readControl(name)
		if err != nil || b == nil {
			b = fromIndex(name)
		}
		s.Push(b, base)
		isDir := i < len(comps)-1 || dir
		if s.Ignored(strings.Join(comps[:i+1], "/"), isDir, i+1) {
			return true, nil
		}
	}
	return false, nil
}
