// Command mcpbench measures MCP tool-call throughput and latency with
// go-sdk's client: calls per second, p50 and p99 latency, and errors.
//
// HTTP mode drives a running streamable-HTTP server; each of -c clients has
// its own session and calls the tool back to back:
//
//	mcpbench -mode http -url http://127.0.0.1:8000/mcp -tool stat_file -workdir wd -file a.txt -c 64
//
// stdio mode spawns a server command (everything after --) and drives its one
// session with -c concurrent callers (1: sequential calls):
//
//	mcpbench -mode stdio -server serverfs -tool stat_file -workdir wd -file a.txt -c 1 -- serverfs serve --stdio --workdir wd=/dir
//	mcpbench -mode stdio -server reference -tool stat_file -dir /dir -file a.txt -c 1 -- node .../server-filesystem/dist/index.js /dir
//
// -tool takes ServerFS's names. For -server reference they are mapped to the
// reference server's equivalents (stat_file -> get_file_info,
// read_text_file -> read_text_file) with an absolute path DIR/FILE; for
// -server serverfs the arguments are {workdir, path: FILE}.
//
// Every response is checked: a transport error, a result with isError, or
// (with -expect) a result whose text content lacks the expected string
// counts as an error and is not timed. The program prints a human summary
// on stderr and one tab-separated line on stdout:
//
//	calls_per_s  p50_ms  p99_ms  errors  calls  max_ms  server_cpu_us_per_call  server_cores  client_cpu_us_per_call  client_cores
//
// CPU figures come from /proc (Linux) over the measured window: the server's
// in stdio mode (the spawned process) or with -server-pid in http mode, and
// this client's own; -1 where unknown. On a shared machine they separate the
// server's cost per call from the client's and from other load.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mcpbench:", err)
		os.Exit(1)
	}
}

type config struct {
	mode, url, server, tool    string
	workdir, dir, file, expect string
	clients                    int
	duration, warmup           time.Duration
	stderrPath                 string
	noSSE                      bool
	protocol                   string // forced protocol version; "" go-sdk's newest
	serverPID                  int    // for CPU accounting; stdio mode sets it
	profile                    string // -profile: the server's CPU profile of the measured window
	command                    []string
}

func run() error {
	var c config
	flag.StringVar(&c.mode, "mode", "http", "http (drive -url) or stdio (spawn the command after --)")
	flag.StringVar(&c.url, "url", "", "streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp (http mode)")
	flag.StringVar(&c.server, "server", "serverfs", "argument convention: serverfs ({workdir, path}) or reference (absolute path, get_file_info)")
	flag.StringVar(&c.tool, "tool", "stat_file", "stat_file or read_text_file (ServerFS names; mapped for -server reference)")
	flag.StringVar(&c.workdir, "workdir", "wd", "workdir alias (serverfs)")
	flag.StringVar(&c.dir, "dir", "", "absolute directory the reference server was started with (reference)")
	flag.StringVar(&c.file, "file", "", "file path relative to the workdir / -dir")
	flag.StringVar(&c.expect, "expect", "", "if set, every result's text content must contain this string")
	flag.IntVar(&c.clients, "c", 1, "concurrent clients (http: one session each; stdio: concurrent calls on the one session)")
	flag.DurationVar(&c.duration, "d", 5*time.Second, "measured duration")
	flag.DurationVar(&c.warmup, "warmup", time.Second, "warmup duration (calls made, not counted)")
	flag.StringVar(&c.stderrPath, "server-stderr", "", "stdio mode: append the server's stderr to this file (default: discard)")
	flag.BoolVar(&c.noSSE, "no-sse", false, "http mode: do not open the standalone SSE GET stream per session")
	flag.StringVar(&c.protocol, "protocol", "", "protocol version the client asks for (e.g. 2025-11-25: the session lane; 2026-07-28: the stateless lane); empty or newest: go-sdk's newest")
	flag.IntVar(&c.serverPID, "server-pid", 0, "http mode: the server's PID, to report its CPU time per call (Linux /proc)")
	flag.StringVar(&c.profile, "profile", "", "signal the server (built with -tags benchprofile) to CPU-profile the measured window, and wait up to 30 s for the profile it writes to this file")
	flag.Parse()
	c.command = flag.Args()
	if c.protocol == "newest" {
		c.protocol = "" // go-sdk asks for its newest
	}

	if c.clients < 1 || c.duration <= 0 || c.warmup < 0 {
		return errors.New("-c must be >= 1, -d > 0, -warmup >= 0")
	}
	if c.file == "" {
		return errors.New("-file is required")
	}
	name, args, err := c.call()
	if err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(context.Background(), c.warmup+c.duration+2*time.Minute)
	defer cancel()

	var sessions []*mcp.ClientSession
	switch c.mode {
	case "http":
		if c.url == "" || len(c.command) > 0 {
			return errors.New("http mode takes -url and no command")
		}
		sessions, err = connectHTTP(ctx, c)
	case "stdio":
		if len(c.command) == 0 {
			return errors.New("stdio mode needs the server command after --")
		}
		sessions, err = connectStdio(ctx, &c)
	default:
		return fmt.Errorf("unknown -mode %q", c.mode)
	}
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	if err != nil {
		return err
	}
	if ir := sessions[0].InitializeResult(); ir != nil {
		// Which lane: a session id (initialize) or none (2026-07-28).
		fmt.Fprintf(os.Stderr, "mcpbench: protocol %s, session id set: %v\n", ir.ProtocolVersion, sessions[0].ID() != "")
	}

	// One checked call before timing, so a misconfigured run fails loudly
	// instead of measuring error results.
	if err := check(ctx, sessions[0], name, args, c.expect); err != nil {
		return fmt.Errorf("first %s call: %w", name, err)
	}

	res := measure(ctx, sessions, c, name, args)
	lat := res.latencies
	slices.Sort(lat)
	secs := c.duration.Seconds()
	rate := float64(len(lat)) / secs
	p50, p99, maxL := pct(lat, 50), pct(lat, 99), pct(lat, 100)
	// CPU per counted call, in microseconds, and cores used (-1: unknown).
	perCall := func(cpu time.Duration) float64 {
		if cpu < 0 || len(lat) == 0 {
			return -1
		}
		return float64(cpu) / float64(time.Microsecond) / float64(len(lat))
	}
	cores := func(cpu time.Duration) float64 {
		if cpu < 0 {
			return -1
		}
		return cpu.Seconds() / secs
	}
	srvUS, cliUS := perCall(res.serverCPU), perCall(res.clientCPU)
	fmt.Fprintf(os.Stderr, "%s %s %s(%s) c=%d: %d calls in %s = %.0f calls/s  p50 %.3f ms  p99 %.3f ms  max %.3f ms  errors %d  server CPU %.0f us/call (%.2f cores)  client CPU %.0f us/call (%.2f cores)",
		c.mode, c.server, c.tool, name, c.clients, len(lat), c.duration, rate, ms(p50), ms(p99), ms(maxL), res.errors,
		srvUS, cores(res.serverCPU), cliUS, cores(res.clientCPU))
	if res.firstErr != nil {
		fmt.Fprintf(os.Stderr, " (first: %v)", res.firstErr)
	}
	fmt.Fprintln(os.Stderr)
	fmt.Printf("%.0f\t%.3f\t%.3f\t%d\t%d\t%.3f\t%.0f\t%.2f\t%.0f\t%.2f\n", rate, ms(p50), ms(p99), res.errors, len(lat), ms(maxL),
		srvUS, cores(res.serverCPU), cliUS, cores(res.clientCPU))
	return nil
}

