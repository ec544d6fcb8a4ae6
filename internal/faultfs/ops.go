package faultfs

import (
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// rawFS serves FS's tree to the kernel. Every operation holds FS.mu, so
// the tree changes one operation at a time and the operation count (the
// cut point) is exact. Operations it does not implement (xattrs, locks,
// mknod, fallocate) answer ENOSYS, from the embedded default.
type rawFS struct {
	fuse.RawFileSystem
	fs *FS
}

func (r *rawFS) String() string { return "faultfs" }

// read runs an operation that changes nothing: EIO once tripped.
func (r *rawFS) read(fn func() fuse.Status) fuse.Status {
	f := r.fs
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tripped {
		return fuse.EIO
	}
	return fn()
}

// mutate runs a mutating operation and counts it when it succeeds; the
// armed cut trips after it.
func (r *rawFS) mutate(fn func() fuse.Status) fuse.Status {
	f := r.fs
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tripped {
		return fuse.EIO
	}
	st := fn()
	if st == fuse.OK {
		f.ops++
		if f.cutAt > 0 && f.ops >= f.cutAt {
			f.tripped = true
		}
	}
	return st
}

// node returns the inode id, or nil when it is gone (a stale id after a cut).
func (f *FS) node(id uint64) *inode { return f.nodes[id] }

// dir returns the directory id and a status when it is not one.
func (f *FS) dir(id uint64) (*inode, fuse.Status) {
	d := f.nodes[id]
	switch {
	case d == nil:
		return nil, fuse.ENOENT
	case !d.isDir():
		return nil, fuse.ENOTDIR
	}
	return d, fuse.OK
}

func (f *FS) attr(n *inode, a *fuse.Attr) {
	a.Ino, a.Mode, a.Owner = n.id, n.mode, fuse.Owner{Uid: n.uid, Gid: n.gid}
	a.Nlink = n.nlink
	switch {
	case n.isDir():
		a.Size, a.Nlink = PageSize, 2
		for _, c := range n.ents {
			if f.nodes[c].isDir() {
				a.Nlink++
			}
		}
	case n.isReg():
		a.Size = uint64(len(n.data))
	default:
		a.Size = uint64(len(n.target))
	}
	a.Blocks = (a.Size + 511) / 512
	a.Blksize = PageSize
	a.Mtime, a.Mtimensec = uint64(n.mtime.Unix()), uint32(n.mtime.Nanosecond())
	a.Ctime, a.Ctimensec = uint64(n.ctime.Unix()), uint32(n.ctime.Nanosecond())
	a.Atime, a.Atimensec = a.Mtime, a.Mtimensec
}

// entry describes n to the kernel, cacheable for no time at all.
func (f *FS) entry(n *inode, out *fuse.EntryOut) {
	out.NodeId, out.Generation = n.id, 1
	f.attr(n, &out.Attr)
}

func (r *rawFS) Lookup(_ <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	return r.read(func() fuse.Status {
		d, st := r.fs.dir(h.NodeId)
		if st != fuse.OK {
			return st
		}
		id, ok := d.ents[name]
		if !ok {
			return fuse.ENOENT
		}
		r.fs.entry(r.fs.nodes[id], out)
		return fuse.OK
	})
}

func (r *rawFS) GetAttr(_ <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	return r.read(func() fuse.Status {
		n := r.fs.node(in.NodeId)
		if n == nil {
			return fuse.ENOENT
		}
		r.fs.attr(n, &out.Attr)
		return fuse.OK
	})
}

// truncate sets a file's current size; the pages between the old and the
// new end are dirty.
func (n *inode) truncate(size int64) {
	old := int64(len(n.data))
	if size == old {
		return
	}
	lo, hi := min(old, size), max(old, size)
	for p := lo / PageSize; p <= (hi-1)/PageSize; p++ {
		n.markDirty(p)
	}
	if size < old {
		n.data = n.data[:size]
	} else {
		n.data = append(n.data, make([]byte, size-old)...)
	}
	n.sizeDirty = true
	n.mtime = time.Now()
	n.ctime = n.mtime
}

func (n *inode) markDirty(page int64) {
	if n.dirty == nil {
		n.dirty = map[int64]bool{}
	}
	n.dirty[page] = true
}

func (r *rawFS) SetAttr(_ <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	return r.mutate(func() fuse.Status {
		n := r.fs.node(in.NodeId)
		if n == nil {
			return fuse.ENOENT
		}
		if size, ok := in.GetSize(); ok {
			if !n.isReg() {
				return fuse.EINVAL
			}
			n.truncate(int64(size))
		}
		if mode, ok := in.GetMode(); ok {
			n.mode = n.mode&syscall.S_IFMT | mode&0o7777
		}
		if uid, ok := in.GetUID(); ok {
			n.uid = uid
		}
		if gid, ok := in.GetGID(); ok {
			n.gid = gid
		}
		if mt, ok := in.GetMTime(); ok {
			n.mtime = mt
		}
		n.ctime = time.Now()
		r.fs.attr(n, &out.Attr)
		return fuse.OK
	})
}

// create names a new inode of mode in directory parent.
func (r *rawFS) create(parent uint64, name string, mode uint32, owner fuse.Owner, out *fuse.EntryOut) (*inode, fuse.Status) {
	d, st := r.fs.dir(parent)
	if st != fuse.OK {
		return nil, st
	}
	if _, ok := d.ents[name]; ok {
		return nil, fuse.Status(syscall.EEXIST)
	}
	n := r.fs.newNode(mode, owner)
	r.fs.change(entryChange{parent, name, n.id})
	r.fs.entry(n, out)
	return n, fuse.OK
}

func (r *rawFS) Mkdir(_ <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	return r.mutate(func() fuse.Status {
		_, st := r.create(in.NodeId, name, syscall.S_IFDIR|in.Mode&0o7777, in.Owner, out)
		return st
	})
}

func (r *rawFS) Symlink(_ <-chan struct{}, h *fuse.InHeader, pointedTo, linkName string, out *fuse.EntryOut) fuse.Status {
	return r.mutate(func() fuse.Status {
		n, st := r.create(h.NodeId, linkName, syscall.S_IFLNK|0o777, h.Owner, out)
		if st == fuse.OK {
			n.target = pointedTo
			r.fs.entry(n, out)
		}
		return st
	})
}

func (r *rawFS) Readlink(_ <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	var target []byte
	st := r.read(func() fuse.Status {
		n := r.fs.node(h.NodeId)
		if n == nil || n.mode&syscall.S_IFMT != syscall.S_IFLNK {
			return fuse.EINVAL
		}
		target = []byte(n.target)
		return fuse.OK
	})
	return target, st
}

func (r *rawFS) Link(_ <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	return r.mutate(func() fuse.Status {
		n := r.fs.node(in.Oldnodeid)
		d, st := r.fs.dir(in.NodeId)
		switch {
		case st != fuse.OK:
			return st
		case n == nil:
			return fuse.ENOENT
		case n.isDir():
			return fuse.EPERM
		}
		if _, ok := d.ents[name]; ok {
			return fuse.Status(syscall.EEXIST)
		}
		r.fs.change(entryChange{in.NodeId, name, n.id})
		n.ctime = time.Now()
		r.fs.entry(n, out)
		return fuse.OK
	})
}

// remove unlinks name from parent; dir says which of unlink and rmdir.
func (r *rawFS) remove(parent uint64, name string, dir bool) fuse.Status {
	d, st := r.fs.dir(parent)
	if st != fuse.OK {
		return st
	}
	id, ok := d.ents[name]
	if !ok {
		return fuse.ENOENT
	}
	n := r.fs.nodes[id]
	switch {
	case dir && !n.isDir():
		return fuse.ENOTDIR
	case !dir && n.isDir():
		return fuse.Status(syscall.EISDIR)
	case dir && len(n.ents) > 0:
		return fuse.Status(syscall.ENOTEMPTY)
	}
	r.fs.change(entryChange{parent, name, 0})
	n.ctime = time.Now()
	return fuse.OK
}

func (r *rawFS) Unlink(_ <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	return r.mutate(func() fuse.Status { return r.remove(h.NodeId, name, false) })
}

func (r *rawFS) Rmdir(_ <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	return r.mutate(func() fuse.Status { return r.remove(h.NodeId, name, true) })
}

// Rename flags (linux/fs.h).
const (
	renameNoReplace = 1
	renameExchange  = 2
)

func (r *rawFS) Rename(_ <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	return r.mutate(func() fuse.Status {
		f := r.fs
		od, st := f.dir(in.NodeId)
		if st != fuse.OK {
			return st
		}
		nd, st := f.dir(in.Newdir)
		if st != fuse.OK {
			return st
		}
		if in.Flags&^(renameNoReplace|renameExchange) != 0 || in.Flags == renameNoReplace|renameExchange {
			return fuse.EINVAL
		}
		src, ok := od.ents[oldName]
		if !ok {
			return fuse.ENOENT
		}
		dst, exists := nd.ents[newName]
		switch {
		case in.Flags&renameExchange != 0:
			if !exists {
				return fuse.ENOENT
			}
			f.change(entryChange{in.NodeId, oldName, dst}, entryChange{in.Newdir, newName, src})
			return fuse.OK
		case exists && in.Flags&renameNoReplace != 0:
			return fuse.Status(syscall.EEXIST)
		case exists && dst == src:
			return fuse.OK
		case exists && f.nodes[src].isDir() && !f.nodes[dst].isDir():
			return fuse.ENOTDIR
		case exists && !f.nodes[src].isDir() && f.nodes[dst].isDir():
			return fuse.Status(syscall.EISDIR)
		case exists && len(f.nodes[dst].ents) > 0:
			return fuse.Status(syscall.ENOTEMPTY)
		}
		f.change(entryChange{in.NodeId, oldName, 0}, entryChange{in.Newdir, newName, src})
		f.nodes[src].ctime = time.Now()
		return fuse.OK
	})
}

// openFile registers a handle with the open flags (for O_APPEND) and
// asks the kernel for direct I/O: no page cache that could outlive a cut.
func (f *FS) openFile(n *inode, flags uint32, out *fuse.OpenOut) fuse.Status {
	if n.isDir() && flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		return fuse.Status(syscall.EISDIR)
	}
	if flags&syscall.O_TRUNC != 0 && n.isReg() && flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		n.truncate(0)
	}
	f.nextFh++
	f.handles[f.nextFh] = flags
	out.Fh, out.OpenFlags = f.nextFh, fuse.FOPEN_DIRECT_IO
	return fuse.OK
}

