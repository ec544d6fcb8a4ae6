package mcp

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/search"
)

// TestSearchPagesAndCounts, through MCP over HTTP on GOROOT/src/net (read
// only): counting TODO per file is one call, and following next_cursor
// page by page returns every match (and every find_files match) exactly
// once, in the order of one unlimited call.
func TestSearchPagesAndCounts(t *testing.T) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "src", "net")
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	cfg, err := sfs.LoadConfig([]string{"SERVERFS_MAX_SEARCH_RESULTS=10000"}, []string{"net=" + dir})
	if err != nil {
		t.Fatal(err)
	}
	f, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	e := &testEnv{parent: dir, root: dir, log: &syncBuffer{}}
	e.deps = &Deps{FS: f, Search: search.New(f), Log: &Logger{Logger: slog.New(slog.NewJSONHandler(e.log, nil))}}
	cs := e.client(t, e.serveHTTP(t))

	// One call counts TODO in every file.
	counts := searchResult(t, e.call(t, cs, "search_text", map[string]any{"workdir": "net", "query": "TODO", "output": "count", "limit": 1000}))
	if counts.Truncated || counts.NextCursor != "" || len(counts.Files) < 10 || counts.Matches != nil {
		t.Fatalf("count: %+v", counts)
	}
	perFile := map[string]int{}
	sum := 0
	for _, fh := range counts.Files {
		perFile[fh.Path] = fh.Count
		sum += fh.Count
	}
	if sum != counts.Total {
		t.Fatalf("count: total %d, counts sum to %d", counts.Total, sum)
	}

	all := searchResult(t, e.call(t, cs, "search_text", map[string]any{"workdir": "net", "query": "TODO", "limit": 10000}))
	if all.Truncated || all.Returned != counts.Total {
		t.Fatalf("unlimited: %d matches (truncated %v), count says %d", all.Returned, all.Truncated, counts.Total)
	}
	key := func(m search.Match) string { return fmt.Sprintf("%s:%d", m.Path, m.Line) }
	var want []string
	for _, m := range all.Matches {
		want = append(want, key(m))
	}
	var got []string
	args := map[string]any{"workdir": "net", "query": "TODO", "limit": 17}
	for n := 0; ; n++ {
		if n > 100 {
			t.Fatal("no end after 100 pages")
		}
		page := searchResult(t, e.call(t, cs, "search_text", args))
		for _, m := range page.Matches {
			got = append(got, key(m))
		}
		if page.NextCursor == "" {
			break
		}
		args["cursor"] = page.NextCursor
	}
	// Each answer lists its files in key order, not walk order: compare
	// the sets (the search package tests the order of pages).
	slices.Sort(got)
	slices.Sort(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("pages: %d matches, unlimited: %d; they differ", len(got), len(want))
	}
	pageCounts := map[string]int{}
	for _, k := range got {
		pageCounts[k[:strings.LastIndexByte(k, ':')]]++
	}
	if fmt.Sprint(pageCounts) != fmt.Sprint(perFile) {
		t.Errorf("per-file counts of the pages differ from output count")
	}

	// find_files pages.
	allFiles := structured[findOut](t, e.call(t, cs, "find_files", map[string]any{"workdir": "net", "pattern": "*_test.go", "limit": 10000}))
	var gotFiles []string
	wantFiles := allFiles.paths()
	slices.Sort(wantFiles)
	fargs := map[string]any{"workdir": "net", "pattern": "*_test.go", "limit": 50}
	for n := 0; ; n++ {
		if n > 100 {
			t.Fatal("find_files: no end after 100 pages")
		}
		page := structured[findOut](t, e.call(t, cs, "find_files", fargs))
		gotFiles = append(gotFiles, page.paths()...)
		if page.NextCursor == "" {
			break
		}
		fargs["cursor"] = page.NextCursor
	}
	slices.Sort(gotFiles) // each page's paths come grouped by directory
	if len(wantFiles) < 100 || strings.Join(gotFiles, " ") != strings.Join(wantFiles, " ") {
		t.Fatalf("find_files pages: %d, unlimited %d; they differ", len(gotFiles), len(wantFiles))
	}

	// A cursor from another query is an argument error.
	toolErr(t, e.call(t, cs, "search_text", map[string]any{"workdir": "net", "query": "FIXME", "cursor": args["cursor"]}), "INVALID_ARGUMENT: ")
}
