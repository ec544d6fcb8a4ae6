package mcp

import (
	"context"
	"strconv"
	"strings"

	"github.com/serverfs/serverfs/git"
	"github.com/serverfs/serverfs/internal/unidiff"
)

// inspect_repo on a workspace (ALIAS@ID) reviews it before submit: its
// change against the commit it was created from, the change
// submit_workspace would merge, made the way submit makes it (the
// workspace's files become a commit on its base in the repository's
// object store; no ref moves). A workspace has no .git and no index: its
// status is the files changed, its diff and changes the patch.

// workspaceReview is a workspace's change against its base.
type workspaceReview struct {
	Workspace string `json:"workspace"`
	Base      string `json:"base"`
	// Files are the files changed, with git's status letter and counts;
	// Patch their unified diff (views diff and changes).
	Files           []git.ShowFile `json:"files,omitempty"`
	HiddenFiles     int            `json:"hidden_files,omitempty"`
	Patch           string         `json:"patch,omitempty"`
	Truncated       bool           `json:"truncated,omitempty"`
	TruncatedReason string         `json:"truncated_reason,omitempty"`
}

// reviewWorkspace fills out with the workspace's change, or reports
// false when the workdir is not a workspace.
func reviewWorkspace(ctx context.Context, d *Deps, in inspectRepoIn, out *inspectRepoOut) (bool, error) {
	w, err := d.FS.Workdir(in.Workdir)
	if err != nil || w.Workspace() == nil || d.Workspaces == nil {
		return false, nil
	}
	switch in.View {
	case "status", "diff", "changes":
	default:
		return true, argErr("a workspace has no index: view status, diff or changes shows its change against its base")
	}
	ws, wd, err := d.Workspaces.Get(in.Workdir)
	if err != nil {
		return true, err
	}
	r, err := git.Open(d.FS, ws.Parent)
	if err != nil {
		return true, err
	}
	// As submit does: no write is half done while the files are read.
	release, err := d.FS.Lease().Acquire(ctx, ws.Alias)
	if err != nil {
		return true, err
	}
	p, err := r.ReviewWorkspace(ctx, wd, ws.Base)
	release()
	if err != nil {
		return true, err
	}
	rv := &workspaceReview{Workspace: ws.Alias, Base: ws.Base}
	out.Review = rv
	if p.Empty {
		return true, nil
	}
	sr, err := r.Show(ctx, p.Head, in.Paths, in.MaxBytes)
	if err != nil {
		return true, err
	}
	rv.Files, rv.HiddenFiles, rv.Truncated, rv.TruncatedReason = sr.Files, sr.HiddenFiles, sr.Truncated, sr.TruncatedReason
	if in.View != "status" {
		rv.Patch = sr.Patch
	}
	return true, nil
}

// appendReview writes a workspace review: a first line naming the
// workspace and its base, a `X path` line per file changed, then the
// patch.
func appendReview(b *strings.Builder, rv *workspaceReview) {
	b.WriteString("## workspace " + rv.Workspace + " against its base " + shortID(rv.Base) + "\n")
	if len(rv.Files) == 0 && rv.HiddenFiles == 0 {
		b.WriteString("nothing changed\n")
		return
	}
	for _, f := range rv.Files {
		b.WriteString(f.Status + " " + unidiff.QuotePath(f.Path) + "\n")
	}
	if rv.HiddenFiles > 0 {
		b.WriteString("and " + strconv.Itoa(rv.HiddenFiles) + " hidden files changed\n")
	}
	if rv.Patch != "" {
		b.WriteByte('\n')
		b.WriteString(rv.Patch)
	}
	if rv.Truncated {
		writeTruncated(b, rv.TruncatedReason+"; narrow it with paths", "")
	}
}
