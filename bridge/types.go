// Package bridge is the host-side process runner: the only part of
// ServerFS that starts processes (operator-named actions and git push),
// run by `serverfs bridge` on the host as the operator's user, reached by
// the MCP server over an authenticated Unix socket. Callers never choose
// an executable, argv, environment, working directory, remote, ref or
// force: everything comes from the operator's private policy.
package bridge

import "time"

// Policy is the operator's private bridge policy, rendered from the .env
// fields (WORKDIR_NN_PATH, _ALIAS, _READ_ONLY, _REPO_OPS_ENABLED,
// _REPO_ACTIONS_JSON) and read only by the bridge. Host paths live here
// and nowhere the MCP server can see.
type Policy struct {
	Workdirs map[string]WorkdirPolicy `json:"workdirs"` // by alias
}

// WorkdirPolicy is one workdir as the bridge knows it.
type WorkdirPolicy struct {
	Root      string            `json:"root"` // absolute host path of the work tree
	ReadWrite bool              `json:"read_write"`
	RepoOps   bool              `json:"repo_ops"`
	Actions   map[string]Action `json:"actions,omitempty"`
}

// Action is one operator-named action: a fixed argv run in the workdir
// root, never through a shell.
type Action struct {
	Argv    []string `json:"argv"`
	Mutates bool     `json:"mutates"`
	// Argument says what the caller may add as the last argv element:
	// "none", "path" (a workdir-relative path, validated by the server and
	// again by the bridge) or "basename" (only its final component). The
	// path must name an existing regular file and consist of
	// ArgumentChars only, its first character not '-', '@' or '+'
	// (so that no program reads it as an option, a response file, an
	// assignment such as make's VAR=value or a host:path), unless
	// ArgumentAllow widens that.
	Argument string `json:"argument"`
	// ArgumentAllow widens what the argument may be, explicitly.
	ArgumentAllow *ArgumentAllow `json:"argument_allow,omitempty"`
	// Integrity pins repository files the action executes or reads:
	// workdir-relative path -> lower-case hex SHA-256. Every pin is
	// re-verified right before the process starts.
	Integrity map[string]string `json:"integrity,omitempty"`
	// TimeoutSeconds bounds the run (0: DefaultActionTimeout).
	TimeoutSeconds int `json:"timeout_seconds,omitempty"`
}

// ArgumentChars are the characters a path or basename argument may hold
// unless the action's ArgumentAllow adds more: [A-Za-z0-9._/-]. Its
// first character is never '-' (nor '@' or '+', which ArgumentAllow can
// add but never at the start).
const ArgumentChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._/-"

// ArgumentAllow is an operator's explicit widening of an action's
// argument; the zero value widens nothing.
type ArgumentAllow struct {
	// Chars are characters a path may contain beyond ArgumentChars (for
	// example " +@" or "=" for a program known not to read them), never
	// as its first character. Printable characters only; NUL, control
	// characters and backslashes are refused by validation.
	Chars string `json:"chars,omitempty"`
	// Directories lets the argument name a directory as well as a
	// regular file.
	Directories bool `json:"directories,omitempty"`
}

// Argument kinds.
const (
	ArgumentNone     = "none"
	ArgumentPath     = "path"
	ArgumentBasename = "basename"
)

// Run limits.
const (
	DefaultActionTimeout = 120 * time.Second
	MaxActionTimeout     = 30 * time.Minute
	DefaultPushTimeout   = 120 * time.Second
	// MaxOutputBytes is how much a process may write (stdout and stderr
	// together) before it is killed; TailBytes how much of each stream
	// the result keeps (the end).
	MaxOutputBytes = 8 << 20
	TailBytes      = 16 << 10
	// MaxPinnedFileBytes bounds a file an integrity pin names.
	MaxPinnedFileBytes = 64 << 20
)

// RunLimits bound one process run and name what its output must not show.
type RunLimits struct {
	Timeout        time.Duration
	MaxOutputBytes int
	TailBytes      int
	// BridgePaths are host paths of the bridge itself (its state and
	// socket directories), replaced by "<bridge>" in outputs (as workdir
	// roots are by "alias:" and an action's private HOME/TMPDIR by
	// "$HOME").
	BridgePaths []string
}

// ActionResult is what a finished action reports. Host paths in the
// output are replaced: the workdir root by "alias:", the action's private
// HOME and TMPDIR by "$HOME", the bridge's own directories by "<bridge>",
// the operator's home by "~".
type ActionResult struct {
	Action          string `json:"action"`
	ExitCode        int    `json:"exit_code"`
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	StdoutTruncated bool   `json:"stdout_truncated"`
	StderrTruncated bool   `json:"stderr_truncated"`
	DurationMs      int64  `json:"duration_ms"`
}

// PushResult is what push_repo reports.
type PushResult struct {
	// Status is "ok" (the remote branch moved), "up_to_date" or
	// "rejected" (also returned as PUSH_REJECTED).
	Status   string `json:"status"`
	Branch   string `json:"branch"`
	Remote   string `json:"remote"`
	Upstream string `json:"upstream"` // remote branch name
	Output   string `json:"output"`   // bounded, host paths replaced
}
