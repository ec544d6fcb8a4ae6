// Package gitignore parses and matches the patterns of gitignore files
// (and the pattern column of gitattributes) as git's dir.c and wildmatch
// do; git/ checks it against git itself on randomized repositories, search/
// against ripgrep. It knows nothing about repositories or walks: callers
// stack the patterns of each directory and decide precedence (Decide).
package gitignore

import (
	"bytes"
	"regexp"
	"strings"
)

// Pattern is one line of a gitignore file, as git's dir.c reads it.
type Pattern struct {
	negate   bool
	dirOnly  bool
	pathname bool   // the pattern has a '/' (besides a trailing one): matched against the path below base
	baseDir  string // the directory holding the ignore file, "" for the root
	// One of the matchers, the cheapest that is exact.
	literal string         // no wildcard: compared as is
	suffix  string         // "*<literal>" on a base name: a suffix test
	re      *regexp.Regexp // everything else
}

// ParseLine parses one line of an ignore file in the directory base (its
// path components below the repository root, nil for the root); ok is
// false for blank lines, comments and patterns git cannot match.
func ParseLine(line string, base []string) (Pattern, bool) {
	line = strings.TrimSuffix(line, "\r")
	line = trimTrailingSpaces(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return Pattern{}, false
	}
	p := Pattern{baseDir: strings.Join(base, "/")}
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
		p.literal = unescape(line)
	case !p.pathname && len(line) > 1 && line[0] == '*' && !hasWildcard(line[1:]):
		p.suffix = unescape(line[1:])
	default:
		re, err := regexp.Compile("^" + translateGlob(line, p.pathname) + "$")
		if err != nil {
			return Pattern{}, false // git ignores a pattern it cannot match, too
		}
		p.re = re
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

func unescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// translateGlob turns a wildmatch pattern (WM_PATHNAME) into a regular
// expression: '*' and '?' never match '/', '**' as a whole component
// matches any number of directories. Each byte becomes the rune of its
// value (string(c) on a byte), see latin1.
func translateGlob(p string, pathname bool) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '*' && i+1 < len(p) && p[i+1] == '*' && pathname:
			j := i
			for j < len(p) && p[j] == '*' {
				j++
			}
			startSeg := i == 0 || p[i-1] == '/'
			endSeg := j == len(p) || p[j] == '/'
			if !startSeg || !endSeg {
				b.WriteString("[^/]*") // "a**b" is an ordinary star
				i = j - 1
				continue
			}
			switch {
			case j == len(p): // "**" at the end: everything below
				b.WriteString(".*")
			default: // "**/": zero or more directories
				b.WriteString("(?:.*/)?")
				j++ // the '/'
			}
			i = j - 1
		case c == '*':
			for i+1 < len(p) && p[i+1] == '*' {
				i++
			}
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			if cls, n := bracket(p[i:]); n > 0 {
				b.WriteString(cls)
				i += n - 1
			} else {
				b.WriteString(`\[`)
			}
		case c == '\\' && i+1 < len(p):
			i++
			b.WriteString(regexp.QuoteMeta(string(p[i])))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// bracket translates a "[...]" class at the start of s; n is its length
// in s, 0 when it is not closed (then '[' is literal).
func bracket(s string) (string, int) {
	var b strings.Builder
	b.WriteString("[")
	i := 1
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		b.WriteString("^/") // a negated class never matches '/'
		i++
	}
	start := i
	for i < len(s) {
		c := s[i]
		switch {
		case c == ']' && i > start:
			b.WriteString("]")
			return b.String(), i + 1
		case c == '[' && i+1 < len(s) && s[i+1] == ':':
			end := strings.Index(s[i:], ":]")
			if end < 0 {
				return "", 0
			}
			b.WriteString(s[i : i+end+2]) // [:alpha:] is RE2 syntax too
			i += end + 2
			continue
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteString(classChar(s[i]))
		case c == '-' && i > start && i+1 < len(s) && s[i+1] != ']':
			b.WriteByte('-') // a range
		default:
			b.WriteString(classChar(c))
		}
		i++
	}
	return "", 0
}

// classChar is one literal character inside a regexp class.
func classChar(c byte) string {
	if strings.IndexByte(`\^-[]`, c) >= 0 {
		return `\` + string(c)
	}
	return string(c)
}

// latin1 maps each byte of s to the rune of the same value. Git's
// wildmatch works on bytes ('?' is one byte, so it does not match "é");
// the regexps are built the same way (translateGlob writes each pattern
// byte as such a rune), so RE2's rune matching becomes byte matching.
func latin1(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = rune(s[i])
	}
	return string(r)
}

// Negate reports whether the pattern re-includes ("!pattern").
func (p *Pattern) Negate() bool { return p.negate }

// Match reports whether the pattern matches path (relative to the
// repository root, '/'-separated) itself; isDir for directories. That an
// excluded directory excludes what it holds is the walk's business (git
// never looks inside one).
func (p *Pattern) Match(path string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	rest := path
	if p.baseDir != "" {
		if len(path) <= len(p.baseDir) || path[len(p.baseDir)] != '/' || path[:len(p.baseDir)] != p.baseDir {
			return false
		}
		rest = path[len(p.baseDir)+1:]
	}
	target := rest
	if !p.pathname {
		target = rest[strings.LastIndexByte(rest, '/')+1:]
	}
	switch {
	case p.re != nil:
		return p.re.MatchString(latin1(target))
	case p.suffix != "":
		return strings.HasSuffix(target, p.suffix)
	default:
		return target == p.literal
	}
}

// Parse parses an ignore file's content (see ParseLine).
func Parse(data []byte, base []string) []Pattern {
	var ps []Pattern
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		if p, ok := ParseLine(string(line), base); ok {
			ps = append(ps, p)
		}
	}
	return ps
}

// Decide applies the patterns of one source (lowest priority first) to
// path: the last one that matches decides. decided is false when none
// matches.
func Decide(ps []Pattern, path string, isDir bool) (ignored, decided bool) {
	for j := len(ps) - 1; j >= 0; j-- {
		if ps[j].Match(path, isDir) {
			return !ps[j].negate, true
		}
	}
	return false, false
}
