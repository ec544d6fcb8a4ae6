package fs

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

// Mode says whether a workdir accepts writes.
type Mode string

// The workdir modes. Read-only is the default; read-write is an explicit
// operator choice per workdir.
const (
	ModeReadOnly  Mode = "ro"
	ModeReadWrite Mode = "rw"
)

// Options tune how New builds an FS. The zero value is the production
// setting.
type Options struct {
	// Resolver forces a resolver; tests use it to run the whole security
	// suite on both. Zero means probe (ResolverAuto).
	Resolver Resolver
	// Lease serialises writes per workdir. Nil means an in-process
	// LocalLease; the host bridge provides one shared across processes.
	Lease WriterLease
}

// FS is the set of configured workdirs together with the path policy and
// limits. It is safe for concurrent use. Every filesystem access ServerFS
// makes starts at one of its workdir root descriptors.
type FS struct {
	workdirs []*Workdir
	byAlias  map[string]*Workdir
	policy   *Policy
	limits   Limits
	resolver Resolver
	lease    WriterLease

	// wsMu guards spaces (the attached workspaces, by "ALIAS@ID") and
	// detached (root descriptors of detached ones, closed later).
	wsMu     sync.RWMutex
	spaces   map[string]*Workdir
	detached []int
	wsLimits *WorkspaceLimits

	// onFindMatch, in tests, runs after Find keeps a match.
	onFindMatch func(path string)
}

// Workdir is one exposed directory: an alias, a description, a mode, and an
// open descriptor of its root. The host path is not kept.
type Workdir struct {
	alias       string
	description string
	mode        Mode
	repoOps     bool
	searchFetch bool
	urlTemplate *URLTemplate
	rootFD      int
	open        opener
	policy      *Policy
	// workspace is set for a workspace (AttachWorkspace), nil for a
	// configured workdir.
	workspace *WorkspaceMeta
}

// WorkdirInfo is what agents may learn about a workdir.
type WorkdirInfo struct {
	Alias       string `json:"alias"`
	Description string `json:"description,omitempty"`
	Mode        Mode   `json:"mode"`
	// RepoOps says the repository tools (inspect_repo) work here.
	RepoOps bool `json:"repo_ops,omitempty"`
	// Base, Owner and Age describe a workspace (ALIAS@ID): the commit it
	// was checked out at, who created it, and how long ago (e.g. "2h5m").
	Base  string `json:"base,omitempty"`
	Owner string `json:"owner,omitempty"`
	Age   string `json:"age,omitempty"`
}

// New opens every configured workdir root and returns the FS. Roots are
// opened once, by the operator-chosen host path, and never again by path.
func New(cfg *Config, opts Options) (*FS, error) {
	policy, err := NewPolicy(cfg.AllowHidden, cfg.ExtraDenyGlobs)
	if err != nil {
		return nil, err
	}
	r := opts.Resolver
	if r == ResolverAuto {
		r = ProbeResolver()
	}
	lease := opts.Lease
	if lease == nil {
		lease = NewLocalLease(0)
	} else {
		// Workspaces are the server's own: a shared lease (the host
		// bridge's) knows only the configured workdirs.
		lease = workspaceLease{shared: lease, local: NewLocalLease(0)}
	}
	f := &FS{byAlias: map[string]*Workdir{}, policy: policy, limits: cfg.Limits, resolver: r, lease: lease}
	for _, wc := range cfg.Workdirs {
		fd, err := unix.Open(wc.hostPath, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			f.Close()
			// The operator knows the host path; it is not repeated here so
			// that it cannot leak into a log an agent might see.
			return nil, fmt.Errorf("%s (workdir %q): cannot open its root: %v", wc.Source, wc.Alias, err)
		}
		w := &Workdir{alias: wc.Alias, description: wc.Description, mode: wc.Mode, repoOps: wc.RepoOps, searchFetch: wc.SearchFetch, urlTemplate: wc.URLTemplate, rootFD: fd, open: openerFor(r), policy: policy}
		f.workdirs = append(f.workdirs, w)
		f.byAlias[wc.Alias] = w
	}
	return f, nil
}

// SweepTemporaries removes the temporary files interrupted writes left in
// the rw workdirs (each walk bounded by SERVERFS_MAX_WALK_ENTRIES) and
// reports how many. The server calls it once at start-up, before serving.
// Best effort: a sweep that cannot finish leaves hidden temporaries
// behind, never a wrong file.
func (f *FS) SweepTemporaries() int {
	n := 0
	for _, w := range f.workdirs {
		if w.mode == ModeReadWrite {
			k, _ := w.sweepTemporaries(f.limits.MaxWalkEntries)
			n += k
		}
	}
	return n
}

