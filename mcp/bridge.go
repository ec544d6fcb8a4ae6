package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/bridge"
	"github.com/serverfs/serverfs/bridge/wire"
	sfs "github.com/serverfs/serverfs/fs"
)

// The host-bridge tools (issue 8): served when a bridge is configured
// and some workdir has repo ops; push_repo only when one is also rw.

type runRepoActionIn struct {
	Workdir string `json:"workdir" jsonschema:"alias of a workdir with repo_ops true in list_workdirs"`
	Action  string `json:"action" jsonschema:"the name of an action from inspect_repo view actions"`
	Path    string `json:"path,omitempty" jsonschema:"only for actions whose argument is path or basename: an existing file relative to the workdir root, letters, digits and . _ / - only (unless the administrator allowed more), not starting with - @ +"`
	// ReleaseTag is described by bridgeTools.
	ReleaseTag string `json:"release_tag,omitempty" jsonschema:"only for actions whose argument is release_tag: the tag to create at HEAD and push, vMAJOR.MINOR.PATCH or vMAJOR.MINOR.PATCH-beta.N without leading zeros (v1.2.3, v1.3.0-beta.2); never with path"`
}

// runRepoActionOut is a command action's result (exit code, output
// tails) or a release action's (release).
type runRepoActionOut struct {
	Action          string              `json:"action"`
	ExitCode        *int                `json:"exit_code,omitempty" jsonschema:"command actions: the exit status (non-zero is a result, not an error)"`
	Stdout          string              `json:"stdout,omitempty"`
	Stderr          string              `json:"stderr,omitempty"`
	StdoutTruncated bool                `json:"stdout_truncated,omitempty"`
	StderrTruncated bool                `json:"stderr_truncated,omitempty"`
	DurationMs      int64               `json:"duration_ms"`
	Sandbox         string              `json:"sandbox,omitempty" jsonschema:"command actions: enforced, partial or unavailable, the sandbox level the process ran under"`
	SandboxControls []string            `json:"sandbox_controls,omitempty" jsonschema:"the controls in force, e.g. landlock-fs"`
	Release         *wire.ReleaseResult `json:"release,omitempty" jsonschema:"release actions: the tag, the commit it names, created or already_at_head, and publish_npm's workflow dispatch"`
}

type pushRepoIn struct {
	Workdir string `json:"workdir" jsonschema:"alias of a read-write workdir with repo_ops true in list_workdirs"`
}

// releaseDescription is run_repo_action's text on the release built-ins.
const releaseDescription = "Actions whose argument is release_tag (kind release_tag or publish_npm) run no program of the repository: given release_tag, they tag HEAD of main with it and push exactly that tag to origin, never forced (publish_npm then starts the repository's fixed publish workflow on GitHub for the tag); they return release: the tag, the commit, status created or already_at_head (origin had it at HEAD: nothing changed) and the dispatch's run URL when gh printed one. " +
	"Each requirement fails alone, changing nothing: main checked out (RELEASE_WRONG_BRANCH) tracking origin/main (NO_UPSTREAM), origin's URLs the administrator's (REMOTE_NOT_APPROVED), nothing staged (REPO_STAGED_CHANGES), modified or untracked (REPO_DIRTY), package.json's version equal to the tag without v (VERSION_MISMATCH), origin's main equal to HEAD (REMOTE_NOT_AT_HEAD: push_repo first), the pins. The tag at another commit, locally or on origin, is TAG_CONFLICT. DISPATCH_FAILED: the tag was pushed, the workflow not started; calling again retries."

