package symbols

import (
	"bytes"
	"context"
	"regexp"
	"strings"
)

// syntax is what the brace scanner must know of a language to find its
// blocks: where comments and strings are (braces inside them are text).
type syntax struct {
	lang Lang
	// slashComments: // and /* */; hashComments: # at a word's start.
	slashComments, hashComments bool
	// charQuote: ' opens a character literal (C-like), closed within a
	// few bytes on the same line or not at all (Rust's lifetimes);
	// otherwise ' opens a string like ".
	charQuote bool
	// backtick: ` opens a string (JavaScript templates, Go raw strings).
	backtick bool
	// preprocessor: a line starting with # is a directive (C, C++, C#).
	preprocessor bool
}

func braceSyntax(l Lang) syntax {
	s := syntax{lang: l, slashComments: true}
	switch l {
	case C, CPP, Java, CSharp, Rust, Go:
		s.charQuote = true
		s.backtick = l == Go
		s.preprocessor = l == C || l == CPP || l == CSharp
	case JavaScript, TypeScript:
		s.backtick = true
	case PHP:
		s.hashComments = true
	case Shell:
		s.slashComments, s.hashComments = false, true
	}
	return s
}

// frame is one open block: the index of its definition in the outline,
// or -1 for a block that defines nothing (if, for, an initializer), or
// typeLiteral.
type frame int

// typeLiteral is a TypeScript object type's block (session: { close: ()
// => void }): what it holds are types, not definitions.
const typeLiteral frame = -2

// maxHeader bounds the text kept before a block's opening brace, and
// maxSavedHeader what is kept of it across a brace inside parentheses.
const (
	maxHeader      = 1024
	maxSavedHeader = 256
)

// scanOutline finds the definitions of brace-delimited code: the text
// since the last ;, { or } before each { names what the block is.
func scanOutline(ctx context.Context, syn syntax, src []byte, lim Limits) ([]Symbol, error) {
	sc := braceScan{syn: syn, src: src, lim: lim, line: 1}
	return sc.run(ctx)
}

type braceScan struct {
	heredocs []heredoc // opened on the line being read (shell)
	syn      syntax
	src      []byte
	lim      Limits
	line     int
	header   []byte
	hlines   []int // the line of each byte of header
	hline    int   // the line where header's text starts
	// nest counts the parentheses and brackets open in header: a ; in
	// them ends no statement (for (;;), Rust's [T; N]), and a { in them
	// opens a literal or a callback, after which the header goes on.
	nest  int
	saved []savedHeader
	// heads holds, per open block, how its header began and its line:
	// closedTypedef and closedStart are the last closed block's (typedef
	// struct {...} name;).
	heads         []blockHead
	closedTypedef bool
	closedStart   int
	stack         []frame
	deep          int // blocks open beyond MaxDepth (not in stack)
	symbols       []Symbol
	// code, when set, receives every byte of code (comments left out, a
	// string as one '"'), and each newline.
	code func(c byte)
}

