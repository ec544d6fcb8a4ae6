package fs

import (
	"strings"
	"time"

	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

// Control reads the files beneath a workdir's root that steer ServerFS's
// own engines — a repository's .git directory, ignore files — without the
// hidden/deny policy, through the same resolver: beneath the root, and no
// symlink is ever followed. What it returns must never reach an agent
// as such.
type Control struct{ w *Workdir }

// Control returns the workdir's control-file reader.
func (w *Workdir) Control() *Control { return &Control{w: w} }

// StatData is the lstat(2) information engines compare (git's stat cache).
type StatData struct {
	Mode  uint32 // st_mode: type and permission bits
	Size  int64
	Mtime time.Time
	Ctime time.Time
	Dev   uint64
	Ino   uint64
	Uid   uint32
	Gid   uint32
}

// Type is the entry type of the mode.
func (s StatData) Type() EntryType { return typeOfMode(s.Mode) }

func statData(st *unix.Stat_t) StatData {
	return StatData{
		Mode: st.Mode, Size: st.Size, Dev: st.Dev, Ino: st.Ino, Uid: st.Uid, Gid: st.Gid,
		Mtime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec), Ctime: time.Unix(st.Ctim.Sec, st.Ctim.Nsec),
	}
}

func (c *Control) comps(name string) ([]string, relPath, error) {
	if name == "" || name == "." {
		return nil, relPath{}, nil
	}
	comps, ok := controlComps(name)
	if !ok {
		return nil, relPath{}, errs.At(errs.InvalidPath, c.w.alias, "", "bad control path")
	}
	return comps, relPath{comps: comps}, nil
}

// Open opens the regular file name (slash-separated, relative to the
// root) for reading.
func (c *Control) Open(name string) (*File, error) {
	comps, rp, err := c.comps(name)
	if err != nil {
		return nil, err
	}
	fd, _, err := c.w.openVerified(c.w.rootFD, comps, rp, TypeFile)
	if err != nil {
		return nil, err
	}
	return newFile(fd, c.w.alias+":/"+rp.String()), nil
}

// Lstat describes name without following it.
func (c *Control) Lstat(name string) (StatData, error) {
	comps, rp, err := c.comps(name)
	if err != nil {
		return StatData{}, err
	}
	st, err := c.w.lstatAt(c.w.rootFD, comps, rp)
	if err != nil {
		return StatData{}, err
	}
	return statData(&st), nil
}

// ControlEntry is one entry of Control.ReadDir.
type ControlEntry struct {
	Name string
	Stat StatData
}

// ReadDir lists the directory name with each entry's lstat, up to max
// entries (more is true when there were more).
func (c *Control) ReadDir(name string, max int) (ents []ControlEntry, more bool, err error) {
	comps, rp, err := c.comps(name)
	if err != nil {
		return nil, false, err
	}
	fd, _, err := c.w.openVerified(c.w.rootFD, comps, rp, TypeDirectory)
	if err != nil {
		return nil, false, err
	}
	defer unix.Close(fd)
	raw, more, err := readDirents(fd, max)
	if err != nil {
		return nil, false, errnoError(c.w.alias, rp, err)
	}
	for _, d := range raw {
		var st unix.Stat_t
		if unix.Fstatat(fd, d.name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue // vanished meanwhile
		}
		ents = append(ents, ControlEntry{Name: d.name, Stat: statData(&st)})
	}
	return ents, more, nil
}

// Lstat describes the walk entry without following it (git's stat cache
// compares these).
func (e *WalkEntry) Lstat() (StatData, error) {
	var st unix.Stat_t
	if err := lstatAt(e.dir.fd, e.Name, &st); err != nil {
		return StatData{}, errnoError(e.w.alias, relOf(e.Path), err)
	}
	return statData(&st), nil
}

// Readlink returns the target of a symlink entry. Engines hash it (git
// stores a link as a blob of its target); it is never shown to agents.
func (e *WalkEntry) Readlink() (string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(e.dir.fd, e.Name, buf)
	if err != nil {
		return "", errnoError(e.w.alias, relOf(e.Path), err)
	}
	return string(buf[:n]), nil
}

