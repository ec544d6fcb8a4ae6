package workspace

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/serverfs/serverfs/internal/settings"

	sfs "github.com/serverfs/serverfs/fs"
)

// Config is the workspace configuration.
type Config struct {
	// StateDir is the server-owned directory workspaces live in
	// (SERVERFS_STATE_DIR or --state-dir); "" disables workspaces. It
	// must be outside every workdir.
	StateDir string
	// Limit is the most active workspaces per workdir
	// (SERVERFS_WORKSPACE_LIMIT, default 4).
	Limit int
	// MaxAge is the age after which a workspace is removed at start-up
	// (SERVERFS_WORKSPACE_MAX_AGE_HOURS, default 168: 7 days).
	MaxAge time.Duration
	// MaxFiles and MaxBytes bound one checkout
	// (SERVERFS_WORKSPACE_MAX_FILES, default 200000;
	// SERVERFS_WORKSPACE_MAX_BYTES, default 4 GiB).
	MaxFiles int
	MaxBytes int64
	// Timeout bounds one checkout (SERVERFS_WORKSPACE_TIMEOUT_SECONDS,
	// default 300).
	Timeout time.Duration
}

// Defaults of Config.
const (
	DefaultLimit    = 4
	DefaultMaxAge   = 7 * 24 * time.Hour
	DefaultMaxFiles = 200_000
	DefaultMaxBytes = 4 << 30
	DefaultTimeout  = 5 * time.Minute
)

// Limits are the limits the tool descriptions state
// (fs.FS.EnableWorkspaces).
func (c Config) Limits() sfs.WorkspaceLimits {
	c = c.withDefaults()
	return sfs.WorkspaceLimits{PerWorkdir: c.Limit, MaxFiles: c.MaxFiles, MaxBytes: c.MaxBytes, MaxAge: c.MaxAge}
}

func (c Config) withDefaults() Config {
	if c.Limit <= 0 {
		c.Limit = DefaultLimit
	}
	if c.MaxAge <= 0 {
		c.MaxAge = DefaultMaxAge
	}
	if c.MaxFiles <= 0 {
		c.MaxFiles = DefaultMaxFiles
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}

// Variables are the environment variables LoadConfig reads.
var Variables = []string{"SERVERFS_STATE_DIR", "SERVERFS_WORKSPACE_LIMIT", "SERVERFS_WORKSPACE_MAX_AGE_HOURS",
	"SERVERFS_WORKSPACE_MAX_FILES", "SERVERFS_WORKSPACE_MAX_BYTES", "SERVERFS_WORKSPACE_TIMEOUT_SECONDS"}

// LoadConfig reads the workspace configuration from the environment
// (KEY=value entries) and the --state-dir flag (setting both that and
// SERVERFS_STATE_DIR is a problem). Every problem is one line for the
// operator, without a host path.
func LoadConfig(environ []string, stateDirFlag string) (Config, []string) {
	env := settings.EnvMap(environ)
	var c Config
	var probs []string
	dir := env["SERVERFS_STATE_DIR"]
	switch {
	case dir != "" && stateDirFlag != "":
		probs = append(probs, "SERVERFS_STATE_DIR and --state-dir are both set: use one")
	case stateDirFlag != "":
		dir = stateDirFlag
	}
	if dir != "" && !filepath.IsAbs(dir) {
		probs = append(probs, "the state directory (SERVERFS_STATE_DIR or --state-dir) must be an absolute path")
	}
	c.StateDir = dir
	num := func(name string, set func(int64)) {
		raw := env[name]
		if raw == "" {
			return
		}
		v, _ := settings.Lookup(name)
		n, p := settings.ParseLimit(raw, v.Min, v.Max)
		if p != "" {
			if strings.Contains(raw, "/") {
				raw = "<not shown: contains '/'>"
			}
			probs = append(probs, fmt.Sprintf("%s=%q: %s", name, raw, p))
			return
		}
		set(n)
	}
	num("SERVERFS_WORKSPACE_LIMIT", func(n int64) { c.Limit = int(n) })
	num("SERVERFS_WORKSPACE_MAX_AGE_HOURS", func(n int64) { c.MaxAge = time.Duration(n) * time.Hour })
	num("SERVERFS_WORKSPACE_MAX_FILES", func(n int64) { c.MaxFiles = int(n) })
	num("SERVERFS_WORKSPACE_MAX_BYTES", func(n int64) { c.MaxBytes = n })
	num("SERVERFS_WORKSPACE_TIMEOUT_SECONDS", func(n int64) { c.Timeout = time.Duration(n) * time.Second })
	return c.withDefaults(), probs
}
