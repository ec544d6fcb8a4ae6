package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// rgRun runs rg in the corpus with the differential flags plus extra
// (argv only), the pattern last, and returns its stdout.
func (c *diffCorpus) rgRun(t testing.TB, q diffQuery, extra ...string) []byte {
	t.Helper()
	args := []string{"--no-heading", "--with-filename", "--null",
		"--no-ignore-parent", "--no-ignore-global", "--no-ignore-dot", "--no-config", "--color", "never"}
	args = append(args, extra...)
	pattern := q.query
	if q.regex {
		pattern = rgPattern(pattern)
	} else {
		args = append(args, "-F")
	}
	if q.ignoreCase {
		args = append(args, "-i")
	}
	if q.glob != "" {
		args = append(args, "--glob="+q.glob)
	}
	args = append(args, "--regexp="+pattern, "--", ".")
	cmd := exec.Command(c.rg, args...)
	cmd.Dir = c.root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("rg %q: %v\n%s", args, err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// ctxLine is one line of a context answer, as compared.
type ctxLine struct {
	path  string
	line  int
	text  string
	match bool
	start bool // first line of a block
}

func (l ctxLine) String() string {
	return fmt.Sprintf("%s:%d match=%v start=%v %.60q", l.path, l.line, l.match, l.start, l.text)
}

// rgContext parses `rg -n -C/-B/-A` output: "path NUL line:text" for
// matches, "path NUL line-text" for context, "--" between blocks.
func (c *diffCorpus) rgContext(t testing.TB, q diffQuery, flags ...string) map[ctxLine]bool {
	out := c.rgRun(t, q, append([]string{"-n"}, flags...)...)
	got := map[ctxLine]bool{}
	prevPath, prevLine := "", 0
	for len(out) > 0 {
		nl := bytes.IndexByte(out, '\n')
		rec := out[:nl]
		out = out[nl+1:]
		if string(rec) == "--" {
			prevPath = ""
			continue
		}
		z := bytes.IndexByte(rec, 0)
		path := strings.TrimPrefix(string(rec[:z]), "./")
		rest := rec[z+1:]
		sep := bytes.IndexAny(rest, ":-")
		n, err := strconv.Atoi(string(rest[:sep]))
		if err != nil {
			t.Fatalf("rg: bad record %q", rec)
		}
		if c.skip(path, false) {
			continue
		}
		text, _ := diffLineText(rest[sep+1:])
		got[ctxLine{path: path, line: n, text: text, match: rest[sep] == ':', start: path != prevPath || n != prevLine+1}] = true
		prevPath, prevLine = path, n
	}
	return got
}

func (c *diffCorpus) ours(t testing.TB, q diffQuery, req Request) *Result {
	t.Helper()
	req.Workdir, req.Query, req.Regex, req.CaseSensitive, req.Glob = "d", q.query, q.regex, !q.ignoreCase, q.glob
	if req.Limit == 0 {
		req.Limit = 50_000_000
	}
	res, err := c.engine.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("Search %v: %v", q, err)
	}
	if res.Truncated {
		t.Fatalf("Search %v: truncated (%s)", q, res.TruncatedReason)
	}
	return res
}

func (c *diffCorpus) oursContext(t testing.TB, q diffQuery, req Request) map[ctxLine]bool {
	got := map[ctxLine]bool{}
	for _, b := range c.ours(t, q, req).Blocks {
		for i, l := range b.Lines {
			if c.skip(b.Path, false) {
				continue
			}
			if i > 0 && l.Line != b.Lines[i-1].Line+1 {
				t.Errorf("block of %s: line %d after %d", b.Path, l.Line, b.Lines[i-1].Line)
			}
			got[ctxLine{path: b.Path, line: l.Line, text: l.Text, match: l.Match, start: i == 0}] = true
		}
	}
	return got
}

func compareSets[T comparable](t *testing.T, label string, want, got map[T]bool, less func(a, b T) bool) {
	t.Helper()
	var missing, extra []T
	for k := range want {
		if !got[k] {
			missing = append(missing, k)
		}
	}
	for k := range got {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	if len(missing)+len(extra) == 0 {
		return
	}
	sort.Slice(missing, func(i, j int) bool { return less(missing[i], missing[j]) })
	sort.Slice(extra, func(i, j int) bool { return less(extra[i], extra[j]) })
	t.Errorf("%s: rg %d, ours %d\n  only in rg: %v\n  only in ours: %v", label, len(want), len(got), missing[:min(8, len(missing))], extra[:min(8, len(extra))])
}

func TestDiffContext(t *testing.T) {
	root := t.TempDir()
	buildDiffCorpus(t, root)
	c := newDiffCorpus(t, root)
	less := func(a, b ctxLine) bool {
		if a.path != b.path {
			return a.path < b.path
		}
		return a.line < b.line
	}
	for _, k := range []struct {
		q             diffQuery
		context, b, a int
	}{
		{diffQuery{query: "needle"}, 2, 0, 0},
		{diffQuery{query: "needle"}, 10, 0, 0},
		{diffQuery{query: "marker"}, 0, 1, 0},
		{diffQuery{query: "hello", ignoreCase: true}, 0, 0, 3},
		{diffQuery{query: "^start", regex: true}, 1, 0, 0},
		{diffQuery{query: `needle\d+$`, regex: true}, 0, 2, 1},
		{diffQuery{query: "straddle-token"}, 3, 0, 0}, // across the read buffer
		{diffQuery{query: "hugeneedle"}, 1, 0, 0},     // next to a line longer than the buffer
		{diffQuery{query: "line"}, 0, 0, 2},           // CRLF and a last line without newline
		{diffQuery{query: "世界"}, 1, 0, 0},
		{diffQuery{query: "needle", glob: "*.txt"}, 1, 3, 0},
	} {
		// Before and After override Context on their side (as in GNU
		// grep); rg's own mix of -C with -A/-B depends on flag order, so
		// it is given both sides explicitly.
		req := Request{Context: k.context, Before: k.b, After: k.a}
		flags := []string{"-B", strconv.Itoa(req.before()), "-A", strconv.Itoa(req.after())}
		want := c.rgContext(t, k.q, flags...)
		got := c.oursContext(t, k.q, req)
		compareSets(t, fmt.Sprintf("%v %v", k.q, flags), want, got, less)
		t.Logf("%v %v: %d lines", k.q, flags, len(want))
	}
}

func TestDiffFilesAndCount(t *testing.T) {
	root := t.TempDir()
	buildDiffCorpus(t, root)
	c := newDiffCorpus(t, root)
	for _, q := range []diffQuery{
		{query: "needle"},
		{query: "marker"},
		{query: "NEEDLE", ignoreCase: true},
		{query: "hugeneedle"},
		{query: `needle\d+`, regex: true},
		{query: `^$`, regex: true},
		{query: "needle", glob: "*.log"},
		{query: "absent-zzqx"},
	} {
		// -l
		wantFiles := map[string]bool{}
		for _, p := range bytes.Split(c.rgRun(t, q, "-l"), []byte{0}) {
			if path := strings.TrimPrefix(string(p), "./"); path != "" && !c.skip(path, false) {
				wantFiles[path] = true
			}
		}
		gotFiles := map[string]bool{}
		filesCounts := map[string]int{}
		for _, f := range c.ours(t, q, Request{Output: OutputFiles}).Files {
			if !c.skip(f.Path, false) {
				gotFiles[f.Path] = true
				if f.Count > 0 {
					filesCounts[f.Path] = f.Count
				}
			}
		}
		compareSets(t, fmt.Sprintf("%v -l", q), wantFiles, gotFiles, func(a, b string) bool { return a < b })

		// -c
		wantCount := map[string]bool{}
		wantTotal := 0
		for _, rec := range bytes.Split(c.rgRun(t, q, "-c"), []byte{'\n'}) {
			z := bytes.IndexByte(rec, 0)
			if z < 0 {
				continue
			}
			path := strings.TrimPrefix(string(rec[:z]), "./")
			if c.skip(path, false) {
				continue
			}
			n, _ := strconv.Atoi(string(rec[z+1:]))
			wantCount[fmt.Sprintf("%s %d", path, n)] = true
			wantTotal += n
		}
		res := c.ours(t, q, Request{Output: OutputCount})
		gotCount := map[string]bool{}
		gotTotal := 0
		for _, f := range res.Files {
			if !c.skip(f.Path, false) {
				gotCount[fmt.Sprintf("%s %d", f.Path, f.Count)] = true
				gotTotal += f.Count
			}
		}
		compareSets(t, fmt.Sprintf("%v -c", q), wantCount, gotCount, func(a, b string) bool { return a < b })
		for p, n := range filesCounts {
			if !wantCount[fmt.Sprintf("%s %d", p, n)] {
				t.Errorf("%v -l: %s count %d differs from rg -c", q, p, n)
			}
		}
		if q.query == "needle" && q.glob == "" && len(filesCounts) < 10 {
			t.Errorf("%v -l: no file with its count", q)
		}
		if gotTotal != wantTotal {
			t.Errorf("%v -c: total %d, want %d", q, gotTotal, wantTotal)
		}
		sum := 0
		for _, f := range res.Files {
			sum += f.Count
		}
		if res.Total != sum || res.Returned != len(res.Files) || res.Matches != nil || res.Blocks != nil {
			t.Errorf("%v -c: total %d returned %d for %d files summing to %d", q, res.Total, res.Returned, len(res.Files), sum)
		}
		t.Logf("%v: %d files, %d lines", q, len(wantFiles), wantTotal)
	}
}

// TestSearchCursor: following next_cursor from page to page returns every
// result of one unlimited search exactly once, in order, in every mode,
// whether pages end at the limit, the byte cap or the walk limit.
func TestSearchCursor(t *testing.T) {
	e := newTenv(t, "SERVERFS_MAX_SEARCH_RESULTS=10000", "SERVERFS_MAX_WALK_ENTRIES=14")
	for i := 0; i < 30; i++ {
		var b bytes.Buffer
		for j := 0; j < 1+i%5; j++ {
			fmt.Fprintf(&b, "filler\nTODO item %d.%d\n", i, j)
		}
		e.write(t, fmt.Sprintf("d%d/s%02d/f%02d.txt", i%3, i%4, i), b.Bytes())
	}
	e.write(t, "a-b/x.txt", []byte("TODO in a-b\n")) // '-' sorts before '/': walk order is not string order
	e.write(t, "a/x.txt", []byte("TODO in a\n"))
	flat := func(res *Result) []string {
		var out []string
		for _, m := range res.Matches {
			out = append(out, fmt.Sprintf("%s:%d", m.Path, m.Line))
		}
		for _, b := range res.Blocks {
			for _, l := range b.Lines {
				if l.Match {
					out = append(out, fmt.Sprintf("%s:%d", b.Path, l.Line))
				}
			}
		}
		for _, f := range res.Files {
			out = append(out, fmt.Sprintf("%s %d", f.Path, f.Count))
		}
		return out
	}
	reasons := map[string]int{}
	for _, req := range []Request{
		{Output: OutputLines},
		{Output: OutputLines, Context: 1},
		{Output: OutputFiles},
		{Output: OutputCount},
	} {
		req.Query, req.CaseSensitive, req.Workdir = "TODO", true, "wd"
		// One unlimited search in a workdir without a walk limit.
		all := req
		all.Limit = 10000
		ares, err := New(mustFS(t, e.root)).Search(context.Background(), all)
		if err != nil || ares.Truncated {
			t.Fatalf("%s: unlimited search: %v %+v", req.Output, err, ares)
		}
		want := flat(ares)
		for _, limit := range []int{1, 3, 7} {
			var got []string
			page := req
			page.Limit = limit
			for n := 0; ; n++ {
				if n > 500 {
					t.Fatalf("%s limit %d: no end after %d pages", req.Output, limit, n)
				}
				res, err := e.eng.Search(context.Background(), page)
				if err != nil {
					t.Fatalf("%s limit %d page %d: %v", req.Output, limit, n, err)
				}
				got = append(got, flat(res)...)
				reasons[res.TruncatedReason]++
				if res.NextCursor == "" {
					if res.Truncated && res.TruncatedReason != sfs.TruncatedDepth {
						t.Fatalf("%s limit %d: truncated (%s) without next_cursor", req.Output, limit, res.TruncatedReason)
					}
					break
				}
				if !res.Truncated {
					t.Fatalf("%s: next_cursor on a complete answer", req.Output)
				}
				page.Cursor = res.NextCursor
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s limit %d: pages give\n%s\nwant\n%s", req.Output, limit, strings.Join(got, " "), strings.Join(want, " "))
			}
		}
	}
	if reasons[sfs.TruncatedLimit] == 0 || reasons[sfs.TruncatedWalkLimit] == 0 {
		t.Errorf("pages ended by %v: want both the limit and the walk limit", reasons)
	}
	// A cursor is bound to its request.
	res := e.search(t, Request{Query: "TODO", CaseSensitive: true, Limit: 2})
	if res.NextCursor == "" {
		t.Fatal("no next_cursor")
	}
	for _, bad := range []Request{
		{Query: "filler", CaseSensitive: true, Cursor: res.NextCursor},
		{Query: "TODO", CaseSensitive: false, Cursor: res.NextCursor},
		{Query: "TODO", CaseSensitive: true, Output: OutputCount, Cursor: res.NextCursor},
		{Query: "TODO", CaseSensitive: true, Cursor: "garbage"},
		{Query: "TODO", CaseSensitive: true, Cursor: res.NextCursor[:len(res.NextCursor)-2]},
	} {
		bad.Workdir = "wd"
		_, err := e.eng.Search(context.Background(), bad)
		wantCode(t, err, errs.InvalidArgument)
	}
}

func mustFS(t *testing.T, root string) *sfs.FS {
	t.Helper()
	cfg, err := sfs.LoadConfig([]string{"SERVERFS_MAX_SEARCH_RESULTS=10000"}, []string{"wd=" + root})
	if err != nil {
		t.Fatal(err)
	}
	f, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestSearchContextBytes: context answers stop at the byte cap with a
// cursor, and arguments out of range are refused.
func TestSearchContextBytes(t *testing.T) {
	e := newTenv(t, "SERVERFS_MAX_READ_BYTES=4096")
	var b bytes.Buffer
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "hit %03d %s\n", i, strings.Repeat("x", 100))
	}
	e.write(t, "a.txt", b.Bytes())
	res := e.search(t, Request{Query: "hit", CaseSensitive: true, Context: 2, Limit: 100})
	if !res.Truncated || res.TruncatedReason != TruncatedBytes || res.NextCursor == "" || res.Returned >= 100 {
		t.Fatalf("byte cap: %d returned, %v %q", res.Returned, res.Truncated, res.TruncatedReason)
	}
	// The pages together hold every match once.
	seen := map[int]int{}
	for page, n := res, 0; ; n++ {
		for _, bl := range page.Blocks {
			for _, l := range bl.Lines {
				if l.Match {
					seen[l.Line]++
				}
			}
		}
		if page.NextCursor == "" || n > 100 {
			break
		}
		page = e.search(t, Request{Query: "hit", CaseSensitive: true, Context: 2, Limit: 100, Cursor: page.NextCursor})
	}
	for i := 1; i <= 200; i++ {
		if seen[i] != 1 {
			t.Fatalf("line %d returned %d times over the pages", i, seen[i])
		}
	}
	size := 0
	for _, bl := range res.Blocks {
		for _, l := range bl.Lines {
			size += len(l.Text)
		}
	}
	if size > 4096+(2*2+1)*120 {
		t.Errorf("%d bytes of text for a 4096-byte cap", size)
	}
	for _, bad := range []Request{
		{Query: "hit", Context: 11},
		{Query: "hit", Before: -1},
		{Query: "hit", After: 11},
		{Query: "hit", Output: "json"},
		{Query: "hit", Output: OutputCount, Context: 1},
	} {
		bad.Workdir = "wd"
		_, err := e.eng.Search(context.Background(), bad)
		wantCode(t, err, errs.InvalidArgument)
	}
}

// TestDiffCountAggregate: a count whose list ends at the limit aggregates
// the rest, and the aggregate agrees with rg -c summed: every listed
// file's count is rg's, the listed files and more_files are rg's files,
// more_lines the lines of the unlisted ones and the total rg's sum. The
// files mode's more_files agrees as well.
func TestDiffCountAggregate(t *testing.T) {
	root := t.TempDir()
	rnd := rand.New(rand.NewPCG(36, 1))
	for i := range 400 {
		var b strings.Builder
		for j := range rnd.IntN(40) {
			if rnd.IntN(3) == 0 {
				fmt.Fprintf(&b, "func f%d() {} // func again\n", j)
			} else {
				fmt.Fprintf(&b, "var v%d = %d\n", j, j)
			}
		}
		diffWrite(t, root, fmt.Sprintf("d%d/s%d/f%03d.go", i%7, i%3, i), []byte(b.String()))
	}
	c := newDiffCorpus(t, root)
	q := diffQuery{query: "func"}
	want := map[string]int{}
	wantTotal := 0
	for _, rec := range bytes.Split(c.rgRun(t, q, "-c"), []byte{'\n'}) {
		if z := bytes.IndexByte(rec, 0); z >= 0 {
			n, _ := strconv.Atoi(string(rec[z+1:]))
			want[strings.TrimPrefix(string(rec[:z]), "./")] = n
			wantTotal += n
		}
	}
	if len(want) < 200 {
		t.Fatalf("rg -c found %d files: the corpus is not what the test needs", len(want))
	}
	for _, limit := range []int{1, 7, 100, len(want) - 1, len(want), len(want) + 1} {
		res, err := c.engine.Search(context.Background(), Request{Workdir: "d", Query: q.query, CaseSensitive: true, Output: OutputCount, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		listed := 0
		for _, f := range res.Files {
			if want[f.Path] != f.Count {
				t.Errorf("limit %d: %s count %d, rg -c %d", limit, f.Path, f.Count, want[f.Path])
			}
			listed += f.Count
		}
		if len(res.Files) != min(limit, len(want)) || len(res.Files)+res.MoreFiles != len(want) || res.Total != wantTotal ||
			res.MoreLines != wantTotal-listed || res.TotalIncomplete != "" {
			t.Errorf("limit %d: %d listed + %d more files (rg %d), %d + %d lines, total %d (rg %d, incomplete %q)",
				limit, len(res.Files), res.MoreFiles, len(want), listed, res.MoreLines, res.Total, wantTotal, res.TotalIncomplete)
		}
		if full := limit < len(want); res.Truncated != full || (full && (res.TruncatedReason != sfs.TruncatedLimit || res.NextCursor == "")) {
			t.Errorf("limit %d: truncated %v (%s), next_cursor %q", limit, res.Truncated, res.TruncatedReason, res.NextCursor)
		}
		// Following next_cursor lists every file once, in order.
		if limit == 7 {
			for _, out := range []string{OutputCount, OutputFiles} {
				paged := c.pageAll(t, Request{Workdir: "d", Query: q.query, CaseSensitive: true, Output: out, Limit: limit})
				if len(paged) != len(want) {
					t.Errorf("%s pages: %d files, rg %d", out, len(paged), len(want))
				}
				for p, n := range paged {
					if _, ok := want[p]; !ok || (out == OutputCount && n != want[p]) {
						t.Errorf("%s pages: %s count %d, rg %d (listed %v)", out, p, n, want[p], ok)
					}
				}
			}
		}
		// Files mode aggregates the files past the list too (no lines).
		res, err = c.engine.Search(context.Background(), Request{Workdir: "d", Query: q.query, CaseSensitive: true, Output: OutputFiles, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range res.Files {
			if _, ok := want[f.Path]; !ok {
				t.Errorf("files, limit %d: %s is not among rg's", limit, f.Path)
			}
		}
		if len(res.Files) != min(limit, len(want)) || len(res.Files)+res.MoreFiles != len(want) || res.MoreLines != 0 || res.TotalIncomplete != "" {
			t.Errorf("files, limit %d: %d listed + %d more files (rg %d), more lines %d, incomplete %q", limit, len(res.Files), res.MoreFiles, len(want), res.MoreLines, res.TotalIncomplete)
		}
	}
}

// TestCountByteCap: the list of a count ends at the byte cap as at the
// limit, the rest aggregated.
func TestCountByteCap(t *testing.T) {
	e := newTenv(t, "SERVERFS_MAX_SEARCH_RESULTS=10000", "SERVERFS_MAX_READ_BYTES=1024")
	dir := strings.Repeat("d", 250) + "/" + strings.Repeat("e", 250)
	const files = 60
	for i := range files {
		e.write(t, fmt.Sprintf("%s/%s%02d.txt", dir, strings.Repeat("f", 240), i), []byte("hit\nhit\n"))
	}
	entry := len(dir) + 1 + 240 + 2 + len(".txt") + fileLineBytes
	// The cap is max(SERVERFS_MAX_READ_BYTES, limit*MaxLineText): paths
	// over MaxLineText bytes reach it before the limit.
	for _, limit := range []int{2, 40} {
		capBytes := max(1024, limit*MaxLineText)
		listed := min(limit, (capBytes+entry-1)/entry)
		res := e.search(t, Request{Query: "hit", CaseSensitive: true, Output: OutputCount, Limit: limit})
		reason := sfs.TruncatedLimit
		if listed < limit {
			reason = TruncatedBytes
		}
		if len(res.Files) != listed || res.MoreFiles != files-listed || res.MoreLines != 2*(files-listed) || res.Total != 2*files || res.TruncatedReason != reason {
			t.Errorf("limit %d: %d listed (want %d) + %d more files with %d lines, total %d, truncated %q", limit, len(res.Files), listed,
				res.MoreFiles, res.MoreLines, res.Total, res.TruncatedReason)
		}
	}
}

// pageAll follows next_cursor from req's first page to its last and
// returns every file listed with its count; a file listed twice fails.
func (c *diffCorpus) pageAll(t *testing.T, req Request) map[string]int {
	t.Helper()
	got := map[string]int{}
	for range 10_000 {
		res, err := c.engine.Search(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range res.Files {
			if _, dup := got[f.Path]; dup {
				t.Errorf("%s listed twice", f.Path)
			}
			got[f.Path] = f.Count
		}
		// A full page from a cursor lists and counts only its own files.
		if req.Cursor != "" && res.NextCursor != "" && (res.MoreFiles != 0 || (req.Output == OutputCount && res.TotalIncomplete != TotalPageOnly)) {
			t.Errorf("%s page from a cursor: more_files %d, total_incomplete %q", req.Output, res.MoreFiles, res.TotalIncomplete)
		}
		if res.NextCursor == "" {
			return got
		}
		req.Cursor = res.NextCursor
	}
	t.Fatal("pages do not end")
	return nil
}