// call returns the tool name and arguments for c.server's convention.
func (c config) call() (string, map[string]any, error) {
	switch c.server {
	case "serverfs":
		switch c.tool {
		case "stat_file", "read_text_file":
			return c.tool, map[string]any{"workdir": c.workdir, "path": c.file}, nil
		}
	case "reference":
		if !filepath.IsAbs(c.dir) {
			return "", nil, errors.New("-server reference needs an absolute -dir")
		}
		p := filepath.Join(c.dir, c.file)
		switch c.tool {
		case "stat_file":
			return "get_file_info", map[string]any{"path": p}, nil
		case "read_text_file":
			return "read_text_file", map[string]any{"path": p}, nil
		}
	default:
		return "", nil, fmt.Errorf("unknown -server %q (serverfs or reference)", c.server)
	}
	return "", nil, fmt.Errorf("unknown -tool %q (stat_file or read_text_file)", c.tool)
}

// newClient advertises no capabilities: go-sdk's default announces roots,
// and the reference server would then replace its allowed directories with
// the client's (empty) roots list. The TS SDK client does not announce
// roots by default either.
func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "serverfs-mcpbench", Version: "0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
}

func connectHTTP(ctx context.Context, c config) ([]*mcp.ClientSession, error) {
	// One transport for all sessions, with enough idle connections that
	// keep-alive is never defeated (net/http keeps 2 per host by default,
	// which would make 64 clients open a new TCP connection per call). With
	// the standalone SSE stream each session holds one more connection.
	hc := &http.Client{Transport: &http.Transport{
		MaxIdleConns:        4*c.clients + 16,
		MaxIdleConnsPerHost: 4*c.clients + 16,
		IdleConnTimeout:     time.Minute,
	}}
	sessions := make([]*mcp.ClientSession, 0, c.clients)
	for i := 0; i < c.clients; i++ {
		s, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: c.url, HTTPClient: hc, DisableStandaloneSSE: c.noSSE}, &mcp.ClientSessionOptions{ProtocolVersion: c.protocol})
		if err != nil {
			return sessions, fmt.Errorf("connect session %d to %s: %w", i, c.url, err)
		}
		sessions = append(sessions, s)
		// A 2026-07-28 client sends Mcp-Param-Workdir, which the server
		// requires, only for tools it has listed (as a host does first).
		if _, err := s.ListTools(ctx, nil); err != nil {
			return sessions, fmt.Errorf("session %d: tools/list: %w", i, err)
		}
	}
	return sessions, nil
}

