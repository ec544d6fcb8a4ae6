package search

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/decompress"
	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

// tenv is a workdir "wd" in a temporary directory with an Engine on it.
type tenv struct {
	root string
	fs   *sfs.FS
	eng  *Engine
}

func newTenv(t testing.TB, env ...string) *tenv {
	t.Helper()
	return newTenvAt(t, "wd", t.TempDir(), env...)
}

// newTenvAt is an Engine on the directory root served as workdir alias.
func newTenvAt(t testing.TB, alias, root string, env ...string) *tenv {
	t.Helper()
	cfg, err := sfs.LoadConfig(env, []string{alias + "=" + root})
	if err != nil {
		t.Fatal(err)
	}
	f, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &tenv{root: root, fs: f, eng: New(f)}
}

func (e *tenv) write(t testing.TB, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(e.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e *tenv) search(t testing.TB, req Request) *Result {
	t.Helper()
	req.Workdir = "wd"
	res, err := e.eng.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("search %+v: %v", req, err)
	}
	return res
}

func wantCode(t testing.TB, err error, code errs.Code) {
	t.Helper()
	if errs.CodeOf(err) != code {
		t.Fatalf("want %s, got %v", code, err)
	}
}

func lines(res *Result) string {
	var b strings.Builder
	for _, m := range res.Matches {
		fmt.Fprintf(&b, "%s:%d:%s\n", m.Path, m.Line, m.Text)
	}
	return b.String()
}

