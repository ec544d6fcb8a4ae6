package revision

import (
	"strings"
	"testing"

	"github.com/serverfs/serverfs/internal/errs"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		rev  string
		want Rev
	}{
		{"", Rev{Head: true}},
		{"HEAD", Rev{Head: true}},
		{"main", Rev{Refs: []string{"refs/tags/main", "refs/heads/main"}}},
		{"refs/heads/x", Rev{Refs: []string{"refs/heads/x"}}},
		{"DEADBEEF", Rev{Refs: []string{"refs/tags/DEADBEEF", "refs/heads/DEADBEEF"}, Prefix: "deadbeef"}},
		{"abc", Rev{Refs: []string{"refs/tags/abc", "refs/heads/abc"}, ShortHex: true}},
	} {
		got, err := Parse(c.rev)
		if err != nil || strings.Join(got.Refs, ",") != strings.Join(c.want.Refs, ",") || got.Head != c.want.Head || got.Prefix != c.want.Prefix || got.ShortHex != c.want.ShortHex {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.rev, got, err, c.want)
		}
	}
	for _, rev := range []string{"-x", "--all", "a..b", "HEAD~1", "x^", "a:b", "@{1}", "refs/remotes/o/m", "a b", "x\x01", strings.Repeat("a", MaxLen+1), "\xff", "a.lock", "x/"} {
		if _, err := Parse(rev); errs.CodeOf(err) != errs.InvalidArgument {
			t.Errorf("Parse(%q): %v; want INVALID_ARGUMENT", rev, err)
		}
	}
}

// FuzzParse: any argument is accepted with at least one ref or refused
// with INVALID_ARGUMENT; a prefix is 7 to 40 lower-case hex digits.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"main", "HEAD", "v1.2.3", "abcdef0", "refs/tags/x", "a..b", "-n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rev string) {
		r, err := Parse(rev)
		if err != nil {
			if errs.CodeOf(err) != errs.InvalidArgument {
				t.Fatalf("%q: %v", rev, err)
			}
			return
		}
		if !r.Head && len(r.Refs) == 0 {
			t.Fatalf("%q: nothing to look up", rev)
		}
		if r.Prefix != "" && (len(r.Prefix) < 7 || len(r.Prefix) > 40 || strings.ToLower(r.Prefix) != r.Prefix) {
			t.Fatalf("%q: prefix %q", rev, r.Prefix)
		}
	})
}
