package decompress

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// frame is a zstd frame of an "ERROR here" line and filler, declaring a
// window of 1 MiB.
func frame(t *testing.T) []byte {
	var b bytes.Buffer
	w, err := zstd.NewWriter(&b, zstd.WithWindowSize(1<<20), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("ERROR here\n"))
	w.Write(bytes.Repeat([]byte("filler line\n"), 300<<10/12))
	w.Close()
	return b.Bytes()
}

// TestZstdSlots: when every zstd decoder of the process is in use,
// NewReader waits until one is closed or its context ends, and a decoder
// given back is reused.
func TestZstdSlots(t *testing.T) {
	var held []io.ReadCloser
	for range cap(zstdSlots) {
		d, err := NewReader(context.Background(), "zst", bytes.NewReader(frame(t)))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewReader(ctx, "zst", bytes.NewReader(frame(t))); err != context.Canceled {
		t.Fatalf("all slots held: %v", err)
	}
	held[0].Close()
	d, err := NewReader(ctx, "zst", bytes.NewReader(frame(t))) // a slot is free: no wait
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(d); err != nil || !bytes.HasPrefix(b, []byte("ERROR here\nfiller")) {
		t.Fatalf("reused decoder read %.20q, %v", b, err)
	}
	d.Close()
	for _, d := range held[1:] {
		d.Close()
	}
}

// TestCap: a stream of exactly the cap is whole; one byte more is cut
// there and says so.
func TestCap(t *testing.T) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte("0123456789"))
	w.Close()
	for _, tc := range []struct {
		max    int64
		want   string
		capped bool
	}{{10, "0123456789", false}, {9, "012345678", true}, {20, "0123456789", false}} {
		dec, err := NewReader(context.Background(), Kind("x.log.GZ"), bytes.NewReader(gz.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		c := Cap(dec, tc.max)
		b, err := io.ReadAll(c)
		dec.Close()
		if err != nil || string(b) != tc.want || c.Capped() != tc.capped {
			t.Errorf("cap %d: read %q (capped %v, %v), want %q (capped %v)", tc.max, b, c.Capped(), err, tc.want, tc.capped)
		}
	}
	if k := Kind("a.zst") + "," + Kind("a.log") + "," + Kind("gz"); k != "zst,," {
		t.Errorf("kinds: %q", k)
	}
}
