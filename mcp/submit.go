package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git"
)

// submit_workspace (issue 24): a workspace's changes become a patch (a
// commit on its base in the live repository's object store) that the
// branch's merge queue applies, one at a time per branch.

type submitWorkspaceIn struct {
	Workspace string `json:"workspace" jsonschema:"the workspace alias ALIAS@ID from create_workspace or list_workspaces"`
	Message   string `json:"message" jsonschema:"commit message of the workspace's change"`
	Mode      string `json:"mode,omitempty" jsonschema:"strict: merge only when the branch is still at the workspace's base (else BASE_MOVED); replay: merge each changed file onto the branch's current head (MERGE_CONFLICT when both sides changed the same lines)"`
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
			Description: "Merge a workspace's changes into the branch it was created from (create_workspace base HEAD or a branch). " +
				"Its files are committed on its base commit (a patch: sha256, base, head, files_changed, diffstat; hidden files keep their base version, new files the ignore rules exclude are not added) and queued: one merge at a time per branch. " +
				"mode strict (default) fast-forwards the branch only if it is still at the base, else answers code BASE_MOVED; mode replay merges each changed file onto the branch's current head, as git merge-file does for text, and commits on the head, or answers code MERGE_CONFLICT with the files, the conflicting hunks (base, ours = the branch, theirs = the workspace) and a conflict artifact. " +
				"On BASE_MOVED and MERGE_CONFLICT the branch does not move: change the workspace (or create one at the new head) and submit again. " +
				"Status no_change: the workspace has no change; already_merged: this patch (or the same change) is in the branch already. A workspace holding a name git refuses (GIT_PATH_REJECTED, with git's rule) is not committed. " +
				"When the branch is checked out in the live workdir and its work tree is clean, the work tree follows (checkout updated); otherwise checkout behind: the live files stay as they were. " +
				"It writes the live repository's .git (objects, the branch, its reflog, the index) and, with checkout updated, the changed files; the workspace is kept (discard_workspace when done). It never force-moves a branch and runs no hook.",
			Annotations: &sdk.ToolAnnotations{Title: "Submit workspace", ReadOnlyHint: false, IdempotentHint: true, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
			InputSchema: schema,
		},
		register: register("submit_workspace", submitWorkspace),
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
		return nil, info, &sfs.Error{Code: sfs.CodeInvalidArgument, Workdir: ws.Alias, Msg: "was created from a commit or tag, not a branch: there is no branch to merge it into"}
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
	switch code := sfs.CodeOf(err); {
	case err == nil:
	case code == sfs.CodeBaseMoved || code == sfs.CodeMergeConflict:
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
