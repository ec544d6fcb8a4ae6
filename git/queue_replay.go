package git

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/serverfs/serverfs/git/internal/indexfile"
	"github.com/serverfs/serverfs/internal/diff3"
)

// ConflictHunk is one conflicted region of a file: where its markers start
// in the merged text (1-based line), and the base, ours (the branch) and
// theirs (the patch) lines, each cut to 2 KiB (Truncated).
type ConflictHunk struct {
	File      string `json:"file"`
	Line      int    `json:"line,omitempty"`
	Base      string `json:"base"`
	Ours      string `json:"ours"`
	Theirs    string `json:"theirs"`
	Reason    string `json:"reason,omitempty"` // binary, mode, type, deleted, too_large, not_utf8 (text not shown)
	Truncated bool   `json:"truncated,omitempty"`
}

// ConflictArtifact names the conflict bundle kept in the ledger's
// directory: every conflicted file's merged text with markers.
// The bundle is bounded (maxConflictBundleFiles files' texts,
// maxConflictBundleBytes in all; past them files are named without their
// text and Truncated is set), and only the newest maxConflictArtifacts
// bundles are kept.
type ConflictArtifact struct {
	SHA256    string `json:"sha256"`
	Bytes     int    `json:"bytes"`
	Truncated bool   `json:"truncated,omitempty"`
}

// replay merges the patch's changes onto head: the merge commit (parent
// head), or a conflict answer; a zero commit when the head already has
// every change.
func (r *Repo) replay(ctx context.Context, branch string, head plumbing.Hash, changes []patchChange, p *Patch, message string) (plumbing.Hash, *MergeResult, error) {
	headFlat, headTree, err := r.flatTree(ctx, head)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	merged := make(map[string]treeEntry, len(headFlat))
	for k, v := range headFlat {
		merged[k] = v
	}
	cc := &conflictCollector{conf: &MergeResult{Status: StatusConflict}}
	opts := diff3.Options{Ours: branch, Theirs: "patch " + p.SHA256[:12]}
	for _, c := range changes {
		if ctx.Err() != nil {
			return plumbing.ZeroHash, nil, canceled(r.w.Alias())
		}
		if err := r.mergeChange(c, headFlat[c.path], opts, merged, cc); err != nil {
			return plumbing.ZeroHash, nil, err
		}
	}
	if clash := fileDirClash(merged); clash != "" && len(cc.conf.Files) == 0 {
		cc.conf.Files = append(cc.conf.Files, clash)
		cc.addHunk(ConflictHunk{File: clash, Reason: "type"})
		fmt.Fprintf(&cc.bundle, "--- %q (file and directory)\n", clash)
	}
	if len(cc.conf.Files) > 0 {
		if err := r.saveConflictArtifact(cc); err != nil {
			return plumbing.ZeroHash, nil, err
		}
		return plumbing.ZeroHash, cc.conf, nil
	}
	entries := make(map[string]*indexfile.Entry, len(merged))
	for k, v := range merged {
		entries[k] = &indexfile.Entry{Entry: &index.Entry{Name: k, Hash: v.hash, Mode: v.mode}}
	}
	tree, _, err := r.writeTrees(entries)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	if tree == headTree {
		return plumbing.ZeroHash, nil, nil
	}
	pc, err := r.getCommit(plumbing.NewHash(p.Head))
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	ident, err := r.identity()
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	msg := pc.Message
	if strings.TrimSpace(message) != "" {
		msg = cleanupMessage(message)
	}
	c := &object.Commit{Author: pc.Author, Committer: object.Signature{Name: ident.name, Email: ident.email, When: time.Now()}, Message: msg, TreeHash: tree, ParentHashes: []plumbing.Hash{head}}
	h, err := r.writeCommit(c)
	return h, nil, err
}

// conflictCollector gathers a replay's conflicts: the bounded hunks of the
// answer and the bundle of merged texts saved as its artifact.
type conflictCollector struct {
	conf            *MergeResult
	bundle          bytes.Buffer
	bundleFiles     int
	bundleTruncated bool
}

