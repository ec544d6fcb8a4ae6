package git

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git/internal/indexfile"
	"github.com/serverfs/serverfs/internal/errs"
)

// Commit limits.
const (
	MaxCommitPaths    = 1000
	MaxMessageBytes   = 64 << 10
	maxStagedFileSize = maxBlobBytes
	// maxCommitBytes bounds the content one commit reads (every file
	// named): checked from the files' sizes before any is read.
	maxCommitBytes = 1 << 30
)

// CommitResult describes a commit made.
type CommitResult struct {
	Workdir string `json:"workdir"`
	Commit  string `json:"commit"`
	Branch  string `json:"branch,omitempty"` // "" when HEAD was detached
	Parent  string `json:"parent,omitempty"`
	// Added, Modified and Deleted list the paths the commit changed.
	Added    []string `json:"added"`
	Modified []string `json:"modified"`
	Deleted  []string `json:"deleted"`
	// HiddenDeleted counts paths the policy hides that the commit
	// deleted because a named path replaced them (a directory became a
	// file), as git add does; they are never named.
	HiddenDeleted int `json:"hidden_deleted,omitempty"`
}

// checkMessage refuses a commit message git would store badly or that
// costs more than a message should: empty, over MaxMessageBytes, with a NUL
// byte, or not UTF-8.
func checkMessage(message string) error {
	switch {
	case strings.TrimSpace(message) == "":
		return errs.New(errs.InvalidArgument, "message is empty")
	case len(message) > MaxMessageBytes:
		return errs.New(errs.InvalidArgument, fmt.Sprintf("message is longer than %d bytes", MaxMessageBytes))
	case strings.IndexByte(message, 0) >= 0:
		return errs.New(errs.InvalidArgument, "message contains a NUL byte")
	case !utf8.ValidString(message):
		return errs.New(errs.InvalidArgument, "message is not valid UTF-8")
	}
	return nil
}

// checkCommitArgs validates the message and paths before anything is
// touched, and returns the paths cleaned and de-duplicated.
func (r *Repo) checkCommitArgs(paths []string, message string) ([]string, error) {
	if err := checkMessage(message); err != nil {
		return nil, err
	}
	switch {
	case len(paths) == 0:
		return nil, errs.New(errs.InvalidArgument, "paths is empty: name the files to commit")
	case len(paths) > MaxCommitPaths:
		return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("at most %d paths per commit", MaxCommitPaths))
	}
	return r.checkPaths(paths)
}

