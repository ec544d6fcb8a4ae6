package commitgraph

import "testing"

// TestMurmur3: version 2 is the standard murmur3 (its published values
// for seed 0); version 1 agrees on ASCII and differs on bytes >= 0x80.
func TestMurmur3(t *testing.T) {
	for _, c := range []struct {
		s    string
		want uint32
	}{{"", 0}, {"Hello world!", 0x627b0c2c}, {"The quick brown fox jumps over the lazy dog", 0x2e4ff723}} {
		if got := murmur3(0, c.s, 2); got != c.want {
			t.Errorf("murmur3 v2 %q = %#x, want %#x", c.s, got, c.want)
		}
		if got := murmur3(0, c.s, 1); got != c.want {
			t.Errorf("murmur3 v1 %q = %#x, want %#x", c.s, got, c.want)
		}
	}
	for _, s := range []string{"\x99", "ab\xff", "\x99\xaa\xbb\xcc\xdd\xee\xff"} {
		if murmur3(0x293ae76f, s, 1) == murmur3(0x293ae76f, s, 2) {
			t.Errorf("versions agree on %q", s)
		}
	}
}

// TestParseRefuses: what is not a whole, well-formed file is no graph.
func TestParseRefuses(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("CGPH"), append([]byte("CGPH\x01\x01\x00\x00"), make([]byte, 40)...)} {
		if _, err := Parse(b); err == nil {
			t.Errorf("Parse(%q) accepted", b)
		}
	}
}
