package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/fs/ignore"
)

// list_directory's answer is compact (issue 17): a listing is the call an
// agent makes most, and it paid about 115 bytes per entry twice (the JSON
// and its text copy). Entries are a map from name to what the entry is (a
// file's size, "dir", a listed directory's own map, "symlink", "other"):
// no path repeated where the parent is known, no type word for files, no
// times unless asked. The text content is not the JSON again but the same
// listing as indented lines (see listText), for clients that show the
// model only the text; docs/files.md says why.

// Entry values of a compact listing that are not sizes or maps.
const (
	valueDir     = "dir" // a directory whose entries are not listed here
	valueSymlink = "symlink"
	valueOther   = "other"
)

type listDirectoryIn struct {
	Workdir     string `json:"workdir"`
	Path        string `json:"path,omitempty"`
	Offset      int    `json:"offset,omitempty"`
	Limit       int    `json:"limit,omitempty"`
	Depth       int    `json:"depth,omitempty"`
	DirsOnly    bool   `json:"dirs_only,omitempty"`
	SkipIgnored bool   `json:"skip_ignored,omitempty" jsonschema:"omit .gitignored files and .git"`
	Times       bool   `json:"times,omitempty" jsonschema:"add modification times"`
}

func listDirectoryTool(lim sfs.Limits) tool {
	schema := inputSchema[listDirectoryIn](map[string]bound{"offset": {0, 1 << 30, 0}, "limit": {1, lim.MaxListEntries, lim.DefaultListLimit}, "depth": {1, sfs.MaxTreeDepth, 1}})
	for _, b := range []string{"dirs_only", "skip_ignored", "times"} {
		schema.Properties[b].Default = json.RawMessage("false")
	}
	return tool{
		def: &sdk.Tool{
			Name: "list_directory",
			Description: fmt.Sprintf("List a directory, a line per entry: `name size`, `dir/`, `link@` (symlink), `name (other)`. depth: a tree, indented. "+
				"Archives (zip, jar, tar, tar.gz/.zst/.bz2) list as directories (depth 1); paths go inside them. "+
				"`has_more: next_offset N`: call again with offset N. Over %d entries: DIRECTORY_TOO_LARGE (use find_files); a tree stops after %d entries or %s (`truncated: ...`).", lim.MaxWalkEntries, lim.MaxWalkEntries, lim.SearchTimeout),
			Annotations: readOnly("List directory"),
			InputSchema: schema,
		},
		// A tree walks subdirectories, and may read .gitignore files.
		cost: heavyIf(func(d *Deps, in listDirectoryIn) bool {
			if in.Depth > 1 || sfs.InArchive(in.Path) {
				return true
			}
			size, ok := d.FS.DirSize(in.Workdir, in.Path)
			return ok && size > hugeDirBytes
		}),
		register: register(listDirectory),
	}
}

// listOut is list_directory's answer.
type listOut struct {
	Workdir string `json:"workdir"`
	Path    string `json:"path,omitempty"`
	// Entries maps each name to a file's size in bytes, "dir" (a
	// directory not listed here), a listed directory's own map of
	// entries, "symlink" or "other".
	Entries map[string]any `json:"entries"`
	// Total is the number of entries of the directory (one level), or of
	// the tree to its depth when the walk counted it whole.
	Total    int  `json:"total,omitempty"`
	Returned int  `json:"returned"`
	HasMore  bool `json:"has_more,omitempty"`
	// NextOffset is the offset of the next page while has_more is true.
	NextOffset int `json:"next_offset,omitempty"`
	// Truncated says why entries exist that no page shows: walk_limit
	// or timeout.
	Truncated string `json:"truncated,omitempty"`
	// ModifiedAt maps each entry's path below path to its modification
	// time, with times.
	ModifiedAt map[string]string `json:"modified_at,omitempty"`

	lines []listLine // the text content
}

