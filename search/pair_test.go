package search

import (
	"bytes"
	"math/rand"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestIndexPairBlocks: the vector scan finds what the plain loop finds, at
// every length, distance, mask and position (block boundaries included).
func TestIndexPairBlocks(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []byte("aAbBkK_\x80\xff")
	for iter := 0; iter < 20000; iter++ {
		d := 1 + rng.Intn(40)
		n := 32 * rng.Intn(6)
		b := make([]byte, n+d+rng.Intn(3))
		for i := range b {
			b[i] = alphabet[rng.Intn(len(alphabet))]
		}
		c1, m1 := foldByte(alphabet[rng.Intn(len(alphabet))])
		c2, m2 := foldByte(alphabet[rng.Intn(len(alphabet))])
		if rng.Intn(2) == 0 {
			m1, c1 = 0, alphabet[rng.Intn(len(alphabet))]
		}
		at, mask := indexPairBlocks(b, n, c1, m1, c2, m2, d)
		wantAt, wantMask := indexPairGeneric(b, n, c1, m1, c2, m2, d)
		if at != wantAt || mask != wantMask {
			t.Fatalf("n=%d d=%d c1=%q/%#x c2=%q/%#x in %q: got %d %#x, want %d %#x", n, d, c1, m1, c2, m2, b, at, mask, wantAt, wantMask)
		}
	}
}

// TestMatchersAgainstNaive: the literal and ASCII case-folding matchers
// (with the pair prefilter where the CPU has it) return the first match at
// or after from, as a naive scan does, for needles of every length.
func TestMatchersAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	alphabet := []byte("abAB_ \n")
	for iter := 0; iter < 5000; iter++ {
		needle := make([]byte, 1+rng.Intn(6))
		for i := range needle {
			needle[i] = alphabet[rng.Intn(len(alphabet)-1)] // no '\n'
		}
		b := make([]byte, rng.Intn(300))
		for i := range b {
			b[i] = alphabet[rng.Intn(len(alphabet))]
		}
		for _, fold := range []bool{false, true} {
			m := newMatcher(string(needle), !fold).forChunk(b)
			from := 0
			if len(b) > 0 {
				from = rng.Intn(len(b) + 1)
			}
			want := -1
			for s := from; s+len(needle) <= len(b); s++ {
				if bytes.Equal(b[s:s+len(needle)], needle) || (fold && strings.EqualFold(string(b[s:s+len(needle)]), string(needle))) {
					want = s
					break
				}
			}
			if got := m.index(b, from); got != want {
				t.Fatalf("fold=%v needle %q from %d in %q: got %d, want %d", fold, needle, from, b, got, want)
			}
		}
	}
}

// TestFoldMatcherSpecialLetters: with k or s in the query, the ASCII
// folding matcher also finds matches spelled with K KELVIN SIGN or ſ LONG
// S (whether it looks for them in the whole buffer first or, with a pair,
// around each candidate): it reports a match exactly when (?i) does, on
// the line of the first one.
func TestFoldMatcherSpecialLetters(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	pieces := []string{"k", "K", "s", "S", "\u212A", "\u017F", "a", "e", "E", "v", "_", " ", "\n", "é"}
	needleBytes := []byte("ksaevKSAEV_")
	for iter := 0; iter < 20000; iter++ {
		needle := make([]byte, 2+rng.Intn(5))
		for i := range needle {
			needle[i] = needleBytes[rng.Intn(len(needleBytes))]
		}
		var sb strings.Builder
		for i := rng.Intn(120); i > 0; i-- {
			if rng.Intn(8) == 0 { // plant a variant of the needle
				for _, c := range string(needle) {
					switch {
					case (c == 'k' || c == 'K') && rng.Intn(2) == 0:
						sb.WriteString("\u212A")
					case (c == 's' || c == 'S') && rng.Intn(2) == 0:
						sb.WriteString("\u017F")
					case rng.Intn(2) == 0:
						sb.WriteString(strings.ToUpper(string(c)))
					default:
						sb.WriteString(strings.ToLower(string(c)))
					}
				}
			}
			sb.WriteString(pieces[rng.Intn(len(pieces))])
		}
		b := []byte(sb.String())
		from := rng.Intn(len(b) + 1)
		for from < len(b) && !utf8.RuneStart(b[from]) {
			from++
		}
		re := regexp.MustCompile("(?i)" + regexp.QuoteMeta(string(needle)))
		want := -1
		if loc := re.FindIndex(b[from:]); loc != nil {
			want = from + loc[0]
		}
		got := newMatcher(string(needle), false).forChunk(b).index(b, from)
		ok := got == want
		if got >= 0 && want >= 0 && got > want && !bytes.Contains(b[want:got], []byte("\n")) {
			ok = re.Match(b[got:]) && re.FindIndex(b[got:])[0] == 0 // a later match on the same line
		}
		if !ok {
			t.Fatalf("needle %q from %d in %q: got %d, want %d", needle, from, b, got, want)
		}
	}
}

// TestFoldMatcherSpecialLettersBounded: a case-insensitive query with many
// k or s before its pair costs a few steps per candidate, not one match
// attempt per byte a K KELVIN SIGN or ſ LONG S could add before the pair
// (2 per k, 1 per s): on 256 KiB where every byte is a candidate, "k"×1022
// "aa" took 2 s that way. Matches spelled with those letters are still
// found, at their first byte. The work is counted in runes compared
// (foldStepHook), not timed: at most the query's length per candidate
// beyond one step each.
func TestFoldMatcherSpecialLettersBounded(t *testing.T) {
	var steps int
	foldStepHook = func() { steps++ }
	defer func() { foldStepHook = nil }()
	for _, c := range []struct{ query, text, planted string }{
		{strings.Repeat("k", 500) + "aa", "a", strings.Repeat("\u212A", 500) + "aA"},
		{strings.Repeat("k", 1022) + "aa", "a", strings.Repeat("K\u212A", 511) + "aa"},
		{strings.Repeat("s", 1000) + "e ", "e ", strings.Repeat("\u017Fs", 500) + "E "},
		{strings.Repeat("sk", 250) + "the", "the", strings.Repeat("\u017F\u212A", 250) + "THE"},
	} {
		m := newMatcher(c.query, false)
		if fa, ok := m.(*foldASCII); !ok || fa.pairUnicode != usePair {
			t.Fatalf("%.12q…: not the pair-with-special-letters matcher this test is about", c.query)
		}
		b := bytes.Repeat([]byte(c.text), (256<<10)/len(c.text))
		// Every byte may be a candidate: a bounded matcher compares a few
		// runes at each, the unbounded one hundreds.
		bound := 4*len(b) + 4*len(c.query)
		steps = 0
		got := m.forChunk(b).index(b, 0)
		if got != -1 || steps > bound {
			t.Errorf("%.12q… (%d bytes) over %q×%d: got %d after %d rune steps, want -1 within %d", c.query, len(c.query), c.text, len(b)/len(c.text), got, steps, bound)
		}
		want := len(b)
		b = append(b, c.planted...)
		steps = 0
		got = m.forChunk(b).index(b, 0)
		if got != want || steps > bound {
			t.Errorf("%.12q… with a match spelled %.12q… at %d: got %d after %d rune steps, want %d within %d", c.query, c.planted, want, got, steps, want, bound)
		}
	}
}