// addHunk records a hunk within the answer's bounds. Text the JSON answer
// cannot carry byte for byte is not shown; a cut never splits a character.
func (cc *conflictCollector) addHunk(h ConflictHunk) {
	if len(cc.conf.Hunks) >= maxConflictHunks {
		cc.conf.HunksOmitted++
		return
	}
	if !utf8.ValidString(h.Base) || !utf8.ValidString(h.Ours) || !utf8.ValidString(h.Theirs) {
		h.Base, h.Ours, h.Theirs, h.Reason = "", "", "", "not_utf8"
	}
	cut := func(s string) string {
		if len(s) > maxConflictHunkBytes {
			h.Truncated = true
			i := maxConflictHunkBytes
			for i > 0 && !utf8.RuneStart(s[i]) {
				i--
			}
			return s[:i]
		}
		return s
	}
	h.Base, h.Ours, h.Theirs = cut(h.Base), cut(h.Ours), cut(h.Theirs)
	cc.conf.Hunks = append(cc.conf.Hunks, h)
}

// addTextConflicts records a text merge's conflict hunks and its merged
// text (with markers) in the bundle, while the bundle has room.
func (cc *conflictCollector) addTextConflicts(file string, text *diff3.Result) {
	cc.conf.Files = append(cc.conf.Files, file)
	for _, h := range text.Conflicts {
		cc.addHunk(ConflictHunk{File: file, Line: h.Line + 1, Base: string(h.Base), Ours: string(h.Ours), Theirs: string(h.Theirs)})
	}
	if cc.bundleFiles >= maxConflictBundleFiles || cc.bundle.Len()+len(text.Merged) > maxConflictBundleBytes {
		cc.bundleTruncated = true
		fmt.Fprintf(&cc.bundle, "--- %q (text omitted: bundle limit)\n", file)
		return
	}
	cc.bundleFiles++
	fmt.Fprintf(&cc.bundle, "--- %q\n", file)
	cc.bundle.Write(text.Merged)
}

// mergeModes decides a path both sides changed: the merged mode, or the
// reason it cannot merge ("" when it can).
func mergeModes(base, ours, theirs treeEntry) (filemode.FileMode, string) {
	reason := ""
	mergedMode := theirs.mode
	switch {
	case ours.hash.IsZero() || theirs.hash.IsZero() || base.hash.IsZero():
		reason = "deleted or added on both sides"
	case ours.mode == base.mode:
	case theirs.mode == base.mode || theirs.mode == ours.mode:
		mergedMode = ours.mode
	default:
		reason = "mode"
	}
	if reason == "" && !(isFileMode(ours.mode) && isFileMode(theirs.mode) && isFileMode(base.mode)) {
		reason = "type"
	}
	return mergedMode, reason
}

// mergeChange merges one path the patch changes into merged (ours is
// HEAD's entry, zero when absent), or records its conflict in cc.
func (r *Repo) mergeChange(c patchChange, ours treeEntry, opts diff3.Options, merged map[string]treeEntry, cc *conflictCollector) error {
	base := treeEntry{hash: c.old, mode: c.oldMode}
	theirs := treeEntry{hash: c.new, mode: c.newMode}
	switch {
	case ours == base, ours == theirs:
		setEntry(merged, c.path, theirs)
		return nil
	}
	// Both sides changed the path, differently.
	mergedMode, reason := mergeModes(base, ours, theirs)
	if reason == "" {
		switch {
		case ours.hash == theirs.hash:
			setEntry(merged, c.path, treeEntry{hash: ours.hash, mode: mergedMode})
			return nil
		case ours.hash == base.hash:
			setEntry(merged, c.path, treeEntry{hash: theirs.hash, mode: mergedMode})
			return nil
		case theirs.hash == base.hash:
			setEntry(merged, c.path, treeEntry{hash: ours.hash, mode: mergedMode})
			return nil
		}
	}
	var text diff3.Result
	if reason == "" {
		b, o, t, err := r.load3(base.hash, ours.hash, theirs.hash)
		if err != nil {
			return err
		}
		res, err := diff3.Merge(b, o, t, opts)
		switch {
		case errors.Is(err, diff3.ErrBinary):
			reason = "binary"
		case errors.Is(err, diff3.ErrTooLarge):
			reason = "too_large"
		case err != nil:
			return err
		default:
			text = *res
		}
	}
	if reason != "" {
		cc.conf.Files = append(cc.conf.Files, c.path)
		cc.addHunk(ConflictHunk{File: c.path, Reason: reason})
		fmt.Fprintf(&cc.bundle, "--- %q (%s)\n", c.path, reason)
		return nil
	}
	if len(text.Conflicts) > 0 {
		cc.addTextConflicts(c.path, &text)
		return nil
	}
	h, err := r.writeObject(plumbing.BlobObject, text.Merged)
	if err != nil {
		return err
	}
	setEntry(merged, c.path, treeEntry{hash: h, mode: mergedMode})
	return nil
}

