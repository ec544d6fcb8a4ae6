package search

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/serverfs/serverfs/internal/errs"
)

// archiveTree writes a random tree of logs (seeded) under dir: nested
// directories, a .gz log, a hidden and a denied file holding the word, a
// binary file, lines with the word at random.
func archiveTree(t *testing.T, dir string, seed int64) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	write := func(rel string, data []byte) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	words := []string{"INFO start", "ERROR disk full", "WARN slow", "error lower", "INFO ok ERROR later", "debug"}
	for i := range 12 {
		var b strings.Builder
		for range rng.Intn(60) {
			b.WriteString(words[rng.Intn(len(words))])
			fmt.Fprintf(&b, " %d\n", rng.Intn(1000))
		}
		write(fmt.Sprintf("d%d/sub%d/app%02d.log", i%3, i%2, i), []byte(b.String()))
	}
	write("d0/.env", []byte("SECRET=ERROR\n"))
	write("d1/id_rsa", []byte("ERROR key\n"))
	write("d2/blob.bin", []byte("ERROR\x00binary\n"))
	write("d2/old.log.gz", gzBytes(t, []byte("INFO a\nERROR from gz\n")))
}

// pack makes archive name (in dir out) of the tree src with the system
// tools, members in name order.
func pack(t *testing.T, src, out, name string) {
	t.Helper()
	var cmd *exec.Cmd
	switch {
	case strings.HasSuffix(name, ".zip"):
		cmd = exec.Command("zip", "-qr", filepath.Join(out, name), ".")
	case strings.HasSuffix(name, ".tar.gz"):
		cmd = exec.Command("tar", "--sort=name", "-czf", filepath.Join(out, name), ".")
	default:
		cmd = exec.Command("tar", "--sort=name", "-cf", filepath.Join(out, name), ".")
	}
	cmd.Dir = src
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd, err, b)
	}
}

// bigLimit lets one page hold every match of a test tree.
const bigLimit = "SERVERFS_MAX_SEARCH_RESULTS=10000"

func gzBytes(t *testing.T, data []byte) []byte { return gz(t, data) }

// TestSearchInsideArchivesEqualsExtracted: a search inside zip, tar and
// tar.gz archives finds what the same search finds in the trees `tar -x`
// and `unzip` extract (the search on disk is rg's equal, search_test.go),
// for every output mode and with context, the path policy hiding the same
// members; without Archives the archives are counted, not searched.
func TestSearchInsideArchivesEqualsExtracted(t *testing.T) {
	for _, tool := range []string{"tar", "zip", "unzip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (the .ci/run installs it): %v", tool, err)
		}
	}
	for seed := int64(1); seed <= 3; seed++ {
		src, arc, ext := t.TempDir(), newTenv(t, bigLimit), newTenvAt(t, "wd", t.TempDir(), bigLimit)
		archiveTree(t, src, seed)
		for _, name := range []string{"logs.tar.gz", "release.zip", "plain.tar"} {
			pack(t, src, arc.root, name)
			dst := filepath.Join(ext.root, name)
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("tar", "-xf", filepath.Join(arc.root, name))
			if strings.HasSuffix(name, ".zip") {
				cmd = exec.Command("unzip", "-q", filepath.Join(arc.root, name))
			}
			cmd.Dir = dst
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", cmd, err, b)
			}
		}
		off := arc.search(t, Request{Query: "ERROR", CaseSensitive: true, Limit: 1000})
		if len(off.Matches) != 0 || off.Skipped.Archives != 3 {
			t.Fatalf("seed %d: without archives: %d matches, skipped %+v", seed, len(off.Matches), off.Skipped)
		}
		for _, req := range []Request{
			{Query: "ERROR", CaseSensitive: true},
			{Query: "error"},
			{Query: "ERROR", Output: OutputCount},
			{Query: "ERROR", Output: OutputFiles},
			{Query: "disk", Context: 2},
			{Query: "ERROR", Glob: "*.log", CaseSensitive: true},
			{Query: `ERROR \d+`, Regex: true, Before: 1},
		} {
			req.Limit = 1000
			got, want := req, req
			got.Archives = true
			g, w := arc.search(t, got), ext.search(t, want)
			if a, b := flatten(g), flatten(w); a != b {
				t.Fatalf("seed %d %+v: inside archives\n%s\nextracted\n%s", seed, req, a, b)
			}
			if len(g.Archives) != 3 {
				t.Fatalf("seed %d: archives opened %v", seed, g.Archives)
			}
		}
	}
}