func (s *braceScan) run(ctx context.Context) ([]Symbol, error) {
	src := s.src
	for i := 0; i < len(src); i++ {
		if i&0xffff == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if s.lim.MaxSymbols > 0 && len(s.symbols) > s.lim.MaxSymbols {
			break // Outline cuts at MaxSymbols: what follows is not read
		}
		c := src[i]
		skip, str, lineBefore := false, false, s.line
		if s.code != nil {
			if skip, str = s.skipsText(i); !skip {
				s.code(c)
			} else if str {
				s.code('"')
			}
		}
		switch {
		case c == '\n':
			s.line++
			s.addHeader('\n')
			if len(s.heredocs) > 0 {
				i = s.skipHeredocs(i, s.heredocs)
				s.heredocs = s.heredocs[:0]
			}
			if s.syn.lang == Shell && s.nest == 0 && !(i > 0 && src[i-1] == '\\') && !shellFuncHeadRE.Match(s.header) {
				s.reset() // a shell statement ends with its line (f ()\n{ goes on)
			}
		case s.syn.lang == Shell && c == '<' && i+1 < len(src) && src[i+1] == '<':
			if d, ok := heredocAt(src, i); ok && len(s.heredocs) < 16 {
				s.heredocs = append(s.heredocs, d)
			}
			s.addHeader(c)
		case s.syn.slashComments && c == '/' && i+1 < len(src) && src[i+1] == '/':
			i = s.skipTo(i, "\n") - 1 // the newline is counted above
		case s.syn.slashComments && c == '/' && i+1 < len(src) && src[i+1] == '*':
			i = s.skipTo(i+2, "*/")
		case s.syn.hashComments && c == '#' && (i == 0 || isSpace(src[i-1])):
			i = s.skipTo(i, "\n") - 1
		case s.syn.preprocessor && c == '#' && lineStart(src, i):
			i = s.skipDirective(i) - 1
		case c == '/' && (s.syn.lang == JavaScript || s.syn.lang == TypeScript) && regexLiteral(src, i) && skipRegexLiteral(src, i) > i:
			i = skipRegexLiteral(src, i)
			s.addHeader('"')
		case c == '"' || (c == '\'' && !s.syn.charQuote) || (c == '`' && s.syn.backtick):
			i = s.skipString(i, c)
			s.addHeader('"')
		case c == '\'' && s.syn.charQuote:
			i = s.skipChar(i)
		case c == '{':
			s.open()
		case c == '}':
			s.close()
		case c == ';' && s.nest == 0:
			s.exprDefs(len(s.header))
			s.declare()
			s.reset()
		case c == '(' || c == '[':
			s.nest++
			s.addHeader(c)
		case (c == ')' || c == ']') && s.nest > 0:
			s.nest--
			s.addHeader(c)
		default:
			s.addHeader(c)
		}
		// Lines passed over (a comment, a string, a here document)
		// reach code as newlines.
		n := s.line - lineBefore
		if !skip && c == '\n' {
			n-- // code has had this one
		}
		for ; s.code != nil && n > 0; n-- {
			s.code('\n')
		}
	}
	// The last statement may end without a ; and blocks left open end
	// at the last line.
	s.exprDefs(len(s.header))
	for len(s.stack) > 0 {
		s.close()
	}
	return s.symbols, nil
}

// skipsText reports whether src[i] starts a comment or a string (which
// code receives as newlines only, and a string as one '"').
func (s *braceScan) skipsText(i int) (skip, str bool) {
	c := s.src[i]
	switch {
	case s.syn.slashComments && c == '/' && i+1 < len(s.src) && (s.src[i+1] == '/' || s.src[i+1] == '*'),
		s.syn.hashComments && c == '#' && (i == 0 || isSpace(s.src[i-1])),
		s.syn.preprocessor && c == '#' && lineStart(s.src, i):
		return true, false
	case c == '"' || c == '\'' || (c == '`' && s.syn.backtick),
		c == '/' && (s.syn.lang == JavaScript || s.syn.lang == TypeScript) && regexLiteral(s.src, i) && skipRegexLiteral(s.src, i) > i:
		return true, true
	}
	return false, false
}

func (s *braceScan) addHeader(c byte) {
	if len(s.header) == 0 && (isSpace(c) || c == ',') {
		return
	}
	if len(s.header) == 0 {
		s.hline = s.line
	}
	s.trimHeader()
	s.header = append(s.header, c)
	s.hlines = append(s.hlines, s.line)
}

// trimHeader keeps the header under maxHeader, dropping its start.
func (s *braceScan) trimHeader() {
	for len(s.header) >= maxHeader {
		// Keep the end: what names a block is just before its brace.
		cut := maxHeader / 2
		if s.syn.lang == JavaScript || s.syn.lang == TypeScript {
			// Statements without semicolons (a type's members, one
			// per line) are read before they are dropped.
			// So are the items of a long list (an object's pairs).
			if st := statements(s.header[:cut]); len(st) > 1 {
				cut = st[len(st)-1]
				s.statementDefs(cut)
			} else if comma := lastTopLevelComma(string(s.header[:cut])); comma >= 0 {
				cut = comma + 1
				s.exprDefs(cut)
			}
		}
		n := copy(s.header, s.header[cut:])
		s.header = s.header[:n]
		copy(s.hlines, s.hlines[cut:])
		s.hlines = s.hlines[:n]
	}
}

func (s *braceScan) reset() {
	s.header, s.hlines, s.hline, s.nest = s.header[:0], s.hlines[:0], 0, 0
	s.closedTypedef = false
}

