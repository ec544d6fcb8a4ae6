package fs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

func treePaths(tr *Tree) []string {
	var ps []string
	for _, e := range tr.Entries {
		ps = append(ps, e.Path)
	}
	return ps
}

// findOrder is Find's order of everything below dir, cut at depth levels:
// the order a tree must list in.
func findOrder(t *testing.T, e *testEnv, dir string, depth int, dirsOnly bool) []string {
	t.Helper()
	res, err := e.fs.Find(context.Background(), "wd", dir, "**", 10000)
	if err != nil || res.Truncated {
		t.Fatalf("find: %v %+v", err, res)
	}
	var ps []string
	for _, m := range res.Matches {
		rel := strings.TrimPrefix(m.Path, dir+"/")
		if dir == "" {
			rel = m.Path
		}
		if strings.Count(rel, "/") < depth && (!dirsOnly || m.Type == TypeDirectory) {
			ps = append(ps, rel)
		}
	}
	return ps
}

// gnuFind is find(1)'s set of paths below dir, at most depth levels down.
func gnuFind(t *testing.T, root string, depth int) []string {
	t.Helper()
	out, err := exec.Command("find", root, "-mindepth", "1", "-maxdepth", fmt.Sprint(depth), "-printf", "%P\n").Output()
	if err != nil {
		t.Fatal(err)
	}
	ps := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	sort.Strings(ps)
	return ps
}

