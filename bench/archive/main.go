// Command archivelogs writes a month of rotated logs as one tar.gz, for
// bench/archive/run.sh: one member per host and day, lines of a web
// service's log with random ids (they compress about 5:1, as real logs
// do), an ERROR line now and then, and the rare word ZEBRA_QUOKKA_42 in
// five lines. It is a benchmark tool, not part of the product.
//
//	archivelogs -size BYTES OUT.tar.gz
//
// BYTES is the archive's size (compressed) to reach, about.
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"math/rand"
	"os"

	"github.com/klauspost/compress/gzip"
)

func main() {
	size := flag.Int64("size", 1<<30, "compressed size to reach (bytes)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: archivelogs -size BYTES OUT.tar.gz")
		os.Exit(2)
	}
	f, err := os.Create(flag.Arg(0))
	check(err)
	counted := &countingWriter{w: bufio.NewWriterSize(f, 1<<20)}
	zw := gzip.NewWriter(counted)
	tw := tar.NewWriter(zw)
	rng := rand.New(rand.NewSource(42))
	levels := []string{"INFO", "INFO", "INFO", "INFO", "DEBUG", "WARN"}
	paths := []string{"/api/v1/items", "/api/v1/orders", "/healthz", "/login", "/api/v2/search"}
	var member bytes.Buffer
	rare := 0
	for n := 0; counted.n < *size; n++ {
		day, host := n/16%30+1, n%16
		member.Reset()
		for i := range 60_000 {
			level := levels[rng.Intn(len(levels))]
			if rng.Intn(5000) == 0 {
				level = "ERROR"
			}
			fmt.Fprintf(&member, "2025-11-%02dT%02d:%02d:%02d.%03dZ host-%02d app[%d]: %s request id=%016x path=%s/%d status=%d dur=%dms\n",
				day, i/2500%24, i/42%60, i%60, rng.Intn(1000), host, 1000+host, level, rng.Uint64(), paths[rng.Intn(len(paths))], rng.Intn(100000),
				[]int{200, 200, 200, 201, 404, 500}[rng.Intn(6)], rng.Intn(900))
			if rare < 5 && n%97 == 3 && i == 100 {
				fmt.Fprintf(&member, "2025-11-%02dT00:00:00.000Z host-%02d app[%d]: ERROR ZEBRA_QUOKKA_42 seen\n", day, host, 1000+host)
				rare++
			}
		}
		check(tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("logs/2025-11-%02d/host-%02d.%d.log", day, host, n), Mode: 0o644, Size: int64(member.Len())}))
		_, err := tw.Write(member.Bytes())
		check(err)
	}
	check(tw.Close())
	check(zw.Close())
	check(counted.w.(*bufio.Writer).Flush())
	check(f.Close())
}

type countingWriter struct {
	w interface{ Write([]byte) (int, error) }
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
