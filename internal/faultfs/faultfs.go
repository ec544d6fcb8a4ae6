// Package faultfs is a FUSE file system for power-cut tests, after
// Jepsen's LazyFS: it serves a directory tree and keeps every change that
// has not been made durable in a volatile layer, which PowerCut drops as
// a power loss would, tearing unsynced writes at page granularity and
// applying a random subset of unsynced name changes. Tests only: the
// server never links it.
//
// # The durability model (strict POSIX)
//
// Nothing is durable without an explicit fsync:
//   - A regular file's data and size become durable when the file is
//     fsynced (fsync and fdatasync alike). Until then, every 4 KiB page
//     written (or cut off by a truncate) is dirty; at a cut each dirty page
//     independently reached the disk or did not, and the size is
//     independently the durable one or the current one (a grown file may
//     end in zeros).
//   - A name operation (create, mknod, mkdir, symlink, link, unlink,
//     rmdir, rename) becomes durable when a directory it changes is
//     fsynced: fsync of a directory commits every pending name operation
//     that touches it, whole (a rename between two directories is one
//     operation, committed by fsync of either; a journaled file system
//     commits it so). Fsync of a file commits no name, not even its own:
//     a new file needs its directory fsynced too.
//   - At a cut, each pending name operation independently happened or
//     did not (a disk without barriers reorders), applied in the order
//     they were made. What no durable name reaches is gone.
//   - Metadata (mode, owner, times) and a symlink's target are durable
//     with the inode; they are not modelled as volatile.
//
// Reads see the current (volatile) state, as the page cache does; the
// kernel is told to cache nothing (zero timeouts, direct I/O), so after a
// cut every read sees what survived.
//
// The whole tree is held in memory (test trees are small). The backing
// directory is read at Mount and rewritten to the durable state at every
// PowerCut, so that it shows what a disk would hold; Unmount is a clean
// shutdown and writes everything, as umount flushes.
package faultfs

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// PageSize is the granularity of torn writes.
const PageSize = 4096

const rootID = fuse.FUSE_ROOT_ID

// inode is one file, directory or symlink. Fields named d* are the
// durable state; the others are the current one.
type inode struct {
	id        uint64
	mode      uint32 // type and permission bits
	uid, gid  uint32
	mtime     time.Time
	ctime     time.Time
	nlink     uint32 // current names (regular files and symlinks)
	data      []byte
	ddata     []byte
	dirty     map[int64]bool // pages changed since the last fsync
	sizeDirty bool
	ents      map[string]uint64
	dents     map[string]uint64
	target    string // symlink
}

func (n *inode) isDir() bool { return n.mode&syscall.S_IFMT == syscall.S_IFDIR }
func (n *inode) isReg() bool { return n.mode&syscall.S_IFMT == syscall.S_IFREG }

// entryChange sets one directory entry: to inode id, or removes it (id 0).
type entryChange struct {
	dir  uint64
	name string
	id   uint64
}

// nameOp is one pending name operation: its entry changes are durable
// together or not at all.
type nameOp []entryChange

// FS is a mounted fault-injecting file system.
type FS struct {
	mu      sync.Mutex
	nodes   map[uint64]*inode
	nextID  uint64
	pending []nameOp
	rng     *rand.Rand
	ops     int  // mutating operations so far
	cutAt   int  // trip after this many operations (0: not armed)
	tripped bool // the armed cut happened: every operation fails
	handles map[uint64]uint32
	nextFh  uint64

	mnt     string
	backing string
	server  *fuse.Server
}

// ErrUnavailable wraps a Mount error that means FUSE cannot be used on
// this machine (no /dev/fuse, or mounting is not permitted).
var ErrUnavailable = errors.New("FUSE is not available")

// Mount serves the tree of backing at dir. seed drives the random choices
// of power cuts (see SetSeed).
func Mount(dir, backing string, seed int64) (*FS, error) {
	if f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	} else {
		f.Close()
	}
	fsys := &FS{nodes: map[uint64]*inode{}, nextID: rootID + 1, rng: rand.New(rand.NewSource(seed)),
		handles: map[uint64]uint32{}, mnt: dir, backing: backing}
	if err := fsys.load(); err != nil {
		return nil, err
	}
	raw := &rawFS{RawFileSystem: fuse.NewDefaultRawFileSystem(), fs: fsys}
	srv, err := fuse.NewServer(raw, dir, &fuse.MountOptions{
		FsName: "faultfs", Name: "faultfs", DirectMount: true,
		DisableReadDirPlus: true, DisableXAttrs: true, MaxBackground: 16,
	})
	if err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, os.ErrPermission) {
			err = fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		return nil, err
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		srv.Unmount()
		return nil, err
	}
	fsys.server = srv
	return fsys, nil
}

