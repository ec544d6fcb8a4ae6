package wire

// ActionResult is what a finished action reports. Host paths in the
// output are replaced: every workdir root by "alias:" (the workspace the
// action runs in by "alias@id:"), the action's private HOME and TMPDIR by
// "$HOME", the bridge's own directories and files and the workspaces dir
// by "<bridge>", the operator's home by "~".
type ActionResult struct {
	Action string `json:"action"`
	ProcessResult
}

// ProcessResult is what a process the bridge ran left: its exit code, the
// (scrubbed) tails of its output, how long it ran and under which sandbox.
type ProcessResult struct {
	ExitCode        int    `json:"exit_code"`
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	StdoutTruncated bool   `json:"stdout_truncated"`
	StderrTruncated bool   `json:"stderr_truncated"`
	DurationMs      int64  `json:"duration_ms"`
	// Sandbox is the level the process ran under: "enforced",
	// "partial" or "unavailable"; SandboxControls the controls in force
	// (ControlLandlockFS, ...).
	Sandbox         string   `json:"sandbox"`
	SandboxControls []string `json:"sandbox_controls,omitempty"`
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

// ReleaseResult is what a release_tag or publish_npm action reports.
// Outputs are bounded and their host paths and remote URLs replaced.
type ReleaseResult struct {
	Action     string `json:"action"`
	Kind       string `json:"kind"` // release_tag or publish_npm
	Tag        string `json:"tag"`
	Commit     string `json:"commit"` // HEAD, which the tag names
	Repository string `json:"repository"`
	// Status is "created" (the tag was pushed to origin) or
	// "already_at_head" (origin had the tag at HEAD already; nothing
	// changed).
	Status string `json:"status"`
	// PushOutput is git push's output (absent when nothing was pushed).
	PushOutput string          `json:"push_output,omitempty"`
	Dispatch   *DispatchResult `json:"dispatch,omitempty"` // publish_npm
	DurationMs int64           `json:"duration_ms"`
}

// DispatchResult is publish_npm's `gh workflow run` of the fixed
// workflow at the tag.
type DispatchResult struct {
	Workflow string `json:"workflow"`
	// RunURL and RunID when gh printed the run's URL.
	RunURL string `json:"run_url,omitempty"`
	RunID  string `json:"run_id,omitempty"`
	Output string `json:"output,omitempty"`
}

// GrantResult is what a granted command reports: the action runner's
// result, the grant and how many of its uses are spent.
type GrantResult struct {
	GrantID string   `json:"grant_id"`
	Argv    []string `json:"argv"`
	Uses    int      `json:"uses"`
	MaxUses int      `json:"max_uses"`
	ProcessResult
}