func (r *rawFS) Create(_ <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	return r.mutate(func() fuse.Status {
		d, st := r.fs.dir(in.NodeId)
		if st != fuse.OK {
			return st
		}
		if id, ok := d.ents[name]; ok {
			if in.Flags&syscall.O_EXCL != 0 {
				return fuse.Status(syscall.EEXIST)
			}
			n := r.fs.nodes[id]
			r.fs.entry(n, &out.EntryOut)
			return r.fs.openFile(n, in.Flags, &out.OpenOut)
		}
		n, st := r.create(in.NodeId, name, syscall.S_IFREG|in.Mode&0o7777, in.Owner, &out.EntryOut)
		if st != fuse.OK {
			return st
		}
		return r.fs.openFile(n, in.Flags, &out.OpenOut)
	})
}

func (r *rawFS) Open(_ <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	run := r.read
	if in.Flags&syscall.O_TRUNC != 0 {
		run = r.mutate
	}
	return run(func() fuse.Status {
		n := r.fs.node(in.NodeId)
		if n == nil {
			return fuse.ENOENT
		}
		return r.fs.openFile(n, in.Flags, out)
	})
}

func (r *rawFS) Read(_ <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	var b []byte
	st := r.read(func() fuse.Status {
		n := r.fs.node(in.NodeId)
		if n == nil {
			return fuse.ENOENT
		}
		if off := int64(in.Offset); off < int64(len(n.data)) {
			b = buf[:copy(buf[:min(int64(len(buf)), int64(in.Size))], n.data[off:])]
		}
		return fuse.OK
	})
	return fuse.ReadResultData(b), st
}

