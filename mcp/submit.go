package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/git"
	"github.com/serverfs/serverfs/internal/errs"
)

// submit_workspace: a workspace's changes become a patch (a
// commit on its base in the live repository's object store) that the
// branch's merge queue applies, one at a time per branch.

type submitWorkspaceIn struct {
	Workspace string `json:"workspace" jsonschema:"ALIAS@ID"`
	Message   string `json:"message" jsonschema:"commit message"`
	Mode      string `json:"mode,omitempty"`
}

// submitWorkspaceOut is the queue's answer. Code is set when the branch
// did not move for a reason the caller has to act on.
type submitWorkspaceOut struct {
	Code      string `json:"code,omitempty" jsonschema:"BASE_MOVED or MERGE_CONFLICT when the branch did not move"`
	Workspace string `json:"workspace"`
	Workdir   string `json:"workdir" jsonschema:"the live workdir whose branch the patch was merged into"`
	git.MergeResult
}

func submitTool() tool {
	schema := inputSchema[submitWorkspaceIn](nil)
	schema.Properties["mode"].Enum = []any{git.MergeStrict, git.MergeReplay}
	schema.Properties["mode"].Default = []byte(`"strict"`)
	return tool{
		def: &sdk.Tool{
			Name: "submit_workspace",
			Description: "Merge a workspace's changes into its branch. " +
				"strict: fast-forward only if the branch is at the base, else code BASE_MOVED; replay: merge each changed file onto the branch head, else code MERGE_CONFLICT with hunks. " +
				"Then the branch did not move: change the workspace (or make one at the new head) and submit again. " +
				"A live checkout of it follows, or its edits on merged files refuse: REPO_DIRTY, REPO_STAGED_CHANGES. No force, no hook; workspace kept.",
			Annotations: &sdk.ToolAnnotations{Title: "Submit workspace", ReadOnlyHint: false, IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
			InputSchema: schema,
		},
		// A submit hashes every workspace file and merges changed ones.
		cost:     heavy,
		register: register(submitWorkspace),
	}
}

func submitWorkspace(ctx context.Context, d *Deps, in submitWorkspaceIn) (*submitWorkspaceOut, callInfo, error) {
	info := callInfo{workdir: in.Workspace}
	m, err := workspaces(d)
	if err != nil {
		return nil, info, err
	}
	mode := in.Mode
	if mode == "" {
		mode = git.MergeStrict
	}
	ws, wd, err := m.Get(in.Workspace)
	if err != nil {
		return nil, info, err
	}
	if ws.Branch == "" {
		return nil, info, errs.At(errs.InvalidArgument, ws.Alias, "", "was created from a commit or tag, not a branch: there is no branch to merge it into")
	}
	r, err := git.Open(d.FS, ws.Parent)
	if err != nil {
		return nil, info, err
	}
	// The workspace's writer lease: no write is half done while its
	// files are committed.
	release, err := d.FS.Lease().Acquire(ctx, ws.Alias)
	if err != nil {
		return nil, info, err
	}
	p, err := r.CommitWorkspace(ctx, wd, ws.Base, in.Message)
	release()
	if err != nil {
		return nil, info, err
	}
	res, err := r.Submit(ctx, ws.Branch, p, mode, "")
	out := &submitWorkspaceOut{Workspace: ws.Alias, Workdir: ws.Parent}
	switch code := errs.CodeOf(err); {
	case err == nil:
	case code == errs.BaseMoved || code == errs.MergeConflict:
		out.Code = string(code)
	default:
		return nil, info, err
	}
	if res == nil {
		return nil, info, fmt.Errorf("submit_workspace: no answer from the queue")
	}
	out.MergeResult = *res
	return out, info, nil
}
