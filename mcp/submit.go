package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/git"
	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/internal/unidiff"
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
				"Then the branch did not move: change the workspace and submit again. " +
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

// Text is submit_workspace's text content: its JSON, except that an
// answer with conflict hunks is plain text, each hunk between git's
// conflict markers (ours is the branch, theirs the workspace).
func (o *submitWorkspaceOut) Text() string {
	if len(o.Hunks) == 0 {
		j, _ := json.Marshal(o)
		return string(j)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: the branch %s did not move (mode %s", o.Code, o.Branch, o.Mode)
	if o.From != "" {
		b.WriteString(", head " + shortID(o.From))
	}
	b.WriteString("); change the workspace and submit again\n")
	if len(o.Files) > 0 {
		q := make([]string, len(o.Files))
		for i, f := range o.Files {
			q[i] = unidiff.QuotePath(f)
		}
		b.WriteString("conflicted files: " + strings.Join(q, " ") + "\n")
	}
	if o.Patch != nil {
		fmt.Fprintf(&b, "patch %s base %s", o.Patch.SHA256, shortID(o.Patch.Base))
		if o.Patch.Head != "" {
			b.WriteString(" head " + shortID(o.Patch.Head))
		}
		b.WriteByte('\n')
	}
	if a := o.Artifact; a != nil {
		fmt.Fprintf(&b, "conflict artifact %s (%d bytes", a.SHA256, a.Bytes)
		if a.Truncated {
			b.WriteString(", truncated")
		}
		b.WriteString(")\n")
	}
	side := func(label, text string) {
		b.WriteString(label + "\n" + text)
		if text != "" && !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	}
	for _, h := range o.Hunks {
		b.WriteString("==> " + unidiff.QuotePath(h.File))
		if h.Line > 0 {
			b.WriteString(" line " + strconv.Itoa(h.Line))
		}
		if h.Reason != "" {
			b.WriteString(" " + h.Reason + " (text not shown) <==\n")
			continue
		}
		if h.Truncated {
			b.WriteString(" (sides cut at 2 KiB)")
		}
		b.WriteString(" <==\n")
		side("<<<<<<< ours (branch "+o.Branch+")", h.Ours)
		side("||||||| base", h.Base)
		side("=======", h.Theirs)
		b.WriteString(">>>>>>> theirs (workspace " + o.Workspace + ")\n")
	}
	if o.HunksOmitted > 0 {
		fmt.Fprintf(&b, "truncated: %d more hunks not shown; the conflict artifact holds every conflicted file's text with markers\n", o.HunksOmitted)
	}
	return b.String()
}
