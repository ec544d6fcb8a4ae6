package git

import (
	"bytes"
	"os"
	"strings"

	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/internal/gitignore"
)

// Attributes. A commit stores a file's bytes as they are; git would first
// run the "clean" conversions its attributes select. Those that change
// bytes are refused unless they cannot change this content.

// attrRule is one line of a .gitattributes file: a pattern and the
// attributes it sets ("text", "-text", "eol=lf", "!filter").
type attrRule struct {
	pattern gitignore.Pattern
	attrs   []string
}

// loadAttrRules reads the attribute files that apply to path, lowest
// precedence first: the operator's (globalAttrs), every .gitattributes
// from the root down to the path's directory, then .git/info/attributes.
func (r *Repo) loadAttrRules(path string) ([]attrRule, error) {
	comps := strings.Split(path, "/")
	rules := append([]attrRule(nil), r.globalAttrs...)
	for i := 0; i < len(comps); i++ {
		dir := comps[:i]
		name := strings.Join(append(append([]string{}, dir...), ".gitattributes"), "/")
		b, err := r.readControl(name)
		if errs.CodeOf(err) == errs.NotAFile {
			// A directory: git opens it and reads no line.
			continue
		}
		if err != nil {
			return nil, err
		}
		rules = append(rules, parseAttrs(b, dir)...)
	}
	b, err := r.readControl(".git/info/attributes")
	if err != nil {
		return nil, err
	}
	return append(rules, parseAttrs(b, nil)...), nil
}

// loadGlobalAttrs reads the attribute files below the repository's, as
// git does: the system file /etc/gitattributes (unless GIT_ATTR_NOSYSTEM
// is set), then core.attributesFile or its default
// $XDG_CONFIG_HOME/git/attributes. A core.attributesFile set by the
// repository is read only beneath the workdir root (config.go).
func (r *Repo) loadGlobalAttrs() []attrRule {
	var rules []attrRule
	if os.Getenv("GIT_ATTR_NOSYSTEM") == "" {
		rules = parseAttrs(readHostFile("/etc/gitattributes"), nil)
	}
	return append(rules, parseAttrs(r.configFile("core", "attributesfile", xdgGitFile("attributes")), nil)...)
}

func parseAttrs(data []byte, base []string) []attrRule {
	var rules []attrRule
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		fields := strings.Fields(strings.TrimSuffix(string(line), "\r"))
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") || strings.HasPrefix(fields[0], "[attr]") {
			continue
		}
		p, ok := gitignore.ParseLine(fields[0], base)
		if !ok || p.Negate() {
			continue // git ignores negative patterns in attributes
		}
		rules = append(rules, attrRule{pattern: p, attrs: fields[1:]})
	}
	return rules
}

// attrState is the final state of each attribute for a path: "set",
// "unset", a value, or absent (unspecified). The last rule that mentions
// an attribute wins. The macro "binary" means -text -diff -merge.
func attrState(rules []attrRule, path string) map[string]string {
	state := map[string]string{}
	for _, r := range rules {
		if !r.pattern.Match(path, false) {
			continue
		}
		for _, a := range r.attrs {
			switch {
			case a == "binary":
				state["text"] = "unset"
			case strings.HasPrefix(a, "-"):
				state[a[1:]] = "unset"
			case strings.HasPrefix(a, "!"):
				delete(state, a[1:])
			case strings.Contains(a, "="):
				k, v, _ := strings.Cut(a, "=")
				state[k] = v
			default:
				state[a] = "set"
			}
		}
	}
	return state
}

// conversionProblem says why committing content at path would differ from
// git add, or "" when it would not: a filter driver (always), a
// working-tree-encoding (always), line-ending normalisation (text, eol,
// crlf) of content holding a CR, $Id$ expansion of content holding "$Id".
// With content nil, only what needs no content (asked before reading).
func conversionProblem(state map[string]string, content *contentScan) string {
	if v, ok := state["filter"]; ok && v != "unset" {
		return "its attributes select the filter " + v + " (e.g. Git LFS), which ServerFS does not run"
	}
	if v, ok := state["working-tree-encoding"]; ok && v != "unset" {
		return "its attributes set working-tree-encoding=" + v
	}
	if content == nil {
		return ""
	}
	normalises := false
	if v, ok := state["text"]; ok && v != "unset" {
		normalises = true
	}
	if v, ok := state["eol"]; ok && v != "unset" && state["text"] != "unset" {
		normalises = true
	}
	if v, ok := state["crlf"]; ok && v != "unset" {
		normalises = true
	}
	if normalises && content.cr {
		return "its attributes ask git to normalise line endings (text/eol) and it contains CR bytes"
	}
	if v, ok := state["ident"]; ok && v != "unset" && content.id {
		return "its attributes set ident and it contains $Id"
	}
	return ""
}

// contentScan notes, as content streams through it, what
// conversionProblem asks about: a CR byte, the string "$Id".
type contentScan struct {
	cr, id bool
	tail   []byte // the last bytes written, for "$Id" across writes
}

var idMark = []byte("$Id")

func (s *contentScan) Write(p []byte) (int, error) {
	if !s.cr && bytes.IndexByte(p, '\r') >= 0 {
		s.cr = true
	}
	if !s.id {
		var j [4]byte
		n := copy(j[:], s.tail)
		n += copy(j[n:], p[:min(len(p), 2)])
		s.id = bytes.Contains(j[:n], idMark) || bytes.Contains(p, idMark)
		t := append(s.tail, p[max(0, len(p)-2):]...)
		s.tail = append(s.tail[:0:0], t[max(0, len(t)-2):]...)
	}
	return len(p), nil
}
