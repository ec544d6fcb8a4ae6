// Package revision parses the revision arguments the history tools
// accept: HEAD, a local branch, a tag, or a commit id (whole, or a unique
// prefix of at least 7 hex digits). Everything else git's revision syntax
// allows (options, ranges, ~, ^, :, @{...}, other refs) is refused before
// anything is read.
package revision

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/serverfs/serverfs/git/internal/refs"
	"github.com/serverfs/serverfs/internal/errs"
)

// MaxLen bounds a revision argument.
const MaxLen = 256

// Rev is what a revision argument may name, in the order git tries it.
type Rev struct {
	// Head: the argument is empty or HEAD.
	Head bool
	// Refs are the refs to look up, first found wins: the tag before the
	// branch of the same name, as in git.
	Refs []string
	// Prefix is a commit id or a prefix of one (7 to 40 lower-case hex
	// digits), tried when no ref matches.
	Prefix string
	// ShortHex: hex digits too few for a prefix; refused when no ref
	// matches.
	ShortHex bool
}

// Parse reads a revision argument, or says why it is refused
// (INVALID_ARGUMENT).
func Parse(rev string) (Rev, error) {
	if rev == "" || rev == "HEAD" {
		return Rev{Head: true}, nil
	}
	if len(rev) > MaxLen || !utf8.ValidString(rev) {
		return Rev{}, errs.New(errs.InvalidArgument, "rev is too long or not UTF-8")
	}
	if strings.HasPrefix(rev, "-") {
		return Rev{}, errs.New(errs.InvalidArgument, fmt.Sprintf("rev %q looks like an option; name a branch, a tag or a commit id", rev))
	}
	if strings.Contains(rev, "@{") || strings.Contains(rev, "..") || strings.ContainsAny(rev, "~^:?*[\\ \t\n\x7f") {
		return Rev{}, errs.New(errs.InvalidArgument, fmt.Sprintf("rev %q uses revision syntax (ranges, ~, ^, :, @{...}) that is not accepted; name a branch, a tag or a commit id", rev))
	}
	for _, c := range rev {
		if c < 0x20 {
			return Rev{}, errs.New(errs.InvalidArgument, "rev contains a control character")
		}
	}
	var r Rev
	switch {
	case strings.HasPrefix(rev, "refs/heads/") || strings.HasPrefix(rev, "refs/tags/"):
		r.Refs = []string{rev}
	case strings.HasPrefix(rev, "refs/"):
		return Rev{}, errs.New(errs.InvalidArgument, fmt.Sprintf("rev %q is outside refs/heads and refs/tags; only local branches and tags are read", rev))
	default:
		r.Refs = []string{"refs/tags/" + rev, "refs/heads/" + rev}
	}
	for _, n := range r.Refs {
		if !refs.ValidName(n) {
			return Rev{}, errs.New(errs.InvalidArgument, fmt.Sprintf("rev %q is not a valid branch or tag name", rev))
		}
	}
	switch {
	case isHex(rev) && len(rev) >= 7 && len(rev) <= 40:
		r.Prefix = strings.ToLower(rev)
	case isHex(rev) && len(rev) < 7:
		r.ShortHex = true
	}
	return r, nil
}

// PrefixBytes is the whole bytes of a hex prefix (an object store
// compares bytes; the odd digit is the caller's to check).
func PrefixBytes(s string) []byte {
	b := make([]byte, len(s)/2)
	for i := range b {
		v, _ := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
		b[i] = byte(v)
	}
	return b
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s != ""
}
