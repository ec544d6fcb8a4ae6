package object

import (
	"math/rand"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	gogit "github.com/go-git/go-git/v5/plumbing/object"
)

// TestQuickSignatureMatchesGoGit: DecodeSignature reads every signature
// line, well formed or not, as go-git's Signature.Decode does.
func TestQuickSignatureMatchesGoGit(t *testing.T) {
	lines := []string{
		"A U Thor <a@example.com> 1700000000 +0000", "  Ünï Côdé  <u@example.com> 1 -0130", "N <e> 1700000000 -0030",
		"N <e> 1700000000 +1400", "N <e> 1700000000 +99", "N <e> 1700000000", "N <e> ", "N <e>", "N e> 1 +0000", "N <e 1 +0000",
		"N >e< 1 +0000", "<> 0 +0000", "N <a<b>c> 12 +0100 extra", "N <e> -5 +0000", "N <e> x +0000", "N <e>  1 +0000",
		"N <e> 99999999999999999999 +0000", "N <e> 1 +00x0", "N <e> 1 -9959", "", "N <e> 1 +0000\r",
	}
	rng := rand.New(rand.NewSource(3))
	for range 3000 {
		b := []byte(lines[rng.Intn(3)])
		for range 1 + rng.Intn(3) {
			b[rng.Intn(len(b))] = " <>+-0123456789x"[rng.Intn(16)]
		}
		lines = append(lines, string(b))
	}
	var zones Zones
	for _, l := range lines {
		var want gogit.Signature
		want.Decode([]byte(l))
		got := DecodeSignature(l, &zones)
		_, wo := want.When.Zone()
		_, go_ := got.When.Zone()
		if got.Name != want.Name || got.Email != want.Email || !got.When.Equal(want.When) || wo != go_ {
			t.Fatalf("%q: %#v, go-git %#v", l, got, want)
		}
	}
}

// TestParseIDMatchesGoGit: ParseID takes what plumbing.IsHash takes, as
// plumbing.NewHash reads it.
func TestParseIDMatchesGoGit(t *testing.T) {
	ids := []string{"", "0123456789abcdef0123456789abcdef01234567", "0123456789ABCDEF0123456789abcdef01234567", "0123456789abcdef0123456789abcdef0123456", "0123456789abcdef0123456789abcdef012345678", "0123456789abcdef0123456789abcdef0123456g", " 123456789abcdef0123456789abcdef01234567", "+123456789abcdef0123456789abcdef01234567"}
	for _, s := range ids {
		got, ok := ParseID(s)
		if ok != plumbing.IsHash(s) || ok && got != plumbing.NewHash(s) {
			t.Errorf("%q: %v %v", s, got, ok)
		}
	}
}
