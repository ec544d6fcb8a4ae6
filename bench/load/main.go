// Command loadbench drives a running ServerFS with a mixed, partly hostile
// load and reports the server's memory and the latency of a cheap call:
//
//	loadbench -url http://127.0.0.1:8000/mcp -pid PID -c 100 -d 60s
//
// Each of -c clients has its own session (go-sdk's client) and loops over a
// mix of calls: per 20 calls, 12 stat_file, 4 read_text_file, 2
// list_directory, 1 find_files and 1 search_text over the whole tree,
// whose .zst logs make it heavy. It prints, per tool, calls, errors
// (SERVER_BUSY counted apart) and p50/p99 latency, and the server's RSS
// (sampled every 100 ms) and peak (VmHWM) from /proc/PID/status.
//
//	loadbench -url ... -pid PID -flood 50000
//
// sends that many initialize requests over plain HTTP (8 connections) and
// prints the server's RSS before and after, and how many of the last 2,000
// sessions still answer a ping.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	url := flag.String("url", "", "streamable HTTP endpoint")
	pid := flag.Int("pid", 0, "the server's PID (for RSS)")
	clients := flag.Int("c", 100, "concurrent clients")
	dur := flag.Duration("d", 60*time.Second, "duration")
	flood := flag.Int("flood", 0, "instead of the mix: send this many initialize requests")
	label := flag.String("label", "", "label of the printed line")
	flag.Parse()
	var err error
	if *flood > 0 {
		err = runFlood(*url, *pid, *flood, *label)
	} else {
		err = runMix(*url, *pid, *clients, *dur, *label)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

// statusKiB reads a field of /proc/PID/status in KiB (-1 if unknown).
func statusKiB(pid int, field string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return -1
}

type call struct {
	tool string
	args map[string]any
}

// mix is one round of a client's calls.
var mix = func() []call {
	stat := call{"stat_file", map[string]any{"workdir": "wd", "path": "small.txt"}}
	read := call{"read_text_file", map[string]any{"workdir": "wd", "path": "small.txt"}}
	list := call{"list_directory", map[string]any{"workdir": "wd", "path": "src"}}
	find := call{"find_files", map[string]any{"workdir": "wd", "pattern": "*.go"}}
	search := call{"search_text", map[string]any{"workdir": "wd", "query": "needle-never-found", "limit": 5}}
	var m []call
	for i := range 20 {
		switch {
		case i == 9:
			m = append(m, find)
		case i == 19:
			m = append(m, search)
		case i%5 == 2:
			m = append(m, read)
		case i == 4 || i == 14:
			m = append(m, list)
		default:
			m = append(m, stat)
		}
	}
	return m
}()

type toolStats struct {
	mu     sync.Mutex
	lat    []time.Duration
	errors int
	busy   int
}

func runMix(url string, pid, clients int, dur time.Duration, label string) error {
	ctx := context.Background()
	sessions := make([]*mcp.ClientSession, clients)
	for i := range sessions {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "loadbench", Version: "0"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
		if err != nil {
			return fmt.Errorf("client %d: %w", i, err)
		}
		defer cs.Close()
		// A 2026-07-28 client sends Mcp-Param-Workdir, which the server
		// requires, only for tools it has listed.
		if _, err := cs.ListTools(ctx, nil); err != nil {
			return fmt.Errorf("client %d: tools/list: %w", i, err)
		}
		sessions[i] = cs
	}
	stats := map[string]*toolStats{}
	for _, c := range mix {
		stats[c.tool] = &toolStats{}
	}
	base := statusKiB(pid, "VmRSS")
	var maxRSS atomic.Int64
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if r := int64(statusKiB(pid, "VmRSS")); r > maxRSS.Load() {
					maxRSS.Store(r)
				}
			}
		}
	}()
	deadline := time.Now().Add(dur)
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Go(func() {
			for j := i; time.Now().Before(deadline); j++ {
				c := mix[j%len(mix)]
				cctx, cancel := context.WithTimeout(ctx, time.Minute)
				start := time.Now()
				res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
				d := time.Since(start)
				cancel()
				s := stats[c.tool]
				s.mu.Lock()
				switch {
				case err != nil:
					s.errors++
				case res.IsError && strings.HasPrefix(text(res), "SERVER_BUSY"):
					s.busy++
				case res.IsError:
					s.errors++
				default:
					s.lat = append(s.lat, d)
				}
				s.mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(stop)
	peak := statusKiB(pid, "VmHWM")
	fmt.Printf("## %s: %d clients, %v\n\n", label, clients, dur)
	fmt.Printf("server RSS: %d MiB at start, max sampled %d MiB, peak (VmHWM) %d MiB\n\n", base>>10, maxRSS.Load()>>10, peak>>10)
	fmt.Println("| tool | ok calls | SERVER_BUSY | other errors | p50 ms | p99 ms |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for _, name := range []string{"stat_file", "read_text_file", "list_directory", "find_files", "search_text"} {
		s := stats[name]
		slices.Sort(s.lat)
		p := func(q float64) float64 {
			if len(s.lat) == 0 {
				return 0
			}
			return float64(s.lat[int(float64(len(s.lat)-1)*q)].Microseconds()) / 1000
		}
		fmt.Printf("| %s | %d | %d | %d | %.2f | %.2f |\n", name, len(s.lat), s.busy, s.errors, p(0.5), p(0.99))
	}
	fmt.Println()
	return nil
}

func text(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

func post(client *http.Client, url, sid, body string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, nil
}

func runFlood(url string, pid, n int, label string) error {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"0"}}}`
	base := statusKiB(pid, "VmRSS")
	ids := make([]string, n)
	var failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				resp, err := post(client, url, "", initBody)
				if err != nil || resp.StatusCode != http.StatusOK {
					failed.Add(1)
					continue
				}
				ids[i] = resp.Header.Get("Mcp-Session-Id")
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	rss, peak := statusKiB(pid, "VmRSS"), statusKiB(pid, "VmHWM")
	live := 0
	last := ids[max(0, n-2000):]
	for _, sid := range last {
		if sid == "" {
			continue
		}
		if resp, err := post(client, url, sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); err == nil && resp.StatusCode == http.StatusOK {
			live++
		}
	}
	fmt.Printf("## %s: %d initialize calls in %v (%.0f/s), %d failed\n\n", label, n, took.Round(time.Millisecond), float64(n)/took.Seconds(), failed.Load())
	fmt.Printf("server RSS: %d MiB before, %d MiB after (+%d MiB, %.1f KiB per call), peak %d MiB; %d of the last %d sessions live\n\n",
		base>>10, rss>>10, (rss-base)>>10, float64(rss-base)/float64(n), peak>>10, live, len(last))
	return nil
}
