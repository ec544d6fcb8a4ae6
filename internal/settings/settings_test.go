package settings_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git/workspace"
	"github.com/serverfs/serverfs/internal/settings"
	"github.com/serverfs/serverfs/mcp"
	"github.com/serverfs/serverfs/mcp/transport"
)

// TestDefaultsMatchOwners: the table's default of each variable is the
// default its owner applies.
func TestDefaultsMatchOwners(t *testing.T) {
	l := sfs.DefaultLimits()
	want := map[string]int64{
		"SERVERFS_MAX_READ_BYTES":            int64(l.MaxReadBytes),
		"SERVERFS_MAX_READ_LINES":            int64(l.MaxReadLines),
		"SERVERFS_DEFAULT_LIST_LIMIT":        int64(l.DefaultListLimit),
		"SERVERFS_MAX_LIST_ENTRIES":          int64(l.MaxListEntries),
		"SERVERFS_DEFAULT_SEARCH_RESULTS":    int64(l.DefaultSearchResults),
		"SERVERFS_MAX_SEARCH_RESULTS":        int64(l.MaxSearchResults),
		"SERVERFS_MAX_WALK_ENTRIES":          int64(l.MaxWalkEntries),
		"SERVERFS_SEARCH_TIMEOUT_SECONDS":    int64(l.SearchTimeout / time.Second),
		"SERVERFS_SEARCH_MAX_FILE_BYTES":     l.SearchMaxFileBytes,
		"SERVERFS_MAX_WRITE_BYTES":           int64(l.MaxWriteBytes),
		"SERVERFS_IMAGE_MAX_BYTES":           int64(l.ImageMaxBytes),
		"SERVERFS_MEMORY_BUDGET_MB":          mcp.DefaultMemoryBudgetMB,
		"SERVERFS_HEAVY_QUEUE":               mcp.DefaultHeavyQueue,
		"SERVERFS_HEAVY_WAIT_SECONDS":        mcp.DefaultHeavyWaitSeconds,
		"SERVERFS_MAX_SESSIONS":              transport.DefaultMaxSessions,
		"SERVERFS_WRITE_TIMEOUT_SECONDS":     transport.DefaultWriteTimeoutSeconds,
		"SERVERFS_WORKSPACE_LIMIT":           workspace.DefaultLimit,
		"SERVERFS_WORKSPACE_MAX_AGE_HOURS":   int64(workspace.DefaultMaxAge / time.Hour),
		"SERVERFS_WORKSPACE_MAX_FILES":       workspace.DefaultMaxFiles,
		"SERVERFS_WORKSPACE_MAX_BYTES":       workspace.DefaultMaxBytes,
		"SERVERFS_WORKSPACE_TIMEOUT_SECONDS": int64(workspace.DefaultTimeout / time.Second),
	}
	for name, n := range want {
		v, ok := settings.Lookup(name)
		if !ok || v.Default != strconv.FormatInt(n, 10) {
			t.Errorf("%s: the table's default %q, its owner's %d", name, v.Default, n)
		}
		if ok && (n < v.Min || n > v.Max) {
			t.Errorf("%s: the default %d is outside [%d, %d]", name, n, v.Min, v.Max)
		}
	}
	if v, _ := settings.Lookup("SERVERFS_LISTEN"); v.Default != transport.DefaultListen {
		t.Errorf("SERVERFS_LISTEN: the table's default %q, the transport's %q", v.Default, transport.DefaultListen)
	}
	for _, v := range settings.Vars {
		if v.Numeric() && v.Default == "" && v.Computed == "" && v.Owner != "git/workspace" {
			t.Errorf("%s: numeric without a default or how it is computed", v.Name)
		}
	}
}

// TestComposeEnvMatchesTable compares the table with the one compose
// generates (.env.example, which deploy/compose's test holds equal to
// its generator): every variable there is in the table; each one the
// server reads has the table's default; every limit of fs is there.
func TestComposeEnvMatchesTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", ".env.example"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		k, val, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.HasPrefix(k, "#") || !(strings.HasPrefix(k, "SERVERFS_") || strings.HasPrefix(k, "WORKDIR_")) {
			continue
		}
		v, known := settings.Lookup(k)
		if !known {
			t.Errorf(".env.example sets %s, which the settings table does not know", k)
			continue
		}
		seen[v.Name] = true
		if val = strings.Trim(val, `"`); val != "" && v.Owner != "compose" && val != v.Default {
			t.Errorf(".env.example: %s=%s, the table's default is %q", k, val, v.Default)
		}
	}
	for _, v := range settings.Vars {
		if v.Owner == "fs" && v.Numeric() && !seen[v.Name] {
			t.Errorf("%s is a limit, yet compose does not pass it (.env.example lacks it)", v.Name)
		}
	}
}

// TestLimitReadsTable: Limit applies the table's bounds and default.
func TestLimitReadsTable(t *testing.T) {
	var probs []string
	env := settings.EnvMap([]string{"SERVERFS_HEAVY_QUEUE=5000", "SERVERFS_MAX_SESSIONS=7", "SERVERFS_MAX_SESSIONS=9"})
	if got := settings.Limit(env, &probs, "SERVERFS_HEAVY_QUEUE"); got != mcp.DefaultHeavyQueue || len(probs) != 1 || !strings.Contains(probs[0], "maximum is 4096") {
		t.Fatalf("over the bound: %d %q", got, probs)
	}
	if got := settings.Limit(env, &probs, "SERVERFS_MAX_SESSIONS"); got != 9 {
		t.Fatalf("the later entry wins: %d", got)
	}
	if u := settings.Unknown(map[string]string{"SERVERFS_MAX_SESION": "1", "WORKDIR_17_ALIAS": "a", "WORKDIR_01_PAHT": "x", "WORKDIR_01_PATH": "/x"}); len(u) != 3 {
		t.Fatalf("unknown: %q", u)
	}
}