// savedHeader is the header a { inside parentheses interrupted, taken up
// again after its block: function f({a, b}) { ... } is still f's.
type savedHeader struct {
	depth  int // len(stack) with the block open
	header []byte
	hlines []int
	hline  int
	nest   int
}

func (s *braceScan) open() {
	if len(s.stack) >= s.lim.MaxDepth && s.lim.MaxDepth > 0 {
		s.deep++
		s.reset()
		return
	}
	f := frame(-1)
	if s.nest > 0 && !hasAnyBytes(s.header[lastArgument(s.header):], argumentWords) {
		// A literal or an anonymous callback in a call: nothing to
		// name, and no copy of the header to make. In TypeScript a
		// brace after a colon there is a parameter's object type.
		if s.syn.lang == TypeScript && bytes.HasSuffix(bytes.TrimRight(s.header, " \t\r\n"), []byte(":")) {
			f = typeLiteral
		}
		s.openNested(f)
		return
	}
	h, off := string(s.header), 0
	js := s.syn.lang == JavaScript || s.syn.lang == TypeScript
	// A { after a colon, an operator or inside type arguments in
	// JavaScript is a value or a type literal (key: {...}, f(): { a: T }
	// {...}, Map<{...}>): the header goes on after it.
	trimmed := strings.TrimSpace(h)
	nested := s.nest > 0 || js && trimmed != "" && (strings.ContainsAny(trimmed[len(trimmed)-1:], ":<,|&=?") && !strings.HasSuffix(trimmed, "=>") || openTypeArgs(trimmed))
	switch {
	case s.nest > 0:
		// Inside parentheses only the last argument can name a block
		// (foo(function named() {...})).
		off = lastArgument(h)
	case !nested && js:
		// The statements and items before the last: f = x => x (no
		// semicolon) function g() {...; { a: x => x, b() {...; a
		// declaration's commas are its own (class A implements B, C).
		st := statements(h)
		split := st[len(st)-1]
		if !jsDeclRE.MatchString(strings.TrimSpace(h[split:])) {
			split += lastTopLevelComma(h[split:]) + 1
			st = statements(h[split:])
			split += st[len(st)-1]
		}
		if split > 0 {
			s.statementDefs(split)
			off = split
		}
	}
	h = h[off:]
	if nested && s.nest == 0 {
		h = ""
		if s.syn.lang == TypeScript && (strings.HasSuffix(trimmed, ":") && (s.inTypeBody() || tsVarTypeRE.MatchString(trimmed)) || tsTypeAliasRE.MatchString(trimmed)) {
			f = typeLiteral
		}
	}
	if sym, at, ok := s.classify(h, s.nest > 0); ok {
		sym.Start, sym.End = s.startLine(off+at), s.line
		f = frame(len(s.symbols))
		s.symbols = append(s.symbols, sym)
	}
	if nested {
		s.openNested(f)
		return
	}
	s.push(f)
	s.reset()
}

// statementDefs adds what the JavaScript or TypeScript statements of
// header[:end] define without a block of their own: functions by
// arrows, a type's method signatures, function signatures.
func (s *braceScan) statementDefs(end int) {
	s.exprDefs(end)
	s.tsMembers(end)
	s.tsSignatures(end)
}

// push opens a block.
func (s *braceScan) push(f frame) {
	s.stack = append(s.stack, f)
	start := s.hline
	if start == 0 {
		start = s.line
	}
	s.heads = append(s.heads, blockHead{bytes.HasPrefix(bytes.TrimSpace(s.header), []byte("typedef")), start})
}

// openNested opens a block inside a header that goes on after it.
func (s *braceScan) openNested(f frame) {
	// Only the end names the block the header goes on to open; the
	// statements before it are read now, in the block around.
	from := max(0, len(s.header)-maxSavedHeader)
	if from > 0 && (s.syn.lang == JavaScript || s.syn.lang == TypeScript) {
		if st := statements(s.header); len(st) > 1 {
			last := st[len(st)-1]
			s.statementDefs(last)
			from = max(from, last)
		}
	}
	s.push(f)
	// The saved headers' buffers are reused: one allocation per
	// depth, not per brace.
	n := len(s.saved)
	if n < cap(s.saved) {
		s.saved = s.saved[:n+1]
	} else {
		s.saved = append(s.saved, savedHeader{})
	}
	sv := &s.saved[n]
	sv.depth, sv.hline, sv.nest = len(s.stack), s.hline, s.nest
	sv.header, sv.hlines = append(sv.header[:0], s.header[from:]...), append(sv.hlines[:0], s.hlines[from:]...)
	if from > 0 {
		sv.hline = sv.hlines[0]
	}
	s.reset()
}

