package fs

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Benchmarks of the operations whose cost grows with the data: paging deep
// into a large file, paging a huge directory, walking a tree. Run with
//
//	go test -run XXX -bench . -benchtime 3x ./fs/
//
// The data is built once per benchmark, outside the timer, in the "data"
// directory of the first resolver's workdir, and moved (renamed) into the
// next resolver's workdir before its sub-benchmarks run.

// benchResolvers runs fn as one sub-benchmark per resolver, each on its own
// testEnv whose "data" directory fill populated once.
func benchResolvers(b *testing.B, fill func(b *testing.B, dir string), fn func(b *testing.B, e *testEnv), extraEnv ...string) {
	b.Helper()
	envs := make([]*testEnv, len(resolvers))
	for i, r := range resolvers {
		envs[i] = newEnv(b, r, extraEnv...)
	}
	fill(b, envs[0].path("data"))
	for i, e := range envs {
		if i > 0 {
			if err := os.Rename(envs[i-1].path("data"), e.path("data")); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(e.fs.Resolver().String(), func(b *testing.B) { fn(b, e) })
	}
}

const (
	benchLines    = 1_000_000
	benchLineSize = 64 // bytes per line, "\n" included: a 64,000,000-byte file
)

// writeBigText writes dir/big.txt: benchLines lines of benchLineSize bytes,
// each starting with its 1-based number.
func writeBigText(b *testing.B, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "big.txt"))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	filler := strings.Repeat("x", benchLineSize-9) // "%07d " + filler + "\n"
	for i := 1; i <= benchLines; i++ {
		fmt.Fprintf(w, "%07d %s\n", i, filler)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkReadTextPageN(b *testing.B) {
	ctx := context.Background()
	benchResolvers(b, writeBigText, func(b *testing.B, e *testEnv) {
		for _, start := range []int{1, benchLines / 2} {
			b.Run(fmt.Sprintf("line%d", start), func(b *testing.B) {
				b.ReportAllocs()
				win, err := e.fs.ReadText(ctx, "wd", "data/big.txt", start, 200)
				if err != nil {
					b.Fatal(err)
				}
				if win.EndLine != start+199 || win.BytesReturned != 200*benchLineSize ||
					!strings.HasPrefix(win.Content, fmt.Sprintf("%07d ", start)) {
					b.Fatalf("unexpected window %d..%d (%d bytes)", win.StartLine, win.EndLine, win.BytesReturned)
				}
				b.SetBytes(int64(start-1+200) * benchLineSize) // bytes scanned per read
				for b.Loop() {
					if _, err := e.fs.ReadText(ctx, "wd", "data/big.txt", start, 200); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	})
}

const benchDirEntries = 100_000

func BenchmarkList100k(b *testing.B) {
	fill := func(b *testing.B, dir string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for i := range benchDirEntries {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%06d.txt", i)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	benchResolvers(b, fill, func(b *testing.B, e *testEnv) {
		b.ReportAllocs()
		l, err := e.fs.List("wd", "data", benchDirEntries/2, 100)
		if err != nil {
			b.Fatal(err)
		}
		if l.Returned != 100 || l.Total != benchDirEntries || l.Entries[0].Name != fmt.Sprintf("f%06d.txt", benchDirEntries/2) {
			b.Fatalf("unexpected listing: %d of %d, first %q", l.Returned, l.Total, l.Entries[0].Name)
		}
		for b.Loop() {
			if _, err := e.fs.List("wd", "data", benchDirEntries/2, 100); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Find tree: 20 x 20 directories of 50 files each (20,000 files), every
// fourth a .go file (5,200).
const (
	benchFindFanout = 20
	benchFindFiles  = 50
	benchFindGo     = benchFindFanout * benchFindFanout * ((benchFindFiles + 3) / 4) // k%4 == 0
)

func BenchmarkFind(b *testing.B) {
	fill := func(b *testing.B, dir string) {
		for i := range benchFindFanout {
			for j := range benchFindFanout {
				sub := filepath.Join(dir, fmt.Sprintf("d%02d", i), fmt.Sprintf("s%02d", j))
				if err := os.MkdirAll(sub, 0o755); err != nil {
					b.Fatal(err)
				}
				for k := range benchFindFiles {
					ext := ".txt"
					if k%4 == 0 {
						ext = ".go"
					}
					if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%02d%s", k, ext)), nil, 0o644); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	}
	ctx := context.Background()
	benchResolvers(b, fill, func(b *testing.B, e *testEnv) {
		for _, c := range []struct {
			name      string
			limit     int
			truncated bool
		}{{"all", 10_000, false}, {"first100", 100, true}} {
			b.Run(c.name, func(b *testing.B) {
				b.ReportAllocs()
				res, err := e.fs.Find(ctx, "wd", "data", "*.go", c.limit)
				if err != nil {
					b.Fatal(err)
				}
				if res.Truncated != c.truncated || (!c.truncated && res.Returned != benchFindGo) {
					b.Fatalf("unexpected result: %d matches, truncated %v (%s), %d scanned", res.Returned, res.Truncated, res.TruncatedReason, res.EntriesScanned)
				}
				for b.Loop() {
					if _, err := e.fs.Find(ctx, "wd", "data", "*.go", c.limit); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}, "SERVERFS_MAX_SEARCH_RESULTS=10000")
}

func BenchmarkStat(b *testing.B) {
	fill := func(b *testing.B, dir string) {
		writeFile(b, filepath.Join(dir, "top.txt"), "x\n")
		writeFile(b, filepath.Join(dir, "a", "b", "c", "d", "e", "f", "deep.go"), "package x\n")
	}
	benchResolvers(b, fill, func(b *testing.B, e *testEnv) {
		for _, p := range []string{"data/top.txt", "data/a/b/c/d/e/f/deep.go"} {
			b.Run(fmt.Sprintf("depth%d", strings.Count(p, "/")+1), func(b *testing.B) {
				b.ReportAllocs()
				fi, err := e.fs.Stat("wd", p)
				if err != nil {
					b.Fatal(err)
				}
				if fi.Type != TypeFile || fi.Path != p {
					b.Fatalf("unexpected stat %+v", fi)
				}
				for b.Loop() {
					if _, err := e.fs.Stat("wd", p); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	})
}
