package git

import (
	"compress/zlib"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	sfs "github.com/serverfs/serverfs/fs"
)

// maxBlobBytes bounds one file a commit stores (GitHub's own per-file
// limit): a larger one is refused from its size, before it is read. What
// is stored is streamed (writeBlob), never held whole.
const maxBlobBytes = 100 << 20

// errContentChanged is writeBlob's answer when the source did not hold
// the size it was said to.
var errContentChanged = errors.New("the content changed while it was read")

// blobSize is the size of blob h from its object header (a loose object's
// "blob <size>" prefix, a packed entry's header, a delta's result size),
// without inflating its content (headerSize); go-git answers for what
// headerSize does not read (a version 1 pack index).
func (r *Repo) blobSize(h plumbing.Hash) (int64, error) {
	if h == emptyBlob {
		return 0, nil
	}
	n, err := r.headerSize(h)
	if err == errNoHeader {
		n, err = r.storage.EncodedObjectSize(h)
	}
	if err != nil {
		return 0, fmt.Errorf("reading the size of blob %s: %w", h, err)
	}
	return n, nil
}

// readBlob reads blob h, whose header said size bytes (bounded by the
// caller), into memory.
func (r *Repo) readBlob(h plumbing.Hash, size int64) ([]byte, error) {
	if h == emptyBlob {
		return []byte{}, nil
	}
	o, err := r.storage.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", h, err)
	}
	rd, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	data := make([]byte, size)
	if _, err := io.ReadFull(rd, data); err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", h, err)
	}
	return data, nil
}

// writeBlob stores the size bytes src holds as a loose blob, streaming:
// one pass hashes and compresses them (through also, when not nil, for
// checks of the content) into a temporary in .git/objects, renamed to the
// object (or dropped when the object exists already) unless veto, called
// once everything is read, returns an error. A src that does not end
// after exactly size bytes is errContentChanged.
func (r *Repo) writeBlob(src io.Reader, size int64, also io.Writer, veto func() error) (plumbing.Hash, error) {
	alias := r.w.Alias()
	if size > maxBlobBytes {
		return plumbing.ZeroHash, repoErr(sfs.CodeWriteLimitExceeded, alias, fmt.Sprintf("a file of %d bytes is larger than a commit stores (%d)", size, maxBlobBytes))
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := ".git/objects/tmp_obj_serverfs_" + hex.EncodeToString(rnd[:])
	f, err := r.ctl.CreateExclusive(tmp, 0o444)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	done := false
	defer func() {
		f.Close()
		if !done {
			r.ctl.Remove(tmp)
		}
	}()
	level := zlib.DefaultCompression
	if size > lazyObjectBytes {
		level = zlib.BestSpeed // the id is the same; a large file is stored in a fraction of the time
	}
	zw, _ := zlib.NewWriterLevel(f, level)
	h := plumbing.NewHasher(plumbing.BlobObject, size)
	zw.Write([]byte("blob " + strconv.FormatInt(size, 10) + "\x00"))
	sinks := []io.Writer{h, zw}
	if also != nil {
		sinks = append(sinks, also)
	}
	buf := make([]byte, 64<<10)
	n, err := io.CopyBuffer(io.MultiWriter(sinks...), io.LimitReader(src, size), buf)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if n != size {
		return plumbing.ZeroHash, errContentChanged
	}
	if k, _ := src.Read(buf[:1]); k > 0 {
		return plumbing.ZeroHash, errContentChanged
	}
	if veto != nil {
		if err := veto(); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	if err := zw.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	sum := h.Sum()
	if r.storage.HasEncodedObject(sum) == nil {
		return sum, nil // the temporary is removed
	}
	if err := f.Sync(); err != nil {
		return plumbing.ZeroHash, err
	}
	hx := sum.String()
	dir := ".git/objects/" + hx[:2]
	if err := r.ctl.MkdirAll(dir, 0o755); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := r.ctl.Rename(tmp, dir+"/"+hx[2:]); err != nil {
		return plumbing.ZeroHash, err
	}
	done = true
	r.ctl.SyncDir(dir)
	return sum, nil
}

// writeObject stores an object of type t as a loose object, as git does:
// zlib-compressed "type size\0content" in objects/xx/yyyy…, written to a
// temporary beside it, fsynced and renamed. An object already present
// (loose or packed) is not written again.
func (r *Repo) writeObject(t plumbing.ObjectType, content []byte) (plumbing.Hash, error) {
	if len(content) > maxBlobBytes {
		return plumbing.ZeroHash, repoErr(sfs.CodeWriteLimitExceeded, r.w.Alias(), fmt.Sprintf("a file of %d bytes is larger than a commit stores (%d)", len(content), maxBlobBytes))
	}
	sum := plumbing.ComputeHash(t, content)
	if r.storage.HasEncodedObject(sum) == nil {
		return sum, nil
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	hx := sum.String()
	dir := ".git/objects/" + hx[:2]
	if err := r.ctl.MkdirAll(dir, 0o755); err != nil {
		return plumbing.ZeroHash, err
	}
	tmp := dir + "/tmp_obj_serverfs_" + hex.EncodeToString(rnd[:])
	f, err := r.ctl.CreateExclusive(tmp, 0o444)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	done := false
	defer func() {
		f.Close()
		if !done {
			r.ctl.Remove(tmp)
		}
	}()
	zw := zlib.NewWriter(f)
	zw.Write([]byte(t.String() + " " + strconv.Itoa(len(content)) + "\x00"))
	zw.Write(content)
	if err := zw.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := f.Sync(); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := r.ctl.Rename(tmp, dir+"/"+hx[2:]); err != nil {
		return plumbing.ZeroHash, err
	}
	done = true
	r.ctl.SyncDir(dir)
	return sum, nil
}
