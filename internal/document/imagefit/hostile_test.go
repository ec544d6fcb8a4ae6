package imagefit

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/image/webp"

	"github.com/serverfs/serverfs/internal/errs"
)

// pngChunk returns one PNG chunk with its CRC.
func pngChunk(typ string, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	b = append(b, typ...)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
}

// hugePNG is a valid PNG header claiming w×h RGB pixels, then a tiny
// IDAT (one zlib-compressed row) and IEND: a decoder that believes the
// header allocates w×h×4 bytes before finding the data short.
func hugePNG(w, h uint32) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 2, 0, 0, 0) // 8-bit RGB, deflate, no filter, no interlace
	idat := []byte{0x78, 0x9c, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01}
	b := []byte("\x89PNG\r\n\x1a\n")
	b = append(b, pngChunk("IHDR", ihdr)...)
	b = append(b, pngChunk("IDAT", idat)...)
	return append(b, pngChunk("IEND", nil)...)
}

// hugeJPEG is a valid 16×16 JPEG whose SOF0 is patched to claim w×h.
func hugeJPEG(t testing.TB, w, h uint16) []byte {
	data := encodeJPEG(t, photo(16, 16, 7), 75)
	i := bytes.Index(data, []byte{0xff, 0xc0})
	if i < 0 {
		t.Fatal("no SOF0 in the JPEG")
	}
	binary.BigEndian.PutUint16(data[i+5:], h)
	binary.BigEndian.PutUint16(data[i+7:], w)
	return data
}

// hugeScreenGIF is a valid 16×16 GIF whose logical screen is patched to
// 65535×65535.
func hugeScreenGIF(t testing.TB) []byte {
	data := animatedGIF(t, 16, 16, 1)
	binary.LittleEndian.PutUint16(data[6:], 65535)
	binary.LittleEndian.PutUint16(data[8:], 65535)
	return data
}

// manyFramesGIF is a GIF of n 300×300 frames, made by repeating one
// frame's encoded blocks: decoding them all would allocate n×90 kB.
func manyFramesGIF(t testing.TB, n int) []byte {
	one := animatedGIF(t, 300, 300, 1)
	start := 6 + 7 // header, screen, then any global colour table
	if p := one[10]; p&0x80 != 0 {
		start += 3 << (p&7 + 1)
	}
	if one[start] != 0x2c && one[start] != 0x21 {
		t.Fatalf("unexpected block %#x after the colour table", one[start])
	}
	frame := one[start : len(one)-1]
	b := append([]byte{}, one[:start]...)
	for range n {
		b = append(b, frame...)
	}
	return append(b, 0x3b)
}

// vp8xWebP is a WebP whose VP8X header claims w×h, with no image data.
func vp8xWebP(w, h int) []byte {
	vp8x := []byte{0, 0, 0, 0, byte(w - 1), byte((w - 1) >> 8), byte((w - 1) >> 16), byte(h - 1), byte((h - 1) >> 8), byte((h - 1) >> 16)}
	body := append([]byte("WEBPVP8X"), binary.LittleEndian.AppendUint32(nil, 10)...)
	body = append(body, vp8x...)
	return append(append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...), body...)
}

// vp8lWebP is a WebP whose lossless header claims w×h (at most 16384).
func vp8lWebP(w, h int) []byte {
	bits := uint32(w-1) | uint32(h-1)<<14
	vp8l := append([]byte{0x2f}, binary.LittleEndian.AppendUint32(nil, bits)...)
	vp8l = append(vp8l, 0, 0, 0)
	body := append([]byte("WEBPVP8L"), binary.LittleEndian.AppendUint32(nil, uint32(len(vp8l)))...)
	body = append(body, vp8l...)
	return append(append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...), body...)
}

// endless is a reader that never ends: a PNG signature, then zeros.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		if e.n < 8 {
			p[i] = "\x89PNG\r\n\x1a\n"[e.n]
		} else {
			p[i] = 0
		}
		e.n++
	}
	return len(p), nil
}

