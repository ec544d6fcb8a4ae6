package git

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/unidiff"
)

// Diff limits.
const (
	MaxDiffPaths = 100
	// DefaultDiffBytes and MaxDiffBytes bound the patch text returned.
	DefaultDiffBytes = 64 << 10
	MaxDiffBytes     = 1 << 20
	// maxDiffFileBytes bounds each side of one file's diff; larger files
	// are listed as too large instead.
	maxDiffFileBytes = 8 << 20
	// binarySniff is how much git checks for a NUL to call content binary.
	binarySniff = 8000
)

// DiffFile says what the diff found for one requested path.
type DiffFile struct {
	Path string `json:"path"`
	// Change is "added", "modified", "deleted", "type_changed",
	// "mode_changed", "unchanged", "untracked" (git diff shows nothing
	// for it), "unmerged" or "too_large".
	Change string `json:"change"`
	Binary bool   `json:"binary,omitempty"`
}

// DiffResult is a patch for explicit paths.
type DiffResult struct {
	Workdir string     `json:"workdir"`
	Staged  bool       `json:"staged"`
	Files   []DiffFile `json:"files"`
	// Patch is a unified diff `git apply` accepts (binary files appear
	// as "Binary files ... differ" lines, which it does not apply).
	Patch     string `json:"patch"`
	Truncated bool   `json:"truncated"`
}

// side is one version of a path in a diff.
type side struct {
	exists bool
	mode   filemode.FileMode
	hash   plumbing.Hash
	data   []byte
	large  bool
}

// Diff is `git diff -- paths` (work tree against the index), or with
// staged `git diff --cached -- paths` (index against HEAD), for explicit
// paths only, each passing the path policy. The patch is cut at maxBytes
// (at a file boundary when possible) with Truncated set.
func (r *Repo) Diff(ctx context.Context, staged bool, paths []string, maxBytes int) (*DiffResult, error) {
	alias := r.w.Alias()
	if len(paths) == 0 || len(paths) > MaxDiffPaths {
		return nil, argError(fmt.Sprintf("paths must name between 1 and %d files: the diff is for explicit paths only", MaxDiffPaths))
	}
	if maxBytes <= 0 {
		maxBytes = DefaultDiffBytes
	}
	maxBytes = min(maxBytes, MaxDiffBytes)
	clean, err := r.checkPaths(paths)
	if err != nil {
		return nil, err
	}
	idx, _, err := r.readIndex()
	if err != nil {
		return nil, err
	}
	h, err := r.head()
	if err != nil {
		return nil, err
	}
	tree := map[string]treeEntry{}
	if !h.commit.IsZero() {
		c, err := object.GetCommit(r.storage, h.commit)
		if err != nil {
			return nil, err
		}
		if tree, err = r.treeEntriesAt(c.TreeHash, clean); err != nil {
			return nil, err
		}
	}
	res := &DiffResult{Workdir: alias, Staged: staged, Files: []DiffFile{}}
	var patch strings.Builder
	for _, p := range clean {
		if ctx.Err() != nil {
			return nil, canceled(alias)
		}
		var inIndex side
		unmerged := false
		for _, e := range idx.entries {
			if e.Name != p {
				continue
			}
			if e.Stage != 0 {
				unmerged = true
				continue
			}
			if !e.IntentToAdd {
				inIndex = side{exists: true, mode: e.Mode, hash: e.Hash}
			} else if !staged {
				inIndex = side{exists: true, mode: e.Mode, hash: emptyBlob}
			}
		}
		if unmerged {
			res.Files = append(res.Files, DiffFile{Path: p, Change: "unmerged"})
			continue
		}
		var a, b side
		if staged {
			if te, ok := tree[p]; ok {
				a = side{exists: true, mode: te.mode, hash: te.hash}
			}
			b = inIndex
		} else {
			a = inIndex
			if b, err = r.worktreeSide(p, a); err != nil {
				return nil, err
			}
			if !a.exists {
				change := "unchanged"
				if b.exists {
					change = "untracked"
				}
				res.Files = append(res.Files, DiffFile{Path: p, Change: change})
				continue
			}
		}
		for _, s := range []*side{&a, &b} {
			if err := r.loadSide(s); err != nil {
				return nil, err
			}
		}
		f, text := renderDiff(p, a, b)
		res.Files = append(res.Files, f)
		if patch.Len()+len(text) > maxBytes {
			res.Truncated = true
			if patch.Len() == 0 {
				cut := strings.LastIndexByte(text[:maxBytes], '\n')
				patch.WriteString(text[:cut+1])
			}
			continue
		}
		patch.WriteString(text)
	}
	res.Patch = patch.String()
	return res, nil
}

