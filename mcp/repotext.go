package mcp

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/serverfs/serverfs/git"
	"github.com/serverfs/serverfs/internal/unidiff"
)

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
	var none []string
	var omitted []string
	answered := map[string]bool{}
	for _, f := range d.Files {
		answered[f.Path] = true
		switch {
		case f.PatchOmitted:
			omitted = append(omitted, f.Path)
		case f.NotUTF8:
			none = append(none, unidiff.QuotePath(f.Path)+" (not_utf8)")
		case f.Change == "unchanged" && changes:
		case f.Change == "untracked", f.Change == "unchanged", f.Change == "unmerged", f.Change == "too_large", f.Change == "special_file":
			none = append(none, unidiff.QuotePath(f.Path)+" ("+f.Change+")")
		}
	}
	if len(none) > 0 {
		b.WriteString("no patch: " + strings.Join(none, ", ") + "\n")
	}
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
