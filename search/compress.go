package search

import (
	"errors"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// errCorrupt marks a compressed file that does not decompress.
var errCorrupt = errors.New("corrupt compressed file")

// maxZstdWindow bounds the memory a zstd frame may ask for.
const maxZstdWindow = 32 << 20

// CompressionOf tells from the file name whether it is a rotated log to
// decompress: "gz" for ".gz", "zst" for ".zst", "" otherwise.
func CompressionOf(name string) string {
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, ".gz"):
		return "gz"
	case strings.HasSuffix(lower, ".zst"):
		return "zst"
	}
	return ""
}

// NewDecompressor returns a reader of the decompressed text of r for the
// kind "gz" or "zst". The caller must Close it. Memory is bounded: gzip
// needs its fixed window, zstd frames asking for a window over 32 MiB are
// refused.
func NewDecompressor(kind string, r io.Reader) (io.ReadCloser, error) {
	switch kind {
	case "gz":
		return gzip.NewReader(r)
	case "zst":
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxZstdWindow))
		if err != nil {
			return nil, err
		}
		return zstdCloser{d}, nil
	}
	return nil, errors.New("unknown compression " + kind)
}

type zstdCloser struct{ *zstd.Decoder }

func (z zstdCloser) Close() error { z.Decoder.Close(); return nil }

// capReader ends a decompressed stream at the cap as if it ended there,
// and remembers that it did: a zip bomb stops at the cap, and everything
// before it is searched.
type capReader struct {
	r      io.Reader
	left   int64
	capped bool
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more tells a stream of exactly the cap from a bigger one.
		var one [1]byte
		if n, _ := io.ReadFull(c.r, one[:]); n > 0 {
			c.capped = true
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// CapReader returns a reader of at most max bytes of r that ends there as
// if r did: the decompressed-bytes cap for rotated logs.
func CapReader(r io.Reader, max int64) io.Reader { return &capReader{r: r, left: max} }
