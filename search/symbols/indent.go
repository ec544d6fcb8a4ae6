package symbols

import (
	"bytes"
	"context"
	"regexp"
	"strings"
)

var (
	pyDefRE   = regexp.MustCompile(`^(?:async\s+)?def\s+([A-Za-z_]\w*)`)
	pyClassRE = regexp.MustCompile(`^class\s+([A-Za-z_]\w*)`)
	// pyConstRE is a module's name = value (or name: type = value).
	pyConstRE = regexp.MustCompile(`^([A-Za-z_]\w*)\s*(?::[^=]*)?(?:=(?:[^=]|$)|:[^=]*$)`)
)

// pyOpen is a Python definition still open: its indentation and index.
type pyOpen struct {
	indent, sym int
}

// pythonOutline reads Python by indentation: a def or class holds the
// lines below it indented deeper. Strings (triple-quoted ones span
// lines), comments and bracketed continuation lines are not statements.
func pythonOutline(ctx context.Context, src []byte, lim Limits) ([]Symbol, error) {
	var syms []Symbol
	var open []pyOpen
	var lx pyLexer
	lastCode, decorators := 0, 0
	constant := -1 // the module constant whose statement goes on
	closeTo := func(indent int) {
		for len(open) > 0 && open[len(open)-1].indent >= indent {
			syms[open[len(open)-1].sym].End = lastCode
			open = open[:len(open)-1]
		}
	}
	for n, line := range bytes.Split(src, []byte{'\n'}) {
		if n&0x3ff == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if lim.MaxSymbols > 0 && len(syms) > lim.MaxSymbols {
			break // Outline cuts at MaxSymbols: what follows is not read
		}
		num := n + 1
		statement := lx.atStatement()
		code := lx.scan(line)
		if !statement || code == "" {
			if code != "" {
				lastCode = num
				if constant >= 0 {
					syms[constant].End = num
				}
			}
			continue
		}
		constant = -1
		indent := indentOf(line)
		closeTo(indent)
		text := strings.TrimSpace(code)
		if strings.HasPrefix(text, "@") {
			if decorators == 0 {
				decorators = num
			}
			lastCode = num
			continue
		}
		start := num
		if decorators != 0 {
			start, decorators = decorators, 0
		}
		lastCode = num
		var sym Symbol
		if m := pyDefRE.FindStringSubmatch(text); m != nil {
			sym = Symbol{Kind: "func", Name: m[1]}
		} else if m := pyClassRE.FindStringSubmatch(text); m != nil {
			sym = Symbol{Kind: "class", Name: m[1]}
		} else if m := pyConstRE.FindStringSubmatch(text); m != nil && indent == 0 && !isPyKeyword(m[1]) {
			constant = len(syms)
			syms = append(syms, Symbol{Kind: "const", Name: m[1], Start: start, End: num})
			continue
		} else {
			continue
		}
		for k := len(open) - 1; k >= 0; k-- {
			if c := syms[open[k].sym]; c.Kind == "class" {
				sym.Container = c.QualifiedName()
				if sym.Kind == "func" && k == len(open)-1 {
					sym.Kind = "method"
				}
				break
			}
		}
		sym.Start, sym.End = start, num
		if lim.MaxDepth > 0 && len(open) >= lim.MaxDepth {
			continue
		}
		open = append(open, pyOpen{indent: indent, sym: len(syms)})
		syms = append(syms, sym)
	}
	closeTo(0)
	return syms, nil
}

func isPyKeyword(w string) bool {
	switch w {
	case "else", "try", "finally", "lambda", "match", "case":
		return true
	}
	return false
}

func indentOf(line []byte) int {
	n := 0
	for _, c := range line {
		switch c {
		case ' ':
			n++
		case '\t':
			n += 8 - n%8
		default:
			return n
		}
	}
	return n
}

// pyLexer follows strings and brackets across lines.
type pyLexer struct {
	triple   string // the open triple quote, or ""
	quote    byte   // the quote of a string a backslash continued, or 0
	brackets int
	cont     bool // the last line ended with a backslash
}

