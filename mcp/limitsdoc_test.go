package mcp

import (
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestLimitsDocumentedHTTP: the rows of docs/limits.md for the limits this
// package reads state the bounds loadHTTPConfig enforces (both accepted,
// one past either refused) and, where the default is a number, the
// default it applies.
func TestLimitsDocumentedHTTP(t *testing.T) {
	b, err := os.ReadFile("../docs/limits.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, value := range map[string]func(httpConfig) int64{
		"SERVERFS_MEMORY_BUDGET_MB":      func(c httpConfig) int64 { return c.Admission.MemoryBudget >> 20 },
		"SERVERFS_MAX_HEAVY_CALLS":       func(c httpConfig) int64 { return int64(c.Admission.MaxHeavy) },
		"SERVERFS_HEAVY_QUEUE":           func(c httpConfig) int64 { return int64(c.Admission.Queue) },
		"SERVERFS_HEAVY_WAIT_SECONDS":    func(c httpConfig) int64 { return int64(c.Admission.Wait / time.Second) },
		"SERVERFS_MAX_SESSIONS":          func(c httpConfig) int64 { return int64(c.Guard.MaxSessions) },
		"SERVERFS_WRITE_TIMEOUT_SECONDS": func(c httpConfig) int64 { return int64(c.Guard.WriteTimeout / time.Second) },
		"SERVERFS_MAX_CONNECTIONS":       func(c httpConfig) int64 { return int64(c.MaxConnections) },
	} {
		m := regexp.MustCompile("(?m)^\\| `" + name + "` \\| ([^|]*) \\| (\\d+) – (\\d+)").FindSubmatch(b)
		if m == nil {
			t.Errorf("docs/limits.md has no row \"| `%s` | default | min – max ...\"", name)
			continue
		}
		lo, _ := strconv.ParseInt(string(m[2]), 10, 64)
		hi, _ := strconv.ParseInt(string(m[3]), 10, 64)
		if def, err := strconv.ParseInt(string(m[1]), 10, 64); err == nil {
			if c, probs := loadHTTPConfig(nil); len(probs) != 0 || value(c) != def {
				t.Errorf("%s: documented default %d, the code's %d (%v)", name, def, value(c), probs)
			}
		}
		for _, v := range []int64{lo, hi} {
			// The heavy-call count is also bounded by the budget: give it
			// the largest so that only the variable's own bounds apply.
			env := []string{name + "=" + strconv.FormatInt(v, 10), "SERVERFS_MEMORY_BUDGET_MB=1048576"}
			if name == "SERVERFS_MEMORY_BUDGET_MB" {
				env = env[:1]
			}
			c, probs := loadHTTPConfig(env)
			if len(probs) != 0 || value(c) != v {
				t.Errorf("%s=%d (documented as allowed): %v, value %d", name, v, probs, value(c))
			}
		}
		for _, v := range []int64{lo - 1, hi + 1} {
			if _, probs := loadHTTPConfig([]string{name + "=" + strconv.FormatInt(v, 10)}); len(probs) == 0 {
				t.Errorf("%s=%d (documented as out of bounds) is accepted", name, v)
			}
		}
	}
}
