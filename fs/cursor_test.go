package fs

import (
	"context"
	"fmt"
	"github.com/serverfs/serverfs/internal/errs"
	"strings"
	"testing"
)

func TestWalkCompare(t *testing.T) {
	ordered := []string{"a", "a/b", "a/b/c", "a/c", "a-b", "a-b/x", "a.b", "ab", "b"}
	for i, a := range ordered {
		for j, b := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := WalkCompare(a, b); got != want {
				t.Errorf("WalkCompare(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}

// TestFindCursor: following next_cursor returns every match of one
// unlimited find exactly once, in order, across the limit, the walk limit
// and a timeout; a cursor of another pattern is refused.
func TestFindCursor(t *testing.T) {
	e := newEnv(t, ResolverOpenat2, "SERVERFS_MAX_WALK_ENTRIES=16")
	for i := 0; i < 40; i++ {
		e.write(t, fmt.Sprintf("d%d/s%d/f%02d.txt", i%3, i%4, i), "")
	}
	e.write(t, "a-b/x.txt", "")
	e.write(t, "a/x.txt", "")
	cfg, _ := LoadConfig(nil, []string{"wd=" + e.root})
	ff, err := New(cfg, Options{Resolver: ResolverOpenat2})
	if err != nil {
		t.Fatal(err)
	}
	defer ff.Close()
	for _, pattern := range []string{"*", "*.txt", "s1"} {
		all, err := ff.Find(context.Background(), "wd", "", pattern, 100)
		if err != nil || all.Truncated {
			t.Fatalf("%s: %v %+v", pattern, err, all)
		}
		want := findPaths(all)
		reasons := map[string]bool{}
		for _, limit := range []int{1, 4, 9} {
			var got []string
			cursor := ""
			for n := 0; ; n++ {
				if n > 300 {
					t.Fatalf("%s limit %d: no end", pattern, limit)
				}
				res, err := e.fs.FindFrom(context.Background(), "wd", "", pattern, limit, cursor)
				if err != nil {
					t.Fatal(err)
				}
				reasons[res.TruncatedReason] = true
				if p := findPaths(res); p != "" {
					got = append(got, p)
				}
				if res.NextCursor == "" {
					if res.Truncated {
						t.Fatalf("%s limit %d: truncated (%s) without next_cursor", pattern, limit, res.TruncatedReason)
					}
					break
				}
				cursor = res.NextCursor
			}
			if strings.Join(got, ",") != want {
				t.Errorf("%s limit %d: pages give\n%s\nwant\n%s", pattern, limit, strings.Join(got, ","), want)
			}
		}
		if pattern == "*" && (!reasons[TruncatedLimit] || !reasons[TruncatedWalkLimit]) {
			t.Errorf("%s: pages ended by %v, want limit and walk_limit", pattern, reasons)
		}
	}
	res, _ := e.fs.FindFrom(context.Background(), "wd", "", "*", 1, "")
	if _, err := e.fs.FindFrom(context.Background(), "wd", "", "*.txt", 1, res.NextCursor); errs.CodeOf(err) != errs.InvalidArgument {
		t.Errorf("a cursor of another pattern: %v", err)
	}
}

// TestFindTimeoutCursor: after a timeout the continuation resumes after
// the last entry visited.
func TestFindTimeoutCursor(t *testing.T) {
	e := newEnv(t, ResolverOpenat2)
	for i := range 6 {
		e.write(t, fmt.Sprintf("d%02d/f.txt", i), "")
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	e.fs.onFindMatch = func(path string) {
		if path == "d02" {
			cancel(context.DeadlineExceeded)
		}
	}
	res, err := e.fs.Find(ctx, "wd", "", "d*", 0)
	if err != nil || res.TruncatedReason != TruncatedTimeout || res.NextCursor == "" {
		t.Fatalf("%+v %v", res, err)
	}
	e.fs.onFindMatch = nil
	next, err := e.fs.FindFrom(context.Background(), "wd", "", "d*", 0, res.NextCursor)
	if err != nil || findPaths(next) != "d03,d04,d05" || next.NextCursor != "" {
		t.Fatalf("continuation: %+v %v", next, err)
	}
}
