package fs

import (
	"context"
	"fmt"
	"github.com/serverfs/serverfs/internal/errs"
	"os"
	"strings"
	"testing"
	"time"
)

func names(l *Listing) []string {
	var out []string
	for _, e := range l.Entries {
		out = append(out, e.Name)
	}
	return out
}

func TestList(t *testing.T) {
	forEachResolver(t, func(t *testing.T, r Resolver) {
		e := newEnv(t, r)
		e.mkdir(t, "empty")
		e.write(t, "d/b.txt", "bb")
		e.write(t, "d/a.txt", "a")
		e.write(t, "d/C.txt", "")
		e.mkdir(t, "d/sub")
		e.write(t, "d/.hidden", "h")
		e.write(t, "d/server.key", "k")
		e.symlink(t, "a.txt", "d/link")
		mtime := time.Date(2026, 9, 17, 1, 20, 30, 0, time.UTC)
		if err := os.Chtimes(e.path("d/a.txt"), mtime, mtime); err != nil {
			t.Fatal(err)
		}

		l, err := e.fs.List("wd", "empty", 0, 0)
		if err != nil || l.Returned != 0 || l.HasMore || l.Entries == nil {
			t.Fatalf("empty: %+v %v", l, err)
		}
		l, err = e.fs.List("wd", "d", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(names(l), ","); got != "C.txt,a.txt,b.txt,link,sub" {
			t.Fatalf("sorted, filtered names: %s", got)
		}
		byName := map[string]Entry{}
		for _, en := range l.Entries {
			byName[en.Name] = en
		}
		if a := byName["a.txt"]; a.Type != TypeFile || *a.Size != 1 || a.ModifiedAt != "2026-09-17T01:20:30Z" || a.Path != "d/a.txt" {
			t.Fatalf("a.txt: %+v", a)
		}
		if s := byName["sub"]; s.Type != TypeDirectory || s.Size != nil {
			t.Fatalf("sub: %+v", s)
		}
		if s := byName["link"]; s.Type != TypeSymlink || s.Size != nil {
			t.Fatalf("link: %+v", s)
		}
		if l.Total != 5 || l.Limit != 100 {
			t.Fatalf("total %d limit %d", l.Total, l.Limit)
		}

		// offset, limit, has_more
		var all []string
		for off := 0; ; {
			p, err := e.fs.List("wd", "d", off, 2)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, names(p)...)
			if !p.HasMore {
				if p.NextOffset != nil {
					t.Fatal("next_offset without has_more")
				}
				break
			}
			off = *p.NextOffset
		}
		if strings.Join(all, ",") != "C.txt,a.txt,b.txt,link,sub" {
			t.Fatalf("paged: %v", all)
		}
		p, err := e.fs.List("wd", "d", 99, 10)
		if err != nil || p.Returned != 0 || p.HasMore {
			t.Fatalf("offset past end: %+v %v", p, err)
		}
		for _, a := range [][2]int{{-1, 10}, {0, -1}, {0, 501}} {
			_, err := e.fs.List("wd", "d", a[0], a[1])
			wantCode(t, err, errs.InvalidArgument)
		}
		_, err = e.fs.List("wd", "d/a.txt", 0, 0)
		wantCode(t, err, errs.NotADirectory)
		l, err = e.fs.List("wd", "", 0, 0)
		if err != nil || l.Path != "" {
			t.Fatalf("root: %+v %v", l, err)
		}
	})
}

func TestListDirectoryTooLarge(t *testing.T) {
	e := newEnv(t, ResolverOpenat2, "SERVERFS_MAX_WALK_ENTRIES=10")
	for i := 0; i < 11; i++ {
		e.write(t, fmt.Sprintf("big/f%02d", i), "")
	}
	_, err := e.fs.List("wd", "big", 0, 0)
	wantCode(t, err, errs.DirectoryTooLarge)
	e.write(t, "ok/one", "")
	if _, err := e.fs.List("wd", "ok", 0, 0); err != nil {
		t.Fatal(err)
	}
}

func findPaths(r *FindResult) string {
	var out []string
	for _, m := range r.Matches {
		out = append(out, m.Path)
	}
	return strings.Join(out, ",")
}