// Close releases the root descriptors. The FS must not be used afterwards.
func (f *FS) Close() error {
	for _, w := range f.workdirs {
		if w.rootFD >= 0 {
			unix.Close(w.rootFD)
			w.rootFD = -1
		}
	}
	f.closeWorkspaces()
	return nil
}

// Resolver reports the resolver in use (never ResolverAuto).
func (f *FS) Resolver() Resolver { return f.resolver }

// Lease returns the writer lease every change to a workdir takes (writes
// here, commits in package git).
func (f *FS) Lease() WriterLease { return f.lease }

// Limits returns the configured limits.
func (f *FS) Limits() Limits { return f.limits }

// Policy returns the path policy shared by every operation.
func (f *FS) Policy() *Policy { return f.policy }

// Workdirs lists the workdirs in configuration order, then the attached
// workspaces sorted by alias.
func (f *FS) Workdirs() []WorkdirInfo {
	out := make([]WorkdirInfo, 0, len(f.workdirs))
	for _, w := range f.workdirs {
		out = append(out, w.Info())
	}
	return append(out, f.workspaceInfos()...)
}

// ConfiguredWorkdirs lists the configured workdirs (no workspaces) in
// configuration order.
func (f *FS) ConfiguredWorkdirs() []*Workdir { return append([]*Workdir(nil), f.workdirs...) }

// Workdir returns the workdir with exactly this alias (no case folding), or
// WORKDIR_NOT_FOUND.
func (f *FS) Workdir(alias string) (*Workdir, error) {
	if w, ok := f.byAlias[alias]; ok {
		return w, nil
	}
	if strings.Contains(alias, "@") {
		if w := f.workspace(alias); w != nil {
			return w, nil
		}
		return nil, workspaceNotFound(alias)
	}
	names := make([]string, 0, len(f.workdirs))
	for _, w := range f.workdirs {
		names = append(names, w.alias)
	}
	sort.Strings(names)
	msg := "no workdir has this alias (aliases are case-sensitive)"
	if len(names) > 0 {
		msg += "; known: " + strings.Join(names, ", ")
	}
	return nil, errs.New(errs.WorkdirNotFound, fmt.Sprintf("%q: %s", displayPath(alias), msg))
}

// Info describes the workdir for agents.
func (w *Workdir) Info() WorkdirInfo {
	i := WorkdirInfo{Alias: w.alias, Description: w.description, Mode: w.mode, RepoOps: w.repoOps}
	if m := w.workspace; m != nil {
		i.Base, i.Owner, i.Age = m.Base, m.Owner, age(m.Created, time.Now())
	}
	return i
}

// Alias is the workdir's name as agents use it.
func (w *Workdir) Alias() string { return w.alias }

// RepoOps reports whether the operator enabled the repository tools here.
func (w *Workdir) RepoOps() bool { return w.repoOps }

// SearchFetch reports whether ChatGPT's search and fetch tools cover the
// workdir.
func (w *Workdir) SearchFetch() bool { return w.searchFetch }

// URLTemplate is the operator's citation URL template of the workdir; nil
// when none is set.
func (w *Workdir) URLTemplate() *URLTemplate { return w.urlTemplate }

// URL is the citation URL of the file path (workdir-relative) at line (0:
// none): the operator's template, or serverfs://alias/path, the resource
// URI of the file.
func (w *Workdir) URL(path string, line int) string {
	if w.urlTemplate != nil {
		return w.urlTemplate.Expand(path, line)
	}
	// A workspace's '@' is escaped: the resource template's {workdir}
	// takes no raw '@'.
	return "serverfs://" + strings.Replace(w.alias, "@", "%40", 1) + "/" + EscapePath(path)
}

// SearchFetchWorkdirs are the workdirs search and fetch cover, in
// configuration order.
func (f *FS) SearchFetchWorkdirs() []*Workdir {
	var out []*Workdir
	for _, w := range f.workdirs {
		if w.searchFetch {
			out = append(out, w)
		}
	}
	return out
}

// Mode is ModeReadOnly or ModeReadWrite.
func (w *Workdir) Mode() Mode { return w.mode }

// CleanPath applies the textual rules and the hidden/deny policy to an
// agent-supplied path and returns it in canonical form ("a/b", "" for the
// root) — for engines that pass paths on (git), so that they see exactly
// what the reads and writes would allow.
func (w *Workdir) CleanPath(raw string) (string, error) {
	rp, err := w.clean(raw)
	if err != nil {
		return "", err
	}
	return rp.String(), nil
}

