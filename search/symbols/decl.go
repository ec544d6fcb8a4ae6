package symbols

import (
	"bytes"
	"regexp"
	"strings"
)

// Declarations that end with ; instead of a block: a C prototype, an
// abstract or interface method, a TypeScript signature, a typedef, a
// Rust mod, type or unit struct, a PHP namespace statement. They are
// read only where definitions live (the top level, a namespace, a type's
// body), never inside a function, where the same text is a call.

var (
	rustDeclRE     = regexp.MustCompile(`^(?:pub(?:\s*\([^)]*\))?\s+)?(?:(mod)\s+([A-Za-z_]\w*)$|(type)\s+([A-Za-z_]\w*)\b[^=]*=|(struct|union)\s+([A-Za-z_]\w*)\b|(macro_rules)!\s*([A-Za-z_]\w*))`)
	phpNamespaceRE = regexp.MustCompile(`^namespace\s+([A-Za-z_\\][\w\\]*)$`)
	tsSignatureRE  = regexp.MustCompile(`^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?function\b\s*\*?\s*([A-Za-z_$][\w$]*)`)
	tsMethodSigRE  = regexp.MustCompile(`^(?:(?:public|private|protected|static|readonly|abstract|override|async|declare)\s+)*(?:get\s+|set\s+)?([A-Za-z_$][\w$]*|#[\w$]+)\s*\??\s*([<(])`)
	typedefNameRE  = regexp.MustCompile(`([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*$`)
	rustAttrRE     = regexp.MustCompile(`#!?\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\]`)
	macroLinesRE   = regexp.MustCompile(`^(?:[A-Za-z_]\w*(?:[ \t]*\([^;{}()]*\))?[ \t]*\n\s*)+|^__extension__\s+`)
	accessRE       = regexp.MustCompile(`^(?:(?:public|private|protected)\s*:\s*)+`)
	attributeRE    = regexp.MustCompile(`__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)`)
	delegateRE     = regexp.MustCompile(`\bdelegate\b`)
	identListRE    = regexp.MustCompile(`^[A-Za-z_]\w*(?:\s*,\s*\*?\s*[A-Za-z_]\w*)*$`)
)

// declare reads the statement ending at a ; (the header) as a
// declaration, if it is one.
func (s *braceScan) declare() {
	h := string(s.header)
	// Rust's items are named by keywords wherever they are, and so
	// are C's typedefs.
	if strings.TrimSpace(h) == "" || s.inFunction() && s.syn.lang != Rust && !((s.syn.lang == C || s.syn.lang == CPP) && strings.Contains(h, "typedef")) {
		return
	}
	h = s.blankQualifiers(h)
	lead := len(h) - len(strings.TrimLeft(h, " \t\r\n"))
	t := strings.TrimSpace(h)
	container := s.container()
	add := func(kind, name string, at int) {
		s.symbols = append(s.symbols, Symbol{Kind: kind, Name: name, Container: container, Start: s.startLine(at), End: s.line})
	}
	switch s.syn.lang {
	case Rust:
		if m := rustDeclRE.FindStringSubmatchIndex(t); m != nil {
			for k := 2; k < len(m); k += 4 {
				if m[k] >= 0 {
					kind := t[m[k]:m[k+1]]
					switch kind {
					case "mod":
						kind = "module"
					case "macro_rules":
						kind = "macro"
					}
					add(kind, t[m[k+2]:m[k+3]], lead+m[k])
					return
				}
			}
		}
	case PHP:
		if strings.HasPrefix(t, "<?php") {
			lead, t = lead+5+len(t[5:])-len(strings.TrimLeft(t[5:], " \t\r\n")), strings.TrimLeft(t[5:], " \t\r\n")
		}
		if m := phpNamespaceRE.FindStringSubmatchIndex(t); m != nil {
			add("namespace", t[m[2]:m[3]], lead)
			return
		}
		if container != "" && strings.Contains(t, "function") {
			if m := fnRE.FindStringSubmatchIndex(t); m != nil {
				add("method", t[m[4]:m[5]], lead+m[2])
			}
		}
	case TypeScript:
		s.tsSignatures(len(s.header))
		s.tsMembers(len(s.header))
	case C, CPP:
		// A macro alone on its line before a typedef (__BEGIN_DECLS,
		// DEFINE_STACK_OF(X) without a semicolon), __extension__, or
		// an access label.
		if m := macroLinesRE.FindStringIndex(t); m != nil && strings.HasPrefix(t[m[1]:], "typedef") {
			lead, t = lead+m[1], t[m[1]:]
			h = strings.Repeat(" ", lead) + t
		}
		if m := accessRE.FindStringIndex(t); m != nil {
			lead, t = lead+m[1], t[m[1]:]
			h = strings.Repeat(" ", lead) + t
		}
		if strings.HasPrefix(t, "typedef") || s.closedTypedef {
			s.typedef(h, t, lead, add)
			return
		}
		s.signature(h, container, add)
	case Java, CSharp:
		if container != "" {
			s.signature(h, container, add)
		}
	}
}

// tsMembers adds the method signatures among the members of a
// TypeScript type's body in header[:end], one per line where a line ends
// a member without a semicolon. A member's name may be any word (assert,
// with, delete).
func (s *braceScan) tsMembers(end int) {
	if s.syn.lang != TypeScript || !s.inTypeBody() || end <= 0 {
		return
	}
	h := string(s.header[:end])
	container := s.container()
	starts := statements(h)
	for k, st := range starts {
		stop := len(h)
		if k+1 < len(starts) {
			stop = starts[k+1]
		}
		// Members may be separated by commas too.
		for from := st; from < stop; {
			to := min(topLevelComma(h, from), stop)
			seg := h[from:to]
			lead := len(seg) - len(strings.TrimLeft(seg, " \t\r\n"))
			t := strings.TrimSpace(seg)
			if m := tsMethodSigRE.FindStringSubmatchIndex(t); m != nil && t[m[2]:m[3]] != "new" && paramsAfterTypeParams(t[m[4]:]) {
				last := from + len(strings.TrimRight(seg, " \t\r\n;"))
				s.symbols = append(s.symbols, Symbol{Kind: "method", Name: t[m[2]:m[3]], Container: container, Start: s.hlines[from+lead], End: s.hlines[last-1]})
			}
			from = to + 1
		}
	}
}

