package search

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"
)

// benchTree is the tree the search benchmarks walk: $SEARCH_BENCH_TREE
// when set (a GOROOT/src copy made once, as bench/mcpalt/search.sh keeps
// one), else a fresh copy of GOROOT/src.
func benchTree(b *testing.B) string {
	if dir := os.Getenv("SEARCH_BENCH_TREE"); dir != "" {
		return dir
	}
	return copyGoroot(b)
}

// BenchmarkSearchTree times search_text over a whole tree, in process,
// with the CPU it took per search (on a shared machine the steadier
// number):
//
//	SEARCH_BENCH_TREE=/tmp/goroot go test -run '^$' -bench SearchTree -benchtime 20x ./search
func BenchmarkSearchTree(b *testing.B) {
	dir := benchTree(b)
	e := newTenvAt(b, "go", dir).eng
	if n, err := strconv.Atoi(os.Getenv("SEARCH_BENCH_WORKERS")); err == nil {
		e.workers = n
	}
	if n, err := strconv.Atoi(os.Getenv("SEARCH_BENCH_READERS")); err == nil {
		e.readers = n
	}
	for _, c := range []struct {
		name string
		req  Request
	}{
		{"literal-absent", Request{Query: "ZEBRA_QUOKKA_NOPE", CaseSensitive: true}},
		{"literal-absent-i", Request{Query: "ZEBRA_QUOKKA_NOPE"}},
		{"literal-rare", Request{Query: "Kelvin", CaseSensitive: true}},
		{"regex-func-Dial", Request{Query: `func \w+Dial`, Regex: true, CaseSensitive: true, Output: OutputCount}},
		{"regex-Err-EOF", Request{Query: `Err[A-Z]\w*EOF`, Regex: true, CaseSensitive: true, Output: OutputCount}},
		{"regex-i-unexpected-eof", Request{Query: `(?i)unexpected eof`, Regex: true, CaseSensitive: true, Output: OutputCount}},
		{"regex-no-literal", Request{Query: `[0-9]{4}-[0-9]{2}`, Regex: true, CaseSensitive: true, Output: OutputCount}},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := c.req
			req.Workdir = "go"
			cpu := cpuTime(syscall.RUSAGE_SELF)
			for b.Loop() {
				if _, err := e.Search(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime(syscall.RUSAGE_SELF)-cpu)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}
