package fs

import (
	"context"
	"fmt"
	"strings"

	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

// MaxTreeDepth is the deepest tree Tree lists.
const MaxTreeDepth = 5

// Ignorer leaves entries out of a walk the way .gitignore rules do (the
// search engine's rules, given by the caller: fs does not parse them).
// Enter sees every directory the walk reads, before its entries.
type Ignorer interface {
	Enter(d *Dir)
	Ignored(path string, isDir bool, depth int) bool
}

// TreeOptions configure Tree.
type TreeOptions struct {
	Depth    int  // levels listed, 1..MaxTreeDepth (1: the directory's own entries)
	DirsOnly bool // list directories only
	Offset   int  // entries to skip, in the tree's order
	Limit    int  // entries to return; 0: Limits.DefaultListLimit, at most Limits.MaxListEntries
	Times    bool // set ModifiedAt
	// Ignore, if set, leaves out what it ignores (and never enters an
	// ignored directory, nor any ".git").
	Ignore Ignorer
}

// TreeEntry is one entry of a tree.
type TreeEntry struct {
	Path       string // relative to the tree's root directory
	Name       string
	Type       EntryType
	Depth      int    // 1 for the root's own entries
	Size       int64  // regular files only
	ModifiedAt string // with TreeOptions.Times
	// Listed: a directory whose entries the tree lists (above the depth
	// limit); the entries that follow it up to the next entry of its
	// depth or less are its contents.
	Listed bool
}

// Tree is one page of a bounded tree listing.
type Tree struct {
	Workdir string
	Path    string // the root directory, workdir-relative
	Entries []TreeEntry
	// HasMore: more entries follow; NextOffset is the Offset of the next
	// page.
	HasMore    bool
	NextOffset int
	// Total, on a page with more after it, is the number of entries of
	// the whole tree (to its depth) when the walk counted them all: past
	// a page it goes on counting up to treeCountAhead entries, without
	// reading their metadata. 0 otherwise.
	Total int
	// Truncated is set when the walk itself stopped short (walk_limit:
	// SERVERFS_MAX_WALK_ENTRIES directory entries were read; timeout):
	// entries exist that no page will show.
	Truncated string
}

// treeCountAhead bounds the entries a tree page counts past itself for
// its total: a typical project's tree is counted whole, a monorepo's
// deep tree is not walked to its end for a first page.
const treeCountAhead = 10_000

// Tree lists the directory raw and its subdirectories down to opts.Depth
// levels, depth first, each directory's entries sorted by name (byte
// order) and a listed directory's contents right after it: the order of
// find_files. Paging is by offset in that order. It walks with fs's
// walker, so symlinks are listed and never followed, hidden and denied
// entries are never listed nor entered, and the walk is bounded by
// Limits.MaxWalkEntries and Limits.SearchTimeout (Truncated).
func (f *FS) Tree(ctx context.Context, alias, raw string, opts TreeOptions) (*Tree, error) {
	w, err := f.Workdir(alias)
	if err != nil {
		return nil, err
	}
	limit := opts.Limit
	if limit == 0 {
		limit = f.limits.DefaultListLimit
	}
	if opts.Depth < 1 || opts.Depth > MaxTreeDepth || opts.Offset < 0 || limit < 1 || limit > f.limits.MaxListEntries {
		return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("depth must be between 1 and %d, offset >= 0 and limit between 1 and %d", MaxTreeDepth, f.limits.MaxListEntries))
	}
	if a, ok, _ := w.archiveAt(raw, true); ok {
		a.Close()
		return nil, errs.At(errs.InvalidArgument, w.alias, a.path(), "is in an archive: it lists at depth 1 only")
	}
	rp, err := w.clean(raw)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.limits.SearchTimeout)
	defer cancel()
	prefix := rp.String()
	t := &Tree{Workdir: w.alias, Path: prefix, Entries: []TreeEntry{}}
	seen, counted := 0, true
	wopts := WalkOptions{MaxEntries: f.limits.MaxWalkEntries}
	ig := opts.Ignore
	if ig != nil {
		wopts.Enter = ig.Enter
	}
	wopts.Visit = func(e *WalkEntry) WalkAction {
		isDir := e.Type == TypeDirectory
		if ig != nil && ((isDir && e.Name == ".git") || ig.Ignored(e.Path, isDir, e.Depth)) {
			return WalkSkipDir
		}
		descend := WalkContinue
		if !isDir || e.Depth >= opts.Depth {
			descend = WalkSkipDir
		}
		if opts.DirsOnly && !isDir {
			return WalkContinue
		}
		if seen++; seen <= opts.Offset {
			return descend
		}
		if len(t.Entries) == limit {
			// Past the page: counted for the total, up to a bound.
			t.HasMore, t.NextOffset = true, opts.Offset+limit
			if seen > opts.Offset+limit+treeCountAhead {
				counted = false
				return WalkStop
			}
			return descend
		}
		rel := e.Path
		if prefix != "" {
			rel = strings.TrimPrefix(rel, prefix+"/")
		}
		te := TreeEntry{Path: rel, Name: e.Name, Type: e.Type, Depth: e.Depth, Listed: isDir && e.Depth < opts.Depth}
		if e.Type == TypeFile || opts.Times {
			var st unix.Stat_t
			if err := lstatAt(e.dir.fd, e.Name, &st); err == nil {
				te.Type = typeOfMode(st.Mode)
				if te.Type == TypeFile {
					te.Size = st.Size
				}
				if opts.Times {
					te.ModifiedAt = modTime(&st)
				}
			}
		}
		t.Entries = append(t.Entries, te)
		return descend
	}
	wr, err := w.Walk(ctx, raw, wopts)
	if err != nil {
		return nil, err
	}
	switch {
	case wr.Truncated && !t.HasMore:
		if wr.TruncatedReason == TruncatedTimeout && context.Cause(ctx) == context.Canceled {
			return nil, errs.At(errs.Canceled, w.alias, prefix, "the listing was cancelled")
		}
		t.Truncated = wr.TruncatedReason
	case !wr.Truncated && counted && t.HasMore:
		t.Total = seen
	}
	return t, nil
}