// HasChild reports whether the directory entry holds name (e.g. ".git"),
// without following symlinks.
func (e *WalkEntry) HasChild(name string) bool {
	fd, err := openatRetry(e.dir.fd, e.Name, flagsPath|unix.O_DIRECTORY)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// Writing control files: what a commit changes in .git (objects, the
// index, refs, reflogs). Only on rw workdirs; beneath the root, never
// through a symlink; every name is resolved to its parent directory's
// descriptor first.

// WFile is a control file open for writing.
type WFile struct {
	fd   int
	name string
}

// Write writes all of p.
func (f *WFile) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := retry(func() (int, error) { return unix.Write(f.fd, p[n:]) })
		if err != nil {
			return n, err
		}
		n += m
	}
	return n, nil
}

// Sync flushes the file to stable storage.
func (f *WFile) Sync() error { return unix.Fsync(f.fd) }

// Close releases the descriptor; closing twice is a no-op.
func (f *WFile) Close() error {
	if f.fd < 0 {
		return nil
	}
	err := unix.Close(f.fd)
	f.fd = -1
	return err
}

// controlParent opens the directory holding name and returns it with the
// final component.
func (c *Control) controlParent(name string) (int, string, relPath, error) {
	if c.w.mode != ModeReadWrite {
		return -1, "", relPath{}, errs.At(errs.WorkdirReadOnly, c.w.alias, "", "is read-only")
	}
	comps, rp, err := c.comps(name)
	if err != nil {
		return -1, "", rp, err
	}
	if len(comps) == 0 {
		return -1, "", rp, errs.At(errs.InvalidPath, c.w.alias, "", "bad control path")
	}
	dir := relPath{comps: comps[:len(comps)-1]}
	fd, _, err := c.w.openVerified(c.w.rootFD, dir.comps, dir, TypeDirectory)
	if err != nil {
		return -1, "", rp, err
	}
	return fd, comps[len(comps)-1], rp, nil
}

func (c *Control) create(name string, flags int, perm uint32) (*WFile, error) {
	dir, base, rp, err := c.controlParent(name)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dir)
	fd, err := openatMode(dir, base, flags|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		if err == unix.EEXIST {
			return nil, errs.At(errs.PathExists, c.w.alias, rp.String(), "already exists").Wrap(err)
		}
		return nil, controlErrno(c.w.alias, rp, err)
	}
	return &WFile{fd: fd, name: name}, nil
}

func openatMode(dir int, name string, flags int, perm uint32) (int, error) {
	return retry(func() (int, error) { return unix.Openat(dir, name, flags, perm) })
}

// CreateExclusive creates name, which must not exist (PATH_EXISTS
// otherwise): a lock file, or a temporary to rename into place.
func (c *Control) CreateExclusive(name string, perm uint32) (*WFile, error) {
	return c.create(name, unix.O_CREAT|unix.O_EXCL, perm)
}

// OpenAppend opens name for appending, creating it when absent (a reflog).
func (c *Control) OpenAppend(name string, perm uint32) (*WFile, error) {
	return c.create(name, unix.O_CREAT|unix.O_APPEND, perm)
}

// Rename renames from to to (replacing to), both beneath the root.
func (c *Control) Rename(from, to string) error {
	fdir, fbase, frp, err := c.controlParent(from)
	if err != nil {
		return err
	}
	defer unix.Close(fdir)
	tdir, tbase, _, err := c.controlParent(to)
	if err != nil {
		return err
	}
	defer unix.Close(tdir)
	if err := unix.Renameat(fdir, fbase, tdir, tbase); err != nil {
		return controlErrno(c.w.alias, frp, err)
	}
	return nil
}

// Remove removes the file name; a missing file is not an error.
func (c *Control) Remove(name string) error {
	dir, base, rp, err := c.controlParent(name)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	if err := unix.Unlinkat(dir, base, 0); err != nil && err != unix.ENOENT {
		return controlErrno(c.w.alias, rp, err)
	}
	return nil
}

