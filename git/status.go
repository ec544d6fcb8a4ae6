package git

import (
	"bytes"
	"context"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git/internal/indexfile"
	gitobject "github.com/serverfs/serverfs/git/internal/object"
	"github.com/serverfs/serverfs/internal/errs"
)

// Entry is one path of a status, as `git status --porcelain=v2
// --untracked-files=all --no-renames` reports it.
type Entry struct {
	// Path is repository-relative with '/' separators. An untracked
	// directory that is itself a repository is reported once, with a
	// trailing '/', and not descended (as git does).
	Path string `json:"path"`
	// Staged is the index against HEAD: '.' unchanged, 'A' added,
	// 'M' modified, 'D' deleted, 'T' type changed (file/symlink/gitlink).
	// Unstaged is the work tree against the index: '.', 'M', 'D', 'T'.
	// Both are '?' for an untracked path.
	Staged   string `json:"staged"`
	Unstaged string `json:"unstaged"`
}

// Status is the state of a repository.
type Status struct {
	Branch   string  `json:"branch,omitempty"` // "" when HEAD is detached
	Head     string  `json:"head,omitempty"`   // commit id, "" before the first commit
	Upstream string  `json:"upstream,omitempty"`
	Ahead    *int    `json:"ahead,omitempty"`
	Behind   *int    `json:"behind,omitempty"`
	Entries  []Entry `json:"entries"` // sorted by path (byte order)
	// Truncated is true when more entries changed than the limit.
	Truncated bool `json:"truncated"`
}

