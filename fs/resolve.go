package fs

import (
	"errors"
	"strings"
	"sync"

	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

// Resolver selects how workdir-relative paths are turned into descriptors.
type Resolver int

const (
	// ResolverAuto probes openat2 once per process and falls back to
	// ResolverOpenat when the kernel or a seccomp filter refuses it.
	ResolverAuto Resolver = iota
	// ResolverOpenat2 resolves the whole path in one openat2 call with
	// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS: the kernel
	// enforces the policy.
	ResolverOpenat2
	// ResolverOpenat walks component by component with openat and
	// O_NOFOLLOW from the root descriptor, checking each step with fstat.
	ResolverOpenat
)

// String names the resolver the way check-config and logs show it.
func (r Resolver) String() string {
	switch r {
	case ResolverOpenat2:
		return "openat2"
	case ResolverOpenat:
		return "openat"
	default:
		return "auto"
	}
}

const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// Open flags. Every open carries O_NOFOLLOW|O_CLOEXEC. The first open of a
// target is always O_PATH, which never has side effects (a FIFO does not
// block, a device is not opened); only after fstat says "regular file" or
// "directory" is it opened again for reading, and the two are compared by
// device and inode.
const (
	flagsPath = unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC
	flagsFile = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY
	flagsDir  = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
)

var (
	probeOnce   sync.Once
	probeResult Resolver
)

// ProbeResolver reports which resolver ResolverAuto uses on this system. It
// probes openat2 once per process.
func ProbeResolver() Resolver {
	probeOnce.Do(func() {
		probeResult = ResolverOpenat
		fd, err := unix.Openat2(unix.AT_FDCWD, ".", &unix.OpenHow{Flags: flagsPath | unix.O_DIRECTORY, Resolve: resolveFlags})
		if err == nil {
			unix.Close(fd)
			probeResult = ResolverOpenat2
		}
		// ENOSYS (old kernel), EPERM (seccomp), EINVAL (unknown flags):
		// anything but success selects the openat walk.
	})
	return probeResult
}

// opener opens comps beneath the directory descriptor root with flags
// (which include O_NOFOLLOW). No symlink is ever traversed: one in a parent
// component fails with ELOOP, and a final one fails with ELOOP unless flags
// is flagsPath, which returns a descriptor of the link itself. comps never
// holds "", "." or "..".
type opener func(root int, comps []string, flags int) (int, error)

func openerFor(r Resolver) opener {
	if r == ResolverAuto {
		r = ProbeResolver()
	}
	if r == ResolverOpenat2 {
		return openOpenat2
	}
	return openWalk
}

func openOpenat2(root int, comps []string, flags int) (int, error) {
	name := "."
	if len(comps) > 0 {
		name = strings.Join(comps, "/")
	}
	how := unix.OpenHow{Flags: uint64(flags), Resolve: resolveFlags}
	for i := 0; ; i++ {
		fd, err := unix.Openat2(root, name, &how)
		// EAGAIN: a concurrent rename disturbed a RESOLVE_BENEATH lookup.
		if (err == unix.EINTR || err == unix.EAGAIN) && i < 16 {
			continue
		}
		return fd, err
	}
}

func openWalk(root int, comps []string, flags int) (int, error) {
	if len(comps) == 0 {
		return openatRetry(root, ".", flags)
	}
	dir, owned := root, false
	defer func() {
		if owned {
			unix.Close(dir)
		}
	}()
	for _, c := range comps[:len(comps)-1] {
		fd, err := openatRetry(dir, c, flagsPath)
		if err != nil {
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
		case unix.S_IFLNK:
			unix.Close(fd)
			return -1, unix.ELOOP
		default:
			unix.Close(fd)
			return -1, unix.ENOTDIR
		}
		if owned {
			unix.Close(dir)
		}
		dir, owned = fd, true
	}
	return openatRetry(dir, comps[len(comps)-1], flags)
}

func openatRetry(dir int, name string, flags int) (int, error) {
	return retry(func() (int, error) { return unix.Openat(dir, name, flags, 0) })
}

func fstat(fd int) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := retryErr(func() error { return unix.Fstat(fd, &st) })
	return st, err
}

// errnoError maps a resolution errno to an *Error for wd:rp.
func errnoError(wd string, rp relPath, err error) *errs.Error {
	p := rp.String()
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return errs.At(errs.Internal, wd, p, "could not be opened").Wrap(err)
	}
	switch errno {
	case unix.ENOENT:
		return errs.At(errs.PathNotFound, wd, p, "does not exist").Wrap(err)
	case unix.ELOOP:
		return errs.At(errs.SymlinkNotAllowed, wd, p, "passes through a symlink; symlinks are never followed").Wrap(err)
	case unix.EXDEV:
		return errs.At(errs.PathOutsideWorkdir, wd, p, "resolves outside the workdir").Wrap(err)
	case unix.ENOTDIR:
		return errs.At(errs.NotADirectory, wd, p, "has a parent component that is not a directory").Wrap(err)
	case unix.EACCES, unix.EPERM:
		return errs.At(errs.AccessDenied, wd, p, "is not readable by the server (permission denied)").Wrap(err)
	case unix.ENAMETOOLONG:
		return errs.At(errs.InvalidPath, wd, p, "is too long").Wrap(err)
	case unix.ENXIO, unix.ENODEV, unix.EOPNOTSUPP:
		return errs.At(errs.UnsupportedFileType, wd, p, "is a special file; only regular files and directories can be read").Wrap(err)
	default:
		return errs.At(errs.Internal, wd, p, "could not be opened").Wrap(err)
	}
}

// EntryType is the kind of a filesystem object as agents see it.
type EntryType string

// The entry types. Everything that is not a regular file, directory or
// symlink (FIFO, socket, device) is "other" and can never be opened.
const (
	TypeFile      EntryType = "file"
	TypeDirectory EntryType = "directory"
	TypeSymlink   EntryType = "symlink"
	TypeOther     EntryType = "other"
)

func typeOfMode(mode uint32) EntryType {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return TypeFile
	case unix.S_IFDIR:
		return TypeDirectory
	case unix.S_IFLNK:
		return TypeSymlink
	default:
		return TypeOther
	}
}

func specialKind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	default:
		return "a special file"
	}
}