// clean applies the textual rules and the hidden/deny policy to raw.
func (w *Workdir) clean(raw string) (relPath, error) {
	rp, e := cleanPath(raw)
	if e != nil {
		e.Workdir, e.Sent = w.alias, true
		return relPath{}, e
	}
	if code, msg := w.policy.check(rp); code != "" {
		return relPath{}, errs.At(code, w.alias, rp.String(), msg)
	}
	return rp, nil
}

// lstatAt resolves comps beneath dirfd with O_PATH (no side effects, no
// following) and returns the stat of the final object, which may be a
// symlink. rp names the object in errors.
func (w *Workdir) lstatAt(dirfd int, comps []string, rp relPath) (unix.Stat_t, error) {
	fd, err := w.open(dirfd, comps, flagsPath)
	if err != nil {
		return unix.Stat_t{}, errnoError(w.alias, rp, err)
	}
	defer unix.Close(fd)
	st, err := fstat(fd)
	if err != nil {
		return unix.Stat_t{}, errnoError(w.alias, rp, err)
	}
	return st, nil
}

// openAs is the resolver: it turns an agent-supplied path into an open
// descriptor of the wanted type (TypeFile or TypeDirectory) or an *Error.
// The path is never reopened by name afterwards; callers work on the
// descriptor.
func (w *Workdir) openAs(raw string, want EntryType) (int, relPath, unix.Stat_t, error) {
	rp, err := w.clean(raw)
	if err != nil {
		return -1, rp, unix.Stat_t{}, err
	}
	if rp.wantDir && want == TypeFile {
		return -1, rp, unix.Stat_t{}, errs.At(errs.NotAFile, w.alias, rp.String(), "ends with '/' but a file was expected")
	}
	fd, st, err := w.openVerified(w.rootFD, rp.comps, rp, want)
	if err != nil {
		err = w.withNearMisses(err, rp)
	}
	return fd, rp, st, err
}

// openVerified opens comps beneath dirfd as the wanted type: first with
// O_PATH to learn the type without side effects, then for reading, and the
// two must be the same object. rp names it in errors.
func (w *Workdir) openVerified(dirfd int, comps []string, rp relPath, want EntryType) (int, unix.Stat_t, error) {
	flags := flagsFile
	if want == TypeDirectory {
		flags = flagsDir
	}
	for attempt := 0; ; attempt++ {
		st, err := w.lstatAt(dirfd, comps, rp)
		if err != nil {
			return -1, st, err
		}
		if err := w.checkType(rp, st.Mode, want); err != nil {
			return -1, st, err
		}
		fd, oerr := w.open(dirfd, comps, flags)
		if oerr != nil {
			return -1, st, errnoError(w.alias, rp, oerr)
		}
		st2, serr := fstat(fd)
		if serr != nil {
			unix.Close(fd)
			return -1, st, errnoError(w.alias, rp, serr)
		}
		if st2.Dev == st.Dev && st2.Ino == st.Ino && st2.Mode&unix.S_IFMT == st.Mode&unix.S_IFMT {
			return fd, st2, nil
		}
		// The object was replaced between the two opens. The second open
		// was as safe as the first (same kernel-enforced rules), but its
		// type was not checked before opening; check and try again.
		unix.Close(fd)
		if err := w.checkType(rp, st2.Mode, want); err != nil {
			return -1, st2, err
		}
		if attempt == 2 {
			return -1, st2, errs.At(errs.PathNotFound, w.alias, rp.String(), "kept changing while it was being opened; try again")
		}
	}
}

func (w *Workdir) checkType(rp relPath, mode uint32, want EntryType) error {
	t := typeOfMode(mode)
	switch {
	case t == TypeSymlink:
		return errs.At(errs.SymlinkNotAllowed, w.alias, rp.String(), "is a symlink; symlinks are never followed")
	case t == TypeOther:
		return errs.At(errs.UnsupportedFileType, w.alias, rp.String(), fmt.Sprintf("is %s; only regular files and directories can be read", specialKind(mode)))
	case want == TypeFile && t == TypeDirectory:
		return errs.At(errs.NotAFile, w.alias, rp.String(), "is a directory, not a file")
	case want == TypeDirectory && t == TypeFile:
		return errs.At(errs.NotADirectory, w.alias, rp.String(), "is a file, not a directory")
	case rp.wantDir && t != TypeDirectory:
		return errs.At(errs.NotADirectory, w.alias, rp.String(), "ends with '/' but is not a directory")
	}
	return nil
}

