package git

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/serverfs/serverfs/git/internal/odb"
	"github.com/serverfs/serverfs/git/internal/pack"
	"github.com/serverfs/serverfs/internal/errs"
)

// maxBlobBytes bounds one file a commit stores (GitHub's own per-file
// limit): a larger one is refused from its size, before it is read. What
// is stored is streamed (writeBlob), never held whole.
const maxBlobBytes = 100 << 20

// errContentChanged is writeBlob's answer when the source did not hold
// the size it was said to.
var errContentChanged = errors.New("the content changed while it was read")

// blobSize is the size of blob h from its object header (a loose
// object's "blob <size>" prefix, a packed entry's header, a delta's
// result size), without inflating its content.
func (r *Repo) blobSize(h plumbing.Hash) (int64, error) {
	if h == emptyBlob {
		return 0, nil
	}
	n, err := r.objs.HeaderSize(h)
	if err != nil {
		return 0, r.objectErr("blob", h, err)
	}
	return n, nil
}

// objectTooLarge is open's answer for an object over the caller's cap,
// learnt from its header: nothing of its content was inflated.
type objectTooLarge struct{ size int64 }

func (e *objectTooLarge) Error() string { return fmt.Sprintf("an object of %d bytes", e.size) }

// tooLargeSize is the size of the object err refused, ok false for other
// errors.
func tooLargeSize(err error) (int64, bool) {
	var e *objectTooLarge
	if errors.As(err, &e) {
		return e.size, true
	}
	return 0, false
}

// objReader is an object's content being read, its type and size known
// (from its headers): in memory when the request's pack reader had it,
// else a stream.
type objReader struct {
	typ  plumbing.ObjectType
	size int64
	data []byte
	s    *odb.Stream
}

// open is how git/ reads an object, every object, every time: located,
// its size from its header (a loose object's first inflated bytes, a
// packed entry's header, a delta's first bytes) checked against limit
// before anything of its content is inflated (objectTooLarge), then its
// content: from the request's pack reader when packed and small (delta
// bases cached; keep caches the object there too), else streamed (a loose
// object's zlib data, a packed entry's, a delta applied as it is read).
func (r *Repo) open(id plumbing.Hash, limit int64, keep bool) (*objReader, error) {
	loc, err := r.objs.Locate(id)
	if err != nil {
		return nil, err
	}
	var hd odb.Header
	if loc.Packed() {
		if hd, err = r.objs.ReadHeader(loc); err != nil {
			return nil, err
		}
		if hd.Size > limit {
			return nil, &objectTooLarge{hd.Size}
		}
		if r.pack != nil && hd.Size <= pack.MaxObject {
			o, ok, err := r.pack.Load(id, keep)
			if err == nil && ok && int64(len(o.Data)) == hd.Size {
				return &objReader{typ: o.Type, size: hd.Size, data: o.Data}, nil
			}
		}
	}
	s, err := r.objs.Open(loc, hd)
	if err != nil {
		return nil, err
	}
	if s.Size > limit { // a loose object: its header only was read
		s.Close()
		return nil, &objectTooLarge{s.Size}
	}
	return &objReader{typ: s.Type, size: s.Size, s: s}, nil
}

// readAll reads the whole object (the caller bounded its size) and checks
// that its stream ends there.
func (o *objReader) readAll() ([]byte, error) {
	if o.s == nil {
		return o.data, nil
	}
	defer o.s.Close()
	data := make([]byte, o.size)
	if _, err := io.ReadFull(o.s, data); err != nil {
		return nil, odb.DamageErr(err)
	}
	if _, err := o.s.Read(nil); err != io.EOF {
		return nil, odb.DamageErr(err)
	}
	return data, nil
}

// blobReader is a blob's content being read, its size known. Its errors
// are ServerFS errors (objectErr).
type blobReader struct {
	size int64
	rd   io.Reader
	r    *Repo
	id   plumbing.Hash
	s    *odb.Stream
}

func (b *blobReader) Read(p []byte) (int, error) {
	n, err := b.rd.Read(p)
	if err != nil && err != io.EOF {
		err = b.r.objectErr("blob", b.id, odb.DamageErr(err))
	}
	return n, err
}

