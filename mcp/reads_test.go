package mcp

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// hugeLogBytes is the decompressed size of the logs of
// TestTailCompressedLogBoundedMemory: 1 GiB, less under the race detector
// (which slows decompression tenfold) to keep the suite's time small.
var hugeLogBytes int64 = 1 << 30

func init() {
	if raceEnabled {
		hugeLogBytes = 32 << 20
	}
}

// logBlock is 1 MiB of numbered log lines starting with line first.
func logBlock(first int) ([]byte, int) {
	var b bytes.Buffer
	n := first
	for b.Len() < 1<<20-64 {
		fmt.Fprintf(&b, "2026-12-01T09:00:00Z INFO request %d served in 3ms\n", n)
		n++
	}
	b.WriteString(strings.Repeat("x", 1<<20-b.Len()-1) + "\n")
	return b.Bytes(), n - first + 1
}

// hugeLog writes a compressed log of hugeLogBytes (decompressed): one
// compressed 1 MiB block repeated (gzip members and zstd frames may be
// concatenated), then a last block with the lines the tail must show.
func hugeLog(t *testing.T, path, kind string) (lastLine int) {
	t.Helper()
	compress := func(p []byte) []byte {
		var b bytes.Buffer
		var w interface {
			Write([]byte) (int, error)
			Close() error
		}
		switch kind {
		case "gz":
			w, _ = gzip.NewWriterLevel(&b, gzip.BestSpeed)
		default:
			zw, err := zstd.NewWriter(&b, zstd.WithEncoderLevel(zstd.SpeedFastest))
			if err != nil {
				t.Fatal(err)
			}
			w = zw
		}
		if _, err := w.Write(p); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	block, perBlock := logBlock(1)
	cb := compress(block)
	blocks := int(hugeLogBytes >> 20)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for range blocks - 1 {
		if _, err := f.Write(cb); err != nil {
			t.Fatal(err)
		}
	}
	var last bytes.Buffer
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&last, "final line %d\n", i)
	}
	if _, err := f.Write(compress(last.Bytes())); err != nil {
		t.Fatal(err)
	}
	return (blocks-1)*perBlock + 100
}

// TestTailCompressedLogBoundedMemory: the last 50 lines of a .gz and a .zst
// log of 1 GiB decompressed come back numbered, through the real tool,
// while the heap grows by less than 16 MiB: the stream passes through the
// tail's ring, never into memory.
func TestTailCompressedLogBoundedMemory(t *testing.T) {
	e := newEnv(t)
	e.reconfigure(t, []string{"wd=" + e.root}, []string{fmt.Sprintf("SERVERFS_SEARCH_MAX_FILE_BYTES=%d", 2*hugeLogBytes)}, nil)
	cs := e.client(t, e.serveHTTP(t))
	for _, kind := range []string{"gz", "zst"} {
		name := "huge.log." + kind
		total := hugeLog(t, filepath.Join(e.root, name), kind)
		var w readTextFileOut
		growth := peakHeapGrowth(func() {
			w = structured[readTextFileOut](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": name, "tail": 50}))
		})
		t.Logf("%s: tail 50 of %d decompressed bytes: heap grew %d bytes", kind, hugeLogBytes, growth)
		if growth > 16<<20 {
			t.Errorf("%s: the heap grew %d bytes, want < 16 MiB", kind, growth)
		}
		if !strings.HasPrefix(w.Content, "final line 51\n") || !strings.HasSuffix(w.Content, "final line 100\n") || strings.Count(w.Content, "\n") != 50 {
			t.Errorf("%s: tail content %q", kind, w.Content)
		}
		if w.StartLine != total-49 || w.EndLine != total || w.TotalLines == nil || *w.TotalLines != total || !w.Compressed || w.CutAtCap || w.HasMore {
			t.Errorf("%s: window %d-%d total %v compressed %v cut %v, want %d-%d", kind, w.StartLine, w.EndLine, w.TotalLines, w.Compressed, w.CutAtCap, total-49, total)
		}
	}
}

// peakHeapGrowth runs fn and returns the peak of the live heap while it
// ran (sampled every millisecond through runtime/metrics, which does not
// stop the world) minus the live heap before it.
func peakHeapGrowth(fn func()) int64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() int64 { metrics.Read(sample); return int64(sample[0].Value.Uint64()) }
	runtime.GC()
	base := read()
	var peak atomic.Int64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(done)
	<-stopped
	return peak.Load() - base
}