// listLine is one entry of the text content.
type listLine struct {
	depth   int // 1 for the listed directory's own entries
	name    string
	value   any // as in Entries; a listed directory is "dir/" too
	modTime string
	context bool // an ancestor shown for a page that starts below it
}

func listDirectory(ctx context.Context, d *Deps, in listDirectoryIn) (*listOut, callInfo, error) {
	info := callInfo{workdir: in.Workdir, path: in.Path}
	if in.Depth == 0 {
		in.Depth = 1
	}
	if in.Depth == 1 && !in.DirsOnly && !in.SkipIgnored {
		l, err := d.FS.List(in.Workdir, in.Path, in.Offset, in.Limit)
		if err != nil {
			return nil, info, err
		}
		out := &listOut{Workdir: l.Workdir, Path: l.Path, Entries: make(map[string]any, len(l.Entries)), Total: l.Total, Returned: l.Returned, HasMore: l.HasMore}
		if l.NextOffset != nil {
			out.NextOffset = *l.NextOffset
		}
		for _, e := range l.Entries {
			var v any
			switch e.Type {
			case sfs.TypeFile:
				v = int64(0)
				if e.Size != nil {
					v = *e.Size
				}
			case sfs.TypeDirectory:
				v = valueDir
			case sfs.TypeSymlink:
				v = valueSymlink
			default:
				v = valueOther
			}
			out.Entries[e.Name] = v
			ln := listLine{depth: 1, name: e.Name, value: v}
			if in.Times && e.ModifiedAt != "" {
				if out.ModifiedAt == nil {
					out.ModifiedAt = map[string]string{}
				}
				out.ModifiedAt[e.Name], ln.modTime = e.ModifiedAt, e.ModifiedAt
			}
			out.lines = append(out.lines, ln)
		}
		return out, info, nil
	}
	opts := sfs.TreeOptions{Depth: in.Depth, DirsOnly: in.DirsOnly, Offset: in.Offset, Limit: in.Limit, Times: in.Times}
	var alias string
	if in.SkipIgnored {
		w, err := d.FS.Workdir(in.Workdir)
		if err != nil {
			return nil, info, err
		}
		opts.Ignore, alias = ignore.Filter(ctx, w), w.Alias()
	}
	t, err := d.FS.Tree(ctx, in.Workdir, in.Path, opts)
	if err != nil {
		return nil, info, err
	}
	if f, ok := opts.Ignore.(*ignore.Stack); ok && f.Err(alias) != nil {
		return nil, info, f.Err(alias)
	}
	return treeOut(t, in.Times), info, nil
}

// treeOut nests a tree page into maps. A page that starts below
// directories of an earlier page gets them as maps (and as context lines
// of the text).
func treeOut(t *sfs.Tree, times bool) *listOut {
	out := &listOut{Workdir: t.Workdir, Path: t.Path, Entries: map[string]any{}, Returned: len(t.Entries), HasMore: t.HasMore, NextOffset: t.NextOffset, Truncated: t.Truncated, Total: t.Total}
	dirs := map[string]map[string]any{"": out.Entries} // listed directory path -> its map
	var mapOf func(dir string, depth int) map[string]any
	mapOf = func(dir string, depth int) map[string]any {
		if m, ok := dirs[dir]; ok {
			return m
		}
		parent, name := "", dir
		if i := strings.LastIndexByte(dir, '/'); i >= 0 {
			parent, name = dir[:i], dir[i+1:]
		}
		m := map[string]any{}
		mapOf(parent, depth-1)[name] = m
		dirs[dir] = m
		out.lines = append(out.lines, listLine{depth: depth, name: name, value: valueDir, context: true})
		return m
	}
	for _, e := range t.Entries {
		dir := ""
		if i := strings.LastIndexByte(e.Path, '/'); i >= 0 {
			dir = e.Path[:i]
		}
		parent := mapOf(dir, e.Depth-1)
		var v any
		switch {
		case e.Type == sfs.TypeFile:
			v = e.Size
		case e.Type == sfs.TypeDirectory && e.Listed:
			m := map[string]any{}
			dirs[e.Path] = m
			v = m
		case e.Type == sfs.TypeDirectory:
			v = valueDir
		case e.Type == sfs.TypeSymlink:
			v = valueSymlink
		default:
			v = valueOther
		}
		parent[e.Name] = v
		ln := listLine{depth: e.Depth, name: e.Name, value: v}
		if times && e.ModifiedAt != "" {
			if out.ModifiedAt == nil {
				out.ModifiedAt = map[string]string{}
			}
			out.ModifiedAt[e.Path], ln.modTime = e.ModifiedAt, e.ModifiedAt
		}
		out.lines = append(out.lines, ln)
	}
	return out
}