func TestSearchBasics(t *testing.T) {
	e := newTenv(t)
	e.write(t, "b.txt", []byte("alpha\nDATABASE_URL=x\nbeta\n"))
	e.write(t, "a/config.py", []byte("x = 1\ndatabase_url = os.getenv(\"DATABASE_URL\")\n"))
	e.write(t, "a/meta.txt", []byte("a.b*c (x|y) [0-9]+ $HOME ^start\nplain\n"))
	e.write(t, "zh.txt", []byte("第一行\n你好，世界\n"))
	e.write(t, "crlf.txt", []byte("one\r\nDATABASE_URL\r\n"))
	e.write(t, "bom.txt", []byte("\xEF\xBB\xBFDATABASE_URL first\n"))

	got := lines(e.search(t, Request{Query: "DATABASE_URL", CaseSensitive: true}))
	want := "a/config.py:2:database_url = os.getenv(\"DATABASE_URL\")\nb.txt:2:DATABASE_URL=x\nbom.txt:1:DATABASE_URL first\ncrlf.txt:2:DATABASE_URL\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got := lines(e.search(t, Request{Query: "database_url", CaseSensitive: false, Glob: "*.py"})); got != "a/config.py:2:database_url = os.getenv(\"DATABASE_URL\")\n" {
		t.Fatalf("-i with glob: %s", got)
	}
	for _, q := range []string{"a.b*c", "(x|y)", "[0-9]+", "$HOME", "^start"} {
		if res := e.search(t, Request{Query: q, CaseSensitive: true}); res.Returned != 1 || res.Matches[0].Path != "a/meta.txt" {
			t.Fatalf("metacharacters %q are literal: %+v", q, res)
		}
	}
	if res := e.search(t, Request{Query: "世界", CaseSensitive: true}); lines(res) != "zh.txt:2:你好，世界\n" {
		t.Fatalf("chinese: %s", lines(res))
	}
	if res := e.search(t, Request{Query: "plain", Path: "a", CaseSensitive: true}); lines(res) != "a/meta.txt:2:plain\n" || res.Path != "a" {
		t.Fatalf("sub path: %+v", res)
	}
	res := e.search(t, Request{Query: "absent-word", CaseSensitive: true})
	if res.Returned != 0 || res.Truncated || res.FilesScanned != 6 || res.Matches == nil {
		t.Fatalf("absent: %+v", res)
	}
}

func TestSearchCaseFolding(t *testing.T) {
	e := newTenv(t)
	e.write(t, "greek.txt", []byte("ΣΊΣΥΦΟΣ\nσίσυφος\nplain\n"))
	e.write(t, "cyr.txt", []byte("Жук\nжук\n"))
	e.write(t, "kelvin.txt", []byte("273 \u212A\nokay\nſecret\nSECRET\n"))
	cases := []struct {
		q    string
		want string
	}{
		{"σίσυφος", "greek.txt:1:ΣΊΣΥΦΟΣ\ngreek.txt:2:σίσυφος\n"},
		{"ЖУК", "cyr.txt:1:Жук\ncyr.txt:2:жук\n"},
		{"k", "kelvin.txt:1:273 \u212A\nkelvin.txt:2:okay\n"},
		{"secret", "kelvin.txt:3:ſecret\nkelvin.txt:4:SECRET\n"},
		{"OKAY", "kelvin.txt:2:okay\n"},
	}
	for _, c := range cases {
		if got := lines(e.search(t, Request{Query: c.q})); got != c.want {
			t.Errorf("-i %q: got\n%s\nwant\n%s", c.q, got, c.want)
		}
	}
	if got := lines(e.search(t, Request{Query: "ЖУК", CaseSensitive: true})); got != "" {
		t.Errorf("case-sensitive Cyrillic matched: %s", got)
	}
}

// TestSearchHostileStrings: queries and globs are data, never commands or
// options.
func TestSearchHostileStrings(t *testing.T) {
	e := newTenv(t)
	e.write(t, "x.txt", []byte("$(touch /tmp/pwned-serverfs)\n; rm -rf /\n`id`\n-e\n--files\n"))
	pwned := "/tmp/pwned-serverfs"
	os.Remove(pwned)
	for i, q := range []string{"$(touch /tmp/pwned-serverfs)", "; rm -rf /", "`id`", "-e", "--files"} {
		res := e.search(t, Request{Query: q, CaseSensitive: true})
		if res.Returned != 1 || res.Matches[0].Line != i+1 {
			t.Fatalf("%q: %+v", q, res)
		}
		res = e.search(t, Request{Query: "x", Glob: q})
		if res.Returned != 0 {
			t.Fatalf("glob %q matched: %+v", q, res)
		}
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("a query ran a command")
	}
}

func TestSearchArguments(t *testing.T) {
	e := newTenv(t)
	e.write(t, "f.txt", []byte("x\n"))
	e.write(t, ".hidden/f.txt", []byte("x\n"))
	ctx := context.Background()
	for _, q := range []string{"", "a\nb", "a\rb", "a\x00b", strings.Repeat("q", 1025), "\xff"} {
		_, err := e.eng.Search(ctx, Request{Workdir: "wd", Query: q})
		wantCode(t, err, errs.InvalidArgument)
	}
	for _, l := range []int{-1, 101} {
		_, err := e.eng.Search(ctx, Request{Workdir: "wd", Query: "x", Limit: l})
		wantCode(t, err, errs.InvalidArgument)
	}
	_, err := e.eng.Search(ctx, Request{Workdir: "wd", Query: "x", Glob: "[a"})
	wantCode(t, err, errs.InvalidPattern)
	_, err = e.eng.Search(ctx, Request{Workdir: "nope", Query: "x"})
	wantCode(t, err, errs.WorkdirNotFound)
	_, err = e.eng.Search(ctx, Request{Workdir: "wd", Query: "x", Path: "f.txt"})
	wantCode(t, err, errs.NotADirectory)
	_, err = e.eng.Search(ctx, Request{Workdir: "wd", Query: "x", Path: ".hidden"})
	wantCode(t, err, errs.HiddenPathNotAllowed)
	_, err = e.eng.Search(ctx, Request{Workdir: "wd", Query: "x", Path: "../"})
	wantCode(t, err, errs.PathOutsideWorkdir)
}

// TestSearchPolicy: hidden, denied, symlinked and special files are never
// searched, whatever the options.
func TestSearchPolicy(t *testing.T) {
	e := newTenv(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "leak.txt"), []byte("NEEDLE outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.write(t, "ok.txt", []byte("NEEDLE ok\n"))
	e.write(t, ".env", []byte("NEEDLE env\n"))
	e.write(t, "id_rsa", []byte("NEEDLE key\n"))
	e.write(t, "cfg/.ENV.local", []byte("NEEDLE env2\n"))
	e.write(t, ".hidden/x.txt", []byte("NEEDLE hidden\n"))
	e.write(t, "certs/a.pem", []byte("NEEDLE pem\n"))
	if err := os.Symlink(outside, filepath.Join(e.root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ok.txt", filepath.Join(e.root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(e.root, "fifo.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, inc := range []bool{false, true} {
		res := e.search(t, Request{Query: "NEEDLE", CaseSensitive: true, IncludeIgnored: inc})
		if got := lines(res); got != "ok.txt:1:NEEDLE ok\n" {
			t.Fatalf("include_ignored=%v: %s", inc, got)
		}
	}
}

func TestSearchGitignore(t *testing.T) {
	e := newTenv(t)
	e.write(t, ".git/HEAD", []byte("ref: refs/heads/main\n"))
	e.write(t, ".git/info/exclude", []byte("excluded.txt\n"))
	e.write(t, ".gitignore", []byte("*.log\n!keep.log\nbuild/\n/root-only.txt\n"))
	for _, p := range []string{"a.log", "keep.log", "build/out.txt", "root-only.txt", "sub/root-only.txt", "excluded.txt", "sub/b.log", "src/main.go", "sub/.gitignore"} {
		data := []byte("NEEDLE\n")
		if p == "sub/.gitignore" {
			data = []byte("main.go\n")
		}
		e.write(t, p, data)
	}
	e.write(t, "sub/main.go", []byte("NEEDLE\n"))
	e.write(t, ".git/config-NEEDLE", []byte("NEEDLE\n"))

	paths := func(res *Result) string {
		var ps []string
		for _, m := range res.Matches {
			ps = append(ps, m.Path)
		}
		return strings.Join(ps, ",")
	}
	res := e.search(t, Request{Query: "NEEDLE", CaseSensitive: true})
	if got := paths(res); got != "keep.log,src/main.go,sub/root-only.txt" {
		t.Fatalf("ignored: %s", got)
	}
	if res.Skipped.Ignored == 0 {
		t.Fatalf("ignored files not counted: %+v", res.Skipped)
	}
	res = e.search(t, Request{Query: "NEEDLE", CaseSensitive: true, IncludeIgnored: true})
	if got := paths(res); got != "a.log,build/out.txt,excluded.txt,keep.log,root-only.txt,src/main.go,sub/b.log,sub/main.go,sub/root-only.txt" {
		t.Fatalf("include_ignored: %s", got)
	}
	// Searching below the root still honours the root's .gitignore.
	if got := paths(e.search(t, Request{Query: "NEEDLE", Path: "sub", CaseSensitive: true})); got != "sub/root-only.txt" {
		t.Fatalf("from sub: %s", got)
	}
	// A glob naming ignored files searches them, as in ripgrep.
	if got := paths(e.search(t, Request{Query: "NEEDLE", Glob: "*.log", CaseSensitive: true})); got != "a.log,keep.log,sub/b.log" {
		t.Fatalf("glob overrides ignore: %s", got)
	}

	// "dir/**" ignores what is inside dir, not dir itself, so a negation
	// can bring a file back (go-git alone would lose it).
	e3 := newTenv(t)
	e3.write(t, ".git/HEAD", []byte("ref: refs/heads/main\n"))
	e3.write(t, ".gitignore", []byte("v/**\n!v/keep.txt\n"))
	e3.write(t, "v/keep.txt", []byte("NEEDLE\n"))
	e3.write(t, "v/drop.txt", []byte("NEEDLE\n"))
	if got := paths(e3.search(t, Request{Query: "NEEDLE", CaseSensitive: true})); got != "v/keep.txt" {
		t.Fatalf("dir/** with a negation: %s", got)
	}

	// Without .git, .gitignore files are not applied (ripgrep's default).
	e2 := newTenv(t)
	e2.write(t, ".gitignore", []byte("*.log\n"))
	e2.write(t, "a.log", []byte("NEEDLE\n"))
	if got := paths(e2.search(t, Request{Query: "NEEDLE", CaseSensitive: true})); got != "a.log" {
		t.Fatalf("outside a repository: %s", got)
	}
}

// TestSearchLimit: the first limit matches in path order, truncated only
// when more exist, identical across runs.
func TestSearchLimit(t *testing.T) {
	e := newTenv(t, "SERVERFS_MAX_SEARCH_RESULTS=1000")
	for i := 0; i < 60; i++ {
		var b bytes.Buffer
		for j := 0; j < 7; j++ {
			fmt.Fprintf(&b, "line %d hit\n", j)
		}
		e.write(t, fmt.Sprintf("d%02d/f%02d.txt", i%7, i), b.Bytes())
	}
	all := e.search(t, Request{Query: "hit", CaseSensitive: true, Limit: 1000})
	if all.Returned != 420 || all.Truncated {
		t.Fatalf("all: %d %v", all.Returned, all.Truncated)
	}
	for _, limit := range []int{1, 7, 50, 419} {
		for run := 0; run < 3; run++ {
			res := e.search(t, Request{Query: "hit", CaseSensitive: true, Limit: limit})
			if res.Returned != limit || !res.Truncated || res.TruncatedReason != "limit" {
				t.Fatalf("limit %d: %d %v %q", limit, res.Returned, res.Truncated, res.TruncatedReason)
			}
			if lines(res) != lines(&Result{Matches: all.Matches[:limit]}) {
				t.Fatalf("limit %d: not the first matches in path order", limit)
			}
		}
	}
	if res := e.search(t, Request{Query: "hit", CaseSensitive: true, Limit: 420}); res.Truncated {
		t.Fatal("exactly limit matches must not be truncated")
	}
}

// TestSearchNoGoroutineOutlivesTheCall: after limits, cancellations and
// timeouts the goroutine count returns to its baseline.
func TestSearchNoGoroutineOutlivesTheCall(t *testing.T) {
	e := newTenv(t)
	for i := 0; i < 200; i++ {
		e.write(t, fmt.Sprintf("f%03d.txt", i), bytes.Repeat([]byte("hit hit\n"), 1000))
	}
	base := runtime.NumGoroutine()
	check := func(what string) {
		t.Helper()
		// Search waits for its goroutines to finish their work; one may
		// still be in its last instructions (running deferred calls) when
		// Search returns, so give the scheduler a bounded chance first.
		for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() != base && time.Now().Before(deadline); {
			runtime.Gosched()
		}
		if n := runtime.NumGoroutine(); n != base {
			buf := make([]byte, 1<<20)
			t.Fatalf("%s: %d goroutines, baseline %d\n%s", what, n, base, buf[:runtime.Stack(buf, true)])
		}
	}
	for i := 0; i < 20; i++ {
		e.search(t, Request{Query: "hit", CaseSensitive: true, Limit: 5})
		check("limit")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := e.eng.Search(ctx, Request{Workdir: "wd", Query: "hit"})
		wantCode(t, err, errs.Canceled)
		check("cancel")
		ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		_, err = e.eng.Search(ctx, Request{Workdir: "wd", Query: "hit"})
		cancel()
		wantCode(t, err, errs.SearchTimeout)
		check("timeout")
	}
}

// TestSearchTimeoutKeepsResults: files finished before the deadline are
// returned with truncated_reason "timeout". The hook holds the second file
// until the deadline has passed (no sleeps: it waits on ctx.Done).
func TestSearchTimeoutKeepsResults(t *testing.T) {
	e := newTenv(t)
	e.write(t, "a.txt", []byte("hit a\n"))
	e.write(t, "b.txt", []byte("hit b\n"))
	e.write(t, "c.txt", []byte("hit c\n"))
	e.eng.workers = 1
	e.eng.beforeFile = func(ctx context.Context, path string) {
		if path == "b.txt" {
			<-ctx.Done()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res, err := e.eng.Search(ctx, Request{Workdir: "wd", Query: "hit", CaseSensitive: true})
	if err != nil {
		t.Fatal(err)
	}
	if lines(res) != "a.txt:1:hit a\n" || !res.Truncated || res.TruncatedReason != "timeout" {
		t.Fatalf("%+v", res)
	}
	// The continuation resumes after a.txt.
	e.eng.beforeFile = nil
	next := e.search(t, Request{Query: "hit", CaseSensitive: true, Cursor: res.NextCursor})
	if lines(next) != "b.txt:1:hit b\nc.txt:1:hit c\n" || next.Truncated || next.NextCursor != "" {
		t.Fatalf("continuation: %+v", next)
	}
}

func TestSearchBinaryAndLimits(t *testing.T) {
	e := newTenv(t, "SERVERFS_SEARCH_MAX_FILE_BYTES=100000")
	e.write(t, "bin.dat", []byte("hit\x00\n"))
	late := append(bytes.Repeat([]byte("hit\n"), 3000), 0) // NUL after 8 KiB
	e.write(t, "late.dat", append(late, []byte("\nhit\n")...))
	e.write(t, "big.txt", bytes.Repeat([]byte("hit\n"), 30000))
	e.write(t, "ok.txt", []byte("hit\n"))
	res := e.search(t, Request{Query: "hit", CaseSensitive: true, Limit: 100})
	if res.Skipped.Binary != 1 || res.Skipped.TooLarge != 1 || res.Skipped.BinaryLate != 1 {
		t.Fatalf("%+v", res.Skipped)
	}
	for _, m := range res.Matches {
		if m.Path == "bin.dat" || m.Path == "big.txt" {
			t.Fatalf("searched %s", m.Path)
		}
	}
}

func gz(t *testing.T, data []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

func zst(t *testing.T, data []byte) []byte {
	var b bytes.Buffer
	w, err := zstd.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	w.Close()
	return b.Bytes()
}

func TestSearchCompressed(t *testing.T) {
	e := newTenv(t, "SERVERFS_SEARCH_MAX_FILE_BYTES=1048576")
	e.write(t, "app.log.1.gz", append(gz(t, []byte("start\nERROR one\n")), gz(t, []byte("ERROR two\n"))...)) // two members
	e.write(t, "app.log.2.zst", zst(t, []byte("x\ny\nERROR three\n")))
	e.write(t, "corrupt.gz", append(gz(t, []byte("ERROR lost\n"))[:20], "garbage"...))
	bomb := gz(t, bytes.Repeat([]byte("ERROR bomb line\n"), 4<<20)) // 64 MiB of text, well under 1 MiB compressed
	if len(bomb) > 1<<20 {
		t.Fatalf("bomb is %d bytes", len(bomb))
	}
	e.write(t, "bomb.gz", bomb)
	res := e.search(t, Request{Query: "ERROR", CaseSensitive: true, Limit: 100, Glob: "{app*,corrupt*}"})
	if got := lines(res); got != "app.log.1.gz:2:ERROR one\napp.log.1.gz:3:ERROR two\napp.log.2.zst:3:ERROR three\n" {
		t.Fatalf("got %s", got)
	}
	for _, m := range res.Matches {
		if !m.Compressed {
			t.Fatalf("not flagged compressed: %+v", m)
		}
	}
	if res.Skipped.Corrupt != 1 {
		t.Fatalf("corrupt not counted: %+v", res.Skipped)
	}
	// The bomb ends at the 1 MiB cap; the count of lines shows where.
	res = e.search(t, Request{Query: "bomb line", CaseSensitive: true, Glob: "bomb.gz", Limit: 100})
	if res.Returned != 100 || !res.Truncated {
		t.Fatalf("bomb: %+v", res.Skipped)
	}
	e.eng.fs.Limits()
	e2 := newTenv(t, "SERVERFS_SEARCH_MAX_FILE_BYTES=1048576")
	e2.write(t, "bomb.gz", bomb)
	res = e2.search(t, Request{Query: "absent", CaseSensitive: true})
	if res.Skipped.CutAtCap != 1 || res.FilesScanned != 1 {
		t.Fatalf("bomb not cut at the cap: %+v %+v", res, res.Skipped)
	}
}

// TestSearcherAgainstReference: random files with lines of every length
// around the buffer size, CRLF, BOM and matches straddling buffer
// boundaries, compared with a naive line-by-line reference.
func TestSearcherAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	needle := "NEEDLE"
	for iter := 0; iter < 40; iter++ {
		var b bytes.Buffer
		if iter%5 == 0 {
			b.WriteString("\xEF\xBB\xBF")
		}
		nLines := 1 + rng.Intn(12)
		for i := 0; i < nLines; i++ {
			var n int
			switch rng.Intn(4) {
			case 0:
				n = rng.Intn(100)
			case 1:
				n = bufferSize - 50 + rng.Intn(100)
			case 2:
				n = 2*bufferSize + rng.Intn(1000)
			default:
				n = rng.Intn(5000)
			}
			line := bytes.Repeat([]byte{'a' + byte(rng.Intn(3))}, n)
			for k := rng.Intn(3); k > 0 && n > len(needle); k-- {
				at := rng.Intn(n - len(needle))
				copy(line[at:], needle)
			}
			b.Write(line)
			if i < nLines-1 || rng.Intn(2) == 0 {
				if rng.Intn(3) == 0 {
					b.WriteString("\r")
				}
				b.WriteString("\n")
			}
		}
		data := b.Bytes()
		want := reference(data, needle)
		var got []lineMatch
		s := newSearcher()
		_, err := s.search(bytes.NewReader(data), newMatcher(needle, true), len(needle), func() bool { return false }, func(m lineMatch) bool {
			got = append(got, m)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("iteration %d: got %d matches, want %d\n got %.300v\nwant %.300v", iter, len(got), len(want), got, want)
		}
	}
}

func reference(data []byte, needle string) []lineMatch {
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	var out []lineMatch
	for i, line := range bytes.Split(data, []byte("\n")) {
		if bytes.Contains(line, []byte(needle)) {
			out = append(out, makeLine(i+1, line))
		}
	}
	return out
}

// TestSearchHugeLineIsBounded: a 256 MiB file that is one line is searched
// with the worker's fixed buffer: the allocation total stays far below the
// line's size.
func TestSearchHugeLineIsBounded(t *testing.T) {
	e := newTenv(t, "SERVERFS_SEARCH_MAX_FILE_BYTES=1073741824")
	p := filepath.Join(e.root, "one-line.txt")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("abcdefgh"), 1<<17) // 1 MiB
	for i := 0; i < 256; i++ {
		if i == 200 {
			copy(chunk[(1<<20)-3:], "NEE")
			f.Write(chunk)
			copy(chunk, "DLE")
			continue
		}
		f.Write(chunk)
		copy(chunk, "abcdefgh")
		copy(chunk[(1<<20)-8:], "abcdefgh")
	}
	f.WriteString("\nsecond NEEDLE line\n")
	f.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := e.search(t, Request{Query: "NEEDLE", CaseSensitive: true})
	runtime.ReadMemStats(&after)
	if res.Returned != 2 || res.Matches[0].Line != 1 || !res.Matches[0].TextTruncated || len(res.Matches[0].Text) != MaxLineText || res.Matches[1].Line != 2 {
		t.Fatalf("%+v", res.Matches)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
		t.Fatalf("searching a 256 MiB line allocated %d bytes", n)
	}
}

// TestZstdWindowSkipped: a frame asking for a window over
// decompress.MaxZstdWindow is skipped as window_too_large (one at the
// limit is searched).
func TestZstdWindowSkipped(t *testing.T) {
	e := newTenv(t)
	e.write(t, "ok.zst", zstdFrame(t, decompress.MaxZstdWindow))
	e.write(t, "wide.zst", zstdFrame(t, 2*decompress.MaxZstdWindow))
	res := e.search(t, Request{Query: "ERROR", CaseSensitive: true, Limit: 10})
	if got := lines(res); got != "ok.zst:1:ERROR here\n" || res.Skipped.WindowTooLarge != 1 || res.FilesSkipped != 1 {
		t.Fatalf("got %s %+v", got, res.Skipped)
	}
}

// zstdFrame is a frame declaring the window given: streamed over more
// than one block (a one-block frame gets a window of its content's size).
func zstdFrame(t *testing.T, window int) []byte {
	var b bytes.Buffer
	w, err := zstd.NewWriter(&b, zstd.WithWindowSize(window), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("ERROR here\n"))
	w.Write(bytes.Repeat([]byte("filler line\n"), 300<<10/12))
	w.Close()
	return b.Bytes()
}

// TestLiteralRareByte: the literal matcher scans for the byte of the
// needle that is rarest in code and logs (see byteRank).
func TestLiteralRareByte(t *testing.T) {
	for needle, want := range map[string]byte{"EOF": 'F', "Kelvin": 'K', "ZEBRA_QUOKKA_NOPE": 'Z', "Dial": 'D', "func": 'f', "io.EOF": 'F', "x := 1": 'x'} {
		if got := newLiteral([]byte(needle)).rare; got != want {
			t.Errorf("%q: scans for %q, want %q", needle, got, want)
		}
	}
}

// TestReusedBufferLeaksNothing: one worker searches file after file with
// the same read buffer and section reader; a file that is a prefix of the
// previous one (or of the needle) must never match through the bytes the
// previous file left in the buffer, whatever the matcher.
func TestReusedBufferLeaksNothing(t *testing.T) {
	e := newTenv(t)
	e.eng.workers = 1
	long := bytes.Repeat([]byte("filler line\n"), (bufferSize+sniffBytes)/12+100)
	long = append(long, "last needle here\n"...)
	e.write(t, "a-long.txt", long)
	e.write(t, "b-prefix.txt", []byte("last need"))                         // the needle's head, where a-long's is
	e.write(t, "c-short.txt", []byte("filler line\nfiller"))                // shorter than a-long's first line run
	e.write(t, "d-long.txt", append(bytes.Repeat([]byte("x"), 9000), '\n')) // past the sniffed prefix
	e.write(t, "e-tail.txt", []byte("nee"))
	for _, req := range []Request{
		{Query: "needle", CaseSensitive: true},
		{Query: "NEEDLE"},
		{Query: `needle\b`, Regex: true, CaseSensitive: true},
		{Query: `l.st ne+dle`, Regex: true},
		{Query: "needle", CaseSensitive: true, Output: OutputCount},
		{Query: "needle", CaseSensitive: true, Output: OutputFiles},
	} {
		res := e.search(t, req)
		var got []string
		for _, m := range res.Matches {
			got = append(got, fmt.Sprintf("%s:%d:%s", m.Path, m.Line, m.Text))
		}
		for _, f := range res.Files {
			got = append(got, fmt.Sprintf("%s:%d", f.Path, f.Count))
		}
		want := fmt.Sprintf("a-long.txt:%d:last needle here", bytes.Count(long, []byte("\n")))
		switch req.Output {
		case OutputCount:
			want = "a-long.txt:1"
		case OutputFiles:
			want = "a-long.txt:0"
		}
		if strings.Join(got, " ") != want || res.FilesScanned != 5 {
			t.Errorf("%+v: got %q (scanned %d), want %q in 5 files", req, got, res.FilesScanned, want)
		}
	}
}
