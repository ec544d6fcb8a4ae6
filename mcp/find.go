package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sfs "github.com/serverfs/serverfs/fs"
)

// find_files' answer is compact, as list_directory's is: it
// paid about 108 bytes per match on net/http (each match's workdir-relative
// path and type word, as JSON twice: structured and its text copy).
// Matches are grouped by their directory relative to the searched path,
// each a list of names (a directory's ending in "/"), so no path prefix is
// repeated and no type word is spent on files or directories; symlinks and
// other entries, rare in a find, have maps of their own. The text content
// is not the JSON again but one line per match, its workdir-relative path
// in walk order (as rg --files prints paths), for clients
// that show the model only the text; docs/files.md says why.

type findFilesIn struct {
	Workdir string `json:"workdir"`
	Path    string `json:"path,omitempty"`
	Pattern string `json:"pattern" jsonschema:"glob: * ? [a-z] {a,b}, ** across directories; without / it matches names (*.py), with / paths below path (src/**/*.go)"`
	Limit   int    `json:"limit,omitempty"`
	Cursor  string `json:"cursor,omitempty"`
	// CaseSensitive defaults to false: an agent asking for *dial* means
	// Dial.go too, as find -iname would find it.
	CaseSensitive bool `json:"case_sensitive,omitempty"`
	Archives      bool `json:"archives,omitempty"`
}

func findFilesTool(lim sfs.Limits) tool {
	schema := inputSchema[findFilesIn](map[string]bound{"limit": {1, lim.MaxSearchResults, lim.DefaultSearchResults}})
	schema.Properties["case_sensitive"].Default = json.RawMessage("false")
	schema.Properties["archives"].Default = json.RawMessage("false")
	return tool{
		def: &sdk.Tool{
			Name: "find_files",
			Description: fmt.Sprintf("Find files and directories by name: a path per line (`dir/`, `link@`, `name (other)`). Globs ignore case unless case_sensitive. archives: zip/tar members too. None: `0 matches` and why. "+
				"`truncated: limit` (narrow path or pattern), `walk_limit` (%d entries) or `timeout` (%s), then `next_cursor C`: pass C as cursor.", lim.MaxWalkEntries, lim.SearchTimeout),
			Annotations: readOnly("Find files"),
			InputSchema: schema,
		},
		cost:     heavy,
		register: register(findFiles),
	}
}

// findOut is find_files' answer.
type findOut struct {
	Workdir string `json:"workdir"`
	Path    string `json:"path,omitempty"`
	Pattern string `json:"pattern"`
	// Matches maps each directory holding matches, relative to path
	// ("" for path itself), to the names of the files and directories
	// matched in it, in name order; a directory's name ends in "/".
	Matches map[string][]string `json:"matches"`
	// Symlinks and Other, in the same form, are the symlinks and other
	// entries (FIFOs, sockets, devices) matched.
	Symlinks        map[string][]string `json:"symlinks,omitempty"`
	Other           map[string][]string `json:"other,omitempty"`
	Returned        int                 `json:"returned"`
	Truncated       bool                `json:"truncated,omitempty"`
	TruncatedReason string              `json:"truncated_reason,omitempty"`
	EntriesScanned  int                 `json:"entries_scanned"`
	// NextCursor, on a truncated answer that can be continued: pass it as
	// cursor to resume right after the last match.
	NextCursor string `json:"next_cursor,omitempty"`
	// Hint, on an answer without matches, says "0 matches" and what the
	// find left out that may have been meant.
	Hint string `json:"hint,omitempty"`
	// Archives counts the archives found in (archives true);
	// ArchivesUnreadable names those that could not be read, and why.
	Archives           int      `json:"archives,omitempty"`
	ArchivesUnreadable []string `json:"archives_unreadable,omitempty"`

	lines []string // the text content's match lines, in walk order
}