// atStatement: the next line starts a statement (not inside a string,
// brackets or a continued line).
func (l *pyLexer) atStatement() bool {
	return l.triple == "" && l.quote == 0 && l.brackets == 0 && !l.cont
}

// closeTriple returns the index of the triple quote q closing a string
// in s from i (a backslash escapes the character after it, in raw
// strings too: r"""\"""" holds a quote), or -1.
func closeTriple(s string, i int, q string) int {
	for ; i+3 <= len(s); i++ {
		switch {
		case s[i] == '\\':
			i++
		case s[i] == q[0] && s[i:i+3] == q:
			return i
		}
	}
	return -1
}

// closeQuote returns the index of the quote c closing a one-line string
// in s from i, or len(s) and whether a backslash continues it on the next
// line.
func closeQuote(s string, i int, c byte) (int, bool) {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i == len(s)-1 || i == len(s)-2 && s[i+1] == '\r' {
				return len(s), true
			}
			i++
		case c:
			return i, false
		}
	}
	return len(s), false
}

// scan reads one line and returns its code with strings and comments
// replaced (strings by "", comments dropped).
func (l *pyLexer) scan(line []byte) string {
	var b strings.Builder
	s := string(line)
	l.cont = false
	start := 0
	if l.quote != 0 {
		end, open := closeQuote(s, 0, l.quote)
		if open {
			return ""
		}
		l.quote, start = 0, end+1
		b.WriteString(`""`)
	}
	for i := start; i < len(s); i++ {
		if l.triple != "" {
			j := closeTriple(s, i, l.triple)
			if j < 0 {
				return b.String()
			}
			i = j + 2
			l.triple = ""
			b.WriteString(`""`)
			continue
		}
		c := s[i]
		switch {
		case c == '#':
			return b.String()
		case c == '"' || c == '\'':
			if strings.HasPrefix(s[i:], `"""`) || strings.HasPrefix(s[i:], `'''`) {
				l.triple = s[i : i+3]
				i += 2
				continue
			}
			j, open := closeQuote(s, i+1, c)
			if open {
				l.quote = c
				return b.String()
			}
			i = j
			b.WriteString(`""`)
		case c == '(' || c == '[' || c == '{':
			l.brackets++
			b.WriteByte(c)
		case c == ')' || c == ']' || c == '}':
			if l.brackets > 0 {
				l.brackets--
			}
			b.WriteByte(c)
		case c == '\\' && i == len(s)-1:
			l.cont = true
		case c == '\r' && i == len(s)-1:
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

var (
	rbOpenRE      = regexp.MustCompile(`^(?:(?:private|protected|public|module_function|ruby2_keywords|private_class_method|public_class_method)\s+)?(def|class|module)\s+(self\.)?([A-Za-z_][\w.:]*[?!=]?|\[\]=?|<=>|===?|=~|!~|!=|\*\*|<<|>>|[<>]=|[-+*/%<>!~^&|]@?)`)
	rbAliasRE     = regexp.MustCompile(`^alias\s+:?(\$\w+|\$\S|[A-Za-z_]\w*[?!=]?|\[\]=?|[-+*/%<>=!~^&|]+)`)
	rbSingletonRE = regexp.MustCompile(`^class\s*<<\s*([A-Z]\w*(?:::[A-Z]\w*)*)\s*$`)
	rbBlockRE     = regexp.MustCompile(`^(if|unless|while|until|case|begin|for)\b`)
	rbDoRE        = regexp.MustCompile(`\bdo\b\s*(\|[^|]*\|)?\s*$`)
	rbEndRE       = regexp.MustCompile(`(^|[\s;])end\b`)
	// rbEndlessRE is a method defined by = (Ruby 3): it has no end.
	rbEndlessRE = regexp.MustCompile(`^def\s+(?:self\.)?[\w?!]+(?:\s*\([^)]*\)\s*|\s+)=(?:[^=~>]|$)`)
)

// rbContainer is the innermost class or module open, if any.
func rbContainer(syms []Symbol, stack []int) (string, bool) {
	for k := len(stack) - 1; k >= 0; k-- {
		if stack[k] >= 0 && syms[stack[k]].Kind != "func" && syms[stack[k]].Kind != "method" {
			return syms[stack[k]].QualifiedName(), true
		}
	}
	return "", false
}

// rubyOutline reads Ruby's def, class and module ... end, counting the
// other blocks that end with end (if, while, do ...) so that each end
// closes the right one.
func rubyOutline(ctx context.Context, src []byte, lim Limits) ([]Symbol, error) {
	var syms []Symbol
	var stack []int // index in syms, or -1
	var lx pyLexer  // # comments and quoted strings, as Python's
	var docs []heredoc
	inDoc := false
	for n, line := range bytes.Split(src, []byte{'\n'}) {
		if n&0x3ff == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if lim.MaxSymbols > 0 && len(syms) > lim.MaxSymbols {
			break // Outline cuts at MaxSymbols: what follows is not read
		}
		num := n + 1
		if bytes.HasPrefix(line, []byte("=begin")) {
			inDoc = true
		}
		if inDoc {
			// =begin ... =end: a comment.
			inDoc = !bytes.HasPrefix(line, []byte("=end"))
			continue
		}
		if len(docs) > 0 {
			// A here document's body, up to its terminator.
			l := bytes.TrimRight(line, "\r")
			if docs[0].indented {
				l = bytes.TrimLeft(l, " \t")
			}
			if bytes.Equal(l, docs[0].word) {
				docs = docs[1:]
			}
			continue
		}
		lx.brackets, lx.cont, lx.triple = 0, false, ""
		text := strings.TrimSpace(lx.scan(line))
		if strings.Contains(text, "<<") {
			docs = append(docs, rubyHeredocs(string(line))...) // the word may be quoted
		}
		for _, stmt := range strings.Split(text, ";") {
			stmt = strings.TrimSpace(stmt)
			if m := rbAliasRE.FindStringSubmatch(stmt); m != nil {
				// alias new old: a method, by another name.
				container, _ := rbContainer(syms, stack)
				syms = append(syms, Symbol{Kind: "method", Name: m[1], Container: container, Start: num, End: num})
				continue
			}
			if m := rbSingletonRE.FindStringSubmatch(stmt); m != nil {
				// class << Constant: that object's singleton class.
				stack = append(stack, len(syms))
				syms = append(syms, Symbol{Kind: "class", Name: lastSegment(m[1]), Start: num, End: num})
				continue
			}
			switch {
			case rbOpenRE.MatchString(stmt) && !strings.HasPrefix(stmt, "class <<"):
				m := rbOpenRE.FindStringSubmatch(stmt)
				kind := map[string]string{"def": "func", "class": "class", "module": "module"}[m[1]]
				if m[1] == "def" && rbEndlessRE.MatchString(stmt) {
					continue // an endless method: no end
				}
				sym := Symbol{Kind: kind, Name: lastSegment(m[3]), Start: num, End: num}
				if c, ok := rbContainer(syms, stack); ok {
					sym.Container = c
					if kind == "func" {
						sym.Kind = "method"
					}
				}
				if lim.MaxDepth > 0 && len(stack) >= lim.MaxDepth {
					stack = append(stack, -1)
					continue
				}
				stack = append(stack, len(syms))
				syms = append(syms, sym)
			case rbBlockRE.MatchString(stmt) || rbDoRE.MatchString(stmt) || strings.HasPrefix(stmt, "class <<"):
				stack = append(stack, -1)
			}
			if rbEndRE.MatchString(stmt) && len(stack) > 0 && !rbOpenRE.MatchString(stmt) {
				if k := stack[len(stack)-1]; k >= 0 {
					syms[k].End = num
				}
				stack = stack[:len(stack)-1]
			}
		}
	}
	// Definitions left open end at the last line.
	last := bytes.Count(src, []byte{'\n'}) + 1
	for _, k := range stack {
		if k >= 0 {
			syms[k].End = last
		}
	}
	return syms, nil
}