// lastArgument is where the innermost open parenthesis' last argument
// starts in h.
func lastArgument[T string | []byte](h T) int {
	depth := 0
	for i := len(h) - 1; i >= 0; i-- {
		switch h[i] {
		case ')', ']':
			depth++
		case '(', '[':
			if depth == 0 {
				return i + 1
			}
			depth--
		case ',':
			if depth == 0 {
				return i + 1
			}
		}
	}
	return 0
}

// startLine is the first line of a definition whose name (or keyword)
// is at header[at]: that line, and the lines before it that only
// qualify it (annotations, attributes, template<...>, a return type or
// modifiers alone on their line).
func (s *braceScan) startLine(at int) int {
	if at < 0 || at >= len(s.hlines) {
		return s.line
	}
	start := s.hlines[at]
	i := at - 1
	for i >= 0 && s.hlines[i] >= start {
		i--
	}
	for i >= 0 {
		// The header's text on the line before start.
		j := i
		for j >= 0 && s.hlines[j] == s.hlines[i] {
			j--
		}
		prev := strings.TrimSpace(string(s.header[j+1 : i+1]))
		if s.hlines[i] >= start {
			break
		}
		if prev == "" {
			i = j // a blank line, or one a comment or directive held
			continue
		}
		if !qualifierLine(prev) {
			break
		}
		start, i = s.hlines[i], j
	}
	return start
}

var typeWordsRE = regexp.MustCompile(`^[\w\s<>,*&:\[\]]+$`)

func qualifierLine(l string) bool {
	switch {
	case l == "" || strings.HasSuffix(l, ":") && !strings.HasSuffix(l, "::") || strings.HasSuffix(l, ")") && !strings.HasPrefix(l, "@") && !strings.HasPrefix(l, "["):
		return false
	case strings.HasPrefix(l, "@") || strings.HasPrefix(l, "[") || strings.HasPrefix(l, "template"):
		return true
	case strings.HasSuffix(l, ","):
		return false // the item before, in a list
	}
	return typeWordsRE.MatchString(l)
}

func (s *braceScan) close() {
	s.statementDefs(len(s.header))
	s.reset()
	if s.deep > 0 {
		s.deep--
		return
	}
	if len(s.stack) == 0 {
		return // an unbalanced }: ignored
	}
	f := s.stack[len(s.stack)-1]
	bh := s.heads[len(s.heads)-1]
	s.heads = s.heads[:len(s.heads)-1]
	if n := len(s.saved); n > 0 && s.saved[n-1].depth == len(s.stack) {
		sv := s.saved[n-1]
		s.saved = s.saved[:n-1]
		s.header, s.hlines, s.hline, s.nest = append(s.header, sv.header...), append(s.hlines, sv.hlines...), sv.hline, sv.nest
		s.header, s.hlines = append(s.header, '{', '}'), append(s.hlines, s.line, s.line)
		s.trimHeader()
	}
	s.stack = s.stack[:len(s.stack)-1]
	if f >= 0 {
		s.symbols[f].End = s.line
	}
	s.closedTypedef, s.closedStart = bh.typedef, bh.start
}

type blockHead struct {
	typedef bool // the header began with typedef
	start   int
}

// container is the innermost open type-like definition's name.
func (s *braceScan) container() string {
	for k := len(s.stack) - 1; k >= 0; k-- {
		if f := s.stack[k]; f >= 0 && typeLike[s.symbols[f].Kind] {
			return s.symbols[f].QualifiedName()
		}
	}
	return ""
}

var typeLike = map[string]bool{"class": true, "struct": true, "interface": true, "enum": true, "trait": true, "impl": true, "module": true, "namespace": true, "union": true, "record": true, "object": true}

var newline = []byte{'\n'}

