// Command mcpalt times one MCP tool call as an agent makes it (go-sdk's
// client, the call timed client-side, every next_cursor page followed with
// -page) alternating run by run with an anchor command run as a whole
// process, and prints one markdown row each: mean and median wall time, the
// ratio to the anchor, and (stdio) the server's CPU per sample against the
// anchor's (10 ms ticks: use enough runs).
//
//	mcpalt -runs 5 -warmup 1 -tool search_text \
//	  -args '{"workdir":"wd","query":"func","output":"count","limit":100}' \
//	  -server 'serverfs serve --stdio --workdir wd=/tmp/goroot' -- rg -c func /tmp/goroot
//
// The server runs over stdio (-server, split on spaces) or, with -url, is a
// running streamable-HTTP server. Every result is checked: a tool error
// stops it; -expect must occur in each page's text.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mcpalt:", err)
		os.Exit(1)
	}
}

func run() error {
	runs := flag.Int("runs", 5, "measured runs of each side")
	warmup := flag.Int("warmup", 1, "unmeasured runs of each side first")
	tool := flag.String("tool", "search_text", "tool to call")
	argsJSON := flag.String("args", "{}", "the call's arguments (JSON object)")
	server := flag.String("server", "", "stdio server command (split on spaces)")
	url := flag.String("url", "", "streamable HTTP endpoint instead of -server")
	page := flag.Bool("page", false, "follow next_cursor until the answer is complete (one sample: all pages)")
	expect := flag.String("expect", "", "text every page must contain")
	name := flag.String("name", "", "the call's row name (default: the tool)")
	flag.Parse()
	anchor := flag.Args()
	if len(anchor) == 0 || (*server == "") == (*url == "") {
		return errors.New("usage: mcpalt [-runs N] [-warmup N] [-page] -tool T -args JSON (-server CMD | -url URL) -- ANCHOR ARGS")
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(*argsJSON), &args); err != nil {
		return fmt.Errorf("-args: %w", err)
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "serverfs-mcpalt", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: *url}
	var srv *exec.Cmd
	if *server != "" {
		f := strings.Fields(*server)
		srv = exec.Command(f[0], f[1:]...)
		tr = &mcp.CommandTransport{Command: srv, TerminateDuration: 2 * time.Second}
	}
	s, err := client.Connect(ctx, tr, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := s.ListTools(ctx, nil); err != nil {
		return err
	}
	var ours, theirs, oursCPU, theirsCPU []float64
	pages := 0
	for r := 0; r < *warmup+*runs; r++ {
		cpu0 := serverCPU(srv)
		start := time.Now()
		n, err := callAll(ctx, s, *tool, args, *page, *expect)
		if err != nil {
			return err
		}
		d := time.Since(start)
		cpu := serverCPU(srv) - cpu0
		start = time.Now()
		cmd := exec.Command(anchor[0], anchor[1:]...)
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 { // 1: grep's "nothing found"
				return fmt.Errorf("%s: %w", strings.Join(anchor, " "), err)
			}
		}
		a := time.Since(start)
		acpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		if r >= *warmup {
			ours, theirs, pages = append(ours, ms(d)), append(theirs, ms(a)), n
			oursCPU, theirsCPU = append(oursCPU, ms(cpu)), append(theirsCPU, ms(acpu))
		}
	}
	if *name == "" {
		*name = *tool
	}
	load, _ := os.ReadFile("/proc/loadavg")
	am, amed := stats(theirs)
	om, omed := stats(ours)
	fmt.Printf("runs %d alternating (warm-up %d), load %s\n", *runs, *warmup, strings.TrimSpace(string(load)))
	ac, _ := stats(theirsCPU)
	oc, _ := stats(oursCPU)
	cpuCol := func(v, ratio float64) string {
		if srv == nil {
			return "| |"
		}
		return fmt.Sprintf("| %.1f | %.2f× |", v, ratio)
	}
	fmt.Println("| command | calls | mean wall [ms] | median wall [ms] | ratio (mean) | ratio (median) | mean CPU [ms] | CPU ratio |")
	fmt.Println("|---|--:|--:|--:|--:|--:|--:|--:|")
	fmt.Printf("| %s | %d | %.1f | %.1f | %.2f× | %.2f× %s\n", *name, pages, om, omed, om/am, omed/amed, cpuCol(oc, oc/ac))
	fmt.Printf("| %s | | %.1f | %.1f | 1.00× | 1.00× %s\n", strings.Join(anchor, " "), am, amed, cpuCol(ac, 1))
	return nil
}

// callAll makes the call (and, with page, one per next_cursor) and returns
// the number of calls.
func callAll(ctx context.Context, s *mcp.ClientSession, tool string, args map[string]any, page bool, expect string) (int, error) {
	a := maps(args)
	for n := 1; ; n++ {
		r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: a})
		if err != nil {
			return n, err
		}
		var text strings.Builder
		for _, c := range r.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				text.WriteString(t.Text)
			}
		}
		if r.IsError || !strings.Contains(text.String(), expect) {
			return n, fmt.Errorf("call %d: %.300s", n, text.String())
		}
		sc, _ := r.StructuredContent.(map[string]any)
		cur, _ := sc["next_cursor"].(string)
		if !page || cur == "" {
			return n, nil
		}
		a["cursor"] = cur
	}
}

func maps(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func stats(v []float64) (mean, median float64) {
	for _, x := range v {
		mean += x
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return mean / float64(len(v)), s[len(s)/2]
}

// serverCPU is the stdio server's CPU time so far (user + system, from
// /proc/PID/stat); 0 without a server process.
func serverCPU(srv *exec.Cmd) time.Duration {
	if srv == nil || srv.Process == nil {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", srv.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command (which may hold spaces) in parentheses:
	// utime and stime are the 12th and 13th, in clock ticks (100 Hz).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(u+st) * 10 * time.Millisecond
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
