package search

import (
	"context"
	"fmt"
	"strings"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/gitignore"
)

// maxIgnoreFileBytes bounds one .gitignore or info/exclude file.
const maxIgnoreFileBytes = 1 << 20

// ignoreFrame holds the ignore rules one directory contributes.
type ignoreFrame struct {
	inRepo   bool                // this directory is in a git work tree
	repoRoot bool                // this directory holds ".git": the rules of the directories above it do not apply
	patterns []gitignore.Pattern // in increasing priority
	cost     int                 // gitignore.Cost of the patterns
}

// ignoreRules applies git's ignore rules the way ripgrep does by default:
// only inside a git work tree (a directory holding ".git", or below one),
// from ".gitignore" in every directory and ".git/info/exclude" of the
// repository root, deeper files taking precedence. Patterns are parsed and
// matched by the gitignore package, the matcher git/ checks against git.
// frames[i] belongs to the walk directory at
// depth i; ancestors are the directories between the workdir root and the
// search root.
type ignoreRules struct {
	// ctx is the call's: matching a path against a huge ignore file
	// stops when it is done (the entry then counts as ignored, and the
	// walk ends at its next look at ctx). nil for no bound.
	ctx context.Context
	// over is the ignore file (workdir-relative) whose rules would have
	// taken those in force past gitignore.MaxCostInForce; once set,
	// every entry counts as ignored and the caller refuses the call
	// (overErr): rules applied in part would give a wrong answer.
	over      string
	overSet   bool
	ancestors []ignoreFrame
	frames    []ignoreFrame
}

// loadFrame reads the rules of one directory given its parent's frame.
func loadFrame(d *sfs.Dir, parent ignoreFrame) ignoreFrame {
	fr := ignoreFrame{inRepo: parent.inRepo}
	var domain []string
	if d.Path != "" {
		domain = strings.Split(d.Path, "/")
	}
	if d.Has(".git") {
		fr.inRepo, fr.repoRoot = true, true
		ps, cost := readPatterns(d, ".git/info/exclude", domain)
		fr.patterns, fr.cost = append(fr.patterns, ps...), fr.cost+cost
	} else if d.WorkspaceRoot() {
		// A workspace is a checkout without .git: its .gitignore files
		// count as in its repository (.git/info/exclude is the live
		// repository's, not read).
		fr.inRepo, fr.repoRoot = true, true
	}
	if fr.inRepo {
		ps, cost := readPatterns(d, ".gitignore", domain)
		fr.patterns, fr.cost = append(fr.patterns, ps...), fr.cost+cost
	}
	return fr
}

// readPatterns parses an ignore file of the directory whose path
// components are domain, and their gitignore.Cost. An unreadable file
// contributes nothing.
func readPatterns(d *sfs.Dir, name string, domain []string) ([]gitignore.Pattern, int) {
	data, ok, err := d.ReadControlFile(name, maxIgnoreFileBytes)
	if !ok || err != nil {
		return nil, 0
	}
	ps := gitignore.Parse(data, domain)
	return ps, gitignore.Cost(data, ps)
}

// setAncestors records the rules of the directories above the walk.
func (r *ignoreRules) setAncestors(frames []ignoreFrame, rootPath string) {
	r.ancestors = frames
	if cost := inForce(frames); cost > gitignore.MaxCostInForce {
		r.over, r.overSet, r.ancestors = rootPath, true, nil
	}
}

func inForce(frames []ignoreFrame) int {
	n := 0
	for _, f := range frames {
		n += f.cost
	}
	return n
}

// overErr is the error of a call whose ignore rules went over the bound,
// nil if they did not.
func (r *ignoreRules) overErr(alias string) error {
	if !r.overSet {
		return nil
	}
	return &sfs.Error{Code: sfs.CodeReadLimitExceeded, Workdir: alias, Path: r.over,
		Msg: fmt.Sprintf("the .gitignore rules in force here hold more than %d MiB (patterns and text); search with include_ignored, or below this directory", gitignore.MaxCostInForce>>20)}
}

// enter records the rules of a walk directory at depth d.Depth.
func (r *ignoreRules) enter(d *sfs.Dir) {
	r.frames = r.frames[:min(d.Depth, len(r.frames))]
	parent := ignoreFrame{}
	if len(r.frames) > 0 {
		parent = r.frames[len(r.frames)-1]
	} else if len(r.ancestors) > 0 {
		parent = r.ancestors[len(r.ancestors)-1]
	}
	fr := loadFrame(d, parent)
	if fr.cost > 0 && inForce(r.frames)+inForce(r.ancestors)+fr.cost > gitignore.MaxCostInForce && !r.overSet {
		r.over, r.overSet = d.Path, true
	}
	r.frames = append(r.frames, fr)
}

// ignored reports whether the entry (workdir-relative components) met at
// walk depth depth is ignored. The deepest rule that matches decides; as in
// ripgrep, the rules stop at the nearest repository root (a nested
// repository does not inherit the rules of the one around it).
func (r *ignoreRules) ignored(relPath string, isDir bool, depth int) bool {
	if r.overSet {
		return true // the call fails (overErr): show nothing more
	}
	frames := r.frames[:min(depth, len(r.frames))]
	if !hasPatterns(frames) && !hasPatterns(r.ancestors) {
		return false // outside a repository, or no rules: no path to split
	}
	// check returns (ignored, decided); decided is also true when a
	// repository root ends the search without a matching rule.
	ctx := r.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	check := func(frames []ignoreFrame) (bool, bool) {
		for i := len(frames) - 1; i >= 0; i-- {
			ign, ok, err := gitignore.DecideContext(ctx, frames[i].patterns, relPath, isDir)
			if err != nil {
				return true, true // cancelled: show nothing more
			}
			if ok {
				return ign, true
			}
			if frames[i].repoRoot {
				return false, true
			}
		}
		return false, false
	}
	if ign, ok := check(frames); ok {
		return ign
	}
	ign, _ := check(r.ancestors)
	return ign
}

func hasPatterns(frames []ignoreFrame) bool {
	for _, f := range frames {
		if len(f.patterns) > 0 {
			return true
		}
	}
	return false
}
