package imagefit

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"golang.org/x/image/webp"

	"github.com/serverfs/serverfs/internal/errs"
)

// photo returns a w×h opaque image that compresses like a photograph:
// smooth gradients and blobs under per-pixel noise.
func photo(w, h int, seed uint64) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(seed, 1))
	for y := range h {
		for x := range w {
			fx, fy := float64(x)/float64(w), float64(y)/float64(h)
			blob := 60 * math.Sin(fx*17+math.Cos(fy*11)) * math.Cos(fy*13)
			n := rng.IntN(41) - 20
			i := m.PixOffset(x, y)
			m.Pix[i] = clamp(255*fx + blob + float64(n))
			m.Pix[i+1] = clamp(255*fy - blob + float64(n))
			m.Pix[i+2] = clamp(128 + blob + float64(rng.IntN(41)-20))
			m.Pix[i+3] = 255
		}
	}
	return m
}

func clamp(v float64) uint8 { return uint8(max(0, min(255, v))) }

func encodePNG(t testing.TB, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(t testing.TB, m image.Image, q int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bigPhotoJPEG is a 4000×3000 photo-like JPEG, made once: several tests
// and benchmarks read it.
var bigPhotoJPEG = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, photo(4000, 3000, 1), &jpeg.Options{Quality: 90}); err != nil {
		panic(err)
	}
	return b.Bytes()
})

// animatedGIF returns a GIF of frames w×h frames, frame i filled with
// palette colour i+1.
func animatedGIF(t testing.TB, w, h, frames int) []byte {
	t.Helper()
	g := &gif.GIF{}
	for i := range frames {
		m := image.NewPaletted(image.Rect(0, 0, w, h), palette.Plan9)
		for j := range m.Pix {
			m.Pix[j] = uint8(i + 1)
		}
		g.Image = append(g.Image, m)
		g.Delay = append(g.Delay, 10)
	}
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, g); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func fit(t testing.TB, data []byte, lim Limits) (*Result, error) {
	t.Helper()
	return Fit(context.Background(), bytes.NewReader(data), lim)
}

func mustFit(t testing.TB, data []byte, lim Limits) *Result {
	t.Helper()
	res, err := fit(t, data, lim)
	if err != nil {
		t.Fatalf("Fit: %v", err)
	}
	checkResult(t, res, lim.withDefaults())
	return res
}

// checkResult holds what every Result promises, re-decoding Data with the
// standard library (and x/image/webp) as the oracle.
func checkResult(t testing.TB, res *Result, lim Limits) {
	t.Helper()
	if len(res.Data) > lim.MaxBytes {
		t.Errorf("%d bytes, more than the budget of %d", len(res.Data), lim.MaxBytes)
	}
	if res.OutWidth > lim.MaxSide || res.OutHeight > lim.MaxSide {
		t.Errorf("out %d×%d, longer than MaxSide %d", res.OutWidth, res.OutHeight, lim.MaxSide)
	}
	var cfg image.Config
	var err error
	r := bytes.NewReader(res.Data)
	switch res.MIMEType {
	case "image/png":
		cfg, err = png.DecodeConfig(r)
	case "image/jpeg":
		cfg, err = jpeg.DecodeConfig(r)
	case "image/gif":
		cfg, err = gif.DecodeConfig(r)
	case "image/webp":
		cfg, err = webp.DecodeConfig(r)
	default:
		t.Fatalf("MIME type %q", res.MIMEType)
	}
	if err != nil {
		t.Fatalf("the result does not decode as %s: %v", res.MIMEType, err)
	}
	if cfg.Width != res.OutWidth || cfg.Height != res.OutHeight {
		t.Errorf("result claims %d×%d, decodes as %d×%d", res.OutWidth, res.OutHeight, cfg.Width, cfg.Height)
	}
	// The aspect ratio is kept to the pixel.
	if want := float64(res.OutWidth) * float64(res.Height) / float64(res.Width); math.Abs(want-float64(res.OutHeight)) > 1 {
		t.Errorf("source %d×%d scaled to %d×%d: aspect ratio lost", res.Width, res.Height, res.OutWidth, res.OutHeight)
	}
}

