package fs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/serverfs/serverfs/internal/errs"
	"hash"
	"io"
	"sync"
)

// RevisionPrefix starts every revision string.
const RevisionPrefix = "sha256:"

// Revision is the revision of a file whose whole content is b:
// "sha256:" and the lower-case hex SHA-256 of the bytes (a UTF-8 byte
// order mark included). Reads return it; every write that changes an
// existing file must name it.
func Revision(b []byte) string {
	sum := sha256.Sum256(b)
	return RevisionPrefix + hex.EncodeToString(sum[:])
}

// validRevision reports whether s has the form Revision produces.
func validRevision(s string) bool {
	if len(s) != len(RevisionPrefix)+64 || s[:len(RevisionPrefix)] != RevisionPrefix {
		return false
	}
	for _, c := range s[len(RevisionPrefix):] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func checkRevisionArg(s string) error {
	if s != "" && !validRevision(s) {
		return errs.New(errs.InvalidArgument, fmt.Sprintf("expected_revision %q is not a revision (\"sha256:\" and 64 lower-case hex digits, as read_text_file and stat_file return)", displayPath(s)))
	}
	return nil
}

// hashBufs reuse hashReader's copy buffers: stat_file and read_text_file
// hash on every call, and io.Copy would allocate 32 KiB each time.
var hashBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// hashReader returns the revision of everything r yields, or "" when r
// yields more than max bytes.
func hashReader(r io.Reader, max int) (string, error) {
	h := sha256.New()
	bp := hashBufs.Get().(*[]byte)
	defer hashBufs.Put(bp)
	n, err := io.CopyBuffer(h, io.LimitReader(r, int64(max)+1), *bp)
	if err != nil {
		return "", err
	}
	if n > int64(max) {
		return "", nil
	}
	return RevisionPrefix + hex.EncodeToString(h.Sum(nil)), nil
}

// hashingReader passes a file's bytes through to its reader while hashing
// them, so that a sequential read and its revision share one pass over
// the file: revision hashes what the reader left unread.
type hashingReader struct {
	r   io.Reader
	h   hash.Hash
	n   int64 // bytes hashed
	max int64 // revision is "" past this many bytes
	eof bool  // r said io.EOF: nothing is left to hash
}

var hashers = sync.Pool{New: func() any { return sha256.New() }}

func newHashingReader(r io.Reader, max int64) *hashingReader {
	h := hashers.Get().(hash.Hash)
	h.Reset()
	return &hashingReader{r: r, h: h, max: max}
}

func (t *hashingReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 && t.n <= t.max {
		t.h.Write(p[:n])
	}
	t.n += int64(n)
	if err == io.EOF {
		t.eof = true
	}
	return n, err
}

// revision reads the rest of r (up to max bytes in all) and returns the
// revision of everything r yielded, or "" when that was more than max.
func (t *hashingReader) revision() (string, error) {
	if !t.eof && t.n <= t.max {
		bp := hashBufs.Get().(*[]byte)
		n, err := io.CopyBuffer(t.h, io.LimitReader(t.r, t.max+1-t.n), *bp)
		hashBufs.Put(bp)
		t.n += n
		if err != nil {
			return "", err
		}
	}
	if t.n > t.max {
		return "", nil
	}
	var sum [sha256.Size]byte
	return RevisionPrefix + hex.EncodeToString(t.h.Sum(sum[:0])), nil
}

// release returns the hash to its pool.
func (t *hashingReader) release() {
	if t.h != nil {
		hashers.Put(t.h)
		t.h = nil
	}
}
