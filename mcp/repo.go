package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/bridge/wire"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git"
	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/internal/unidiff"
)

// The repository tools, served only when some workdir enables
// repo ops; commit_repo_changes only when one of those is also rw.

type inspectRepoIn struct {
	Workdir  string   `json:"workdir"`
	View     string   `json:"view"` // described by repoTools: the views depend on the bridge
	Paths    []string `json:"paths,omitempty" jsonschema:"diffs: the files (required); changes: narrow to these"`
	Limit    int      `json:"limit,omitempty" jsonschema:"status entries"`
	MaxBytes int      `json:"max_bytes,omitempty"`
}

type inspectRepoOut struct {
	Workdir string          `json:"workdir"`
	View    string          `json:"view"`
	Status  *git.Status     `json:"status,omitempty"`
	Diff    *git.DiffResult `json:"diff,omitempty"`
	// Review is a workspace's change against its base (review.go).
	Review *workspaceReview `json:"review,omitempty"`
	// Actions are the operator's named actions: view actions only (an
	// empty list there, absent from every other view).
	Actions []wire.ActionInfo `json:"actions,omitzero"`
	// limit, maxBytes and asked (the paths diffed) are what the text
	// says of truncation.
	limit, maxBytes int
	asked           []string
}

type commitRepoChangesIn struct {
	Workdir string   `json:"workdir"`
	Paths   []string `json:"paths"`
	Message string   `json:"message" jsonschema:"subject, optionally a blank line and body"`
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
	actionsText := ""
	if s.actions {
		views = append(views, "actions")
		actionsText = "view \"actions\": the named actions run_repo_action runs. "
	}
	schema.Properties["view"].Enum = views
	schema.Properties["paths"].MaxItems = ptr(git.MaxDiffPaths)
	tools := []tool{{
		def: &sdk.Tool{
			Name: "inspect_repo",
			Description: fmt.Sprintf("Uncommitted work in a workdir's git repository. view \"status\": a branch line, then `XY path` lines as git status --short. "+
				"\"diff\" (work tree vs index) or \"staged_diff\" (index vs HEAD) of paths: unified diff as git diff writes it. "+
				"\"changes\": all uncommitted work in one call: status, then the patch against HEAD, untracked files' contents included. "+
				"Cut short: a last line `truncated: <reason>; <next step>`. "+
				"%sHistory, other commits and branches: read_repo_history.", actionsText),
			Annotations: readOnly("Inspect repository"),
			InputSchema: schema,
		},
		cost:     heavyIf(func(_ *Deps, in inspectRepoIn) bool { return in.View != "actions" }),
		register: register(inspectRepo),
	}, historyTool(lim)}
	if s.commit {
		cs := inputSchema[commitRepoChangesIn](nil)
		cs.Properties["paths"].MinItems, cs.Properties["paths"].MaxItems = ptr(1), ptr(git.MaxCommitPaths)
		tools = append(tools, tool{
			def: &sdk.Tool{
				Name: "commit_repo_changes",
				Description: fmt.Sprintf("Commit exactly the named files as they are in the work tree (deletions too) to the current branch. " +
					"Refused, changing nothing: other staged changes (REPO_STAGED_CHANGES), a merge in progress, ignored, hidden or filtered (LFS) paths, over 100 MiB, nothing to commit. " +
					"The repository's identity is the author; no hook, no signing, no push."),
				Annotations: &sdk.ToolAnnotations{Title: "Commit changes", ReadOnlyHint: false, IdempotentHint: false, DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
				InputSchema: cs,
			},
			cost:     heavy,
			register: register(commitRepoChanges),
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
	if !w.RepoOps() && w.Workspace() != nil {
		parent, _, _ := sfs.SplitWorkspaceAlias(w.Alias())
		return nil, errs.At(errs.RepoOpsDisabled, w.Alias(), "", "is a workspace (a checkout without .git): inspect_repo shows its change against its base, submit_workspace merges it; the repository tools work on "+parent)
	}
	if !w.RepoOps() {
		return nil, errs.At(errs.RepoOpsDisabled, w.Alias(), "", "has no repository tools: the administrator did not enable repo ops on it")
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
	if ok, err := reviewWorkspace(ctx, d, in, out); ok {
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

func commitRepoChanges(ctx context.Context, d *Deps, in commitRepoChangesIn) (*commitOut, callInfo, error) {
	info := callInfo{workdir: in.Workdir}
	r, err := openRepo(d, in.Workdir)
	if err != nil {
		return nil, info, err
	}
	res, err := r.Commit(ctx, in.Paths, in.Message)
	if err != nil {
		return nil, info, err
	}
	subject, _, _ := strings.Cut(in.Message, "\n")
	return &commitOut{res, subject}, info, nil
}

// commitOut is a commit's answer: git.CommitResult's JSON; as text, what
// git commit prints: the branch, the short id and the subject, then a
// line per path changed.
type commitOut struct {
	*git.CommitResult
	subject string
}

// Text is "[branch shortid] subject", then "  A path", "  M path",
// "  D path" lines.
func (o *commitOut) Text() string {
	r := o.CommitResult
	var b strings.Builder
	b.WriteByte('[')
	if r.Branch != "" {
		b.WriteString(r.Branch)
	} else {
		b.WriteString("detached HEAD")
	}
	b.WriteByte(' ')
	b.WriteString(r.Commit[:min(len(r.Commit), 10)])
	b.WriteString("] ")
	b.WriteString(o.subject)
	b.WriteByte('\n')
	for _, l := range []struct {
		status string
		paths  []string
	}{{"A", r.Added}, {"M", r.Modified}, {"D", r.Deleted}} {
		for _, p := range l.paths {
			b.WriteString("  " + l.status + " " + unidiff.QuotePath(p) + "\n")
		}
	}
	if r.HiddenDeleted > 0 {
		b.WriteString("  and " + strconv.Itoa(r.HiddenDeleted) + " hidden paths deleted\n")
	}
	return b.String()
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

// inspect_repo's text content: status as git status --short --branch
// writes it, patches as git diff writes them, and what was cut as a last
// "truncated:" line saying how to continue.

// shortID is the abbreviation of commit ids in text answers: long enough
// to stay unique in large repositories, and a prefix read_repo_history
// takes as rev.
func shortID(id string) string { return id[:min(len(id), 10)] }

// appendStatus writes the branch line and one "XY path" line per entry.
func appendStatus(b *strings.Builder, st *git.Status, limit int) {
	b.WriteString("## ")
	switch {
	case st.Branch == "":
		b.WriteString("HEAD (no branch)")
	case st.Head == "":
		b.WriteString("No commits yet on " + st.Branch)
	default:
		b.WriteString(st.Branch)
	}
	if st.Upstream != "" {
		b.WriteString("..." + st.Upstream)
		var ab []string
		if st.Ahead != nil && *st.Ahead > 0 {
			ab = append(ab, "ahead "+strconv.Itoa(*st.Ahead))
		}
		if st.Behind != nil && *st.Behind > 0 {
			ab = append(ab, "behind "+strconv.Itoa(*st.Behind))
		}
		if len(ab) > 0 {
			b.WriteString(" [" + strings.Join(ab, ", ") + "]")
		}
	}
	if st.Head != "" {
		b.WriteString(" at " + shortID(st.Head))
	}
	b.WriteByte('\n')
	// As git status --short: tracked paths first, then untracked ones.
	for _, untracked := range []bool{false, true} {
		for _, e := range st.Entries {
			if (e.Staged == "?") == untracked {
				b.WriteString(statusLetter(e.Staged) + statusLetter(e.Unstaged) + " " + unidiff.QuotePath(e.Path) + "\n")
			}
		}
	}
	if len(st.Entries) == 0 {
		b.WriteString("nothing changed\n")
	}
	if st.Truncated {
		fmt.Fprintf(b, "truncated: limit; more than %d paths changed: raise limit (at most %d)\n", limit, maxStatusEntries)
	}
}

// statusLetter is a porcelain v2 code as git status --short writes it.
func statusLetter(c string) string {
	if c == "." || c == "" {
		return " "
	}
	return c
}

// appendDiff writes the patch, then one line naming the files that have
// no section in it (and why), then what was cut. rest are the paths the
// diff was asked for; changes says the patch is view changes'.
func appendDiff(b *strings.Builder, d *git.DiffResult, rest []string, maxBytes int, changes bool) {
	b.WriteString(d.Patch)
	var none, latin []string
	var omitted []string
	answered := map[string]bool{}
	for _, f := range d.Files {
		answered[f.Path] = true
		switch {
		case f.PatchOmitted:
			omitted = append(omitted, f.Path)
		case f.NotUTF8:
			latin = append(latin, unidiff.QuotePath(f.Path))
		case f.Change == "unchanged" && changes:
		case f.Change == "untracked", f.Change == "unchanged", f.Change == "unmerged", f.Change == "too_large", f.Change == "special_file":
			none = append(none, unidiff.QuotePath(f.Path)+" ("+f.Change+")")
		}
	}
	if len(none) > 0 {
		b.WriteString("no patch: " + strings.Join(none, ", ") + "\n")
	}
	writeLatin1(b, latin)
	if !d.Truncated {
		return
	}
	var left []string
	for _, p := range rest {
		if !answered[p] {
			left = append(left, p)
		}
	}
	left = append(omitted, left...)
	again := "diff them in another call"
	if changes {
		again = "call view changes again with paths set to them"
	}
	switch d.TruncatedReason {
	case git.DiffCutMaxBytes:
		fmt.Fprintf(b, "truncated: max_bytes %d; %s left out of the patch: %s; %s, or raise max_bytes (at most %d)\n", maxBytes, files(len(left)), nameList(left), again, git.MaxDiffBytes)
	case git.DiffCutReadLimit:
		fmt.Fprintf(b, "truncated: read_limit (64 MiB of content read); %s not compared: %s; %s\n", files(len(left)), nameList(left), again)
	default:
		fmt.Fprintf(b, "truncated: %s; %s not compared: %s; %s\n", d.TruncatedReason, files(len(left)), nameList(left), again)
	}
}

func files(n int) string {
	if n == 1 {
		return "1 file"
	}
	return strconv.Itoa(n) + " files"
}

// nameList names up to 20 paths.
func nameList(paths []string) string {
	const most = 20
	q := make([]string, 0, min(len(paths), most))
	for _, p := range paths[:min(len(paths), most)] {
		q = append(q, unidiff.QuotePath(p))
	}
	s := strings.Join(q, " ")
	if len(paths) > most {
		s += fmt.Sprintf(" … %d more", len(paths)-most)
	}
	return s
}

// Text is inspect_repo's text content.
func (o *inspectRepoOut) Text() string {
	var b strings.Builder
	switch {
	case o.View == "actions":
		j, _ := json.Marshal(o)
		return string(j)
	case o.Review != nil:
		appendReview(&b, o.Review)
	case o.Status != nil && o.Diff != nil:
		appendStatus(&b, o.Status, o.limit)
		appendDiff(&b, o.Diff, o.asked, o.maxBytes, true)
	case o.Status != nil:
		appendStatus(&b, o.Status, o.limit)
	case o.Diff != nil:
		appendDiff(&b, o.Diff, o.asked, o.maxBytes, false)
	default:
		b.WriteString("nothing changed\n")
	}
	return b.String()
}

// writeLatin1 names the files whose patch sections are in Latin-1 (text
// that is not UTF-8: each character one byte, U+0000-U+00FF), so that
// the reader knows to encode them back before applying.
func writeLatin1(b *strings.Builder, paths []string) {
	if len(paths) > 0 {
		b.WriteString("latin1 (not UTF-8; each character of the section is one byte): " + strings.Join(paths, ", ") + "\n")
	}
}