func bridgeTools(push, workspaces bool) []tool {
	// The release built-ins need a read-write workdir: described (and
	// release_tag accepted) only where push_repo is served too.
	schema := inputSchema[runRepoActionIn](nil)
	releaseText := ""
	if push {
		releaseText = " " + releaseDescription
	} else {
		delete(schema.Properties, "release_tag")
	}
	workspaceText := ""
	if workspaces {
		workspaceText = " With workdir set to a workspace (ALIAS@ID from create_workspace) a command action of ALIAS runs on the workspace's files instead (the live tree is neither its directory nor readable), when the administrator gave the bridge the server's state directory (else INVALID_ARGUMENT)."
	}
	tools := []tool{{
		def: &sdk.Tool{
			Name: "run_repo_action",
			Description: "Run one of the operator's named actions (a lint or test gate: inspect_repo view actions lists them) in the repository at the root of a workdir, on the host. " +
				"You choose only the action and, for actions that take one, a path; the program, its arguments and environment are the administrator's. The files the administrator pinned are checked against their SHA-256 first (INTEGRITY_MISMATCH: nothing ran). " +
				"Returns the exit code (non-zero is a result, not an error), the ends of stdout and stderr, the duration and the sandbox level (enforced: the process could read only system paths and its workdir, write only there (never .git) and only if the action mutates, and open no TCP or Unix socket connection unless the action allows it); ACTION_TIMEOUT or OUTPUT_LIMIT_EXCEEDED when it was stopped, SANDBOX_UNAVAILABLE when the sandbox is required but missing (nothing ran). Actions never run at the same time as writes or commits on the same workdir." + workspaceText + releaseText,
			Annotations: &sdk.ToolAnnotations{Title: "Run repository action", ReadOnlyHint: false, IdempotentHint: false, DestructiveHint: ptr(false), OpenWorldHint: ptr(push)},
			InputSchema: schema,
		},
		register: register("run_repo_action", runRepoAction),
	}}
	if push {
		tools = append(tools, tool{
			def: &sdk.Tool{
				Name: "push_repo",
				Description: "Push the current branch of the repository at the root of a read-write workdir to its configured upstream branch, with the host user's own git credentials: exactly one ref (HEAD to the upstream branch), never forced, without hooks. " +
					"Returns ok, or up_to_date; a refused push (not a fast-forward: pull and merge on the host first) is PUSH_REJECTED, and a detached HEAD or a branch without upstream is NO_UPSTREAM. There is no choice of remote, ref or force: an upstream branch or remote URL the administrator has not approved is PUSH_DESTINATION_DENIED, and nothing is pushed.",
				Annotations: &sdk.ToolAnnotations{Title: "Push repository", ReadOnlyHint: false, IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(true)},
				InputSchema: inputSchema[pushRepoIn](nil),
			},
			register: register("push_repo", pushRepo),
		})
	}
	return tools
}

// repoWorkdir checks the workdir has repo ops and, for changes, is rw,
// and that a bridge is configured.
func repoWorkdir(d *Deps, alias string, rw bool) (*sfs.Workdir, error) {
	w, err := repoOpsWorkdir(d, alias)
	if err != nil {
		return nil, err
	}
	if rw && w.Mode() != sfs.ModeReadWrite {
		return nil, &sfs.Error{Code: sfs.CodeWorkdirReadOnly, Workdir: w.Alias(), Msg: "is read-only"}
	}
	if d.Bridge == nil {
		return nil, &sfs.Error{Code: sfs.CodeBridgeUnavailable, Msg: "no host bridge is configured"}
	}
	return w, nil
}

