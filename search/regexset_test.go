package search

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The literal-set prefilter of regular expressions (alternations: one of
// several literals in every match; Teddy, or each literal's matcher where
// Teddy cannot go) against regexp run on every line alone.

// setWords are branch material: prefixes of each other, the letters that
// fold to non-ASCII (k, s), non-ASCII, one and two bytes.
var setWords = []string{"error", "err", "rror", "warn", "fatal", "kelvin", "ks", "sk", "quokka", "straße",
	"σοφος", "éa", "42", "ab", "ba", "aba", "deadline", "exceeded", "x", "zz"}

// setPattern makes an alternation of 2 to 10 branches (more than a set
// holds, sometimes), each a word or a word with a class or repetition
// around it, maybe folded, maybe inside a concatenation.
func setPattern(rng *rand.Rand) string {
	var branches []string
	for n := 2 + rng.IntN(9); len(branches) < n; {
		w := regexp.QuoteMeta(setWords[rng.IntN(len(setWords))])
		switch rng.IntN(6) {
		case 0:
			w += `\d*`
		case 1:
			w = `[a-z]?` + w
		case 2:
			w = "(?:" + w + ")+"
		}
		branches = append(branches, w)
	}
	p := "(?:" + strings.Join(branches, "|") + ")"
	switch rng.IntN(5) {
	case 0:
		p = "(?i)" + p
	case 1:
		p = `\b` + p
	case 2:
		p = p + `[ _]\w`
	case 3:
		p = "x" + p
	}
	return p
}

// setText is lines of words in random case variants (multiCase: K as
// the Kelvin sign too) among filler, some lines over the buffer.
func setText(rng *rand.Rand, bufSize int) []byte {
	filler := []string{"a", "k", "s", " ", "_", "1", "é", "\u212A", "\u017F", "\xff", "\t", "\r"}
	var text bytes.Buffer
	for range 1 + rng.IntN(60) {
		size := rng.IntN(60)
		if rng.IntN(12) == 0 {
			size = bufSize + rng.IntN(bufSize)
		}
		for start := text.Len(); text.Len()-start < size; {
			if rng.IntN(4) == 0 {
				text.WriteString(multiCase(rng, setWords[rng.IntN(len(setWords))]))
			} else {
				text.WriteString(filler[rng.IntN(len(filler))])
			}
		}
		text.WriteByte('\n')
	}
	return text.Bytes()
}

// TestRegexLiteralSetDifferential: for generated alternations and texts,
// the lines the searcher reports (small buffers: matches cross buffer
// boundaries) are the lines regexp matches alone, with Teddy and without
// (then each literal's matcher). The seeds are 1..N: a failure replays.
func TestRegexLiteralSetDifferential(t *testing.T) {
	defer func(v bool) { usePair = v }(usePair)
	n := uint64(600)
	if testing.Short() {
		n = 150
	}
	sets := 0
	for seed := uint64(1); seed <= n; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3636))
		pattern := setPattern(rng)
		fold := rng.IntN(4) == 0
		bufSize := []int{2 * regexOverlap, 3 * regexOverlap}[rng.IntN(2)] // the searcher keeps regexOverlap bytes of a buffer
		text := setText(rng, bufSize)
		oracle := regexp.MustCompile(pattern)
		if fold {
			oracle = regexp.MustCompile("(?i)" + pattern)
		}
		var want []int
		for i, line := range bytes.Split(text, []byte("\n")) {
			if i < bytes.Count(text, []byte("\n")) && oracle.Match(line) {
				want = append(want, i+1)
			}
		}
		for _, vector := range []bool{false, true} {
			if vector && !haveVectorPair {
				continue
			}
			usePair = vector
			m, err := compileRegex(pattern, !fold)
			if err != nil {
				t.Fatalf("seed %d: %q: %v", seed, pattern, err)
			}
			if m.set != nil {
				sets++
				if ls := m.pre.(*literalSet); vector != (ls.t != nil) && isASCII(pattern) {
					t.Fatalf("seed %d: %q: Teddy %v with the vector scan %v", seed, pattern, ls.t != nil, vector)
				}
			}
			var got []int
			s := newSearcherSize(bufSize)
			s.countOnly, s.needLines = true, true
			if _, err := s.search(bytes.NewReader(text), m, regexOverlap, func() bool { return false }, func(lm lineMatch) bool {
				got = append(got, lm.line)
				return true
			}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d (vector %v, fold %v, buffer %d): %q, prefilter %v: lines %v, regexp alone %v", seed, vector, fold, bufSize, pattern, m.set, got, want)
			}
		}
	}
	if sets < int(n)/4 {
		t.Fatalf("only %d of %d patterns got a literal set", sets, 2*n)
	}
}
