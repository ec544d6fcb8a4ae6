package mcp

import (
	"maps"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/serverfs/serverfs/search"
)

// paths are the workdir-relative paths of a find's matches (for tests and
// callers that want them whole), grouped as in the answer: files and
// directories, then symlinks, then other; each group in directory order.
func (o *findOut) paths() []string {
	var ps []string
	for _, g := range []map[string][]string{o.Matches, o.Symlinks, o.Other} {
		dirs := make([]string, 0, len(g))
		for d := range g {
			dirs = append(dirs, d)
		}
		slices.Sort(dirs)
		for _, d := range dirs {
			for _, n := range g[d] {
				p := strings.TrimSuffix(n, "/")
				if d != "" {
					p = d + "/" + p
				}
				if o.Path != "" {
					p = o.Path + "/" + p
				}
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// result is a compact search answer as a search.Result again (paths
// workdir-relative, files in path order), for tests written against the
// engine's form.
func (o *searchTextOut) result() search.Result {
	r := search.Result{Workdir: o.Workdir, Path: o.Path, Query: o.Query, Total: o.Total, Returned: o.Returned, Truncated: o.Truncated,
		TruncatedReason: o.TruncatedReason, NextCursor: o.NextCursor, FilesScanned: o.FilesScanned, FilesSkipped: o.FilesSkipped,
		Skipped: o.Skipped, Hint: o.Hint}
	full := func(p string) string {
		if o.Path != "" {
			return o.Path + "/" + p
		}
		return p
	}
	cut := func(p string, line int) bool { return slices.Contains(o.TextTruncated[p], line) }
	for _, p := range slices.Sorted(maps.Keys(o.Matches)) {
		for _, m := range o.Matches[p] {
			line := int(m[0].(float64))
			r.Matches = append(r.Matches, search.Match{Path: full(p), Line: line, Text: m[1].(string), TextTruncated: cut(p, line), Compressed: slices.Contains(o.Compressed, p)})
		}
	}
	for _, p := range slices.Sorted(maps.Keys(o.Blocks)) {
		for _, b := range o.Blocks[p] {
			sb := search.Block{Path: full(p), Compressed: slices.Contains(o.Compressed, p)}
			for i, text := range b.Text {
				line := b.Line + i
				sb.Lines = append(sb.Lines, search.BlockLine{Line: line, Text: text, Match: slices.Contains(b.Match, line), TextTruncated: cut(p, line)})
			}
			r.Blocks = append(r.Blocks, sb)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(o.Files)) {
		r.Files = append(r.Files, search.FileHit{Path: full(p), Count: o.Files[p], Compressed: slices.Contains(o.Compressed, p)})
	}
	return r
}

// searchResult decodes search_text's structured content as a
// search.Result.
func searchResult(t *testing.T, res *sdk.CallToolResult) search.Result {
	t.Helper()
	o := structured[searchTextOut](t, res)
	return o.result()
}
