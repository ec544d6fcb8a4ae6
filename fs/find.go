package fs

import (
	"context"
	"fmt"
	"strings"

	"github.com/serverfs/serverfs/fs/internal/glob"
	"github.com/serverfs/serverfs/internal/archive"
	"github.com/serverfs/serverfs/internal/errs"
)

// maxPatternBytes bounds a glob pattern.
const maxPatternBytes = glob.MaxPatternBytes

// Glob is a compiled file-name pattern (package glob's syntax: `*`, `?`,
// `[a-z]`, `{a,b}`, and `**` across directories), matched in linear time.
// A pattern without "/" matches the base name; a pattern with "/" matches
// the path relative to the search root, and a leading "**/" also matches
// at the top level.
type Glob struct {
	pattern string
	full    bool // the pattern holds "/": match the relative path
	fold    bool // letters match either case: pattern and names lower-cased
	g       *glob.Pattern
}

// foldCase lower-cases s rune by rune (Unicode simple mapping, as
// strings.ToLower): the glob's operators are ASCII punctuation, which it
// leaves alone, and a name folds the same way, so a folded pattern
// matches a folded name exactly when the two differ only in case. It
// keeps the rune count, so matching stays linear in the name.
func foldCase(s string) string { return strings.ToLower(s) }

// CompileGlob compiles pattern, or returns INVALID_PATTERN. It never panics.
func CompileGlob(pattern string) (g *Glob, err error) { return compileGlob(pattern, false) }

// CompileGlobFold is CompileGlob for a pattern whose letters match either
// case (as find -iname).
func CompileGlobFold(pattern string) (*Glob, error) { return compileGlob(pattern, true) }

func compileGlob(pattern string, fold bool) (g *Glob, err error) {
	bad := func(msg string) error {
		return errs.New(errs.InvalidPattern, fmt.Sprintf("%q %s", displayValue(pattern), msg))
	}
	switch {
	case pattern == "":
		return nil, bad("is empty")
	case len(pattern) > maxPatternBytes:
		return nil, bad(fmt.Sprintf("is longer than %d bytes", maxPatternBytes))
	case strings.HasPrefix(pattern, "/"):
		return nil, bad("starts with '/'; patterns are relative to the search root")
	case strings.IndexByte(pattern, 0) >= 0:
		return nil, bad("contains a NUL byte")
	}
	defer func() {
		if r := recover(); r != nil {
			g, err = nil, bad("cannot be compiled")
		}
	}()
	src := pattern
	if fold {
		src = foldCase(pattern)
	}
	p, cerr := glob.Compile(src)
	if ge, ok := cerr.(*glob.Error); ok && ge.Limit {
		return nil, bad(ge.Reason)
	}
	if cerr != nil {
		return nil, bad(fmt.Sprintf("is malformed: %v", cerr))
	}
	return &Glob{pattern: pattern, full: strings.Contains(pattern, "/"), fold: fold, g: p}, nil
}

// String returns the pattern text.
func (g *Glob) String() string { return g.pattern }

// Match reports whether the entry with path rel (relative to the search
// root) and base name matches.
func (g *Glob) Match(rel, base string) bool {
	s := base
	if g.full {
		s = rel
	}
	if g.fold {
		s = foldCase(s)
	}
	return g.g.Match(s)
}

// FindMatch is one entry found by Find.
type FindMatch struct {
	Path string    `json:"path"`
	Type EntryType `json:"type"`
}

// FindResult is the answer of Find.
type FindResult struct {
	Workdir         string      `json:"workdir"`
	Path            string      `json:"path"`
	Pattern         string      `json:"pattern"`
	Matches         []FindMatch `json:"matches"`
	Returned        int         `json:"returned"`
	Truncated       bool        `json:"truncated"`
	TruncatedReason string      `json:"truncated_reason,omitempty"`
	EntriesScanned  int         `json:"entries_scanned"`
	// Archives counts the archives whose members were found in
	// (FindOptions.Archives); ArchivesUnreadable names those that could
	// not be read, with the error's code.
	Archives           int      `json:"archives,omitempty"`
	ArchivesUnreadable []string `json:"archives_unreadable,omitempty"`
	// NextCursor, on a truncated answer that can be continued: pass it as
	// cursor to resume right after the last match.
	NextCursor string `json:"next_cursor,omitempty"`
}

// Find walks the directory raw and returns entries whose name (or relative
// path, see Glob) matches pattern, in the walk's deterministic order. It
// stops as soon as it knows there are more than limit matches (truncated,
// reason "limit"), after Limits.MaxWalkEntries directory entries
// ("walk_limit"), or when Limits.SearchTimeout (the search timeout) passes
// or ctx ends ("timeout", keeping what it found; SEARCH_TIMEOUT or
// CANCELED when it found nothing). limit 0 means the default.
func (f *FS) Find(ctx context.Context, alias, raw, pattern string, limit int) (*FindResult, error) {
	return f.FindFrom(ctx, alias, raw, pattern, limit, "")
}

