// Package imagefit turns one PNG, JPEG, GIF or WebP file into an image a
// model can see within a byte budget: the file unchanged when it already
// fits, otherwise decoded, scaled to a longest side and re-encoded as PNG
// or JPEG until it fits. It is pure Go and bounded against hostile files:
// the input bytes read, and the pixels decoded (checked from the header,
// before any decoding allocates).
package imagefit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"io/fs"

	"golang.org/x/image/webp"

	"github.com/serverfs/serverfs/internal/errs"
)

// Limits bound one Fit call. A field that is zero or negative takes its
// DefaultLimits value.
type Limits struct {
	// MaxPixels is the most width×height decoded, checked from the
	// header before decoding. It is what bounds a call's memory: the
	// decoded image takes 1 to 8 bytes a pixel (grey to 16-bit RGBA), a
	// progressive JPEG's coefficients up to 12 more; scaling adds at most
	// a quarter of 4 bytes a pixel. Measured: 76 MiB for a 49-megapixel
	// grey PNG.
	MaxPixels int64
	// MaxBytes is the encoded output budget; a Result's Data is never
	// larger.
	MaxBytes int
	// MaxSide is the longest output side in pixels.
	MaxSide int
	// MaxInput is the most input bytes read.
	MaxInput int64
}

// DefaultLimits returns the limits Fit uses for fields left zero: 50
// megapixels decoded, 1 MiB out, 1568 px on the longest side (what vision
// models scale to), 64 MiB in.
func DefaultLimits() Limits {
	return Limits{MaxPixels: 50_000_000, MaxBytes: 1 << 20, MaxSide: 1568, MaxInput: 64 << 20}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxPixels <= 0 {
		l.MaxPixels = d.MaxPixels
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxSide <= 0 {
		l.MaxSide = d.MaxSide
	}
	if l.MaxInput <= 0 {
		l.MaxInput = d.MaxInput
	}
	return l
}

// Format tells an image's format from its first bytes: "png", "jpeg",
// "gif", "webp", or "" for anything else. SVG is text and not handled here.
func Format(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return "jpeg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "gif"
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return "webp"
	}
	return ""
}

// Result is an image fitted to Limits.
type Result struct {
	// Data is the encoded image, len(Data) <= MaxBytes.
	Data []byte
	// MIMEType is what Data is: "image/png" or "image/jpeg" when
	// re-encoded; "image/gif" or "image/webp" too when the file is
	// returned unchanged.
	MIMEType string
	// Format is the source's format ("png", "jpeg", "gif", "webp").
	Format string
	// Width and Height are the source's dimensions (a GIF's logical
	// screen).
	Width, Height int
	// OutWidth and OutHeight are Data's dimensions.
	OutWidth, OutHeight int
	// Frames is a GIF's frame count (counted without decoding them), 1
	// for other formats. A GIF returned unchanged keeps all its frames;
	// a re-encoded one shows the first.
	Frames int
}

