package search

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSearcher compares the chunked searcher, on small buffers that force
// every boundary case (lines longer than the buffer, matches across
// buffers), with a naive line-by-line reference, case-sensitive and not.
func FuzzSearcher(f *testing.F) {
	f.Add([]byte("a\nNEEDLE\nb"), "NEEDLE", uint8(0), uint8(0), false)
	f.Add([]byte("\xEF\xBB\xBFxNeedLe\r\n\r\nneedle"), "needle", uint8(1), uint8(3), true)
	f.Add([]byte("ſecret \u212A\nSECRET"), "secret", uint8(2), uint8(2), true)
	f.Add([]byte("ΣΊΣΥΦΟΣ σίσυφος"), "σίσυφος", uint8(0), uint8(9), true)
	f.Add(bytes.Repeat([]byte("ab"), 400), "ba", uint8(3), uint8(1), false)
	f.Fuzz(func(t *testing.T, data []byte, needle string, sizeSel, repeat uint8, fold bool) {
		if needle == "" || !utf8.ValidString(needle) || strings.ContainsRune(needle, utf8.RuneError) || strings.ContainsAny(needle, "\n\r\x00") || len(needle) > 64 || bytes.IndexByte(data, 0) >= 0 {
			return
		}
		// Make long lines out of short fuzz input.
		data = bytes.Repeat(data, 1+int(repeat%16))
		size := []int{600, 700, 1024, 4096}[sizeSel%4]
		maxLen := len(needle)
		if fold {
			maxLen = 4 * len([]rune(needle))
		}
		var got []lineMatch
		_, err := newSearcherSize(size).search(bytes.NewReader(data), newMatcher(needle, !fold), maxLen, func() bool { return false }, func(m lineMatch) bool {
			got = append(got, m)
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		want := referenceSearch(data, needle, fold, size)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("size %d fold %v needle %q\n got %+v\nwant %+v", size, fold, needle, got, want)
		}
	})
}

// referenceSearch is the specification: every line holding the needle
// (Unicode simple folding when fold), reported by makeLine; a line that
// cannot fit the buffer is reported cut.
func referenceSearch(data []byte, needle string, fold bool, bufSize int) []lineMatch {
	bom := bytes.HasPrefix(data, []byte("\xEF\xBB\xBF"))
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	re := regexp.MustCompile(regexp.QuoteMeta(needle))
	if fold {
		re = regexp.MustCompile("(?i)" + regexp.QuoteMeta(needle))
	}
	var out []lineMatch
	parts := bytes.Split(data, []byte("\n"))
	for i, line := range parts {
		if !re.Match(line) {
			continue
		}
		m := makeLine(i+1, line)
		room := bufSize
		if i == 0 && bom {
			room -= 3
		}
		if len(line) >= room {
			m.cut = true
		}
		out = append(out, m)
	}
	return out
}
