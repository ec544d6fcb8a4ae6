package fs

import "golang.org/x/sys/unix"

// A file system call may fail with EINTR when a signal arrives while it
// waits (the Go runtime preempts with SIGURG; FUSE and network file
// systems wait): the call is simply made again. These two are the one
// retry loop every such call uses.

// retry makes call until it fails with something other than EINTR.
func retry[T any](call func() (T, error)) (T, error) {
	for {
		v, err := call()
		if err != unix.EINTR {
			return v, err
		}
	}
}

// retryErr is retry for a call that returns only an error.
func retryErr(call func() error) error {
	for {
		if err := call(); err != unix.EINTR {
			return err
		}
	}
}

// lstatAt is fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW): the entry itself,
// never what a symlink names.
func lstatAt(dirfd int, name string, st *unix.Stat_t) error {
	return retryErr(func() error { return unix.Fstatat(dirfd, name, st, unix.AT_SYMLINK_NOFOLLOW) })
}