func TestFind(t *testing.T) {
	forEachResolver(t, func(t *testing.T, r Resolver) {
		e := newEnv(t, r)
		for _, p := range []string{
			"app.py", "lib/util.py", "lib/deep/x/y/z.py", "lib/readme.md",
			"PandaWiki/docker-compose.yml", "infra/docker-compose.prod.yml", "infra/compose.yaml",
			".venv/lib/site.py", "node/.cache/c.py", "keys/server.pem", "x/a", "x/b/x/a",
		} {
			e.write(t, p, "")
		}
		e.mkdir(t, "outside-target")
		e.write(t, "outside-target/in-link.py", "")
		e.symlink(t, "outside-target", "linkdir")
		ctx := context.Background()
		find := func(path, pattern string, limit int) *FindResult {
			t.Helper()
			res, err := e.fs.Find(ctx, "wd", path, pattern, limit)
			if err != nil {
				t.Fatalf("find %q %q: %v", path, pattern, err)
			}
			return res
		}
		if got := findPaths(find("", "*.py", 0)); got != "app.py,lib/deep/x/y/z.py,lib/util.py,outside-target/in-link.py" {
			t.Fatalf("*.py: %s", got)
		}
		if got := findPaths(find("", "*compose*.yml", 0)); got != "PandaWiki/docker-compose.yml,infra/docker-compose.prod.yml" {
			t.Fatalf("*compose*.yml: %s", got)
		}
		if got := findPaths(find("lib", "*.py", 0)); got != "lib/deep/x/y/z.py,lib/util.py" {
			t.Fatalf("nested from lib: %s", got)
		}
		// With "/" the pattern is matched against the path below the search root.
		if got := findPaths(find("lib", "deep/**", 0)); got != "lib/deep/x,lib/deep/x/y,lib/deep/x/y/z.py" {
			t.Fatalf("deep/**: %s", got)
		}
		if got := findPaths(find("", "**/a", 0)); got != "x/a,x/b/x/a" {
			t.Fatalf("**/a: %s", got)
		}
		if got := findPaths(find("x", "**/a", 0)); got != "x/a,x/b/x/a" {
			t.Fatalf("**/a at the top of the search root: %s", got)
		}
		// limit: stops early and says so
		res := find("", "*.py", 2)
		if res.Returned != 2 || !res.Truncated || res.TruncatedReason != TruncatedLimit {
			t.Fatalf("limit: %+v", res)
		}
		res = find("", "*.py", 4)
		if res.Returned != 4 || res.Truncated {
			t.Fatalf("exactly limit matches is not truncated: %+v", res)
		}
		// hidden and denied are never found, even by name
		if got := findPaths(find("", "*site*", 0)); got != "" {
			t.Fatalf("hidden dir searched: %s", got)
		}
		if got := findPaths(find("", "*.pem", 0)); got != "" {
			t.Fatalf("denied file found: %s", got)
		}
		// symlinked directories are reported, not followed
		res = find("", "linkdir", 0)
		if len(res.Matches) != 1 || res.Matches[0].Type != TypeSymlink {
			t.Fatalf("linkdir: %+v", res)
		}
		_, err := e.fs.Find(ctx, "wd", "linkdir", "*", 0)
		wantCode(t, err, errs.SymlinkNotAllowed)
		// malformed patterns
		for _, p := range []string{"", "[a", "{a,b", "/abs/*", strings.Repeat("*", 2000), "a\x00"} {
			_, err := e.fs.Find(ctx, "wd", "", p, 0)
			wantCode(t, err, errs.InvalidPattern)
		}
		for _, l := range []int{-1, 101} {
			_, err := e.fs.Find(ctx, "wd", "", "*", l)
			wantCode(t, err, errs.InvalidArgument)
		}
	})
}