// Status compares HEAD, the index and the work tree like `git status
// --porcelain=v2 --untracked-files=all --no-renames`: renames show as a
// deletion and an addition. A submodule (gitlink) is modified in the work
// tree when its checkout is at another commit than the index records, as
// in git; changes inside the submodule's own work tree (git's "modified
// content", "untracked content") are not looked for. It returns at most
// limit entries (Truncated when there were more); paths the policy hides
// never appear.
func (r *Repo) Status(ctx context.Context, limit int) (*Status, error) {
	defer r.packScope()()
	h, err := r.head()
	if err != nil {
		return nil, err
	}
	st := &Status{Branch: h.branch, Entries: []Entry{}}
	if !h.commit.IsZero() {
		st.Head = h.commit.String()
	}
	idx, idxStat, err := r.readIndex()
	if err != nil {
		return nil, err
	}
	// HEAD's tree, except the directories whose cache-tree node says the
	// index below them is exactly HEAD's (git uses the same shortcut):
	// those are neither read nor compared.
	tree, same, err := r.headTreeExcept(ctx, h.commit, idx.CacheTrees)
	if err != nil {
		return nil, err
	}
	changes := statusChanges{}
	iv := indexAgainstHead(idx, tree, same, changes)

	// The work tree against the index, and untracked paths.
	seen := make([]bool, len(iv.trackedList)) // by slot: found in the work tree
	wt, err := r.scanWorktree(ctx, scanInput{tracked: iv.tracked, seen: seen, stages: iv.stages, unchecked: iv.unchecked, paths: iv.paths, idxStat: idxStat})
	if err != nil {
		return nil, err
	}
	for _, res := range wt.changes {
		changes.entry(res.path).Unstaged = res.code
	}
	for i, ie := range iv.trackedList {
		if !seen[i] && !iv.unchecked[ie.Name] && r.visible(ie.Name) {
			changes.entry(ie.Name).Unstaged = "D"
		}
	}

	for p, e := range changes {
		if !r.visible(strings.TrimSuffix(p, "/")) || (e.Staged == "." && e.Unstaged == ".") {
			continue
		}
		st.Entries = append(st.Entries, *e)
	}
	for _, p := range wt.untracked {
		if r.visible(strings.TrimSuffix(p, "/")) {
			st.Entries = append(st.Entries, Entry{Path: p, Staged: "?", Unstaged: "?"})
		}
	}
	SortEntries(st.Entries)
	if limit > 0 && len(st.Entries) > limit {
		st.Entries, st.Truncated = st.Entries[:limit], true
	}
	if h.branch != "" && !h.commit.IsZero() {
		if err := r.upstream(ctx, h, st); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// statusChanges holds the status entries found so far, by path.
type statusChanges map[string]*Entry

// entry returns p's entry, made unchanged on both sides when new.
func (c statusChanges) entry(p string) *Entry {
	e := c[p]
	if e == nil {
		e = &Entry{Path: p, Staged: ".", Unstaged: "."}
		c[p] = e
	}
	return e
}

// indexView is the index as the work-tree scan needs it.
type indexView struct {
	stages      map[string]int // unmerged paths: bit n-1 set when stage n exists
	tracked     map[string]trackedEntry
	trackedList []*index.Entry // by slot
	paths       []string       // sorted
	// unchecked holds the entries git does not compare with the work
	// tree: assume-unchanged and skip-worktree (sparse checkout) ones.
	unchecked map[string]bool
}

// indexAgainstHead records in changes the staged side of every path (the
// index against HEAD's tree) and returns the index's view for the scan.
func indexAgainstHead(idx *indexfile.File, tree map[string]treeEntry, same sameDirs, changes statusChanges) indexView {
	iv := indexView{
		stages:    map[string]int{},
		tracked:   make(map[string]trackedEntry, len(idx.Entries)),
		paths:     make([]string, 0, len(idx.Entries)),
		unchecked: map[string]bool{},
	}
	for i, ie := range idx.Entries {
		if idx.AssumeValid[i] || ie.SkipWorktree {
			iv.unchecked[ie.Name] = true
		}
		// Stage 0 is a merged entry. (go-git's index.Merged constant is 1,
		// the same as AncestorMode: it cannot be used here.)
		if ie.Stage != 0 {
			if iv.stages[ie.Name] == 0 {
				iv.paths = append(iv.paths, ie.Name)
			}
			iv.stages[ie.Name] |= 1 << (ie.Stage - 1)
			continue
		}
		iv.tracked[ie.Name] = trackedEntry{Entry: ie, slot: len(iv.trackedList)}
		iv.trackedList = append(iv.trackedList, ie)
		iv.paths = append(iv.paths, ie.Name)
		if same.covers(ie.Name) {
			if ie.IntentToAdd && !iv.unchecked[ie.Name] {
				changes.entry(ie.Name).Unstaged = "A" // not in the cache tree, so not in HEAD
			}
			continue
		}
		te, inHead := tree[ie.Name]
		if ie.IntentToAdd {
			// "git add -N": absent as far as HEAD is concerned (so a path
			// in HEAD is a staged deletion); the work tree adds it (unless
			// the entry is assume-unchanged: then nothing).
			if inHead {
				changes.entry(ie.Name).Staged = "D"
			}
			if !iv.unchecked[ie.Name] {
				changes.entry(ie.Name).Unstaged = "A"
			}
			continue
		}
		switch {
		case !inHead:
			changes.entry(ie.Name).Staged = "A"
		case gitobject.Kind(te.mode) != gitobject.Kind(ie.Mode):
			changes.entry(ie.Name).Staged = "T"
		case te.hash != ie.Hash || te.mode != ie.Mode:
			changes.entry(ie.Name).Staged = "M"
		}
	}
	for p, mask := range iv.stages {
		// git's names for which sides of the merge have the path
		// (wt-status.c): base 1, ours 2, theirs 4.
		xy := map[int]string{1: "DD", 2: "AU", 3: "UD", 4: "UA", 5: "DU", 6: "AA", 7: "UU"}[mask]
		e := changes.entry(p)
		e.Staged, e.Unstaged = xy[:1], xy[1:]
	}
	for p := range tree {
		if _, ok := iv.tracked[p]; !ok && iv.stages[p] == 0 {
			changes.entry(p).Staged = "D"
		}
	}
	if !sort.StringsAreSorted(iv.paths) { // git keeps the index sorted
		sort.Strings(iv.paths)
	}
	return iv
}

// trackedEntry is a merged index entry and its slot in the scan's seen
// flags (each written by the one walk that meets the path).
type trackedEntry struct {
	*index.Entry
	slot int
}

// SortEntries puts entries in their canonical order: by path (byte
// order); for a path both tracked and untracked, the tracked entry first
// (git prints untracked paths last).
func SortEntries(es []Entry) {
	sort.Slice(es, func(i, j int) bool {
		if es[i].Path != es[j].Path {
			return es[i].Path < es[j].Path
		}
		return es[i].Staged != "?" && es[j].Staged == "?"
	})
}

// worktreeChange compares one tracked path's work-tree entry with its index
// entry: ".", "M", "T" or "D". The index's stat data decides when the
// content must be hashed, as in git: a stat match means unchanged, unless
// the entry is racily clean (modified no earlier than the index was
// written).
func (r *Repo) worktreeChange(ctx context.Context, we worktreeEntry, ie *index.Entry, idxStat sfs.StatData) (string, error) {
	sd, err := we.Lstat()
	if err != nil {
		if errs.CodeOf(err) == errs.PathNotFound {
			return "D", nil
		}
		return "", err
	}
	switch sd.Type() {
	case sfs.TypeDirectory:
		return "D", nil
	case sfs.TypeOther:
		// git takes a special file (a FIFO, a socket) for a regular file
		// it cannot hash: modified, or a type change from a symlink or
		// gitlink; it is never opened (a FIFO would block).
		if ie.Mode == filemode.Symlink || ie.Mode == filemode.Submodule {
			return "T", nil
		}
		return "M", nil
	case sfs.TypeSymlink:
		if ie.Mode != filemode.Symlink {
			return "T", nil
		}
		if r.statMatches(sd, ie, idxStat) {
			return ".", nil
		}
		target, err := we.Readlink()
		if err != nil {
			return "", err
		}
		if plumbing.ComputeHash(plumbing.BlobObject, []byte(target)) != ie.Hash {
			return "M", nil
		}
		return ".", nil
	}
	// A regular file.
	if ie.Mode == filemode.Symlink || ie.Mode == filemode.Submodule {
		return "T", nil
	}
	if r.fileMode && (sd.Mode&0o100 != 0) != (ie.Mode == filemode.Executable) {
		return "M", nil
	}
	if r.statMatches(sd, ie, idxStat) {
		return ".", nil
	}
	// A size change is a change, unless the index says 0: an empty file,
	// or an entry git "smudged" because it was racily clean when the
	// index was written. Then only the content tells (as in ie_modified).
	if uint32(sd.Size) != ie.Size && ie.Size != 0 {
		return "M", nil
	}
	f, _, err := we.OpenFile()
	if err != nil {
		return "", err
	}
	defer f.Close()
	if sd.Size > maxConvertBytes {
		h := plumbing.NewHasher(plumbing.BlobObject, sd.Size)
		// Streamed, and stopped when the status's time is up.
		n, err := io.Copy(h, ctxReader{ctx, f})
		if ctx.Err() != nil {
			return "", canceled(r.w.Alias())
		}
		if err != nil {
			return "", err
		}
		if n != sd.Size || h.Sum() != ie.Hash {
			return "M", nil
		}
		return ".", nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConvertBytes+1))
	if err != nil {
		return "", err
	}
	// git compares what "git add" would store: its clean conversions
	// first (none without attributes).
	if data, err = r.cleanForStatus(ie, data); err != nil {
		return "", err
	}
	if plumbing.ComputeHash(plumbing.BlobObject, data) != ie.Hash {
		return "M", nil
	}
	return ".", nil
}

// maxConvertBytes bounds a file status reads whole to apply git's clean
// conversion; a larger one is hashed as it is.
const maxConvertBytes = 8 << 20

// cleanForStatus applies the clean conversion git's attributes select for
// the path to work-tree content: line-ending normalisation (text, eol,
// crlf; text=auto only for text-looking content whose index version has
// no CRLF, as git's "safer autocrlf" does). Conversions ServerFS cannot
// run like git (a filter driver, working-tree-encoding, ident) are
// REPO_UNSUPPORTED rather than a guess.
func (r *Repo) cleanForStatus(ie *index.Entry, data []byte) ([]byte, error) {
	rules, err := r.cachedAttrRules(ie.Name)
	if err != nil || len(rules) == 0 {
		return data, err
	}
	st := attrState(rules, ie.Name)
	unsupported := func(why string) error {
		return errs.At(errs.RepoUnsupported, r.w.Alias(), ie.Name, "cannot be compared like git does: "+why)
	}
	if v, ok := st["filter"]; ok && v != "unset" {
		return nil, unsupported("its attributes select the filter " + v)
	}
	if v, ok := st["working-tree-encoding"]; ok && v != "unset" {
		return nil, unsupported("its attributes set working-tree-encoding")
	}
	if v, ok := st["ident"]; ok && v != "unset" && bytes.Contains(data, []byte("$Id")) {
		return nil, unsupported("its attributes set ident")
	}
	text, _ := st["text"]
	if text == "" { // unspecified: the deprecated crlf attribute, then eol
		switch st["crlf"] {
		case "unset":
			text = "unset"
		case "set", "input":
			text = "set"
		}
	}
	if text == "" {
		if v, ok := st["eol"]; ok && v != "unset" {
			text = "set" // eol implies text
		}
	}
	switch text {
	case "set":
	case "auto":
		if gitBinary(data) || r.indexHasCRLF(ie) {
			return data, nil
		}
	default:
		return data, nil
	}
	if !bytes.Contains(data, []byte("\r\n")) {
		return data, nil
	}
	return bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), nil
}

