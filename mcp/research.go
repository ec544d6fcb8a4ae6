package mcp

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/mcp/internal/rawjson"
	"github.com/serverfs/serverfs/search"
)

// ChatGPT's search and fetch tools (issue 21). ChatGPT uses a connector in
// deep research and as company knowledge only through two tools of fixed
// shapes: search(query) answers {"results": [{"id", "title", "url"}]},
// fetch(id) answers {"id", "title", "text", "url", "metadata"}, each as
// exactly one text content item holding that JSON (instrument also sends
// it as structured content), and a result becomes a citation only when
// its url is a non-empty string. They are served only when the operator
// enables them (SERVERFS_SEARCH_FETCH, --search-fetch), over the workdirs
// named there, with the policy, limits, admission and call log of every
// tool.

type searchIn struct {
	Query string `json:"query" jsonschema:"a question or keywords"`
}

// searchHit is one search result, exactly as ChatGPT reads it.
type searchHit struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	URL   string `json:"url"`
}

type searchOut struct {
	Results []searchHit `json:"results"`
}

type fetchIn struct {
	ID string `json:"id" jsonschema:"a search result's id"`
}

// fetchMeta is fetch's metadata: where the text comes from and how much
// of the file it is.
type fetchMeta struct {
	Workdir string `json:"workdir"`
	Path    string `json:"path"`
	// Lines are the lines returned, "first-last"; absent for an empty
	// file.
	Lines      string `json:"lines,omitempty"`
	TotalLines *int   `json:"total_lines,omitempty"`
	Revision   string `json:"revision,omitempty"`
	Compressed bool   `json:"compressed"`
	CutAtCap   bool   `json:"cut_at_cap,omitempty"`
	// NextID, when set, fetches the lines that follow.
	NextID string `json:"next_id,omitempty"`
}

type fetchOut struct {
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	Text     string    `json:"text"`
	URL      string    `json:"url"`
	Metadata fetchMeta `json:"metadata"`
}

// researchTools are search and fetch, covering the workdirs aliases
// (comma-separated).
func researchTools(lim sfs.Limits, aliases string) []tool {
	maxLines := lim.MaxReadLines
	return []tool{
		{
			def: &sdk.Tool{
				Name: "search",
				Description: fmt.Sprintf("Search the files of the workdirs %s for a question or keywords (ChatGPT deep research): at most %d results, best first, each with an id for fetch; the scan stops after %s. "+
					"For literal text or every match, use search_text.", aliases, search.MaxRankResults, lim.SearchTimeout),
				Annotations: readOnly("Search files"),
				InputSchema: inputSchema[searchIn](nil),
			},
			// search scans every file of its workdirs; fetch is a read.
			cost:     heavy,
			register: register(searchFiles),
		},
		{
			def: &sdk.Tool{
				Name:        "fetch",
				Description: fmt.Sprintf("Fetch a search result by id: the whole file when it fits in one read (%d lines, %s), else a window; metadata.next_id continues.", maxLines, sizeText(lim.MaxReadBytes)),
				Annotations: readOnly("Fetch file"),
				InputSchema: inputSchema[fetchIn](nil),
			},
			cost:     heavyIf(func(_ *Deps, in fetchIn) bool { return compressedPath(fetchPath(in.ID)) }),
			register: register(fetchFile),
		},
	}
}

// researchAliases are the aliases of the workdirs search and fetch cover.
func researchAliases(f *sfs.FS) []string {
	var out []string
	for _, w := range f.SearchFetchWorkdirs() {
		out = append(out, w.Alias())
	}
	return out
}

// windowRE is the line window at the end of a fetch id.
var windowRE = regexp.MustCompile(`#L([0-9]{1,9})(?:-L?([0-9]{1,9}))?$`)

// fetchID is the id of path in workdir alias, at line (0: none). A path
// that itself ends like a window gets one, so that the id reads back as
// this path.
func fetchID(alias, path string, line int) string {
	id := alias + ":/" + path
	if line == 0 && windowRE.MatchString(path) {
		line = 1
	}
	if line > 0 {
		id += "#L" + strconv.Itoa(line)
	}
	return id
}

// fetchRange is fetchID for lines first to last.
func fetchRange(alias, path string, first, last int) string {
	return fmt.Sprintf("%s:/%s#L%d-L%d", alias, path, first, last)
}

// parseFetchID splits alias:/path[#L<first>[-L<last>]]; first is 0
// without a window, last equals first for one line.
func parseFetchID(id string) (alias, path string, first, last int, err error) {
	bad := func(msg string) error {
		return argErr("id %q: %s; ids look like projects:/src/db.go or projects:/src/db.go#L42, as search returns them", rawjson.LogString(id), msg)
	}
	alias, rest, ok := strings.Cut(id, ":")
	if !ok || alias == "" || !strings.HasPrefix(rest, "/") {
		return "", "", 0, 0, bad("no workdir alias and :/ before the path")
	}
	path = rest[1:]
	if m := windowRE.FindStringSubmatchIndex(path); m != nil {
		first, _ = strconv.Atoi(path[m[2]:m[3]])
		last = first
		if m[4] >= 0 {
			last, _ = strconv.Atoi(path[m[4]:m[5]])
		}
		path = path[:m[0]]
		if first < 1 || last < first {
			return "", "", 0, 0, bad("lines are numbered from 1 and a window's last line is not before its first")
		}
	}
	return alias, path, first, last, nil
}

