package transport

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	sfs "github.com/serverfs/serverfs/fs"
)

// TestConnectionConfig: the default cap is half the open-file limit, at
// most 4096; SERVERFS_MAX_CONNECTIONS sets it, a bad value is one problem
// line, one at or past the open-file limit a start-up warning, and the fs
// loader knows the variable.
func TestConnectionConfig(t *testing.T) {
	for nofile, want := range map[uint64]int{1: 1, 2: 1, 1024: 512, 8192: 4096, 1 << 20: 4096} {
		if got := connectionsForFileLimit(nofile); got != want {
			t.Errorf("open-file limit %d: default cap %d, want %d", nofile, got, want)
		}
	}
	cfg, probs := LoadConfig(nil)
	if len(probs) > 0 || cfg.MaxConnections != connectionsForFileLimit(openFileLimit()) || len(cfg.Warnings) > 0 {
		t.Errorf("default: %d connections, %q %q", cfg.MaxConnections, probs, cfg.Warnings)
	}
	env := []string{"SERVERFS_MAX_CONNECTIONS=7"}
	if cfg, probs = LoadConfig(env); len(probs) > 0 || cfg.MaxConnections != 7 {
		t.Errorf("explicit: %d, %q", cfg.MaxConnections, probs)
	}
	if _, err := sfs.LoadConfig(env, []string{"wd=" + t.TempDir()}); err != nil {
		t.Errorf("fs.LoadConfig: %v", err)
	}
	for _, bad := range []string{"0", "-1", "1000001", "10k"} {
		if _, probs := LoadConfig([]string{"SERVERFS_MAX_CONNECTIONS=" + bad}); len(probs) != 1 || !strings.Contains(probs[0], "SERVERFS_MAX_CONNECTIONS") {
			t.Errorf("SERVERFS_MAX_CONNECTIONS=%s: %q", bad, probs)
		}
	}
	if limit := openFileLimit(); limit <= 1_000_000 {
		cfg, _ := LoadConfig([]string{fmt.Sprintf("SERVERFS_MAX_CONNECTIONS=%d", limit)})
		if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "open-file limit") {
			t.Errorf("a cap at the open-file limit %d: warnings %q", limit, cfg.Warnings)
		}
	}
	if srv := NewHTTPServer("", http.NotFoundHandler()); srv.IdleTimeout <= 0 || srv.IdleTimeout > 50*time.Second {
		t.Errorf("idle timeout %v: a non-reader's connection must close well within a minute", srv.IdleTimeout)
	}
}

// TestPreAuthBudgetSize: the pre-auth budget is a quarter of the cap, at
// least 2, at most 256, never past the cap (docs/limits.md); a stalled
// connection's headers time out within 5 s, and the server tells its
// handler the connection (the promotion out of the budget needs it).
func TestPreAuthBudgetSize(t *testing.T) {
	for maxConns, want := range map[int]int{1: 1, 2: 2, 3: 2, 8: 2, 20: 5, 1000: 250, 4096: 256, 1_000_000: 256} {
		if got := preAuthBudget(maxConns); got != want {
			t.Errorf("cap %d: pre-auth budget %d, want %d", maxConns, got, want)
		}
	}
	srv := NewHTTPServer("", http.NotFoundHandler())
	if srv.ReadHeaderTimeout != 5*time.Second || srv.ConnContext == nil {
		t.Errorf("header timeout %v, ConnContext set %v", srv.ReadHeaderTimeout, srv.ConnContext != nil)
	}
}
