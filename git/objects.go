package git

import (
	"compress/zlib"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	sfs "github.com/serverfs/serverfs/fs"
)

// maxBlobBytes bounds one file a commit stores.
const maxBlobBytes = 2 << 30

// writeObject stores an object of type t as a loose object, as git does:
// zlib-compressed "type size\0content" in objects/xx/yyyy…, written to a
// temporary beside it, fsynced and renamed. An object already present is
// not written again.
func (r *Repo) writeObject(t plumbing.ObjectType, size int64, content io.Reader) (plumbing.Hash, error) {
	if size > maxBlobBytes {
		return plumbing.ZeroHash, repoErr(sfs.CodeWriteLimitExceeded, r.w.Alias(), fmt.Sprintf("a file of %d bytes is larger than a commit stores (%d)", size, maxBlobBytes))
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	if err := r.ctl.MkdirAll(".git/objects", 0o755); err != nil {
		return plumbing.ZeroHash, err
	}
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
	h := plumbing.NewHasher(t, size)
	zw := zlib.NewWriter(f)
	if _, err := zw.Write([]byte(t.String() + " " + strconv.FormatInt(size, 10) + "\x00")); err != nil {
		return plumbing.ZeroHash, err
	}
	n, err := io.Copy(io.MultiWriter(zw, h), content)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if n != size {
		return plumbing.ZeroHash, repoErr(sfs.CodeRevisionMismatch, r.w.Alias(), "a file changed size while it was being committed; try again")
	}
	if err := zw.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	sum := h.Sum()
	if r.storage.HasEncodedObject(sum) == nil {
		return sum, nil // the deferred cleanup removes the temporary
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
