package imagefit

import (
	"image"

	"golang.org/x/image/draw"
)

// scale draws src, whose bounds lie in a canvas of cw×ch pixels at the
// origin, onto a new w×h RGBA image. A canvas at least twice the target is
// first reduced by an integer factor with a box filter (boxReduce), so
// that the interpolator only ever scales by less than 2: ApproxBiLinear
// samples 2×2 pixels and would alias on a larger reduction, and draw's
// kernels (CatmullRom) allocate 32 bytes per target-width × source-height
// pixel, 350 MB for a 7000-pixel source.
func scale(src image.Image, cw, ch, w, h int, interp draw.Interpolator) *image.RGBA {
	if k := min(cw/w, ch/h); k >= 2 {
		src = boxReduce(src, k)
		cw, ch = (cw+k-1)/k, (ch+k-1)/k
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	b := src.Bounds()
	dr := image.Rect(b.Min.X*w/cw, b.Min.Y*h/ch, b.Max.X*w/cw, b.Max.Y*h/ch)
	interp.Scale(dst, dr, src, b, draw.Src, nil)
	return dst
}

// boxReduce returns src reduced k times in each direction, each pixel the
// average of a k×k block (fewer at the right and bottom edges). It reads
// src a row at a time through image/draw, which converts any image type
// (YCbCr, Gray, Paletted, ...) to premultiplied RGBA, whose channels
// average correctly with alpha; beside the result it keeps two rows.
func boxReduce(src image.Image, k int) *image.RGBA {
	b := src.Bounds()
	out := image.NewRGBA(image.Rect(b.Min.X/k, b.Min.Y/k, b.Min.X/k+(b.Dx()+k-1)/k, b.Min.Y/k+(b.Dy()+k-1)/k))
	ow := out.Rect.Dx()
	row := image.NewRGBA(image.Rect(0, 0, b.Dx(), 1))
	// uint64: a tiny MaxSide can make k×k×255 overflow 32 bits.
	sums := make([]uint64, 4*ow)
	for oy := range out.Rect.Dy() {
		y0 := b.Min.Y + oy*k
		y1 := min(y0+k, b.Max.Y)
		clear(sums)
		for y := y0; y < y1; y++ {
			draw.Draw(row, row.Rect, src, image.Pt(b.Min.X, y), draw.Src)
			for ox := range ow {
				var r, g, bl, a uint64
				for i := 4 * ox * k; i < 4*min((ox+1)*k, b.Dx()); i += 4 {
					r += uint64(row.Pix[i])
					g += uint64(row.Pix[i+1])
					bl += uint64(row.Pix[i+2])
					a += uint64(row.Pix[i+3])
				}
				s := sums[4*ox : 4*ox+4]
				s[0], s[1], s[2], s[3] = s[0]+r, s[1]+g, s[2]+bl, s[3]+a
			}
		}
		pix := out.Pix[oy*out.Stride:]
		for ox := range ow {
			n := uint64(min(k, b.Dx()-ox*k) * (y1 - y0))
			for c := range 4 {
				pix[4*ox+c] = uint8((sums[4*ox+c] + n/2) / n)
			}
		}
	}
	return out
}
