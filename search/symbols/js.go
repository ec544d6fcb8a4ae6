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

// maxTemplateNesting bounds the templates and ${...} substitutions held
// open inside one another; deeper ones are read as text.
const maxTemplateNesting = 64

// skipTemplate returns the index of the backtick closing the template
// literal opened at i: its ${...} substitutions are code, holding braces,
// strings, comments and templates of their own.
func (s *braceScan) skipTemplate(i int) int {
	const inText = -1
	// stack: inText for a template's text, or the braces open in a
	// substitution's code.
	stack := make([]int, 1, 8)
	stack[0] = inText
	src := s.src
	for j := i + 1; j < len(src); j++ {
		c := src[j]
		if c == '\n' {
			s.line++
			continue
		}
		top := len(stack) - 1
		if stack[top] == inText {
			switch {
			case c == '\\':
				if j++; j < len(src) && src[j] == '\n' {
					s.line++
				}
			case c == '`':
				if stack = stack[:top]; len(stack) == 0 {
					return j
				}
			case c == '$' && j+1 < len(src) && src[j+1] == '{' && len(stack) < maxTemplateNesting:
				stack = append(stack, 0)
				j++
			}
			continue
		}
		switch {
		case c == '{':
			stack[top]++
		case c == '}':
			if stack[top] == 0 {
				stack = stack[:top]
			} else {
				stack[top]--
			}
		case c == '`' && len(stack) < maxTemplateNesting:
			stack = append(stack, inText)
		case c == '"' || c == '\'':
			j = s.skipQuoted(j, c)
		case c == '/' && j+1 < len(src) && src[j+1] == '/':
			j = s.skipTo(j, "\n") - 1
		case c == '/' && j+1 < len(src) && src[j+1] == '*':
			j = s.skipTo(j+2, "*/")
		case c == '/' && regexLiteral(src, j):
			j = skipRegexLiteral(src, j)
		}
	}
	return len(src)
}

// skipQuoted returns the index of the quote closing the one-line string
// opened at i (or of the line's end: JavaScript's strings do not span
// lines unescaped).
func (s *braceScan) skipQuoted(i int, q byte) int {
	for j := i + 1; j < len(s.src); j++ {
		switch s.src[j] {
		case '\\':
			if j++; j < len(s.src) && s.src[j] == '\n' {
				s.line++
			}
		case '\n':
			return j - 1
		case q:
			return j
		}
	}
	return len(s.src)
}

// jsDeclRE is a declaration's head, whose commas are its own (class A
// extends B, C; function f<A, B>).
var jsDeclRE = regexp.MustCompile(`^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:class|interface|function|enum|namespace|module|type)\b`)

// inTypeBody reports whether the innermost block is a class's,
// interface's or object type's body (where name: { is a member's type).
func (s *braceScan) inTypeBody() bool {
	n := len(s.stack)
	if n == 0 {
		return false
	}
	f := s.stack[n-1]
	return f == typeLiteral || f >= 0 && (s.symbols[f].Kind == "class" || s.symbols[f].Kind == "interface")
}

var (
	// A segment (a statement, or one item of a list) that defines a
	// function by an arrow with an expression body.
	varArrowRE    = regexp.MustCompile(`^(?:export\s+)?(?:declare\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^;]*?)?=\s*(?:async\s+)?(?:(?:<[^();]*?>\s*)?\([^()]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=;]*)?=>`)
	assignArrowRE = regexp.MustCompile(`^(?:[\w$]+\.)*([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:(?:<[^();]*?>\s*)?\([^()]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=;]*)?=>`)
	pairArrowRE   = regexp.MustCompile(`^([A-Za-z_$][\w$]*)\s*:\s*(?:async\s+)?(?:(?:<[^();]*?>\s*)?\([^()]*\)|[A-Za-z_$][\w$]*)\s*(?::[^=;]*)?=>`)
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
	if n := len(s.stack); n > 0 {
		// A class field, or a type's member: the tags name neither.
		inClass = s.stack[n-1] == typeLiteral || s.stack[n-1] >= 0 && (s.symbols[s.stack[n-1]].Kind == "class" || s.symbols[s.stack[n-1]].Kind == "interface")
	}
	container := s.container()
	for from := 0; from < len(h); {
		to := topLevelComma(h, from)
		seg := h[from:to]
		starts := statements(seg)
		for k, st := range starts {
			end := len(seg)
			if k+1 < len(starts) {
				end = starts[k+1]
			}
			s.exprDef(from+st, seg[st:end], inClass, container)
		}
		from = to + 1
	}
}

