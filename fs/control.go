package fs

import (
	"time"

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
		return nil, relPath{}, newErr(CodeInvalidPath, c.w.alias, "", "bad control path", nil)
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
	for {
		err := unix.Fstatat(e.dir.fd, e.Name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return StatData{}, errnoError(e.w.alias, e.rel, err)
		}
		return statData(&st), nil
	}
}

// Readlink returns the target of a symlink entry. Engines hash it (git
// stores a link as a blob of its target); it is never shown to agents.
func (e *WalkEntry) Readlink() (string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(e.dir.fd, e.Name, buf)
	if err != nil {
		return "", errnoError(e.w.alias, e.rel, err)
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
