package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	sfs "github.com/serverfs/serverfs/fs"
	gitobject "github.com/serverfs/serverfs/git/internal/object"
	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/internal/unidiff"
)

// Diff limits.
const (
	MaxDiffPaths = 100
	// DefaultDiffBytes and MaxDiffBytes bound the patch text returned.
	DefaultDiffBytes = 64 << 10
	MaxDiffBytes     = 1 << 20
	// maxDiffFileBytes bounds each side of one file's diff, and
	// maxDiffFileLines the lines of a text side; a larger file is listed
	// as too large. Its size is known before it is read (fstat of the
	// opened work-tree file, the blob's object header), so it never is.
	maxDiffFileBytes = 8 << 20
	maxDiffFileLines = 1 << 18
	// maxDiffCallBytes bounds the content one call reads (both sides of
	// every path); the paths after it are not compared (read_limit).
	maxDiffCallBytes = 64 << 20
	// binarySniff is how much git checks for a NUL to call content binary.
	binarySniff = 8000
)

// DiffFile says what the diff found for one requested path.
type DiffFile struct {
	Path string `json:"path"`
	// Change is "added", "modified", "deleted", "type_changed",
	// "mode_changed", "unchanged", "untracked" (git diff shows nothing
	// for it), "unmerged", "too_large" (a side over 8 MiB or 262,144
	// lines: not read, no patch) or "special_file" (a FIFO, socket or
	// device in the work tree: never opened, no patch).
	Change string `json:"change"`
	Binary bool   `json:"binary,omitempty"`
	// NotUTF8: a side is text (no NUL) that is not valid UTF-8 (Latin-1,
	// Windows-1252 sources), which JSON cannot carry byte for byte: the
	// file's section of the patch is written in Latin-1, each byte one
	// character (U+0000-U+00FF); encoded back to bytes it is git's.
	NotUTF8 bool `json:"not_utf8,omitempty"`
	// PatchOmitted: max_bytes left the file's section out of the patch
	// (or cut it short, when it alone was over max_bytes).
	PatchOmitted bool `json:"patch_omitted,omitempty"`
}

// DiffResult is a patch for explicit paths.
type DiffResult struct {
	Workdir string `json:"workdir"`
	Staged  bool   `json:"staged"`
	// Files are the paths compared, in path order; a diff cut by
	// read_limit or timeout leaves the later ones out.
	Files []DiffFile `json:"files"`
	// Patch is a unified diff `git apply` accepts (binary files appear
	// as "Binary files ... differ" lines, which it does not apply; the
	// sections of files NotUTF8 are in Latin-1).
	Patch     string `json:"patch"`
	Truncated bool   `json:"truncated"`
	// TruncatedReason says why: max_bytes (the patch was cut),
	// read_limit (the call read 64 MiB of content) or timeout (the
	// call's time cap passed).
	TruncatedReason string `json:"truncated_reason,omitempty"`
}

// Why a diff was cut (DiffResult.TruncatedReason; and fs.TruncatedTimeout).
const (
	DiffCutMaxBytes  = "max_bytes"
	DiffCutReadLimit = "read_limit"
)

// errReadLimit stops a diff whose call read maxDiffCallBytes.
var errReadLimit = errors.New("the diff read its limit of content")

// readBudget is what a diff call may still read.
type readBudget struct{ left int64 }

func (b *readBudget) take(n int64) error {
	if n > b.left {
		return errReadLimit
	}
	b.left -= n
	return nil
}

// side is one version of a path in a diff.
type side struct {
	exists bool
	mode   filemode.FileMode
	hash   plumbing.Hash
	data   []byte
	large  bool
	// special: a FIFO, socket or device in the work tree, which git
	// takes for a regular file it cannot read; it is never opened.
	special bool
}

// diffDeadline gives a diff its time cap; a test replaces it to end the
// cap at a chosen step instead of after a machine-dependent time.
var diffDeadline = context.WithTimeout