// flatten is a result as sorted lines "path:line:text" (blocks, counts
// and files alike), for comparing results whose file order differs.
func flatten(r *Result) string {
	var out []string
	for _, m := range r.Matches {
		out = append(out, fmt.Sprintf("%s:%d:%s", m.Path, m.Line, m.Text))
	}
	for _, b := range r.Blocks {
		for _, l := range b.Lines {
			out = append(out, fmt.Sprintf("%s:%d:%v:%s", b.Path, l.Line, l.Match, l.Text))
		}
	}
	for _, f := range r.Files {
		out = append(out, fmt.Sprintf("%s:%d", f.Path, f.Count))
	}
	slices.Sort(out)
	return fmt.Sprintf("total %d, scanned %d, skipped %+v\n%s", r.Total, r.FilesScanned, r.Skipped, strings.Join(out, "\n"))
}

// TestSearchInsideArchivesPages: a search through archives paged one
// match at a time by next_cursor returns the one-page answer, in order.
func TestSearchInsideArchivesPages(t *testing.T) {
	src, arc := t.TempDir(), newTenv(t, bigLimit)
	archiveTree(t, src, 7)
	pack(t, src, arc.root, "a.tar.gz")
	pack(t, src, arc.root, "b.zip")
	arc.write(t, "c.log", []byte("ERROR on disk\n"))
	full := arc.search(t, Request{Query: "ERROR", CaseSensitive: true, Limit: 1000, Archives: true})
	if full.Truncated || len(full.Matches) < 20 {
		t.Fatalf("full: %d matches, truncated %v", len(full.Matches), full.Truncated)
	}
	for _, limit := range []int{1, 7} {
		var paged []Match
		cursor := ""
		for i := 0; ; i++ {
			r := arc.search(t, Request{Query: "ERROR", CaseSensitive: true, Limit: limit, Archives: true, Cursor: cursor})
			paged = append(paged, r.Matches...)
			if r.NextCursor == "" {
				break
			}
			if i > len(full.Matches) {
				t.Fatal("paging does not end")
			}
			cursor = r.NextCursor
		}
		if len(paged) != len(full.Matches) {
			t.Fatalf("limit %d: %d matches paged, %d in one page", limit, len(paged), len(full.Matches))
		}
		for i := range paged {
			if paged[i] != full.Matches[i] {
				t.Fatalf("limit %d: match %d: %+v, want %+v", limit, i, paged[i], full.Matches[i])
			}
		}
	}
}

