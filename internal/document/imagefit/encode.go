package imagefit

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"

	"golang.org/x/image/draw"

	"github.com/serverfs/serverfs/internal/errs"
)

// scaler is the interpolator of scale's last step, after its box
// reduction. Measured 4000×3000 -> 1568×1176 (BenchmarkScale,
// TestScalerQuality): box+ApproxBiLinear 150 ms, 19 MB, photo PSNR 43 dB
// against direct CatmullRom; box+CatmullRom 283 ms, 95 MB, 45 dB, no less
// aliasing; direct CatmullRom 508 ms, 158 MB; direct ApproxBiLinear 48 ms
// but aliases 4× as much.
var scaler draw.Interpolator = draw.ApproxBiLinear

// jpegQualities are tried in order at each size before halving it.
var jpegQualities = []int{85, 70, 55, 40}

// minSide is the smallest longest side Fit halves down to: an image
// smaller than this shows the model nothing, so a budget that cannot hold
// it is an error rather than a thumbnail.
const minSide = 32

// fitImage scales src to lim.MaxSide, then encodes it as PNG (an image
// with transparency or few colours) or JPEG at falling quality, halving
// its dimensions until the encoding fits lim.MaxBytes.
func fitImage(ctx context.Context, src image.Image, res *Result, lim Limits, interp draw.Interpolator) (*Result, error) {
	w, h := outSize(res.Width, res.Height, lim.MaxSide)
	// A GIF's first frame may cover only part of its logical screen: the
	// rest is transparent.
	transparent := src.Bounds() != image.Rect(0, 0, res.Width, res.Height) || !opaque(src)
	pngFirst := transparent || fewColours(src, 256)
	img := scale(src, res.Width, res.Height, w, h, interp)
	for {
		data, mime, err := encodeWithin(ctx, img, pngFirst, transparent, lim.MaxBytes)
		if err != nil {
			return nil, err
		}
		if data != nil {
			res.Data, res.MIMEType = data, mime
			res.OutWidth, res.OutHeight = w, h
			return res, nil
		}
		if max(w, h)/2 < minSide {
			return nil, errs.New(errs.DocumentTooLarge, fmt.Sprintf("the image does not fit in %d bytes even scaled to %d×%d pixels", lim.MaxBytes, w, h))
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Halving the last try is a box filter: no need to go back to src.
		w, h = max(1, w/2), max(1, h/2)
		img = scale(img, img.Rect.Dx(), img.Rect.Dy(), w, h, interp)
	}
}

// outSize returns w×h scaled so that its longest side is at most maxSide,
// the aspect ratio kept to the nearest pixel.
func outSize(w, h, maxSide int) (int, int) {
	if w <= maxSide && h <= maxSide {
		return w, h
	}
	if w >= h {
		return maxSide, max(1, int((int64(h)*int64(maxSide)+int64(w)/2)/int64(w)))
	}
	return max(1, int((int64(w)*int64(maxSide)+int64(h)/2)/int64(h))), maxSide
}

// opaque reports whether every pixel of m is opaque; the decoders' image
// types all say so themselves.
func opaque(m image.Image) bool {
	o, ok := m.(interface{ Opaque() bool })
	return ok && o.Opaque()
}

// fewColours reports whether m has at most n colours, from a grid of at
// most ~1M samples: it only chooses which encoding to try first, and the
// budget check decides.
func fewColours(m image.Image, n int) bool {
	switch m := m.(type) {
	case *image.Paletted:
		return len(m.Palette) <= n
	case *image.Gray, *image.Gray16:
		return true
	case *image.YCbCr, *image.NYCbCrA:
		return false // lossy: even a flat drawing has ringing around its edges
	}
	b := m.Bounds()
	step := 1
	for int64(b.Dx()/step)*int64(b.Dy()/step) > 1<<20 {
		step++
	}
	seen := make(map[color.RGBA64]struct{}, n+1)
	for y := b.Min.Y; y < b.Max.Y; y += step {
		for x := b.Min.X; x < b.Max.X; x += step {
			r, g, bl, a := m.At(x, y).RGBA()
			seen[color.RGBA64{uint16(r), uint16(g), uint16(bl), uint16(a)}] = struct{}{}
			if len(seen) > n {
				return false
			}
		}
	}
	return true
}

// encodeWithin returns img encoded within budget bytes, or nil when no
// encoding tried fits: PNG first when pngFirst, then JPEG at each of
// jpegQualities (over white when transparent: JPEG has no alpha).
func encodeWithin(ctx context.Context, img *image.RGBA, pngFirst, transparent bool, budget int) ([]byte, string, error) {
	if pngFirst {
		w := &budgetWriter{max: budget}
		if err := png.Encode(w, img); err == nil {
			return w.buf, "image/png", nil
		} else if !errors.Is(err, errOverBudget) {
			return nil, "", errs.New(errs.Internal, "encoding the image as PNG failed").Wrap(err)
		}
	}
	j := img
	if transparent {
		j = overWhite(img)
	}
	for _, q := range jpegQualities {
		if err := ctx.Err(); err != nil {
			return nil, "", err
		}
		w := &budgetWriter{max: budget}
		err := jpeg.Encode(w, j, &jpeg.Options{Quality: q})
		if err == nil {
			return w.buf, "image/jpeg", nil
		}
		if !errors.Is(err, errOverBudget) {
			return nil, "", errs.New(errs.Internal, "encoding the image as JPEG failed").Wrap(err)
		}
	}
	return nil, "", nil
}

// overWhite returns a copy of img composited over white.
func overWhite(img *image.RGBA) *image.RGBA {
	out := &image.RGBA{Pix: make([]byte, len(img.Pix)), Stride: img.Stride, Rect: img.Rect}
	for i := 0; i+3 < len(img.Pix); i += 4 {
		a := img.Pix[i+3]
		// Premultiplied: over white adds the white the pixel lets through.
		out.Pix[i] = img.Pix[i] + (255 - a)
		out.Pix[i+1] = img.Pix[i+1] + (255 - a)
		out.Pix[i+2] = img.Pix[i+2] + (255 - a)
		out.Pix[i+3] = 255
	}
	return out
}

// errOverBudget stops an encoder as soon as its output passes the budget,
// rather than finishing an encoding that will be thrown away.
var errOverBudget = errors.New("over the byte budget")

type budgetWriter struct {
	buf []byte
	max int
}

func (b *budgetWriter) Write(p []byte) (int, error) {
	if len(b.buf)+len(p) > b.max {
		return 0, errOverBudget
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}