// Diff is `git diff -- paths` (work tree against the index), or with
// staged `git diff --cached -- paths` (index against HEAD), for explicit
// paths only, each passing the path policy. The patch is cut at maxBytes
// (at a file boundary when possible) with Truncated set. A file's size is
// learnt before it is read; the call reads at most maxDiffCallBytes and
// takes at most the search timeout (SERVERFS_SEARCH_TIMEOUT_SECONDS, the
// time inspect_repo advertises), answering what it compared until then.
func (r *Repo) Diff(ctx context.Context, staged bool, paths []string, maxBytes int) (*DiffResult, error) {
	if len(paths) == 0 || len(paths) > MaxDiffPaths {
		return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("paths must name between 1 and %d files: the diff is for explicit paths only", MaxDiffPaths))
	}
	mode := diffWorktree
	if staged {
		mode = diffStaged
	}
	return r.diff(ctx, mode, paths, maxBytes)
}

// MaxHeadDiffPaths bounds the paths of one DiffHead.
const MaxHeadDiffPaths = 10_000

// DiffHead is `git diff HEAD -- paths` (the work tree against HEAD: staged
// and unstaged changes together) with every untracked path among paths
// shown as a new file, as git shows a file added with intent to add (git
// add -N): the whole uncommitted change of those paths. Limits and
// truncation are Diff's.
func (r *Repo) DiffHead(ctx context.Context, paths []string, maxBytes int) (*DiffResult, error) {
	if len(paths) > MaxHeadDiffPaths {
		return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("paths must name at most %d files", MaxHeadDiffPaths))
	}
	return r.diff(ctx, diffHead, paths, maxBytes)
}

// diffMode is what a diff compares.
type diffMode int

const (
	diffWorktree diffMode = iota // work tree against the index
	diffStaged                   // index against HEAD
	diffHead                     // work tree against HEAD, untracked files added
)

func (r *Repo) diff(ctx context.Context, mode diffMode, paths []string, maxBytes int) (*DiffResult, error) {
	defer r.packScope()()
	alias := r.w.Alias()
	if maxBytes <= 0 {
		maxBytes = DefaultDiffBytes
	}
	maxBytes = min(maxBytes, MaxDiffBytes)
	clean, err := r.checkPaths(paths)
	if err != nil {
		return nil, err
	}
	idx, idxStat, err := r.readIndex()
	if err != nil {
		return nil, err
	}
	h, err := r.head()
	if err != nil {
		return nil, err
	}
	tree := map[string]treeEntry{}
	if !h.commit.IsZero() {
		c, err := r.getCommit(h.commit)
		if err != nil {
			return nil, err
		}
		if tree, err = r.treeEntriesAt(c.TreeHash, clean); err != nil {
			return nil, err
		}
	}
	out := &diffOutput{res: &DiffResult{Workdir: alias, Staged: mode == diffStaged, Files: []DiffFile{}}, maxBytes: maxBytes}
	dctx, cancel := diffDeadline(ctx, r.fs.Limits().SearchTimeout)
	defer cancel()
	budget := &readBudget{left: maxDiffCallBytes}
	// The index entries of the paths, found in one pass.
	wanted := make(map[string][]*index.Entry, len(clean))
	for _, p := range clean {
		wanted[p] = nil
	}
	for _, e := range idx.Entries {
		if es, ok := wanted[e.Name]; ok {
			wanted[e.Name] = append(es, e)
		}
	}
	drivers := map[string]unidiff.FuncName{}
	for _, p := range clean {
		if ctx.Err() != nil {
			return nil, canceled(alias)
		}
		if dctx.Err() != nil {
			out.cut(sfs.TruncatedTimeout)
			break
		}
		a, b, early, err := r.diffSides(mode, p, wanted[p], tree, idxStat, budget)
		if err == errReadLimit {
			out.cut(DiffCutReadLimit)
			break
		} else if err != nil {
			return nil, err
		}
		if early != nil {
			out.res.Files = append(out.res.Files, *early)
			continue
		}
		// The patch text beyond what still fits is not rendered (one
		// byte more tells that it did not fit).
		room := maxBytes - out.patch.Len() + 1
		f, text, err := renderDiff(dctx, p, a, b, room, r.funcNameFor(p, drivers))
		if err != nil {
			if ctx.Err() != nil {
				return nil, canceled(alias)
			}
			out.cut(sfs.TruncatedTimeout)
			break
		}
		out.add(f, text)
	}
	out.res.Patch = out.patch.String()
	return out.res, nil
}

