// Package settings is the one table of the environment variables
// ServerFS reads: the server's SERVERFS_* variables, the workdir slots'
// WORKDIR_NN_* variables and the host bridge's BRIDGE_* variables, each
// with its default, its bounds and the package that reads it; and the
// readers every package uses, so that a bound or a default is written
// once and a misspelt name is reported.
package settings

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Var is one environment variable.
type Var struct {
	// Name is the variable's name; a slot variable is named with NN for
	// its number (WORKDIR_NN_MODE).
	Name string
	// Owner is the package that reads it, or "compose" for what only the
	// compose file reads.
	Owner string
	// Default is the value when unset, as text; "" when none, or when it
	// is computed (Computed says how).
	Default string
	// Min and Max bound a numeric variable (a plain decimal integer);
	// Max 0: not numeric.
	Min, Max int64
	// Computed says how a default that depends on the machine is made.
	Computed string
}

// Numeric reports whether v is a plain decimal integer within bounds.
func (v Var) Numeric() bool { return v.Max != 0 }

// Slots is the number of workdir slots (WORKDIR_01 .. WORKDIR_16).
const Slots = 16

// Vars is every variable, by owner.
var Vars = []Var{
	// fs: workdirs, the path policy and the per-call limits.
	{Name: "SERVERFS_WORKDIRS_ROOT", Owner: "fs"},
	{Name: "SERVERFS_ALLOW_HIDDEN", Owner: "fs", Default: "false"},
	{Name: "SERVERFS_EXTRA_DENY_GLOBS", Owner: "fs"},
	{Name: "SERVERFS_SEARCH_FETCH", Owner: "fs", Default: "false"},
	{Name: "SERVERFS_MAX_READ_BYTES", Owner: "fs", Default: "524288", Min: 1024, Max: 16 << 20},
	{Name: "SERVERFS_MAX_READ_LINES", Owner: "fs", Default: "500", Min: 1, Max: 100_000},
	{Name: "SERVERFS_DEFAULT_LIST_LIMIT", Owner: "fs", Default: "100", Min: 1, Max: 100_000},
	{Name: "SERVERFS_MAX_LIST_ENTRIES", Owner: "fs", Default: "500", Min: 1, Max: 100_000},
	{Name: "SERVERFS_DEFAULT_SEARCH_RESULTS", Owner: "fs", Default: "50", Min: 1, Max: 10_000},
	{Name: "SERVERFS_MAX_SEARCH_RESULTS", Owner: "fs", Default: "100", Min: 1, Max: 10_000},
	{Name: "SERVERFS_MAX_WALK_ENTRIES", Owner: "fs", Default: "200000", Min: 1, Max: 100_000_000},
	{Name: "SERVERFS_SEARCH_TIMEOUT_SECONDS", Owner: "fs", Default: "15", Min: 1, Max: 300},
	{Name: "SERVERFS_SEARCH_MAX_FILE_BYTES", Owner: "fs", Default: "52428800", Min: 1, Max: 64 << 30},
	{Name: "SERVERFS_MAX_WRITE_BYTES", Owner: "fs", Default: "1048576", Min: 1024, Max: 64 << 20},
	{Name: "SERVERFS_IMAGE_MAX_BYTES", Owner: "fs", Default: "1048576", Min: 16 << 10, Max: 16 << 20},
	// Workdir slots (fs reads the server's; the bridge the host's).
	{Name: "WORKDIR_NN_ALIAS", Owner: "fs"},
	{Name: "WORKDIR_NN_DESCRIPTION", Owner: "fs"},
	{Name: "WORKDIR_NN_MODE", Owner: "fs"},
	{Name: "WORKDIR_NN_READ_ONLY", Owner: "fs", Default: "true"},
	{Name: "WORKDIR_NN_PATH", Owner: "bridge"},
	{Name: "WORKDIR_NN_REPO_OPS_ENABLED", Owner: "fs", Default: "false"},
	{Name: "WORKDIR_NN_REPO_ACTIONS_JSON", Owner: "bridge"},
	{Name: "WORKDIR_NN_PUSH_URLS", Owner: "bridge"},
	{Name: "WORKDIR_NN_PUSH_BRANCHES", Owner: "bridge"},
	{Name: "WORKDIR_NN_URL_TEMPLATE", Owner: "fs"},
	// mcp: the tools' log, parameter headers and the heavy-call gate.
	{Name: "SERVERFS_LOG_LEVEL", Owner: "mcp", Default: "INFO"},
	{Name: "SERVERFS_MCP_PARAM_HEADERS", Owner: "mcp", Default: "false"},
	{Name: "SERVERFS_MEMORY_BUDGET_MB", Owner: "mcp", Default: "1024", Min: 64, Max: 1 << 20},
	{Name: "SERVERFS_MAX_HEAVY_CALLS", Owner: "mcp", Min: 1, Max: 1024, Computed: "one per two CPUs within the memory budget"},
	{Name: "SERVERFS_HEAVY_QUEUE", Owner: "mcp", Default: "256", Min: 0, Max: 4096},
	{Name: "SERVERFS_HEAVY_WAIT_SECONDS", Owner: "mcp", Default: "5", Min: 1, Max: 60},
	// mcp/transport: listening, the client token, sessions, connections.
	{Name: "SERVERFS_LISTEN", Owner: "mcp/transport", Default: "0.0.0.0:8000"},
	{Name: "SERVERFS_LISTEN_GROUP", Owner: "mcp/transport"},
	{Name: "SERVERFS_ALLOWED_HOSTS", Owner: "mcp/transport"},
	{Name: "SERVERFS_AUTH_TOKEN_FILE", Owner: "mcp/transport"},
	{Name: "SERVERFS_MAX_SESSIONS", Owner: "mcp/transport", Default: "1000", Min: 1, Max: 1_000_000},
	{Name: "SERVERFS_WRITE_TIMEOUT_SECONDS", Owner: "mcp/transport", Default: "30", Min: 1, Max: 3600},
	{Name: "SERVERFS_MAX_CONNECTIONS", Owner: "mcp/transport", Min: 1, Max: 1_000_000, Computed: "from the open-files limit"},
	// git/workspace: isolated workspaces.
	{Name: "SERVERFS_STATE_DIR", Owner: "git/workspace"},
	{Name: "SERVERFS_WORKSPACE_LIMIT", Owner: "git/workspace", Default: "4", Min: 1, Max: 64},
	{Name: "SERVERFS_WORKSPACE_MAX_AGE_HOURS", Owner: "git/workspace", Default: "168", Min: 1, Max: 24 * 366},
	{Name: "SERVERFS_WORKSPACE_MAX_FILES", Owner: "git/workspace", Default: "200000", Min: 1, Max: 10_000_000},
	{Name: "SERVERFS_WORKSPACE_MAX_BYTES", Owner: "git/workspace", Default: "4294967296", Min: 1 << 20, Max: 1 << 40},
	{Name: "SERVERFS_WORKSPACE_TIMEOUT_SECONDS", Owner: "git/workspace", Default: "300", Min: 1, Max: 3600},
	// cmd: how the server reaches the host bridge.
	{Name: "SERVERFS_BRIDGE_SOCKET", Owner: "cmd"},
	{Name: "SERVERFS_BRIDGE_TOKEN_FILE", Owner: "cmd"},
	// bridge: the host bridge's policy, sandbox and grants.
	{Name: "BRIDGE_SANDBOX_REQUIRED", Owner: "bridge", Default: "false"},
	{Name: "BRIDGE_SANDBOX_READ_PATHS", Owner: "bridge"},
	{Name: "BRIDGE_SANDBOX_MAX_PROCESSES", Owner: "bridge", Default: "4096"},
	{Name: "BRIDGE_SANDBOX_MAX_MEMORY_MB", Owner: "bridge", Default: "8192"},
	{Name: "BRIDGE_GRANT_PUBLIC_KEYS", Owner: "bridge"},
	{Name: "BRIDGE_GRANT_HOST_ID", Owner: "bridge"},
	{Name: "BRIDGE_GRANT_ALLOW_MUTATES", Owner: "bridge", Default: "false"},
	{Name: "BRIDGE_GRANT_ALLOW_NETWORK", Owner: "bridge", Default: "false"},
	{Name: "BRIDGE_GRANT_ALLOW_UNIX_SOCKETS", Owner: "bridge", Default: "false"},
	{Name: "BRIDGE_GRANT_TIMEOUT_SECONDS", Owner: "bridge"},
	// compose: read by compose.yml only.
	{Name: "SERVERFS_IMAGE", Owner: "compose"},
	{Name: "SERVERFS_UID", Owner: "compose", Default: "10001"},
	{Name: "SERVERFS_GID", Owner: "compose", Default: "10001"},
	{Name: "SERVERFS_MCP_TOKEN", Owner: "compose"},
	{Name: "SERVERFS_BRIDGE_DIR", Owner: "compose"},
	{Name: "SERVERFS_BRIDGE_TOKEN", Owner: "compose"},
}

