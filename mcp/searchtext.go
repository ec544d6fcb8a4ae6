package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/search"
)

// search_text's answer is compact (issue 17), as list_directory's and
// find_files' are: it paid about 217 bytes per matching line on net/http
// (each match's workdir-relative path, "path", "line" and "text" keys, as
// JSON twice). Results are grouped by file, the file's path relative to
// the searched path given once: a matching line is a [line, text] pair, a
// block of context lines its first line number, its texts and the numbers
// of its matching lines, a file of the files and count modes its count.
// The few flags (a cut text, a compressed file) are lists of their own.
// The text content is not the JSON again but lines as rg prints them with
// --heading: a file's path, then "line:text" for a match ("line-text" for
// context, "--" between blocks), a blank line between files, each path
// workdir-relative (as every tool takes them); docs/search.md
// says why.

type searchTextIn struct {
	Workdir        string `json:"workdir"`
	Path           string `json:"path,omitempty"`
	Query          string `json:"query" jsonschema:"one line, literal unless regex"`
	Regex          bool   `json:"regex,omitempty"`
	Glob           string `json:"glob,omitempty" jsonschema:"*.py, src/**/*.ts"`
	CaseSensitive  bool   `json:"case_sensitive,omitempty"`
	Limit          int    `json:"limit,omitempty" jsonschema:"lines (files for files, count)"`
	IncludeIgnored bool   `json:"include_ignored,omitempty"`
	Archives       bool   `json:"archives,omitempty"`
	Documents      bool   `json:"documents,omitempty"`
	Output         string `json:"output,omitempty"`
	Context        int    `json:"context,omitempty"`
	Before         int    `json:"before,omitempty"`
	After          int    `json:"after,omitempty"`
	Definition     bool   `json:"definition,omitempty" jsonschema:"context: each hit's enclosing definition, whole"`
	Cursor         string `json:"cursor,omitempty"`
}

// searchTextTool is search_text; in rw workdirs (s.write) a file's
// heading gives its revision too.
func searchTextTool(lim sfs.Limits, s surface) tool {
	schema := inputSchema[searchTextIn](map[string]bound{"limit": {1, lim.MaxSearchResults, lim.DefaultSearchResults},
		"context": {0, search.MaxContext, 0}, "before": {0, search.MaxContext, 0}, "after": {0, search.MaxContext, 0}})
	schema.Properties["output"].Enum = []any{search.OutputLines, search.OutputFiles, search.OutputCount, outputReferences}
	schema.Properties["output"].Default = json.RawMessage(`"lines"`)
	schema.Properties["case_sensitive"].Default = json.RawMessage("true")
	schema.Properties["include_ignored"].Default = json.RawMessage("false")
	schema.Properties["regex"].Default = json.RawMessage("false")
	schema.Properties["archives"].Default = json.RawMessage("false")
	schema.Properties["documents"].Default = json.RawMessage("false")
	schema.Properties["definition"].Default = json.RawMessage("false")
	revision := ""
	if s.write {
		revision = " and, in rw workdirs, its revision for edit_text_file"
	}
	return tool{
		def: &sdk.Tool{
			Name: "search_text",
			Description: fmt.Sprintf("Search contents for literal text (grep -F) or, with regex, RE2. "+
				"Per file a heading, its path%s, then `N:text` match lines; context adds `N-text` lines, `--` between blocks; lines over %d bytes end ` […]`. "+
				"output files: paths; count: `path:N` and `total: N` (complete or not); references: an identifier's uses in code and its `definitions:`. "+
				"`truncated: limit` (narrow path or glob), `timeout` (%s) or `walk_limit` (%d entries), then `next_cursor C`: pass C as cursor. "+
				"Skips binary files, files over %s and .gitignored ones (include_ignored). Searches .gz and .zst; with archives zip/tar members, with documents PDF/office text.", revision, search.MaxLineText, lim.SearchTimeout, lim.MaxWalkEntries, sizeText(lim.SearchMaxFileBytes)),
			Annotations: readOnly("Search text"),
			InputSchema: schema,
		},
		cost:     heavy,
		register: register(searchText),
	}
}

