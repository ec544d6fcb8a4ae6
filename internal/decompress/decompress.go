// Package decompress reads rotated logs (.gz, .zst) for search_text,
// ChatGPT's search and the read tools: pooled gzip and zstd decoders, a
// process-wide bound on zstd windows in use, and the cap on decompressed
// bytes that stops a zip bomb. Its one dependency is fs's error type (a
// window too large is READ_LIMIT_EXCEEDED).
package decompress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/serverfs/serverfs/internal/errs"
)

// MaxZstdWindow bounds the window a zstd frame may ask for, which is what
// its decoder holds in memory (plus about 0.5 MiB): 8 MiB is the window of
// zstd -19, so every level from 1 to 19 decodes; --long and --ultra frames
// ask for more and are refused (READ_LIMIT_EXCEEDED when read, skipped as
// window_too_large by search).
const MaxZstdWindow = 8 << 20

// zstdDecoders are idle decoders, reused so that a search does not
// allocate a window per file; zstdSlots bounds the decoders in use in the
// whole process to the CPUs (decoding is CPU-bound: more would only hold
// more windows), so concurrent searches and reads stay within
// zstdSlots × (MaxZstdWindow + 0.5 MiB) of decoder memory.
var (
	zstdDecoders = sync.Pool{New: func() any {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(MaxZstdWindow))
		if err != nil {
			panic(err) // constant options
		}
		return d
	}}
	zstdSlots = make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))

	gzipReaders sync.Pool // *gzip.Reader
)

// Kind tells from the file name whether it is a rotated log to
// decompress: "gz" for ".gz", "zst" for ".zst", "" otherwise.
func Kind(name string) string {
	// Called for every file a search meets: no lower-cased copy.
	hasSuffixFold := func(suffix string) bool {
		return len(name) >= len(suffix) && strings.EqualFold(name[len(name)-len(suffix):], suffix)
	}
	switch {
	case hasSuffixFold(".gz"):
		return "gz"
	case hasSuffixFold(".zst"):
		return "zst"
	}
	return ""
}

// NewReader returns a reader of the decompressed text of r for the
// kind "gz" or "zst". The caller must Close it, which returns the decoder
// for reuse. Memory is bounded: gzip needs its 32 KiB window; a zstd
// decoder holds at most MaxZstdWindow (a frame asking for more fails its
// first Read with READ_LIMIT_EXCEEDED), and when all the process's zstd
// decoders are in use NewReader waits for one until ctx ends. A
// caller must therefore never hold one zstd reader open while it opens
// another (close the first): concurrent callers doing so could wait for
// each other until their deadlines.
func NewReader(ctx context.Context, kind string, r io.Reader) (io.ReadCloser, error) {
	switch kind {
	case "gz":
		z, _ := gzipReaders.Get().(*gzip.Reader)
		if z == nil {
			z = new(gzip.Reader)
		}
		if err := z.Reset(r); err != nil {
			gzipReaders.Put(z)
			return nil, err
		}
		return &gzipReader{z: z}, nil
	case "zst":
		select {
		case zstdSlots <- struct{}{}:
		default:
			select {
			case zstdSlots <- struct{}{}:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		d := zstdDecoders.Get().(*zstd.Decoder)
		if err := d.Reset(r); err != nil {
			zstdDecoders.Put(d)
			<-zstdSlots
			return nil, err
		}
		return &zstdReader{d: d}, nil
	}
	return nil, errors.New("unknown compression " + kind)
}

type gzipReader struct{ z *gzip.Reader }

// eofReader is an empty stream.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

func (g *gzipReader) Read(p []byte) (int, error) {
	if g.z == nil {
		return 0, errors.New("read after close")
	}
	return g.z.Read(p)
}

func (g *gzipReader) Close() error {
	if g.z != nil {
		g.z.Reset(eofReader{}) // drop the file, keep the buffers
		gzipReaders.Put(g.z)
		g.z = nil
	}
	return nil
}

type zstdReader struct{ d *zstd.Decoder }

func (z *zstdReader) Read(p []byte) (int, error) {
	if z.d == nil {
		return 0, errors.New("read after close")
	}
	n, err := z.d.Read(p)
	if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		err = errs.New(errs.ReadLimitExceeded, fmt.Sprintf(
			"is zstd data whose frame needs a window over the %d MiB this server decodes (compressed with --long or --ultra); recompress it at a level up to 19 without --long", MaxZstdWindow>>20)).Wrap(err)
	}
	return n, err
}

func (z *zstdReader) Close() error {
	if z.d != nil {
		z.d.Reset(nil) // drop the file, keep the buffers
		zstdDecoders.Put(z.d)
		z.d = nil
		<-zstdSlots
	}
	return nil
}

// WindowTooLarge reports whether err is a zstd frame's window over
// MaxZstdWindow.
func WindowTooLarge(err error) bool {
	var e *errs.Error
	return errors.As(err, &e) && e.Code == errs.ReadLimitExceeded
}

// CapReader ends a decompressed stream at the cap as if it ended there,
// and remembers that it did: a zip bomb stops at the cap, and everything
// before it is read.
type CapReader struct {
	r      io.Reader
	left   int64
	capped bool
}

// Cap returns a reader of at most max bytes of r that ends there as if r
// did: the decompressed-bytes cap for rotated logs.
func Cap(r io.Reader, max int64) *CapReader { return &CapReader{r: r, left: max} }

func (c *CapReader) Read(p []byte) (int, error) {
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

// Capped reports whether the stream went on past the cap (once read to
// its end).
func (c *CapReader) Capped() bool { return c.capped }
