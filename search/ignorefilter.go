package search

import (
	"context"

	sfs "github.com/serverfs/serverfs/fs"
)

// IgnoreFilter is search_text's .gitignore engine for another walk of a
// workdir (list_directory's tree): the same rules, read the same way
// (inside a git work tree only; .gitignore at every level and
// .git/info/exclude; the .gitignore files above the walk's root count). It
// implements fs.Ignorer. Use one per walk.
type IgnoreFilter struct {
	w     *sfs.Workdir
	rules ignoreRules
}

// NewIgnoreFilter returns a filter for one walk of w; matching stops when
// ctx (the call's) is done, the entry then counting as ignored.
func NewIgnoreFilter(ctx context.Context, w *sfs.Workdir) *IgnoreFilter {
	return &IgnoreFilter{w: w, rules: ignoreRules{ctx: ctx}}
}

// Enter records the rules of a directory the walk reads; the walk's root
// (Depth 0) also loads those of the directories above it.
func (f *IgnoreFilter) Enter(d *sfs.Dir) {
	if d.Depth == 0 {
		f.rules.setAncestors(ancestorFrames(f.w, d.Path), d.Path)
	}
	f.rules.enter(d)
}

// Err is the READ_LIMIT_EXCEEDED error of a walk whose ignore rules went
// over gitignore.MaxCostInForce (every entry from there on counted as
// ignored, so the walk's answer is not to be given), nil otherwise.
func (f *IgnoreFilter) Err() error { return f.rules.overErr(f.w.Alias()) }

// Ignored reports whether the entry (workdir-relative path, met at walk
// depth depth) is ignored.
func (f *IgnoreFilter) Ignored(path string, isDir bool, depth int) bool {
	return f.rules.ignored(path, isDir, depth)
}
