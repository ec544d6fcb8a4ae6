package mcp

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/bridge/wire"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// The host-bridge tools: served when a bridge is configured
// and some workdir has repo ops; push_repo only when one is also rw.

type runRepoActionIn struct {
	Workdir string `json:"workdir"`
	Action  string `json:"action" jsonschema:"a name from inspect_repo view actions"`
	Path    string `json:"path,omitempty" jsonschema:"for actions taking path or basename: an existing file (letters, digits, . _ / - unless allowed more; not starting with - @ +)"`
	// ReleaseTag is described by bridgeTools.
	ReleaseTag string `json:"release_tag,omitempty" jsonschema:"for release_tag actions: vMAJOR.MINOR.PATCH or vMAJOR.MINOR.PATCH-beta.N (v1.2.3), tagged at HEAD; never with path"`
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
	Workdir string `json:"workdir"`
}

// releaseDescription is run_repo_action's text on the release built-ins.
const releaseDescription = "Actions taking release_tag (release_tag, publish_npm) run no repository program: they tag HEAD of main with release_tag and push exactly that tag to origin, never forced (publish_npm then starts the repository's publish workflow); release answers the tag, commit, status created or already_at_head, and the run URL. " +
	"Each requirement fails alone, changing nothing: main checked out (RELEASE_WRONG_BRANCH) tracking origin/main (NO_UPSTREAM), approved origin URLs (REMOTE_NOT_APPROVED), a clean tree (REPO_STAGED_CHANGES, REPO_DIRTY), package.json's version equal to the tag without v (VERSION_MISMATCH), origin's main at HEAD (REMOTE_NOT_AT_HEAD: push_repo first). The tag at another commit: TAG_CONFLICT. DISPATCH_FAILED: the tag was pushed, the workflow not started; call again to retry."

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
		workspaceText = " With a workspace (ALIAS@ID) as workdir, a command action of ALIAS runs on the workspace's files, if the bridge has the server's state directory (else INVALID_ARGUMENT)."
	}
	tools := []tool{{
		def: &sdk.Tool{
			Name: "run_repo_action",
			Description: "Run one of the administrator's named actions (lint or test gates; inspect_repo view actions lists them) in a workdir's repository, on the host. " +
				"You choose only the action and, if it takes one, a path; program, arguments and environment are the administrator's. Pinned files are checked first (INTEGRITY_MISMATCH: nothing ran). " +
				"Answers the exit code (non-zero is a result), the ends of stdout and stderr, the duration and the sandbox level (enforced: reads only system paths and the workdir but the files these tools refuse, writes there only if the action mutates, never .git; no sockets unless allowed); ACTION_TIMEOUT or OUTPUT_LIMIT_EXCEEDED when stopped; SANDBOX_UNAVAILABLE: nothing ran. Never at the same time as writes or commits on the workdir." + workspaceText + releaseText,
			Annotations: &sdk.ToolAnnotations{Title: "Run repository action", ReadOnlyHint: false, IdempotentHint: false, DestructiveHint: ptr(false), OpenWorldHint: ptr(push)},
			InputSchema: schema,
		},
		// The host bridge runs actions and pushes, one at a time per
		// workdir under its lease; this process only waits for its answer.
		cost:     cheap,
		register: register(runRepoAction),
	}}
	if push {
		tools = append(tools, tool{
			def: &sdk.Tool{
				Name: "push_repo",
				Description: "Push the current branch of a read-write workdir's repository to its configured upstream with the host user's git credentials: exactly one ref, never forced, no hooks. " +
					"Answers ok or up_to_date; not a fast-forward: PUSH_REJECTED (merge on the host first); a detached HEAD or no upstream: NO_UPSTREAM; an upstream or URL the administrator has not approved: PUSH_DESTINATION_DENIED, nothing pushed.",
				Annotations: &sdk.ToolAnnotations{Title: "Push repository", ReadOnlyHint: false, IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(true)},
				InputSchema: inputSchema[pushRepoIn](nil),
			},
			cost:     cheap,
			register: register(pushRepo),
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
		return nil, errs.At(errs.WorkdirReadOnly, w.Alias(), "", "is read-only")
	}
	if d.Bridge == nil {
		return nil, errs.New(errs.BridgeUnavailable, "no host bridge is configured")
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
		if why := wire.CheckReleaseTag(in.ReleaseTag); why != "" {
			return nil, info, argErr("%s", why)
		}
		if w.Mode() != sfs.ModeReadWrite {
			return nil, info, errs.At(errs.WorkdirReadOnly, w.Alias(), "", "is read-only; release actions need a read-write workdir")
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

// The text of a command's answer: what ran and how it ended on one line,
// then its output as the program wrote it (a log read escaped inside a
// JSON string is a log a model misreads).
//
// writeRun writes "exit N in D ms, sandbox S (controls)" and the output
// blocks, each under a "--- stdout ---" or "--- stderr ---" line, with a
// line when the program wrote more than the answer keeps.
func writeRun(b *strings.Builder, exit int, durationMs int64, sandbox string, controls []string, stdout, stderr string, stdoutCut, stderrCut bool) {
	b.WriteString("exit ")
	b.WriteString(strconv.Itoa(exit))
	b.WriteString(" in ")
	b.WriteString(strconv.FormatInt(durationMs, 10))
	b.WriteString(" ms")
	if sandbox != "" {
		b.WriteString(", sandbox ")
		b.WriteString(sandbox)
		if len(controls) > 0 {
			b.WriteString(" (" + strings.Join(controls, ", ") + ")")
		}
	}
	b.WriteByte('\n')
	for _, o := range []struct {
		name, text string
		cut        bool
	}{{"stdout", stdout, stdoutCut}, {"stderr", stderr, stderrCut}} {
		if o.text == "" && !o.cut {
			continue
		}
		b.WriteString("--- " + o.name)
		if o.cut {
			b.WriteString(" (its end only: the program wrote more)")
		}
		b.WriteString(" ---\n")
		b.WriteString(o.text)
		if o.text != "" && !strings.HasSuffix(o.text, "\n") {
			b.WriteByte('\n')
		}
	}
}

// Text is "action NAME: exit N in D ms, sandbox S" and the output; for a
// release action, the tag, commit, status and push output.
func (o *runRepoActionOut) Text() string {
	var b strings.Builder
	b.WriteString("action " + o.Action + ": ")
	if r := o.Release; r != nil {
		b.WriteString(r.Kind + " " + r.Tag + " at " + r.Commit + " of " + r.Repository + ": " + r.Status + " in " + strconv.FormatInt(r.DurationMs, 10) + " ms\n")
		if d := r.Dispatch; d != nil {
			if d.RunURL != "" {
				b.WriteString("workflow run: " + d.RunURL + "\n")
			}
		}
		if r.PushOutput != "" {
			b.WriteString("--- git push ---\n" + r.PushOutput)
			if !strings.HasSuffix(r.PushOutput, "\n") {
				b.WriteByte('\n')
			}
		}
		return b.String()
	}
	exit := 0
	if o.ExitCode != nil {
		exit = *o.ExitCode
	}
	writeRun(&b, exit, o.DurationMs, o.Sandbox, o.SandboxControls, o.Stdout, o.Stderr, o.StdoutTruncated, o.StderrTruncated)
	return b.String()
}
