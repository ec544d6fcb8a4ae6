// Package ignore is the one ignore stack of every work-tree walk: the
// rules of the directories a walk is in, read through fs's policy-checked
// descriptors and matched by package gitignore. Options choose how they
// are read: ripgrep's way for search_text and list_directory (only inside
// a git work tree, .git/info/exclude of each repository met, stopping at
// the nearest repository root), git's way for git status (the
// repository-wide excludes the caller loads, then every .gitignore from
// the root down, falling back to the index for skip-worktree files).
package ignore

import (
	"context"
	"fmt"
	"strings"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/internal/gitignore"
)

// Options say which rules a Stack reads and how it bounds them.
type Options struct {
	// Repos applies the rules only inside a git work tree (a directory
	// holding ".git", a workspace root, or below one), and a match
	// stops at the nearest repository root: a nested repository does
	// not inherit the rules of the one around it (ripgrep). Without it
	// every directory's .gitignore applies, over Base (git).
	Repos bool
	// InfoExclude reads .git/info/exclude of every repository root the
	// walk meets (Repos only; git's own walk passes it in Base).
	InfoExclude bool
	// Nested reads the .gitignore of every directory the walk enters.
	Nested bool
	// Base holds the repository-wide ignore files the caller read
	// (core.excludesFile, .git/info/exclude), lowest priority first;
	// BasePath is the path an error names when they alone are over
	// gitignore.MaxCostInForce.
	Base     [][]byte
	BasePath string
	// MaxFileBytes bounds one ignore file read from the work tree.
	MaxFileBytes int64
	// FromIndex returns the content of a .gitignore that cannot be read
	// from the work tree (absent, or a symlink, which git does not
	// follow) when its index entry is skip-worktree, as git's dir.c
	// does for sparse checkouts; nil for none.
	FromIndex func(path string) []byte
	// Above loads, on entering the walk's root, the rules of the
	// directories from the workdir root down to it (a walk below the
	// root honours the .gitignore files above it, as ripgrep does).
	Above *sfs.Workdir
	// OverMsg is the message of the READ_LIMIT_EXCEEDED error (Err) of
	// a walk whose rules went over gitignore.MaxCostInForce.
	OverMsg string
}

// frame holds the rules one directory contributes.
type frame struct {
	inRepo   bool                // this directory is in a git work tree (Repos)
	repoRoot bool                // it holds ".git": the rules of the directories above it do not apply (Repos)
	patterns []gitignore.Pattern // in increasing priority
	cost     int                 // gitignore.Cost of the patterns
}

// Stack holds the ignore rules in force during one walk: frames[i] is the
// directory at depth i below the workdir root's walk (offset of them lie
// above the walk's start). Within a directory the last pattern that
// matches decides; deeper directories take precedence, then Base. Use
// one per walk (Below for walks that share a start). It implements
// fs.Ignorer.
type Stack struct {
	// ctx bounds matching (a path against tens of thousands of patterns
	// costs milliseconds): once it is done a path counts as ignored and
	// the walk, which looks at ctx between entries, ends. Git's answer
	// is kept (no cap on the rules a file holds): only the work is
	// bounded.
	ctx      context.Context
	opts     Options
	base     []gitignore.Pattern
	baseCost int
	frames   []frame
	// offset is the depth of the walk's start directory (a walk of a
	// subdirectory counts depths from there).
	offset int
	// over is the ignore file (its directory, workdir-relative) whose
	// rules would have taken those in force past
	// gitignore.MaxCostInForce: from then on every path counts as
	// ignored and the caller refuses the call (Err) instead of
	// answering with some of the rules.
	over    string
	overSet bool
}

// New returns a stack for one walk; matching stops when ctx is done.
func New(ctx context.Context, opts Options) *Stack {
	s := &Stack{ctx: ctx, opts: opts}
	for _, b := range opts.Base {
		ps := gitignore.Parse(b, nil)
		s.base, s.baseCost = append(s.base, ps...), s.baseCost+gitignore.Cost(b, ps)
	}
	if s.baseCost > gitignore.MaxCostInForce {
		s.over, s.overSet = opts.BasePath, true
	}
	return s
}

// Below returns a stack for a walk starting at depth offset, sharing the
// base rules and the frames above it.
func (s *Stack) Below(offset int) *Stack {
	n := min(offset, len(s.frames))
	c := *s
	c.frames, c.offset = append([]frame(nil), s.frames[:n]...), offset
	return &c
}

// LoadAbove records the rules of the directories from the workdir root
// down to rootPath's parent; the walk then starts at rootPath.
func (s *Stack) LoadAbove(w *sfs.Workdir, rootPath string) {
	s.frames, s.offset = nil, 0
	if rootPath == "" {
		return
	}
	comps := strings.Split(rootPath, "/")
	parent := frame{}
	for i := range comps {
		d, err := w.OpenDir(strings.Join(comps[:i], "/"))
		if err != nil {
			break
		}
		parent = s.load(d, parent)
		d.Close()
		s.frames = append(s.frames, parent)
	}
	s.offset = len(s.frames)
	if inForce(s.frames)+s.baseCost > gitignore.MaxCostInForce && !s.overSet {
		s.over, s.overSet, s.frames = rootPath, true, nil
	}
}

