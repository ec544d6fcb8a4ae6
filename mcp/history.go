package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git"
)

// read_repo_history: the committed history of a repository
// workdir, read in process. It is a tool of its own rather than more
// inspect_repo views: inspect_repo is about the uncommitted state (work
// tree, index), this one about commits, and their arguments (rev, since,
// until, cursor) have no meaning for each other's views; a model picks
// by the question ("what changed recently, who wrote this line" or "what
// have I not committed"), and each schema stays short.

type readRepoHistoryIn struct {
	Workdir   string   `json:"workdir"`
	View      string   `json:"view"` // described by historyTool
	Rev       string   `json:"rev,omitempty" jsonschema:"default HEAD; a branch, tag or commit id"`
	Paths     []string `json:"paths,omitempty"`
	Since     string   `json:"since,omitempty"`
	Until     string   `json:"until,omitempty"`
	Limit     int      `json:"limit,omitempty"`
	Cursor    string   `json:"cursor,omitempty"`
	MaxBytes  int      `json:"max_bytes,omitempty"`
	Path      string   `json:"path,omitempty" jsonschema:"blame's file"`
	StartLine int      `json:"start_line,omitempty"`
	MaxLines  int      `json:"max_lines,omitempty"`
	Files     bool     `json:"files,omitempty" jsonschema:"log: list each commit's changed files"`
}

type readRepoHistoryOut struct {
	Workdir string           `json:"workdir"`
	View    string           `json:"view"`
	Log     *git.LogResult   `json:"log,omitempty"`
	Show    *git.ShowResult  `json:"show,omitempty"`
	Blame   *git.BlameResult `json:"blame,omitempty"`
	// maxBytes is show's max_bytes, for the text's truncated line.
	maxBytes int
}

func historyTool(lim sfs.Limits) tool {
	schema := inputSchema[readRepoHistoryIn](map[string]bound{
		"limit":      {1, git.MaxLogCommits, git.DefaultLogCommits},
		"max_bytes":  {1024, git.MaxDiffBytes, git.DefaultDiffBytes},
		"start_line": {1, 1 << 30, 1},
		"max_lines":  {1, git.MaxBlameLines, git.MaxBlameLines},
	})
	schema.Properties["view"].Enum = []any{"log", "show", "blame"}
	schema.Properties["paths"].MaxItems = ptr(git.MaxHistoryPaths)
	schema.Properties["files"].Default = json.RawMessage("false")
	return tool{
		def: &sdk.Tool{
			Name: "read_repo_history",
			Description: fmt.Sprintf("Committed history of a workdir's git repository (git log, show, blame); runs no git program. "+
				"view \"log\" (newest first from rev; paths, since and until (RFC 3339) narrow it): `<short id> <date> <author> <subject>` lines; files true adds `  M path` lines; last `next_cursor C`: pass C as cursor. "+
				"\"show\": rev's header, then its unified diff (a file past max_bytes is left out: show it with paths). "+
				"\"blame\": `<short id> <line>: <text>` (the id on a run's first line) for max_lines lines of path from start_line. "+
				"A walk stops after %d commits or %s. Uncommitted work: inspect_repo.", git.MaxWalkCommits, lim.SearchTimeout),
			Annotations: readOnly("Repository history"),
			InputSchema: schema,
		},
		// History walks up to git.MaxWalkCommits commits and reads blobs.
		cost:     heavy,
		register: register(readRepoHistory),
	}
}

func readRepoHistory(ctx context.Context, d *Deps, in readRepoHistoryIn) (*readRepoHistoryOut, callInfo, error) {
	info := callInfo{workdir: in.Workdir}
	r, err := openRepo(d, in.Workdir)
	if err != nil {
		return nil, info, err
	}
	out := &readRepoHistoryOut{Workdir: in.Workdir, View: in.View}
	if in.Files && in.View != "log" {
		return nil, info, argErr("files is for view log; show lists every file it changed")
	}
	switch in.View {
	case "log":
		out.Log, err = r.Log(ctx, git.LogOptions{Rev: in.Rev, Paths: in.Paths, Since: in.Since, Until: in.Until, Limit: in.Limit, Cursor: in.Cursor, Files: in.Files})
	case "show":
		out.Show, err = r.Show(ctx, in.Rev, in.Paths, in.MaxBytes)
		out.maxBytes = in.MaxBytes
	case "blame":
		if in.Path == "" {
			return nil, info, argErr("blame needs path, the file to blame")
		}
		start, n := max(in.StartLine, 1), in.MaxLines
		if n <= 0 {
			n = git.MaxBlameLines
		}
		out.Blame, err = r.BlameLines(ctx, in.Rev, in.Path, start, n)
	default:
		return nil, info, argErr("view must be log, show or blame")
	}
	if err != nil {
		return nil, info, err
	}
	return out, info, nil
}
