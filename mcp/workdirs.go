package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sfs "github.com/serverfs/serverfs/fs"
)

type listWorkdirsIn struct{}

type listWorkdirsOut struct {
	Workdirs []sfs.WorkdirInfo `json:"workdirs"`
}

// listWorkdirsTool is list_workdirs: what its answer holds depends on
// what s serves (rw workdirs, repository tools, workspaces).
func listWorkdirsTool(s surface) tool {
	workdirsText := "List the workdirs: alias, mode (ro or rw"
	if s.write {
		workdirsText += ": changeable"
	}
	workdirsText += ")"
	if s.inspect {
		workdirsText += ", repo_ops (git repository tools work)"
	}
	workdirsText += ", description"
	if s.workspaces {
		workdirsText += "; workspaces (ALIAS@ID) too"
	}
	workdirsText += ". Every other tool's workdir is an alias from here."
	return tool{
		def: &sdk.Tool{
			Name:        "list_workdirs",
			Description: workdirsText,
			Annotations: readOnly("List workdirs"),
			InputSchema: inputSchema[listWorkdirsIn](nil),
		},
		cost:     cheap,
		register: register(listWorkdirs),
	}
}

func listWorkdirs(_ context.Context, d *Deps, _ listWorkdirsIn) (listWorkdirsOut, callInfo, error) {
	return listWorkdirsOut{Workdirs: d.FS.Workdirs()}, callInfo{}, nil
}
