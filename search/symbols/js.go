package symbols

import (
	"regexp"
	"strings"
)

// JavaScript and TypeScript: regular expression literals (a brace or a
// quote in one is text), and functions defined without a block of their
// own: const f = (x) => x * 2; obj.f = x => x; { key: () => value }.

// regexLiteral reports whether the / at i opens a regular expression
// literal rather than a division: what precedes it cannot end an operand.
func regexLiteral(src []byte, i int) bool {
	j := i - 1
	for j >= 0 && (src[j] == ' ' || src[j] == '\t') {
		j--
	}
	if j < 0 || src[j] == '\n' || src[j] == '\r' {
		return true
	}
	switch src[j] {
	case '(', ',', '=', ':', '[', '!', '&', '|', '?', '{', '}', ';', '+', '-', '*', '%', '<', '>', '~', '^':
		return true
	}
	if isIdent(src[j]) {
		k := j
		for k >= 0 && isIdent(src[k]) {
			k--
		}
		switch string(src[k+1 : j+1]) {
		case "return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw", "yield", "await", "instanceof":
			return true
		}
	}
	return false
}

// skipRegexLiteral returns the index of the / closing the literal opened
// at i (a / in a [class] or escaped does not close it), or i when the
// line ends first: then the / was a division after all.
func skipRegexLiteral(src []byte, i int) int {
	class := false
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '\n':
			return i
		case '[':
			class = true
		case ']':
			class = false
		case '/':
			if !class {
				return j
			}
		}
	}
	return i
}

var (
	// A segment (a statement, or one item of a list) that defines a
	// function by an arrow with an expression body.
	varArrowRE    = regexp.MustCompile(`^(?:export\s+)?(?:declare\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^;]*?)?=\s*(?:async\s+)?(?:\([^()]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=;]*)?=>`)
	assignArrowRE = regexp.MustCompile(`^(?:[\w$]+\.)*([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:\([^()]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=;]*)?=>`)
	pairArrowRE   = regexp.MustCompile(`^([A-Za-z_$][\w$]*)\s*:\s*(?:async\s+)?(?:\([^()]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=;]*)?=>`)
	// The same, and function expressions, before a block.
	assignFuncRE = regexp.MustCompile(`(?:^|[\s;,(])(?:[\w$]+\.)*([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b\s*\*?\s*[\w$]*\s*\([^()]*\)|(?:\([^()]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=;]*)?=>)\s*$`)
	pairFuncRE   = regexp.MustCompile(`(?:^|[\s,{])([A-Za-z_$][\w$]*)\s*:\s*(?:async\s+)?(?:function\b\s*\*?\s*[\w$]*\s*\([^()]*\)|(?:\([^()]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=;]*)?=>)\s*$`)
)

// exprDefs adds the functions the complete segments of header[:end]
// define without a block (split at its top-level commas).
func (s *braceScan) exprDefs(end int) {
	if s.syn.lang != JavaScript && s.syn.lang != TypeScript || end <= 0 {
		return
	}
	h := string(s.header[:end])
	if !strings.Contains(h, "=>") {
		return
	}
	inClass := false
	if n := len(s.stack); n > 0 && s.stack[n-1] >= 0 && s.symbols[s.stack[n-1]].Kind == "class" {
		inClass = true // a class field, which the tags do not name
	}
	container := s.container()
	for from := 0; from < len(h); {
		to := topLevelComma(h, from)
		seg := h[from:to]
		lead := len(seg) - len(strings.TrimLeft(seg, " \t\r\n,"))
		t := seg[lead:]
		for _, re := range []*regexp.Regexp{varArrowRE, assignArrowRE, pairArrowRE} {
			if inClass && re != varArrowRE {
				break
			}
			if m := re.FindStringSubmatchIndex(t); m != nil {
				last := from + len(strings.TrimRight(seg, " \t\r\n;"))
				if last <= from {
					break
				}
				sym := s.function(t[m[2]:m[3]], container)
				sym.Start, sym.End = s.startLine(from+lead), s.hlines[last-1]
				s.symbols = append(s.symbols, sym)
				break
			}
		}
		from = to + 1
	}
}

// lastTopLevelComma is the index of h's last comma outside brackets, or
// -1.
func lastTopLevelComma(h string) int {
	last := -1
	for i := 0; i < len(h); {
		j := topLevelComma(h, i)
		if j >= len(h) {
			break
		}
		last, i = j, j+1
	}
	return last
}

// topLevelComma is the index of the first comma at or after from outside
// brackets, or len(h).
func topLevelComma(h string, from int) int {
	depth := 0
	for i := from; i < len(h); i++ {
		switch h[i] {
		case '(', '[':
			depth++
		case ')', ']':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return len(h)
}