// exprDef adds the function stmt (at header[at]) defines, if it does.
func (s *braceScan) exprDef(at int, stmt string, inClass bool, container string) {
	lead := len(stmt) - len(strings.TrimLeft(stmt, " \t\r\n,"))
	t := stmt[lead:]
	for _, re := range []*regexp.Regexp{varArrowRE, assignArrowRE, pairArrowRE} {
		if inClass && re != varArrowRE {
			return
		}
		if m := re.FindStringSubmatchIndex(t); m != nil {
			last := at + len(strings.TrimRight(stmt, " \t\r\n;"))
			if last <= at {
				return
			}
			sym := s.function(t[m[2]:m[3]], container)
			sym.Start, sym.End = s.startLine(at+lead), s.hlines[last-1]
			s.symbols = append(s.symbols, sym)
			return
		}
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
// brackets and type arguments (Map<K, V>), or len(h).
func topLevelComma(h string, from int) int {
	depth, angle := 0, 0
	for i := from; i < len(h); i++ {
		switch h[i] {
		case '(', '[':
			depth++
		case ')', ']':
			if depth > 0 {
				depth--
			}
		case '<':
			if i > 0 && (isIdent(h[i-1]) || typeParamsAt(h, i)) {
				angle++
			}
		case '>':
			if angle > 0 && h[i-1] != '=' {
				angle--
			}
		case ',':
			if depth == 0 && angle == 0 {
				return i
			}
		}
	}
	return len(h)
}

// statements splits a segment where a line ends a statement without a
// semicolon (outside brackets, and neither the line's end nor the next
// line's start continues an expression): the start of each.
func statements[T string | []byte](seg T) []int {
	starts := []int{0}
	depth, angle := 0, 0 // brackets, and type arguments (Options<\n A,\n B>)
	closed := -1         // where the last type arguments closed (f(): Promise<T>)
	for i := 0; i < len(seg); i++ {
		switch seg[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		case '<':
			if i > 0 && isIdent(seg[i-1]) {
				angle++
			}
		case '>':
			if angle > 0 && seg[i-1] != '=' {
				angle--
				closed = i
			}
		case '\n':
			if depth > 0 || angle > 0 {
				continue
			}
			end := i - 1 // the line's last character
			for end >= 0 && (seg[end] == ' ' || seg[end] == '\t' || seg[end] == '\r') {
				end--
			}
			next := i + 1 // the next line's first
			for next < len(seg) && isSpace(seg[next]) {
				next++
			}
			if end < 0 || next == len(seg) || end != closed && strings.IndexByte("=>,(+-*/?:&|", seg[end]) >= 0 ||
				strings.IndexByte(".?:+-*/&|=)]", seg[next]) >= 0 || hasPrefixAt(seg, next, "extends") || hasPrefixAt(seg, next, "implements") {
				continue
			}
			starts = append(starts, i+1)
		}
	}
	return starts
}

// typeParamsAt reports whether the < at h[i] opens a generic arrow's
// type parameters: it follows an = (f = <T, U>(x: T) => ...).
func typeParamsAt(h string, i int) bool {
	j := i - 1
	for j >= 0 && isSpace(h[j]) {
		j--
	}
	return j >= 0 && h[j] == '=' && (j == 0 || !strings.ContainsRune("=!<>", rune(h[j-1])))
}

// openTypeArgs reports whether h ends inside type arguments or
// parameters (class C<T extends {...}> {: the first brace is a type's).
func openTypeArgs(h string) bool {
	if !strings.Contains(h, "<") {
		return false
	}
	angle := 0
	for i := 1; i < len(h); i++ {
		switch h[i] {
		case '<':
			if isIdent(h[i-1]) || h[i-1] == ' ' && angle > 0 {
				angle++
			}
		case '>':
			if angle > 0 && h[i-1] != '=' {
				angle--
			}
		}
	}
	return angle > 0
}

// hasPrefixAt reports whether s[at:] starts with prefix.
func hasPrefixAt[T string | []byte](s T, at int, prefix string) bool {
	return len(s)-at >= len(prefix) && string(s[at:at+len(prefix)]) == prefix
}
