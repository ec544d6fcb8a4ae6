package fs

import (
	"io"

	"golang.org/x/sys/unix"
)

// File is a regular file opened by the resolver or a walk, read with plain
// read(2) calls. It is not an *os.File on purpose: os.NewFile on a
// descriptor opened O_NONBLOCK (which every open here is, so a FIFO can
// never block) costs an fcntl and a failing epoll_ctl per file, a third of
// the system calls of a search. ReadAt may be called concurrently; Read
// and Close may not.
type File struct {
	fd   int
	name string // "alias:/rel/path", for messages; never a host path
	// alias and path, when name is "", make the name when it is asked
	// for: a search opens thousands of files and names none of them.
	alias, path string
}

func newFile(fd int, name string) *File { return &File{fd: fd, name: name} }

// newFileAt is newFile for the file path of the workdir alias.
func newFileAt(fd int, alias, path string) *File { return &File{fd: fd, alias: alias, path: path} }

// Name returns "alias:/rel/path".
func (f *File) Name() string {
	if f.name == "" && f.alias != "" {
		return f.alias + ":/" + f.path
	}
	return f.name
}

// Read reads up to len(p) bytes; it returns io.EOF at the end of the file.
func (f *File) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := retry(func() (int, error) { return unix.Read(f.fd, p) })
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// ReadAt reads len(p) bytes at offset off (pread), like io.ReaderAt.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		m, err := retry(func() (int, error) { return unix.Pread(f.fd, p[n:], off+int64(n)) })
		if err != nil {
			return n, err
		}
		if m == 0 {
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

// Close releases the descriptor. Closing twice is a no-op.
func (f *File) Close() error {
	if f.fd < 0 {
		return nil
	}
	err := unix.Close(f.fd)
	f.fd = -1
	return err
}

// Seek sets the offset of the next Read, like io.Seeker.
func (f *File) Seek(offset int64, whence int) (int64, error) {
	return unix.Seek(f.fd, offset, whence)
}
