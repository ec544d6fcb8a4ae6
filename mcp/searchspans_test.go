package mcp

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/serverfs/serverfs/search"
)

// u16 is the UTF-16 length of text's first b bytes, as JavaScript counts
// it: the oracle lineSpans' offsets are checked against.
func u16(text string, b int) int { return len(utf16.Encode([]rune(text[:b]))) }

// TestLineSpans: the matches of a query in a line's text as UTF-16
// offsets: non-ASCII text (2- and 3-byte runes, a surrogate pair),
// Unicode case folding, back-to-back literal matches (not overlapping, as
// rg reports them), empty matches left out, the per-line cap.
func TestLineSpans(t *testing.T) {
	spans := func(query string, regex, cs bool, text string, n int) []int {
		t.Helper()
		re, err := search.LineRegexp(query, regex, cs)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := lineSpans(re, text, n)
		return s
	}
	for _, c := range []struct {
		name, query string
		regex, cs   bool
		text        string
		want        []int
	}{
		{"ascii", "line", false, true, "a line, another line", []int{2, 6, 16, 20}},
		// é and ö are 2 bytes and 1 unit, 😀 4 bytes and 2 units.
		{"non-ASCII", "x", false, true, "héllo wörld 😀 x 😀x", []int{15, 16, 19, 20}},
		{"regex non-ASCII", `w\S+`, true, true, "héllo wörld 😀 x", []int{6, 11}},
		// K KELVIN SIGN (3 bytes, 1 unit) folds to k, ſ LONG S to s.
		{"fold literal", "KS", false, false, "ks Kſ KS kS", []int{0, 2, 3, 5, 6, 8, 9, 11}},
		{"fold regex", `(?i)é+`, true, true, "cafÉé!", []int{3, 5}},
		{"case-sensitive", "KS", false, true, "ks Kſ KS", []int{6, 8}},
		{"back to back", "aa", false, true, "aaaaa", []int{0, 2, 2, 4}},
		{"empty matches", `x*`, true, true, "axxbx", []int{1, 3, 4, 5}},
		{"only empty", `^|\b`, true, true, "a b", nil},
		{"no match", "zz", false, true, "a b", nil},
		// The file view's catastrophic case for a backtracking engine.
		{"catastrophic", `^(\w+\s?)+$|x`, true, true, strings.Repeat("a", 40) + "!", nil},
		{"catastrophic match", `^(\w+\s?)+$|x`, true, true, strings.Repeat("a", 40) + " x", []int{0, 42}},
		{"regex anchors per line", `^a|b$`, true, true, "ab ab", []int{0, 1, 4, 5}},
		{"invalid UTF-8 as U+FFFD", "x", false, true, "\xffé\xfex", []int{3, 4}},
	} {
		if got := spans(c.query, c.regex, c.cs, c.text, maxLineSpans); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q in %q: %v, want %v", c.name, c.query, c.text, got, c.want)
		}
		// The oracle: each span is a Go match, converted independently.
		re, _ := search.LineRegexp(c.query, c.regex, c.cs)
		var want []int
		for _, m := range re.FindAllStringIndex(c.text, -1) {
			if m[0] < m[1] {
				want = append(want, u16(c.text, m[0]), u16(c.text, m[1]))
			}
		}
		if got := spans(c.query, c.regex, c.cs, c.text, maxLineSpans); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, the oracle says %v", c.name, got, want)
		}
	}
	// The cap counts the matches looked for, empty ones included.
	line := strings.Repeat("a ", 100)
	if got := spans("a", false, true, line, maxLineSpans); len(got) != 2*maxLineSpans || got[len(got)-1] != 2*maxLineSpans-1 {
		t.Errorf("%d matches: %d offsets, last %d", 100, len(got), got[len(got)-1])
	}
	if got := spans(`a*`, true, true, "  aa", 2); got != nil {
		t.Errorf("two empty matches first, cap 2: %v", got)
	}
	re, _ := search.LineRegexp("a", false, true)
	if _, runs := lineSpans(re, "a a", 64); runs != 3 {
		t.Errorf("2 matches cost %d runs, want 3 (the last finds none)", runs)
	}
	if _, runs := lineSpans(re, "a a a", 2); runs != 2 {
		t.Errorf("capped at 2: %d runs", runs)
	}
}