// paramsAfterTypeParams reports whether rest opens a parameter list,
// after type parameters if it starts with them (<T extends new () =>
// X>(...)); new (...) is a construct signature, named by no one.
func paramsAfterTypeParams(rest string) bool {
	if rest[0] == '(' {
		return true
	}
	angle := 0
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '<':
			angle++
		case '>':
			if i > 0 && rest[i-1] == '=' {
				continue
			}
			if angle--; angle == 0 {
				r := strings.TrimLeft(rest[i+1:], " \t\r\n")
				return r != "" && r[0] == '('
			}
		}
	}
	return false
}

// tsSignatures adds the TypeScript function signatures (overloads, a
// declaration file's functions) among the statements of header[:end], a
// line ending one where no semicolon does.
func (s *braceScan) tsSignatures(end int) {
	if s.syn.lang != TypeScript || end <= 0 || !bytes.Contains(s.header[:end], []byte("function")) || s.inFunction() {
		return
	}
	h := string(s.header[:end])
	container := s.container()
	starts := statements(h)
	for k, st := range starts {
		stop := len(h)
		if k+1 < len(starts) {
			stop = starts[k+1]
		}
		seg := h[st:stop]
		lead := len(seg) - len(strings.TrimLeft(seg, " \t\r\n"))
		if m := tsSignatureRE.FindStringSubmatchIndex(seg[lead:]); m != nil {
			last := st + len(strings.TrimRight(seg, " \t\r\n;"))
			s.symbols = append(s.symbols, Symbol{Kind: "func", Name: seg[lead+m[2] : lead+m[3]], Container: container, Start: s.startLine(st + lead), End: s.hlines[last-1]})
		}
	}
}

// signature adds a function declared without a body (name, parameters,
// qualifiers), named as callLike names it; C and C++ need a type before
// the name (FOO(x); at the top level is a macro).
func (s *braceScan) signature(h, container string, add func(kind, name string, at int)) {
	// A pure virtual, defaulted or deleted C++ function is declared.
	if s.syn.lang == CPP {
		if i := strings.LastIndexByte(h, ')'); i >= 0 {
			rest := strings.TrimSpace(h[i+1:])
			for _, suffix := range []string{"= 0", "=0", "= default", "= delete"} {
				if strings.HasSuffix(rest, suffix) {
					h = h[:len(h)-len(suffix)]
					break
				}
			}
		}
	}
	sym, at, ok := s.callLike(h, container)
	if !ok {
		return
	}
	if s.syn.lang == Java || s.syn.lang == CSharp {
		// A method declared without a body has its type before it;
		// without one it is a call (in a property's accessor).
		before := strings.TrimSpace(h[:at])
		if before == "" || strings.ContainsAny(before[len(before)-1:], "=?|+-/%!^") {
			return // x ?? default(T): an expression
		}
		if s.syn.lang == CSharp && delegateRE.MatchString(before) {
			sym.Kind = "delegate" // a type, whose instances are methods
		}
	}
	if s.syn.lang == C || s.syn.lang == CPP {
		// A constructor is declared without a type, in its class; a C
		// struct declares fields only (char id[LEN(2, 6)]).
		before := strings.TrimSpace(h[:at])
		if before == "" && (s.syn.lang == C || !s.inClassBody()) || s.syn.lang == C && container != "" || before != "" && strings.ContainsAny(before[len(before)-1:], ",(<[") {
			return
		}
	}
	add(sym.Kind, sym.Name, at)
}

// typedef adds the name a typedef declares: after its type (typedef
// unsigned long size_t;) or after the block it closed (typedef struct
// {...} point;). A function type's name (typedef int (*fn)(int);) is in
// parentheses: tree-sitter's tags leave those out, and so does this.
func (s *braceScan) typedef(h, t string, lead int, add func(kind, name string, at int)) {
	t = strings.TrimSpace(attributeRE.ReplaceAllString(t, ""))
	if strings.ContainsAny(t, "()") {
		return
	}
	if !strings.HasPrefix(t, "typedef") {
		if !identListRE.MatchString(t) {
			return
		}
		// The names after the block: the definition starts with it.
		for _, name := range strings.Split(t, ",") {
			name = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(name), "*"))
			s.symbols = append(s.symbols, Symbol{Kind: "type", Name: name, Container: s.container(), Start: s.closedStart, End: s.line})
		}
		return
	}
	if m := typedefNameRE.FindStringSubmatchIndex(t); m != nil && m[2] > len("typedef") {
		add("type", t[m[2]:m[3]], lead)
	}
}

// inClassBody reports whether the innermost definition open is a class
// or struct (where a constructor is declared without a type).
func (s *braceScan) inClassBody() bool {
	for k := len(s.stack) - 1; k >= 0; k-- {
		if f := s.stack[k]; f >= 0 {
			return s.symbols[f].Kind == "class" || s.symbols[f].Kind == "struct"
		}
	}
	return false
}

// inFunction reports whether a function's body is open.
func (s *braceScan) inFunction() bool {
	for _, f := range s.stack {
		if f >= 0 && (s.symbols[f].Kind == "func" || s.symbols[f].Kind == "method") {
			return true
		}
	}
	return false
}