func (r *rawFS) Write(_ <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	st := r.mutate(func() fuse.Status {
		n := r.fs.node(in.NodeId)
		if n == nil {
			return fuse.ENOENT
		}
		off := int64(in.Offset)
		if r.fs.handles[in.Fh]&syscall.O_APPEND != 0 {
			off = int64(len(n.data))
		}
		end := off + int64(len(data))
		if end > int64(len(n.data)) {
			n.truncate(end)
		}
		copy(n.data[off:], data)
		for p := off / PageSize; p <= (end-1)/PageSize && len(data) > 0; p++ {
			n.markDirty(p)
		}
		n.mtime = time.Now()
		n.ctime = n.mtime
		return fuse.OK
	})
	if st != fuse.OK {
		return 0, st
	}
	return uint32(len(data)), st
}

func (r *rawFS) Release(_ <-chan struct{}, in *fuse.ReleaseIn) {
	r.fs.mu.Lock()
	defer r.fs.mu.Unlock()
	delete(r.fs.handles, in.Fh)
}

func (r *rawFS) Flush(_ <-chan struct{}, _ *fuse.FlushIn) fuse.Status {
	return r.read(func() fuse.Status { return fuse.OK })
}

// Fsync makes the file's data and size durable; its name is not.
func (r *rawFS) Fsync(_ <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	return r.mutate(func() fuse.Status {
		n := r.fs.node(in.NodeId)
		if n == nil {
			return fuse.ENOENT
		}
		r.fs.syncData(n)
		return fuse.OK
	})
}