// diffOutput gathers a diff's files and its patch text within maxBytes.
type diffOutput struct {
	res      *DiffResult
	patch    strings.Builder
	maxBytes int
}

// cut marks the answer truncated; a later reason replaces only the
// patch-size one (the others stop the walk, which says more).
func (o *diffOutput) cut(reason string) {
	if !o.res.Truncated || o.res.TruncatedReason == DiffCutMaxBytes {
		o.res.Truncated, o.res.TruncatedReason = true, reason
	}
}

// add records a rendered file and appends its patch text if it fits; the
// first patch is cut at a line end rather than omitted.
func (o *diffOutput) add(f DiffFile, text string) {
	if f.NotUTF8 {
		text = Latin1(text)
	}
	if o.patch.Len()+len(text) > o.maxBytes {
		f.PatchOmitted = true
	}
	o.res.Files = append(o.res.Files, f)
	if o.patch.Len()+len(text) > o.maxBytes {
		o.cut(DiffCutMaxBytes)
		if o.patch.Len() == 0 {
			end := strings.LastIndexByte(text[:o.maxBytes], '\n')
			o.patch.WriteString(text[:end+1])
		}
		return
	}
	o.patch.WriteString(text)
}

// diffSides returns the two sides mode compares at p, loaded; or early,
// the whole answer for a path that has no patch (unmerged, untracked or
// absent). errReadLimit says the call's read budget ran out.
func (r *Repo) diffSides(mode diffMode, p string, entries []*index.Entry, tree map[string]treeEntry, idxStat sfs.StatData, budget *readBudget) (a, b side, early *DiffFile, err error) {
	staged := mode == diffStaged
	var inIndex side
	var entry *index.Entry
	unmerged := false
	for _, e := range entries {
		if e.Stage != 0 {
			unmerged = true
			continue
		}
		if !e.IntentToAdd {
			inIndex = side{exists: true, mode: e.Mode, hash: e.Hash}
			entry = e
		} else if !staged {
			inIndex = side{exists: true, mode: e.Mode, hash: emptyBlob}
		}
	}
	if unmerged {
		return a, b, &DiffFile{Path: p, Change: "unmerged"}, nil
	}
	if staged || mode == diffHead {
		if te, ok := tree[p]; ok {
			a = side{exists: true, mode: te.mode, hash: te.hash}
		}
	}
	switch mode {
	case diffStaged:
		b = inIndex
	case diffHead:
		if b, err = r.worktreeSide(p, inIndex, entry, idxStat, budget); err != nil {
			return a, b, nil, err
		}
	default:
		a = inIndex
		if !a.exists {
			change, err := r.untrackedChange(p)
			if err != nil {
				return a, b, nil, err
			}
			return a, b, &DiffFile{Path: p, Change: change}, nil
		}
		if b, err = r.worktreeSide(p, a, entry, idxStat, budget); err != nil {
			return a, b, nil, err
		}
	}
	if err := r.loadSides(&a, &b, budget); err != nil {
		return a, b, nil, err
	}
	return a, b, nil, nil
}

// untrackedChange describes a path not in the index: its content is not
// needed.
func (r *Repo) untrackedChange(p string) (string, error) {
	st, err := r.ctl.Lstat(p)
	switch {
	case err == nil && (st.Type() == sfs.TypeFile || st.Type() == sfs.TypeSymlink):
		return "untracked", nil
	case err != nil && errs.CodeOf(err) != errs.PathNotFound && errs.CodeOf(err) != errs.NotADirectory &&
		errs.CodeOf(err) != errs.SymlinkNotAllowed: // beneath a symlink: no file, as in git
		return "", err
	}
	return "unchanged", nil
}

var emptyBlob = plumbing.ComputeHash(plumbing.BlobObject, nil)