var (
	goMethodRE      = regexp.MustCompile(`(?m)^[ \t]*func\s*\(\s*(?:\w+\s+)?\*?\s*([A-Za-z_]\w*)[^)]*\)\s*([A-Za-z_]\w*)`)
	annotationRE    = regexp.MustCompile(`@[\w.]+(\s*\([^()]*\))?|^\s*(\[(?:[^\[\]]|\[[^\[\]]*\])*\]\s*)+`)
	classRE         = regexp.MustCompile(`(?:^|[\s;:(])(class|interface|struct|enum|trait|union|namespace|module|record)\s+(?:(?:class|struct)\s+)?(?:[A-Z][A-Z0-9_]*\s+)?([A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*)`)
	implRE          = regexp.MustCompile(`(?m)^[ \t]*(?:unsafe\s+)?impl\b(?:\s*<.*?>)?\s+(?:.*?\s+for\s+)?(?:&\s*)?([A-Za-z_][\w]*(?:::[A-Za-z_]\w*)*)`)
	fnRE            = regexp.MustCompile(`(?:^|[\s(])(fn|function|func|def)\b\s*\*?\s*([A-Za-z_$][\w$]*)`)
	arrowRE         = regexp.MustCompile(`(?:^|\s)(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^;]*?)?=\s*(?:async\s*)?(?:function\b|(?:<[^();]*?>\s*)?\([^()]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)`)
	classExprRE     = regexp.MustCompile(`(?:^|\s)(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*class\b[^{]*$`)
	rustMacroRE     = regexp.MustCompile(`macro_rules!\s*([A-Za-z_]\w*)`)
	rustModRE       = regexp.MustCompile(`(?:^|\s)(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+([A-Za-z_]\w*)\s*$`)
	csExplicitRE    = regexp.MustCompile(`\S\s+(?:[A-Za-z_]\w*(?:<[^()]*>)?\.)+$`)
	shellFuncHeadRE = regexp.MustCompile(`[\w.:-]\s*\(\s*\)\s*$`)
	tsVarTypeRE     = regexp.MustCompile(`(?:^|\s)(?:const|let|var)\s+[A-Za-z_$][\w$]*\s*[?!]?\s*:$`)
	tsTypeAliasRE   = regexp.MustCompile(`^(?:export\s+)?(?:declare\s+)?type\s+[A-Za-z_$]`)
	templateArgsRE  = regexp.MustCompile(`<(?:[^<>]|<[^<>]*>)*>`)
	templateRE      = regexp.MustCompile(`template\s*<(?:[^<>]|<(?:[^<>]|<[^<>]*>)*>)*>`)
	fnPtrReturnRE   = regexp.MustCompile(`^\(\s*\*\s*[A-Za-z_]\w*\s*\(`)
	macroTypeRE     = regexp.MustCompile(`^[\s*&]*([A-Za-z_]\w*)\s*\(`)
	callNameRE      = regexp.MustCompile(`((?:~|#)?[A-Za-z_$][\w$]*(?:(?:<(?:[^()=;<>]|<[^()=;<>]*>)*>)?::~?[A-Za-z_$][\w$]*)*|operator\s*\S+?)\s*\??\s*(?:<(?:[^()=;<>]|<[^()=;<>]*>)*>)?\s*$`)
)

// macroType reports whether rest, after a parenthesised group, goes on
// with a name and another group: the group was a macro making the type.
// Attributes and qualifiers (__attribute__((...)), noexcept(...)) are
// not names.
func macroType(rest string) bool {
	m := macroTypeRE.FindStringSubmatch(rest)
	if m == nil {
		return false
	}
	switch w := m[1]; {
	case strings.HasPrefix(w, "__"), w == "noexcept", w == "throw", w == "decltype", w == "alignas", w == "asm", w == "requires":
		return false
	}
	return true
}