// cachedAttrRules is loadAttrRules with the rules of each directory read
// once per Repo (status compares many files of one directory).
func (r *Repo) cachedAttrRules(path string) ([]attrRule, error) {
	dir := ""
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		dir = path[:i]
	}
	r.attrMu.Lock()
	defer r.attrMu.Unlock()
	if rules, ok := r.attrCache[dir]; ok {
		return rules, nil
	}
	rules, err := r.loadAttrRules(path)
	if err != nil {
		return nil, err
	}
	if r.attrCache == nil {
		r.attrCache = map[string][]attrRule{}
	}
	r.attrCache[dir] = rules
	return rules, nil
}

// gitBinary is git's convert_is_binary over gather_stats: a NUL, a lone
// CR, or more than one non-printable byte per 128 printable ones (line
// feeds and CRLF pairs count as neither; a final ^Z is not counted).
func gitBinary(b []byte) bool {
	printable, nonprintable := 0, 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
				continue
			}
			return true // a lone CR
		case c == '\n':
		case c == 0:
			return true
		case c == 127:
			nonprintable++
		case c < 32:
			switch c {
			case '\b', '\t', 033, 014:
				printable++
			default:
				nonprintable++
			}
		default:
			printable++
		}
	}
	if len(b) > 0 && b[len(b)-1] == 032 {
		nonprintable--
	}
	return printable>>7 < nonprintable
}