// Enter records the rules of a directory the walk reads (fs.Ignorer).
func (s *Stack) Enter(d *sfs.Dir) {
	if d.Depth == 0 && s.opts.Above != nil {
		s.LoadAbove(s.opts.Above, d.Path)
	}
	n := min(d.Depth+s.offset, len(s.frames))
	s.frames = s.frames[:n]
	parent := frame{}
	if n > 0 {
		parent = s.frames[n-1]
	}
	fr := s.load(d, parent)
	if fr.cost > 0 && s.baseCost+inForce(s.frames)+fr.cost > gitignore.MaxCostInForce && !s.overSet {
		s.over, s.overSet = d.Path, true
	}
	s.frames = append(s.frames, fr)
}

// Push adds the rules of the next directory down, parsed from data
// (the .gitignore of the directory whose path components are dir), for a
// caller that reads the files itself; the bound is not applied.
func (s *Stack) Push(data []byte, dir []string) {
	s.frames = append(s.frames, frame{patterns: gitignore.Parse(data, dir)})
}

// load reads the rules of one directory given its parent's frame.
func (s *Stack) load(d *sfs.Dir, parent frame) frame {
	fr := frame{inRepo: parent.inRepo}
	var dir []string
	if d.Path != "" {
		dir = strings.Split(d.Path, "/")
	}
	if s.opts.Repos {
		if d.Has(".git") {
			fr.inRepo, fr.repoRoot = true, true
			if s.opts.InfoExclude {
				s.add(&fr, d, ".git/info/exclude", dir)
			}
		} else if d.WorkspaceRoot() {
			// A workspace is a checkout without .git: its .gitignore
			// files count as in its repository (.git/info/exclude is
			// the live repository's, not read).
			fr.inRepo, fr.repoRoot = true, true
		}
		if !fr.inRepo {
			return fr
		}
	}
	if s.opts.Nested {
		s.add(&fr, d, ".gitignore", dir)
	}
	return fr
}

// add parses an ignore file of d (the directory whose path components are
// dir) into fr. An unreadable file contributes nothing, or its
// skip-worktree index entry's content (FromIndex).
func (s *Stack) add(fr *frame, d *sfs.Dir, name string, dir []string) {
	data, ok, err := d.ReadControlFile(name, s.opts.MaxFileBytes)
	if (!ok || err != nil) && s.opts.FromIndex != nil {
		data = s.opts.FromIndex(strings.Join(append(dir, name), "/"))
	} else if !ok || err != nil {
		return
	}
	ps := gitignore.Parse(data, dir)
	fr.patterns, fr.cost = append(fr.patterns, ps...), fr.cost+gitignore.Cost(data, ps)
}

func inForce(frames []frame) int {
	n := 0
	for _, f := range frames {
		n += f.cost
	}
	return n
}

// Err is the READ_LIMIT_EXCEEDED error of a walk whose ignore rules went
// over gitignore.MaxCostInForce (every entry from there on counted as
// ignored, so the walk's answer is not to be given), nil otherwise.
func (s *Stack) Err(alias string) error {
	if !s.overSet {
		return nil
	}
	return errs.At(errs.ReadLimitExceeded, alias, s.over, s.opts.OverMsg)
}

// Ignored reports whether the entry (workdir-relative path, '/'-separated)
// met at walk depth depth (its parent's Depth + 1) is ignored
// (fs.Ignorer). The deepest rule that matches decides. Patterns are
// matched against the path itself only: that an excluded directory
// excludes everything below it is the walk's business (git never looks
// inside one).
func (s *Stack) Ignored(path string, isDir bool, depth int) bool {
	if s.overSet {
		return true // the call fails (Err): show nothing more
	}
	frames := s.frames[:min(depth+s.offset, len(s.frames))]
	if len(s.base) == 0 && !hasPatterns(frames) {
		return false // outside a repository, or no rules
	}
	ctx := s.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	for i := len(frames) - 1; i >= 0; i-- {
		ign, ok, err := gitignore.DecideContext(ctx, frames[i].patterns, path, isDir)
		if err != nil {
			return true // cancelled: show nothing more
		}
		if ok {
			return ign
		}
		if frames[i].repoRoot {
			return false
		}
	}
	ign, _, err := gitignore.DecideContext(ctx, s.base, path, isDir)
	return ign || err != nil
}

func hasPatterns(frames []frame) bool {
	for _, f := range frames {
		if len(f.patterns) > 0 {
			return true
		}
	}
	return false
}

// maxFileBytes bounds one .gitignore or info/exclude file a Ripgrep walk
// reads.
const maxFileBytes = 1 << 20

// Ripgrep is the options of search_text's and list_directory's walks:
// ripgrep's defaults (Repos, .git/info/exclude, every .gitignore).
func Ripgrep() Options {
	return Options{Repos: true, InfoExclude: true, Nested: true, MaxFileBytes: maxFileBytes,
		OverMsg: fmt.Sprintf("the .gitignore rules in force here hold more than %d MiB (patterns and text); search with include_ignored, or below this directory", gitignore.MaxCostInForce>>20)}
}

// Filter returns the stack of another walk of w that reads the rules as
// search_text does (list_directory's tree), the .gitignore files above
// the walk's root included; matching stops when ctx (the call's) is done,
// the entry then counting as ignored.
func Filter(ctx context.Context, w *sfs.Workdir) *Stack {
	o := Ripgrep()
	o.Above = w
	return New(ctx, o)
}
