package git

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	sfs "github.com/serverfs/serverfs/fs"
)

// ignoreStack holds the exclude patterns in force during a work-tree walk,
// in git's precedence (lowest first): core.excludesFile (or the default
// $XDG_CONFIG_HOME/git/ignore), .git/info/exclude, then each directory's
// .gitignore from the root down. Within that order the last pattern that
// matches a path decides, as in git's dir.c. Patterns are matched against
// the path itself only; that an excluded directory excludes everything
// below it is the walk's business (git never looks inside one).
type ignoreStack struct {
	base   []ignorePattern
	frames [][]ignorePattern // frames[d] = patterns of the directory at depth d
}

func (r *Repo) newIgnoreStack() *ignoreStack {
	s := &ignoreStack{}
	excludes := r.get("core", "", "excludesfile")
	if excludes == "" {
		if x := xdgConfigHome(); x != "" {
			excludes = filepath.Join(x, "git", "ignore")
		}
	} else if rest, ok := strings.CutPrefix(excludes, "~/"); ok {
		excludes = filepath.Join(os.Getenv("HOME"), rest)
	}
	if excludes != "" {
		s.base = append(s.base, parsePatterns(readHostFile(excludes), nil)...)
	}
	if b, err := r.readControl(".git/info/exclude"); err == nil {
		s.base = append(s.base, parsePatterns(b, nil)...)
	}
	return s
}

// enter loads the .gitignore of a directory the walk enters.
func (s *ignoreStack) enter(d *sfs.Dir) {
	s.frames = s.frames[:min(d.Depth, len(s.frames))]
	var base []string
	if d.Path != "" {
		base = strings.Split(d.Path, "/")
	}
	var ps []ignorePattern
	if b, ok, err := d.ReadControlFile(".gitignore", maxConfigBytes); ok && err == nil {
		ps = parsePatterns(b, base)
	}
	s.frames = append(s.frames, ps)
}

// ignored reports whether the path (components) is excluded. depth is the
// number of directories above it in the walk (its parent's Depth + 1).
func (s *ignoreStack) ignored(path []string, isDir bool, depth int) bool {
	frames := s.frames[:min(depth, len(s.frames))]
	for i := len(frames) - 1; i >= 0; i-- {
		if m, ok := match(frames[i], path, isDir); ok {
			return m
		}
	}
	m, _ := match(s.base, path, isDir)
	return m
}

func match(ps []ignorePattern, path []string, isDir bool) (ignored, decided bool) {
	for j := len(ps) - 1; j >= 0; j-- {
		if ps[j].matches(path, isDir) {
			return !ps[j].negate, true
		}
	}
	return false, false
}

func parsePatterns(data []byte, base []string) []ignorePattern {
	var ps []ignorePattern
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		if p, ok := parseIgnoreLine(string(line), base); ok {
			ps = append(ps, p)
		}
	}
	return ps
}