// TestTailThroughTools: tail on read_text_file and read_text_files, the
// decompressed-bytes cap (cut_at_cap, no total_lines), and tail's refusals.
func TestTailThroughTools(t *testing.T) {
	e := newEnv(t)
	var big strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&big, "l%d\n", i)
	}
	writeFile(t, filepath.Join(e.root, "capped.log.gz"), gzipped(t, big.String()))
	e.reconfigure(t, []string{"wd=" + e.root}, []string{"SERVERFS_SEARCH_MAX_FILE_BYTES=1000"}, nil)
	cs := e.client(t, e.serveHTTP(t))

	// big.txt is over the 1000-byte count budget: numbered from the end.
	res := e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "big.txt", "tail": 2})
	if text, want := resultText(res), fmt.Sprintf("==> wd:big.txt last 2 lines (-2 to -1 from the end) <==\nbig line %d\nbig line %d\n", bigLines-1, bigLines); text != want {
		t.Errorf("tail text %q, want %q", text, want)
	}
	w := structured[readTextFileOut](t, res)
	if w.Content != fmt.Sprintf("big line %d\nbig line %d\n", bigLines-1, bigLines) || w.StartLine != -2 || w.EndLine != -1 || w.TotalLines != nil {
		t.Errorf("tail of big.txt: %+v", w)
	}
	w = structured[readTextFileOut](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt", "tail": 1}))
	if w.Content != "beta\n" || w.StartLine != 2 || w.EndLine != 2 || w.TotalLines == nil || *w.TotalLines != 2 {
		t.Errorf("tail of sub/a.txt: %+v", w)
	}
	w = structured[readTextFileOut](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "logs/app.log.1.gz", "tail": 1}))
	if w.Content != "line three\n" || w.StartLine != 3 || !w.Compressed {
		t.Errorf("tail of a .gz: %+v", w)
	}
	// The cap (1000 decompressed bytes) ends the stream: the tail is the
	// cap's, and the file's line count is not known.
	res = e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "capped.log.gz", "tail": 1})
	if text := resultText(res); !strings.HasPrefix(text, "==> wd:capped.log.gz (gzip) last 1 lines (") || !strings.Contains(text, "+) cut at byte cap <==\n") {
		t.Errorf("capped tail text %q", text)
	}
	w = structured[readTextFileOut](t, res)
	if !w.CutAtCap || w.TotalLines != nil || strings.Contains(w.Content, "l1000") {
		t.Errorf("tail past the cap: %+v", w)
	}
	toolErr(t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "big.txt", "tail": 2, "start_line": 5}), "INVALID_ARGUMENT: ")
	toolErr(t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "big.txt", "tail": -1}), "INVALID_ARGUMENT: ")
	toolErr(t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "id_rsa", "tail": 1}), "DENIED_PATH: ")
	toolErr(t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "link.txt", "tail": 1}), "SYMLINK_NOT_ALLOWED: ")

	m := structured[readTextFilesOut](t, e.call(t, cs, "read_text_files", map[string]any{"workdir": "wd", "paths": []string{"big.txt", "sub/a.txt"}, "tail": 1}))
	if len(m.Files) != 2 || m.Files[0].Content != fmt.Sprintf("big line %d\n", bigLines) || m.Files[1].Content != "beta\n" {
		t.Errorf("read_text_files tail: %+v", m)
	}
}

