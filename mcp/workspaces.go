package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git/workspace"
	"github.com/serverfs/serverfs/internal/errs"
)

// The workspace tools: served when a state directory is
// configured (the workspace manager attached itself to the FS) and some
// workdir is rw with repo ops.

type createWorkspaceIn struct {
	Workdir string `json:"workdir"`
	Base    string `json:"base,omitempty" jsonschema:"a branch, tag or commit id"`
}

type listWorkspacesIn struct {
	Workdir string `json:"workdir,omitempty" jsonschema:"only this workdir's"`
}

type discardWorkspaceIn struct {
	Workspace string `json:"workspace" jsonschema:"ALIAS@ID"`
}

// workspaceOut is one workspace as the tools answer it.
type workspaceOut struct {
	Workspace string `json:"workspace" jsonschema:"the workdir alias (ALIAS@ID) every file tool takes for the workspace"`
	Workdir   string `json:"workdir" jsonschema:"the workdir it was checked out from"`
	Base      string `json:"base" jsonschema:"full id of the commit it was checked out at"`
	Branch    string `json:"branch,omitempty" jsonschema:"the branch the base was taken from"`
	Owner     string `json:"owner,omitempty"`
	CreatedAt string `json:"created_at"`
	Files     int    `json:"files,omitempty" jsonschema:"files, symlinks and directories checked out"`
	Bytes     int64  `json:"bytes,omitempty"`
}

type listWorkspacesOut struct {
	Workspaces []workspaceOut `json:"workspaces"`
}

type discardWorkspaceOut struct {
	Discarded string `json:"discarded"`
}

func outWorkspace(w workspace.Workspace) workspaceOut {
	return workspaceOut{Workspace: w.Alias, Workdir: w.Parent, Base: w.Base, Branch: w.Branch, Owner: w.Owner,
		CreatedAt: w.Created.UTC().Format(time.RFC3339), Files: w.Files, Bytes: w.Bytes}
}

// workspaceTools are the workspace tools; cfg gives the numbers their
// descriptions state.
func workspaceTools(cfg sfs.WorkspaceLimits) []tool {
	days := int(cfg.MaxAge / (24 * time.Hour))
	ageText := fmt.Sprintf("%d days", days)
	if days == 0 || cfg.MaxAge%(24*time.Hour) != 0 {
		ageText = fmt.Sprintf("%d hours", int(cfg.MaxAge/time.Hour))
	}
	createSchema := inputSchema[createWorkspaceIn](nil)
	createSchema.Properties["base"].Default = []byte(`"HEAD"`)
	return []tool{
		{
			def: &sdk.Tool{
				Name: "create_workspace",
				Description: fmt.Sprintf("A private checkout of commit base of an rw repository workdir, served as its own rw workdir ALIAS@ID to every file tool: changes there never touch the live work tree (no .git; inspect_repo shows its change). "+
					"At most %d per workdir (WORKSPACE_LIMIT); over %d files or %s: WORKSPACE_TOO_LARGE. Discard it when done; the server removes those older than %s when it starts.", cfg.PerWorkdir, cfg.MaxFiles, sizeText(cfg.MaxBytes), ageText),
				Annotations: &sdk.ToolAnnotations{Title: "Create workspace", ReadOnlyHint: false, IdempotentHint: false, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
				InputSchema: createSchema,
			},
			// A checkout reads every tree and streams every blob of a commit to
			// disk (bounded by SERVERFS_WORKSPACE_MAX_FILES/_BYTES); discarding
			// only deletes files.
			cost:     heavy,
			register: register(createWorkspace),
		},
		{
			def: &sdk.Tool{
				Name:        "list_workspaces",
				Description: "List the workspaces, of one workdir or all: alias ALIAS@ID, source workdir, base commit, branch, owner, creation time.",
				Annotations: readOnly("List workspaces"),
				InputSchema: inputSchema[listWorkspacesIn](nil),
			},
			cost:     cheap,
			register: register(listWorkspaces),
		},
		{
			def: &sdk.Tool{
				Name:        "discard_workspace",
				Description: "Delete a workspace, every change in it and its alias. The live workdir is not touched. No undo.",
				Annotations: change("Discard workspace", true),
				InputSchema: inputSchema[discardWorkspaceIn](nil),
			},
			cost:     cheap,
			register: register(discardWorkspace),
		},
	}
}

// workspaces is the manager, or an error when none is wired (the tools
// are not served then).
func workspaces(d *Deps) (*workspace.Manager, error) {
	if d.Workspaces == nil {
		return nil, errs.New(errs.Internal, "workspaces are not configured")
	}
	return d.Workspaces, nil
}

func createWorkspace(ctx context.Context, d *Deps, in createWorkspaceIn) (workspaceOut, callInfo, error) {
	info := callInfo{workdir: in.Workdir}
	m, err := workspaces(d)
	if err != nil {
		return workspaceOut{}, info, err
	}
	ws, err := m.Create(ctx, in.Workdir, in.Base, callerOf(ctx))
	if err != nil {
		return workspaceOut{}, info, err
	}
	return outWorkspace(ws), info, nil
}

func listWorkspaces(_ context.Context, d *Deps, in listWorkspacesIn) (listWorkspacesOut, callInfo, error) {
	info := callInfo{workdir: in.Workdir}
	m, err := workspaces(d)
	if err != nil {
		return listWorkspacesOut{}, info, err
	}
	if in.Workdir != "" {
		if _, err := d.FS.Workdir(in.Workdir); err != nil {
			return listWorkspacesOut{}, info, err
		}
	}
	out := listWorkspacesOut{Workspaces: []workspaceOut{}}
	for _, w := range m.List(in.Workdir) {
		out.Workspaces = append(out.Workspaces, outWorkspace(w))
	}
	return out, info, nil
}

func discardWorkspace(ctx context.Context, d *Deps, in discardWorkspaceIn) (discardWorkspaceOut, callInfo, error) {
	info := callInfo{workdir: in.Workspace}
	m, err := workspaces(d)
	if err != nil {
		return discardWorkspaceOut{}, info, err
	}
	if err := m.Discard(ctx, in.Workspace); err != nil {
		return discardWorkspaceOut{}, info, err
	}
	return discardWorkspaceOut{Discarded: in.Workspace}, info, nil
}

// callerKey carries the MCP session of a tool call in its context.
type callerKey struct{}

// withCaller records the call's session in ctx, for callerOf.
func withCaller(ctx context.Context, ss *sdk.ServerSession) context.Context {
	if ss == nil {
		return ctx
	}
	return context.WithValue(ctx, callerKey{}, ss)
}

// callerOf names the caller of a tool call, as a workspace's owner: the
// MCP client's name from its initialize request and the first 8 hex
// digits of the SHA-256 of its session id (the id itself is not shown:
// with the token, it addresses the session). ServerFS authenticates
// clients by one shared token, so this names a conversation, not a
// person; "" when neither is known.
func callerOf(ctx context.Context) string {
	ss, _ := ctx.Value(callerKey{}).(*sdk.ServerSession)
	if ss == nil {
		return ""
	}
	var parts []string
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
		name := p.ClientInfo.Name
		if len(name) > 64 {
			name = name[:64]
		}
		parts = append(parts, strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f || r == utf8.RuneError {
				return '?'
			}
			return r
		}, name))
	}
	if id := ss.ID(); id != "" {
		sum := sha256.Sum256([]byte(id))
		parts = append(parts, "session "+hex.EncodeToString(sum[:4]))
	}
	return strings.Join(parts, ", ")
}