// searchTextOut is search_text's answer.
type searchTextOut struct {
	Workdir string `json:"workdir"`
	Path    string `json:"path,omitempty"`
	Query   string `json:"query"`
	// Definitions (output references) are where the query is defined in
	// the files searched: "path:start-end kind name".
	Definitions []string `json:"definitions,omitempty"`
	// Matches (output lines) maps each file with matches, relative to
	// path, to its matching lines as [line, text] pairs in line order.
	Matches map[string][][2]any `json:"matches,omitempty"`
	// Blocks (output lines with context) maps each file to its blocks of
	// consecutive lines.
	Blocks map[string][]searchBlock `json:"blocks,omitempty"`
	// Files (output files and count) maps each file to its matching
	// lines; in files mode 0 for a file over 256 KiB, not counted.
	Files map[string]int `json:"files,omitempty"`
	// TextTruncated maps files to the lines whose text was cut at the
	// line-text limit.
	TextTruncated map[string][]int `json:"text_truncated,omitempty"`
	// Compressed lists the .gz and .zst files among the results.
	Compressed []string `json:"compressed,omitempty"`
	// Revisions (output lines, rw workdirs) maps each file with matching
	// lines to its revision, the expected_revision edit_text_file takes.
	Revisions map[string]string `json:"revisions,omitempty"`
	// Total (count mode) is every file's matching lines, those past the
	// page included, unless TotalIncomplete says why not (timeout,
	// walk_limit, counted from the cursor on, or this page only).
	Total           int    `json:"total,omitempty"`
	TotalIncomplete string `json:"total_incomplete,omitempty"`
	// MoreFiles and MoreLines (count mode; files mode MoreFiles only)
	// aggregate the files with matches past the listed ones and their
	// matching lines.
	MoreFiles       int    `json:"more_files,omitempty"`
	MoreLines       int    `json:"more_lines,omitempty"`
	Returned        int    `json:"returned"`
	Truncated       bool   `json:"truncated,omitempty"`
	TruncatedReason string `json:"truncated_reason,omitempty"`
	NextCursor      string `json:"next_cursor,omitempty"`
	// Archives names the archives searched inside (archives true),
	// ArchivesMore counts those past the names.
	Archives     []string       `json:"archives,omitempty"`
	ArchivesMore int            `json:"archives_more,omitempty"`
	FilesScanned int            `json:"files_scanned"`
	FilesSkipped int            `json:"files_skipped,omitempty"`
	Skipped      search.Skipped `json:"skipped,omitzero"`
	Hint         string         `json:"hint,omitempty"`

	r    *search.Result    // for the text content
	revs map[string]string // Revisions by workdir-relative path
	// regex and caseSensitive are the request's, for viewMeta.
	regex, caseSensitive bool
}

// searchBlock is a run of consecutive lines of a file: the first line's
// number, the lines' texts, and the numbers of the matching ones.
type searchBlock struct {
	Line  int      `json:"line"`
	Text  []string `json:"text"`
	Match []int    `json:"match"`
}

func searchText(ctx context.Context, d *Deps, in searchTextIn) (*searchTextOut, callInfo, error) {
	info := callInfo{workdir: in.Workdir, path: in.Path}
	if in.Definition && (in.Context > 0 || in.Before > 0 || in.After > 0 || (in.Output != "" && in.Output != search.OutputLines)) {
		return nil, info, argErr("definition is the context of matching lines: it cannot be combined with context, before, after or another output")
	}
	output, refs := in.Output, in.Output == outputReferences
	if refs {
		if in.Regex || !identifierRE.MatchString(in.Query) || in.Context > 0 || in.Before > 0 || in.After > 0 || in.Definition {
			return nil, info, argErr("references takes an identifier as query (no regex), without context, before, after or definition")
		}
		output = search.OutputLines
	}
	r, err := d.Search.Search(ctx, search.Request{Workdir: in.Workdir, Path: in.Path, Query: in.Query, Regex: in.Regex, Glob: in.Glob, CaseSensitive: in.CaseSensitive || refs, Limit: in.Limit, IncludeIgnored: in.IncludeIgnored, Archives: in.Archives, Documents: in.Documents,
		Output: output, Context: in.Context, Before: in.Before, After: in.After, Cursor: in.Cursor})
	if err != nil {
		return nil, info, err
	}
	var defs []string
	if refs {
		if defs, err = withReferences(ctx, d, r, in.Query); err != nil {
			return nil, info, err
		}
	}
	if in.Definition {
		if r, err = withDefinitions(ctx, d, r, d.FS.Limits().MaxReadBytes); err != nil {
			return nil, info, err
		}
	}
	out := compactSearch(r)
	out.Definitions = defs
	out.regex, out.caseSensitive = in.Regex, in.CaseSensitive
	if err := addRevisions(ctx, d, out); err != nil {
		return nil, info, err
	}
	return out, info, nil
}