func TestFindWalkLimit(t *testing.T) {
	e := newEnv(t, ResolverOpenat2, "SERVERFS_MAX_WALK_ENTRIES=50")
	for i := 0; i < 100; i++ {
		e.write(t, fmt.Sprintf("d%d/f.txt", i), "")
	}
	res, err := e.fs.Find(context.Background(), "wd", "", "*.none", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.TruncatedReason != TruncatedWalkLimit || res.EntriesScanned > 50 {
		t.Fatalf("%+v", res)
	}
}

func TestFindCancelled(t *testing.T) {
	e := newEnv(t, ResolverOpenat2)
	e.write(t, "a/b.txt", "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Nothing found before the end: coded, as search_text does.
	if res, err := e.fs.Find(ctx, "wd", "", "*", 0); errs.CodeOf(err) != errs.Canceled {
		t.Fatalf("cancelled: %+v %v", res, err)
	}
	past, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	if res, err := e.fs.Find(past, "wd", "", "*", 0); errs.CodeOf(err) != errs.SearchTimeout || !strings.Contains(err.Error(), "search timeout") {
		t.Fatalf("deadline: %+v %v", res, err)
	}
}

// TestFindTimeoutKeepsMatches: the deadline passing mid-walk ends it with
// what was found, truncated_reason "timeout".
func TestFindTimeoutKeepsMatches(t *testing.T) {
	e := newEnv(t, ResolverOpenat2)
	for i := range 20 {
		e.write(t, fmt.Sprintf("d%02d/f.txt", i), "")
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	e.fs.onFindMatch = func(path string) {
		if path == "d02" {
			cancel(context.DeadlineExceeded) // as the timeout would
		}
	}
	res, err := e.fs.Find(ctx, "wd", "", "d*", 0)
	if err != nil || !res.Truncated || res.TruncatedReason != TruncatedTimeout {
		t.Fatalf("%+v %v", res, err)
	}
	if got := findPaths(res); got != "d00,d01,d02" {
		t.Fatalf("kept %s", got)
	}
}

func TestFindDeterministic(t *testing.T) {
	e := newEnv(t, ResolverOpenat2)
	for i := 0; i < 200; i++ {
		e.write(t, fmt.Sprintf("t/%03d/%d.txt", (i*37)%200, i), "")
	}
	first := findPaths(mustFind(t, e, "*.txt"))
	for i := 0; i < 3; i++ {
		if got := findPaths(mustFind(t, e, "*.txt")); got != first {
			t.Fatal("order changed between runs")
		}
	}
}

func mustFind(t *testing.T, e *testEnv, pattern string) *FindResult {
	t.Helper()
	res, err := e.fs.Find(context.Background(), "wd", "", pattern, 100)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestStat(t *testing.T) {
	e := newEnv(t, ResolverOpenat2)
	e.write(t, "PandaWiki/docker-compose.yml", "services: {}\n")
	e.write(t, "blob.weird", "x")
	e.write(t, "Dockerfile", "FROM scratch\n")
	fi, err := e.fs.Stat("wd", "PandaWiki/docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Type != TypeFile || *fi.Size != 13 || fi.MIMEType != "application/yaml" || fi.Workdir != "wd" || fi.Path != "PandaWiki/docker-compose.yml" {
		t.Fatalf("%+v", fi)
	}
	if _, err := time.Parse(time.RFC3339, fi.ModifiedAt); err != nil || !strings.HasSuffix(fi.ModifiedAt, "Z") {
		t.Fatalf("modified_at %q", fi.ModifiedAt)
	}
	if fi, _ := e.fs.Stat("wd", "blob.weird"); fi.MIMEType != FallbackMIMEType {
		t.Fatalf("fallback: %+v", fi)
	}
	if fi, _ := e.fs.Stat("wd", "Dockerfile"); fi.MIMEType != "text/plain" {
		t.Fatalf("Dockerfile: %+v", fi)
	}
	fi, err = e.fs.Stat("wd", "PandaWiki")
	if err != nil || fi.Type != TypeDirectory || fi.Size != nil || fi.MIMEType != "" {
		t.Fatalf("dir: %+v %v", fi, err)
	}
	if fi, err := e.fs.Stat("wd", ""); err != nil || fi.Type != TypeDirectory || fi.Path != "" {
		t.Fatalf("root: %+v %v", fi, err)
	}
}

// TestGlobFold: a folded glob matches names differing only in case, its
// operators unchanged; the plain glob does not.
func TestGlobFold(t *testing.T) {
	for _, c := range []struct {
		pattern, rel, base string
		want               bool
	}{
		{"*DIAL*", "net/dial.go", "dial.go", true},
		{"*.GO", "a/B.go", "B.go", true},
		{"[A-C]*.md", "b.md", "b.md", true},
		{"{readme,notes}.MD", "NOTES.md", "NOTES.md", true},
		{"SRC/**/*.go", "src/x/y.go", "y.go", true},
		{"\u212Aelvin", "kelvin", "kelvin", true}, // the Kelvin sign folds to k
		{"*.md", "a.txt", "a.txt", false},
		{"a?c", "a/c", "c", false},
	} {
		g, err := CompileGlobFold(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		if got := g.Match(c.rel, c.base); got != c.want {
			t.Errorf("fold %s on %s: %v, want %v", c.pattern, c.rel, got, c.want)
		}
	}
	g, err := CompileGlob("*DIAL*")
	if err != nil {
		t.Fatal(err)
	}
	if g.Match("dial.go", "dial.go") {
		t.Error("a case-sensitive glob matched another case")
	}
}