// checkPaths validates agent-named file paths for commit and diff: the
// path policy, no options or pathspec magic, nothing in .git; it returns
// them cleaned, de-duplicated and sorted.
func (r *Repo) checkPaths(paths []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, raw := range paths {
		// Not options, not pathspec magic: ServerFS passes no path to a
		// git program, but a name like this is never what an agent means.
		if strings.HasPrefix(raw, "-") || strings.HasPrefix(raw, ":") {
			return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("path %q looks like an option or pathspec magic; name files by their path", sfs.DisplayPath(raw)))
		}
		p, err := r.w.CleanPath(raw)
		if err != nil {
			return nil, err
		}
		if p == "" || strings.HasSuffix(raw, "/") {
			return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("path %q is not a file path", sfs.DisplayPath(raw)))
		}
		if sfs.InGitDir(p) {
			return nil, errs.At(errs.DeniedPath, r.w.Alias(), p, "is inside .git; repository metadata is never committed")
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Commit stages exactly paths (additions, modifications and deletions,
// from the work tree) and commits them with message on the current branch
// (or detached HEAD), as `git add -- paths && git commit -m message` would
// when nothing else is staged. It takes the workdir's writer lease and
// git's locks (.git/index.lock, the ref's lock), writes reflog entries,
// runs no hook and signs nothing. It refuses: a read-only workdir, a merge
// or rebase in progress, unmerged paths, changes already staged, paths
// the policy hides, ignored untracked paths, content git would convert
// (filters, line endings), and a result equal to HEAD. On any failure the
// index and refs are left as they were.
func (r *Repo) Commit(ctx context.Context, paths []string, message string) (*CommitResult, error) {
	defer r.packScope()()
	alias := r.w.Alias()
	if r.w.Mode() != sfs.ModeReadWrite {
		return nil, errs.At(errs.WorkdirReadOnly, alias, "", "is read-only; commits need a read-write workdir")
	}
	paths, err := r.checkCommitArgs(paths, message)
	if err != nil {
		return nil, err
	}
	release, err := r.fs.Lease().Acquire(ctx, alias)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := r.checkNoOperationInProgress(); err != nil {
		return nil, err
	}
	ident, err := r.identity()
	if err != nil {
		return nil, err
	}
	h, err := r.head()
	if err != nil {
		return nil, err
	}

	// git's index lock: a running git holds it, and so does ServerFS
	// until the commit is done. Releasing it without renaming leaves
	// the index as it was.
	lock, err := r.ctl.CreateExclusive(".git/index.lock", 0o644)
	if errs.CodeOf(err) == errs.PathExists {
		return nil, errs.At(errs.RepoLocked, alias, "", "is locked by another git process (.git/index.lock exists); try again when it has finished")
	}
	if err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		lock.Close()
		if !committed {
			r.ctl.Remove(".git/index.lock")
		}
	}()
	c, err := r.readCommitIndex(ctx, h, paths)
	if err != nil {
		return nil, err
	}
	res := &CommitResult{Workdir: alias, Branch: h.branch, Added: []string{}, Modified: []string{}, Deleted: []string{}}
	if err := r.checkCommitSize(paths); err != nil {
		return nil, err
	}
	if err := r.stageNamed(ctx, c); err != nil {
		return nil, err
	}
	if err := r.lookUpReplaced(c); err != nil {
		return nil, err
	}
	// The tree the index now describes (intent-to-add entries are not
	// committed, as in git).
	newTree, cache, err := r.writeTrees(c.entries)
	if err != nil {
		return nil, err
	}
	r.listChanges(c, res)
	var parents []plumbing.Hash
	if !h.commit.IsZero() {
		parents = []plumbing.Hash{h.commit}
		res.Parent = h.commit.String()
		if c.headTree == newTree {
			return nil, errs.At(errs.NothingToCommit, alias, "", "has nothing to commit: the named paths match HEAD")
		}
	} else if len(res.Added) == 0 {
		return nil, errs.At(errs.NothingToCommit, alias, "", "has nothing to commit: the named paths add nothing")
	}

	sig := object.Signature{Name: ident.name, Email: ident.email, When: time.Now()}
	msg := cleanupMessage(message)
	commitHash, err := r.writeCommitObject(sig, msg, newTree, parents)
	if err != nil {
		return nil, err
	}
	res.Commit = commitHash.String()

	// The new index into the lock file; the ref; then the index.
	if err := writeIndexLock(lock, c, cache); err != nil {
		return nil, err
	}
	if err := r.guardCommit(ctx, h); err != nil {
		return nil, err
	}
	subject := strings.SplitN(msg, "\n", 2)[0]
	verb := "commit"
	if len(parents) == 0 {
		verb = "commit (initial)"
	}
	if err := r.updateRef(h, commitHash, sig, verb+": "+subject); err != nil {
		return nil, err
	}
	if err := lock.Close(); err != nil {
		return nil, err
	}
	if err := r.ctl.Rename(".git/index.lock", ".git/index"); err != nil {
		return nil, err
	}
	committed = true
	// ok means durable: an index whose rename a cut may forget is not.
	if err := r.ctl.SyncDir(".git"); err != nil {
		return nil, err
	}
	return res, nil
}

// checkNoOperationInProgress refuses a commit while git is in the middle
// of a merge, rebase, cherry-pick or revert: committing then would record
// a half-finished operation as an ordinary commit.
func (r *Repo) checkNoOperationInProgress() error {
	for _, f := range []string{"MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply"} {
		if _, err := r.ctl.Lstat(".git/" + f); err == nil {
			return errs.At(errs.RepoBusy, r.w.Alias(), "", fmt.Sprintf("has a merge, rebase, cherry-pick or revert in progress (.git/%s); finish it with git first", f))
		}
	}
	return nil
}

// commitState carries a commit's index and HEAD's view of it between
// Commit's steps.
type commitState struct {
	paths    []string
	idx      *indexfile.File
	idxStat  sfs.StatData
	head     plumbing.Hash
	headTree plumbing.Hash
	// tree holds HEAD's entries at the named paths (and, once looked
	// up, at the paths they replaced).
	tree    map[string]treeEntry
	entries map[string]*indexfile.Entry
	// staged lists the paths whose index entry differs from HEAD before
	// the commit stages anything.
	staged []string
	st     *stager
	// replaced lists the index entries a named path replaced.
	replaced []string
}

// readCommitIndex reads the index (refusing unmerged entries) and HEAD's
// tree at the named paths.
func (r *Repo) readCommitIndex(ctx context.Context, h headInfo, paths []string) (*commitState, error) {
	c := &commitState{paths: paths}
	var err error
	c.idx, c.idxStat, err = r.readIndex()
	if err != nil {
		return nil, err
	}
	// HEAD's tree, except where the cache tree shows the index equals it
	// (those directories cannot hold staged changes), for the staged-
	// changes check; the named paths are looked up in it on their own.
	if !h.commit.IsZero() {
		hc, err := r.getCommit(h.commit)
		if err != nil {
			return nil, err
		}
		c.head, c.headTree = h.commit, hc.TreeHash
	}
	rest, same, err := r.headTreeExcept(ctx, h.commit, c.idx.CacheTrees)
	if err != nil {
		return nil, err
	}
	c.tree, err = r.treeEntriesAt(c.headTree, paths)
	if err != nil {
		return nil, err
	}
	c.entries = map[string]*indexfile.Entry{}
	for i, e := range c.idx.Entries {
		if e.Stage != 0 {
			return nil, errs.At(errs.RepoBusy, r.w.Alias(), "", "has unmerged paths; resolve them with git first")
		}
		c.entries[e.Name] = &indexfile.Entry{Entry: e, AssumeValid: c.idx.AssumeValid[i]}
	}
	c.staged = stagedChanges(c.entries, rest, same)
	return c, nil
}

// checkCommitSize refuses, from the files' sizes, a commit larger than it
// may be before anything is read (stagePath checks each file again once
// opened).
func (r *Repo) checkCommitSize(paths []string) error {
	alias := r.w.Alias()
	budget := int64(maxCommitBytes)
	for _, p := range paths {
		if fst, err := r.ctl.Lstat(p); err == nil && fst.Type() == sfs.TypeFile {
			if fst.Size > maxStagedFileSize {
				return tooLargeToCommit(alias, p, fst.Size)
			}
			if budget -= fst.Size; budget < 0 {
				return errs.At(errs.WriteLimitExceeded, alias, "", fmt.Sprintf("the files named hold more than a commit through ServerFS takes (%d bytes); commit them in parts", maxCommitBytes))
			}
		}
	}
	return nil
}

// stageNamed stages every named path from the work tree into c.entries.
func (r *Repo) stageNamed(ctx context.Context, c *commitState) error {
	alias := r.w.Alias()
	c.st = &stager{entries: c.entries, sorted: sortedNames(c.entries), touched: map[string]bool{}, named: map[string]bool{}}
	for _, p := range c.paths {
		c.st.named[p] = true
	}
	for _, p := range c.paths {
		if err := ctx.Err(); err != nil {
			return canceled(alias)
		}
		if err := r.stagePath(ctx, p, c.st); err != nil {
			if ctx.Err() != nil {
				return canceled(alias)
			}
			return err
		}
	}
	// Changes staged before, on paths the commit neither names nor
	// replaces, would be committed without being asked for: refused
	// (staged changes on named paths are overwritten by the work tree,
	// as git add does).
	return r.unnamedStaged(c)
}

// lookUpReplaced collects the index entries a named path replaced (a file
// where a directory was, or the reverse), deleted as git add deletes
// them, and looks them up in HEAD's tree.
func (r *Repo) lookUpReplaced(c *commitState) error {
	for q := range c.st.touched {
		if !c.st.named[q] {
			c.replaced = append(c.replaced, q)
		}
	}
	sort.Strings(c.replaced)
	if len(c.replaced) == 0 {
		return nil
	}
	more, err := r.treeEntriesAt(c.headTree, c.replaced)
	if err != nil {
		return err
	}
	for q, te := range more {
		c.tree[q] = te
	}
	return nil
}

// listChanges fills res's Added, Modified and Deleted from the named
// paths' entries against HEAD; replaced paths the policy hides are only
// counted.
func (r *Repo) listChanges(c *commitState, res *CommitResult) {
	for _, p := range c.paths {
		e, inIndex := c.entries[p]
		te, inHead := c.tree[p]
		switch {
		case inIndex && !e.IntentToAdd && !inHead:
			res.Added = append(res.Added, p)
		case inIndex && !e.IntentToAdd && (te.hash != e.Hash || te.mode != e.Mode):
			res.Modified = append(res.Modified, p)
		case (!inIndex || e.IntentToAdd) && inHead:
			res.Deleted = append(res.Deleted, p)
		}
	}
	for _, q := range c.replaced {
		if _, inHead := c.tree[q]; !inHead {
			continue
		}
		if r.visible(q) {
			res.Deleted = append(res.Deleted, q)
		} else {
			res.HiddenDeleted++
		}
	}
	sort.Strings(res.Deleted)
}

// writeCommitObject writes the commit object and returns its hash.
func (r *Repo) writeCommitObject(sig object.Signature, msg string, tree plumbing.Hash, parents []plumbing.Hash) (plumbing.Hash, error) {
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree, ParentHashes: parents}
	enc := &plumbing.MemoryObject{}
	if err := c.EncodeWithoutSignature(enc); err != nil {
		return plumbing.ZeroHash, err
	}
	content, _ := io.ReadAll(mustReader(enc))
	return r.writeObject(plumbing.CommitObject, content)
}