// FindOptions are the choices of FindWith beyond the path and pattern.
type FindOptions struct {
	Limit  int    // 0: the default
	Cursor string // NextCursor of an earlier answer to the same find
	// IgnoreCase: the pattern's letters match either case (find -iname).
	IgnoreCase bool
	// Archives: members of archive files are found too, as
	// archive/member paths (the pattern matching their names or their
	// paths below the find's path).
	Archives bool
}

// FindFrom is Find resuming after cursor, the NextCursor of an earlier
// answer with the same workdir, path and pattern ("" starts at the top).
// A truncated answer carries NextCursor when it can be continued.
func (f *FS) FindFrom(ctx context.Context, alias, raw, pattern string, limit int, cursor string) (*FindResult, error) {
	return f.FindWith(ctx, alias, raw, pattern, FindOptions{Limit: limit, Cursor: cursor})
}

// FindWith is Find with options.
func (f *FS) FindWith(ctx context.Context, alias, raw, pattern string, o FindOptions) (*FindResult, error) {
	limit, cursor := o.Limit, o.Cursor
	w, err := f.Workdir(alias)
	if err != nil {
		return nil, err
	}
	if limit == 0 {
		limit = f.limits.DefaultSearchResults
	}
	if limit < 1 || limit > f.limits.MaxSearchResults {
		return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("limit must be between 1 and %d", f.limits.MaxSearchResults))
	}
	g, err := compileGlob(pattern, o.IgnoreCase)
	if err != nil {
		return nil, err
	}
	rp, err := w.clean(raw)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.limits.SearchTimeout)
	defer cancel()
	prefix := rp.String()
	key := CursorKey("find", w.alias, prefix, pattern)
	if o.IgnoreCase || o.Archives {
		key = CursorKey("find", w.alias, prefix, pattern, fmt.Sprint(o.IgnoreCase, o.Archives))
	}
	var from *Cursor
	if cursor != "" {
		c, err := DecodeCursor(cursor, key)
		if err != nil {
			return nil, err
		}
		from = &c
	}
	res := &FindResult{Workdir: w.alias, Path: prefix, Pattern: pattern, Matches: []FindMatch{}}
	limited := false
	visited := "" // the last entry visited: all before it in walk order are done
	add := func(p, name string, t EntryType) bool {
		rel := p
		if prefix != "" {
			rel = strings.TrimPrefix(rel, prefix+"/")
		}
		if !g.Match(rel, name) {
			return true
		}
		if len(res.Matches) == limit {
			limited = true
			return false
		}
		res.Matches = append(res.Matches, FindMatch{Path: p, Type: t})
		if f.onFindMatch != nil {
			f.onFindMatch(p)
		}
		return true
	}
	var wr WalkResult
	if a, ok, _ := w.archiveAt(raw, true); ok && o.Archives {
		// The path is an archive or inside one: its members below it.
		defer a.Close()
		res.Path, prefix = a.path(), a.path()
		w.findArchive(ctx, a, from, add, res)
	} else {
		if ok {
			a.Close()
		}
		wr, err = w.Walk(ctx, raw, WalkOptions{MaxEntries: f.limits.MaxWalkEntries, StopAtLimit: true, Visit: func(e *WalkEntry) WalkAction {
			inArchive := o.Archives && e.Type == TypeFile && archive.Named(e.Name)
			resumeMember := ""
			if inArchive && from != nil && strings.HasPrefix(from.Path, e.Path+"/") {
				resumeMember = from.Path[len(e.Path)+1:] // the cursor is inside this archive
			} else {
				switch from.Resume(e.Path, e.Type == TypeDirectory) {
				case ResumeSkip:
					return WalkSkipDir
				case ResumeDescend:
					return WalkContinue
				}
			}
			visited = e.Path
			if resumeMember == "" && !add(e.Path, e.Name, e.Type) {
				return WalkStop
			}
			if inArchive && !w.findInArchive(ctx, e, resumeMember, add, res) {
				return WalkStop
			}
			return WalkContinue
		}})
	}
	if err != nil {
		return nil, err
	}
	res.EntriesScanned = wr.Entries
	res.Returned = len(res.Matches)
	next := ""
	switch {
	case limited:
		res.Truncated, res.TruncatedReason = true, TruncatedLimit
		next = res.Matches[len(res.Matches)-1].Path
	case wr.Truncated && wr.TruncatedReason == TruncatedTimeout && len(res.Matches) == 0:
		if context.Cause(ctx) == context.Canceled {
			return nil, errs.At(errs.Canceled, w.alias, prefix, "the search was cancelled")
		}
		return nil, errs.At(errs.SearchTimeout, w.alias, prefix, fmt.Sprintf("nothing found within the %s search timeout; narrow the path or the pattern", f.limits.SearchTimeout))
	case wr.Truncated:
		res.Truncated, res.TruncatedReason = true, wr.TruncatedReason
		switch wr.TruncatedReason {
		case TruncatedTimeout:
			next = visited
		case TruncatedWalkLimit:
			next = wr.ResumeAfter
		}
	}
	if next != "" && next != prefix && (from == nil || from.Path != next) {
		res.NextCursor = Cursor{Path: next, Key: key}.Encode()
	}
	return res, nil
}