// TestReadTextFiles: one call, mixed good, missing, hidden, binary, denied,
// symlinked and compressed paths: each answered on its own, in order, and
// an error for one never fails the others.
func TestReadTextFiles(t *testing.T) {
	e := newEnv(t)
	writeFile(t, filepath.Join(e.root, "bin.dat"), []byte("ELF\x00\x01\x02"))
	cs := e.client(t, e.serveHTTP(t))
	paths := []string{"README.md", "missing.txt", ".hidden.txt", "bin.dat", "id_rsa", "link.txt", "logs/app.log.1.gz", "../secret.txt", "sub", "./sub/a.txt"}
	want := []string{"", "PATH_NOT_FOUND: ", "HIDDEN_PATH_NOT_ALLOWED: ", "BINARY_FILE: ", "DENIED_PATH: ", "SYMLINK_NOT_ALLOWED: ", "", "PATH_OUTSIDE_WORKDIR: ", "NOT_A_FILE: ", ""}
	res := e.call(t, cs, "read_text_files", map[string]any{"workdir": "wd", "paths": paths})
	m := structured[readTextFilesOut](t, res)
	if len(m.Files) != len(paths) {
		t.Fatalf("%d answers for %d paths: %+v", len(m.Files), len(paths), m)
	}
	for i, f := range m.Files {
		single := e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": paths[i]})
		if want[i] == "" {
			if f.Error != "" {
				t.Errorf("%s: %s", paths[i], f.Error)
			}
			// The same window read_text_file gives.
			w := structured[readTextFileOut](t, single)
			if f.Content != w.Content || f.StartLine != w.StartLine || f.Revision != w.Revision || f.Path != w.Path || f.Compressed != w.Compressed {
				t.Errorf("%s: %+v, read_text_file says %+v", paths[i], f, w)
			}
			continue
		}
		if !strings.HasPrefix(f.Error, want[i]) || f.Content != "" {
			t.Errorf("%s: %+v, want error %s", paths[i], f, want[i])
		}
		// The same error read_text_file gives.
		if text := resultText(single); !single.IsError || text != f.Error {
			t.Errorf("%s: error %q, read_text_file says %q", paths[i], f.Error, text)
		}
	}
	if m.Truncated || m.BytesReturned != len(readmeText)+len(gzLogText)+len(aText) {
		t.Errorf("truncated %v, bytes %d", m.Truncated, m.BytesReturned)
	}
	// Refusals of the call itself.
	toolErr(t, e.call(t, cs, "read_text_files", map[string]any{"workdir": "wd", "paths": []string{}}), "INVALID_ARGUMENT: ")
	toolErr(t, e.call(t, cs, "read_text_files", map[string]any{"workdir": "wd", "paths": make([]string, 21)}), "INVALID_ARGUMENT: ")
	toolErr(t, e.call(t, cs, "read_text_files", map[string]any{"workdir": "nope", "paths": []string{"README.md"}}), "WORKDIR_NOT_FOUND: ")
	toolErr(t, e.call(t, cs, "read_text_files", map[string]any{"workdir": "wd", "paths": "README.md"}), "INVALID_ARGUMENT: ")
}

// TestReadTextFilesTotalCap: the windows of one call share one byte cap;
// when it is used up the file being read is cut (its own has_more) and
// the rest are READ_LIMIT_EXCEEDED, and truncated says so.
func TestReadTextFilesTotalCap(t *testing.T) {
	e := newEnv(t)
	line := strings.Repeat("z", 99) + "\n"
	for i := range 4 {
		writeFile(t, filepath.Join(e.root, fmt.Sprintf("f%d.txt", i)), []byte(strings.Repeat(line, 6))) // 600 bytes each
	}
	e.reconfigure(t, []string{"wd=" + e.root}, []string{"SERVERFS_MAX_READ_BYTES=1500"}, nil)
	cs := e.client(t, e.serveHTTP(t))
	m := structured[readTextFilesOut](t, e.call(t, cs, "read_text_files", map[string]any{"workdir": "wd", "paths": []string{"f0.txt", "f1.txt", "f2.txt", "f3.txt"}}))
	if !m.Truncated || m.BytesReturned > 1500 || len(m.Files) != 4 {
		t.Fatalf("%+v", m)
	}
	f := m.Files
	if f[0].HasMore || f[1].HasMore || !f[2].HasMore || f[2].EndLine != 3 || f[2].NextStartLine == nil || *f[2].NextStartLine != 4 {
		t.Errorf("windows: %+v", f[:3])
	}
	if !strings.HasPrefix(f[3].Error, "READ_LIMIT_EXCEEDED: ") {
		t.Errorf("f3: %+v", f[3])
	}
	// Within the total nothing is truncated.
	m = structured[readTextFilesOut](t, e.call(t, cs, "read_text_files", map[string]any{"workdir": "wd", "paths": []string{"f0.txt", "f1.txt"}}))
	if m.Truncated || m.BytesReturned != 1200 {
		t.Errorf("%+v", m)
	}
}
