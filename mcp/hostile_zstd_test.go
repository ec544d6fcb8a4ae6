package mcp_test

// Decompressor memory: rotated .zst logs searched by concurrent
// calls against the real serverfs binary. Each zstd decoder holds its
// frame's window; the server bounds the window it accepts (8 MiB: every
// zstd level up to 19) and the decoders alive at once, so concurrent
// searches stay within a fixed budget.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// zstFrame compresses about size bytes of log lines (then tail) as a
// stream whose frame declares the given window: the decoder allocates it
// whatever the content size.
func zstFrame(t *testing.T, window, size int, tail string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithWindowSize(window), zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	for n, i := 0, 0; n < size; i++ {
		k, _ := fmt.Fprintf(w, "2026-12-01T09:%02d:%02d info request id=%d path=/api/items status=200\n", i/60%60, i%60, i)
		n += k
	}
	io.WriteString(w, tail)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeZsts writes n .zst files of one big frame (compressed once: the
// encoder is slow under -race) followed by a small frame naming the file.
func writeZsts(t *testing.T, dir, prefix string, n, window, size int) {
	t.Helper()
	big := zstFrame(t, window, size, "")
	for i := range n {
		name := fmt.Sprintf("%s.%02d.log.zst", prefix, i)
		data := append(append([]byte(nil), big...), zstFrame(t, window, 0, "needle in "+name+"\n")...)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestZstdSearchMemory(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	if err := os.Mkdir(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	// More text than the window, so that decoders fill theirs.
	const searchable, wide = 8, 4
	writeZsts(t, logs, "app", searchable, 8<<20, 9<<20) // zstd -19's window
	writeZsts(t, logs, "wide", wide, 32<<20, 33<<20)    // zstd --long=25's window
	// GOMAXPROCS=2: four search workers per call, as on a 2-core machine.
	url, pid := startServerfsEnv(t, buildServerfs(t, repoRoot(t)), dir, []string{"GOMAXPROCS=2"})
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "zstd-test", Version: "0"}, nil).
		Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err == nil {
		err = listForHeaders(t.Context(), cs)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) *sdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	if res := call("find_files", map[string]any{"workdir": "wd", "pattern": "*.zst"}); res.IsError {
		t.Fatal(textOf(res))
	}
	rss := procStatusKiB(t, pid, "VmRSS")

	// Five concurrent searches: up to 20 workers decompressing at once.
	const calls = 5
	type answer struct {
		Returned int // matching lines
		Skipped  map[string]int
	}
	answers := make([]answer, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "search_text", Arguments: map[string]any{"workdir": "wd", "path": "logs", "query": "needle"}})
			if err != nil || res.IsError {
				t.Errorf("search_text: %v %s", err, textOf(res))
				return
			}
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &answers[i]); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	hwm := procStatusKiB(t, pid, "VmHWM")
	t.Logf("%d concurrent searches of %d .zst files: server RSS %d KiB before, peak %d KiB (+%d KiB)", calls, searchable+wide, rss, hwm, hwm-rss)
	for _, a := range answers {
		if a.Returned != searchable || a.Skipped["window_too_large"] != wide {
			t.Errorf("want %d matches and %d skipped for their window: %d matches, skipped %v", searchable, wide, a.Returned, a.Skipped)
		}
	}
	// The budget: the decoders alive at once (at most 2 x GOMAXPROCS = 4)
	// times 8.5 MiB, plus the searches' own buffers.
	if growth := hwm - rss; growth > 64<<10 {
		t.Errorf("server peak RSS grew by %d KiB (budget 64 MiB)", growth)
	}

	// Read: refused with the reason, coded.
	res := call("read_text_file", map[string]any{"workdir": "wd", "path": "logs/wide.00.log.zst"})
	if text := textOf(res); !res.IsError || !strings.HasPrefix(text, "READ_LIMIT_EXCEEDED: ") || !strings.Contains(text, "window") {
		t.Errorf("read_text_file of a 32 MiB-window .zst: %.300s", text)
	}
	if res := call("read_text_file", map[string]any{"workdir": "wd", "path": "logs/app.00.log.zst", "start_line": 1, "max_lines": 1}); res.IsError {
		t.Errorf("read_text_file of an 8 MiB-window .zst: %s", textOf(res))
	}
}
