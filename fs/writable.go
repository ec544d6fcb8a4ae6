package fs

import "golang.org/x/sys/unix"

// ReadOnlyMount reports whether the workdir's root lies on a mount flagged
// read-only (statfs ST_RDONLY), as a compose `read_only: true` bind mount or
// a systemd ReadOnlyPaths= entry is. It is asked of the root descriptor, so
// no path is looked up again.
func (w *Workdir) ReadOnlyMount() (bool, error) {
	var sf unix.Statfs_t
	if err := unix.Fstatfs(w.rootFD, &sf); err != nil {
		return false, err
	}
	return sf.Flags&unix.ST_RDONLY != 0, nil
}

// Writable reports whether this process, with its effective uid, gid and
// capabilities, could create or change entries in the workdir's root
// directory: access(2) with W_OK on the root descriptor, and a mount that is
// not read-only. ServerFS never writes through it; `serverfs selfcheck`
// uses it to prove that an `ro` workdir really is read-only for the process.
//
// The kernel's faccessat2 also answers EROFS for a read-only mount and
// honours ACLs; where a seccomp filter refuses faccessat2, x/sys emulates it
// from the mode bits, so the mount flag is checked separately as well.
func (w *Workdir) Writable() bool {
	if unix.Faccessat(w.rootFD, ".", unix.W_OK, unix.AT_EACCESS) != nil {
		return false
	}
	ro, err := w.ReadOnlyMount()
	return err == nil && !ro
}
