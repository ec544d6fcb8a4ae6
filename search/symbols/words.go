package symbols

import (
	"bytes"
	"strings"
)

// The words that say what a block's header is: keywords that open no
// definition before parentheses, and those that name one.

// statementWords before a name make its parentheses a call.
var statementWords = map[string]bool{"return": true, "new": true, "throw": true, "await": true, "yield": true, "else": true,
	"case": true, "goto": true, "in": true, "is": true, "as": true, "out": true, "ref": true, "echo": true, "print": true}

func lastWord(s string) string {
	i := strings.LastIndexFunc(s, func(r rune) bool {
		return r != '_' && !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	})
	return s[i+1:]
}

// notName reports whether a word before parentheses opens no
// definition in the language being read.
func (s *braceScan) notName(name string) bool {
	switch {
	case csharpWords[name]:
		return s.syn.lang == CSharp
	case name == "match":
		return s.syn.lang == Rust || s.syn.lang == PHP // match (x) {
	case name == "loop":
		return s.syn.lang == Rust
	}
	return notNames[name]
}

// csharpWords are C#'s statement keywords, names elsewhere (Java's
// using(), JavaScript's with).
var csharpWords = map[string]bool{"using": true, "lock": true, "fixed": true, "checked": true, "unchecked": true, "unsafe": true, "when": true}

// notNames are words before a parenthesis that open no definition.
var notNames = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "catch": true, "return": true, "sizeof": true,
	"else": true, "elseif": true, "do": true, "try": true, "using": true, "lock": true, "foreach": true, "when": true, "synchronized": true,
	"new": true, "typeof": true, "await": true, "elif": true, "until": true, "case": true, "with": true,
	"fixed": true, "unsafe": true, "async": true, "function": true, "checked": true, "unchecked": true,
	"alignof": true, "decltype": true, "static_assert": true, "throw": true, "assert": true,
	"constexpr": true, "consteval": true, "__attribute__": true, "__declspec": true, "__asm__": true, "__asm": true, "asm": true, "alignas": true, "_Alignas": true, "__typeof__": true}

var (
	classWords = []string{"class", "interface", "struct", "enum", "trait", "union", "namespace", "module", "record"}
	fnWords    = []string{"fn", "func", "def"} // "function" holds "func"
)

// argumentWords are what a block opened inside a call's parentheses
// must hold to be a definition (foo(function named() {...})).
var argumentWords = []string{"func", "fn", "=", "class", "struct", "interface", "enum"}

// fnKeyword is the keyword that opens a function in the languages that
// have one before the brace (Python and Ruby are read apart).
var fnKeyword = map[Lang]string{Go: "func", Rust: "fn", JavaScript: "function", TypeScript: "function", PHP: "function", Shell: "function"}

func hasAnyBytes(h []byte, words []string) bool {
	for _, w := range words {
		if bytes.Contains(h, []byte(w)) {
			return true
		}
	}
	return false
}

func hasAny(h string, words []string) bool {
	for _, w := range words {
		if strings.Contains(h, w) {
			return true
		}
	}
	return false
}