func wantCode(t testing.TB, err error, code errs.Code) {
	t.Helper()
	if errs.CodeOf(err) != code {
		t.Fatalf("got %v, want %s", err, code)
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct{ head, want string }{
		{"\x89PNG\r\n\x1a\n....", "png"},
		{"\xff\xd8\xff\xe0", "jpeg"},
		{"GIF89a", "gif"},
		{"GIF87a..", "gif"},
		{"RIFF\x00\x00\x00\x00WEBPVP8 ", "webp"},
		{"RIFF\x00\x00\x00\x00WAVE", ""},
		{"<svg xmlns=", ""},
		{"\x89PNG", ""},
		{"", ""},
	} {
		if got := Format([]byte(c.head)); got != c.want {
			t.Errorf("Format(%q) = %q, want %q", c.head, got, c.want)
		}
	}
}

func TestSmallPNGUnchanged(t *testing.T) {
	data := encodePNG(t, photo(64, 48, 2))
	res := mustFit(t, data, DefaultLimits())
	if !bytes.Equal(res.Data, data) {
		t.Fatal("a PNG that fits was re-encoded")
	}
	if res.Format != "png" || res.MIMEType != "image/png" || res.Width != 64 || res.OutHeight != 48 || res.Frames != 1 {
		t.Fatalf("%+v", *res)
	}
}

func TestLargeJPEGScaled(t *testing.T) {
	res := mustFit(t, bigPhotoJPEG(), DefaultLimits())
	t.Logf("4000×3000 JPEG of %d bytes -> %d×%d %s of %d bytes", len(bigPhotoJPEG()), res.OutWidth, res.OutHeight, res.MIMEType, len(res.Data))
	if res.Width != 4000 || res.Height != 3000 || res.OutWidth != 1568 || res.OutHeight != 1176 || res.MIMEType != "image/jpeg" {
		t.Fatalf("%s %d×%d -> %d×%d", res.MIMEType, res.Width, res.Height, res.OutWidth, res.OutHeight)
	}
}

func TestWithinSideOverBudgetReencoded(t *testing.T) {
	data := encodePNG(t, photo(1000, 800, 3)) // ~2 MB of noise
	lim := Limits{MaxBytes: 200_000}
	res := mustFit(t, data, lim)
	if res.MIMEType != "image/jpeg" || bytes.Equal(res.Data, data) {
		t.Fatalf("%s, %d bytes", res.MIMEType, len(res.Data))
	}
	t.Logf("1000×800 noisy PNG of %d bytes, budget 200000 -> %d×%d JPEG of %d bytes", len(data), res.OutWidth, res.OutHeight, len(res.Data))
}

func TestTransparentPNGStaysPNG(t *testing.T) {
	m := image.NewNRGBA(image.Rect(0, 0, 3000, 1500))
	for y := range 1500 {
		for x := range 3000 {
			if (x-1500)*(x-1500)+(y-750)*(y-750) < 600*600 {
				m.SetNRGBA(x, y, color.NRGBA{200, uint8(x / 12), 40, 255})
			}
		}
	}
	res := mustFit(t, encodePNG(t, m), DefaultLimits())
	if res.MIMEType != "image/png" || res.OutWidth != 1568 || res.OutHeight != 784 {
		t.Fatalf("%s %d×%d", res.MIMEType, res.OutWidth, res.OutHeight)
	}
	out, err := png.Decode(bytes.NewReader(res.Data))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, a := out.At(0, 0).RGBA(); a != 0 {
		t.Errorf("the corner is no longer transparent: alpha %d", a)
	}
	if _, _, _, a := out.At(784, 392).RGBA(); a != 0xffff {
		t.Errorf("the centre is no longer opaque: alpha %d", a)
	}
}

// A transparent image too big for PNG becomes a JPEG over white.
func TestTransparentNoisyBecomesJPEGOverWhite(t *testing.T) {
	m := photo(1200, 1200, 4)
	for y := range 600 { // the top half transparent
		for x := range 1200 {
			m.SetRGBA(x, y, color.RGBA{})
		}
	}
	res := mustFit(t, encodePNG(t, m), Limits{MaxBytes: 150_000})
	if res.MIMEType != "image/jpeg" {
		t.Fatalf("%s", res.MIMEType)
	}
	out, err := jpeg.Decode(bytes.NewReader(res.Data))
	if err != nil {
		t.Fatal(err)
	}
	if r, g, b, _ := out.At(5, 5).RGBA(); r>>8 < 245 || g>>8 < 245 || b>>8 < 245 {
		t.Errorf("transparent pixels are not white: %d %d %d", r>>8, g>>8, b>>8)
	}
}

// A budget too small for the image even at minSide is an error, not a
// useless thumbnail.
func TestBudgetTooSmall(t *testing.T) {
	_, err := fit(t, encodePNG(t, photo(400, 300, 5)), Limits{MaxBytes: 100})
	wantCode(t, err, errs.DocumentTooLarge)
	t.Log(err)
	// A budget that a halving meets is met by halving.
	res := mustFit(t, encodePNG(t, photo(1000, 750, 5)), Limits{MaxBytes: 40_000})
	if res.OutWidth >= 1000 {
		t.Errorf("out %d×%d, not halved", res.OutWidth, res.OutHeight)
	}
	t.Logf("1000×750 noisy PNG, budget 40000 -> %d×%d %s of %d bytes", res.OutWidth, res.OutHeight, res.MIMEType, len(res.Data))
}

func TestAnimatedGIF(t *testing.T) {
	small := animatedGIF(t, 40, 30, 3)
	res := mustFit(t, small, DefaultLimits())
	if !bytes.Equal(res.Data, small) || res.Frames != 3 || res.MIMEType != "image/gif" {
		t.Fatalf("small animated GIF: %s, %d frames, unchanged %v", res.MIMEType, res.Frames, bytes.Equal(res.Data, small))
	}
	big := animatedGIF(t, 2000, 1000, 3)
	res = mustFit(t, big, DefaultLimits())
	if res.Frames != 3 || res.MIMEType != "image/png" || res.OutWidth != 1568 || res.OutHeight != 784 {
		t.Fatalf("big animated GIF: %s %d×%d, %d frames", res.MIMEType, res.OutWidth, res.OutHeight, res.Frames)
	}
	out, err := png.Decode(bytes.NewReader(res.Data))
	if err != nil {
		t.Fatal(err)
	}
	want := color.RGBAModel.Convert(palette.Plan9[1]).(color.RGBA)
	if got := color.RGBAModel.Convert(out.At(700, 400)).(color.RGBA); got != want {
		t.Errorf("centre pixel %v, want the first frame's %v", got, want)
	}
}

func TestWebP(t *testing.T) {
	for _, name := range []string{"gopher-doc.1bpp.lossless.webp", "blue-purple-pink.lossy.webp", "yellow_rose.lossy-with-alpha.webp"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile("testdata/" + name)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := webp.DecodeConfig(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			res := mustFit(t, data, DefaultLimits())
			if !bytes.Equal(res.Data, data) || res.MIMEType != "image/webp" || res.Width != cfg.Width || res.Height != cfg.Height {
				t.Fatalf("%s %d×%d, unchanged %v", res.MIMEType, res.Width, res.Height, bytes.Equal(res.Data, data))
			}
			res = mustFit(t, data, Limits{MaxSide: 50})
			if max(res.OutWidth, res.OutHeight) != 50 || res.MIMEType == "image/webp" {
				t.Fatalf("MaxSide 50: %s %d×%d", res.MIMEType, res.OutWidth, res.OutHeight)
			}
			t.Logf("%d×%d -> %s %d×%d, %d bytes", res.Width, res.Height, res.MIMEType, res.OutWidth, res.OutHeight, len(res.Data))
		})
	}
}

