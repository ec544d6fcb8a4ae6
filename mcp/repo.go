package mcp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/bridge/wire"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git"
)

// The repository tools (issue 7), served only when some workdir enables
// repo ops; commit_repo_changes only when one of those is also rw.

type inspectRepoIn struct {
	Workdir  string   `json:"workdir" jsonschema:"alias of a workdir with repo_ops true in list_workdirs"`
	View     string   `json:"view"` // described by repoTools: the views depend on the bridge
	Paths    []string `json:"paths,omitempty" jsonschema:"for diff and staged_diff: the files to diff (required, explicit paths only); for changes: only these files or directories (optional)"`
	Limit    int      `json:"limit,omitempty" jsonschema:"status: maximum entries to return"`
	MaxBytes int      `json:"max_bytes,omitempty" jsonschema:"diff: maximum bytes of patch to return"`
}

type inspectRepoOut struct {
	Workdir string          `json:"workdir"`
	View    string          `json:"view"`
	Status  *git.Status     `json:"status,omitempty"`
	Diff    *git.DiffResult `json:"diff,omitempty"`
	// Actions are the operator's named actions: view actions only (an
	// empty list there, absent from every other view).
	Actions []wire.ActionInfo `json:"actions,omitzero"`
	// limit, maxBytes and asked (the paths diffed) are what the text
	// says of truncation.
	limit, maxBytes int
	asked           []string
}

type commitRepoChangesIn struct {
	Workdir string   `json:"workdir" jsonschema:"alias of a read-write workdir with repo_ops true in list_workdirs"`
	Paths   []string `json:"paths" jsonschema:"the files to commit (added, modified or deleted), relative to the workdir root; nothing else is committed"`
	Message string   `json:"message" jsonschema:"the commit message: a subject line, optionally a blank line and a body"`
}

// maxStatusEntries bounds inspect_repo's status entries.
const maxStatusEntries = 10_000

// defaultStatusEntries is inspect_repo's default status limit.
const defaultStatusEntries = 500

