package search

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// genSearchTree builds a git work tree of nested directories with odd
// names, .gitignore files (negations, directory rules, a nested
// repository), symlinks to directories and files, and NEEDLE lines.
func genSearchTree(t *testing.T, e *tenv, seed int64) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	names := []string{"a", "a b", "a-b", "a.b", "a0", "A", "Z", "_x", "sub", "sub-1", "sübdir", "日本", "~t", "build", "keep.log", "x.log"}
	e.write(t, ".git/HEAD", []byte("ref: refs/heads/main\n"))
	e.write(t, ".gitignore", []byte("*.log\n!keep.log\nbuild/\n"))
	var dirs []string
	var gen func(dir string, depth int)
	gen = func(dir string, depth int) {
		dirs = append(dirs, dir)
		if err := os.MkdirAll(filepath.Join(e.root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range rng.Perm(len(names))[:4+rng.Intn(6)] {
			p := filepath.Join(dir, names[n])
			switch k := rng.Intn(10); {
			case (k < 4 || depth < 2 && k < 7) && depth < 4:
				gen(p, depth+1)
			case k < 9:
				var b []byte
				for i := 0; i < rng.Intn(6); i++ {
					b = fmt.Appendf(b, "line %d\nNEEDLE %s %d\n", i, p, i)
				}
				e.write(t, p, b)
			default:
				if err := os.Symlink(filepath.Join(e.root, dirs[rng.Intn(len(dirs))]), filepath.Join(e.root, p)); err != nil {
					t.Fatal(err)
				}
			}
		}
		switch rng.Intn(6) {
		case 0:
			e.write(t, filepath.Join(dir, ".gitignore"), []byte("a*\n!a.b\n"))
		case 1:
			e.write(t, filepath.Join(dir, ".gitignore"), []byte("/Z/\n!x.log\n"))
		case 2:
			if depth == 2 {
				e.write(t, filepath.Join(dir, ".git/HEAD"), []byte("ref: refs/heads/main\n")) // a nested repository
			}
		}
	}
	gen("", 0)
	if err := os.MkdirAll(filepath.Join(e.root, "emptydir"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestSearchReadAheadSameAnswers: the search reading directories ahead
// answers exactly as the sequential walk does (results in the same order,
// statistics, truncation and next_cursor), in every output mode, with a
// glob, ignored files included or not, and under small walk limits.
func TestSearchReadAheadSameAnswers(t *testing.T) {
	for _, walkLimit := range []string{"1000000", "60"} {
		e := newTenv(t, "SERVERFS_MAX_SEARCH_RESULTS=10000", "SERVERFS_MAX_WALK_ENTRIES="+walkLimit)
		genSearchTree(t, e, 16)
		seq := New(e.fs)
		seq.readers = 0
		for _, req := range []Request{
			{Query: "NEEDLE", CaseSensitive: true, Limit: 10000},
			{Query: "needle", Limit: 7},
			{Query: "NEEDLE", IncludeIgnored: true, Limit: 10000},
			{Query: "NEEDLE", Output: OutputFiles, Limit: 10000},
			{Query: "NEEDLE", Output: OutputCount, Limit: 10000},
			{Query: "NEEDLE", Context: 1, Limit: 10000},
			{Query: "NEEDLE", Glob: "*.log", Limit: 10000},
			{Query: "NEEDLE", Path: "sub", Limit: 10000},
		} {
			req.Workdir = "wd"
			for readers := 1; readers <= 4; readers += 3 {
				par := New(e.fs)
				par.readers = readers
				want, err1 := seq.Search(context.Background(), req)
				got, err2 := par.Search(context.Background(), req)
				if errs.CodeOf(err1) != errs.CodeOf(err2) {
					t.Fatalf("%+v readers %d: errors %v, %v", req, readers, err2, err1)
				}
				if want != nil && got != nil && want.TruncatedReason == sfs.TruncatedLimit {
					// How far the walk got past the limit's last file is
					// timing, with or without read ahead: it counts files
					// it skipped as ignored.
					got.FilesScanned, got.FilesSkipped, got.Skipped = want.FilesScanned, want.FilesSkipped, want.Skipped
				}
				wj, _ := json.Marshal(want)
				gj, _ := json.Marshal(got)
				if string(wj) != string(gj) {
					t.Fatalf("walk limit %s %+v readers %d:\n got %.2000s\nwant %.2000s", walkLimit, req, readers, gj, wj)
				}
			}
		}
	}
}

// TestSearchReadAheadCursor: pages followed through next_cursor under the
// read-ahead walk (and a walk limit cutting pages inside directories)
// return every match of one unlimited sequential search exactly once, in
// its order.
func TestSearchReadAheadCursor(t *testing.T) {
	// 60 entries: more than the directories above any file hold together
	// (a page must get past them to resume), fewer than the tree.
	e := newTenv(t, "SERVERFS_MAX_SEARCH_RESULTS=10000", "SERVERFS_MAX_WALK_ENTRIES=60")
	genSearchTree(t, e, 7)
	seq := New(mustFS(t, e.root))
	seq.readers = 0
	all, err := seq.Search(context.Background(), Request{Workdir: "wd", Query: "NEEDLE", CaseSensitive: true, Limit: 10000})
	if err != nil || all.Truncated || len(all.Matches) < 50 {
		t.Fatalf("unlimited search: %v, %d matches, truncated %v", err, len(all.Matches), all != nil && all.Truncated)
	}
	want := lines(all)
	par := New(e.fs)
	par.readers = 3
	for _, limit := range []int{3, 40} {
		req := Request{Workdir: "wd", Query: "NEEDLE", CaseSensitive: true, Limit: limit}
		got := ""
		for n := 0; ; n++ {
			if n > 2000 {
				t.Fatalf("limit %d: no end", limit)
			}
			res, err := par.Search(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			got += lines(res)
			if res.NextCursor == "" {
				break
			}
			req.Cursor = res.NextCursor
		}
		if got != want {
			t.Fatalf("limit %d: pages give\n%s\nwant\n%s", limit, got, want)
		}
	}
}

// TestSearchReadAheadGoroutines: a search cancelled or timed out while
// its walk reads ahead, or stopped at its limit, leaves no goroutine
// behind. The hook holds one file until the context ends, with the walk
// and its readers still going (no sleeps: it waits on ctx.Done).
func TestSearchReadAheadGoroutines(t *testing.T) {
	e := newTenv(t)
	for i := 0; i < 40; i++ {
		for j := 0; j < 5; j++ {
			e.write(t, fmt.Sprintf("d%02d/e%d/f.txt", i, j), []byte("hit\n"))
		}
	}
	base := runtime.NumGoroutine()
	check := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() != base && time.Now().Before(deadline); {
			runtime.Gosched()
		}
		if n := runtime.NumGoroutine(); n != base {
			buf := make([]byte, 1<<20)
			t.Fatalf("%s: %d goroutines, baseline %d\n%s", what, n, base, buf[:runtime.Stack(buf, true)])
		}
	}
	var held chan struct{} // set before each search: the hook reports there
	e.eng.beforeFile = func(ctx context.Context, path string) {
		if path == "d03/e1/f.txt" {
			if held != nil {
				held <- struct{}{}
			}
			<-ctx.Done()
		}
	}
	for i := 0; i < 5; i++ {
		held = make(chan struct{}, 1)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-held; cancel() }()
		res, err := e.eng.Search(ctx, Request{Workdir: "wd", Query: "hit", Limit: 100})
		if err != nil {
			wantCode(t, err, errs.Canceled)
		} else if res.TruncatedReason != sfs.TruncatedTimeout || res.Returned >= 200 {
			t.Fatalf("cancelled: %+v", res)
		}
		cancel()
		check("cancelled")

		held = nil
		ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
		res, err = e.eng.Search(ctx, Request{Workdir: "wd", Query: "hit", Limit: 100})
		cancel()
		if err == nil && res.TruncatedReason != sfs.TruncatedTimeout {
			t.Fatalf("timeout: %+v", res)
		}
		check("timeout")

		e.search(t, Request{Query: "hit", Limit: 3})
		check("limit")
	}
}
