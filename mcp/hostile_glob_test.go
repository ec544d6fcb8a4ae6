package mcp_test

// Hostile globs against the real serverfs binary: patterns that
// drove the old backtracking matcher into exponential time, through
// find_files, search_text's glob and an operator deny glob, must be
// answered or refused within twice the search timeout, with the server's
// resident memory growing by less than 64 MiB.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// procStatusKiB reads a "VmRSS:"-style field of /proc/PID/status, in KiB.
func procStatusKiB(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatalf("%s: %q", field, line)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// textOf is the text of a tool result.
func textOf(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(wd) // go test runs in mcp/
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found above %s: %v", wd, err)
	}
	return root
}

// hostileGlobs are the exponential families of the old matcher: each took
// from seconds to minutes (or hours) for one match against the fixture.
var hostileGlobs = map[string]string{
	// 81 bytes that took 51 s on a 5-level path before, 4x per repeat.
	"braced-globstars": strings.Repeat("{**/,*}", 10) + "*/*/{*Q,Q*}",
	// Many separator-bounded stars against a 40-byte name (> 5 s at 8).
	"many-stars":     strings.Repeat("*a", 14) + "*b*",
	"stars-singles":  strings.Repeat("?*", 14) + "b*",
	"stars-classes":  strings.Repeat("*[a]", 12) + "*b*",
	"stars-optional": strings.Repeat("*{a,}", 10) + "*b*",
	"globstar-chain": strings.Repeat("**/", 8) + strings.Repeat("*a", 10) + "*b*",
	"nested-braces":  strings.Repeat("{a,", 8) + "*a*a*a*a*a*b*" + strings.Repeat("}", 8),
}

func TestHostileGlobs(t *testing.T) {
	const timeout = 2 * time.Second // SERVERFS_SEARCH_TIMEOUT_SECONDS below
	dir := t.TempDir()
	deep := filepath.Join(dir, "aaaaaaaa", "bbbbbbbb", "cccccccc", "dddddddd", "eeeeeeee")
	long := strings.Repeat("a", 40)
	for _, p := range []string{filepath.Join(deep, "ffffffff"), filepath.Join(dir, long), filepath.Join(deep, long)} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("needle\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	url, pid := startServerfsEnv(t, buildServerfs(t, repoRoot(t)), dir, []string{
		"SERVERFS_SEARCH_TIMEOUT_SECONDS=" + strconv.Itoa(int(timeout/time.Second)),
		// An operator's deny glob of the many-stars family: checked on
		// every entry of every listing and walk.
		"SERVERFS_EXTRA_DENY_GLOBS=" + strings.Repeat("*a", 14) + "*b*",
	})
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "hostile-test", Version: "0"}, nil).
		Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err == nil {
		err = listForHeaders(t.Context(), cs)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	call := func(name string, args map[string]any) (*sdk.CallToolResult, time.Duration) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*timeout)
		defer cancel()
		start := time.Now()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		took := time.Since(start)
		if err != nil {
			t.Fatalf("%s %v: no answer within %s (twice the search timeout): %v", name, args, 2*timeout, err)
		}
		return res, took
	}
	// Warm up, then take the baseline.
	if res, _ := call("find_files", map[string]any{"workdir": "wd", "pattern": "*"}); res.IsError {
		t.Fatalf("warm-up: %s", textOf(res))
	}
	rss := procStatusKiB(t, pid, "VmRSS")

	// The deny glob: listings and walks met the 40-byte name.
	if res, took := call("list_directory", map[string]any{"workdir": "wd"}); res.IsError || !strings.Contains(textOf(res), long) {
		t.Fatalf("list_directory: %s", textOf(res))
	} else {
		t.Logf("list_directory under the deny glob: %s", took)
	}
	for name, pat := range hostileGlobs {
		res, took := call("find_files", map[string]any{"workdir": "wd", "pattern": pat})
		t.Logf("find_files %s (%d bytes): %s, error=%v", name, len(pat), took, res.IsError)
		if res.IsError && !strings.HasPrefix(textOf(res), "INVALID_PATTERN: ") {
			t.Errorf("find_files %s: %s", name, textOf(res))
		}
		res, took = call("search_text", map[string]any{"workdir": "wd", "query": "needle", "glob": pat})
		t.Logf("search_text %s: %s, error=%v", name, took, res.IsError)
		if res.IsError && !strings.HasPrefix(textOf(res), "INVALID_PATTERN: ") {
			t.Errorf("search_text %s: %s", name, textOf(res))
		}
	}
	// Past the bounds: refused, coded.
	for _, pat := range []string{
		strings.Repeat("{a,", 9) + "b" + strings.Repeat("}", 9),
		strings.Repeat("{a,b}", 129),
		strings.Repeat("*", 1025),
	} {
		res, _ := call("find_files", map[string]any{"workdir": "wd", "pattern": pat})
		if !res.IsError || !strings.HasPrefix(textOf(res), "INVALID_PATTERN: ") {
			t.Errorf("find_files %.40q…: want INVALID_PATTERN, got %s", pat, textOf(res))
		}
	}
	hwm := procStatusKiB(t, pid, "VmHWM")
	t.Logf("server RSS %d KiB before, peak %d KiB after", rss, hwm)
	if growth := hwm - rss; growth > 64<<10 {
		t.Errorf("server peak RSS grew by %d KiB (limit 64 MiB)", growth)
	}
}