func TestRefused(t *testing.T) {
	_, err := fit(t, []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), DefaultLimits())
	wantCode(t, err, errs.UnsupportedFileType)
	_, err = fit(t, nil, DefaultLimits())
	wantCode(t, err, errs.UnsupportedFileType)
	_, err = fit(t, []byte("\x89PNG\r\n\x1a\nnot a png at all, only its signature"), DefaultLimits())
	wantCode(t, err, errs.DocumentCorrupt)
	// A header that decodes over pixel data that does not.
	data := encodePNG(t, photo(100, 100, 6))
	copy(data[len(data)/2:], bytes.Repeat([]byte{0xAA}, 64))
	_, err = fit(t, data, DefaultLimits())
	wantCode(t, err, errs.DocumentCorrupt)
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Fit(ctx, bytes.NewReader(bigPhotoJPEG()), DefaultLimits())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestOutSize(t *testing.T) {
	for _, c := range []struct{ w, h, side, ow, oh int }{
		{4000, 3000, 1568, 1568, 1176},
		{3000, 4000, 1568, 1176, 1568},
		{100, 50, 1568, 100, 50},
		{100000, 1, 1568, 1568, 1},
		{1, 100000, 1568, 1, 1568},
	} {
		if ow, oh := outSize(c.w, c.h, c.side); ow != c.ow || oh != c.oh {
			t.Errorf("outSize(%d, %d, %d) = %d×%d, want %d×%d", c.w, c.h, c.side, ow, oh, c.ow, c.oh)
		}
	}
}