// researchWorkdir is the workdir alias when search and fetch cover it.
func researchWorkdir(d *Deps, alias string) (*sfs.Workdir, error) {
	w, err := d.FS.Workdir(alias)
	if err != nil {
		return nil, err
	}
	if !w.SearchFetch() {
		return nil, errs.New(errs.WorkdirNotFound, fmt.Sprintf("%q: search and fetch do not cover this workdir (they cover %s)", alias, strings.Join(researchAliases(d.FS), ", ")))
	}
	return w, nil
}

func searchFiles(ctx context.Context, d *Deps, in searchIn) (*searchOut, callInfo, error) {
	q := strings.TrimSpace(in.Query)
	switch {
	case q == "":
		return nil, callInfo{}, argErr("query is empty")
	case len(q) > search.MaxQueryBytes:
		return nil, callInfo{}, argErr("query is longer than %d bytes", search.MaxQueryBytes)
	case !utf8.ValidString(q):
		return nil, callInfo{}, argErr("query is not valid UTF-8")
	}
	terms := search.QueryTerms(q)
	if len(terms) == 0 {
		return nil, callInfo{}, argErr("the query holds no word to search for")
	}
	r, err := d.Search.Rank(ctx, search.RankRequest{Workdirs: researchAliases(d.FS), Terms: terms})
	if err != nil {
		return nil, callInfo{}, err
	}
	out := &searchOut{Results: make([]searchHit, 0, len(r.Files))}
	for _, f := range r.Files {
		w, err := d.FS.Workdir(f.Workdir)
		if err != nil {
			return nil, callInfo{}, err
		}
		title := f.Workdir + ":/" + f.Path
		if f.Line > 0 {
			title += fmt.Sprintf(":%d: %s", f.Line, f.Text)
		}
		out.Results = append(out.Results, searchHit{ID: fetchID(f.Workdir, f.Path, f.Line), Title: title, URL: w.URL(f.Path, f.Line)})
	}
	return out, callInfo{}, nil
}

// fetchMargin is how many lines before the line of a one-line id a
// window starts.
func fetchMargin(maxLines int) int { return min(20, maxLines/4) }

func fetchFile(ctx context.Context, d *Deps, in fetchIn) (*fetchOut, callInfo, error) {
	alias, path, first, last, err := parseFetchID(in.ID)
	info := callInfo{workdir: alias, path: path}
	if err != nil {
		return nil, info, err
	}
	w, err := researchWorkdir(d, alias)
	if err != nil {
		return nil, info, err
	}
	maxLines := d.FS.Limits().MaxReadLines
	margin := fetchMargin(maxLines)
	o := sfs.ReadOptions{StartLine: 1, MaxLines: maxLines}
	switch {
	case first > 0 && last > first:
		o = sfs.ReadOptions{StartLine: first, MaxLines: min(maxLines, last-first+1)}
	case first > 0 && first+margin > maxLines:
		o.StartLine = max(1, first-margin)
	}
	win, err := readText(ctx, d, alias, path, o)
	if err == nil && first > 0 && first == last && o.StartLine == 1 && win.HasMore && win.EndLine < first {
		// The byte cap ended the window from line 1 before the line.
		o.StartLine = max(1, first-margin)
		win, err = readText(ctx, d, alias, path, o)
	}
	if err != nil {
		return nil, info, err
	}
	info.bytes = win.BytesReturned
	whole := win.StartLine == 1 && !win.HasMore
	title := alias + ":/" + win.Path
	if !whole && win.EndLine >= win.StartLine {
		title += fmt.Sprintf(":%d-%d", win.StartLine, win.EndLine)
	}
	line := first
	if line == 0 && !whole {
		line = win.StartLine
	}
	out := &fetchOut{ID: in.ID, Title: title, Text: win.Content, URL: w.URL(win.Path, line), Metadata: fetchMeta{
		Workdir: alias, Path: win.Path, TotalLines: win.TotalLines, Revision: win.Revision, Compressed: win.Compressed, CutAtCap: win.CutAtCap,
	}}
	if win.EndLine >= win.StartLine && win.EndLine > 0 {
		out.Metadata.Lines = fmt.Sprintf("%d-%d", win.StartLine, win.EndLine)
	}
	if win.HasMore && win.NextStartLine != nil {
		n := *win.NextStartLine
		out.Metadata.NextID = fetchRange(alias, win.Path, n, n+maxLines-1)
	}
	return out, info, nil
}

// fetchPath is the path of a fetch id, for the admission gate (a
// compressed file is a heavy read); "" when the id does not parse.
func fetchPath(id string) string {
	_, path, _, _, err := parseFetchID(id)
	if err != nil {
		return ""
	}
	return path
}
