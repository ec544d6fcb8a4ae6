package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git"
	"github.com/serverfs/serverfs/internal/unidiff"
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

// read_repo_history's text content: a log is one line per commit (with
// its files only when asked), show is git show's header and the patch,
// blame one line per source line.

// Text is read_repo_history's text content.
func (o *readRepoHistoryOut) Text() string {
	var b strings.Builder
	switch {
	case o.Log != nil:
		appendLog(&b, o.Log)
	case o.Show != nil:
		appendShow(&b, o.Show, o.maxBytes)
	case o.Blame != nil:
		appendBlame(&b, o.Workdir, o.Blame)
	}
	return b.String()
}

// commitLine is "<short id> <YYYY-MM-DD> <author> <subject>".
func commitLine(id string, author git.Person, subject string) string {
	return shortID(id) + " " + author.Date[:min(len(author.Date), 10)] + " " + oneLine(author.Name) + " " + oneLine(subject)
}

// oneLine keeps a name or subject on its line.
func oneLine(s string) string {
	if strings.ContainsAny(s, "\r\n") {
		return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	}
	return s
}

func appendLog(b *strings.Builder, l *git.LogResult) {
	if len(l.Commits) == 0 {
		b.WriteString("no commits\n")
	}
	for i := range l.Commits {
		c := &l.Commits[i]
		b.WriteString(commitLine(c.ID, c.Author, c.Subject))
		if c.Shallow {
			b.WriteString(" (shallow: parents absent)")
		}
		b.WriteByte('\n')
		for _, f := range c.Files {
			b.WriteString("  " + f.Status + " " + unidiff.QuotePath(f.Path) + "\n")
		}
		if c.MoreFiles > 0 {
			fmt.Fprintf(b, "  … %d more files (a log lists %d per commit; view show with rev %s lists them all)\n", c.MoreFiles, git.MaxLogFiles, shortID(c.ID))
		}
		if c.HiddenFiles > 0 {
			fmt.Fprintf(b, "  (%d hidden files, not named)\n", c.HiddenFiles)
		}
	}
	switch {
	case l.NextCursor != "":
		b.WriteString("next_cursor " + l.NextCursor + "\n")
	case l.Truncated:
		fmt.Fprintf(b, "truncated: %s; narrow with paths, since or until\n", l.TruncatedReason)
	}
}

func appendShow(b *strings.Builder, s *git.ShowResult, maxBytes int) {
	c := &s.Commit
	b.WriteString("commit " + c.ID + "\n")
	if len(c.Parents) > 1 {
		short := make([]string, len(c.Parents))
		for i, p := range c.Parents {
			short[i] = shortID(p)
		}
		b.WriteString("Merge: " + strings.Join(short, " ") + "\n")
	}
	b.WriteString("Author: " + oneLine(c.Author.Name) + " <" + oneLine(c.Author.Email) + "> " + c.Author.Date + "\n")
	if c.Committer != nil {
		b.WriteString("Commit: " + oneLine(c.Committer.Name) + " <" + oneLine(c.Committer.Email) + "> " + c.Committer.Date + "\n")
	}
	if c.Shallow {
		b.WriteString("Shallow: its parents are not in the repository\n")
	}
	b.WriteString("\n    " + oneLine(c.Subject) + "\n")
	if c.Body != "" {
		b.WriteByte('\n')
		for _, line := range strings.Split(strings.TrimRight(c.Body, "\n"), "\n") {
			if line == "" {
				b.WriteByte('\n')
			} else {
				b.WriteString("    " + line + "\n")
			}
		}
		if c.BodyTruncated {
			b.WriteString("    [message cut]\n")
		}
	}
	if s.DiffParent != "" {
		b.WriteString("\ndiff against the first parent " + shortID(s.DiffParent) + "\n")
	}
	b.WriteByte('\n')
	b.WriteString(s.Patch)
	var none, omitted, latin []string
	for _, f := range s.Files {
		switch {
		case f.PatchOmitted:
			omitted = append(omitted, f.Path)
		case f.TooLarge:
			none = append(none, unidiff.QuotePath(f.Path)+" (too_large)")
		case f.NotUTF8:
			latin = append(latin, unidiff.QuotePath(f.Path))
		}
	}
	if len(none) > 0 {
		b.WriteString("no patch: " + strings.Join(none, ", ") + "\n")
	}
	writeLatin1(b, latin)
	if s.HiddenFiles > 0 {
		fmt.Fprintf(b, "%d hidden files changed, not named\n", s.HiddenFiles)
	}
	if !s.Truncated {
		return
	}
	switch s.TruncatedReason {
	case git.DiffCutMaxBytes:
		if maxBytes <= 0 {
			maxBytes = git.DefaultDiffBytes
		}
		fmt.Fprintf(b, "truncated: max_bytes %d; %s left out of the patch: %s; show them with paths set to them, or raise max_bytes (at most %d)\n", maxBytes, files(len(omitted)), nameList(omitted), git.MaxDiffBytes)
	case "files":
		b.WriteString("truncated: files; the commit changed more files than one show lists: narrow with paths\n")
	default:
		fmt.Fprintf(b, "truncated: %s; %s left out of the patch: %s; show them with paths set to them\n", s.TruncatedReason, files(len(omitted)), nameList(omitted))
	}
}

func appendBlame(b *strings.Builder, workdir string, r *git.BlameResult) {
	fmt.Fprintf(b, "blame %s:%s at %s lines %d-%d of %d\n", workdir, unidiff.QuotePath(r.Path), shortID(r.Commit), r.StartLine, r.EndLine, r.TotalLines)
	lines := strings.SplitAfter(r.Text, "\n")
	pad := strings.Repeat(" ", len(shortID(r.Commit))+1)
	unfinished := false
	for _, run := range r.Runs {
		for i := range run.Lines {
			n := run.StartLine + i
			text := ""
			if k := n - r.StartLine; k >= 0 && k < len(lines) {
				text = strings.TrimSuffix(lines[k], "\n")
			}
			if i == 0 {
				b.WriteString(shortID(run.Commit))
				if run.Unfinished {
					b.WriteByte('*')
					unfinished = true
				}
				b.WriteByte(' ')
			} else {
				b.WriteString(pad)
				if run.Unfinished {
					b.WriteByte(' ')
				}
			}
			b.WriteString(strconv.Itoa(n) + ": " + text + "\n")
		}
	}
	ids := make([]string, 0, len(r.Commits))
	seen := map[string]bool{}
	for _, run := range r.Runs {
		if !seen[run.Commit] {
			seen[run.Commit] = true
			ids = append(ids, run.Commit)
		}
	}
	if len(ids) > 0 {
		b.WriteString("commits:\n")
	}
	for _, id := range ids {
		c := r.Commits[id]
		b.WriteString(commitLine(id, c.Author, c.Subject))
		if c.Boundary {
			b.WriteString(" (boundary: the lines may be older)")
		}
		b.WriteByte('\n')
	}
	if r.Truncated {
		fmt.Fprintf(b, "truncated: %s; lines marked * stopped at that commit before reaching the one that introduced them\n", r.TruncatedReason)
	}
	if unfinished && !r.Truncated {
		b.WriteString("lines marked * are unfinished\n")
	}
}
