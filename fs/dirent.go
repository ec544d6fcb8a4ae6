package fs

import (
	"encoding/binary"
	"sync"

	"golang.org/x/sys/unix"
)

// dirent is one raw directory entry: its name and the type the filesystem
// reported (unix.DT_*; DT_UNKNOWN on filesystems that do not say).
type dirent struct {
	name string
	typ  uint8
}

// readDirents reads the entries of the open directory fd, skipping "." and
// "..". It stops after max entries and reports more=true when the directory
// has more. os.File.ReadDir is not used: for DT_UNKNOWN it falls back to
// lstat by path name, which is exactly the reopen-by-name this package
// never does.
func readDirents(fd int, max int) (ents []dirent, more bool, err error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	for {
		n, err := retry(func() (int, error) { return unix.Getdents(fd, buf) })
		if err != nil {
			return ents, false, err
		}
		if n <= 0 {
			return ents, false, nil
		}
		b := buf[:n]
		for len(b) > 0 {
			// struct linux_dirent64 { u64 ino; s64 off; u16 reclen; u8 type; char name[]; }
			if len(b) < 19 {
				return ents, false, unix.EIO
			}
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return ents, false, unix.EIO
			}
			typ := b[18]
			name := b[19:reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			b = b[reclen:]
			if len(name) == 0 || (len(name) == 1 && name[0] == '.') || (len(name) == 2 && name[0] == '.' && name[1] == '.') {
				continue
			}
			if len(ents) == max {
				return ents, true, nil
			}
			ents = append(ents, dirent{name: string(name), typ: typ})
		}
	}
}

// direntBufs reuses getdents buffers: a walk reads thousands of
// directories, and a fresh 32 KiB buffer each costs page faults.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// readDirNames lists up to max names of the directory at an operator-given
// host path (configuration time only).
func readDirNames(dir string, max int) ([]string, error) {
	fd, err := unix.Open(dir, flagsDir, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	ents, _, err := readDirents(fd, max)
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.name
	}
	return names, err
}