// writeIndexLock writes and syncs the new index into the lock file.
func writeIndexLock(lock *sfs.WFile, c *commitState, cache *cacheNode) error {
	list := make([]indexfile.Entry, 0, len(c.entries))
	for _, e := range c.entries {
		// Racily clean entries (modified no earlier than the index we
		// read was written) would look clean forever once the new,
		// later index exists: smudge them as git does (size 0 makes
		// every reader compare the content).
		if e.Mode != filemode.Submodule && !c.idxStat.Mtime.IsZero() && e.ModifiedAt.Unix() >= c.idxStat.Mtime.Unix() {
			smudged := *e.Entry
			smudged.Size = 0
			e = &indexfile.Entry{Entry: &smudged, AssumeValid: e.AssumeValid}
		}
		list = append(list, *e)
	}
	var treeExt []byte
	if cache != nil && plainEntries(c.entries) {
		treeExt = encodeCacheTree(nil, cache)
	}
	if _, err := lock.Write(indexfile.Encode(c.idx.Version, list, treeExt)); err != nil {
		return err
	}
	return lock.Sync()
}

// guardCommit registers the commit with a lease shared through the host
// bridge: if this process dies before finishing, the bridge completes or
// undoes it (from the lock and the ref) before the next holder gets the
// lease.
func (r *Repo) guardCommit(ctx context.Context, h headInfo) error {
	g, ok := r.fs.Lease().(sfs.CommitGuard)
	if !ok {
		return nil
	}
	ref, old := "HEAD", ""
	if h.branch != "" {
		ref = "refs/heads/" + h.branch
	}
	if !h.commit.IsZero() {
		old = h.commit.String()
	}
	return g.GuardCommit(ctx, r.w.Alias(), ref, old)
}

