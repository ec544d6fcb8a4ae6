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
// _REPO_ACTIONS_JSON, _PUSH_URLS, _PUSH_BRANCHES) and read only by the
// bridge. Host paths live here
// and nowhere the MCP server can see.
type Policy struct {
	Workdirs map[string]WorkdirPolicy `json:"workdirs"` // by alias
	// Sandbox configures the Landlock sandbox of named actions and
	// granted commands.
	Sandbox *SandboxPolicy `json:"sandbox,omitempty"`
	// WorkspacesDir is the MCP server's state directory
	// (SERVERFS_STATE_DIR) as the host sees it: named actions may then
	// run in its workspaces (workspace.go). Empty: they may not.
	WorkspacesDir string `json:"workspaces_dir,omitempty"`
	// Grants pins the operator's grant keys; nil: no grants.
	Grants *GrantPolicy `json:"grants,omitempty"`
}

// GrantPolicy is the policy's grants section: the public keys whose
// signed grants the bridge runs, pinned here (no trust on first use:
// adding, rotating or removing a key is a policy change and a bridge
// restart), this host's id, and how far a grant may widen the sandbox.
type GrantPolicy struct {
	// HostID is the host id grants must name ("serverfs grant sign
	// --host", by default the host name).
	HostID string `json:"host_id"`
	// PublicKeys are Ed25519 public keys, standard base64 of 32 bytes
	// (serverfs grant keygen prints them).
	PublicKeys []string `json:"public_keys"`
	// AllowMutates lets a grant that says mutates write in its
	// (read-write) workdir; AllowNetwork lets a grant that says network
	// use TCP; AllowUnixSockets lets one that says unix_sockets reach
	// pathname Unix sockets. Without them such a grant is
	// GRANT_CONSTRAINT_VIOLATION.
	AllowMutates     bool `json:"allow_mutates,omitempty"`
	AllowNetwork     bool `json:"allow_network,omitempty"`
	AllowUnixSockets bool `json:"allow_unix_sockets,omitempty"`
	// TimeoutSeconds bounds a granted command (0: DefaultActionTimeout).
	TimeoutSeconds int `json:"timeout_seconds,omitempty"`
}

// WorkdirPolicy is one workdir as the bridge knows it.
type WorkdirPolicy struct {
	Root      string            `json:"root"` // absolute host path of the work tree
	ReadWrite bool              `json:"read_write"`
	RepoOps   bool              `json:"repo_ops"`
	Actions   map[string]Action `json:"actions,omitempty"`
	// Push is where push_repo may push (nil: nowhere; push_repo is
	// PUSH_DESTINATION_DENIED).
	Push *PushPolicy `json:"push,omitempty"`
}

// PushPolicy names the operator's approved push destinations of a
// workdir, so that the repository's configuration (which an agent or an
// action can change) cannot send the operator's credentials elsewhere.
type PushPolicy struct {
	// URLs are the approved push URLs as git resolves them (after
	// insteadOf/pushInsteadOf, as `git remote get-url --push --all`
	// prints them); every push URL of the upstream's remote must be one
	// of them, compared exactly.
	URLs []string `json:"urls"`
	// Branches are the branch names (under refs/heads/) the upstream
	// branch may be.
	Branches []string `json:"branches"`
}

// Action is one operator-named action: a fixed argv run in the workdir
// root, never through a shell (kind "command", the default), or one of
// the release built-ins (kind "release_tag" or "publish_npm"), which run
// no argv: they tag HEAD with the caller's release tag, push that tag
// and, for publish_npm, dispatch the repository's fixed GitHub Actions
// workflow with gh.
type Action struct {
	// Kind is "command" (also when empty), "release_tag" or
	// "publish_npm".
	Kind string   `json:"kind,omitempty"`
	Argv []string `json:"argv,omitempty"`
	// Mutates lets the action write in its workdir; without it the
	// sandbox makes the workdir read-only for the process.
	Mutates bool `json:"mutates"`
	// Network lets the action bind and connect TCP sockets; without it
	// the sandbox refuses both.
	Network bool `json:"network,omitempty"`
	// UnixSockets lets the action reach pathname Unix sockets; without
	// it the sandbox refuses them (an agent's or a service manager's
	// socket is a way out).
	UnixSockets bool `json:"unix_sockets,omitempty"`
	// Reveal names deny-listed or hidden paths the action may read (a
	// test reading .env.test, a tool needing .git): patterns matched as
	// the deny list's are. Every other one is masked in the action.
	Reveal []string `json:"reveal,omitempty"`
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

	// Release kinds only.

	// Repository is the GitHub repository, "owner/name".
	Repository string `json:"repository,omitempty"`
	// FetchURLs and PushURLs are the approved URLs of the remote origin
	// (as git resolves them: git remote get-url --all [--push] origin);
	// every URL origin has must be among them.
	FetchURLs []string `json:"fetch_urls,omitempty"`
	PushURLs  []string `json:"push_urls,omitempty"`
	// Workflow is the workflow file publish_npm dispatches
	// (".github/workflows/<Workflow>", e.g. "publish.yml").
	Workflow string `json:"workflow,omitempty"`
	// GH is the absolute path of the GitHub CLI for publish_npm ("": gh
	// on the bridge's PATH).
	GH string `json:"gh,omitempty"`
}

// Action kinds.
const (
	KindCommand    = "command"
	KindReleaseTag = "release_tag"
	KindPublishNPM = "publish_npm"
)

// IsRelease reports whether the action is one of the release built-ins.
func (a Action) IsRelease() bool { return a.Kind == KindReleaseTag || a.Kind == KindPublishNPM }

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

// Argument kinds. ArgumentReleaseTag is what ActionInfo reports for the
// release built-ins: they take a release tag, never a path.
const (
	ArgumentNone       = "none"
	ArgumentPath       = "path"
	ArgumentBasename   = "basename"
	ArgumentReleaseTag = "release_tag"
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
	// Replace are more host paths outputs show only by a name: every
	// workdir root as "alias:", the tree of the workspace an action runs
	// in as "alias@id:", the workspaces dir and the bridge's policy and
	// token files as "<bridge>". For one path the first entry wins.
	Replace []PathName
	// Sandbox is the policy's sandbox section (nil: defaults, not
	// required); Protect are host paths no sandbox read path may contain
	// (every workdir root).
	Sandbox *SandboxPolicy
	Protect []string
	// workspace says the root is a workspace tree (no .git to keep).
	workspace bool
	// tools are the PATH, git and gh the bridge resolved when it started
	// (nil: RunLimits.hostTools resolves them for the one call).
	tools *hostTools
}

// PathName is a host path and what outputs show in its place.
type PathName struct{ Path, Name string }
