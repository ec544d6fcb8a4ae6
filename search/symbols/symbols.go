// Package symbols reads code as structure, per call and without an
// index: the definitions of a file (functions, methods, types, classes
// and the blocks they span), the one enclosing a line, and the
// definitions of a name. Go is parsed exactly, by the standard library's
// parser; the other languages by structural scanners that know their
// comments, strings and blocks (braces, indentation, or keyword ... end),
// bounded in time, depth and size whatever the input.
package symbols

import (
	"context"
	"errors"
	"path"
	"sort"
	"strings"
)

// Lang is a language the scanners read.
type Lang string

// The languages.
const (
	Go         Lang = "go"
	Python     Lang = "python"
	JavaScript Lang = "javascript"
	TypeScript Lang = "typescript"
	Java       Lang = "java"
	C          Lang = "c"
	CPP        Lang = "cpp"
	CSharp     Lang = "csharp"
	Rust       Lang = "rust"
	Ruby       Lang = "ruby"
	PHP        Lang = "php"
	Shell      Lang = "shell"
)

var byExt = map[string]Lang{
	".go": Go, ".py": Python, ".pyi": Python,
	".js": JavaScript, ".mjs": JavaScript, ".cjs": JavaScript, ".jsx": JavaScript,
	".ts": TypeScript, ".tsx": TypeScript, ".mts": TypeScript, ".cts": TypeScript,
	".java": Java, ".c": C, ".h": C,
	".cc": CPP, ".cpp": CPP, ".cxx": CPP, ".hh": CPP, ".hpp": CPP, ".hxx": CPP,
	".cs": CSharp, ".rs": Rust, ".rb": Ruby, ".php": PHP,
	".sh": Shell, ".bash": Shell, ".zsh": Shell, ".ksh": Shell,
}

// Glob matches the names of the files Detect knows (a search's glob).
func Glob() string {
	exts := make([]string, 0, len(byExt))
	for e := range byExt {
		exts = append(exts, e[1:])
	}
	sort.Strings(exts)
	return "*.{" + strings.Join(exts, ",") + "}"
}

// Detect is the language of a file by its name ("" when none).
func Detect(name string) Lang {
	return byExt[strings.ToLower(path.Ext(name))]
}

// Symbol is one definition.
type Symbol struct {
	// Kind: func, method, type, struct, interface, class, enum, trait,
	// impl, module, namespace, union, record, object, macro, delegate.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Container is the type, class or module it is defined in.
	Container string `json:"container,omitempty"`
	// Start and End are its first and last lines (1-based, inclusive):
	// the whole definition, its doc comment included where the parser
	// knows it (Go).
	Start int `json:"start"`
	End   int `json:"end"`
}

// QualifiedName is Container.Name, or Name.
func (s Symbol) QualifiedName() string {
	if s.Container == "" {
		return s.Name
	}
	return s.Container + "." + s.Name
}

// Limits bound one file's reading.
type Limits struct {
	MaxBytes   int // larger files are refused (ErrTooLarge)
	MaxSymbols int // more definitions are dropped (Outline's cut)
	MaxDepth   int // deeper nesting is read as flat text
}

// DefaultLimits: 8 MiB, 20,000 definitions, 256 levels.
var DefaultLimits = Limits{MaxBytes: 8 << 20, MaxSymbols: 20_000, MaxDepth: 256}

// Errors of Outline.
var (
	ErrTooLarge = errors.New("the file is larger than the outline reads")
	ErrBinary   = errors.New("the file is binary")
	ErrLanguage = errors.New("no structural reader for this language")
)

// Outline is the definitions of src in lang, ordered by their first line
// (an enclosing definition before those it holds); cut says MaxSymbols
// stopped it. ctx is checked as it goes.
func Outline(ctx context.Context, lang Lang, src []byte, lim Limits) (syms []Symbol, cut bool, err error) {
	if lim.MaxBytes > 0 && len(src) > lim.MaxBytes {
		return nil, false, ErrTooLarge
	}
	if isBinary(src) {
		return nil, false, ErrBinary
	}
	switch lang {
	case Go:
		syms, err = goOutline(ctx, src)
		if err != nil {
			// Code that does not parse is still read, as the scanners read.
			syms, err = scanOutline(ctx, braceSyntax(lang), src, lim)
		}
	case Python:
		syms, err = pythonOutline(ctx, src, lim)
	case Ruby:
		syms, err = rubyOutline(ctx, src, lim)
	case "":
		return nil, false, ErrLanguage
	default:
		syms, err = scanOutline(ctx, braceSyntax(lang), src, lim)
	}
	if err != nil {
		return nil, false, err
	}
	// A header the readers took for a definition but could not name
	// ("module ::", "class Foo::") names none.
	named := syms[:0]
	for _, s := range syms {
		if s.Name != "" {
			named = append(named, s)
		}
	}
	syms = named
	sort.SliceStable(syms, func(i, j int) bool {
		if syms[i].Start != syms[j].Start {
			return syms[i].Start < syms[j].Start
		}
		return syms[i].End > syms[j].End
	})
	if lim.MaxSymbols > 0 && len(syms) > lim.MaxSymbols {
		return syms[:lim.MaxSymbols], true, nil
	}
	return syms, false, nil
}

// Find is the definitions named name: a plain name matches Name, a
// dotted one (Type.Method) Container and Name.
func Find(syms []Symbol, name string) []Symbol {
	var out []Symbol
	// The last dot splits: a.b.C is container a.b, name C.
	container, bare := "", name
	i := strings.LastIndexByte(name, '.')
	dotted := i >= 0
	if dotted {
		container, bare = name[:i], name[i+1:]
	}
	for _, s := range syms {
		if s.Name == bare && (!dotted || s.Container == container || strings.HasSuffix(s.Container, "."+container)) {
			out = append(out, s)
		}
	}
	return out
}

// Enclosing is the innermost definition whose lines hold line.
func Enclosing(syms []Symbol, line int) (Symbol, bool) {
	var best Symbol
	found := false
	for _, s := range syms {
		if s.Start <= line && line <= s.End && (!found || s.End-s.Start <= best.End-best.Start) {
			best, found = s, true
		}
	}
	return best, found
}

func isBinary(b []byte) bool {
	n := min(len(b), 8000)
	for _, c := range b[:n] {
		if c == 0 {
			return true
		}
	}
	return false
}