// worktreeSide reads the work-tree version of p (absent, a file, a
// symlink's target, or the commit a submodule's checkout is at) against
// its index version idx (entry ie). A file whose stat data matches ie
// (git's stat-cache check) has the entry's content and is not read; a
// file's size is the opened descriptor's, known before reading it.
func (r *Repo) worktreeSide(p string, idx side, ie *index.Entry, idxStat sfs.StatData, budget *readBudget) (side, error) {
	st, err := r.ctl.Lstat(p)
	switch errs.CodeOf(err) {
	case errs.PathNotFound, errs.NotADirectory, errs.SymlinkNotAllowed:
		// Absent, beneath a file, or beneath a symlink (git's
		// has_symlink_leading_path): no file here.
		return side{}, nil
	}
	if err != nil {
		return side{}, err
	}
	switch st.Type() {
	case sfs.TypeSymlink:
		t, err := r.ctl.Readlink(p)
		if err != nil {
			return side{}, err
		}
		return side{exists: true, mode: filemode.Symlink, data: []byte(t), hash: plumbing.ComputeHash(plumbing.BlobObject, []byte(t))}, nil
	case sfs.TypeFile:
		execMode := func(st sfs.StatData) filemode.FileMode {
			if st.Mode&0o100 != 0 && r.fileMode {
				return filemode.Executable
			}
			return filemode.Regular
		}
		if ie != nil && (ie.Mode == filemode.Regular || ie.Mode == filemode.Executable) && r.statMatches(st, ie, idxStat) {
			return side{exists: true, mode: execMode(st), hash: ie.Hash}, nil
		}
		f, err := r.ctl.Open(p)
		if err != nil {
			return side{}, err
		}
		defer f.Close()
		if st, err = f.Fstat(); err != nil {
			return side{}, err
		}
		mode := execMode(st)
		if st.Size > maxDiffFileBytes {
			return side{exists: true, mode: mode, large: true}, nil
		}
		if err := budget.take(st.Size); err != nil {
			return side{}, err
		}
		data := make([]byte, 0, st.Size+1)
		buf := bytes.NewBuffer(data)
		if _, err := buf.ReadFrom(io.LimitReader(f, maxDiffFileBytes+1)); err != nil {
			return side{}, err
		}
		if data = buf.Bytes(); len(data) > maxDiffFileBytes {
			return side{exists: true, mode: mode, large: true}, nil // it grew while read
		}
		return side{exists: true, mode: mode, data: data, hash: plumbing.ComputeHash(plumbing.BlobObject, data)}, nil
	case sfs.TypeDirectory:
		if idx.exists && idx.mode == filemode.Submodule {
			// A gitlink's work-tree side is the checkout's HEAD; a plain
			// directory or an unborn HEAD is no change (as in git).
			head, ok, err := r.submoduleHead(p)
			if err != nil || !ok {
				return idx, err
			}
			return side{exists: true, mode: filemode.Submodule, hash: head}, nil
		}
		return side{}, nil // git sees no file here
	default:
		return side{exists: true, mode: filemode.Regular, special: true}, nil
	}
}