// FsyncDir commits the pending name operations that change the directory.
func (r *rawFS) FsyncDir(_ <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	return r.mutate(func() fuse.Status {
		if _, st := r.fs.dir(in.NodeId); st != fuse.OK {
			return st
		}
		r.fs.syncDir(in.NodeId)
		return fuse.OK
	})
}

func (r *rawFS) OpenDir(_ <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	return r.read(func() fuse.Status {
		_, st := r.fs.dir(in.NodeId)
		return st
	})
}

// ReadDir lists ".", ".." and the entries in name order; the offset is
// the index in that list.
func (r *rawFS) ReadDir(_ <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return r.read(func() fuse.Status {
		d, st := r.fs.dir(in.NodeId)
		if st != fuse.OK {
			return st
		}
		ents := []fuse.DirEntry{{Name: ".", Mode: syscall.S_IFDIR, Ino: d.id}, {Name: "..", Mode: syscall.S_IFDIR}}
		for _, name := range sortedNames(d.ents) {
			n := r.fs.nodes[d.ents[name]]
			ents = append(ents, fuse.DirEntry{Name: name, Mode: n.mode, Ino: n.id})
		}
		for i := int(in.Offset); i < len(ents); i++ {
			ents[i].Off = uint64(i + 1)
			if !out.AddDirEntry(ents[i]) {
				break
			}
		}
		return fuse.OK
	})
}

func (r *rawFS) ReleaseDir(*fuse.ReleaseIn) {}

func (r *rawFS) StatFs(_ <-chan struct{}, _ *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	return r.read(func() fuse.Status {
		out.Bsize, out.Frsize, out.NameLen = PageSize, PageSize, 255
		out.Blocks, out.Bfree, out.Bavail = 1<<20, 1<<20, 1<<20
		out.Files, out.Ffree = 1<<20, 1<<20
		return fuse.OK
	})
}