func runRepoAction(ctx context.Context, d *Deps, in runRepoActionIn) (*runRepoActionOut, callInfo, error) {
	info := callInfo{workdir: in.Workdir, path: in.Path}
	if parent, id, ok := sfs.SplitWorkspaceAlias(in.Workdir); ok {
		return runWorkspaceAction(ctx, d, in, parent, id, info)
	}
	w, err := repoWorkdir(d, in.Workdir, false)
	if err != nil {
		return nil, info, err
	}
	if in.ReleaseTag != "" {
		if in.Path != "" {
			return nil, info, argErr("release_tag and path are mutually exclusive")
		}
		if why := bridge.CheckReleaseTag(in.ReleaseTag); why != "" {
			return nil, info, argErr("%s", why)
		}
		if w.Mode() != sfs.ModeReadWrite {
			return nil, info, &sfs.Error{Code: sfs.CodeWorkdirReadOnly, Workdir: w.Alias(), Msg: "is read-only; release actions need a read-write workdir"}
		}
		rel, err := d.Bridge.RunRelease(ctx, in.Workdir, in.Action, in.ReleaseTag)
		if err != nil {
			return nil, info, err
		}
		return &runRepoActionOut{Action: rel.Action, DurationMs: rel.DurationMs, Release: rel}, info, nil
	}
	// The server's policy first; the bridge checks again on the host.
	path, err := actionPath(w, in.Path)
	if err != nil {
		return nil, info, err
	}
	res, err := d.Bridge.RunAction(ctx, in.Workdir, in.Action, path)
	if err != nil {
		return nil, info, err
	}
	return actionOut(res), info, nil
}

// actionPath is an action's optional path argument, cleaned by w's
// policy: "" when none was given; a named path must not be the root.
func actionPath(w *sfs.Workdir, p string) (string, error) {
	if p == "" {
		return "", nil
	}
	path, err := w.CleanPath(p)
	if err != nil {
		return "", err
	}
	if path == "" {
		return "", argErr("path %q is the workdir root; name a file", sfs.DisplayPath(p))
	}
	return path, nil
}

// actionOut is a command action's answer.
func actionOut(res *wire.ActionResult) *runRepoActionOut {
	code := res.ExitCode
	return &runRepoActionOut{Action: res.Action, ExitCode: &code, Stdout: res.Stdout, Stderr: res.Stderr,
		StdoutTruncated: res.StdoutTruncated, StderrTruncated: res.StderrTruncated, DurationMs: res.DurationMs, Sandbox: res.Sandbox, SandboxControls: res.SandboxControls}
}

// runWorkspaceAction runs a command action of the workdir parent in its
// workspace parent@id, on the host through the bridge (which must know
// the state directory: its policy's workspaces_dir), holding the
// workspace's writer lease so that it never overlaps a write there.
func runWorkspaceAction(ctx context.Context, d *Deps, in runRepoActionIn, parent, id string, info callInfo) (*runRepoActionOut, callInfo, error) {
	w, err := d.FS.Workdir(in.Workdir)
	if err != nil {
		return nil, info, err
	}
	if _, err := repoWorkdir(d, parent, false); err != nil {
		return nil, info, err
	}
	if in.ReleaseTag != "" {
		return nil, info, argErr("release actions run in the workdir %s, never in a workspace", parent)
	}
	// The server's policy first; the bridge checks again on the host.
	path, err := actionPath(w, in.Path)
	if err != nil {
		return nil, info, err
	}
	release, err := d.FS.Lease().Acquire(ctx, in.Workdir)
	if err != nil {
		return nil, info, err
	}
	defer release()
	res, err := d.Bridge.RunWorkspaceAction(ctx, parent, id, in.Action, path)
	if err != nil {
		return nil, info, err
	}
	return actionOut(res), info, nil
}

func pushRepo(ctx context.Context, d *Deps, in pushRepoIn) (*wire.PushResult, callInfo, error) {
	info := callInfo{workdir: in.Workdir}
	if _, err := repoWorkdir(d, in.Workdir, true); err != nil {
		return nil, info, err
	}
	res, err := d.Bridge.Push(ctx, in.Workdir)
	return res, info, err
}

// actionsOf lists a workdir's named actions from the bridge (none
// without a bridge).
func actionsOf(ctx context.Context, d *Deps, alias string) ([]wire.ActionInfo, error) {
	if d.Bridge == nil {
		return []wire.ActionInfo{}, nil
	}
	out, err := d.Bridge.Actions(ctx, alias)
	if err != nil {
		return nil, fmt.Errorf("listing actions: %w", err)
	}
	if out == nil {
		out = []wire.ActionInfo{}
	}
	return out, nil
}