// loadSides reads the blob sides' content from the object store, each
// after its size (from the object header) passed the limits; sides of the
// same content are not read (nothing of them is shown).
func (r *Repo) loadSides(a, b *side, budget *readBudget) error {
	if a.exists && b.exists && a.hash == b.hash && !a.hash.IsZero() {
		return nil
	}
	for _, s := range []*side{a, b} {
		if !s.exists || s.data != nil || s.large || s.special {
			continue
		}
		if s.mode == filemode.Submodule {
			s.data = subprojectText(s.hash) // git's text for a gitlink
			continue
		}
		b, err := r.openBlob(s.hash, maxDiffFileBytes)
		if _, ok := tooLargeSize(err); ok {
			s.large = true
			continue
		}
		if err != nil {
			return err
		}
		err = budget.take(b.size)
		if err == nil {
			s.data, err = b.readAll()
		}
		b.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// renderDiff writes git's patch for one path: at most about room bytes
// of it (the caller cuts), and an error when ctx is done first. A text
// side that is not valid UTF-8 sets NotUTF8: the caller leaves the text
// out of the patch.
func renderDiff(ctx context.Context, p string, a, b side, room int, funcName unidiff.FuncName) (DiffFile, string, error) {
	f := DiffFile{Path: p}
	switch {
	case !a.exists && !b.exists:
		f.Change = "unchanged"
		return f, "", nil
	case !a.exists:
		f.Change = "added"
	case !b.exists:
		f.Change = "deleted"
	case gitobject.Kind(a.mode) != gitobject.Kind(b.mode):
		f.Change = "type_changed"
	case a.hash == b.hash && a.mode == b.mode && !a.hash.IsZero():
		// (A large work-tree side has no hash: it was not read.)
		f.Change = "unchanged"
		return f, "", nil
	case a.hash == b.hash && !a.hash.IsZero():
		f.Change = "mode_changed"
	default:
		f.Change = "modified"
	}
	if a.special || b.special {
		f.Change = "special_file"
		return f, "", nil
	}
	if (a.large || b.large) && f.Change != "mode_changed" {
		f.Change = "too_large"
		return f, "", nil
	}
	if f.Change == "type_changed" {
		// git shows a type change as a deletion and an addition.
		df, del, err := renderDiff(ctx, p, a, side{}, room, funcName)
		if err != nil {
			return f, "", err
		}
		af, add, err := renderDiff(ctx, p, side{}, b, room-len(del), funcName)
		f.NotUTF8 = df.NotUTF8 || af.NotUTF8
		return f, del + add, err
	}
	qa, qb := quotePath("a/"+p), quotePath("b/"+p)
	var out strings.Builder
	fmt.Fprintf(&out, "diff --git %s %s\n", qa, qb)
	switch f.Change {
	case "added":
		fmt.Fprintf(&out, "new file mode %06o\nindex %s..%s\n", uint32(b.mode), short(plumbing.ZeroHash), short(b.hash))
	case "deleted":
		fmt.Fprintf(&out, "deleted file mode %06o\nindex %s..%s\n", uint32(a.mode), short(a.hash), short(plumbing.ZeroHash))
	default:
		if a.mode != b.mode {
			fmt.Fprintf(&out, "old mode %06o\nnew mode %06o\n", uint32(a.mode), uint32(b.mode))
		}
		if a.hash != b.hash {
			if a.mode == b.mode {
				fmt.Fprintf(&out, "index %s..%s %06o\n", short(a.hash), short(b.hash), uint32(a.mode))
			} else {
				fmt.Fprintf(&out, "index %s..%s\n", short(a.hash), short(b.hash))
			}
		}
	}
	if a.hash == b.hash && a.exists && b.exists {
		return f, out.String(), nil // a mode change alone
	}
	if isBinary(a.data) || isBinary(b.data) {
		f.Binary = true
		from, to := qa, qb
		if !a.exists {
			from = "/dev/null"
		}
		if !b.exists {
			to = "/dev/null"
		}
		fmt.Fprintf(&out, "Binary files %s and %s differ\n", from, to)
		return f, out.String(), nil
	}
	if len(a.data) == 0 && len(b.data) == 0 {
		return f, out.String(), nil // an empty file added or deleted: headers only
	}
	if bytes.Count(a.data, newline) > maxDiffFileLines || bytes.Count(b.data, newline) > maxDiffFileLines {
		f.Change = "too_large"
		return f, "", nil
	}
	if a.exists {
		fmt.Fprintf(&out, "--- %s\n", qa)
	} else {
		out.WriteString("--- /dev/null\n")
	}
	if b.exists {
		fmt.Fprintf(&out, "+++ %s\n", qb)
	} else {
		out.WriteString("+++ /dev/null\n")
	}
	hunks, _, err := unidiff.HunksBounded(ctx, a.data, b.data, max(0, room-out.Len()), funcName)
	if err != nil {
		return f, "", err
	}
	out.WriteString(hunks)
	// (The hunks are still rendered: show counts their lines, as git's
	// numstat does; the callers leave the text out of the patch.)
	f.NotUTF8 = !utf8.Valid(a.data) || !utf8.Valid(b.data)
	return f, out.String(), nil
}

var newline = []byte{'\n'}

// Latin1 is s with each byte one character: bytes under 0x80 as they
// are, the others as U+0080-U+00FF. Lossless for any bytes, which is why
// a patch of a file that is not UTF-8 is written so: encoding each
// character back to its byte gives git's patch.
func Latin1(s string) string {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			n++
		}
	}
	if n == len(s) {
		return s
	}
	b := make([]byte, 0, n)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x80 {
			b = append(b, c)
		} else {
			b = utf8.AppendRune(b, rune(c))
		}
	}
	return string(b)
}

func short(h plumbing.Hash) string { return h.String()[:7] }

func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), binarySniff)], 0) >= 0
}

// quotePath is git's quoting of a path in a patch header.
func quotePath(s string) string { return unidiff.QuotePath(s) }
