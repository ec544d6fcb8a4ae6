package fs

import (
	"context"
	"strings"
	"sync/atomic"

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
// visit that receives it; Ref keeps a regular file reachable beyond it.
type WalkEntry struct {
	Path  string    // workdir-relative path
	Name  string    // base name
	Type  EntryType // from the directory entry (never following links)
	Depth int       // 1 for entries of the walk's start directory

	w   *Workdir
	dir *dirHandle
}

// relOf turns a walk's entry path back into a relPath (for messages);
// walks keep only the string, one allocation per entry.
func relOf(path string) relPath {
	if path == "" {
		return relPath{}
	}
	return relPath{comps: strings.Split(path, "/")}
}

// dirHandle is a directory descriptor shared by a walk and the FileRefs it
// handed out: it is closed when the last of them lets go.
type dirHandle struct {
	fd   int
	refs atomic.Int32
}

func newDirHandle(fd int) *dirHandle {
	h := &dirHandle{fd: fd}
	h.refs.Store(1)
	return h
}

func (h *dirHandle) release() {
	if h.refs.Add(-1) == 0 {
		unix.Close(h.fd)
	}
}

// OpenFile opens the entry for reading if it is a regular file (see
// FileRef.Open).
func (e *WalkEntry) OpenFile() (*File, int64, error) {
	return openEntry(e.w, e.dir.fd, e.Path, e.Name)
}

// Ref returns a handle on the entry that outlives the visit, so that
// another goroutine can open it: the entry's directory descriptor stays
// open until the FileRef is opened or released. Exactly one of Open or
// Release must be called.
func (e *WalkEntry) Ref() *FileRef {
	e.dir.refs.Add(1)
	return &FileRef{Path: e.Path, Name: e.Name, w: e.w, dir: e.dir}
}

// FileRef is a walk entry to be opened later; see WalkEntry.Ref.
type FileRef struct {
	Path string // workdir-relative path
	Name string // base name

	w   *Workdir
	dir *dirHandle
}

// Open opens the file for reading and releases the reference.
func (r *FileRef) Open() (*File, int64, error) {
	defer r.Release()
	return openEntry(r.w, r.dir.fd, r.Path, r.Name)
}

// Release lets go of the reference without opening the file.
func (r *FileRef) Release() {
	if r.dir != nil {
		r.dir.release()
		r.dir = nil
	}
}

// openEntry opens name in the directory dirfd for reading: one openat with
// O_NOFOLLOW|O_NONBLOCK|O_NOCTTY, then fstat must say "regular file". A
// symlink put in its place fails with ELOOP, a FIFO opens without
// blocking and is refused unread. Walks only open entries the directory
// listed as regular files, so the O_PATH probe of the resolver is skipped:
// the one case it would still catch is a device node created in the
// entry's place in between, which takes CAP_MKNOD inside the workdir.
func openEntry(w *Workdir, dirfd int, path, name string) (*File, int64, error) {
	fd, err := openatRetry(dirfd, name, flagsFile)
	if err != nil {
		return nil, 0, errnoError(w.alias, relOf(path), err)
	}
	st, err := fstat(fd)
	if err == nil && typeOfMode(st.Mode) != TypeFile {
		err = w.checkType(relOf(path), st.Mode, TypeFile)
	}
	if err != nil {
		unix.Close(fd)
		return nil, 0, err
	}
	return newFileAt(fd, w.alias, path), st.Size, nil
}

// WalkResult summarises a walk.
type WalkResult struct {
	Entries         int    // directory entries read (visible or not)
	Truncated       bool   // the walk ended early or skipped something
	TruncatedReason string // one of the Truncated* reasons
	// ResumeAfter, with WalkOptions.StopAtLimit, is where a walk cut by
	// MaxEntries stopped: every entry up to it in walk order was visited,
	// the contents of the directory it names (when one) were not.
	ResumeAfter string
}

type walkFrame struct {
	dir   *dirHandle
	rel   relPath
	path  string // rel.String()
	ents  []dirent
	next  int
	depth int
	// listing: the names starting with "." the directory held (visible
	// or not), when it was read whole; nil otherwise. Dir.Has and
	// ReadControlFile answer "absent" from it without a system call.
	listing *dotNames
	// ahead[i], with WalkOptions.ReadAhead, is ents[i] queued for reading
	// ahead (nil: not queued).
	ahead []*aheadDir
}

// WalkOptions configure a walk.
type WalkOptions struct {
	// MaxEntries bounds the directory entries read (visible or not).
	MaxEntries int
	// Enter, if set, is called for the start directory (Depth 0) and for
	// every directory the walk descends into, before its entries are
	// visited. The *Dir is valid only during the call.
	Enter func(d *Dir)
	// Visit is called for every visible entry; its answer steers the walk.
	Visit func(e *WalkEntry) WalkAction
	// StopAtLimit ends the walk where MaxEntries runs out (see
	// WalkResult.ResumeAfter) instead of visiting what is left of the
	// directories already read: what was visited is then a prefix of the
	// walk order, which a continuation can resume after.
	StopAtLimit bool
	// ReadAhead, when > 0, is the number of goroutines that open and list
	// the directories the walk will descend into before it reaches them
	// (see readAhead); all have ended when Walk returns. Visits, Enter
	// calls, the entries counted against MaxEntries and the result are
	// those of the same walk without it.
	ReadAhead int
	// Ahead, with ReadAhead, tells whether the directory name, met in the
	// directory entered last at depth (as WalkEntry.Depth) with the path
	// path, is worth reading ahead: it is called right after that Enter,
	// and should answer false for what Visit will skip (a wrong answer
	// costs only a wasted or a missed read ahead). nil: every directory.
	Ahead func(path, name string, depth int) bool
}

// Walk visits the visible entries under the directory raw in a
// deterministic depth-first order (each directory's entries sorted by name,
// a directory's contents right after it). It is iterative over directory
// descriptors: no recursion, no path is reopened by name, symlinks are
// reported but never descended, hidden and denied entries are never
// visited. It reads at most opts.MaxEntries directory entries and stops
// early when Visit says WalkStop or ctx ends (reason "timeout").
func (w *Workdir) Walk(ctx context.Context, raw string, opts WalkOptions) (WalkResult, error) {
	fd, rp, _, err := w.openAs(raw, TypeDirectory)
	if err != nil {
		return WalkResult{}, w.notWalkable(raw, err)
	}
	wk := &walker{w: w, ctx: ctx, opts: opts, maxEntries: opts.MaxEntries}
	wk.stack = []*walkFrame{{dir: newDirHandle(fd), rel: rp, path: rp.String(), depth: 1}}
	if opts.ReadAhead > 0 {
		wk.ra = newReadAhead(ctx, w, opts.ReadAhead)
	}
	defer wk.release()
	wk.run()
	return wk.res, nil
}

// walker is one Walk's state: the stack of directories being visited
// (innermost last) and the read ahead, if any.
type walker struct {
	w          *Workdir
	ctx        context.Context
	opts       WalkOptions
	maxEntries int
	res        WalkResult
	stack      []*walkFrame
	ra         *readAhead
	ent        WalkEntry // the entry of the current visit
}

// release ends the read ahead and closes the directories still open.
func (wk *walker) release() {
	if wk.ra != nil {
		wk.ra.stop(wk.stack)
	}
	for _, fr := range wk.stack {
		fr.dir.release()
	}
}

// truncate marks the result cut; the first reason stays.
func (wk *walker) truncate(reason string) {
	if !wk.res.Truncated {
		wk.res.Truncated, wk.res.TruncatedReason = true, reason
	}
}

// run walks from the start directory, wk.stack[0], until the walk ends
// or stops.
func (wk *walker) run() {
	root := wk.stack[0]
	if !wk.w.loadFrame(wk.ctx, root, wk.maxEntries, &wk.res) {
		wk.truncate(TruncatedWalkLimit)
		if wk.opts.StopAtLimit {
			wk.res.ResumeAfter = root.path
			return
		}
	}
	wk.enter(root)
	for len(wk.stack) > 0 {
		if wk.ctx.Err() != nil {
			wk.truncate(TruncatedTimeout)
			return
		}
		fr := wk.stack[len(wk.stack)-1]
		if fr.next >= len(fr.ents) {
			fr.dir.release()
			wk.stack = wk.stack[:len(wk.stack)-1]
			continue
		}
		if !wk.visitNext(fr) {
			return
		}
	}
}

// enter runs after the directory is read (still before its entries are
// visited), so that its Dir knows the names it holds; then it queues the
// directory's subdirectories for reading ahead.
func (wk *walker) enter(fr *walkFrame) {
	if wk.opts.Enter != nil {
		wk.opts.Enter(&Dir{Path: fr.path, Depth: fr.depth - 1, w: wk.w, rel: fr.rel, fd: fr.dir.fd, listing: fr.listing})
	}
	if wk.ra == nil || fr.depth >= MaxWalkDepth || wk.res.Entries >= wk.maxEntries {
		return
	}
	var subs []int
	for i, d := range fr.ents {
		if d.typ != unix.DT_DIR {
			continue
		}
		if wk.opts.Ahead != nil {
			path := d.name
			if fr.path != "" {
				path = fr.path + "/" + d.name
			}
			if !wk.opts.Ahead(path, d.name, fr.depth) {
				continue
			}
		}
		subs = append(subs, i)
	}
	wk.ra.push(fr, subs, wk.maxEntries-wk.res.Entries)
}

// visitNext visits fr's next entry and, when it is a directory to
// descend into, pushes it. It returns false when the walk stops.
func (wk *walker) visitNext(fr *walkFrame) bool {
	idx := fr.next
	d := fr.ents[idx]
	fr.next++
	var ad *aheadDir
	if fr.ahead != nil {
		ad = fr.ahead[idx]
	}
	typ := direntType(fr.dir.fd, d)
	path := d.name
	if fr.path != "" {
		path = fr.path + "/" + d.name
	}
	// One entry for every visit (valid only during it): no allocation
	// per entry.
	e := &wk.ent
	*e = WalkEntry{Path: path, Name: d.name, Type: typ, Depth: fr.depth, w: wk.w, dir: fr.dir}
	act := wk.opts.Visit(e)
	if act == WalkStop {
		return false // ad, if any, is dropped by ra.stop
	}
	if typ != TypeDirectory || act == WalkSkipDir || fr.depth >= MaxWalkDepth || wk.res.Entries >= wk.maxEntries {
		if ad != nil {
			wk.ra.drop(ad)
		}
	}
	if typ != TypeDirectory || act == WalkSkipDir {
		return true
	}
	if fr.depth >= MaxWalkDepth {
		wk.truncate(TruncatedDepth)
		return true
	}
	if wk.res.Entries >= wk.maxEntries {
		wk.truncate(TruncatedWalkLimit)
		if wk.opts.StopAtLimit {
			wk.res.ResumeAfter = path
			return false
		}
		return true
	}
	return wk.descend(fr, d, ad, path)
}

// descend opens and reads the directory d of fr (from the read ahead when
// it has it) and pushes it. It returns false when the walk stops.
func (wk *walker) descend(fr *walkFrame, d dirent, ad *aheadDir, path string) bool {
	var child *walkFrame
	var complete bool
	if ad != nil && wk.ra.take(ad) {
		if ad.fd < 0 {
			return true // as below: the read ahead could not open it
		}
		child = &walkFrame{dir: newDirHandle(ad.fd), rel: ad.rel, path: path, depth: fr.depth + 1}
		wk.stack = append(wk.stack, child)
		complete = wk.w.aheadFrame(wk.ctx, child, ad, wk.maxEntries, &wk.res)
	} else {
		cfd, err := openatRetry(fr.dir.fd, d.name, flagsDir)
		if err != nil {
			return true // replaced by a symlink or file, removed, or unreadable
		}
		child = &walkFrame{dir: newDirHandle(cfd), rel: fr.rel.join(d.name), path: path, depth: fr.depth + 1}
		wk.stack = append(wk.stack, child)
		complete = wk.w.loadFrame(wk.ctx, child, wk.maxEntries, &wk.res)
	}
	if !complete {
		wk.truncate(TruncatedWalkLimit)
		if wk.opts.StopAtLimit {
			child.dir.release()
			wk.stack = wk.stack[:len(wk.stack)-1]
			wk.res.ResumeAfter = path
			return false
		}
	}
	wk.enter(child)
	return true
}

// loadFrame reads the frame's directory within the remaining entry budget,
// keeps the visible entries and sorts them. It reports false when the budget
// ran out before the directory did. When ctx ends meanwhile the frame is
// left empty: the walk's loop then stops with "timeout".
func (w *Workdir) loadFrame(ctx context.Context, fr *walkFrame, maxEntries int, res *WalkResult) bool {
	budget := maxEntries - res.Entries
	if budget <= 0 {
		return false
	}
	ents, more, err := readDirents(fr.dir.fd, budget)
	res.Entries += len(ents)
	vis, dots, ok := w.filterSort(ctx, fr.rel, ents)
	if !ok {
		return true
	}
	fr.ents = vis
	if !more && err == nil {
		fr.listing = &dots
	}
	return !more
}

// aheadFrame is loadFrame for a directory read ahead: it takes what
// loadFrame would have read within the budget left now (never more than
// the read ahead's, the budget when it was queued).
func (w *Workdir) aheadFrame(ctx context.Context, fr *walkFrame, ad *aheadDir, maxEntries int, res *WalkResult) bool {
	budget := maxEntries - res.Entries
	if budget <= 0 {
		return false
	}
	ents, more, vis, dots, ok := ad.raw, ad.more, ad.vis, ad.dots, ad.sorted
	if len(ents) > budget {
		ents, more, ok = ents[:budget], true, false
	}
	res.Entries += len(ents)
	if !ok {
		if vis, dots, ok = w.filterSort(ctx, fr.rel, ents); !ok {
			return true
		}
	}
	fr.ents = vis
	if !more && ad.err == nil {
		fr.listing = &dots
	}
	return !more
}

// dotNames are the names starting with "." of a directory read whole.
type dotNames []string

// absent reports whether name's first component is a "." name the
// directory did not hold (then it does not exist, barring a race with
// its creation, which a walk cannot tell from a later creation anyway).
func (l *dotNames) absent(comps []string) bool {
	if l == nil || len(comps) == 0 || !strings.HasPrefix(comps[0], ".") {
		return false
	}
	for _, n := range *l {
		if n == comps[0] {
			return false
		}
	}
	return true
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
