// Package gitignore parses and matches the patterns of gitignore files
// (and the pattern column of gitattributes) as git's dir.c and wildmatch
// do; git/ checks it against git itself on randomized repositories, search/
// against ripgrep. It knows nothing about repositories or walks: package
// ignore stacks the patterns of each directory and decides precedence
// (Decide).
//
// Ignore files are agents' input: parsing compiles nothing (patterns keep
// their text and are matched by wildmatch, a port of git's), DecideContext
// stops at the call's deadline, and Cost/MaxCostInForce let a walk bound
// the rules it holds at once.
package gitignore

import (
	"context"
	"strings"
	"unsafe"
)

// Pattern is one line of a gitignore file, as git's dir.c reads it.
// Parsing compiles nothing: a pattern keeps its text and is matched by
// wildmatch (a port of git's wildmatch.c), so a pattern costs its bytes
// plus a small header, and parsing is linear in the file.
type Pattern struct {
	negate   bool
	dirOnly  bool
	pathname bool   // the pattern has a '/' (besides a trailing one): matched against the path below base
	kind     kind   // how text matches, the cheapest way that is exact
	prefix   int32  // a pathname glob's leading bytes without wildcard, compared first
	baseDir  string // the directory holding the ignore file, "" for the root
	text     string // the pattern, without '!', leading '/' and trailing '/' (the suffix only for kindSuffix)
}

// kind is how a Pattern's text matches, as dir.c's PATTERN_FLAG_NODIR,
// PATTERN_FLAG_ENDSWITH and nowildcardlen pick the cheapest exact test.
type kind uint8

const (
	kindLiteral kind = iota // no wildcard: compared as is
	kindSuffix              // "*<literal>" on a base name: a suffix test
	kindGlob                // everything else, for wildmatch
)

// ParseLine parses one line of an ignore file in the directory base (its
// path components below the repository root, nil for the root); ok is
// false for blank lines, comments and patterns git cannot match.
func ParseLine(line string, base []string) (Pattern, bool) {
	return parseLine(line, strings.Join(base, "/"))
}

func parseLine(line, baseDir string) (Pattern, bool) {
	line = strings.TrimSuffix(line, "\r")
	line = trimTrailingSpaces(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return Pattern{}, false
	}
	p := Pattern{baseDir: baseDir}
	if strings.HasPrefix(line, "!") {
		p.negate, line = true, line[1:]
	}
	if strings.HasSuffix(line, "/") && !strings.HasSuffix(line, "\\/") {
		p.dirOnly, line = true, strings.TrimRight(line, "/")
	}
	if line == "" {
		return Pattern{}, false
	}
	if strings.Contains(line, "/") {
		p.pathname = true
		line = strings.TrimPrefix(line, "/")
	}
	switch {
	case !hasWildcard(line):
		p.kind, p.text = kindLiteral, line
	case !p.pathname && len(line) > 1 && line[0] == '*' && !hasWildcard(line[1:]):
		p.kind, p.text = kindSuffix, line[1:]
	default:
		p.kind, p.text = kindGlob, line
		if p.pathname {
			p.prefix = int32(strings.IndexAny(line, "*?[\\"))
		}
	}
	return p, true
}

// trimTrailingSpaces drops trailing spaces unless backslash-escaped.
func trimTrailingSpaces(s string) string {
	end := len(s)
	for end > 0 && s[end-1] == ' ' {
		if end >= 2 && s[end-2] == '\\' {
			break
		}
		end--
	}
	return s[:end]
}

func hasWildcard(s string) bool { return strings.ContainsAny(s, "*?[\\") }

// Negate reports whether the pattern re-includes ("!pattern").
func (p *Pattern) Negate() bool { return p.negate }

// Match reports whether the pattern matches path (relative to the
// repository root, '/'-separated) itself; isDir for directories. That an
// excluded directory excludes what it holds is the walk's business (git
// never looks inside one).
func (p *Pattern) Match(path string, isDir bool) bool {
	rest, ok := below(path, p.baseDir)
	return ok && p.match(rest, rest[strings.LastIndexByte(rest, '/')+1:], isDir)
}

// below returns path relative to the directory dir ("" for the root).
func below(path, dir string) (string, bool) {
	if dir == "" {
		return path, true
	}
	if len(path) <= len(dir) || path[len(dir)] != '/' || path[:len(dir)] != dir {
		return "", false
	}
	return path[len(dir)+1:], true
}

// match matches rest (the path below the pattern's base directory) and
// its base name.
func (p *Pattern) match(rest, name string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	target := rest
	if !p.pathname {
		target = name
	}
	switch {
	case p.kind == kindGlob:
		if n := int(p.prefix); n > 0 {
			if len(target) < n || target[:n] != p.text[:n] {
				return false
			}
			return wildmatch(p.text[n:], target[n:], p.pathname) == wmMatch
		}
		return wildmatch(p.text, target, p.pathname) == wmMatch
	case p.kind == kindSuffix:
		return strings.HasSuffix(target, p.text)
	default:
		return target == p.text
	}
}

// Parse parses an ignore file's content (see ParseLine).
func Parse(data []byte, base []string) []Pattern {
	baseDir := strings.Join(base, "/")
	text := string(data) // one copy: the patterns are slices of it
	ps := make([]Pattern, 0, strings.Count(text, "\n")+1)
	for text != "" {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		if p, ok := parseLine(line, baseDir); ok {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// Decide applies the patterns of one source (lowest priority first) to
// path: the last one that matches decides. decided is false when none
// matches.
func Decide(ps []Pattern, path string, isDir bool) (ignored, decided bool) {
	ignored, decided, _ = DecideContext(context.Background(), ps, path, isDir)
	return ignored, decided
}

// MaxCostInForce bounds the memory of the ignore rules one walk holds at
// once (the files of the directories it is in, see Cost): 24 MiB, room
// for 200,000 patterns or dozens of ordinary large ignore files. Git has
// no such bound; callers that reach it refuse the call rather than apply
// some of the rules (see package ignore).
const MaxCostInForce = 24 << 20

// Cost is the memory that the patterns ps parsed from data hold: the
// one copy of the file they share and a header each.
func Cost(data []byte, ps []Pattern) int {
	if len(ps) == 0 {
		return 0
	}
	return len(data) + len(ps)*int(unsafe.Sizeof(Pattern{}))
}

// checkEvery is how many patterns DecideContext matches between looks at
// its context: a few microseconds of work.
const checkEvery = 256

// DecideContext is Decide bounded by ctx: with tens of thousands of
// patterns one path costs milliseconds, so it looks at ctx every
// checkEvery patterns and returns ctx's error once it is done (ignored
// and decided are then false and mean nothing). Git has no limit on an
// ignore file; callers keep git's answer and bound the work by the
// call's deadline instead.
func DecideContext(ctx context.Context, ps []Pattern, path string, isDir bool) (ignored, decided bool, err error) {
	name := path[strings.LastIndexByte(path, '/')+1:]
	// The patterns of one file share their base directory: the path
	// below it is computed once per run of them.
	dir, rest, in := "", path, true
	for j := len(ps) - 1; j >= 0; j-- {
		if j%checkEvery == 0 && j > 0 {
			if err := ctx.Err(); err != nil {
				return false, false, err
			}
		}
		p := &ps[j]
		if p.baseDir != dir {
			dir = p.baseDir
			rest, in = below(path, dir)
		}
		if in && p.match(rest, name, isDir) {
			return !p.negate, true, nil
		}
	}
	return false, false, nil
}