// addRevisions gives each file with matching lines of a search in a rw
// workdir its revision, as stat_file computes it, so that an edit can
// follow the search without a stat_file: once per file with results,
// none for a file only scanned. The files and count modes have none: an
// edit needs the lines, and reading them gives the revision. Compressed
// files have none either: no text edit applies to them. The revision is
// of the file when it is hashed, after the search read it: if it changed
// in between, the edit's old_text is checked against that newer content,
// which the revision names.
func addRevisions(ctx context.Context, d *Deps, out *searchTextOut) error {
	r := out.r
	if r.Matches == nil && r.Blocks == nil {
		return nil
	}
	w, err := d.FS.Workdir(r.Workdir)
	if err != nil || w.Mode() != sfs.ModeReadWrite {
		return nil
	}
	add := func(p string, compressed bool) error {
		if _, done := out.revs[p]; done || compressed {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if out.revs == nil {
			out.revs, out.Revisions = map[string]string{}, map[string]string{}
		}
		fi, err := d.FS.Stat(r.Workdir, p)
		out.revs[p] = "" // tried: a file gone or too large has none
		if err == nil && fi.Revision != "" {
			out.revs[p] = fi.Revision
			out.Revisions[out.rel(p)] = fi.Revision
		}
		return nil
	}
	for _, m := range r.Matches {
		if err := add(m.Path, m.Compressed || m.InArchive || m.Document); err != nil {
			return err
		}
	}
	for _, b := range r.Blocks {
		if err := add(b.Path, b.Compressed || b.InArchive || b.Document); err != nil {
			return err
		}
	}
	if len(out.Revisions) == 0 {
		out.Revisions = nil
	}
	return nil
}

// rel is a workdir-relative path relative to the searched path, as the
// structured content's keys are.
func (o *searchTextOut) rel(p string) string {
	if o.Path != "" {
		return strings.TrimPrefix(p, o.Path+"/")
	}
	return p
}

// compactSearch groups a search's results by file below its path.
func compactSearch(r *search.Result) *searchTextOut {
	out := &searchTextOut{Workdir: r.Workdir, Path: r.Path, Query: r.Query, Total: r.Total, TotalIncomplete: r.TotalIncomplete,
		MoreFiles: r.MoreFiles, MoreLines: r.MoreLines, Returned: r.Returned, Truncated: r.Truncated,
		TruncatedReason: r.TruncatedReason, NextCursor: r.NextCursor, FilesScanned: r.FilesScanned, FilesSkipped: r.FilesSkipped,
		Skipped: r.Skipped, Hint: r.Hint, Archives: r.Archives, ArchivesMore: r.ArchivesMore, r: r}
	rel := func(p string) string {
		if r.Path != "" {
			return strings.TrimPrefix(p, r.Path+"/")
		}
		return p
	}
	compressed := func(p string, c bool) {
		if c && (len(out.Compressed) == 0 || out.Compressed[len(out.Compressed)-1] != p) {
			out.Compressed = append(out.Compressed, p)
		}
	}
	cut := func(p string, line int) {
		if out.TextTruncated == nil {
			out.TextTruncated = map[string][]int{}
		}
		out.TextTruncated[p] = append(out.TextTruncated[p], line)
	}
	switch {
	case r.Matches != nil:
		out.Matches = map[string][][2]any{}
		for _, m := range r.Matches {
			p := rel(m.Path)
			out.Matches[p] = append(out.Matches[p], [2]any{m.Line, m.Text})
			if m.TextTruncated {
				cut(p, m.Line)
			}
			compressed(p, m.Compressed)
		}
	case r.Blocks != nil:
		out.Blocks = map[string][]searchBlock{}
		for _, b := range r.Blocks {
			p := rel(b.Path)
			sb := searchBlock{Text: make([]string, len(b.Lines)), Match: []int{}}
			for i, l := range b.Lines {
				if i == 0 {
					sb.Line = l.Line
				}
				sb.Text[i] = l.Text
				if l.Match {
					sb.Match = append(sb.Match, l.Line)
				}
				if l.TextTruncated {
					cut(p, l.Line)
				}
			}
			out.Blocks[p] = append(out.Blocks[p], sb)
			compressed(p, b.Compressed)
		}
	case r.Files != nil:
		out.Files = make(map[string]int, len(r.Files))
		for _, f := range r.Files {
			p := rel(f.Path)
			out.Files[p] = f.Count
			compressed(p, f.Compressed)
		}
	}
	return out
}

// writeMore writes the aggregate of the files past the list, "… and N
// more files with M matching lines" (files mode: "… and N more files";
// "at least" where the walk or the timeout cut the scan).
func (o *searchTextOut) writeMore(b *strings.Builder) {
	if o.MoreFiles == 0 {
		return
	}
	least := ""
	if o.TotalIncomplete != "" && o.TotalIncomplete != search.TotalFromCursor {
		least = "at least "
	}
	plural := func(n int, one, many string) string {
		if n == 1 {
			return one
		}
		return many
	}
	fmt.Fprintf(b, "… and %s%d more %s", least, o.MoreFiles, plural(o.MoreFiles, "file", "files"))
	if o.MoreLines > 0 { // files mode counts no lines past the list
		fmt.Fprintf(b, " with %s%d matching %s", least, o.MoreLines, plural(o.MoreLines, "line", "lines"))
	}
	b.WriteByte('\n')
}

// Text is the text content of a search: a first line "workdir:/path
// query", then each file's workdir-relative path (quoted as in Go when a
// line could misread it; then " revision R" where it has one) followed by
// its lines, "line:text" for a match
// and "line-text" for a context line ("--" between blocks, " […]" after a
// cut text), a blank line between files; in the files and count modes one
// line per file, "path" or "path:count". Last lines give the total, why
// the answer is truncated and the next cursor, what was scanned and
// skipped, and the hint.
func (o *searchTextOut) Text() string {
	r := o.r
	var b strings.Builder
	writeHead(&b, o.Workdir, o.Path, o.Query)
	if len(o.Definitions) > 0 {
		b.WriteString("definitions: " + strings.Join(o.Definitions, ", ") + "\n")
	}
	// Paths are workdir-relative, as every tool takes them, so that a
	// heading can be passed on as it is.
	rel := displayName
	line := func(n int, sep byte, text string, cut bool) {
		b.WriteString(strconv.Itoa(n))
		b.WriteByte(sep)
		b.WriteString(text)
		if cut {
			b.WriteString(" […]")
		}
		b.WriteByte('\n')
	}
	prev := ""
	heading := func(p string) bool {
		if p == prev {
			return false
		}
		if prev != "" {
			b.WriteByte('\n')
		}
		prev = p
		b.WriteString(rel(p))
		if rev := o.revs[p]; rev != "" {
			b.WriteString(" revision ")
			b.WriteString(rev)
		}
		b.WriteByte('\n')
		return true
	}
	for _, m := range r.Matches {
		heading(m.Path)
		line(m.Line, ':', m.Text, m.TextTruncated)
	}
	for _, bl := range r.Blocks {
		if !heading(bl.Path) {
			b.WriteString("--\n")
		}
		for _, l := range bl.Lines {
			sep := byte('-')
			if l.Match {
				sep = ':'
			}
			line(l.Line, sep, l.Text, l.TextTruncated)
		}
	}
	for _, f := range r.Files {
		b.WriteString(rel(f.Path))
		if f.Count > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(f.Count))
		}
		b.WriteByte('\n')
	}
	if len(r.Matches)+len(r.Blocks) > 0 {
		b.WriteByte('\n')
	}
	o.writeMore(&b)
	// Files mode has no total: its TotalIncomplete is of the aggregate
	// only (files past the list, no lines counted).
	if o.Total > 0 || (o.TotalIncomplete != "" && (o.MoreFiles == 0 || o.MoreLines > 0)) {
		b.WriteString("total: ")
		if o.TotalIncomplete != "" {
			b.WriteString("at least ")
		}
		b.WriteString(strconv.Itoa(o.Total))
		if o.TotalIncomplete != "" {
			b.WriteString(" (incomplete: ")
			b.WriteString(o.TotalIncomplete)
			b.WriteByte(')')
		}
		b.WriteByte('\n')
	}
	if o.Truncated {
		writeTruncated(&b, o.TruncatedReason, o.NextCursor)
	}
	o.writeScanned(&b)
	if o.Hint != "" {
		b.WriteString("hint: ")
		b.WriteString(o.Hint)
		b.WriteByte('\n')
	}
	return b.String()
}