// saveConflictArtifact stores the conflict bundle under its SHA-256 (best
// effort: the answer names it either way) and prunes older ones.
func (r *Repo) saveConflictArtifact(cc *conflictCollector) error {
	sum := sha256.Sum256(cc.bundle.Bytes())
	cc.conf.Artifact = &ConflictArtifact{SHA256: hex.EncodeToString(sum[:]), Bytes: cc.bundle.Len(), Truncated: cc.bundleTruncated}
	name := ".git/serverfs/queue/conflicts/" + cc.conf.Artifact.SHA256
	if err := r.ctl.MkdirAll(path.Dir(name), 0o755); err != nil {
		return err
	}
	if f, err := r.ctl.CreateExclusive(name, 0o644); err == nil {
		f.Write(cc.bundle.Bytes())
		f.Sync()
		f.Close()
	}
	r.pruneConflicts(path.Dir(name), cc.conf.Artifact.SHA256)
	return nil
}

func isFileMode(m filemode.FileMode) bool {
	return m == filemode.Regular || m == filemode.Executable
}

// setEntry sets (or, for a zero hash, deletes) a path of a flat tree.
func setEntry(m map[string]treeEntry, p string, e treeEntry) {
	if e.hash.IsZero() {
		delete(m, p)
		return
	}
	m[p] = e
}

// load3 reads three blobs (zero: empty) for a text merge, refusing any
// over the merge's byte limit without reading it.
func (r *Repo) load3(hs ...plumbing.Hash) (b, o, t []byte, err error) {
	out := make([][]byte, 3)
	for i, h := range hs {
		if h.IsZero() {
			continue
		}
		data, err := r.readBlob(h, diff3.DefaultMaxBytes)
		if _, ok := tooLargeSize(err); ok {
			out[i] = make([]byte, diff3.DefaultMaxBytes+1) // refused as too large by Merge
			continue
		}
		if err != nil {
			return nil, nil, nil, err
		}
		out[i] = data
	}
	return out[0], out[1], out[2], nil
}

// pruneConflicts keeps the newest bundles in dir (by modification time)
// within maxConflictArtifacts and maxConflictArtifactsBytes, and always
// current, the one just written (its answer names it); best effort.
func (r *Repo) pruneConflicts(dir, current string) {
	ents, _, err := r.ctl.ReadDir(dir, 4*maxConflictArtifacts+1024)
	if err != nil {
		return
	}
	sort.SliceStable(ents, func(i, j int) bool {
		if (ents[i].Name == current) != (ents[j].Name == current) {
			return ents[i].Name == current
		}
		return ents[i].Stat.Mtime.After(ents[j].Stat.Mtime)
	})
	n, size := 0, int64(0)
	for _, e := range ents {
		if e.Stat.Mode&0o170000 != 0o100000 {
			continue
		}
		if e.Name == current || n < maxConflictArtifacts && size+e.Stat.Size <= maxConflictArtifactsBytes {
			n++
			size += e.Stat.Size
			continue
		}
		r.ctl.Remove(dir + "/" + e.Name)
	}
}
