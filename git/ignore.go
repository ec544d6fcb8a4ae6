package git

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/gitignore"
)

// ignoreStack holds the exclude patterns in force during a work-tree walk,
// in git's precedence (lowest first): core.excludesFile (or the default
// $XDG_CONFIG_HOME/git/ignore), .git/info/exclude, then each directory's
// .gitignore from the root down. Within that order the last pattern that
// matches a path decides, as in git's dir.c. Patterns are matched against
// the path itself only; that an excluded directory excludes everything
// below it is the walk's business (git never looks inside one).
type ignoreStack struct {
	base     []gitignore.Pattern
	baseCost int
	frames   [][]gitignore.Pattern // frames[d] = patterns of the directory at depth d
	costs    []int                 // costs[d] = gitignore.Cost of frames[d]
	// over is the directory whose .gitignore would have taken the rules
	// in force past gitignore.MaxCostInForce: from then on every path
	// counts as ignored and the scan fails with READ_LIMIT_EXCEEDED
	// (overErr) instead of answering with some of the rules.
	over    string
	overSet bool
	// fromIndex returns the content of a .gitignore that cannot be read
	// from the work tree (absent, or a symlink, which git does not
	// follow) when its index entry is skip-worktree, as git's dir.c
	// does for sparse checkouts; nil otherwise.
	fromIndex func(path string) []byte
	// ctx bounds matching (a path against tens of thousands of patterns
	// costs milliseconds): once it is done a path counts as ignored and
	// the walk, which looks at ctx between entries, ends with a timeout.
	// Git's answer is kept (no cap on an ignore file): only the work is
	// bounded. nil for no bound.
	ctx context.Context
	// offset is the depth of the walk's start directory below the root
	// (a walk of a subdirectory counts depths from there).
	offset int
}

// below returns a stack for a walk starting at depth offset, sharing the
// repository-wide rules and the frames above it.
func (s *ignoreStack) below(offset int) *ignoreStack {
	n := min(offset, len(s.frames))
	return &ignoreStack{base: s.base, baseCost: s.baseCost, frames: append([][]gitignore.Pattern(nil), s.frames[:n]...),
		costs: append([]int(nil), s.costs[:n]...), fromIndex: s.fromIndex, offset: offset, ctx: s.ctx, over: s.over, overSet: s.overSet}
}

// newIgnoreStack loads the repository-wide rules; fromIndex may be nil.
func (r *Repo) newIgnoreStack(fromIndex func(string) []byte) *ignoreStack {
	s := &ignoreStack{fromIndex: fromIndex}
	// core.excludesFile, or the default $XDG_CONFIG_HOME/git/ignore;
	// a repository's own value is confined to the workdir (config.go).
	b := r.configFile("core", "excludesfile", xdgGitFile("ignore"))
	ps := gitignore.Parse(b, nil)
	s.base, s.baseCost = ps, gitignore.Cost(b, ps)
	if b, err := r.readControl(".git/info/exclude"); err == nil {
		ps := gitignore.Parse(b, nil)
		s.base, s.baseCost = append(s.base, ps...), s.baseCost+gitignore.Cost(b, ps)
	}
	if s.baseCost > gitignore.MaxCostInForce {
		s.over, s.overSet = ".git/info/exclude", true
	}
	return s
}

// enter loads the .gitignore of a directory the walk enters.
func (s *ignoreStack) enter(d *sfs.Dir) {
	n := min(d.Depth+s.offset, len(s.frames))
	s.frames, s.costs = s.frames[:n], s.costs[:n]
	var base []string
	if d.Path != "" {
		base = strings.Split(d.Path, "/")
	}
	var ps []gitignore.Pattern
	var b []byte
	if data, ok, err := d.ReadControlFile(".gitignore", maxConfigBytes); ok && err == nil {
		b = data
	} else if s.fromIndex != nil {
		b = s.fromIndex(strings.Join(append(base, ".gitignore"), "/"))
	}
	ps = gitignore.Parse(b, base)
	cost := gitignore.Cost(b, ps)
	inForce := s.baseCost + cost
	for _, c := range s.costs {
		inForce += c
	}
	if cost > 0 && inForce > gitignore.MaxCostInForce && !s.overSet {
		s.over, s.overSet = d.Path, true
	}
	s.frames, s.costs = append(s.frames, ps), append(s.costs, cost)
}

// overErr is the error of a scan whose ignore rules went over the bound,
// nil if they did not.
func (s *ignoreStack) overErr(alias string) error {
	if !s.overSet {
		return nil
	}
	return &sfs.Error{Code: sfs.CodeReadLimitExceeded, Workdir: alias, Path: s.over,
		Msg: fmt.Sprintf("the ignore rules in force here hold more than %d MiB (patterns and text); git status is not computed with part of them", gitignore.MaxCostInForce>>20)}
}

// skipWorktreeBlobs returns the fromIndex function of an ignore stack for
// the index entries given (path -> entry).
func (r *Repo) skipWorktreeBlobs(entry func(path string) *index.Entry) func(string) []byte {
	return func(p string) []byte {
		e := entry(p)
		if e == nil || !e.SkipWorktree || e.Mode == filemode.Symlink {
			return nil
		}
		// Its size from the object header first: a large one is not read
		// (nor inflated) at all.
		data, err := r.readBlob(e.Hash, maxConfigBytes)
		if err != nil {
			return nil
		}
		return data
	}
}

// ignored reports whether the path ('/'-separated) is excluded. depth is the
// number of directories above it in the walk (its parent's Depth + 1).
func (s *ignoreStack) ignored(path string, isDir bool, depth int) bool {
	if s.overSet {
		return true // the scan fails (overErr)
	}
	frames := s.frames[:min(depth+s.offset, len(s.frames))]
	ctx := s.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	for i := len(frames) - 1; i >= 0; i-- {
		m, ok, err := gitignore.DecideContext(ctx, frames[i], path, isDir)
		if err != nil {
			return true
		}
		if ok {
			return m
		}
	}
	m, _, err := gitignore.DecideContext(ctx, s.base, path, isDir)
	return m || err != nil
}
