package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Cancellation of walks (a tree listing, find_files) and repository status,
// over real HTTP,
// like the searches of cancel_test.go. A big tree takes minutes to create
// on this machine's disk (200,000 empty files: a minute at load 12), so
// the tree is small and each entry is made expensive instead: the
// repository's .gitignore ends with 3,000 patterns of the form
// *a*b*a*b*...*z (each a wildcard match that must try every star against
// a name of "abab...") after the one that ignores the tree's 8,000 files,
// so deciding each file runs them all: a few ms per file, longer than the
// search timeout (15 s) for a tree listing with skip_ignored or
// inspect_repo's status. Both
// check their context on every entry; an entry costs little enough that
// even under -race on two busy cores the next check comes soon.

// heavyIgnoreTree makes e.root a git repository (system git) whose
// heavy/ directory holds 8,000 ignored files, and serves it as the
// read-only repo-ops workdir wd.
func heavyIgnoreTree(t *testing.T, e *testEnv) {
	t.Helper()
	if out, err := exec.Command("git", "init", "-q", e.root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	var ig strings.Builder
	ig.WriteString("*.tmp\n") // the last pattern a file is decided by
	for i := range 3000 {
		fmt.Fprintf(&ig, "*%sz%d\n", strings.Repeat("a*b*", 60), i)
	}
	writeFile(t, filepath.Join(e.root, ".gitignore"), []byte(ig.String()))
	name := strings.Repeat("ab", 110)
	for d := range 80 {
		dir := filepath.Join(e.root, "heavy", fmt.Sprintf("d%02d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%03d.tmp", name, f)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.reconfigure(t, []string{"wd=" + e.root + ":ro:repo"}, nil, nil)
}

// heavyCalls are the walks and the status over heavyIgnoreTree.
var heavyCalls = []struct {
	tool string
	args map[string]any
}{
	{"list_directory", map[string]any{"workdir": "wd", "path": "heavy", "depth": 3, "skip_ignored": true}},
	{"inspect_repo", map[string]any{"workdir": "wd", "view": "status"}},
	// The same kind of glob as find_files' pattern: matching it against a
	// name of "abab..." takes about 0.7 ms (5 s for the tree without -race
	// at load 15, the search timeout under -race).
	{"find_files", map[string]any{"workdir": "wd", "path": "heavy", "pattern": "**/*" + strings.Repeat("a*b*", 60) + "z"}},
}

// toolCallBody is a tools/call of tool with a progress token (and the
// 2026-07-28 _meta when modern).
func toolCallBody(t *testing.T, id int, tool string, args map[string]any, modern bool) string {
	t.Helper()
	meta := fmt.Sprintf(`"progressToken":"tok-%d"`, id)
	if modern {
		meta += `,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	}
	a, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{%s}}}`, id, tool, a, meta)
}

// TestCancelWalkAndStatus: a tree listing and a repository status stop
// within the bound of the search tests (3 s under -race on two busy
// cores; tens of milliseconds otherwise) when their HTTP request goes away
// (the stateless lane) and after notifications/cancelled (the session
// lane, no answer written), and every goroutine they started ends.
func TestCancelWalkAndStatus(t *testing.T) {
	e := newEnv(t)
	heavyIgnoreTree(t, e)
	url := e.serveHTTP(t)
	id := 20
	for _, c := range heavyCalls {
		for _, how := range []string{"disconnect", "notification"} {
			t.Run(c.tool+"/"+how, func(t *testing.T) {
				id++
				modern := how == "disconnect"
				headers := []string{protocolVersionHeader, "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", c.tool, "Mcp-Param-Workdir", "wd"}
				if !modern {
					headers = openSession(t, url)
				}
				http.DefaultClient.CloseIdleConnections()
				base := runtime.NumGoroutine()
				mark := len(e.log.String())
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				ch := streamPost(t, ctx, url, toolCallBody(t, id, c.tool, c.args, modern), headers...)
				waitProgress(t, ch)
				if modern {
					cancel()
				} else if status, _, _ := rpcPost(t, url, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"test"}}`, id), headers...); status != http.StatusAccepted {
					t.Fatalf("notifications/cancelled: %d", status)
				}
				cancelled := time.Now()
				l := waitCallLogged(t, e, c.tool, mark)
				took := time.Since(cancelled)
				t.Logf("%s: ended %s after the %s (it ran %v ms)", c.tool, took.Round(time.Millisecond), how, l["duration_ms"])
				if l["error_code"] != "CANCELED" {
					t.Errorf("call log %v: want error_code CANCELED", l)
				}
				if took > 3*time.Second {
					t.Errorf("%s ended %s after the %s (want at once)", c.tool, took, how)
				}
				for m := range ch {
					if m.ID != nil {
						t.Errorf("an answer after the %s: %+v (result %.200s)", how, m, m.Result)
					}
				}
				http.DefaultClient.CloseIdleConnections()
				waitGoroutines(t, base)
			})
		}
	}
}
