package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git"
)

// read_repo_history (issue 18): the committed history of a repository
// workdir, read in process. It is a tool of its own rather than more
// inspect_repo views: inspect_repo is about the uncommitted state (work
// tree, index), this one about commits, and their arguments (rev, since,
// until, cursor) have no meaning for each other's views; a model picks
// by the question ("what changed recently, who wrote this line" or "what
// have I not committed"), and each schema stays short.

type readRepoHistoryIn struct {
	Workdir   string   `json:"workdir" jsonschema:"alias of a workdir with repo_ops true in list_workdirs"`
	View      string   `json:"view"` // described by historyTool
	Rev       string   `json:"rev,omitempty" jsonschema:"log: the commit to start from; show: the commit to show; blame: the version to blame. Default HEAD. A local branch, a tag, a full commit id or a unique prefix of at least 7 hex digits (no ranges, ~, ^, @{...}, remote branches)"`
	Paths     []string `json:"paths,omitempty" jsonschema:"log: only commits that changed these files or directories (literal paths, like git log -- paths; renames are not followed); show: only these files or directories"`
	Since     string   `json:"since,omitempty" jsonschema:"log: RFC 3339 time; stop at commits committed before it (git log --since)"`
	Until     string   `json:"until,omitempty" jsonschema:"log: RFC 3339 time; skip commits committed after it (git log --until)"`
	Limit     int      `json:"limit,omitempty" jsonschema:"log: maximum commits to return"`
	Cursor    string   `json:"cursor,omitempty" jsonschema:"log: next_cursor of the previous answer, to get the next page (same rev, paths, since and until)"`
	MaxBytes  int      `json:"max_bytes,omitempty" jsonschema:"show: maximum bytes of patch to return"`
	Path      string   `json:"path,omitempty" jsonschema:"blame: the file, relative to the workdir root"`
	StartLine int      `json:"start_line,omitempty" jsonschema:"blame: first line (1-based); default 1"`
	MaxLines  int      `json:"max_lines,omitempty" jsonschema:"blame: maximum lines to blame from start_line"`
	Files     bool     `json:"files,omitempty" jsonschema:"log: also list the files each commit changed (at most 50 per commit)"`
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
	schema.Properties["view"].Description = "log (commits), show (one commit with its patch) or blame (who last changed each line of a file)"
	schema.Properties["paths"].MaxItems = ptr(git.MaxHistoryPaths)
	schema.Properties["files"].Default = json.RawMessage("false")
	return tool{
		def: &sdk.Tool{
			Name: "read_repo_history",
			Description: fmt.Sprintf("Read the committed history of the git repository at the root of a workdir (repo_ops true in list_workdirs), like git log, git show and git blame; it never changes anything and runs no git program. "+
				"view \"log\": commits newest first as git log orders them (committer date), from rev (default HEAD), optionally only those that changed paths (git's default history simplification: a merge that kept one side's version of the paths is not shown and only that side is followed); each with id, parents, author (and committer when different) with RFC 3339 UTC dates, subject, body, and the files it changed against its parent with git's status letters A, M, D, T (renames show as D plus A; merges list no files, as git log). Up to limit commits (default %d, at most %d); next_cursor continues. "+
				"view \"show\": one commit (rev) like git show --no-renames -p: its metadata, every file it changed (or those under paths) with status and added/deleted line counts as git diff --numstat counts them, and the patch, which git apply accepts against the parent (a merge is diffed against its first parent, diff_parent; a root commit against nothing; binary files are reported as such; a file that is not UTF-8 is not_utf8, counted but left out of the patch). The patch holds whole files up to max_bytes (default %d, at most %d): a file that does not fit is patch_omitted (truncated): show it alone with paths or raise max_bytes; a file over 8 MiB or 262,144 lines is too_large. "+
				"view \"blame\": for max_lines lines (default and at most %d) from start_line of path at rev, like git blame --porcelain: runs of consecutive lines, each with the commit that introduced them and their line number there (orig_line; orig_path when git followed a rename), plus each commit's author, date and subject once. Without -M/-C: moved or copied lines are blamed on the commit that moved them. "+
				"Every walk stops after %d commits or %s (truncated_reason commit_cap or timeout: narrow with paths, since or until). "+
				"Hidden and credential paths are refused as paths and never named: a commit counts them in hidden_files. A shallow clone's oldest commits are marked shallow (their parents are absent, git shows them as roots). "+
				"For uncommitted changes use inspect_repo.", git.DefaultLogCommits, git.MaxLogCommits, git.DefaultDiffBytes, git.MaxDiffBytes, git.MaxBlameLines, git.MaxWalkCommits, lim.SearchTimeout),
			Annotations: readOnly("Read repository history"),
			InputSchema: schema,
		},
		register: register("read_repo_history", readRepoHistory),
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