// classify says which definition a block's header opens, if any, and
// where in the header its keyword or name is. Annotations and attributes
// are blanked (same length: positions keep their lines).
func (s *braceScan) classify(h string, argument bool) (Symbol, int, bool) {
	if strings.TrimSpace(h) == "" {
		return Symbol{}, 0, false
	}
	if argument && !hasAny(h, argumentWords) {
		return Symbol{}, 0, false // a literal or an anonymous callback
	}
	// Each expression runs only when its words are there: most blocks
	// (if, for, initializers) are none of these.
	h = s.blankQualifiers(h)
	container := s.container()
	if m := implRE.FindStringSubmatchIndex(h); m != nil && s.syn.lang == Rust {
		return Symbol{Kind: "impl", Name: lastSegment(h[m[2]:m[3]]), Container: container}, m[0], true
	}
	if hasAny(h, classWords) {
		if strings.Contains(h, "template") {
			// template <class T>: a parameter, not a class.
			h = templateRE.ReplaceAllStringFunc(h, func(a string) string { return strings.Repeat(" ", len(a)) })
		}
		if m := classRE.FindStringSubmatchIndex(h); m != nil && !inParens(h, m[2]) && (s.syn.lang == Rust || !assigns(h[m[1]:])) && h[m[4]:m[5]] != "extends" && h[m[4]:m[5]] != "implements" {
			kind, name := h[m[2]:m[3]], h[m[4]:m[5]]
			if kind == "object" && s.syn.lang != TypeScript && s.syn.lang != JavaScript {
				kind = "class"
			}
			return Symbol{Kind: kind, Name: lastSegment(name), Container: container}, m[2], true
		}
	}
	if (s.syn.lang == JavaScript || s.syn.lang == TypeScript) && strings.Contains(h, "class") {
		// var C = class {...}: a class expression, named by its
		// variable.
		if m := classExprRE.FindStringSubmatchIndex(h); m != nil {
			return Symbol{Kind: "class", Name: h[m[2]:m[3]], Container: container}, m[2], true
		}
	}
	if s.syn.lang == Go && strings.Contains(h, "func") {
		if m := goMethodRE.FindStringSubmatchIndex(h); m != nil {
			return Symbol{Kind: "method", Name: h[m[4]:m[5]], Container: h[m[2]:m[3]]}, m[0] + len(h[m[0]:]) - len(strings.TrimLeft(h[m[0]:], " \t\n")), true
		}
	}
	// A function assigned or paired is named by where it is put (x.add
	// = function List_add() {...}: add), as callers name it.
	if strings.Contains(h, "=") {
		if m := arrowRE.FindStringSubmatchIndex(h); m != nil {
			return s.function(h[m[2]:m[3]], container), m[2], true
		}
	}
	if s.syn.lang == JavaScript || s.syn.lang == TypeScript {
		for _, re := range []*regexp.Regexp{assignFuncRE, pairFuncRE} {
			if m := re.FindStringSubmatchIndex(h); m != nil {
				return s.function(h[m[2]:m[3]], container), m[2], true
			}
		}
	}
	if hasAny(h, fnWords) {
		if m := fnRE.FindStringSubmatchIndex(h); m != nil && fnKeyword[s.syn.lang] == h[m[2]:m[3]] {
			return s.function(h[m[4]:m[5]], container), m[2], true
		}
	}
	if s.syn.lang == Rust {
		// Rust names every definition by a keyword: Some(x) => { is
		// a match arm.
		if m := rustMacroRE.FindStringSubmatchIndex(h); m != nil {
			return Symbol{Kind: "macro", Name: h[m[2]:m[3]], Container: container}, m[0], true
		}
		if m := rustModRE.FindStringSubmatchIndex(h); m != nil {
			return Symbol{Kind: "module", Name: h[m[2]:m[3]], Container: container}, m[0] + len(h[m[0]:]) - len(strings.TrimLeft(h[m[0]:], " \t\r\n")), true
		}
		return Symbol{}, 0, false
	}
	if argument {
		return Symbol{}, 0, false // a call's argument: a call, not a definition
	}
	return s.callLike(h, container)
}

// inParens reports whether h[i] is inside parentheses (struct in f(struct
// x *p) names a parameter's type).
func inParens(h string, i int) bool {
	return strings.Count(h[:i], "(") > strings.Count(h[:i], ")")
}

// blankQualifiers blanks a header's annotations and attributes (@x(...),
// [Attr], Rust's #[...]), keeping its length: positions keep their lines.
func (s *braceScan) blankQualifiers(h string) string {
	blank := func(a string) string { return strings.Repeat(" ", len(a)) }
	if s.syn.lang == Rust && strings.Contains(h, "#") {
		h = rustAttrRE.ReplaceAllStringFunc(h, blank)
	}
	if strings.ContainsAny(h, "@[") {
		h = annotationRE.ReplaceAllStringFunc(h, blank)
	}
	return h
}