func TestTree(t *testing.T) {
	e := newEnv(t, ResolverOpenat2, "SERVERFS_MAX_LIST_ENTRIES=1000", "SERVERFS_MAX_SEARCH_RESULTS=10000")
	for _, p := range []string{"a.txt", "b/c.txt", "b/d/e.txt", "b/d/f/g.txt", "b/d/f/h/i/j.txt", "b-x/k.txt", "b.y", "empty/", "z/y/x/w/v/u/t.txt"} {
		if strings.HasSuffix(p, "/") {
			e.mkdir(t, p)
			continue
		}
		e.write(t, p, p+"\n")
	}
	e.symlink(t, "b", "link")
	ctx := context.Background()
	for depth := 1; depth <= MaxTreeDepth; depth++ {
		for _, dirsOnly := range []bool{false, true} {
			tr, err := e.fs.Tree(ctx, "wd", "", TreeOptions{Depth: depth, DirsOnly: dirsOnly})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := treePaths(tr), findOrder(t, e, "", depth, dirsOnly); !slices.Equal(got, want) {
				t.Errorf("depth %d dirs_only %v: %v, want find's order %v", depth, dirsOnly, got, want)
			}
			if !dirsOnly {
				got := slices.Sorted(slices.Values(treePaths(tr)))
				if want := gnuFind(t, e.root, depth); !slices.Equal(got, want) {
					t.Errorf("depth %d: %v, find -maxdepth says %v", depth, got, want)
				}
			}
			for _, en := range tr.Entries {
				if en.Listed != (en.Type == TypeDirectory && en.Depth < depth) || en.Depth != strings.Count(en.Path, "/")+1 {
					t.Errorf("depth %d: %+v", depth, en)
				}
				if en.Type == TypeFile && en.Size != int64(len(en.Path)+1) {
					t.Errorf("%s: size %d", en.Path, en.Size)
				}
				if en.ModifiedAt != "" {
					t.Errorf("%s: a time without times", en.Path)
				}
			}
			if tr.HasMore || tr.Truncated != "" {
				t.Errorf("depth %d: has_more %v truncated %q", depth, tr.HasMore, tr.Truncated)
			}
		}
	}
	// Below the root, paths are relative to the listed directory.
	tr, err := e.fs.Tree(ctx, "wd", "b/d", TreeOptions{Depth: 2, Times: true})
	if err != nil || !slices.Equal(treePaths(tr), []string{"e.txt", "f", "f/g.txt", "f/h"}) || tr.Path != "b/d" || tr.Entries[0].ModifiedAt == "" {
		t.Fatalf("b/d: %v %+v", err, tr)
	}
	// Pages by offset add up to the whole tree.
	all, _ := e.fs.Tree(ctx, "wd", "", TreeOptions{Depth: 5})
	for _, limit := range []int{1, 2, 3, 7} {
		var got []string
		off := 0
		for {
			p, err := e.fs.Tree(ctx, "wd", "", TreeOptions{Depth: 5, Offset: off, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, treePaths(p)...)
			if !p.HasMore {
				break
			}
			if p.NextOffset != off+limit || len(p.Entries) != limit {
				t.Fatalf("page at %d: %+v", off, p)
			}
			off = p.NextOffset
		}
		if !slices.Equal(got, treePaths(all)) {
			t.Errorf("limit %d: pages %v, want %v", limit, got, treePaths(all))
		}
	}
	for _, o := range []TreeOptions{{Depth: 0}, {Depth: 6}, {Depth: 2, Offset: -1}, {Depth: 2, Limit: 1001}} {
		if _, err := e.fs.Tree(ctx, "wd", "", o); errs.CodeOf(err) != errs.InvalidArgument {
			t.Errorf("%+v: %v", o, err)
		}
	}
	if _, err := e.fs.Tree(ctx, "wd", "a.txt", TreeOptions{Depth: 2}); errs.CodeOf(err) != errs.NotADirectory {
		t.Errorf("a file: %v", err)
	}
}

// TestTreeNeverLeavesTheTree: a tree of the hostile tree lists symlinks
// without following them and never shows hidden or denied entries.
func TestTreeNeverLeavesTheTree(t *testing.T) {
	forEachResolver(t, func(t *testing.T, r Resolver) {
		e := newEnv(t, r)
		setupHostileTree(t, e)
		tr, err := e.fs.Tree(context.Background(), "wd", "", TreeOptions{Depth: MaxTreeDepth, Limit: 500, Times: true})
		if err != nil {
			t.Fatal(err)
		}
		assertNoLeak(t, e, tr, nil)
		got := map[string]EntryType{}
		for _, en := range tr.Entries {
			got[en.Path] = en.Type
		}
		for _, p := range []string{"link-dir", "out", "evil", "etc", "dangling", "chain1", "subdir/rel", "abs-inside-dir"} {
			if got[p] != TypeSymlink {
				t.Errorf("%s: want a symlink entry, got %q", p, got[p])
			}
		}
		for p := range got {
			for _, bad := range []string{"link-dir/", "out/", "evil/", "etc/", "reldir/", "abs-inside-dir/", ".hidden", ".hdir", "id_rsa", ".ENV", ".PEM", ".ssh"} {
				if strings.Contains(p, bad) {
					t.Errorf("tree reached %q", p)
				}
			}
		}
		if got["subdir/a.txt"] != TypeFile {
			t.Errorf("tree missed subdir/a.txt: %v", got)
		}
	})
}

// fastDir is a scratch directory on tmpfs when the machine has one (this
// test creates 200,000 files), else under the test's temporary directory.
func fastDir(t *testing.T) string {
	t.Helper()
	var st unix.Statfs_t
	if unix.Statfs("/dev/shm", &st) == nil && st.Type == unix.TMPFS_MAGIC {
		d, err := os.MkdirTemp("/dev/shm", "serverfs-tree-")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

// TestTreeHuge: a tree over 200,000 entries and one over 2,000-deep
// nesting stay within their caps: a page is at most limit entries, a walk
// that would read more than SERVERFS_MAX_WALK_ENTRIES says walk_limit,
// depth never goes past 5 levels, and every answer comes well within the
// search timeout.
func TestTreeHuge(t *testing.T) {
	root := fastDir(t)
	wd := filepath.Join(root, "wd")
	if err := os.Mkdir(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	const dirs, perDir = 200, 1000
	for i := range dirs {
		d := filepath.Join(wd, "big", fmt.Sprintf("d%03d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		fd, err := unix.Open(d, unix.O_DIRECTORY|unix.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		for j := range perDir {
			f, err := unix.Openat(fd, fmt.Sprintf("f%04d", j), unix.O_CREAT|unix.O_WRONLY, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			unix.Close(f)
		}
		unix.Close(fd)
	}
	// 2,000 nested directories: "n/n/n/...".
	fd, err := unix.Open(wd, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 2000 {
		if err := unix.Mkdirat(fd, "n", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, "n", unix.O_DIRECTORY|unix.O_RDONLY, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	unix.Close(fd)

	const timeout = 5 * time.Second
	cfg, err := LoadConfig([]string{"SERVERFS_SEARCH_TIMEOUT_SECONDS=5", "SERVERFS_MAX_LIST_ENTRIES=500"}, []string{"wd=" + wd})
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	timed := func(what string, o TreeOptions, path string) *Tree {
		t.Helper()
		start := time.Now()
		tr, err := f.Tree(ctx, "wd", path, o)
		if d := time.Since(start); d > 2*timeout {
			t.Errorf("%s took %s, over twice the %s timeout", what, d, timeout)
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(tr.Entries) > 500 {
			t.Errorf("%s: %d entries, over the limit", what, len(tr.Entries))
		}
		return tr
	}
	// The first page of a 200,000-entry tree.
	tr := timed("first page", TreeOptions{Depth: 3, Limit: 500}, "")
	if !tr.HasMore || tr.NextOffset != 500 || len(tr.Entries) != 500 || tr.Entries[1].Path != "big/d000" {
		t.Errorf("first page: has_more %v next %d, %d entries, %v", tr.HasMore, tr.NextOffset, len(tr.Entries), treePaths(tr)[:3])
	}
	// A page past 200,000 entries: the walk stops at the walk limit.
	tr = timed("last page", TreeOptions{Depth: 3, Offset: 199_900, Limit: 500}, "")
	if tr.HasMore || tr.Truncated != TruncatedWalkLimit {
		t.Errorf("past the walk limit: has_more %v truncated %q, %d entries", tr.HasMore, tr.Truncated, len(tr.Entries))
	}
	// Directories only: the 200 directories, without their files' names
	// costing a page. One level down the walk must read every file to find
	// subdirectories, and says where it stopped.
	tr = timed("dirs only", TreeOptions{Depth: 1, DirsOnly: true, Limit: 500}, "big")
	if len(tr.Entries) != dirs || tr.HasMore || tr.Truncated != "" {
		t.Errorf("dirs only: %d entries, has_more %v, truncated %q", len(tr.Entries), tr.HasMore, tr.Truncated)
	}
	tr = timed("dirs only, depth 2", TreeOptions{Depth: 2, DirsOnly: true, Limit: 500}, "big")
	if len(tr.Entries) != dirs || tr.HasMore || tr.Truncated != TruncatedWalkLimit {
		t.Errorf("dirs only, depth 2: %d entries, has_more %v, truncated %q", len(tr.Entries), tr.HasMore, tr.Truncated)
	}
	// 2,000-deep nesting: five levels, from the root and from deep down.
	tr = timed("deep", TreeOptions{Depth: MaxTreeDepth}, "n")
	if got := treePaths(tr); !slices.Equal(got, []string{"n", "n/n", "n/n/n", "n/n/n/n", "n/n/n/n/n"}) {
		t.Errorf("deep: %v", got)
	}
	deep := strings.TrimSuffix(strings.Repeat("n/", 1990), "/")
	tr = timed("deep below", TreeOptions{Depth: MaxTreeDepth}, deep)
	if len(tr.Entries) != 5 || !tr.Entries[3].Listed || tr.Entries[4].Listed || tr.Path != deep {
		t.Errorf("deep below: %+v", tr.Entries)
	}
}

// TestTreeTotal: a tree page with more after it says how many entries the
// whole tree has, counted past the page up to treeCountAhead; a tree
// larger than that has no total (0) rather than a walk to its end.
func TestTreeTotal(t *testing.T) {
	e := newEnv(t, ResolverOpenat2)
	for i := range 30 {
		e.write(t, fmt.Sprintf("d%02d/f.txt", i), "x\n")
	}
	tr, err := e.fs.Tree(context.Background(), "wd", "", TreeOptions{Depth: 2, Limit: 7})
	if err != nil || !tr.HasMore || tr.Total != 60 || len(tr.Entries) != 7 {
		t.Fatalf("small tree: total %d, has_more %v, %d entries, %v", tr.Total, tr.HasMore, len(tr.Entries), err)
	}
	if whole, err := e.fs.Tree(context.Background(), "wd", "", TreeOptions{Depth: 2, Limit: 100}); err != nil || whole.HasMore || whole.Total != 0 {
		t.Fatalf("a whole tree has no total: %+v %v", whole.Total, err)
	}
	big := filepath.Join(e.root, "big")
	if err := os.Mkdir(big, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range treeCountAhead + 50 {
		if err := os.WriteFile(filepath.Join(big, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tr, err = e.fs.Tree(context.Background(), "wd", "big", TreeOptions{Depth: 1, Limit: 5})
	if err != nil || !tr.HasMore || tr.Total != 0 {
		t.Fatalf("a tree past the count bound: total %d, %v", tr.Total, err)
	}
}
