package git

import (
	"compress/zlib"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	sfs "github.com/serverfs/serverfs/fs"
)

// maxBlobBytes bounds one file a commit stores (read whole into memory,
// under the lease: GitHub's own per-file limit).
const maxBlobBytes = 100 << 20

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