// Text is the text content of a listing: one line per entry, indented two
// spaces per level, "name size" for a file, "name/" for a directory,
// "name@" for a symlink and "name (other)" for anything else, then the
// modification time with times. A name that could be misread (spaces at
// its ends, control characters, a leading quote, bytes that are not UTF-8)
// is quoted as in Go. A last line says how to continue ("has_more:
// next_offset N of TOTAL", the total when known).
func (o *listOut) Text() string {
	var b strings.Builder
	writeHead(&b, o.Workdir, o.Path)
	for _, l := range o.lines {
		for range l.depth - 1 {
			b.WriteString("  ")
		}
		b.WriteString(displayName(l.name))
		switch v := l.value.(type) {
		case int64:
			b.WriteByte(' ')
			b.WriteString(strconv.FormatInt(v, 10))
		case map[string]any:
			b.WriteByte('/')
		case string:
			switch v {
			case valueDir:
				b.WriteByte('/')
			case valueSymlink:
				b.WriteByte('@')
			default:
				b.WriteString(" (other)")
			}
		}
		if l.modTime != "" {
			b.WriteByte(' ')
			b.WriteString(l.modTime)
		}
		b.WriteByte('\n')
	}
	switch {
	case o.HasMore:
		b.WriteString("has_more: next_offset ")
		b.WriteString(strconv.Itoa(o.NextOffset))
		if o.Total > 0 {
			// Known for a one-level listing, and for a tree counted to
			// its end (fs.Tree counts a bounded way past its page).
			b.WriteString(" of ")
			b.WriteString(strconv.Itoa(o.Total))
		}
		b.WriteByte('\n')
	case o.Truncated != "":
		writeTruncated(&b, o.Truncated, "")
	}
	return b.String()
}

// writeHead writes the first line of a listing, find or search_text
// answer: "workdir:/path", then " query" (quoted as displayName quotes)
// for each query given.
func writeHead(b *strings.Builder, workdir, path string, query ...string) {
	b.WriteString(workdir)
	b.WriteString(":/")
	b.WriteString(path)
	for _, q := range query {
		b.WriteByte(' ')
		b.WriteString(displayName(q))
	}
	b.WriteByte('\n')
}

// writeTruncated writes the line saying why an answer is truncated and,
// when set, the cursor that continues it.
func writeTruncated(b *strings.Builder, reason, cursor string) {
	b.WriteString("truncated: ")
	b.WriteString(reason)
	if cursor != "" {
		b.WriteString("; next_cursor ")
		b.WriteString(cursor)
	}
	b.WriteByte('\n')
}

// displayName quotes a name that a line could misread.
func displayName(name string) string {
	quote := !utf8.ValidString(name) || strings.HasPrefix(name, `"`)
	if !quote {
		r0, _ := utf8.DecodeRuneInString(name)
		rl, _ := utf8.DecodeLastRuneInString(name)
		quote = unicode.IsSpace(r0) || unicode.IsSpace(rl)
	}
	if !quote {
		for _, r := range name {
			if unicode.IsControl(r) {
				quote = true
				break
			}
		}
	}
	if quote {
		return strconv.Quote(name)
	}
	return name
}
