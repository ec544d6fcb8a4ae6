// Command fairbench measures whether one client looping the heaviest
// search the server accepts starves another client's heavy calls:
//
//	fairbench -url http://127.0.0.1:8000/mcp -lane session -d 30s
//
// Client A (its own MCP session on -lane session, or the MCP client name
// "fair-a" on -lane stateless) runs -a calls at once, each a search_text of
// -pattern (a regular expression) over workdir -big, back to back. Client
// B (its own session, or the name "fair-b") calls find_files with pattern
// * over workdir -small back to back. It prints a markdown table row per
// client: calls, SERVER_BUSY refusals, other errors, and latency p50, p99
// and max; for A also how many searches stopped at the timeout. Only calls
// that started after -warmup and ended before the deadline are counted;
// A's last calls are awaited and their durations counted too, so a search
// that overruns its timeout is seen.
//
// The session lane forces protocol 2025-11-25 (initialize, one session per
// client); the stateless lane 2026-07-28, where every call is a
// self-contained POST and the server tells clients of one host apart by
// the clientInfo name in each request's _meta.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fairbench:", err)
		os.Exit(1)
	}
}

type sample struct {
	took     time.Duration
	busy     bool
	err      string
	timedOut bool
}

func run() error {
	url := flag.String("url", "", "streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp")
	lane := flag.String("lane", "session", "session (2025-11-25) or stateless (2026-07-28)")
	dur := flag.Duration("d", 30*time.Second, "measured time")
	warmup := flag.Duration("warmup", 2*time.Second, "time before measuring (A's first search is running by then)")
	aCalls := flag.Int("a", 1, "client A's searches in flight at once")
	pattern := flag.String("pattern", `(?:\w+\s*){249}[^\w\s]`, "client A's regular expression")
	big := flag.String("big", "big", "workdir A searches")
	small := flag.String("small", "small", "workdir B lists with find_files")
	label := flag.String("label", "", "first column of the printed rows (default: the lane)")
	flag.Parse()
	if *url == "" {
		return errors.New("-url is required")
	}
	protocol := map[string]string{"session": "2025-11-25", "stateless": "2026-07-28"}[*lane]
	if protocol == "" {
		return fmt.Errorf("-lane %q: session or stateless", *lane)
	}
	if *label == "" {
		*label = *lane
	}
	ctx := context.Background()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	connect := func(name string) (*mcp.ClientSession, error) {
		c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: *url, HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err == nil {
			_, err = cs.ListTools(ctx, nil) // as a client does; also checks the server is up
		}
		return cs, err
	}
	a, err := connect("fair-a")
	if err != nil {
		return fmt.Errorf("client A: %w", err)
	}
	defer a.Close()
	b, err := connect("fair-b")
	if err != nil {
		return fmt.Errorf("client B: %w", err)
	}
	defer b.Close()
	if got := a.InitializeResult(); got != nil && got.ProtocolVersion != protocol {
		return fmt.Errorf("negotiated %s, want %s", got.ProtocolVersion, protocol)
	}

	start := time.Now()
	from, until := start.Add(*warmup), start.Add(*warmup+*dur)
	var mu sync.Mutex
	var as, bs []sample
	call := func(cs *mcp.ClientSession, tool string, args map[string]any) sample {
		t := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		s := sample{took: time.Since(t)}
		switch {
		case err != nil:
			s.err = err.Error()
		case res.IsError:
			s.err = text(res)
			s.busy = strings.HasPrefix(s.err, "SERVER_BUSY")
			// Nothing found before the timeout: an answer, not a failure.
			if strings.HasPrefix(s.err, "SEARCH_TIMEOUT") {
				s.err, s.timedOut = "", true
			}
		default:
			sc, _ := res.StructuredContent.(map[string]any)
			s.timedOut = sc["truncated_reason"] == "timeout"
		}
		return s
	}
	var wg sync.WaitGroup
	for range *aCalls {
		wg.Go(func() {
			for time.Now().Before(until) {
				t := time.Now()
				s := call(a, "search_text", map[string]any{"workdir": *big, "query": *pattern, "regex": true})
				if t.After(from) || t.Add(s.took).After(from) {
					mu.Lock()
					as = append(as, s)
					mu.Unlock()
				}
			}
		})
	}
	wg.Go(func() {
		for time.Now().Before(until) {
			t := time.Now()
			s := call(b, "find_files", map[string]any{"workdir": *small, "pattern": "*"})
			if t.After(from) && t.Add(s.took).Before(until) {
				mu.Lock()
				bs = append(bs, s)
				mu.Unlock()
			}
		}
	})
	wg.Wait()
	for _, s := range append(slices.Clone(as), bs...) {
		if s.err != "" && !s.busy {
			fmt.Fprintln(os.Stderr, "fairbench: error:", s.err)
			break
		}
	}
	fmt.Println(row(*label, fmt.Sprintf("A: search_text ×%d", *aCalls), as))
	fmt.Println(row(*label, "B: find_files", bs))
	return nil
}

// row is one markdown table row: label, client, calls, SERVER_BUSY, other
// errors, timeouts, p50, p99, max (ms).
func row(label, client string, ss []sample) string {
	var busy, errs, timeouts int
	var d []time.Duration
	for _, s := range ss {
		switch {
		case s.busy:
			busy++
		case s.err != "":
			errs++
		default:
			d = append(d, s.took)
			if s.timedOut {
				timeouts++
			}
		}
	}
	slices.Sort(d)
	q := func(p float64) string {
		if len(d) == 0 {
			return "-"
		}
		i := int(p*float64(len(d))+0.999999) - 1 // nearest rank
		return fmt.Sprintf("%.1f", float64(d[max(0, min(i, len(d)-1))].Microseconds())/1000)
	}
	return fmt.Sprintf("| %s | %s | %d | %d | %d | %d | %s | %s | %s |", label, client, len(ss), busy, errs, timeouts, q(0.5), q(0.99), q(1))
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
