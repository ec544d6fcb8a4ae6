package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/serverfs/serverfs/internal/errs"
)

func bytesSource(b []byte) Source { return Source{R: bytes.NewReader(b), Size: int64(len(b))} }

// zeros is a reader of n zero bytes.
type zeros int64

func (z *zeros) Read(p []byte) (int, error) {
	if *z <= 0 {
		return 0, io.EOF
	}
	n := min(int64(len(p)), int64(*z))
	clear(p[:n])
	*z -= zeros(n)
	return int(n), nil
}

// bombs: a gzip'd tar and a zip of 256 MiB of zeros each (~1000:1), and
// a zip member that declares more than it holds.
func zipOf(t *testing.T, files map[string]int64, flags uint16) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		size := files[name]
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Flags: flags})
		if err != nil {
			t.Fatal(err)
		}
		z := zeros(size)
		if _, err := io.Copy(w, &z); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func tarGzOf(t *testing.T, files map[string]int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	// In name order: "b.txt" must come after the bomb "a" that a read of
	// it has to pass through.
	for _, name := range slices.Sorted(maps.Keys(files)) {
		size := files[name]
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: size, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		z := zeros(size)
		if _, err := io.Copy(tw, &z); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// TestHostileArchives: bombs, corrupt and truncated archives, encrypted
// members and too many members are answered with their code, within the
// call's bounds: the heap grows by less than 64 MiB for each.
func TestHostileArchives(t *testing.T) {
	bombZip := zipOf(t, map[string]int64{"zeros": 256 << 20}, 0)
	bombTar := tarGzOf(t, map[string]int64{"a": 256 << 20, "b.txt": 10})
	many := map[string]int64{}
	for i := range 3000 {
		many[fmt.Sprintf("d%d/f%d", i%7, i)] = 1
	}
	manyZip := zipOf(t, many, 0)
	encrypted := zipOf(t, map[string]int64{"secret.txt": 10}, 1)
	small := tarGzOf(t, map[string]int64{"a.log": 100_000})
	ctx := context.Background()
	read := func(src Source, f Format, name string, opt Options) error {
		rc, _, err := Open(ctx, src, f, name, opt)
		if err != nil {
			return err
		}
		defer rc.Close()
		_, err = io.Copy(io.Discard, rc)
		return err
	}
	cases := []struct {
		name string
		call func() error
		want errs.Code
	}{
		{"zip bomb: its member", func() error { return read(bytesSource(bombZip), Zip, "zeros", Options{}) }, errs.ArchiveTooLarge},
		{"tar.gz bomb: a member after it", func() error { return read(bytesSource(bombTar), TarGz, "b.txt", Options{}) }, errs.ArchiveTooLarge},
		{"tar.gz bomb: listing", func() error {
			_, err := List(ctx, bytesSource(bombTar), TarGz, "", Options{})
			return err
		}, errs.ArchiveTooLarge},
		{"tar.gz bomb: walk", func() error {
			return Walk(ctx, bytesSource(bombTar), TarGz, Options{}, func(m Member, r io.Reader) error {
				_, err := io.Copy(io.Discard, r)
				return err
			})
		}, errs.ArchiveTooLarge},
		{"total bytes bound", func() error {
			return read(bytesSource(small), TarGz, "a.log", Options{Limits: Limits{MaxTotalBytes: 50_000}})
		}, errs.ArchiveTooLarge},
		{"too many members", func() error {
			_, err := List(ctx, bytesSource(manyZip), Zip, "", Options{Limits: Limits{MaxMembers: 1000}})
			return err
		}, errs.ArchiveTooLarge},
		{"encrypted member", func() error { return read(bytesSource(encrypted), Zip, "secret.txt", Options{}) }, errs.ArchiveEncrypted},
		{"truncated tar.gz", func() error {
			_, err := List(ctx, bytesSource(small[:len(small)/2]), TarGz, "", Options{})
			return err
		}, errs.ArchiveCorrupt},
		{"truncated zip", func() error {
			_, err := List(ctx, bytesSource(manyZip[:len(manyZip)-30]), Zip, "", Options{})
			return err
		}, errs.ArchiveCorrupt},
		{"random bytes as tar.gz", func() error {
			_, err := List(ctx, bytesSource(bytes.Repeat([]byte{0x1f, 0x8b, 7, 1, 2}, 1000)), TarGz, "", Options{})
			return err
		}, errs.ArchiveCorrupt},
	}
	t.Logf("%-32s %-20s %10s %8s", "case", "answer", "time", "heap+")
	for _, c := range cases {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		err := c.call()
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		if errs.CodeOf(err) != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
		grown := int64(after.HeapInuse) - int64(before.HeapInuse)
		if grown > 64<<20 {
			t.Errorf("%s: the heap grew by %d MiB", c.name, grown>>20)
		}
		t.Logf("%-32s %-20s %10s %6.1fMB", c.name, errs.CodeOf(err), took.Round(time.Millisecond), float64(grown)/(1<<20))
	}
	// Walk passes an encrypted member without its bytes.
	var names []string
	err := Walk(ctx, bytesSource(encrypted), Zip, Options{}, func(m Member, r io.Reader) error {
		names = append(names, fmt.Sprintf("%s %v %v", m.Name, m.Encrypted, r == nil))
		return nil
	})
	if err != nil || fmt.Sprint(names) != "[secret.txt true true]" {
		t.Errorf("Walk over an encrypted member: %v %v", names, err)
	}
}

// FuzzArchive: any bytes, read as each format, give a listing, members
// and contents or an error with a code, never a panic or a read past the
// bounds.
func FuzzArchive(f *testing.F) {
	f.Add([]byte("PK\x05\x06" + string(make([]byte, 18))))
	f.Add(tarGzOf(&testing.T{}, map[string]int64{"a/b": 3, "c": 0}))
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	tw.WriteHeader(&tar.Header{Name: "../x", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"})
	tw.WriteHeader(&tar.Header{Name: "d/f", Size: 2, Mode: 0o644})
	tw.Write([]byte("hi"))
	tw.Close()
	f.Add(tb.Bytes())
	lim := Limits{MaxTotalBytes: 64 << 10, MaxMembers: 100}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []Format{Zip, Tar, TarGz, TarZst, TarBz2} {
			src := bytesSource(data)
			opt := Options{Limits: lim}
			p, err := List(context.Background(), src, format, "", opt)
			if err != nil && errs.CodeOf(err) == "" {
				t.Fatalf("%s: an error without a code: %v", format, err)
			}
			if len(p.Members) > 0 {
				if rc, _, err := Open(context.Background(), src, format, p.Members[len(p.Members)-1].Name, opt); err == nil {
					io.Copy(io.Discard, rc)
					rc.Close()
				}
			}
			Walk(context.Background(), src, format, opt, func(m Member, r io.Reader) error {
				if r != nil {
					io.Copy(io.Discard, r)
				}
				return nil
			})
		}
	})
}