// TestSearchInsideBrokenArchives: a truncated tar.gz keeps the matches
// of the members before the damage and counts the archive corrupt; a
// bomb is cut at its bound and counted too large; an archive named like
// one that is not is searched as the file it is.
func TestSearchInsideBrokenArchives(t *testing.T) {
	src, e := t.TempDir(), newTenv(t, bigLimit)
	archiveTree(t, src, 3)
	pack(t, src, e.root, "whole.tar.gz")
	data, err := os.ReadFile(filepath.Join(e.root, "whole.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	e.write(t, "cut.tar.gz", data[:len(data)*2/3])
	e.write(t, "fake.zip", []byte("not a zip, ERROR here\n"))
	whole := e.search(t, Request{Query: "ERROR", CaseSensitive: true, Limit: 1000, Archives: true, Glob: "whole.tar.gz/**"})
	cut := e.search(t, Request{Query: "ERROR", CaseSensitive: true, Limit: 1000, Archives: true, Glob: "cut.tar.gz/**"})
	if cut.Skipped.Corrupt != 1 || len(cut.Matches) == 0 || len(cut.Matches) >= len(whole.Matches) {
		t.Fatalf("cut: %d matches of %d, skipped %+v", len(cut.Matches), len(whole.Matches), cut.Skipped)
	}
	for i, m := range cut.Matches {
		w := whole.Matches[i]
		if strings.TrimPrefix(m.Path, "cut") != strings.TrimPrefix(w.Path, "whole") || m.Line != w.Line {
			t.Fatalf("cut match %d %+v, whole has %+v", i, m, w)
		}
	}
	fake := e.search(t, Request{Query: "ERROR", Limit: 10, Archives: true, Glob: "fake.zip"})
	if len(fake.Matches) != 1 || fake.Matches[0].Path != "fake.zip" {
		t.Fatalf("fake.zip: %+v", fake.Matches)
	}
}

// TestSearchInsideArchiveBomb: a tar.gz whose member of zeros expands
// past the ratio bound is cut there and counted too large, with what
// came before it searched, and memory stays bounded.
func TestSearchInsideArchiveBomb(t *testing.T) {
	e := newTenv(t, bigLimit)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	add := func(name string, size int64, r io.Reader) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: size, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(tw, r); err != nil {
			t.Fatal(err)
		}
	}
	add("first.log", 14, strings.NewReader("ERROR at start"))
	add("zeros.log", 1<<30, io.LimitReader(zeroReader{}, 1<<30))
	add("last.log", 12, strings.NewReader("ERROR at end"))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	e.write(t, "bomb.tar.gz", buf.Bytes())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := e.search(t, Request{Query: "ERROR", Limit: 100, Archives: true})
	runtime.ReadMemStats(&after)
	if len(r.Matches) != 1 || r.Matches[0].Path != "bomb.tar.gz/first.log" || r.Skipped.TooLarge != 2 { // the member over the file bound, and the archive past its ratio
		t.Fatalf("bomb (%d bytes): %+v, skipped %+v", buf.Len(), r.Matches, r.Skipped)
	}
	if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 64<<20 {
		t.Fatalf("heap grew %d MiB", grew>>20)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestSearchOneArchive: a search whose path is an archive, or a
// directory inside one, reads that archive alone, the glob relative to
// the path; without archives the path is refused as before.
func TestSearchOneArchive(t *testing.T) {
	src, e := t.TempDir(), newTenv(t, bigLimit)
	archiveTree(t, src, 5)
	pack(t, src, e.root, "a.tar.gz")
	pack(t, src, e.root, "b.zip")
	all := e.search(t, Request{Query: "ERROR", Limit: 10000, Archives: true, CaseSensitive: true})
	count := func(prefix string) (n int) {
		for _, m := range all.Matches {
			if strings.HasPrefix(m.Path, prefix) {
				n++
			}
		}
		return n
	}
	for _, c := range []struct{ path, glob, prefix string }{
		{"a.tar.gz", "", "a.tar.gz/"},
		{"b.zip/d1", "", "b.zip/d1/"},
		{"b.zip/d1", "sub0/*.log", "b.zip/d1/sub0/"},
		{"a.tar.gz", "app0*.log", "a.tar.gz/d"},
	} {
		r := e.search(t, Request{Path: c.path, Glob: c.glob, Query: "ERROR", Limit: 10000, Archives: true, CaseSensitive: true})
		want := count(c.prefix)
		if c.glob == "app0*.log" {
			want = 0
			for _, m := range all.Matches {
				if strings.HasPrefix(m.Path, "a.tar.gz/") && strings.Contains(m.Path, "/app0") {
					want++
				}
			}
		}
		if len(r.Matches) != want || want == 0 || len(r.Archives) != 1 {
			t.Fatalf("%+v: %d matches, want %d; archives %v", c, len(r.Matches), want, r.Archives)
		}
		for _, m := range r.Matches {
			if !strings.HasPrefix(m.Path, c.prefix) {
				t.Fatalf("%+v: match %+v", c, m)
			}
		}
	}
	_, err := e.eng.Search(t.Context(), Request{Workdir: "wd", Path: "a.tar.gz", Query: "ERROR"})
	wantCode(t, err, errs.NotADirectory)
}
