package git

import (
	"regexp"
	"strings"

	"github.com/serverfs/serverfs/internal/unidiff"
)

// Hunk headers carry the function a hunk is in, as git diff prints it
// (`@@ -10,6 +10,7 @@ func (d *Dialer) DialContext`): the line git's
// diff driver finds above the hunk. The driver is the one a path's `diff`
// attribute names: its diff.<name>.xfuncname (or the older funcname) from
// the configuration, else git's built-in pattern of that name, else git's
// default rule (a line starting with a letter, '_' or '$').

// funcNameFor returns the function-line finder for path; drivers holds
// the finders already built for this diff, by driver name.
func (r *Repo) funcNameFor(path string, drivers map[string]unidiff.FuncName) unidiff.FuncName {
	rules, err := r.loadAttrRules(path)
	if err != nil {
		return unidiff.DefaultFuncName
	}
	driver := attrState(rules, path)["diff"]
	switch driver {
	case "", "set", "unset":
		// unset (-diff) makes git treat the file as binary; it is diffed
		// as text here, with the default rule.
		return unidiff.DefaultFuncName
	}
	if fn, ok := drivers[driver]; ok {
		return fn
	}
	fn := r.driverFuncName(driver)
	drivers[driver] = fn
	return fn
}

// driverFuncName builds the finder of a named driver: the configured
// pattern first, as git lets the configuration override a built-in one.
func (r *Repo) driverFuncName(driver string) unidiff.FuncName {
	if p := r.get("diff", driver, "xfuncname"); p != "" {
		return patternFuncName(p, false)
	}
	if p := r.get("diff", driver, "funcname"); p != "" {
		return patternFuncName(breToERE(p), false)
	}
	if d, ok := builtinDrivers[driver]; ok {
		return patternFuncName(d.pattern, d.icase)
	}
	return unidiff.DefaultFuncName
}

// patternFuncName compiles a driver's pattern as git does: one regular
// expression a line, a line starting with '!' rejecting what it matches,
// the first that matches deciding; the text shown is the first group's
// match, or the whole match. git's expressions are POSIX (leftmost
// longest); one that does not compile gives no function text (git stops
// the diff with an error instead).
func patternFuncName(pattern string, icase bool) unidiff.FuncName {
	type rule struct {
		re     *regexp.Regexp
		negate bool
	}
	var rules []rule
	for _, line := range strings.Split(pattern, "\n") {
		negate := strings.HasPrefix(line, "!")
		if negate {
			line = line[1:]
		}
		expr := posixToGo(line)
		if icase {
			expr = "(?i)" + expr
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return func([]byte) (string, bool) { return "", false }
		}
		re.Longest()
		rules = append(rules, rule{re, negate})
	}
	return func(line []byte) (string, bool) {
		line = trimEOL(line)
		for _, r := range rules {
			m := r.re.FindSubmatchIndex(line)
			if m == nil {
				continue
			}
			if r.negate {
				return "", false
			}
			lo, hi := m[0], m[1]
			if len(m) >= 4 && m[2] >= 0 {
				lo, hi = m[2], m[3]
			}
			return unidiff.TrimFuncText(line[lo:hi]), true
		}
		return "", false
	}
}

// trimEOL drops a line's "\n" or "\r\n": git matches without them.
func trimEOL(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
	}
	return line
}

// posixToGo rewrites a POSIX extended expression for Go's regexp: inside
// a bracket expression a backslash is itself in POSIX, an escape in Go.
func posixToGo(expr string) string {
	var b strings.Builder
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		if c == '\\' && i+1 < len(expr) {
			b.WriteByte(c)
			b.WriteByte(expr[i+1])
			i++
			continue
		}
		if c != '[' {
			b.WriteByte(c)
			continue
		}
		i = copyBracket(&b, expr, i)
	}
	return b.String()
}

// copyBracket copies the bracket expression starting at expr[i] ('['),
// escaping its backslashes, and returns the index of its closing ']'.
func copyBracket(b *strings.Builder, expr string, i int) int {
	b.WriteByte('[')
	j := i + 1
	if j < len(expr) && expr[j] == '^' {
		b.WriteByte('^')
		j++
	}
	if j < len(expr) && expr[j] == ']' {
		b.WriteString(`\]`)
		j++
	}
	for ; j < len(expr); j++ {
		switch c := expr[j]; {
		case c == ']':
			b.WriteByte(']')
			return j
		case c == '\\':
			b.WriteString(`\\`)
		case c == '[' && j+1 < len(expr) && (expr[j+1] == ':' || expr[j+1] == '.' || expr[j+1] == '='):
			end := strings.Index(expr[j+2:], string(expr[j+1])+"]")
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			b.WriteString(expr[j : j+2+end+2])
			j += 2 + end + 1
		case c == '[':
			b.WriteString(`\[`)
		default:
			b.WriteByte(c)
		}
	}
	return j
}

// breToERE rewrites a POSIX basic expression (diff.<driver>.funcname) as
// an extended one: \( \) \{ \} \| \+ \? are the operators, their bare
// characters literals.
func breToERE(expr string) string {
	var b strings.Builder
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case c == '\\' && i+1 < len(expr) && strings.IndexByte("(){}|+?", expr[i+1]) >= 0:
			b.WriteByte(expr[i+1])
			i++
		case c == '\\' && i+1 < len(expr):
			b.WriteByte(c)
			b.WriteByte(expr[i+1])
			i++
		case strings.IndexByte("(){}|+?", c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '[':
			j := strings.IndexByte(expr[i+1:], ']')
			if j < 0 {
				b.WriteString(expr[i:])
				return b.String()
			}
			b.WriteString(expr[i : i+1+j+1])
			i += j + 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