// indexHasCRLF reports whether the index's version of the entry holds a
// CRLF (git then leaves CRLF content alone under text=auto).
//
// Only an index version of at most maxConvertBytes is read (its size from
// the object header first): a larger one cannot equal the work-tree
// content compared with it (at most that size, converted or not), so the
// answer does not matter then.
func (r *Repo) indexHasCRLF(ie *index.Entry) bool {
	data, err := r.readBlob(ie.Hash, maxConvertBytes)
	return err == nil && bytes.Contains(data, []byte("\r\n"))
}

// statMatches is git's stat-cache check (ie_match_stat and
// match_stat_data, as git is built by default: without USE_NSEC, so whole
// seconds only; core.trustCtime and core.checkStat=minimal honoured), on
// the fields as the index stores them (32 bits), and not racily clean:
// an entry modified in the same second as the index was written, or later,
// is hashed.
func (r *Repo) statMatches(sd sfs.StatData, ie *index.Entry, idxStat sfs.StatData) bool {
	if sd.Mtime.Unix() != ie.ModifiedAt.Unix() || uint32(sd.Size) != ie.Size {
		return false
	}
	if r.trustCtime && sd.Ctime.Unix() != ie.CreatedAt.Unix() {
		return false
	}
	if !r.minimalStat && (uint32(sd.Ino) != ie.Inode || sd.Uid != ie.UID || sd.Gid != ie.GID) {
		return false
	}
	return ie.ModifiedAt.Unix() < idxStat.Mtime.Unix()
}

// gitlink), reading just the trees on their way; absent paths are left out.
func (r *Repo) treeEntriesAt(root plumbing.Hash, paths []string) (map[string]treeEntry, error) {
	out := map[string]treeEntry{}
	trees := map[plumbing.Hash]*object.Tree{}
	get := func(h plumbing.Hash) (*object.Tree, error) {
		if t, ok := trees[h]; ok {
			return t, nil
		}
		t, err := r.getTree(h)
		if err != nil {
			return nil, err
		}
		trees[h] = t
		return t, nil
	}
	if root.IsZero() || root == emptyTree {
		return out, nil // no HEAD yet, or an empty one
	}
	for _, p := range paths {
		h := root
		comps := strings.Split(p, "/")
		for i, c := range comps {
			t, err := get(h)
			if err != nil {
				return nil, err
			}
			var found *object.TreeEntry
			for j := range t.Entries {
				if t.Entries[j].Name == c {
					found = &t.Entries[j]
					break
				}
			}
			if found == nil {
				break
			}
			if i == len(comps)-1 {
				if found.Mode != filemode.Dir {
					out[p] = treeEntry{hash: found.Hash, mode: found.Mode}
				}
				break
			}
			if found.Mode != filemode.Dir {
				break
			}
			h = found.Hash
		}
	}
	return out, nil
}