// assigns reports whether what follows a type's name assigns it (x =
// class Y ...): an = outside <...> (type parameter defaults) and not =>.
func assigns(rest string) bool {
	depth := 0
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '<':
			depth++
		case '>':
			if depth > 0 {
				depth--
			}
		case '=':
			if depth == 0 && (i+1 >= len(rest) || rest[i+1] != '>') {
				return true
			}
		}
	}
	return false
}

// callLike reads a C-like definition header: a name, its parameters in
// parentheses, then qualifiers (const, throws ..., -> T, : T) but no
// assignment.
func (s *braceScan) callLike(h, container string) (Symbol, int, bool) {
	open := strings.IndexByte(h, '(')
	if open < 0 {
		return Symbol{}, 0, false
	}
	close := matchParen(h, open)
	if close < 0 {
		return Symbol{}, 0, false
	}
	// A function returning a function pointer: int (*name(params))(int).
	if m := fnPtrReturnRE.FindStringIndex(h[open:]); m != nil && (s.syn.lang == C || s.syn.lang == CPP) {
		if c := matchParen(h, open+m[1]-1); c >= 0 {
			open, close = open+m[1]-1, c
		}
	}
	// A macro that makes the return type (PyAPI_FUNC(int) name(...),
	// STACK_OF(X509) *name(...)): the name and parameters come after.
	for (s.syn.lang == C || s.syn.lang == CPP) && macroType(h[close+1:]) {
		next := close + 1 + strings.IndexByte(h[close+1:], '(')
		c := matchParen(h, next)
		if c < 0 {
			break
		}
		open, close = next, c
	}
	rest := h[close+1:]
	if strings.ContainsAny(rest, ";") || (strings.Contains(rest, "=") && !strings.Contains(rest, "=>")) {
		return Symbol{}, 0, false
	}
	m := callNameRE.FindStringSubmatchIndex(h[:open])
	if m == nil {
		return Symbol{}, 0, false
	}
	name, at := h[m[2]:m[3]], m[2]
	before := strings.TrimSpace(h[:m[0]])
	if s.syn.lang == CSharp && strings.HasSuffix(before, ".") && csExplicitRE.MatchString(before) {
		// IEnumerator IEnumerable.GetEnumerator(): an interface's
		// method, implemented explicitly.
		before = strings.TrimSpace(before[:strings.LastIndexAny(strings.TrimRight(before, "."), " \t\n")+1])
	}
	if s.notName(name) || statementWords[lastWord(before)] || assigns(before) || strings.HasSuffix(before, "=") || strings.HasSuffix(before, ".") || strings.HasSuffix(before, "new") {
		return Symbol{}, 0, false
	}
	if s.syn.lang == Java && before == "" && s.enumConstant(name) {
		return Symbol{}, 0, false // RED(1) { ... }: a constant's body
	}
	if i := strings.LastIndex(name, "::"); i >= 0 {
		c := templateArgsRE.ReplaceAllString(name[:i], "")
		if container != "" {
			c = container + "." + c
		}
		return Symbol{Kind: "method", Name: name[i+2:], Container: strings.ReplaceAll(c, "::", ".")}, at, true
	}
	return s.function(name, container), at, true
}

// enumConstant reports whether name, in the innermost block, is one of
// its enum's constants (a name other than the enum's: its constructor).
func (s *braceScan) enumConstant(name string) bool {
	n := len(s.stack)
	if n == 0 || s.stack[n-1] < 0 {
		return false
	}
	e := s.symbols[s.stack[n-1]]
	return e.Kind == "enum" && e.Name != name
}

func (s *braceScan) function(name, container string) Symbol {
	if container != "" {
		return Symbol{Kind: "method", Name: name, Container: container}
	}
	return Symbol{Kind: "func", Name: name}
}

// matchParen is the index of the ) closing h[open], or -1.
func matchParen(h string, open int) int {
	depth := 0
	for i := open; i < len(h); i++ {
		switch h[i] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

func lastSegment(name string) string {
	if i := strings.LastIndexAny(name, ".:"); i >= 0 {
		return name[i+1:]
	}
	return name
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
