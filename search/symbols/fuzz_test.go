package symbols

import (
	"context"
	"strings"
	"testing"
)

// fuzzOutline is each language's fuzz target: Outline and CodeLines of
// any text end, and answer lines within it.
func fuzzOutline(f *testing.F, lang Lang, seeds ...string) {
	for _, s := range append(seeds, "", "{", "}}}", "\"unterminated", "/* open", "\xff\xfe{") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		lines := strings.Count(src, "\n") + 1
		if code, err := CodeLines(context.Background(), lang, []byte(src), "f"); err == nil && len(code) != lines+1 {
			t.Fatalf("%s: %d code lines for %d lines", lang, len(code)-1, lines)
		}
		syms, _, err := Outline(context.Background(), lang, []byte(src), DefaultLimits)
		if err != nil {
			return
		}
		for _, s := range syms {
			if s.Start < 1 || s.End < s.Start || s.End > lines || s.Name == "" {
				t.Fatalf("%s: %+v in %d lines", lang, s, lines)
			}
		}
	})
}

func FuzzOutlineGo(f *testing.F) {
	fuzzOutline(f, Go, "func f() {}", "func (t *T) M() {\n}\ntype A struct{}")
}

func FuzzOutlinePython(f *testing.F) {
	fuzzOutline(f, Python, "class A:\n  def m(self): pass\n", "X = [\n 1]\n@d\ndef f():\n  '''x\n'''")
}

func FuzzOutlineJavaScript(f *testing.F) {
	fuzzOutline(f, JavaScript, "const f = (x) => x\nobj.g = function () {}", "class A { m() { return /}/ } }", "x = { a: () => 1, b() {} }")
}

func FuzzOutlineTypeScript(f *testing.F) {
	fuzzOutline(f, TypeScript, "interface I {\n  m(): void\n  n?(x: { a: 1 }): T\n}", "function f<A, B = {}>(x: A): { a: B } {}", "type T = { f: () => void }")
}

func FuzzOutlineJava(f *testing.F) {
	fuzzOutline(f, Java, "class A { @Ann(x = 1)\n public <T> T m() {} abstract void n(); }", "new Comparator<T>() { int compare() {} }")
}

func FuzzOutlineC(f *testing.F) {
	fuzzOutline(f, C, "#define X {\nint f() { return '}'; }", "typedef struct { int a; } T;\nAPI(int) g(void);")
}

func FuzzOutlineCPP(f *testing.F) {
	fuzzOutline(f, CPP, "namespace n { class A { A(); ~A(); }; }", "template <class T> void A<T>::f() {}", "auto s = R\"x(})x\";")
}

func FuzzOutlineCSharp(f *testing.F) {
	fuzzOutline(f, CSharp, "namespace N { class C { void I.M() {} string s = @\"a\"\"}\"; } }")
}

func FuzzOutlineRust(f *testing.F) {
	fuzzOutline(f, Rust, "impl<'a> X for Y { fn f() {} }", "mod m;\nmacro_rules! m { () => {} }\nlet s = r#\"}\"#;")
}

func FuzzOutlineRuby(f *testing.F) {
	fuzzOutline(f, Ruby, "module M\n def a; end\nend\n", "class << Foo\n  alias b a\n  x = <<~EOS\n  def no\n  EOS\nend", "=begin\ndef x\n=end")
}

func FuzzOutlinePHP(f *testing.F) {
	fuzzOutline(f, PHP, "<?php\nnamespace A\\B;\nclass C { function f() { foreach ($a as $b) {} } }")
}

func FuzzOutlineShell(f *testing.F) {
	fuzzOutline(f, Shell, "f() {\n  cat <<EOF\n}\nEOF\n}\n", "x=\"$(printf \"%s\" a)\"\ng ()\n{\n :\n}")
}
