package transport

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// SocketMode is the permission of a unix: listener's socket: connecting
// needs write permission on it, so only its owner (the server's user) and
// its group (SERVERFS_LISTEN_GROUP, e.g. the tunnel client's) can connect.
const SocketMode = 0o660

// maxSocketPath is sun_path's size minus its NUL; the socket is made in a
// private directory beside the final path (".sfs-" and up to 10 digits,
// then "/s") and renamed into place, so the directory must leave room.
const (
	maxSocketPath    = 107
	socketTempSuffix = len("/.sfs-1234567890/s")
)

// unixSocketProblem checks a unix: listener path without touching the
// filesystem beyond its directory; "" when it is usable.
func unixSocketProblem(path string) string {
	switch {
	case !filepath.IsAbs(path):
		return "the socket path must be absolute"
	case filepath.Clean(path) != path:
		return "the socket path must be clean (no trailing /, no . or .. components)"
	case len(path) > maxSocketPath || len(filepath.Dir(path))+socketTempSuffix > maxSocketPath:
		return fmt.Sprintf("the socket path is too long (at most %d bytes, its directory at most %d)", maxSocketPath, maxSocketPath-socketTempSuffix)
	}
	st, err := os.Stat(filepath.Dir(path))
	if err != nil || !st.IsDir() {
		return "the socket's directory does not exist (systemd: RuntimeDirectory=)"
	}
	return ""
}

// lookupGroup resolves SERVERFS_LISTEN_GROUP: a group name from the group
// database, or a numeric gid.
func lookupGroup(v string) (int, string) {
	if n, err := strconv.ParseUint(v, 10, 31); err == nil {
		return int(n), ""
	}
	g, err := user.LookupGroup(v)
	if err != nil {
		return -1, "no such group"
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil {
		return -1, "no such group"
	}
	return gid, ""
}

// Listen opens the listener cfg names: TCP, or a Unix socket with mode
// SocketMode and group cfg.SocketGroup (when set).
//
// The socket is created in a private 0700 directory beside its path, given
// its mode and group there, and renamed into place, so it is never
// reachable with a wider mode or another group. A stale socket at the path
// (nothing accepts on it) is replaced; a live one, or any other file, is an
// error. Closing the listener removes the socket if it is still the one
// this listener made.
func Listen(cfg Config) (net.Listener, error) {
	if cfg.Network != "unix" {
		return net.Listen("tcp", cfg.Listen)
	}
	return listenUnix(cfg.Listen, cfg.SocketGroup)
}

func listenUnix(path string, gid int) (net.Listener, error) {
	if st, err := os.Lstat(path); err == nil {
		if st.Mode().Type() != os.ModeSocket {
			return nil, errors.New("the socket path exists and is not a socket")
		}
		c, err := net.DialTimeout("unix", path, 2*time.Second)
		if err == nil {
			c.Close()
			return nil, errors.New("another server is listening on the socket")
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("cannot check the existing socket: %w", err)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("cannot remove the stale socket: %w", err)
		}
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".sfs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o700); err != nil {
		return nil, err
	}
	tmpSock := filepath.Join(tmp, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmpSock, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(false)
	fail := func(err error) (net.Listener, error) {
		ln.Close()
		return nil, err
	}
	if err := os.Chmod(tmpSock, SocketMode); err != nil {
		return fail(err)
	}
	if gid >= 0 {
		if err := os.Lchown(tmpSock, -1, gid); err != nil {
			return fail(fmt.Errorf("cannot give the socket group %d (the server's user must be a member: systemd SupplementaryGroups=): %w", gid, err))
		}
	}
	if err := os.Rename(tmpSock, path); err != nil {
		return fail(err)
	}
	st, err := os.Lstat(path)
	if err != nil {
		return fail(err)
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	return &unixListener{UnixListener: ln, path: path, stat: sys}, nil
}

// unixListener removes its socket on Close, if the path still names it.
type unixListener struct {
	*net.UnixListener
	path string
	stat *syscall.Stat_t
	once sync.Once
}

// Addr is the socket's final path (the embedded listener knows only the
// temporary name it was bound to).
func (l *unixListener) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }

// Close stops accepting and removes the socket.
func (l *unixListener) Close() error {
	err := l.UnixListener.Close()
	l.once.Do(func() {
		st, serr := os.Lstat(l.path)
		if serr != nil || l.stat == nil {
			return
		}
		if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Dev == l.stat.Dev && sys.Ino == l.stat.Ino {
			os.Remove(l.path)
		}
	})
	return err
}
