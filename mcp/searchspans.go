package mcp

import (
	"context"
	"regexp"
	"unicode/utf8"

	"github.com/serverfs/serverfs/search"
)

// The file view marks search_text's matches in the matching lines. It
// used to find them again itself, with the query as a JavaScript RegExp:
// V8 backtracks, so an RE2 pattern that Go runs in microseconds froze the
// view (^(\w+\s?)+$|x took 27 s on a line of 28 word characters, and
// grows exponentially with the line). The server now sends the matches
// Go's regexp finds (in linear time), and the view compiles nothing from
// a tool's input.
//
// They go in the result's _meta, and only to a client that declared the
// MCP Apps extension: the model's text and the structuredContent every
// client gets are unchanged.

// spansKey is the _meta key of the matches: path (relative to the
// searched path, as structuredContent's keys) → line number → the matches'
// [start, end) offsets in the line's text as the answer carries it,
// flattened (s0, e0, s1, e1, …), in UTF-16 code units, as JavaScript
// strings index. Empty matches are left out; a line with none is absent.
const spansKey = "serverfs/spans"

// The bounds of the spans: at most maxLineSpans matches are looked for in
// a line (empty ones included), in at most maxSpanLines lines, and at most
// maxSpanFinds regexp runs per answer (a line costs one more run than it
// has matches below its cap). A line's text is at most search.MaxLineText
// bytes, so a run scans at most that; the run budget bounds the worst
// case, a regexp of search.MaxRegexInsts instructions that scans each
// line to its end for every match, to a few seconds of CPU, where real
// queries take microseconds per line.
const (
	maxLineSpans = 64
	maxSpanLines = 1000
	maxSpanFinds = 4096
)

// lineSpans are the non-empty matches of re in text (at most n looked
// for) as flattened UTF-16 [start, end) offsets, and how many regexp runs
// finding them took.
func lineSpans(re *regexp.Regexp, text string, n int) (spans []int, runs int) {
	ms := re.FindAllStringIndex(text, n)
	runs = len(ms)
	if len(ms) < n {
		runs++ // the run that found no further match
	}
	at, u := 0, 0 // byte offset at is UTF-16 offset u
	utf16At := func(b int) int {
		for at < b {
			r, w := utf8.DecodeRuneInString(text[at:])
			// A byte that is not UTF-8 goes out as one U+FFFD, as
			// encoding/json writes it.
			if r >= 0x10000 {
				u += 2
			} else {
				u++
			}
			at += w
		}
		return u
	}
	for _, m := range ms {
		if m[0] == m[1] {
			continue
		}
		spans = append(spans, utf16At(m[0]), utf16At(m[1]))
	}
	return spans, runs
}

// viewMeta is the _meta a search_text answer carries for the file view:
// the matches in the texts of its matching lines (context lines have
// none), within the bounds above. A regex's match in a line cut at
// search.MaxLineText bytes is not looked for: the regexp would see a line
// that ends at the cut ($ matching there, a greedy match stopping there);
// a literal's matches before the cut are the line's. Nil when there is
// nothing to mark.
func (o *searchTextOut) viewMeta(ctx context.Context) map[string]any {
	r := o.r
	if r == nil || (r.Matches == nil && r.Blocks == nil) {
		return nil
	}
	re, err := search.LineRegexp(r.Query, o.regex, o.caseSensitive)
	if err != nil {
		return nil // the search compiled it; it cannot fail here
	}
	out := map[string]map[int][]int{}
	lines, runs := 0, 0
	add := func(p string, line int, text string, cut bool) bool {
		if lines == maxSpanLines || runs >= maxSpanFinds || ctx.Err() != nil {
			return false
		}
		lines++
		if cut && o.regex {
			return true
		}
		s, n := lineSpans(re, text, min(maxLineSpans, maxSpanFinds-runs))
		runs += n
		if len(s) > 0 {
			p = o.rel(p)
			if out[p] == nil {
				out[p] = map[int][]int{}
			}
			out[p][line] = s
		}
		return true
	}
	for _, m := range r.Matches {
		if !add(m.Path, m.Line, m.Text, m.TextTruncated) {
			break
		}
	}
blocks:
	for _, b := range r.Blocks {
		for _, l := range b.Lines {
			if l.Match && !add(b.Path, l.Line, l.Text, l.TextTruncated) {
				break blocks
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return map[string]any{spansKey: out}
}