// Unmount writes the current state to the backing directory (a clean
// shutdown flushes everything) and unmounts. Nothing may be open on it;
// if something still is (a test that failed half-way), the mount is
// detached lazily rather than left behind, and the error returned.
func (fsys *FS) Unmount() error {
	err := fsys.server.Unmount()
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	if err != nil {
		syscall.Unmount(fsys.mnt, syscall.MNT_DETACH)
		return err
	}
	return fsys.store(false)
}

// SetSeed makes the random choices of the next power cuts follow seed.
func (fsys *FS) SetSeed(seed int64) {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	fsys.rng = rand.New(rand.NewSource(seed))
}

// Ops returns how many mutating operations (writes, truncates, name
// operations, fsyncs) the file system has served.
func (fsys *FS) Ops() int {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	return fsys.ops
}

// CutAfter arms a power cut after n more mutating operations: the n-th
// completes, and from then on every operation fails with EIO until
// PowerCut.
func (fsys *FS) CutAfter(n int) {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	fsys.cutAt = fsys.ops + n
}

// Tripped reports whether an armed cut has happened.
func (fsys *FS) Tripped() bool {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	return fsys.tripped
}

// Sync makes everything durable, as sync(2) does.
func (fsys *FS) Sync() {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	for _, n := range fsys.nodes {
		fsys.syncData(n)
	}
	for _, op := range fsys.pending {
		fsys.commit(op)
	}
	fsys.pending = nil
}

// PowerCut loses power: it keeps what is durable plus a random part of
// what is not (torn pages, a subset of the pending name operations),
// drops the rest, writes the result to the backing directory and serves
// it from now on. It disarms the cut.
func (fsys *FS) PowerCut() error {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	for _, id := range fsys.sortedIDs() {
		if n := fsys.nodes[id]; n.isReg() {
			fsys.tearData(n)
		}
	}
	for _, op := range fsys.pending {
		if fsys.rng.Intn(2) == 0 {
			fsys.commit(op)
		}
	}
	fsys.pending = nil
	// Keep what a durable name reaches; it becomes the current state.
	live := map[uint64]bool{}
	var walk func(id uint64)
	walk = func(id uint64) {
		if live[id] {
			return
		}
		live[id] = true
		if n := fsys.nodes[id]; n.isDir() {
			for _, c := range n.dents {
				walk(c)
			}
		}
	}
	walk(rootID)
	for id, n := range fsys.nodes {
		if !live[id] {
			delete(fsys.nodes, id)
			continue
		}
		n.data = append([]byte(nil), n.ddata...)
		n.dirty, n.sizeDirty = nil, false
		if n.isDir() {
			n.ents = cloneEnts(n.dents)
		}
		n.nlink = 0
	}
	for _, n := range fsys.nodes {
		for _, c := range n.ents {
			if n.isDir() {
				fsys.nodes[c].nlink++
			}
		}
	}
	fsys.cutAt, fsys.tripped = 0, false
	fsys.handles = map[uint64]uint32{}
	return fsys.store(true)
}

func (fsys *FS) sortedIDs() []uint64 {
	ids := make([]uint64, 0, len(fsys.nodes))
	for id := range fsys.nodes {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// tearData makes durable a random part of a file's unsynced data: the
// durable or the current size, and each dirty page or not.
func (fsys *FS) tearData(n *inode) {
	if len(n.dirty) == 0 && !n.sizeDirty {
		return
	}
	size := len(n.ddata)
	if n.sizeDirty && fsys.rng.Intn(2) == 0 {
		size = len(n.data)
	}
	d := make([]byte, size)
	copy(d, n.ddata)
	pages := make([]int64, 0, len(n.dirty))
	for p := range n.dirty {
		pages = append(pages, p)
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i] < pages[j] })
	for _, p := range pages {
		if fsys.rng.Intn(2) != 0 {
			continue
		}
		for i := p * PageSize; i < (p+1)*PageSize && i < int64(size); i++ {
			if i < int64(len(n.data)) {
				d[i] = n.data[i]
			} else {
				d[i] = 0
			}
		}
	}
	n.ddata = d
}

// syncData makes a file's current data durable.
func (fsys *FS) syncData(n *inode) {
	if n.isReg() {
		n.ddata = append([]byte(nil), n.data...)
		n.dirty, n.sizeDirty = nil, false
	}
}

// syncDir commits the pending name operations that change directory id.
func (fsys *FS) syncDir(id uint64) {
	kept := fsys.pending[:0]
	for _, op := range fsys.pending {
		touches := false
		for _, c := range op {
			touches = touches || c.dir == id
		}
		if touches {
			fsys.commit(op)
		} else {
			kept = append(kept, op)
		}
	}
	fsys.pending = kept
}