// RemoveDir removes the empty directory name; a missing one is not an
// error.
func (c *Control) RemoveDir(name string) error {
	dir, base, rp, err := c.controlParent(name)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	if err := unix.Unlinkat(dir, base, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		return controlErrno(c.w.alias, rp, err)
	}
	return nil
}

// Symlink creates name as a symlink to target (a git symlink checked
// out; the target is stored, never resolved). name must not exist.
func (c *Control) Symlink(target, name string) error {
	dir, base, rp, err := c.controlParent(name)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	if err := unix.Symlinkat(target, dir, base); err != nil {
		return controlErrno(c.w.alias, rp, err)
	}
	return nil
}

// MkdirAll creates the directory name and missing parents, each made
// durable (its parent fsynced).
func (c *Control) MkdirAll(name string, perm uint32) error {
	comps, _, err := c.comps(name)
	if err != nil {
		return err
	}
	for i := range comps {
		dir, base, rp, err := c.controlParent(strings.Join(comps[:i+1], "/"))
		if err != nil {
			return err
		}
		err = unix.Mkdirat(dir, base, perm)
		if err == nil {
			// The new name is durable only once its parent is: a loose
			// object renamed into a fan-out directory whose creation a
			// power cut forgets is lost with it.
			err = syncDir(dir)
		}
		unix.Close(dir)
		if err != nil && err != unix.EEXIST {
			return controlErrno(c.w.alias, rp, err)
		}
	}
	return nil
}

// SyncDir fsyncs the directory name (after a rename or create in it).
func (c *Control) SyncDir(name string) error {
	comps, rp, err := c.comps(name)
	if err != nil {
		return err
	}
	fd, _, err := c.w.openVerified(c.w.rootFD, comps, rp, TypeDirectory)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return syncDir(fd)
}

func controlErrno(alias string, rp relPath, err error) *errs.Error {
	switch {
	case isErrno(err, unix.ENOSPC), isErrno(err, unix.EDQUOT):
		return errs.At(errs.NoSpace, alias, rp.String(), "cannot be written: no space left on the device").Wrap(err)
	case isErrno(err, unix.EROFS):
		return errs.At(errs.WorkdirReadOnly, alias, rp.String(), "is on a read-only mount").Wrap(err)
	}
	return errnoError(alias, rp, err)
}

// Readlink returns the target of the symlink name (git stores a link as a
// blob of its target). Never shown to agents.
func (c *Control) Readlink(name string) (string, error) {
	comps, rp, err := c.comps(name)
	if err != nil {
		return "", err
	}
	if len(comps) == 0 {
		return "", errs.At(errs.InvalidPath, c.w.alias, "", "bad control path")
	}
	dir := relPath{comps: comps[:len(comps)-1]}
	fd, _, err := c.w.openVerified(c.w.rootFD, dir.comps, dir, TypeDirectory)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(fd, comps[len(comps)-1], buf)
	if err != nil {
		return "", errnoError(c.w.alias, rp, err)
	}
	return string(buf[:n]), nil
}

// Fstat describes an open file.
func (f *File) Fstat() (StatData, error) {
	st, err := fstat(f.fd)
	if err != nil {
		return StatData{}, err
	}
	return statData(&st), nil
}

// Lstat describes the referenced entry without following it.
func (r *FileRef) Lstat() (StatData, error) {
	var st unix.Stat_t
	if err := lstatAt(r.dir.fd, r.Name, &st); err != nil {
		return StatData{}, errnoError(r.w.alias, relOf(r.Path), err)
	}
	return statData(&st), nil
}

// Readlink returns the target of a referenced symlink (for hashing; never
// shown to agents).
func (r *FileRef) Readlink() (string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(r.dir.fd, r.Name, buf)
	if err != nil {
		return "", errnoError(r.w.alias, relOf(r.Path), err)
	}
	return string(buf[:n]), nil
}

// OpenFile opens the referenced regular file for reading, keeping the
// reference (unlike Open); the caller still calls Release.
func (r *FileRef) OpenFile() (*File, int64, error) {
	return openEntry(r.w, r.dir.fd, r.Path, r.Name)
}