// TestSearchViewMeta: the spans of an answer: matching lines only (not
// context lines), keyed by the path relative to the searched path; a
// regex's line cut at the text limit has none, a literal's has those
// before the cut; the bounds on lines and on regexp runs.
func TestSearchViewMeta(t *testing.T) {
	spansOf := func(o *searchTextOut) map[string]map[int][]int {
		t.Helper()
		m := o.viewMeta(t.Context())
		if m == nil {
			return nil
		}
		return m[spansKey].(map[string]map[int][]int)
	}
	cut := strings.Repeat("é", search.MaxLineText/2) // 500 bytes, 250 units
	r := &search.Result{Path: "src", Query: "é", Matches: []search.Match{
		{Path: "src/a.go", Line: 3, Text: "é and é"},
		{Path: "src/a.go", Line: 9, Text: cut, TextTruncated: true},
		{Path: "src/sub/b.go", Line: 1, Text: "É"},
	}}
	o := &searchTextOut{Path: "src", r: r, caseSensitive: true}
	got := spansOf(o)
	want := map[string]map[int][]int{"a.go": {3: {0, 1, 6, 7}, 9: nil}}
	want["a.go"][9] = make([]int, 0, 2*maxLineSpans)
	for i := range maxLineSpans {
		want["a.go"][9] = append(want["a.go"][9], i, i+1)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("literal: %v\nwant %v", got, want)
	}
	o.regex = true
	o.caseSensitive = false
	want = map[string]map[int][]int{"a.go": {3: {0, 1, 6, 7}}, "sub/b.go": {1: {0, 1}}}
	if got := spansOf(o); !reflect.DeepEqual(got, want) {
		t.Errorf("regex: %v\nwant %v", got, want)
	}

	// Blocks: the matching lines only.
	r = &search.Result{Query: "x", Blocks: []search.Block{{Path: "f", Lines: []search.BlockLine{
		{Line: 1, Text: "x before"}, {Line: 2, Text: "a x", Match: true}, {Line: 3, Text: "x after"}}}}}
	if got := spansOf(&searchTextOut{r: r, caseSensitive: true}); !reflect.DeepEqual(got, map[string]map[int][]int{"f": {2: {2, 3}}}) {
		t.Errorf("blocks: %v", got)
	}

	// Files mode has no lines, and an answer without spans no _meta.
	if m := (&searchTextOut{r: &search.Result{Query: "x", Files: []search.FileHit{{Path: "f", Count: 1}}}}).viewMeta(t.Context()); m != nil {
		t.Errorf("files mode: %v", m)
	}
	if m := (&searchTextOut{r: &search.Result{Query: `^`, Matches: []search.Match{{Path: "f", Line: 1, Text: "a"}}}, regex: true}).viewMeta(t.Context()); m != nil {
		t.Errorf("only empty matches: %v", m)
	}

	// The bounds: lines, then regexp runs.
	many := func(n int, text string) *searchTextOut {
		r := &search.Result{Query: "a"}
		for i := range n {
			r.Matches = append(r.Matches, search.Match{Path: "f", Line: i + 1, Text: text})
		}
		return &searchTextOut{r: r, caseSensitive: true}
	}
	if got := spansOf(many(maxSpanLines+5, "a")); len(got["f"]) != maxSpanLines || got["f"][maxSpanLines] == nil {
		t.Errorf("%d lines: %d with spans", maxSpanLines+5, len(got["f"]))
	}
	dense := strings.Repeat("a", maxLineSpans) // a full cap: 64 runs a line
	got = spansOf(many(maxSpanFinds/maxLineSpans+5, dense))
	if len(got["f"]) != maxSpanFinds/maxLineSpans {
		t.Errorf("run budget: %d lines with spans, want %d", len(got["f"]), maxSpanFinds/maxLineSpans)
	}
}
