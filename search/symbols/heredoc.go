package symbols

import (
	"bytes"
	"regexp"
)

// Here documents (shell's <<EOF, Ruby's <<~EOS): the lines after the
// one that opens them, up to their terminator, are text.

var (
	shellHeredocRE = regexp.MustCompile(`^<<(-?)\s*(?:'([^'\n]+)'|"([^"\n]+)"|\\?([A-Za-z_][\w.-]*))`)
	// <<~word and <<-word; a bare <<WORD only in capitals (a << b
	// shifts).
	rubyHeredocRE = regexp.MustCompile(`<<([~-])(?:'(\w+)'|"(\w+)"|([A-Za-z_]\w*))|<<()(?:'(\w+)'|"(\w+)"|([A-Z_][A-Z_0-9]*)\b)`)
)

// heredoc is a here document's terminator, and whether it may be
// indented.
type heredoc struct {
	word     []byte
	indented bool
}

// heredocAt reads a shell here document's opening at src[i] ("<<"),
// returning its terminator.
func heredocAt(src []byte, i int) (heredoc, bool) {
	if i+2 < len(src) && src[i+2] == '<' || i > 0 && src[i-1] == '<' {
		return heredoc{}, false // <<< is a here string
	}
	end := min(len(src), i+256)
	m := shellHeredocRE.FindSubmatch(src[i:end])
	if m == nil {
		return heredoc{}, false
	}
	for _, w := range m[2:] {
		if len(w) > 0 {
			return heredoc{word: w, indented: len(m[1]) > 0}, true
		}
	}
	return heredoc{}, false
}

// skipHeredocs returns the index of the newline ending the last
// terminator line of docs, whose bodies start after the newline at i,
// counting lines; len(src) when one is not closed.
func (s *braceScan) skipHeredocs(i int, docs []heredoc) int {
	for _, d := range docs {
		for {
			start := i + 1
			if start >= len(s.src) {
				return len(s.src)
			}
			nl := bytes.IndexByte(s.src[start:], '\n')
			end := start + nl
			if nl < 0 {
				end = len(s.src)
			}
			line := bytes.TrimRight(s.src[start:end], "\r")
			if d.indented {
				line = bytes.TrimLeft(line, " \t")
			}
			if end < len(s.src) {
				s.line++
			}
			i = end
			if bytes.Equal(line, d.word) || end >= len(s.src) {
				break
			}
		}
	}
	return i
}

// rubyHeredocs are the here documents a line of Ruby code opens.
func rubyHeredocs(code string) []heredoc {
	var docs []heredoc
	for _, m := range rubyHeredocRE.FindAllStringSubmatch(code, 8) {
		for _, w := range m[2:] {
			if w != "" && w != "~" && w != "-" {
				docs = append(docs, heredoc{word: []byte(w), indented: m[1] != ""})
				break
			}
		}
	}
	return docs
}