func mustReader(o *plumbing.MemoryObject) io.Reader {
	rd, _ := o.Reader()
	return rd
}

// plainEntries reports whether no entry is intent-to-add (the cache tree
// written is then exactly the index).
func plainEntries(entries map[string]*indexfile.Entry) bool {
	for _, e := range entries {
		if e.IntentToAdd {
			return false
		}
	}
	return true
}

// stagedChanges returns the paths whose index entry differs from HEAD,
// sorted; tree is HEAD's tree outside the directories same (equal to the
// index).
func stagedChanges(entries map[string]*indexfile.Entry, tree map[string]treeEntry, same sameDirs) []string {
	var diff []string
	for p, e := range entries {
		if e.IntentToAdd || same.covers(p) {
			continue
		}
		if te, ok := tree[p]; !ok || te.hash != e.Hash || te.mode != e.Mode {
			diff = append(diff, p)
		}
	}
	for p := range tree {
		if e, ok := entries[p]; !ok || e.IntentToAdd {
			diff = append(diff, p)
		}
	}
	sort.Strings(diff)
	return diff
}

// maxNamedInRefusal bounds the staged paths a refusal lists.
const maxNamedInRefusal = 5

// unnamedStaged refuses the commit when a path of c.staged (the index
// against HEAD before the commit) is not covered by staging the named
// paths: set or removed by it, beneath a path it set or removed (a
// directory that became a file), or a leading directory of one (a file
// that became a directory). The refusal names the visible ones (a few)
// and only counts those the policy hides; where the index holds HEAD's
// parent's version it says that committing them would undo HEAD.
func (r *Repo) unnamedStaged(c *commitState) error {
	if len(c.staged) == 0 {
		return nil
	}
	touched := c.st.touched
	leadingOfTouched := map[string]bool{}
	for q := range touched {
		for d := range leading(q) {
			leadingOfTouched[d] = true
		}
	}
	covered := func(p string) bool {
		if touched[p] || leadingOfTouched[p] {
			return true
		}
		for d := range leading(p) {
			if touched[d] {
				return true
			}
		}
		return false
	}
	var uncovered []string
	for _, p := range c.staged {
		if !covered(p) {
			uncovered = append(uncovered, p)
		}
	}
	if len(uncovered) == 0 {
		return nil
	}
	msg := fmt.Sprintf("has %d change(s) already staged on paths the commit does not name (%s): the index differs from HEAD there, and a commit would include them; ",
		len(uncovered), r.pathList(uncovered))
	if rev := r.revertsHead(c, uncovered); len(rev) > 0 {
		// The index is behind the branch (it moved without its
		// checkout): "name them too" would commit the reversal.
		msg += fmt.Sprintf("on %d of them (%s) the index holds HEAD's parent's version, so committing them would undo HEAD's own change there "+
			"(as when the branch moved while this checkout did not follow). Do not name those: bring them to HEAD with git first "+
			"(git restore --source=HEAD --staged --worktree -- PATH, which also drops work-tree edits there), then commit",
			len(rev), r.pathList(rev))
	} else {
		msg += "name them too, or commit or unstage them with git first"
	}
	return errs.At(errs.RepoStagedChanges, r.w.Alias(), "", msg)
}