func (b *blobReader) Close() error {
	if b.s != nil {
		return b.s.Close()
	}
	return nil
}

// readHead reads the first n bytes (at most the size).
func (b *blobReader) readHead(n int64) ([]byte, error) {
	data := make([]byte, min(n, b.size))
	if _, err := io.ReadFull(b, data); err != nil {
		return nil, b.r.objectErr("blob", b.id, odb.DamageErr(err))
	}
	return data, nil
}

// readAll reads the whole blob (the caller bounded its size) and checks
// that it ends there.
func (b *blobReader) readAll() ([]byte, error) {
	data, err := b.readHead(b.size)
	if err != nil {
		return nil, err
	}
	if _, err := b.Read(nil); err != io.EOF {
		return nil, b.r.objectErr("blob", b.id, odb.DamageErr(err))
	}
	return data, nil
}

// openBlob is how git/ reads a blob's content (open: its size from its
// header checked against limit first, objectTooLarge when over, nothing
// inflated). Other errors are ServerFS errors (objectErr).
func (r *Repo) openBlob(id plumbing.Hash, limit int64) (*blobReader, error) {
	if id == emptyBlob {
		return &blobReader{rd: strings.NewReader(""), r: r, id: id}, nil
	}
	o, err := r.open(id, limit, false)
	if _, ok := tooLargeSize(err); ok {
		return nil, err
	}
	if err != nil {
		return nil, r.objectErr("blob", id, err)
	}
	if o.typ != plumbing.BlobObject {
		if o.s != nil {
			o.s.Close()
		}
		return nil, errs.At(errs.RepoUnsupported, r.w.Alias(), "", fmt.Sprintf("has a %s %s where a blob is expected; git fsck reports it", o.typ, id))
	}
	if o.s == nil {
		return &blobReader{size: o.size, rd: bytes.NewReader(o.data), r: r, id: id}, nil
	}
	return &blobReader{size: o.size, rd: o.s, r: r, id: id, s: o.s}, nil
}

// copyBlob copies blob b to w, checking ctx between chunks of
// copyChunk, and checks that it held its size.
func copyBlob(ctx context.Context, w io.Writer, b *blobReader, buf []byte) error {
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		k, err := io.CopyBuffer(w, io.LimitReader(b, copyChunk), buf)
		n += k
		if err != nil {
			return err
		}
		if k < copyChunk {
			break
		}
	}
	if n != b.size {
		return b.r.objectErr("blob", b.id, damaged("%d bytes of %d", n, b.size))
	}
	return nil
}

// readBlob reads blob h whole when its header says it holds at most limit
// bytes; objectTooLarge (nothing read) otherwise.
func (r *Repo) readBlob(h plumbing.Hash, limit int64) ([]byte, error) {
	b, err := r.openBlob(h, limit)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	return b.readAll()
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
		return plumbing.ZeroHash, errs.At(errs.WriteLimitExceeded, alias, "", fmt.Sprintf("a file of %d bytes is larger than a commit stores (%d)", size, maxBlobBytes))
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
	if size > fastBlobBytes {
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
	if r.objs.Has(sum) {
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
	// Unsynced, the object's name may not survive a power cut that the
	// ref pointing at it does.
	if err := r.ctl.SyncDir(dir); err != nil {
		return plumbing.ZeroHash, err
	}
	return sum, nil
}

// writeObject stores an object of type t as a loose object, as git does:
// zlib-compressed "type size\0content" in objects/xx/yyyy…, written to a
// temporary beside it, fsynced and renamed. An object already present
// (loose or packed) is not written again.
func (r *Repo) writeObject(t plumbing.ObjectType, content []byte) (plumbing.Hash, error) {
	if len(content) > maxBlobBytes {
		return plumbing.ZeroHash, errs.At(errs.WriteLimitExceeded, r.w.Alias(), "", fmt.Sprintf("a file of %d bytes is larger than a commit stores (%d)", len(content), maxBlobBytes))
	}
	sum := plumbing.ComputeHash(t, content)
	if r.objs.Has(sum) {
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
	// Unsynced, the object's name may not survive a power cut that the
	// ref pointing at it does.
	if err := r.ctl.SyncDir(dir); err != nil {
		return plumbing.ZeroHash, err
	}
	return sum, nil
}