var byName = func() map[string]Var {
	m := make(map[string]Var, len(Vars))
	for _, v := range Vars {
		m[v.Name] = v
	}
	return m
}()

// Lookup finds a variable by name (a slot variable by WORKDIR_NN_ or by
// a slot's number).
func Lookup(name string) (Var, bool) {
	if m := slotVarRE.FindStringSubmatch(name); m != nil {
		name = "WORKDIR_NN_" + m[2]
	}
	v, ok := byName[name]
	return v, ok
}

// SlotVar is slot n's variable of a suffix (WORKDIR_03_ALIAS).
func SlotVar(n int, suffix string) string { return fmt.Sprintf("WORKDIR_%02d_%s", n, suffix) }

var slotVarRE = regexp.MustCompile(`^WORKDIR_([0-9]+)_([A-Z0-9_]+)$`)

// EnvMap turns "KEY=value" entries (os.Environ) into a map; a later entry
// wins, as in the process environment.
func EnvMap(environ []string) map[string]string {
	env := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// Limit reads a numeric variable with the table's bounds and default:
// the default when unset; the default and a problem line on probs when
// the value is not a plain decimal integer within bounds.
func Limit(env map[string]string, probs *[]string, name string) int64 {
	v := mustNumeric(name)
	def, _ := strconv.ParseInt(v.Default, 10, 64)
	return LimitOr(env, probs, name, def)
}

// LimitOr is Limit with a default computed by the caller (a variable
// whose Computed says how). The problem line shows at most 300 bytes of
// the value, and none of a value with a '/' (likely a host path put in
// the wrong variable).
func LimitOr(env map[string]string, probs *[]string, name string, def int64) int64 {
	v := mustNumeric(name)
	raw := env[name]
	if raw == "" {
		return def
	}
	n, prob := ParseLimit(raw, v.Min, v.Max)
	if prob == "" {
		return n
	}
	shown := raw
	switch {
	case strings.Contains(raw, "/"):
		shown = "<not shown: contains '/'>"
	case len(raw) > 300:
		shown = raw[:300] + "..."
	}
	*probs = append(*probs, fmt.Sprintf("%s=%q: %s", name, strings.ToValidUTF8(shown, "\uFFFD"), prob))
	return def
}

func mustNumeric(name string) Var {
	v, ok := Lookup(name)
	if !ok || !v.Numeric() {
		panic("settings: " + name + " is not a numeric variable of the table")
	}
	return v
}

// ParseLimit accepts a plain decimal integer in [min, max]: no sign, no
// spaces, no units, no hex, no exponent; else a problem worded for the
// operator.
func ParseLimit(raw string, min, max int64) (int64, string) {
	for _, r := range raw {
		if r < '0' || r > '9' {
			return 0, fmt.Sprintf("must be a whole number between %d and %d", min, max)
		}
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n > max {
		return 0, fmt.Sprintf("is too large; the maximum is %d", max)
	}
	if n < min {
		return 0, fmt.Sprintf("is too small; the minimum is %d", min)
	}
	return n, ""
}

// Unknown reports the SERVERFS_* and WORKDIR_* variables of env the table
// does not know, and slot numbers out of range: a misspelt limit silently
// ignored would surprise an operator. One line each, sorted by name.
func Unknown(env map[string]string) []string {
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	for _, k := range names {
		switch {
		case strings.HasPrefix(k, "SERVERFS_"):
			if _, ok := byName[k]; !ok {
				out = append(out, fmt.Sprintf("%s: unknown variable (misspelt?)", k))
			}
		case strings.HasPrefix(k, "WORKDIR_"):
			m := slotVarRE.FindStringSubmatch(k)
			if _, ok := byName["WORKDIR_NN_"+safeIndex(m, 2)]; m == nil || !ok {
				out = append(out, fmt.Sprintf("%s: unknown variable (slot variables are %s)", k, slotSuffixList()))
				continue
			}
			if n, err := strconv.Atoi(m[1]); err != nil || len(m[1]) != 2 || n < 1 || n > Slots {
				out = append(out, fmt.Sprintf("%s: there are slots 01 to %02d only (two digits)", k, Slots))
			}
		}
	}
	return out
}

func safeIndex(m []string, i int) string {
	if i < len(m) {
		return m[i]
	}
	return ""
}

// slotSuffixList names the slot variables as the problem line does:
// WORKDIR_NN_ALIAS, _DESCRIPTION, ...
func slotSuffixList() string {
	var parts []string
	for _, v := range Vars {
		if s, ok := strings.CutPrefix(v.Name, "WORKDIR_NN_"); ok {
			if parts == nil {
				parts = append(parts, "WORKDIR_NN_"+s)
			} else {
				parts = append(parts, "_"+s)
			}
		}
	}
	return strings.Join(parts, ", ")
}