// maxRevertLookups bounds the staged paths revertsHead looks up.
const maxRevertLookups = 1000

// revertsHead returns those of paths (at most maxRevertLookups looked
// at) whose index entry is the version of HEAD's first parent (absent
// there and in the index, or the same blob and mode): a commit would undo
// what HEAD changed there.
func (r *Repo) revertsHead(c *commitState, paths []string) []string {
	if c.head.IsZero() {
		return nil
	}
	hc, err := r.getCommit(c.head)
	if err != nil || len(hc.ParentHashes) == 0 {
		return nil
	}
	pc, err := r.getCommit(hc.ParentHashes[0])
	if err != nil {
		return nil
	}
	paths = paths[:min(len(paths), maxRevertLookups)]
	parent, err := r.treeEntriesAt(pc.TreeHash, paths)
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range paths {
		pe, inParent := parent[p]
		e := c.entries[p]
		if e == nil && !inParent || e != nil && inParent && !e.IntentToAdd && e.Hash == pe.hash && e.Mode == pe.mode {
			out = append(out, p)
		}
	}
	return out
}

// cleanupMessage is git's "whitespace" cleanup of a -m message: trailing
// whitespace stripped from every line, leading and trailing blank lines
// removed, runs of blank lines collapsed, and a final newline.
func cleanupMessage(m string) string {
	lines := strings.Split(strings.ReplaceAll(m, "\r\n", "\n"), "\n")
	var out []string
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r\v\f")
		if l == "" {
			blank = len(out) > 0
			continue
		}
		if blank {
			out = append(out, "")
			blank = false
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n"
}

type identity struct{ name, email string }

// identity is user.name and user.email from the configuration files in
// git's order (system, global, repository; the last one set wins).
func (r *Repo) identity() (identity, error) {
	id := identity{name: r.get("user", "", "name"), email: r.get("user", "", "email")}
	if strings.TrimSpace(id.name) == "" || strings.TrimSpace(id.email) == "" {
		return id, errs.At(errs.RepoIdentityMissing, r.w.Alias(), "", "has no committer identity: set user.name and user.email in the repository's or the server user's git configuration")
	}
	if strings.ContainsAny(id.name+id.email, "<>\n\x00") {
		return id, errs.At(errs.RepoIdentityMissing, r.w.Alias(), "", "has a user.name or user.email git would refuse (it contains <, > or a newline)")
	}
	return id, nil
}
