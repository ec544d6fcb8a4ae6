package search

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The multi-term matcher of ranked search (anyTerm/anyChunk: each term's
// matches listed a batch per scan, a line's terms read off the positions
// found) against the per-term matchers it is made of, each run on every
// line alone, and regexp's (?i) as the folding oracle.

// multiWords are term material: prefixes of each other (err, error,
// rror), overlapping (aba, ab, ba), holding the letters that fold to
// non-ASCII (k: K KELVIN SIGN, s: ſ LONG S), non-ASCII (σ has three
// forms), digits only.
var multiWords = []string{"func", "fun", "unc", "return", "ret", "error", "err", "rror", "string", "str",
	"kelvin", "ks", "sk", "quokka", "kk", "ss", "straße", "σίσυφος", "σ", "éa", "42", "a", "ab", "ba", "aba", "deadline", "exceed"}

// multiCase spells s in a random case variant of every rune (any member
// of its simple folding orbit: K as K, k or the Kelvin sign).
func multiCase(rng *rand.Rand, s string) string {
	var b strings.Builder
	for _, r := range s {
		orbit := []rune{r}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			orbit = append(orbit, f)
		}
		b.WriteRune(orbit[rng.IntN(len(orbit))])
	}
	return b.String()
}

// multiInput generates terms (as QueryTerms gives them: lower case,
// distinct) and a text of lines mixing their spellings with filler,
// some lines over MaxLineText bytes, some over the buffer, some dense
// with matches (more than a batch in one buffer).
func multiInput(rng *rand.Rand, bufSize int) ([]string, []byte) {
	var terms []string
	for n := 1 + rng.IntN(MaxTerms); len(terms) < n; {
		var t string
		if rng.IntN(4) == 0 {
			for l := 1 + rng.IntN(3); len(t) < l; {
				t += string("abks"[rng.IntN(4)])
			}
		} else {
			t = multiWords[rng.IntN(len(multiWords))]
		}
		if !strings.Contains(strings.Join(terms, "\n")+"\n", t+"\n") || len(terms) == 0 {
			terms = append(terms, t)
		}
	}
	filler := []string{"a", "b", "k", "s", " ", "x", "_", "é", "\u212A", "\u017F", "\xff", "(", "\t", "\r"}
	var text bytes.Buffer
	for range 1 + rng.IntN(40) {
		size := 1 + rng.IntN(80)
		switch rng.IntN(10) {
		case 0:
			size = MaxLineText + rng.IntN(200)
		case 1:
			size = bufSize + rng.IntN(2*bufSize)
		case 2:
			size = 0
		}
		start := text.Len()
		dense := rng.IntN(5) == 0
		for text.Len()-start < size {
			if dense || rng.IntN(6) == 0 {
				text.WriteString(multiCase(rng, terms[rng.IntN(len(terms))]))
			} else {
				text.WriteString(filler[rng.IntN(len(filler))])
			}
		}
		text.WriteByte('\n')
	}
	b := text.Bytes()
	if rng.IntN(3) == 0 {
		b = b[:len(b)-1] // a last line without a line ending
	}
	return terms, b
}

// multiOracle is, per line of text (from 1), the terms regexp's (?i)
// finds in it, checked against each term's own matcher on the line.
func multiOracle(t *testing.T, seed uint64, terms []string, text []byte) []uint64 {
	lines := bytes.Split(text, []byte("\n"))
	want := make([]uint64, len(lines)+1)
	for i, term := range terms {
		re := regexp.MustCompile("(?i)" + regexp.QuoteMeta(term))
		m := newMatcher(term, false)
		for n, line := range lines {
			in := re.Match(line)
			if got := m.forChunk(line).index(line, 0) >= 0; got != in {
				t.Fatalf("seed %d: term %q alone on line %d %q: matcher %v, regexp %v", seed, term, n+1, line, got, in)
			}
			if in {
				want[n+1] |= 1 << i
			}
		}
	}
	return want
}

// TestMultiTermDifferential runs generated inputs through the searcher as
// Rank does (raw lines, small buffers so that matches and lines cross
// buffer boundaries) and compares each line's terms with what each
// term's matcher finds in the line alone: exactly, for lines the buffer
// holds whole (the whole line, past MaxLineText too); for longer lines,
// found exactly when some term is in them, with terms of their head.
// A mismatch prints its seed (the seeds are 1..400: a failure replays).
func TestMultiTermDifferential(t *testing.T) {
	type variant struct{ vector, teddy bool }
	variants := []variant{{false, false}}
	if haveVectorPair {
		variants = append(variants, variant{true, false}, variant{true, true})
	}
	defer func(v, t bool) { usePair, useTeddy = v, t }(usePair, useTeddy)
	n := uint64(400)
	if testing.Short() {
		n = 100
	}
	for _, v := range variants {
		usePair, useTeddy = v.vector, v.teddy
		for seed := uint64(1); seed <= n; seed++ {
			multiCheck(t, seed, v.vector, v.teddy)
		}
	}
}

