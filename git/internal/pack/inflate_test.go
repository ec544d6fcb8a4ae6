package pack

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"io"
	"math/rand"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// zlibOracle is what compress/zlib makes of in, expecting size bytes: the
// content and whether the stream is whole (ends, checksum right).
func zlibOracle(in []byte, size int) ([]byte, bool) {
	zr, err := zlib.NewReader(bytes.NewReader(in))
	if err != nil {
		return nil, false
	}
	out, err := io.ReadAll(io.LimitReader(zr, int64(size)+1))
	return out, err == nil && len(out) == size
}

// inflateCases are contents of the shapes pack objects have (text, trees
// of binary ids, runs, noise) and the edges of deflate (empty, one byte,
// long matches, stored blocks, several blocks).
func inflateCases() [][]byte {
	rng := rand.New(rand.NewSource(18))
	noise := func(n int) []byte { b := make([]byte, n); rng.Read(b); return b }
	text := func(n int) []byte {
		words := []string{"tree ", "parent ", "author A U Thor <a@example.com> 1700000000 +0000\n", "commit ", "fix ", "the ", "line\n", "blame.txt", "\x00"}
		var b bytes.Buffer
		for b.Len() < n {
			b.WriteString(words[rng.Intn(len(words))])
			if rng.Intn(9) == 0 {
				b.Write(noise(20))
			}
		}
		return b.Bytes()[:n]
	}
	cases := [][]byte{{}, {'x'}, bytes.Repeat([]byte{'a'}, 1000), bytes.Repeat([]byte("ab"), 40000), noise(70000)}
	for _, n := range []int{2, 30, 200, 1000, 5000, 40000, 200000} {
		cases = append(cases, text(n), noise(n))
	}
	return cases
}

// TestInflateMatchesZlib: the inflater takes every stream compress/zlib
// writes, at every level (stored, Huffman only, fixed and dynamic
// blocks), and inflates it as compress/zlib does.
func TestInflateMatchesZlib(t *testing.T) {
	var z inflater
	n := 0
	for _, data := range inflateCases() {
		for _, level := range []int{flate.HuffmanOnly, flate.NoCompression, flate.BestSpeed, flate.DefaultCompression, flate.BestCompression} {
			var buf bytes.Buffer
			zw, _ := zlib.NewWriterLevel(&buf, level)
			zw.Write(data)
			zw.Close()
			out := make([]byte, len(data))
			// Followed by other bytes, as in a pack.
			in := append(buf.Bytes(), "PACK-NEXT-OBJECT"...)
			if !z.inflate(in, out) || !bytes.Equal(out, data) {
				t.Fatalf("level %d, %d bytes: not inflated as written", level, len(data))
			}
			if len(data) > 0 && z.inflate(in, out[:len(data)-1]) {
				t.Fatalf("level %d, %d bytes: taken for a shorter size", level, len(data))
			}
			if z.inflate(buf.Bytes()[:buf.Len()-1], out) {
				t.Fatalf("level %d, %d bytes: taken without its whole checksum", level, len(data))
			}
			n++
		}
	}
	t.Logf("%d streams", n)
}

// TestInflateCorrupt: of streams with a byte changed, cut, or made at
// random, the inflater takes only those compress/zlib inflates whole to
// the same bytes (it answers false for the rest, which Reader then
// reads with compress/zlib).
func TestInflateCorrupt(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var z inflater
	taken, tried := 0, 0
	check := func(in []byte, size int) {
		tried++
		out := make([]byte, size)
		if !z.inflate(in, out) {
			return
		}
		taken++
		want, ok := zlibOracle(in, size)
		if !ok || !bytes.Equal(out, want) {
			t.Fatalf("took a stream compress/zlib does not inflate the same (%x)", in)
		}
	}
	for _, data := range inflateCases() {
		if len(data) > 5000 {
			continue
		}
		for _, level := range []int{flate.HuffmanOnly, flate.BestSpeed, flate.BestCompression} {
			var buf bytes.Buffer
			zw, _ := zlib.NewWriterLevel(&buf, level)
			zw.Write(data)
			zw.Close()
			good := buf.Bytes()
			for range 60 {
				in := bytes.Clone(good)
				switch rng.Intn(3) {
				case 0:
					in[rng.Intn(len(in))] ^= byte(1 << rng.Intn(8))
				case 1:
					in[rng.Intn(len(in))] = byte(rng.Intn(256))
				default:
					in = in[:rng.Intn(len(in))]
				}
				check(in, len(data))
			}
		}
	}
	for range 2000 {
		in := make([]byte, 2+rng.Intn(40))
		rng.Read(in)
		in[0], in[1] = 0x78, 0x01 // a valid header
		check(in, rng.Intn(64))
	}
	t.Logf("took %d of %d corrupt streams, each as compress/zlib inflates it", taken, tried)
}

// FuzzInflate: whatever the bytes, the inflater takes them only when
// compress/zlib inflates them to the same content.
func FuzzInflate(f *testing.F) {
	for _, data := range inflateCases()[:8] {
		var buf bytes.Buffer
		zw := zlib.NewWriter(&buf)
		zw.Write(data)
		zw.Close()
		f.Add(buf.Bytes(), uint16(len(data)))
	}
	f.Fuzz(func(t *testing.T, in []byte, size uint16) {
		var z inflater
		out := make([]byte, size)
		if !z.inflate(in, out) {
			return
		}
		if want, ok := zlibOracle(in, int(size)); !ok || !bytes.Equal(out, want) {
			t.Fatalf("took a stream compress/zlib does not inflate the same")
		}
	})
}

// TestApplyDeltaMatchesGoGit: applyDelta answers what go-git's
// packfile.PatchDelta answers (the same bytes, or an error for both) for
// deltas go-git makes and for those deltas damaged.
func TestApplyDeltaMatchesGoGit(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	cases := inflateCases()
	tried := 0
	for i := 1; i < len(cases); i++ {
		src, tgt := cases[i-1], cases[i]
		if len(src) > 50000 || len(tgt) > 50000 {
			continue
		}
		if len(tgt) > 10 && rng.Intn(2) == 0 {
			tgt = append(bytes.Clone(tgt[len(tgt)/3:]), src...)
		}
		good := packfile.DiffDelta(src, tgt)
		for k := range 80 {
			d := bytes.Clone(good)
			if k > 0 && len(d) > 0 {
				switch rng.Intn(3) {
				case 0:
					d[rng.Intn(len(d))] ^= byte(1 << rng.Intn(8))
				case 1:
					d = d[:rng.Intn(len(d))]
				default:
					d = append(d, byte(rng.Intn(256)))
				}
			}
			tried++
			want, werr := packfile.PatchDelta(src, d)
			got, err := applyDelta(src, d)
			if (err != nil) != (werr != nil) || !bytes.Equal(got, want) {
				t.Fatalf("case %d/%d: applyDelta %v, PatchDelta %v", i, k, err, werr)
			}
			if k == 0 && len(src) > 0 && !bytes.Equal(got, tgt) {
				t.Fatalf("case %d: delta does not apply", i)
			}
		}
	}
	t.Logf("%d deltas", tried)
}
