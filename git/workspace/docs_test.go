package workspace

import (
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestLimitsDocumented: each workspace limit's row in docs/limits.md states
// the default the code applies and the bounds LoadConfig enforces (the
// bounds accepted, one past either refused).
func TestLimitsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/limits.md")
	if err != nil {
		t.Fatal(err)
	}
	d := Config{}.withDefaults()
	for name, value := range map[string]func(Config) int64{
		"SERVERFS_WORKSPACE_LIMIT":           func(c Config) int64 { return int64(c.Limit) },
		"SERVERFS_WORKSPACE_MAX_AGE_HOURS":   func(c Config) int64 { return int64(c.MaxAge / time.Hour) },
		"SERVERFS_WORKSPACE_MAX_FILES":       func(c Config) int64 { return int64(c.MaxFiles) },
		"SERVERFS_WORKSPACE_MAX_BYTES":       func(c Config) int64 { return c.MaxBytes },
		"SERVERFS_WORKSPACE_TIMEOUT_SECONDS": func(c Config) int64 { return int64(c.Timeout / time.Second) },
	} {
		m := regexp.MustCompile("(?m)^\\| `" + name + "` \\| (\\d+) \\| (\\d+) – (\\d+)").FindSubmatch(b)
		if m == nil {
			t.Errorf("docs/limits.md has no row \"| `%s` | default | min – max\"", name)
			continue
		}
		def, _ := strconv.ParseInt(string(m[1]), 10, 64)
		lo, _ := strconv.ParseInt(string(m[2]), 10, 64)
		hi, _ := strconv.ParseInt(string(m[3]), 10, 64)
		if got := value(d); got != def {
			t.Errorf("%s: documented default %d, the code's %d", name, def, got)
		}
		for _, v := range []int64{lo, hi} {
			c, probs := LoadConfig([]string{name + "=" + strconv.FormatInt(v, 10)}, "")
			if len(probs) != 0 || value(c) != v {
				t.Errorf("%s=%d (documented as allowed): %v, value %d", name, v, probs, value(c))
			}
		}
		for _, v := range []int64{lo - 1, hi + 1} {
			if _, probs := LoadConfig([]string{name + "=" + strconv.FormatInt(v, 10)}, ""); len(probs) == 0 {
				t.Errorf("%s=%d (documented as out of bounds) is accepted", name, v)
			}
		}
	}
}