// repoTools are inspect_repo and, when s.commit, commit_repo_changes; the
// actions view only when s.actions (a bridge runs them).
func repoTools(lim sfs.Limits, s surface) []tool {
	schema := inputSchema[inspectRepoIn](map[string]bound{
		"limit":     {1, maxStatusEntries, defaultStatusEntries},
		"max_bytes": {1024, git.MaxDiffBytes, git.DefaultDiffBytes},
	})
	views := []any{"status", "diff", "staged_diff", "changes"}
	viewDesc := "status, diff (work tree against the index), staged_diff (index against HEAD) or changes (status and the whole patch against HEAD, untracked files' content included)"
	actionsText := ""
	if s.actions {
		views = append(views, "actions")
		viewDesc = "status, diff (work tree against the index), staged_diff (index against HEAD), changes (status and the whole patch against HEAD, untracked files' content included) or actions"
		actionsText = "view \"actions\": the administrator's named actions that run_repo_action runs. "
	}
	schema.Properties["view"].Enum = views
	schema.Properties["view"].Description = viewDesc
	schema.Properties["paths"].MaxItems = ptr(git.MaxDiffPaths)
	tools := []tool{{
		def: &sdk.Tool{
			Name: "inspect_repo",
			Description: fmt.Sprintf("Inspect the git repository at the root of a workdir (repo_ops true in list_workdirs); it never changes anything. "+
				"view \"status\": branch (empty when HEAD is detached), HEAD commit, upstream with ahead/behind, and every changed path with staged (index vs HEAD) and unstaged (work tree vs index) codes as in git status --porcelain=v2: . unchanged, A added, M modified, D deleted, T type changed, U/A/D pairs unmerged, ? untracked (an untracked nested repository is one entry ending in /); a submodule is M when its checkout is at another commit (changes inside its own work tree are not looked for); renames show as D plus A; sorted by path; up to limit entries (default %d, at most %d); when truncated, raise limit. "+
				"view \"diff\" / \"staged_diff\": a unified patch (git apply accepts it) of the explicit paths given (1 to %d; there is no whole-repository diff), work tree against the index or index against HEAD; binary files are reported as such; a file that is not UTF-8 is not_utf8 and left out of the patch (JSON cannot carry its bytes); a file over 8 MiB or 262,144 lines is too_large (never read). The patch stops at max_bytes (default %d, at most %d): when truncated, diff fewer paths or raise max_bytes. One call reads at most 64 MiB of content and stops at its time limit: the paths compared until then are answered, truncated_reason read_limit or timeout; diff the rest in another call. "+
				"%sIt cannot show history, other commits or branches: read_repo_history does; read_text_file reads whole work-tree files. Hidden and credential paths never appear. Takes at most %s.", defaultStatusEntries, maxStatusEntries, git.MaxDiffPaths, git.DefaultDiffBytes, git.MaxDiffBytes, actionsText, lim.SearchTimeout),
			Annotations: readOnly("Inspect repository"),
			InputSchema: schema,
		},
		register: register("inspect_repo", inspectRepo),
	}, historyTool(lim)}
	if s.commit {
		cs := inputSchema[commitRepoChangesIn](nil)
		cs.Properties["paths"].MinItems, cs.Properties["paths"].MaxItems = ptr(1), ptr(git.MaxCommitPaths)
		tools = append(tools, tool{
			def: &sdk.Tool{
				Name: "commit_repo_changes",
				Description: fmt.Sprintf("Commit exactly the named files (up to %d; additions, modifications and deletions as they are in the work tree) to the current branch of the repository at the root of a read-write workdir with repo_ops, like git add -- paths && git commit -m message. "+
					"A file that became a directory is committed by naming the files in it (the file is deleted, as git does); a directory that became a file by naming the file (the entries beneath it are deleted). "+
					"Refused, changing nothing: changes already staged on paths not named (REPO_STAGED_CHANGES: the visible ones are listed, hidden ones only counted; staged changes on named paths are staged again from the work tree), a directory named where git would add all of it (name its files), a path inside a submodule, a merge or rebase in progress or unmerged paths (REPO_OPERATION_IN_PROGRESS), another git process holding the index (REPO_LOCKED), files whose git attributes would convert them (filters such as Git LFS, line-ending normalisation of CRLF content: REPO_UNSUPPORTED), ignored or hidden paths, names git refuses (GIT_PATH_REJECTED with git's rule: .git in a spelling Windows or macOS reads as it, such as a\\.git\\config or GIT~1, a symlinked .gitmodules, or a .gitmodules or .gitattributes git fsck rejects), a file over 100 MiB or more than 1 GiB in all (WRITE_LIMIT_EXCEEDED, from their sizes: nothing read), and a commit that would change nothing (NOTHING_TO_COMMIT). "+
					"The author is the repository's configured identity (REPO_IDENTITY_MISSING if none). No hook runs, nothing is signed, nothing is pushed. Returns the commit id and the paths added, modified and deleted (hidden_deleted counts deleted paths the policy hides).", git.MaxCommitPaths),
				Annotations: &sdk.ToolAnnotations{Title: "Commit repository changes", ReadOnlyHint: false, IdempotentHint: false, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
				InputSchema: cs,
			},
			register: register("commit_repo_changes", commitRepoChanges),
		})
	}
	return tools
}

// repoOpsWorkdir returns the workdir when the operator enabled the
// repository tools on it (REPO_OPS_DISABLED otherwise): the one check
// every repository and bridge tool makes first.
func repoOpsWorkdir(d *Deps, alias string) (*sfs.Workdir, error) {
	w, err := d.FS.Workdir(alias)
	if err != nil {
		return nil, err
	}
	if !w.RepoOps() {
		return nil, &sfs.Error{Code: sfs.CodeRepoOpsDisabled, Workdir: w.Alias(), Msg: "has no repository tools: the administrator did not enable repo ops on it"}
	}
	return w, nil
}

// openRepo opens the workdir's repository when repo ops are enabled on it.
func openRepo(d *Deps, alias string) (*git.Repo, error) {
	if _, err := repoOpsWorkdir(d, alias); err != nil {
		return nil, err
	}
	return git.Open(d.FS, alias)
}

func inspectRepo(ctx context.Context, d *Deps, in inspectRepoIn) (*inspectRepoOut, callInfo, error) {
	info := callInfo{workdir: in.Workdir}
	out := &inspectRepoOut{Workdir: in.Workdir, View: in.View}
	if in.View == "actions" {
		// Named actions need no repository, only the operator's consent.
		if _, err := repoOpsWorkdir(d, in.Workdir); err != nil {
			return nil, info, err
		}
		acts, err := actionsOf(ctx, d, in.Workdir)
		out.Actions = acts
		return out, info, err
	}
	r, err := openRepo(d, in.Workdir)
	if err != nil {
		return nil, info, err
	}
	switch in.View {
	case "status":
		if len(in.Paths) > 0 {
			return nil, info, argErr("paths is for the diff views; status covers the whole repository")
		}
		out.Status, err = r.Status(ctx, in.Limit)
	case "diff", "staged_diff":
		out.Diff, err = r.Diff(ctx, in.View == "staged_diff", in.Paths, in.MaxBytes)
		out.asked = in.Paths
	case "changes":
		err = changes(ctx, d, r, in, out)
	default:
		return nil, info, argErr("view must be status, diff, staged_diff, changes or actions")
	}
	out.limit, out.maxBytes = in.Limit, in.MaxBytes
	if err != nil {
		return nil, info, err
	}
	return out, info, nil
}

func commitRepoChanges(ctx context.Context, d *Deps, in commitRepoChangesIn) (*git.CommitResult, callInfo, error) {
	info := callInfo{workdir: in.Workdir}
	r, err := openRepo(d, in.Workdir)
	if err != nil {
		return nil, info, err
	}
	res, err := r.Commit(ctx, in.Paths, in.Message)
	return res, info, err
}

// changes is view changes: the status (only of paths, when given) and
// the patch of every path in it against HEAD, an untracked file as a new
// file, in one answer bounded by limit and max_bytes.
func changes(ctx context.Context, d *Deps, r *git.Repo, in inspectRepoIn, out *inspectRepoOut) error {
	w, err := d.FS.Workdir(in.Workdir)
	if err != nil {
		return err
	}
	var only []string
	for _, raw := range in.Paths {
		p, err := w.CleanPath(raw)
		if err != nil {
			return err
		}
		only = append(only, p)
	}
	st, err := r.Status(ctx, in.Limit)
	if err != nil {
		return err
	}
	if len(only) > 0 {
		kept := st.Entries[:0:0]
		for _, e := range st.Entries {
			for _, p := range only {
				if p == "" || e.Path == p || strings.HasPrefix(e.Path, p+"/") {
					kept = append(kept, e)
					break
				}
			}
		}
		st.Entries = kept
	}
	out.Status = st
	var paths []string
	for _, e := range st.Entries {
		// An untracked nested repository is named, never read (as git).
		if !strings.HasSuffix(e.Path, "/") {
			paths = append(paths, e.Path)
		}
	}
	out.asked = paths
	if len(paths) == 0 {
		return nil
	}
	out.Diff, err = r.DiffHead(ctx, paths, in.MaxBytes)
	return err
}