// OpenFile resolves raw to a regular file and returns it open for reading.
// The returned *File is named "alias:/rel/path" so that no error from it
// can carry a host path.
func (w *Workdir) OpenFile(raw string) (*File, FileInfo, error) {
	fd, rp, st, err := w.openAs(raw, TypeFile)
	if err != nil {
		return nil, FileInfo{}, err
	}
	return newFile(fd, w.alias+":/"+rp.String()), w.fileInfo(rp, &st), nil
}

// FileInfo is the agent-visible metadata of one filesystem object. It has no
// owner, inode, device, link target or absolute path, by design.
type FileInfo struct {
	Workdir    string    `json:"workdir"`
	Path       string    `json:"path"`
	Type       EntryType `json:"type"`
	Size       *int64    `json:"size,omitempty"`
	ModifiedAt string    `json:"modified_at"`
	MIMEType   string    `json:"mime_type,omitempty"`
	// Revision is "sha256:<hex>" of the whole file, for regular files up
	// to SERVERFS_MAX_WRITE_BYTES in rw workdirs: what a write that
	// changes the file must name as its expected revision.
	Revision string `json:"revision,omitempty"`
}

func (w *Workdir) fileInfo(rp relPath, st *unix.Stat_t) FileInfo {
	fi := FileInfo{Workdir: w.alias, Path: rp.String(), Type: typeOfMode(st.Mode), ModifiedAt: modTime(st)}
	if fi.Type == TypeFile {
		size := st.Size
		fi.Size = &size
		fi.MIMEType = MIMEType(rp.base())
	}
	return fi
}

func modTime(st *unix.Stat_t) string {
	return time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC().Format(time.RFC3339)
}

// Stat describes raw without following it: a symlink as the final component
// is reported as TypeSymlink (its target is never read), a FIFO, socket or
// device as TypeOther. Nothing is opened for reading.
func (w *Workdir) Stat(raw string) (FileInfo, error) {
	rp, st, err := w.lstatPath(raw)
	if err != nil {
		return FileInfo{}, err
	}
	return w.fileInfo(rp, &st), nil
}

// lstatPath is Stat before the FileInfo: the cleaned path and its lstat.
func (w *Workdir) lstatPath(raw string) (relPath, unix.Stat_t, error) {
	rp, err := w.clean(raw)
	if err != nil {
		return rp, unix.Stat_t{}, err
	}
	st, err := w.lstatAt(w.rootFD, rp.comps, rp)
	if err != nil {
		return rp, st, w.withNearMisses(err, rp)
	}
	if rp.wantDir && typeOfMode(st.Mode) != TypeDirectory {
		return rp, st, errs.At(errs.NotADirectory, w.alias, rp.String(), "ends with '/' but is not a directory")
	}
	return rp, st, nil
}

// Stat is Workdir.Stat by alias, with the revision of a regular file up
// to Limits.MaxWriteBytes in a rw workdir (a read-only one has none: no
// write could use it): it is opened (through the same resolver) and
// hashed, and the metadata returned is of the descriptor hashed. A file
// that cannot be opened (e.g. not readable) is described without one.
func (f *FS) Stat(alias, path string) (FileInfo, error) {
	w, err := f.Workdir(alias)
	if err != nil {
		return FileInfo{}, err
	}
	if a, ok, _ := w.archiveAt(path, false); ok {
		defer a.Close()
		return f.statMember(w, a)
	}
	rp, st, err := w.lstatPath(path)
	if err != nil {
		return FileInfo{}, err
	}
	fi := w.fileInfo(rp, &st)
	if fi.Type != TypeFile || st.Size > int64(f.limits.MaxWriteBytes) || w.mode != ModeReadWrite {
		// No write can take a revision on a read-only workdir.
		return fi, nil
	}
	// The path is resolved once more (the probe above opened nothing for
	// reading), and the descriptor must be the object just described.
	fd, err := w.open(w.rootFD, rp.comps, flagsFile)
	if err != nil {
		return fi, nil
	}
	file := newFile(fd, "")
	defer file.Close()
	st2, err := fstat(fd)
	if err != nil || st2.Dev != st.Dev || st2.Ino != st.Ino || typeOfMode(st2.Mode) != TypeFile {
		return fi, nil
	}
	info := w.fileInfo(rp, &st2)
	if info.Revision, err = fileRevision(file, f.limits.MaxWriteBytes); err != nil {
		return fi, nil
	}
	return info, nil
}

// fileRevision hashes an open file from its start, without moving its
// read offset; "" when it holds more than max bytes.
func fileRevision(f *File, max int) (string, error) {
	return hashReader(io.NewSectionReader(f, 0, int64(max)+1), max)
}

func isErrno(err error, target unix.Errno) bool {
	var e unix.Errno
	return errors.As(err, &e) && e == target
}