// writeScanned writes the archives searched inside, what was scanned and
// what was skipped, by reason.
func (o *searchTextOut) writeScanned(b *strings.Builder) {
	if len(o.Archives) > 0 {
		b.WriteString("archives searched: ")
		for i, a := range o.Archives {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(displayName(a))
		}
		if o.ArchivesMore > 0 {
			fmt.Fprintf(b, " and %d more", o.ArchivesMore)
		}
		b.WriteByte('\n')
	}
	b.WriteString("files_scanned: ")
	b.WriteString(strconv.Itoa(o.FilesScanned))
	if o.FilesSkipped > 0 {
		b.WriteString(", files_skipped: ")
		b.WriteString(strconv.Itoa(o.FilesSkipped))
	}
	b.WriteByte('\n')
	s, sep := o.Skipped, "skipped: "
	for _, k := range []struct {
		n    int
		name string
	}{{s.Binary, "binary"}, {s.TooLarge, "too_large"}, {s.Unreadable, "unreadable"}, {s.Corrupt, "corrupt"}, {s.Ignored, "ignored"},
		{s.CutAtCap, "cut_at_cap"}, {s.BinaryLate, "binary_late"}, {s.WindowTooLarge, "window_too_large"}, {s.Archives, "archives"}, {s.Documents, "documents"}} {
		if k.n > 0 {
			b.WriteString(sep)
			b.WriteString(k.name)
			b.WriteByte(' ')
			b.WriteString(strconv.Itoa(k.n))
			sep = ", "
		}
	}
	if sep != "skipped: " {
		b.WriteByte('\n')
	}
}
