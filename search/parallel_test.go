package search

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
)

// TestSearchRangesMatchesOneSearcher: splitting a file into ranges gives
// exactly the matches and line numbers of one searcher over the whole file,
// for every split count and for boundaries on, next to and inside lines.
func TestSearchRangesMatchesOneSearcher(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for iter := 0; iter < 60; iter++ {
		var b bytes.Buffer
		for b.Len() < 200_000+rng.Intn(400_000) {
			n := rng.Intn(120)
			if rng.Intn(50) == 0 {
				n = 300_000 // longer than a buffer
			}
			line := bytes.Repeat([]byte{'x'}, n)
			if n > 8 && rng.Intn(4) == 0 {
				copy(line[rng.Intn(n-6):], "NEEDLE")
			}
			b.Write(line)
			if rng.Intn(10) != 0 {
				b.WriteByte('\n')
			} else {
				b.WriteString("\r\n")
			}
		}
		if iter%3 == 0 {
			b.Truncate(b.Len() - 1) // no final line ending
		}
		data := b.Bytes()
		cm := newMatcher("NEEDLE", true)
		var want []lineMatch
		newSearcher().search(bytes.NewReader(data), cm, 6, func() bool { return false }, func(m lineMatch) bool {
			want = append(want, m)
			return true
		})
		for n := 2; n <= 7; n++ {
			got, _, outcome, err := searchRanges(bytes.NewReader(data), int64(len(data)), n, cm, 6, 1<<30, false, func() bool { return false })
			if err != nil || outcome != outcomeSearched {
				t.Fatalf("iter %d n %d: %v %v", iter, n, outcome, err)
			}
			_, count, _, err := searchRanges(bytes.NewReader(data), int64(len(data)), n, cm, 6, 0, true, func() bool { return false })
			if err != nil || count != len(want) {
				t.Fatalf("iter %d n %d: count %d, want %d (%v)", iter, n, count, len(want), err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("iter %d n %d: %d matches, want %d\n got %.200v\nwant %.200v", iter, n, len(got), len(want), got, want)
			}
		}
	}
	// Boundaries exactly at line starts.
	data := bytes.Repeat([]byte("0123456NEEDLE89\n"), 4096)
	cm := newMatcher("NEEDLE", true)
	got, _, _, _ := searchRanges(bytes.NewReader(data), int64(len(data)), 4, cm, 6, 1<<30, false, func() bool { return false })
	if len(got) != 4096 || got[4095].line != 4096 {
		t.Fatalf("aligned boundaries: %d matches, last %+v", len(got), got[len(got)-1])
	}
}