func readTestdata(t testing.TB, name string) []byte {
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestHostile feeds files built to exhaust memory or time and checks that
// each is refused with its code, allocating less than 64 MiB in all
// (TotalAlloc, so that a collection during the call cannot hide a peak).
func TestHostile(t *testing.T) {
	photoPNG := encodePNG(t, photo(300, 200, 8))
	photoJPEG := encodeJPEG(t, photo(300, 200, 8), 80)
	gif3 := animatedGIF(t, 300, 200, 3)
	rose := readTestdata(t, "yellow_rose.lossy-with-alpha.webp")
	cases := []struct {
		name  string
		data  []byte
		r     io.Reader // instead of data
		lim   Limits
		claim [2]int // what the decoder's header claims, when the bound refuses it
		code  errs.Code
	}{
		{name: "PNG IHDR 100000×100000", data: hugePNG(100000, 100000), claim: [2]int{100000, 100000}, code: errs.DocumentTooLarge},
		// image/png refuses this one itself: its width×height overflows.
		{name: "PNG IHDR 2^31-1 × 2^31-1", data: hugePNG(1<<31-1, 1<<31-1), code: errs.DocumentCorrupt},
		{name: "JPEG SOF 65535×65535", data: hugeJPEG(t, 65535, 65535), claim: [2]int{65535, 65535}, code: errs.DocumentTooLarge},
		{name: "GIF screen 65535×65535", data: hugeScreenGIF(t), claim: [2]int{65535, 65535}, code: errs.DocumentTooLarge},
		{name: "GIF 10000 frames of 300×300", data: manyFramesGIF(t, 10000)},
		{name: "WebP VP8X 16383×16383", data: vp8xWebP(16383, 16383), claim: [2]int{16383, 16383}, code: errs.DocumentTooLarge},
		{name: "WebP VP8L 16384×16384", data: vp8lWebP(16384, 16384), claim: [2]int{16384, 16384}, code: errs.DocumentTooLarge},
		{name: "WebP VP8X 7000×7000, no data", data: vp8xWebP(7000, 7000), claim: [2]int{7000, 7000}, code: errs.DocumentCorrupt},
		{name: "PNG truncated", data: photoPNG[:len(photoPNG)/2], code: errs.DocumentCorrupt},
		{name: "JPEG truncated", data: photoJPEG[:len(photoJPEG)/2], code: errs.DocumentCorrupt},
		{name: "GIF truncated", data: gif3[:len(gif3)/5], code: errs.DocumentCorrupt},
		{name: "WebP truncated", data: rose[:len(rose)/2], code: errs.DocumentCorrupt},
		{name: "5 MiB (size known), MaxInput 4 MiB", data: make([]byte, 5<<20), lim: Limits{MaxInput: 4 << 20}, code: errs.DocumentTooLarge},
		{name: "endless input, MaxInput 4 MiB", r: &endless{}, lim: Limits{MaxInput: 4 << 20}, code: errs.DocumentTooLarge},
	}
	t.Logf("%-32s %-20s %10s %10s", "case", "result", "time", "allocated")
	for _, c := range cases {
		r := c.r
		if r == nil {
			r = bytes.NewReader(c.data)
		}
		if c.claim != [2]int{} {
			// The bound is what refuses it: the decoder's own header
			// reading believes the claim.
			if cfg, err := decodeConfig(Format(c.data), c.data); err != nil || cfg.Width != c.claim[0] || cfg.Height != c.claim[1] {
				t.Errorf("%s: DecodeConfig says %d×%d, %v", c.name, cfg.Width, cfg.Height, err)
			}
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		res, err := Fit(context.Background(), r, c.lim)
		elapsed := time.Since(start)
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		result := string(errs.CodeOf(err))
		if err == nil {
			result = res.MIMEType
		}
		t.Logf("%-32s %-20s %10s %7.1f MiB", c.name, result, elapsed.Round(time.Microsecond), float64(alloc)/(1<<20))
		if errs.CodeOf(err) != c.code {
			t.Errorf("%s: got %v, want %q", c.name, err, c.code)
		}
		if alloc >= 64<<20 {
			t.Errorf("%s: allocated %d MiB", c.name, alloc>>20)
		}
		if e, ok := c.r.(*endless); ok && e.n > c.lim.MaxInput+1 {
			t.Errorf("%s: read %d bytes, MaxInput %d", c.name, e.n, c.lim.MaxInput)
		}
		if c.name == "GIF 10000 frames of 300×300" && (err != nil || res.Frames != 10000) {
			t.Errorf("%s: %v, %d frames counted", c.name, err, res.Frames)
		}
	}
}

// TestConcurrentLarge runs Fit calls at once on a 7000×7000 PNG (49
// megapixels, under the default 50M) and reports the peak heap: what a
// server that does not bound concurrent image reads would need. Grey, so
// that the machine running the tests is not asked for 4× as much. 4 calls
// by default; IMAGEFIT_CONCURRENT=50 measures 50 (~4 GB, 30 s on 2 cores:
// too much for every run of the suite, under -race).
func TestConcurrentLarge(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("decodes images of 49 megapixels")
	}
	calls := 4
	if n, err := strconv.Atoi(os.Getenv("IMAGEFIT_CONCURRENT")); err == nil && n > 0 {
		calls = n
	}
	m := image.NewGray(image.Rect(0, 0, 7000, 7000))
	for y := range 7000 {
		for x := range 7000 {
			m.Pix[y*m.Stride+x] = uint8((x/7 + y/11) ^ (x / 50))
		}
	}
	data := encodePNG(t, m)
	m = nil
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	peak := sampleHeap()
	start := time.Now()
	var wg sync.WaitGroup
	results := make([]error, calls)
	for i := range results {
		wg.Go(func() {
			res, err := Fit(context.Background(), bytes.NewReader(data), DefaultLimits())
			if err == nil && (res.OutWidth != 1568 || len(res.Data) > DefaultLimits().MaxBytes) {
				t.Errorf("out %d×%d, %d bytes", res.OutWidth, res.OutHeight, len(res.Data))
			}
			results[i] = err
		})
	}
	wg.Wait()
	heap := peak()
	for _, err := range results {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d concurrent Fit on a 7000×7000 grey PNG (%d bytes): %s, peak heap %d MiB above the %d MiB before (%.0f MiB per call)",
		calls, len(data), time.Since(start).Round(time.Millisecond), (heap-base.HeapAlloc)>>20, base.HeapAlloc>>20, float64(heap-base.HeapAlloc)/float64(calls)/(1<<20))
}

// sampleHeap samples HeapAlloc every 5 ms until the returned function is
// called, which returns the highest value seen.
func sampleHeap() func() uint64 {
	done := make(chan struct{})
	result := make(chan uint64)
	go func() {
		var peak uint64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var s runtime.MemStats
			runtime.ReadMemStats(&s)
			peak = max(peak, s.HeapAlloc)
			select {
			case <-done:
				result <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		return <-result
	}
}

// FuzzFit feeds arbitrary bytes: Fit must not panic, must keep within the
// budget, and what it returns must decode as what it claims.
func FuzzFit(f *testing.F) {
	f.Add(encodePNG(f, photo(20, 10, 9)))
	f.Add(encodeJPEG(f, photo(20, 10, 9), 70))
	f.Add(animatedGIF(f, 20, 10, 2))
	pal := image.NewPaletted(image.Rect(0, 0, 8, 8), color.Palette{color.Transparent, color.White})
	f.Add(encodePNG(f, pal))
	for _, name := range []string{"gopher-doc.1bpp.lossless.webp", "blue-purple-pink.lossy.webp", "yellow_rose.lossy-with-alpha.webp"} {
		f.Add(readTestdata(f, name))
	}
	f.Add(hugePNG(100000, 100000))
	f.Add(hugeJPEG(f, 65535, 65535))
	f.Add(hugeScreenGIF(f))
	f.Add(manyFramesGIF(f, 3))
	f.Add(vp8xWebP(16383, 16383))
	f.Add(vp8lWebP(300, 300))
	lim := Limits{MaxPixels: 1 << 20, MaxBytes: 16 << 10, MaxSide: 64, MaxInput: 1 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Fit(context.Background(), bytes.NewReader(data), lim)
		if err != nil {
			switch errs.CodeOf(err) {
			case errs.DocumentCorrupt, errs.DocumentTooLarge, errs.UnsupportedFileType:
			default:
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		checkDecodes(t, res, lim)
	})
}

// checkDecodes is checkResult without the aspect-ratio check, which a
// fuzzed 1×n image cannot keep to the pixel once halved.
func checkDecodes(t *testing.T, res *Result, lim Limits) {
	if len(res.Data) > lim.MaxBytes || res.OutWidth > lim.MaxSide || res.OutHeight > lim.MaxSide {
		t.Fatalf("%d bytes, %d×%d", len(res.Data), res.OutWidth, res.OutHeight)
	}
	r := bytes.NewReader(res.Data)
	var err error
	switch res.MIMEType {
	case "image/png":
		_, err = png.Decode(r)
	case "image/jpeg":
		_, err = jpeg.Decode(r)
	case "image/gif":
		_, err = gif.Decode(r)
	case "image/webp":
		_, err = webp.Decode(r)
	default:
		t.Fatalf("MIME type %q", res.MIMEType)
	}
	if err != nil {
		t.Fatalf("%s result does not decode: %v", res.MIMEType, err)
	}
}