func multiCheck(t *testing.T, seed uint64, vector, teddy bool) {
	rng := rand.New(rand.NewPCG(seed, 36))
	bufSize := []int{600, 700, 1024, 4096}[rng.IntN(4)]
	terms, text := multiInput(rng, bufSize)
	want := multiOracle(t, seed, terms, text)
	q := newRankQuery(terms, 1<<30)
	if teddy && q.teddy == nil && isASCII(strings.Join(terms, "")) {
		t.Fatalf("seed %d: ASCII terms %q without Teddy", seed, terms)
	}
	// Each term's batches against its index called per match, batch
	// sizes 1 to 5 forcing refills everywhere.
	for i, cm := range q.terms {
		m := cm.forChunk(text)
		var byIndex, byBatch []int
		for from := 0; from <= len(text); {
			p := m.index(text, from)
			if p < 0 {
				break
			}
			byIndex, from = append(byIndex, p), p+1
		}
		out := make([]int, 1+rng.IntN(5))
		for from := 0; ; {
			k := indexAll(m, text, from, out)
			byBatch = append(byBatch, out[:k]...)
			if k < len(out) {
				break
			}
			from = out[k-1] + 1
		}
		if fmt.Sprint(byIndex) != fmt.Sprint(byBatch) {
			t.Fatalf("seed %d (vector %v): term %d %q: index finds %v, indexAll %v", seed, vector, i, terms[i], byIndex, byBatch)
		}
	}
	lines := bytes.Split(text, []byte("\n"))
	s := newSearcherSize(bufSize)
	s.rawLines = true
	got := map[int]lineMatch{}
	// One matcher state for every buffer, as a worker of Rank reuses it.
	_, err := s.search(bytes.NewReader(text), q.matcher(s), q.maxLen, func() bool { return false }, func(m lineMatch) bool {
		if !m.masked {
			m.terms = q.termsIn([]byte(m.text))
		} else if line := rawLine(m.raw); m.line > len(lines) || !bytes.Equal(line, lines[m.line-1]) {
			t.Fatalf("seed %d: line %d reported as %q", seed, m.line, line)
		}
		m.raw = nil
		got[m.line] = m
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n < len(want); n++ {
		g, ok := got[n]
		switch {
		case ok != (want[n] != 0):
			t.Fatalf("seed %d (vector %v, teddy %v, buffer %d): terms %q, line %d %q: reported %v, terms in it %b", seed, vector, teddy, bufSize, terms, n, lines[n-1], ok, want[n])
		case ok && g.masked && g.terms != want[n]:
			t.Fatalf("seed %d (vector %v, teddy %v, buffer %d): terms %q, line %d %q: terms %b, each term alone finds %b", seed, vector, teddy, bufSize, terms, n, lines[n-1], g.terms, want[n])
		case ok && !g.masked && (len(lines[n-1]) < bufSize || g.terms&^want[n] != 0):
			t.Fatalf("seed %d (vector %v, teddy %v, buffer %d): line %d of %d bytes: masked %v, terms %b of %b", seed, vector, teddy, bufSize, n, len(lines[n-1]), g.masked, g.terms, want[n])
		}
	}
}

// multiCorpus is about 8 MiB of Go source from GOROOT/src, one buffer.
func multiCorpus(b *testing.B) []byte {
	b.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "src", "*", "*.go"))
	if err != nil || len(files) == 0 {
		b.Fatal("no Go files", err)
	}
	var buf []byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if buf = append(buf, data...); len(buf) >= 8<<20 {
			break
		}
	}
	return buf
}

// BenchmarkMultiTerm measures the matcher of a ranked search alone (no
// files): the searcher over Go source for the lines holding any of four
// terms and each line's terms, as Rank asks, the terms frequent
// (397,623 of 3.3 million GOROOT/src lines hold one) and rare. "multi" is
// anyChunk (batched matches, a line's terms read off them), "teddy" its
// one pass for all terms (see teddyChunk); "rescan" is
// what Rank did before: each reported line's text built and searched
// again once per term.
//
//	go test -run '^$' -bench MultiTerm ./search
func BenchmarkMultiTerm(b *testing.B) {
	text := multiCorpus(b)
	for _, query := range []struct{ name, q string }{
		{"frequent", "func return error string"}, {"rare", "kelvin quokka deadline exceeded"},
	} {
		for _, variant := range []string{"teddy", "multi", "rescan"} {
			b.Run(query.name+"/"+variant, func(b *testing.B) {
				defer func(t bool) { useTeddy = t }(useTeddy)
				useTeddy = variant == "teddy"
				q := newRankQuery(QueryTerms(query.q), 1<<30)
				if useTeddy && q.teddy == nil {
					b.Skip("no Teddy on this CPU")
				}
				s := newSearcher()
				s.rawLines = variant != "rescan"
				cm := q.matcher(s) // a worker's, reused
				b.SetBytes(int64(len(text)))
				hits := 0
				var mask uint64
				for b.Loop() {
					hits = 0
					_, err := s.search(bytes.NewReader(text), cm, q.maxLen, func() bool { return false }, func(m lineMatch) bool {
						hits++
						if m.masked {
							mask |= m.terms
						} else {
							mask |= q.termsIn([]byte(m.text))
						}
						return true
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(hits), "lines")
			})
		}
	}
}