func connectStdio(ctx context.Context, c *config) ([]*mcp.ClientSession, error) {
	// Not CommandContext: the SDK's Close ends the process (stdin closed,
	// then SIGTERM after TerminateDuration).
	cmd := exec.Command(c.command[0], c.command[1:]...)
	if c.stderrPath != "" {
		f, err := os.OpenFile(c.stderrPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		defer f.Close() // the child keeps its own descriptor
		cmd.Stderr = f
	}
	s, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: c.protocol})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", strings.Join(c.command, " "), err)
	}
	c.serverPID = cmd.Process.Pid
	// stdio is one session: measure's -c callers share it.
	return []*mcp.ClientSession{s}, nil
}

// check makes one call and returns why its result is not acceptable.
func check(ctx context.Context, s *mcp.ClientSession, name string, args map[string]any, expect string) error {
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err
	}
	var text strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text.WriteString(t.Text)
		}
	}
	if r.IsError {
		return fmt.Errorf("tool error: %.200s", text.String())
	}
	if expect != "" && !strings.Contains(text.String(), expect) {
		return fmt.Errorf("result lacks %q: %.200s", expect, text.String())
	}
	return nil
}

type result struct {
	latencies []time.Duration
	errors    int
	firstErr  error
	// CPU time (user+system) used during the measured window by the server
	// process and by this process; -1 if unknown.
	serverCPU, clientCPU time.Duration
}

// measure runs c.clients callers. Every caller calls back to back until
// the end; only calls that start after the warmup and finish before the end
// are counted, so throughput is counted calls / c.duration. In stdio mode
// all callers share sessions[0].
func measure(ctx context.Context, sessions []*mcp.ClientSession, c config, name string, args map[string]any) result {
	start := time.Now().Add(c.warmup)
	end := start.Add(c.duration)
	per := make([]result, c.clients)
	var wg sync.WaitGroup
	cpu := make(chan [2]time.Duration, 1)
	go func() {
		time.Sleep(time.Until(start))
		s0, c0 := procCPU(c.serverPID), procCPU(os.Getpid())
		if c.profile != "" {
			signalServer(c.serverPID, syscall.SIGUSR1)
		}
		time.Sleep(time.Until(end))
		s1, c1 := procCPU(c.serverPID), procCPU(os.Getpid())
		if c.profile != "" {
			signalServer(c.serverPID, syscall.SIGUSR2)
		}
		cpu <- [2]time.Duration{diff(s0, s1), diff(c0, c1)}
	}()
	for i := range per {
		s := sessions[0]
		if len(sessions) > 1 {
			s = sessions[i]
		}
		r := &per[i]
		r.latencies = make([]time.Duration, 0, 4096)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				t0 := time.Now()
				if !t0.Before(end) {
					return
				}
				err := check(ctx, s, name, args, c.expect)
				t1 := time.Now()
				if t0.Before(start) || t1.After(end) {
					continue
				}
				if err != nil {
					r.errors++
					if r.firstErr == nil {
						r.firstErr = err
					}
					if ctx.Err() != nil {
						return
					}
					continue
				}
				r.latencies = append(r.latencies, t1.Sub(t0))
			}
		}()
	}
	wg.Wait()
	var all result
	used := <-cpu
	if c.profile != "" {
		waitFile(c.profile, 30*time.Second)
	}
	all.serverCPU, all.clientCPU = used[0], used[1]
	for _, r := range per {
		all.latencies = append(all.latencies, r.latencies...)
		all.errors += r.errors
		if all.firstErr == nil {
			all.firstErr = r.firstErr
		}
	}
	return all
}

// signalServer sends sig to the server process (for -profile).
func signalServer(pid int, sig syscall.Signal) {
	if pid <= 0 {
		fmt.Fprintln(os.Stderr, "mcpbench: -profile needs the server's PID")
		return
	}
	if err := syscall.Kill(pid, sig); err != nil {
		fmt.Fprintln(os.Stderr, "mcpbench: signal server:", err)
	}
}

// waitFile polls until path exists or the deadline passes: the server
// renames the profile into place once it is written.
func waitFile(path string, d time.Duration) {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	fmt.Fprintln(os.Stderr, "mcpbench: no profile at", path)
}

// procCPU is the user+system CPU time of process pid from /proc (Linux),
// or -1.
func procCPU(pid int) time.Duration {
	if pid <= 0 {
		return -1
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// The command name (field 2) may contain spaces: fields after its
	// closing parenthesis start at field 3; utime and stime are 14 and 15.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return -1
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	const clockTicks = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / clockTicks
}

func diff(a, b time.Duration) time.Duration {
	if a < 0 || b < 0 {
		return -1
	}
	return b - a
}

// pct is the nearest-rank percentile of sorted durations (100: the max).
func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i, 1)-1]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
