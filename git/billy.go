package git

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"time"

	"github.com/go-git/go-billy/v5"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// controlFS is a read-only billy.Filesystem over a directory beneath a
// workdir root (".git"), for go-git's object and reference storage. Every
// access goes through fs.Control: beneath the root, no symlink followed.
// Writing is refused: go-git never writes through it.
type controlFS struct {
	c    *sfs.Control
	root string // slash path below the workdir root
}

var errReadOnly = errors.New("serverfs: repository storage is read-only here")

func (b *controlFS) abs(name string) string {
	return path.Join(b.root, path.Clean("/" + name)[1:])
}

// notExist turns the resolver's PATH_NOT_FOUND (and a non-directory parent)
// into an error os.IsNotExist recognises, as go-git expects.
func notExist(op, name string, err error) error {
	switch errs.CodeOf(err) {
	case errs.PathNotFound, errs.NotADirectory:
		return &os.PathError{Op: op, Path: name, Err: os.ErrNotExist}
	}
	return &os.PathError{Op: op, Path: name, Err: err}
}

func (b *controlFS) Open(name string) (billy.File, error) {
	f, err := b.c.Open(b.abs(name))
	if err != nil {
		return nil, notExist("open", name, err)
	}
	return &controlFile{File: f, name: name}, nil
}

func (b *controlFS) OpenFile(name string, flag int, _ os.FileMode) (billy.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		return nil, &os.PathError{Op: "open", Path: name, Err: errReadOnly}
	}
	return b.Open(name)
}

func (b *controlFS) Stat(name string) (os.FileInfo, error) { return b.Lstat(name) }

func (b *controlFS) Lstat(name string) (os.FileInfo, error) {
	st, err := b.c.Lstat(b.abs(name))
	if err != nil {
		return nil, notExist("lstat", name, err)
	}
	return fileInfo{name: path.Base(name), st: st}, nil
}

func (b *controlFS) ReadDir(name string) ([]os.FileInfo, error) {
	ents, more, err := b.c.ReadDir(b.abs(name), maxStorageDirEntries)
	if err != nil {
		return nil, notExist("readdir", name, err)
	}
	if more {
		return nil, &os.PathError{Op: "readdir", Path: name, Err: errors.New("too many entries")}
	}
	out := make([]os.FileInfo, len(ents))
	for i, e := range ents {
		out[i] = fileInfo{name: e.Name, st: e.Stat}
	}
	return out, nil
}

// maxStorageDirEntries bounds one directory of .git (objects/xx, refs).
const maxStorageDirEntries = 1 << 20

func (b *controlFS) Join(elem ...string) string { return path.Join(elem...) }
func (b *controlFS) Root() string               { return b.root }
func (b *controlFS) Chroot(p string) (billy.Filesystem, error) {
	return &controlFS{c: b.c, root: b.abs(p)}, nil
}

func (b *controlFS) Create(name string) (billy.File, error) {
	return nil, &os.PathError{Op: "create", Path: name, Err: errReadOnly}
}
func (b *controlFS) Rename(o, n string) error {
	return &os.PathError{Op: "rename", Path: o, Err: errReadOnly}
}
func (b *controlFS) Remove(name string) error {
	return &os.PathError{Op: "remove", Path: name, Err: errReadOnly}
}
func (b *controlFS) TempFile(dir, prefix string) (billy.File, error) {
	return nil, &os.PathError{Op: "tempfile", Path: dir, Err: errReadOnly}
}
func (b *controlFS) MkdirAll(name string, _ os.FileMode) error {
	return &os.PathError{Op: "mkdir", Path: name, Err: errReadOnly}
}
func (b *controlFS) Symlink(_, link string) error {
	return &os.PathError{Op: "symlink", Path: link, Err: errReadOnly}
}
func (b *controlFS) Readlink(link string) (string, error) {
	return "", &os.PathError{Op: "readlink", Path: link, Err: errors.New("symlinks are not followed")}
}

type controlFile struct {
	*sfs.File
	name string
}

func (f *controlFile) Name() string              { return f.name }
func (f *controlFile) Write([]byte) (int, error) { return 0, errReadOnly }
func (f *controlFile) Lock() error               { return nil }
func (f *controlFile) Unlock() error             { return nil }
func (f *controlFile) Truncate(int64) error      { return errReadOnly }

type fileInfo struct {
	name string
	st   sfs.StatData
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return i.st.Size }
func (i fileInfo) ModTime() time.Time { return i.st.Mtime }
func (i fileInfo) Sys() any           { return nil }
func (i fileInfo) IsDir() bool        { return i.st.Type() == sfs.TypeDirectory }
func (i fileInfo) Mode() os.FileMode {
	m := os.FileMode(i.st.Mode & 0o777)
	switch i.st.Type() {
	case sfs.TypeDirectory:
		m |= fs.ModeDir
	case sfs.TypeSymlink:
		m |= fs.ModeSymlink
	case sfs.TypeOther:
		m |= fs.ModeIrregular
	}
	return m
}
