package search

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// TestRankTimeout: a ranked search that reaches the search timeout answers
// with the files ranked by then (truncated_reason timeout), the file it
// was stuck in left out, every goroutine ended; with none ranked it is
// SEARCH_TIMEOUT.
func TestRankTimeout(t *testing.T) {
	e := newTenv(t, "SERVERFS_SEARCH_TIMEOUT_SECONDS=1")
	e.write(t, "a.txt", []byte("zebra crossing\n"))
	e.write(t, "b.txt", []byte("zebra\n"))
	e.write(t, "stuck.txt", []byte("zebra crossing stripes\n"))
	e.eng.beforeFile = func(ctx context.Context, path string) {
		if path == "stuck.txt" {
			<-ctx.Done() // a file that reads until the deadline
		}
	}
	before := runtime.NumGoroutine()
	start := time.Now()
	r, err := e.eng.Rank(context.Background(), RankRequest{Workdirs: []string{"wd"}, Terms: QueryTerms("zebra crossing stripes")})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("answered after %v, with a 1 s timeout", d)
	}
	var paths []string
	for _, f := range r.Files {
		paths = append(paths, f.Path)
	}
	if strings.Join(paths, ",") != "a.txt,b.txt" || !r.Truncated || r.TruncatedReason != sfs.TruncatedTimeout {
		t.Errorf("files %v, truncated %v %q", paths, r.Truncated, r.TruncatedReason)
	}
	// The timeout's timer cancels the context from a goroutine of its
	// own, which may still be winding down when Rank returns.
	if n := goroutinesBack(before); n > before {
		t.Errorf("%d goroutines after the search, %d before", n, before)
	}
	_, err = e.eng.Rank(context.Background(), RankRequest{Workdirs: []string{"wd"}, Terms: []string{"stripes"}})
	if errs.CodeOf(err) != errs.SearchTimeout {
		t.Errorf("nothing ranked by the timeout: %v", err)
	}
}

// TestRankDensityCountsEveryLine: a file's match density is its hit lines
// over all its lines, those after its last match included: one hit in
// the first of 1,000 lines is sparser than one in 2 lines (counting only
// up to the last match made the long file the denser, 1 of 1).
func TestRankDensityCountsEveryLine(t *testing.T) {
	e := newTenv(t)
	e.write(t, "a-long.txt", []byte("zebra\n"+strings.Repeat("filler\n", 999)))
	e.write(t, "b-short.txt", []byte("filler\nzebra\n"))
	r, err := e.eng.Rank(context.Background(), RankRequest{Workdirs: []string{"wd"}, Terms: []string{"zebra"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range r.Files {
		got = append(got, fmt.Sprintf("%s %d/%d", f.Path, f.HitLines, f.Lines))
	}
	if want := "b-short.txt 1/2,a-long.txt 1/1000"; strings.Join(got, ",") != want {
		t.Errorf("ranked %q, want %q", got, want)
	}
}

// TestRankLineStart: lineStart finds the last line of a buffer as
// bytes.LastIndexByte does, a 0x0b byte above a '\n' (a false flag of
// the 8-byte scan) included.
func TestRankLineStart(t *testing.T) {
	for _, s := range []string{"", "a", "\n", "abc\n", "\nabcdefghijklmnop", "0123456789\nabc", "x\n\x0bbcdefgh", "\n\x0b\n\x0b\x0b\x0b\x0b\x0b\x0b\x0b", strings.Repeat("ab\ncdefghijk", 5)} {
		for i := range len(s) + 1 {
			b := []byte(s[:i])
			if got, want := lineStart(b), bytes.LastIndexByte(b, '\n')+1; got != want {
				t.Errorf("lineStart(%q) = %d, want %d", b, got, want)
			}
		}
	}
}

// TestRankBoilerplate: a header line many files share (a licence's "…
// in the LICENSE file.") counts for nothing: the files matching only
// there are not listed; the one answering is, titled by the line whose
// terms weigh most.
func TestRankBoilerplate(t *testing.T) {
	e := newTenv(t)
	header := "// Copyright 2009 The Go Authors.\n// license that can be found in the LICENSE file.\n\npackage net\n"
	for i := range 12 {
		e.write(t, fmt.Sprintf("f%02d.go", i), []byte(header+"\nfunc f() {}\n"))
	}
	e.write(t, "hosts.go", []byte(header+"\n// cacheMaxAge is how long the hosts file is cached.\nconst cacheMaxAge = 5\n"))
	r, err := e.eng.Rank(context.Background(), RankRequest{Workdirs: []string{"wd"}, Terms: QueryTerms("how long does the hosts file cache last")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range r.Files {
		got = append(got, fmt.Sprintf("%s:%d: %s", f.Path, f.Line, f.Text))
	}
	if want := "hosts.go:6: // cacheMaxAge is how long the hosts file is cached."; strings.Join(got, ",") != want {
		t.Errorf("ranked %q, want %q", got, want)
	}
}