var emptyBlob = plumbing.ComputeHash(plumbing.BlobObject, nil)

// worktreeSide reads the work-tree version of p (absent, a file, a
// symlink's target, or the commit a submodule's checkout is at) against
// its index version idx.
func (r *Repo) worktreeSide(p string, idx side) (side, error) {
	st, err := r.ctl.Lstat(p)
	if sfs.CodeOf(err) == sfs.CodePathNotFound || sfs.CodeOf(err) == sfs.CodeNotADirectory {
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
		mode := filemode.Regular
		if st.Mode&0o100 != 0 && r.fileMode {
			mode = filemode.Executable
		}
		if st.Size > maxDiffFileBytes {
			return side{exists: true, mode: mode, large: true}, nil
		}
		f, err := r.ctl.Open(p)
		if err != nil {
			return side{}, err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, maxDiffFileBytes+1))
		if err != nil {
			return side{}, err
		}
		if len(data) > maxDiffFileBytes {
			return side{exists: true, mode: mode, large: true}, nil
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
		return side{}, nil // a special file: git sees no file here
	}
}

// loadSide reads a blob side's content from the object store.
func (r *Repo) loadSide(s *side) error {
	if !s.exists || s.data != nil || s.large {
		return nil
	}
	if s.mode == filemode.Submodule {
		s.data = subprojectText(s.hash) // git's text for a gitlink
		return nil
	}
	if s.hash == emptyBlob {
		s.data = []byte{}
		return nil
	}
	b, err := object.GetBlob(r.storage, s.hash)
	if err != nil {
		return fmt.Errorf("reading blob: %w", err)
	}
	if b.Size > maxDiffFileBytes {
		s.large = true
		return nil
	}
	rd, err := b.Reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	s.data, err = io.ReadAll(rd)
	return err
}

// renderDiff writes git's patch for one path.
func renderDiff(p string, a, b side) (DiffFile, string) {
	f := DiffFile{Path: p}
	switch {
	case !a.exists && !b.exists:
		f.Change = "unchanged"
		return f, ""
	case !a.exists:
		f.Change = "added"
	case !b.exists:
		f.Change = "deleted"
	case kind(a.mode) != kind(b.mode):
		f.Change = "type_changed"
	case a.hash == b.hash && a.mode == b.mode && !a.large && !b.large:
		f.Change = "unchanged"
		return f, ""
	case a.hash == b.hash && !a.large && !b.large:
		f.Change = "mode_changed"
	default:
		f.Change = "modified"
	}
	if a.large || b.large {
		f.Change = "too_large"
		return f, ""
	}
	if f.Change == "type_changed" {
		// git shows a type change as a deletion and an addition.
		_, del := renderDiff(p, a, side{})
		_, add := renderDiff(p, side{}, b)
		return f, del + add
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
		return f, out.String() // a mode change alone
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
		return f, out.String()
	}
	if len(a.data) == 0 && len(b.data) == 0 {
		return f, out.String() // an empty file added or deleted: headers only
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
	out.WriteString(unidiff.Hunks(a.data, b.data))
	return f, out.String()
}

func short(h plumbing.Hash) string { return h.String()[:7] }

func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), binarySniff)], 0) >= 0
}

// quotePath is git's quote_c_style with core.quotePath on: a name with a
// control character, '"', '\\' or a byte >= 0x80 is quoted and escaped.
func quotePath(s string) string {
	needs := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			needs = true
			break
		}
	}
	if !needs {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		default:
			if c < 0x20 || c >= 0x7f {
				fmt.Fprintf(&b, "\\%03o", c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
