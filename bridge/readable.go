package bridge

import (
	"fmt"
	"slices"
)

// policyProtect are the host paths of p no sandbox read path may contain
// (RunLimits.Protect): every workdir root and the workspaces dir.
func policyProtect(p *Policy) []string {
	var protect []string
	for _, a := range sortedKeys(p.Workdirs) {
		protect = append(protect, p.Workdirs[a].Root)
	}
	if p.WorkspacesDir != "" {
		protect = append(protect, p.WorkspacesDir)
	}
	return protect
}

// ActionReadPath says whether some action or granted command under p
// could read file (as given or with its symlinks resolved) through the
// sandbox: it returns the granted path file lies under and what that
// path is, or "" when there is none. The granted paths are those
// sandboxRules gives an action in any workdir — the read paths it keeps
// (bridgeDirs, the bridge's state and socket directories, and HOME
// protected, as when actions run) and the workdir root — and the
// workspaces dir. file must be absolute.
func ActionReadPath(p *Policy, bridgeDirs []string, file string) (granted, what string) {
	lim := RunLimits{Protect: policyProtect(p), BridgePaths: bridgeDirs, Sandbox: p.Sandbox}
	holds := func(dir string) bool { return coversAny(dir, []string{file}) }
	for _, a := range sortedKeys(p.Workdirs) {
		root := p.Workdirs[a].Root
		if holds(root) {
			return root, fmt.Sprintf("the root of workdir %q", a)
		}
		// An action that does not mutate keeps the most read paths.
		for _, r := range sandboxReadPaths(p.Sandbox, root, false, sandboxProtect(lim, root)) {
			if !holds(r) {
				continue
			}
			if slices.Contains(DefaultSandboxReadPaths, r) {
				return r, "a default sandbox read path"
			}
			return r, "a sandbox.read_paths entry of the policy"
		}
	}
	if d := p.WorkspacesDir; d != "" && holds(d) {
		return d, "the policy's workspaces_dir"
	}
	return "", ""
}