func findFiles(ctx context.Context, d *Deps, in findFilesIn) (*findOut, callInfo, error) {
	info := callInfo{workdir: in.Workdir, path: in.Path}
	r, err := d.FS.FindWith(ctx, in.Workdir, in.Path, in.Pattern, sfs.FindOptions{Limit: in.Limit, Cursor: in.Cursor, IgnoreCase: !in.CaseSensitive, Archives: in.Archives})
	if err != nil {
		return nil, info, err
	}
	out := compactFind(r)
	if r.Returned == 0 && !r.Truncated {
		out.Hint = emptyFindHint(in.CaseSensitive, d.FS.Policy().AllowHidden())
	}
	return out, info, nil
}

// emptyFindHint is the line of a find that matched nothing: "0 matches"
// and what the search left out that the agent may have meant, each only
// when true for this call and configuration.
func emptyFindHint(caseSensitive, allowHidden bool) string {
	s := "0 matches"
	var why []string
	if caseSensitive {
		why = append(why, "the pattern matched case-sensitively (case_sensitive false ignores case)")
	}
	if !allowHidden {
		why = append(why, "hidden entries (names starting with .) are never searched")
	}
	why = append(why, "credential files are never searched")
	return s + "; " + strings.Join(why, "; ")
}

// compactFind groups a find's matches by directory below its path.
func compactFind(r *sfs.FindResult) *findOut {
	out := &findOut{Workdir: r.Workdir, Path: r.Path, Pattern: r.Pattern, Matches: map[string][]string{}, Returned: r.Returned,
		Truncated: r.Truncated, TruncatedReason: r.TruncatedReason, EntriesScanned: r.EntriesScanned, NextCursor: r.NextCursor,
		Archives: r.Archives, ArchivesUnreadable: r.ArchivesUnreadable, lines: make([]string, 0, len(r.Matches))}
	for _, m := range r.Matches {
		rel := m.Path
		if r.Path != "" {
			rel = strings.TrimPrefix(rel, r.Path+"/")
		}
		dir, name := "", rel
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			dir, name = rel[:i], rel[i+1:]
		}
		group, suffix := &out.Matches, ""
		switch m.Type {
		case sfs.TypeFile:
		case sfs.TypeDirectory:
			name, suffix = name+"/", "/"
		case sfs.TypeSymlink:
			group, suffix = &out.Symlinks, "@"
		default:
			group, suffix = &out.Other, " (other)"
		}
		if *group == nil {
			*group = map[string][]string{}
		}
		(*group)[dir] = append((*group)[dir], name)
		// The text's paths are workdir-relative, as every tool takes
		// them, so that a line can be passed on as it is.
		out.lines = append(out.lines, findLine(m.Path, m.Type)+suffix)
	}
	return out
}

// findLine is a match's relative path as a text line shows it: quoted as
// in Go when a line could misread it (see displayName), or when a file's
// name ends as a symlink's or another entry's line does.
func findLine(rel string, t sfs.EntryType) string {
	if q := displayName(rel); q != rel {
		return q
	}
	if t == sfs.TypeFile && (strings.HasSuffix(rel, "@") || strings.HasSuffix(rel, " (other)")) {
		return strconv.Quote(rel)
	}
	return rel
}

// Text is the text content of a find: a first line "workdir:/path
// pattern", one line per match with its workdir-relative path ("dir/" for
// a directory, "link@" for a symlink, "name (other)" for anything else),
// then, when truncated, why, the entries scanned and the next cursor.
func (o *findOut) Text() string {
	var b strings.Builder
	writeHead(&b, o.Workdir, o.Path, o.Pattern)
	for _, l := range o.lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if o.Hint != "" {
		b.WriteString(o.Hint)
		b.WriteByte('\n')
	}
	if o.Archives > 0 {
		fmt.Fprintf(&b, "archives read: %d\n", o.Archives)
	}
	if len(o.ArchivesUnreadable) > 0 {
		b.WriteString("archives unreadable: " + strings.Join(o.ArchivesUnreadable, ", ") + "\n")
	}
	if o.Truncated {
		writeTruncated(&b, o.TruncatedReason+" after "+strconv.Itoa(o.EntriesScanned)+" entries", o.NextCursor)
	}
	return b.String()
}
