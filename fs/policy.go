package fs

import (
	"fmt"
	"strings"

	"github.com/serverfs/serverfs/fs/internal/glob"
	"github.com/serverfs/serverfs/internal/errs"
)

// DefaultDenyGlobs is the built-in deny list: secrets and common
// credential files. It applies whatever SERVERFS_ALLOW_HIDDEN says and
// cannot be switched off; SERVERFS_EXTRA_DENY_GLOBS only adds to it.
//
// A pattern without "/" is matched against every path component; a pattern
// with "/" against every suffix of the path ("a/b/c", "b/c", "c"). A
// trailing "/**" also denies the directory itself. Matching is
// case-insensitive.
var DefaultDenyGlobs = []string{
	".env", ".env.*",
	"*.pem", "*.key", "*.p12", "*.pfx",
	"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
	".ssh/**", ".aws/**", ".gnupg/**", ".kube/**",
	".netrc", ".git-credentials", ".pgpass",
}

// Policy decides which workdir-relative paths are reachable at all. The same
// Policy value filters listings, walks and searches, and guards the resolver,
// so no tool can disagree with another about what is visible.
type Policy struct {
	allowHidden bool
	// Component rules, checked for every entry a walk meets, so the
	// common shapes skip the glob engine: exact names, "*suffix" and
	// "prefix*"; anything else is a compiled glob.
	names      map[string]bool
	nameSuffix []string
	namePrefix []string
	component  []*glob.Pattern // matched against each component
	suffix     []*glob.Pattern // matched against each path suffix
}

// NewPolicy compiles the deny list (DefaultDenyGlobs plus extra). An extra
// pattern that does not compile is an error naming the pattern.
func NewPolicy(allowHidden bool, extraDeny []string) (*Policy, error) {
	p := &Policy{allowHidden: allowHidden, names: map[string]bool{}}
	for _, pat := range append(append([]string(nil), DefaultDenyGlobs...), extraDeny...) {
		if err := p.add(pat); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *Policy) add(pat string) error {
	pat = strings.ToLower(strings.Trim(strings.TrimSpace(pat), "/"))
	if pat == "" {
		return fmt.Errorf("empty deny pattern")
	}
	compile := func(s string) (*glob.Pattern, error) {
		g, err := glob.Compile(s)
		if err != nil {
			return nil, fmt.Errorf("deny pattern %q: %v", pat, err)
		}
		return g, nil
	}
	// "x/**" with a one-component x denies every path with a component x
	// (and x itself): a component rule, cheap to check per entry.
	if dir, ok := strings.CutSuffix(pat, "/**"); ok && dir != "" && !strings.Contains(dir, "/") {
		pat = dir
	}
	if !strings.Contains(pat, "/") {
		g, err := compile(pat) // also validates the fast shapes below
		if err != nil {
			return err
		}
		const meta = "*?[]{}\\!,"
		switch {
		case !strings.ContainsAny(pat, meta):
			p.names[pat] = true
		case strings.HasPrefix(pat, "*") && !strings.ContainsAny(pat[1:], meta):
			p.nameSuffix = append(p.nameSuffix, pat[1:])
		case strings.HasSuffix(pat, "*") && !strings.ContainsAny(pat[:len(pat)-1], meta):
			p.namePrefix = append(p.namePrefix, pat[:len(pat)-1])
		default:
			p.component = append(p.component, g)
		}
		return nil
	}
	g, err := compile(pat)
	if err != nil {
		return err
	}
	p.suffix = append(p.suffix, g)
	if dir, ok := strings.CutSuffix(pat, "/**"); ok && dir != "" {
		g, err := compile(dir)
		if err != nil {
			return err
		}
		p.suffix = append(p.suffix, g)
	}
	return nil
}

// AllowHidden reports whether dot-files are reachable.
func (p *Policy) AllowHidden() bool { return p.allowHidden }

// IsHidden reports whether a component name is hidden: it starts with ".".
func IsHidden(name string) bool { return strings.HasPrefix(name, ".") }

// Denied reports whether a cleaned relative path (components) matches the
// deny list.
func (p *Policy) Denied(comps []string) bool {
	for _, c := range comps {
		if p.componentDenied(c) {
			return true
		}
	}
	return p.suffixDenied(comps)
}

// componentDenied matches one component against the component rules.
// strings.ToLower returns its argument without allocating when it is
// already lower-case ASCII, the common case.
func (p *Policy) componentDenied(c string) bool {
	c = strings.ToLower(c)
	if p.names[c] {
		return true
	}
	for _, x := range p.nameSuffix {
		if strings.HasSuffix(c, x) {
			return true
		}
	}
	for _, x := range p.namePrefix {
		if strings.HasPrefix(c, x) {
			return true
		}
	}
	for _, g := range p.component {
		if g.Match(c) {
			return true
		}
	}
	return false
}

func (p *Policy) suffixDenied(comps []string) bool {
	if len(p.suffix) == 0 {
		return false
	}
	lower := strings.ToLower(strings.Join(comps, "/"))
	for {
		for _, g := range p.suffix {
			if g.Match(lower) {
				return true
			}
		}
		i := strings.IndexByte(lower, '/')
		if i < 0 {
			return false
		}
		lower = lower[i+1:]
	}
}

// check applies the policy to a whole cleaned path, in the order the error
// codes promise: deny first (it cannot be lifted), then hidden.
func (p *Policy) check(rp relPath) (errs.Code, string) {
	if p.Denied(rp.comps) {
		return errs.DeniedPath, "is on the deny list of credential files; it cannot be read"
	}
	if !p.allowHidden {
		for _, c := range rp.comps {
			if IsHidden(c) {
				return errs.HiddenPathNotAllowed, "is hidden (a component starts with '.'); hidden paths are not served"
			}
		}
	}
	return "", ""
}

// visible reports whether the entry name inside the (already visible)
// directory dir may be shown. It is the per-entry form of check used by
// listings and walks: only the new component and, when the operator added
// patterns with "/", the suffixes ending in it need checking.
func (p *Policy) visible(dir relPath, name string) bool {
	if !p.allowHidden && IsHidden(name) {
		return false
	}
	if p.componentDenied(name) {
		return false
	}
	if len(p.suffix) == 0 {
		return true
	}
	return !p.suffixDenied(append(append(make([]string, 0, len(dir.comps)+1), dir.comps...), name))
}

// InGitDir reports whether a cleaned workdir-relative path has a ".git"
// component (any case): repository metadata, which no write or commit
// ever touches, whatever the hidden-path setting.
func InGitDir(path string) bool {
	for _, c := range strings.Split(path, "/") {
		if strings.EqualFold(c, ".git") {
			return true
		}
	}
	return false
}

// NewPatterns compiles patterns with the deny list's matching rules (a
// pattern without "/" matches any component, one with "/" any path
// suffix, case-insensitive) but without the built-in list: Denied then
// says whether a path matches one of them. The bridge's reveal lists use
// it.
func NewPatterns(patterns []string) (*Policy, error) {
	p := &Policy{allowHidden: true, names: map[string]bool{}}
	for _, pat := range patterns {
		if err := p.add(pat); err != nil {
			return nil, err
		}
	}
	return p, nil
}