// Fit reads one image from r and returns it with its longest side at most
// MaxSide and its encoding at most MaxBytes: the original bytes when they
// already fit, otherwise scaled and re-encoded (see encode.go). A file that
// fits is still decoded once, so that a corrupt one is refused here rather
// than by the client. Errors: DOCUMENT_TOO_LARGE (input, pixels, or a
// budget too small for any useful image), DOCUMENT_CORRUPT,
// UNSUPPORTED_FILE_TYPE, r's own read error, or ctx.Err().
func Fit(ctx context.Context, r io.Reader, lim Limits) (*Result, error) {
	lim = lim.withDefaults()
	data, err := readAll(ctx, r, lim.MaxInput)
	if err != nil {
		return nil, err
	}
	format := Format(data)
	if format == "" {
		return nil, errs.New(errs.UnsupportedFileType, "not a PNG, JPEG, GIF or WebP image")
	}
	cfg, err := decodeConfig(format, data)
	if err != nil {
		return nil, corrupt(format, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, errs.New(errs.DocumentCorrupt, fmt.Sprintf("the %s image is %d×%d pixels", format, cfg.Width, cfg.Height))
	}
	if px := int64(cfg.Width) * int64(cfg.Height); px > lim.MaxPixels {
		return nil, errs.New(errs.DocumentTooLarge, fmt.Sprintf("the image is %d×%d pixels, more than the %d pixels read", cfg.Width, cfg.Height, lim.MaxPixels))
	}
	if format == "webp" && webpAnimated(data) {
		return nil, errs.New(errs.UnsupportedFileType, "an animated WebP image is not read")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	src, err := decode(format, data)
	if err != nil {
		return nil, corrupt(format, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &Result{Format: format, Width: cfg.Width, Height: cfg.Height, Frames: 1}
	if format == "gif" {
		res.Frames = gifFrames(data)
	}
	if cfg.Width <= lim.MaxSide && cfg.Height <= lim.MaxSide && len(data) <= lim.MaxBytes {
		res.Data, res.MIMEType = data, "image/"+format
		res.OutWidth, res.OutHeight = cfg.Width, cfg.Height
		return res, nil
	}
	return fitImage(ctx, src, res, lim, scaler)
}

// readAll reads r up to max bytes, answering DOCUMENT_TOO_LARGE rather
// than reading on past it, and ctx.Err() once ctx is done. A reader that
// knows its size (an *os.File, a *bytes.Reader) is refused before any
// read when too large, and read into one allocation otherwise.
func readAll(ctx context.Context, r io.Reader, max int64) ([]byte, error) {
	tooLarge := errs.New(errs.DocumentTooLarge, fmt.Sprintf("the image file is larger than the %d bytes read", max))
	var buf bytes.Buffer
	if n := sizeHint(r); n > max {
		return nil, tooLarge
	} else if n >= 0 {
		buf.Grow(int(n) + bytes.MinRead) // MinRead: reading EOF needs room too
	}
	if _, err := buf.ReadFrom(io.LimitReader(ctxReader{ctx, r}, max+1)); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if int64(buf.Len()) > max {
		return nil, tooLarge
	}
	return buf.Bytes(), nil
}

// sizeHint returns the bytes left in r when r can tell, -1 otherwise.
func sizeHint(r io.Reader) int64 {
	switch r := r.(type) {
	case interface{ Len() int }:
		return int64(r.Len())
	case interface{ Stat() (fs.FileInfo, error) }:
		if fi, err := r.Stat(); err == nil && fi.Mode().IsRegular() {
			return fi.Size()
		}
	}
	return -1
}

// ctxReader stops a slow reader between reads once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// decodeConfig and decode call each format's decoder directly, so that
// what is read never depends on which decoders some other package has
// registered with package image.
func decodeConfig(format string, data []byte) (image.Config, error) {
	r := bytes.NewReader(data)
	switch format {
	case "png":
		return png.DecodeConfig(r)
	case "jpeg":
		return jpeg.DecodeConfig(r)
	case "gif":
		return gif.DecodeConfig(r)
	default:
		return webp.DecodeConfig(r)
	}
}

// decode decodes the image, a GIF's first frame only: gif.DecodeAll would
// decode every frame (a small file can hold thousands).
func decode(format string, data []byte) (image.Image, error) {
	r := bytes.NewReader(data)
	switch format {
	case "png":
		return png.Decode(r)
	case "jpeg":
		return jpeg.Decode(r)
	case "gif":
		return gif.Decode(r)
	default:
		return webp.Decode(r)
	}
}

func corrupt(format string, err error) error {
	msg := "the " + format + " image cannot be decoded"
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		msg = "the " + format + " image is truncated"
	}
	return errs.New(errs.DocumentCorrupt, msg).Wrap(err)
}

// webpAnimated reports a VP8X header's animation flag: x/image/webp reads
// no animation, and would call the file corrupt.
func webpAnimated(data []byte) bool {
	const animationBit = 1 << 1
	return len(data) >= 21 && string(data[12:16]) == "VP8X" && data[20]&animationBit != 0
}
