package fs

import (
	"fmt"
	"strings"

	"github.com/gobwas/glob"
)

// DefaultDenyGlobs is the built-in deny list (seed v0.1 §39 plus common
// credential files). It applies whatever SERVERFS_ALLOW_HIDDEN says and
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
	component   []*glob.Pattern // matched against each component
	suffix      []*glob.Pattern // matched against each path suffix
}

// NewPolicy compiles the deny list (DefaultDenyGlobs plus extra). An extra
// pattern that does not compile is an error naming the pattern.
func NewPolicy(allowHidden bool, extraDeny []string) (*Policy, error) {
	p := &Policy{allowHidden: allowHidden}
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
		c := glob.Compiler{Separators: []rune{'/'}, Globstar: true}
		g, err := c.Compile(s)
		if err != nil {
			return nil, fmt.Errorf("deny pattern %q: %v", pat, err)
		}
		return g, nil
	}
	if !strings.Contains(pat, "/") {
		g, err := compile(pat)
		if err != nil {
			return err
		}
		p.component = append(p.component, g)
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
	lower := make([]string, len(comps))
	for i, c := range comps {
		lower[i] = strings.ToLower(c)
	}
	for _, c := range lower {
		for _, g := range p.component {
			if g.Match(c) {
				return true
			}
		}
	}
	if len(p.suffix) == 0 {
		return false
	}
	for i := range lower {
		s := strings.Join(lower[i:], "/")
		for _, g := range p.suffix {
			if g.Match(s) {
				return true
			}
		}
	}
	return false
}

// check applies the policy to a whole cleaned path, in the order the error
// codes promise: deny first (it cannot be lifted), then hidden.
func (p *Policy) check(rp relPath) (Code, string) {
	if p.Denied(rp.comps) {
		return CodeDeniedPath, "is on the deny list of credential files; it cannot be read"
	}
	if !p.allowHidden {
		for _, c := range rp.comps {
			if IsHidden(c) {
				return CodeHiddenPathNotAllowed, "is hidden (a component starts with '.'); hidden paths are not served"
			}
		}
	}
	return "", ""
}

// visible reports whether the entry name inside the (already visible)
// directory dir may be shown. It is the per-entry form of check used by
// listings and walks.
func (p *Policy) visible(dir relPath, name string) bool {
	if !p.allowHidden && IsHidden(name) {
		return false
	}
	return !p.Denied(append(append(make([]string, 0, len(dir.comps)+1), dir.comps...), name))
}
