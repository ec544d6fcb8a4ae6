package fs

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFindInsideArchives: find with Archives names an archive's members
// as `tar -tf` lists them (less the hidden and denied ones, as on disk),
// pages through them by cursor to the same list, and finds below a path
// inside the archive.
func TestFindInsideArchives(t *testing.T) {
	e := newEnv(t, ResolverOpenat2, "SERVERFS_MAX_SEARCH_RESULTS=10000")
	src := t.TempDir()
	for _, f := range []string{"a/x.log", "a/b/y.log", "a/.env", "c/key.pem", "c/z.txt", "top.log"} {
		writeFile(t, filepath.Join(src, filepath.FromSlash(f)), "data\n")
	}
	cmd := exec.Command("tar", "-czf", e.path("l.tar.gz"), "a", "c", "top.log")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tar: %v %s", err, out)
	}
	out, err := exec.Command("tar", "-tzf", e.path("l.tar.gz")).Output()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, n := range strings.Fields(string(out)) {
		if n = strings.TrimSuffix(n, "/"); !strings.Contains(n, ".env") && !strings.Contains(n, "key.pem") {
			want = append(want, "l.tar.gz/"+n)
		}
	}
	ctx := context.Background()
	find := func(path, pattern string, limit int, cursor string) *FindResult {
		t.Helper()
		r, err := e.fs.FindWith(ctx, "wd", path, pattern, FindOptions{Limit: limit, Cursor: cursor, Archives: true})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	paths := func(r *FindResult) (ps []string) {
		for _, m := range r.Matches {
			ps = append(ps, m.Path)
		}
		return ps
	}
	all := find("", "*", 1000, "")
	got := slices.DeleteFunc(paths(all), func(p string) bool { return p == "l.tar.gz" })
	if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(want))) || all.Archives != 1 {
		t.Fatalf("find * inside: %v (archives %d), tar -tf: %v", got, all.Archives, want)
	}
	var paged []string
	for r, cursor := (*FindResult)(nil), ""; r == nil || r.NextCursor != ""; {
		r = find("", "*", 2, cursor)
		paged, cursor = append(paged, paths(r)...), r.NextCursor
	}
	if !slices.Equal(paged, paths(all)) {
		t.Fatalf("paged %v, whole %v", paged, paths(all))
	}
	if below := paths(find("l.tar.gz/a", "*.log", 100, "")); !slices.Equal(below, []string{"l.tar.gz/a/x.log", "l.tar.gz/a/b/y.log"}) &&
		!slices.Equal(below, []string{"l.tar.gz/a/b/y.log", "l.tar.gz/a/x.log"}) {
		t.Fatalf("below l.tar.gz/a: %v", below)
	}
	if _, err := e.fs.FindWith(ctx, "wd", "l.tar.gz", "*", FindOptions{}); err == nil {
		t.Fatal("a find into an archive without Archives answered")
	}
}
