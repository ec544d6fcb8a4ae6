package git

import (
	"context"
	"errors"
	"github.com/serverfs/serverfs/internal/unidiff"
	"math"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Show limits.
const (
	// maxShowFiles bounds the files one show lists (and diffs).
	maxShowFiles = 5000
)

// ShowFile is one file a commit changed, with git's --numstat counts.
type ShowFile struct {
	Status string `json:"status"` // A, M, D or T (git --name-status --no-renames)
	Path   string `json:"path"`
	// Added and Deleted are the lines git diff --numstat counts (absent:
	// zero); a binary file has none and Binary set.
	Added   int  `json:"added,omitempty"`
	Deleted int  `json:"deleted,omitempty"`
	Binary  bool `json:"binary,omitempty"`
	// NotUTF8: text that is not valid UTF-8 (DiffFile.NotUTF8): its
	// section of the patch is in Latin-1, each byte one character.
	NotUTF8 bool `json:"not_utf8,omitempty"`
	// TooLarge: a side is over 8 MiB or 262,144 lines: not read, no
	// counts, no patch.
	TooLarge bool `json:"too_large,omitempty"`
	// PatchOmitted: the file's patch did not fit in max_bytes (or the
	// call's read or time limit came first); show it alone with paths.
	PatchOmitted bool `json:"patch_omitted,omitempty"`
}

// ShowResult is `git show` of one commit.
type ShowResult struct {
	Commit CommitInfo `json:"commit"`
	// DiffParent is, for a merge, the first parent the files and the
	// patch are against (git show --diff-merges=first-parent); a root
	// commit is diffed against nothing.
	DiffParent string     `json:"diff_parent,omitempty"`
	Files      []ShowFile `json:"files"`
	// FilesTruncated: more than maxShowFiles files changed.
	FilesTruncated bool `json:"files_truncated,omitempty"`
	// HiddenFiles counts changed paths the policy hides; never named.
	HiddenFiles int `json:"hidden_files,omitempty"`
	// Patch is the patch of the files without PatchOmitted (those
	// NotUTF8 in Latin-1),
	// whole files only, as git show -p prints it (git apply --check
	// accepts it against the parent; binary files are "Binary files ...
	// differ").
	Patch     string `json:"patch"`
	Truncated bool   `json:"truncated,omitempty"`
	// TruncatedReason: max_bytes (some patches omitted), read_limit
	// (64 MiB of content read), timeout, or files (FilesTruncated).
	TruncatedReason string `json:"truncated_reason,omitempty"`
}

// Show is `git show --no-renames --diff-merges=first-parent --numstat -p
// rev -- paths`: the commit's metadata, the files it changed against its
// first parent with their line counts, and the patch, whole files only,
// at most maxBytes of it.
func (r *Repo) Show(ctx context.Context, rev string, paths []string, maxBytes int) (*ShowResult, error) {
	ctx, cancel := context.WithTimeout(ctx, r.fs.Limits().SearchTimeout)
	defer cancel()
	if maxBytes <= 0 {
		maxBytes = DefaultDiffBytes
	}
	maxBytes = min(maxBytes, MaxDiffBytes)
	ps, err := r.checkHistoryPaths(paths)
	if err != nil {
		return nil, err
	}
	h, _, c, done, err := r.historyAt(rev, true)
	if err != nil {
		return nil, err
	}
	defer done()
	res := &ShowResult{Commit: h.info(c), Files: []ShowFile{}}
	var from plumbing.Hash
	if parents := h.parents(c); len(parents) > 0 {
		pc, err := h.commit(parents[0])
		if err != nil {
			return nil, err
		}
		from = pc.TreeHash
		if len(parents) > 1 {
			res.DiffParent = parents[0].String()
		}
	}
	var changes []change
	if _, err := h.diffTrees(from, c.TreeHash, "", ps, func(ch change) bool {
		switch {
		case !r.visible(ch.Path):
			res.HiddenFiles++
		case len(changes) == maxShowFiles:
			res.FilesTruncated = true
			return false
		default:
			changes = append(changes, ch)
		}
		return true
	}); err != nil {
		return nil, err
	}
	budget := &readBudget{left: maxDiffCallBytes}
	var patch strings.Builder
	stopped := "" // why the remaining files are not diffed
	drivers := map[string]unidiff.FuncName{}
	for _, ch := range changes {
		f := ShowFile{Status: ch.Status(), Path: ch.Path}
		if stopped == "" && ctx.Err() != nil {
			if ctx.Err() != context.DeadlineExceeded {
				return nil, canceled(h.alias)
			}
			stopped = "timeout"
		}
		if stopped != "" {
			f.PatchOmitted = true
			res.Files = append(res.Files, f)
			continue
		}
		a := side{exists: !ch.From.Hash.IsZero(), mode: ch.From.Mode, hash: ch.From.Hash}
		b := side{exists: !ch.To.Hash.IsZero(), mode: ch.To.Mode, hash: ch.To.Hash}
		if err := r.loadSides(&a, &b, budget); err != nil {
			if errors.Is(err, errReadLimit) {
				stopped = DiffCutReadLimit
				f.PatchOmitted = true
				res.Files = append(res.Files, f)
				continue
			}
			return nil, err
		}
		df, text, err := renderDiff(ctx, ch.Path, a, b, math.MaxInt32, r.funcNameFor(ch.Path, drivers))
		if err != nil {
			if ctx.Err() == context.DeadlineExceeded {
				stopped = "timeout"
				f.PatchOmitted = true
				res.Files = append(res.Files, f)
				continue
			}
			return nil, err
		}
		// (A type change is two sections: binary when either is.)
		f.Binary, f.TooLarge = df.Binary || strings.Contains(text, "\nBinary files "), df.Change == "too_large"
		if a.exists && b.exists && a.hash == b.hash && a.mode != filemode.Submodule {
			// A mode change alone: git's numstat still says whether the
			// content is binary.
			if f.Binary, err = r.blobIsBinary(a.hash, budget); err != nil {
				return nil, err
			}
		}
		if !f.Binary && !f.TooLarge {
			f.Added, f.Deleted = countPatch(text)
		}
		f.NotUTF8 = df.NotUTF8
		if f.NotUTF8 {
			text = Latin1(text)
		}
		switch {
		case f.TooLarge:
		case patch.Len()+len(text) > maxBytes:
			f.PatchOmitted = true
			res.Truncated, res.TruncatedReason = true, DiffCutMaxBytes
		default:
			patch.WriteString(text)
		}
		res.Files = append(res.Files, f)
	}
	res.Patch = patch.String()
	switch {
	case stopped != "":
		res.Truncated, res.TruncatedReason = true, stopped
	case res.FilesTruncated && !res.Truncated:
		res.Truncated, res.TruncatedReason = true, "files"
	}
	return res, nil
}

// blobIsBinary sniffs a blob's head for a NUL, as git does.
func (r *Repo) blobIsBinary(id plumbing.Hash, budget *readBudget) (bool, error) {
	b, err := r.openBlob(id, math.MaxInt64) // only its head is read
	if err != nil {
		return false, err
	}
	defer b.Close()
	head := min(b.size, binarySniff)
	if err := budget.take(head); err != nil {
		return false, nil
	}
	data, err := b.readHead(head)
	if err != nil {
		return false, err
	}
	return isBinary(data), nil
}

// countPatch counts the added and deleted lines of a patch's hunks.
func countPatch(text string) (added, deleted int) {
	in := false
	for len(text) > 0 {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		switch {
		case strings.HasPrefix(line, "@@ "):
			in = true
		case !in:
		case strings.HasPrefix(line, "+"):
			added++
		case strings.HasPrefix(line, "-"):
			deleted++
		case strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\\"):
		default:
			in = false // the next file's header
		}
	}
	return added, deleted
}
