package git

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	sfs "github.com/serverfs/serverfs/fs"
)

// ignoreStack holds the exclude patterns in force during a work-tree walk,
// in git's precedence (lowest first): core.excludesFile (or the default
// $XDG_CONFIG_HOME/git/ignore), .git/info/exclude, then each directory's
// .gitignore from the root down. The last pattern that matches decides.
type ignoreStack struct {
	base   []gitignore.Pattern
	frames [][]gitignore.Pattern // frames[d] = patterns of the directory at depth d
}

func (r *Repo) newIgnoreStack() *ignoreStack {
	s := &ignoreStack{}
	excludes := r.get("core", "", "excludesfile")
	if excludes == "" {
		if x := xdgConfigHome(); x != "" {
			excludes = filepath.Join(x, "git", "ignore")
		}
	} else if rest, ok := strings.CutPrefix(excludes, "~/"); ok {
		excludes = filepath.Join(homeDir(), rest)
	}
	if excludes != "" {
		s.base = append(s.base, parsePatterns(readHostFile(excludes), nil)...)
	}
	if b, err := r.readControl(".git/info/exclude"); err == nil {
		s.base = append(s.base, parsePatterns(b, nil)...)
	}
	return s
}

func homeDir() string { return os.Getenv("HOME") }

// enter loads the .gitignore of a directory the walk enters.
func (s *ignoreStack) enter(d *sfs.Dir) {
	s.frames = s.frames[:min(d.Depth, len(s.frames))]
	var domain []string
	if d.Path != "" {
		domain = strings.Split(d.Path, "/")
	}
	var ps []gitignore.Pattern
	if b, ok, err := d.ReadControlFile(".gitignore", maxConfigBytes); ok && err == nil {
		ps = parsePatterns(b, domain)
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

func match(ps []gitignore.Pattern, path []string, isDir bool) (ignored, decided bool) {
	for j := len(ps) - 1; j >= 0; j-- {
		switch ps[j].Match(path, isDir) {
		case gitignore.Exclude:
			return true, true
		case gitignore.Include:
			return false, true
		}
	}
	return false, false
}

func parsePatterns(data []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		s := strings.TrimSuffix(string(line), "\r")
		if strings.HasPrefix(s, "#") || strings.TrimSpace(s) == "" {
			continue
		}
		ps = append(ps, parsePattern(s, domain))
	}
	return ps
}

// parsePattern is gitignore.ParsePattern with git's meaning of a trailing
// "/**": "dir/**" matches everything inside dir, not dir itself (go-git
// v5.19.3 matches dir too). search/ignore.go carries the same fix.
func parsePattern(line string, domain []string) gitignore.Pattern {
	p := gitignore.ParsePattern(line, domain)
	if t := strings.TrimRight(line, " "); strings.HasPrefix(t, "!") && strings.HasSuffix(t, "/") {
		// go-git matches a pattern against every parent of a path too:
		// right for exclusion (an excluded directory's contents are
		// excluded) but wrong for "!dir/", which re-includes directories
		// only, never the files below them.
		return dirsOnly{p}
	}
	body := strings.TrimPrefix(strings.TrimRight(line, " "), "!")
	prefix, ok := strings.CutSuffix(body, "/**")
	if !ok || prefix == "" || strings.Contains(prefix, "**") {
		return p
	}
	n := 0
	for _, c := range strings.Split(prefix, "/") {
		if c != "" {
			n++
		}
	}
	return contentsOnly{Pattern: p, depth: len(domain) + n}
}

type dirsOnly struct{ gitignore.Pattern }

func (d dirsOnly) Match(path []string, isDir bool) gitignore.MatchResult {
	if !isDir {
		return gitignore.NoMatch
	}
	return d.Pattern.Match(path, isDir)
}

type contentsOnly struct {
	gitignore.Pattern
	depth int
}

func (c contentsOnly) Match(path []string, isDir bool) gitignore.MatchResult {
	if len(path) <= c.depth {
		return gitignore.NoMatch
	}
	return c.Pattern.Match(path, isDir)
}
