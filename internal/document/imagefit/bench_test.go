package imagefit

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"image/png"
	"math"
	"sync"
	"testing"

	"golang.org/x/image/draw"
)

// The scalers compared: the last step's interpolator, after a box
// reduction (what scale does) or alone on the full source.
var scalers = []struct {
	name   string
	interp draw.Interpolator
	direct bool // without scale's box reduction first
}{
	{"box+ApproxBiLinear", draw.ApproxBiLinear, false},
	{"box+CatmullRom", draw.CatmullRom, false},
	{"CatmullRom", draw.CatmullRom, true},
	{"ApproxBiLinear", draw.ApproxBiLinear, true},
}

func scaleWith(src image.Image, w, h int, interp draw.Interpolator, direct bool) *image.RGBA {
	if !direct {
		return scale(src, src.Bounds().Dx(), src.Bounds().Dy(), w, h, interp)
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	interp.Scale(dst, dst.Rect, src, src.Bounds(), draw.Src, nil)
	return dst
}

var bigPNG = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, photo(2000, 2000, 10)); err != nil {
		panic(err)
	}
	return b.Bytes()
})

// BenchmarkFit times Fit end to end (decode, scale, encode) with each
// interpolator as the last scaling step.
func BenchmarkFit(b *testing.B) {
	inputs := []struct {
		name string
		data []byte
	}{{"jpeg4000x3000", bigPhotoJPEG()}, {"png2000x2000", bigPNG()}}
	for _, in := range inputs {
		for _, s := range scalers[:2] {
			b.Run(in.name+"/"+s.name, func(b *testing.B) {
				defer func(old draw.Interpolator) { scaler = old }(scaler)
				scaler = s.interp
				b.SetBytes(int64(len(in.data)))
				for b.Loop() {
					if _, err := Fit(context.Background(), bytes.NewReader(in.data), DefaultLimits()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkScale times scaling alone, a decoded 4000×3000 JPEG to
// 1568×1176, for each candidate.
func BenchmarkScale(b *testing.B) {
	src, err := jpeg.Decode(bytes.NewReader(bigPhotoJPEG()))
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range scalers {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				scaleWith(src, 1568, 1176, s.interp, s.direct)
			}
		})
	}
}

// stripes returns a w×h grey image of vertical sine stripes of the given
// period in pixels.
func stripes(w, h int, period float64) *image.Gray {
	m := image.NewGray(image.Rect(0, 0, w, h))
	for x := range w {
		v := uint8(127.5 + 127.5*math.Sin(2*math.Pi*float64(x)/period))
		for y := range h {
			m.Pix[y*m.Stride+x] = v
		}
	}
	return m
}

// rmsAroundMean is the RMS deviation of the red channel from its mean.
func rmsAroundMean(m *image.RGBA) float64 {
	var sum, sq float64
	n := 0
	for i := 0; i < len(m.Pix); i += 4 {
		v := float64(m.Pix[i])
		sum += v
		sq += v * v
		n++
	}
	mean := sum / float64(n)
	return math.Sqrt(sq/float64(n) - mean*mean)
}

func psnr(a, b *image.RGBA) float64 {
	var se float64
	for i := range a.Pix {
		d := float64(a.Pix[i]) - float64(b.Pix[i])
		se += d * d
	}
	return 10 * math.Log10(255*255/(se/float64(len(a.Pix))))
}

// TestScalerQuality measures each candidate scaling 4000×3000 to
// 1568×1176 (2.55×): aliasing (stripes of period 2.2 px are finer than the
// target can show; an ideal filter leaves flat grey, RMS 0), detail kept
// (stripes of period 16 px, RMS 90 before scaling: higher is sharper), and
// PSNR of the photo against direct CatmullRom, the best-filtered result.
func TestScalerQuality(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("scales 4000×3000 images")
	}
	fine, coarse := stripes(4000, 3000, 2.2), stripes(4000, 3000, 16)
	src, err := jpeg.Decode(bytes.NewReader(bigPhotoJPEG()))
	if err != nil {
		t.Fatal(err)
	}
	ref := scaleWith(src, 1568, 1176, draw.CatmullRom, true)
	t.Logf("%-20s %12s %12s %10s", "scaler", "alias RMS", "detail RMS", "PSNR dB")
	for _, s := range scalers {
		alias := rmsAroundMean(scaleWith(fine, 1568, 1176, s.interp, s.direct))
		detail := rmsAroundMean(scaleWith(coarse, 1568, 1176, s.interp, s.direct))
		p := psnr(scaleWith(src, 1568, 1176, s.interp, s.direct), ref)
		t.Logf("%-20s %12.1f %12.1f %10.1f", s.name, alias, detail, p)
		// The box reduction aliases stripes this close to its own Nyquist
		// (~12 measured, 53 for ApproxBiLinear alone): 20 catches losing it.
		if s.interp == scaler && !s.direct && alias > 20 {
			t.Errorf("the chosen scaler aliases: RMS %.1f", alias)
		}
	}
}
