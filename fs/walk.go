package fs

import (
	"context"
	"os"
	"sort"

	"golang.org/x/sys/unix"
)

// MaxWalkDepth bounds how deep a walk descends. A walk holds one directory
// descriptor per level, and no agent-usable path (at most 4095 bytes) is
// deeper than this in practice.
const MaxWalkDepth = 256

// WalkAction tells a walk what to do after a visit.
type WalkAction int

// The walk actions.
const (
	WalkContinue WalkAction = iota // go on (descending into a directory)
	WalkSkipDir                    // do not descend into this directory
	WalkStop                       // end the walk now
)

// Walk truncation reasons, as reported to agents.
const (
	TruncatedLimit     = "limit"      // the caller's result limit was reached
	TruncatedWalkLimit = "walk_limit" // SERVERFS_MAX_WALK_ENTRIES entries were read
	TruncatedDepth     = "depth"      // a directory deeper than MaxWalkDepth was skipped
	TruncatedTimeout   = "timeout"    // the request's deadline passed
)

// WalkEntry is one visible entry met by a walk. It is valid only during the
// visit that receives it.
type WalkEntry struct {
	Path  string    // workdir-relative path
	Name  string    // base name
	Type  EntryType // from the directory entry (never following links)
	Depth int       // 1 for entries of the walk's start directory

	w     *Workdir
	rel   relPath
	dirfd int
}

// OpenFile opens the entry for reading if it is a regular file: openat on
// the parent directory's descriptor with O_NOFOLLOW, confirmed by fstat. A
// FIFO, device or symlink put in its place since the directory was read is
// refused, never opened for reading.
func (e *WalkEntry) OpenFile() (*os.File, int64, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(e.dirfd, e.Name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, 0, errnoError(e.w.alias, e.rel, err)
	}
	if err := e.w.checkType(e.rel, st.Mode, TypeFile); err != nil {
		return nil, 0, err
	}
	fd, err := openatRetry(e.dirfd, e.Name, flagsFile)
	if err != nil {
		return nil, 0, errnoError(e.w.alias, e.rel, err)
	}
	st2, err := fstat(fd)
	if err == nil {
		err = e.w.checkType(e.rel, st2.Mode, TypeFile)
	}
	if err != nil {
		unix.Close(fd)
		return nil, 0, err
	}
	return os.NewFile(uintptr(fd), e.w.alias+":/"+e.Path), st2.Size, nil
}

// WalkResult summarises a walk.
type WalkResult struct {
	Entries         int    // directory entries read (visible or not)
	Truncated       bool   // the walk ended early or skipped something
	TruncatedReason string // one of the Truncated* reasons
}

type walkFrame struct {
	fd    int
	rel   relPath
	ents  []dirent
	next  int
	depth int
}

// Walk visits the visible entries under the directory raw in a
// deterministic depth-first order (each directory's entries sorted by name,
// a directory's contents right after it). It is iterative over directory
// descriptors: no recursion, no path is reopened by name, symlinks are
// reported but never descended, hidden and denied entries are never
// visited. It reads at most maxEntries directory entries and stops early
// when visit says WalkStop or ctx ends.
func (w *Workdir) Walk(ctx context.Context, raw string, maxEntries int, visit func(*WalkEntry) WalkAction) (WalkResult, error) {
	var res WalkResult
	fd, rp, _, err := w.openAs(raw, TypeDirectory)
	if err != nil {
		return res, err
	}
	stack := []*walkFrame{{fd: fd, rel: rp, depth: 1}}
	defer func() {
		for _, fr := range stack {
			unix.Close(fr.fd)
		}
	}()
	truncate := func(reason string) {
		if !res.Truncated {
			res.Truncated, res.TruncatedReason = true, reason
		}
	}
	if !w.loadFrame(stack[0], maxEntries, &res) {
		truncate(TruncatedWalkLimit)
	}
	for len(stack) > 0 {
		if ctx.Err() != nil {
			truncate(TruncatedTimeout)
			return res, nil
		}
		fr := stack[len(stack)-1]
		if fr.next >= len(fr.ents) {
			unix.Close(fr.fd)
			stack = stack[:len(stack)-1]
			continue
		}
		d := fr.ents[fr.next]
		fr.next++
		typ := direntType(fr.fd, d)
		rel := fr.rel.join(d.name)
		e := &WalkEntry{Path: rel.String(), Name: d.name, Type: typ, Depth: fr.depth, w: w, rel: rel, dirfd: fr.fd}
		act := visit(e)
		if act == WalkStop {
			return res, nil
		}
		if typ != TypeDirectory || act == WalkSkipDir {
			continue
		}
		if fr.depth >= MaxWalkDepth {
			truncate(TruncatedDepth)
			continue
		}
		if res.Entries >= maxEntries {
			truncate(TruncatedWalkLimit)
			continue
		}
		cfd, err := openatRetry(fr.fd, d.name, flagsDir)
		if err != nil {
			continue // replaced by a symlink or file, removed, or unreadable
		}
		child := &walkFrame{fd: cfd, rel: rel, depth: fr.depth + 1}
		stack = append(stack, child)
		if !w.loadFrame(child, maxEntries, &res) {
			truncate(TruncatedWalkLimit)
		}
	}
	return res, nil
}

// loadFrame reads the frame's directory within the remaining entry budget,
// keeps the visible entries and sorts them. It reports false when the budget
// ran out before the directory did.
func (w *Workdir) loadFrame(fr *walkFrame, maxEntries int, res *WalkResult) bool {
	budget := maxEntries - res.Entries
	if budget <= 0 {
		return false
	}
	ents, more, _ := readDirents(fr.fd, budget)
	res.Entries += len(ents)
	vis := ents[:0]
	for _, d := range ents {
		if w.policy.visible(fr.rel, d.name) {
			vis = append(vis, d)
		}
	}
	sort.Slice(vis, func(i, j int) bool { return vis[i].name < vis[j].name })
	fr.ents = vis
	return !more
}

func direntType(dirfd int, d dirent) EntryType {
	switch d.typ {
	case unix.DT_REG:
		return TypeFile
	case unix.DT_DIR:
		return TypeDirectory
	case unix.DT_LNK:
		return TypeSymlink
	case unix.DT_UNKNOWN:
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, d.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return TypeOther
		}
		return typeOfMode(st.Mode)
	default:
		return TypeOther
	}
}