// commit applies a name operation to the durable state.
func (fsys *FS) commit(op nameOp) {
	for _, c := range op {
		d := fsys.nodes[c.dir]
		if d == nil {
			continue
		}
		if c.id == 0 {
			delete(d.dents, c.name)
		} else {
			d.dents[c.name] = c.id
		}
	}
}

// change applies a name operation to the current state and records it
// as pending.
func (fsys *FS) change(op ...entryChange) {
	for _, c := range op {
		d := fsys.nodes[c.dir]
		if old, ok := d.ents[c.name]; ok {
			fsys.nodes[old].nlink--
		}
		if c.id == 0 {
			delete(d.ents, c.name)
		} else {
			d.ents[c.name] = c.id
			fsys.nodes[c.id].nlink++
		}
	}
	fsys.pending = append(fsys.pending, op)
}

func sortedNames(m map[string]uint64) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func cloneEnts(m map[string]uint64) map[string]uint64 {
	c := make(map[string]uint64, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// newNode adds an inode (not yet named anywhere).
func (fsys *FS) newNode(mode uint32, owner fuse.Owner) *inode {
	now := time.Now()
	n := &inode{id: fsys.nextID, mode: mode, uid: owner.Uid, gid: owner.Gid, mtime: now, ctime: now}
	fsys.nextID++
	if n.isDir() {
		n.ents, n.dents = map[string]uint64{}, map[string]uint64{}
	}
	fsys.nodes[n.id] = n
	return n
}

// load reads the backing directory as the durable and current state.
func (fsys *FS) load() error {
	st, err := os.Stat(fsys.backing)
	if err != nil {
		return err
	}
	root := &inode{id: rootID, mode: syscall.S_IFDIR | uint32(st.Mode().Perm()), mtime: st.ModTime(), ctime: st.ModTime(),
		ents: map[string]uint64{}, dents: map[string]uint64{}}
	fsys.nodes[rootID] = root
	seen := map[[2]uint64]uint64{}
	return fsys.loadDir(root, fsys.backing, seen)
}

func (fsys *FS) loadDir(d *inode, path string, seen map[[2]uint64]uint64) error {
	ents, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	for _, e := range ents {
		p := filepath.Join(path, e.Name())
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return err
		}
		key := [2]uint64{st.Dev, st.Ino}
		id, ok := seen[key]
		if !ok {
			n := fsys.newNode(st.Mode, fuse.Owner{Uid: st.Uid, Gid: st.Gid})
			n.mtime = time.Unix(st.Mtim.Sec, st.Mtim.Nsec)
			n.ctime = time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
			id = n.id
			seen[key] = id
			switch st.Mode & syscall.S_IFMT {
			case syscall.S_IFREG:
				if n.data, err = os.ReadFile(p); err != nil {
					return err
				}
				n.ddata = append([]byte(nil), n.data...)
			case syscall.S_IFLNK:
				if n.target, err = os.Readlink(p); err != nil {
					return err
				}
			case syscall.S_IFDIR:
				if err := fsys.loadDir(n, p, seen); err != nil {
					return err
				}
			}
		}
		d.ents[e.Name()], d.dents[e.Name()] = id, id
		fsys.nodes[id].nlink++
	}
	return nil
}

// store replaces the backing directory's content with the durable state
// (durable) or the current one.
func (fsys *FS) store(durable bool) error {
	old, err := os.ReadDir(fsys.backing)
	if err != nil {
		return err
	}
	for _, e := range old {
		if err := os.RemoveAll(filepath.Join(fsys.backing, e.Name())); err != nil {
			return err
		}
	}
	return fsys.storeDir(fsys.nodes[rootID], fsys.backing, durable, map[uint64]string{})
}

func (fsys *FS) storeDir(d *inode, path string, durable bool, written map[uint64]string) error {
	ents := d.ents
	if durable {
		ents = d.dents
	}
	for _, name := range sortedNames(ents) {
		n, p := fsys.nodes[ents[name]], filepath.Join(path, name)
		if prev, ok := written[n.id]; ok && !n.isDir() {
			if err := os.Link(prev, p); err != nil {
				return err
			}
			continue
		}
		written[n.id] = p
		var err error
		switch {
		case n.isDir():
			if err = os.Mkdir(p, os.FileMode(n.mode&0o777)); err == nil {
				err = fsys.storeDir(n, p, durable, written)
			}
		case n.isReg():
			data := n.data
			if durable {
				data = n.ddata
			}
			err = os.WriteFile(p, data, 0o600)
		default:
			err = os.Symlink(n.target, p)
		}
		if err == nil && !(n.mode&syscall.S_IFMT == syscall.S_IFLNK) {
			err = os.Chmod(p, os.FileMode(n.mode&0o777))
		}
		if err != nil {
			return err
		}
	}
	return nil
}
