package symbols

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

func outline(t *testing.T, lang Lang, src string) []Symbol {
	t.Helper()
	syms, _, err := Outline(context.Background(), lang, []byte(src), DefaultLimits)
	if err != nil {
		t.Fatalf("%s: %v", lang, err)
	}
	return syms
}

func render(syms []Symbol) string {
	var b strings.Builder
	for _, s := range syms {
		fmt.Fprintf(&b, "%s %s %d-%d\n", s.Kind, s.QualifiedName(), s.Start, s.End)
	}
	return b.String()
}

func TestOutlines(t *testing.T) {
	for _, c := range []struct {
		lang      Lang
		src, want string
	}{
		{Go, "package p\n\n// Dialer dials.\ntype Dialer struct {\n\tx int\n}\n\n// DialContext dials.\nfunc (d *Dialer) DialContext() {\n\t_ = \"}\"\n}\n\nfunc f[T any]() {}\n",
			"struct Dialer 3-6\nmethod Dialer.DialContext 8-11\nfunc f 13-13\n"},
		{Python, "import x\n\n@dec\nclass A(B):\n    \"\"\"doc\n    def fake():\n    \"\"\"\n    def m(self, a=(1,\n2)):\n        return '#'  # c\n\n    async def n(self):\n        pass\n\ndef top():\n    pass\n",
			"class A 3-13\nmethod A.m 8-10\nmethod A.n 12-13\nfunc top 15-16\n"},
		// A backslash continues a one-line string on the next line.
		{Python, "def a():\n    raise E(\"one \\\n  two\")\n\n\ndef b():\n    pass\n",
			"func a 1-3\nfunc b 6-7\n"},
		{Java, "package x;\n@Service\npublic class Foo extends Bar {\n  @Override\n  public void run() throws IOException {\n    if (x) { y(); }\n    String s = \"{\";\n  }\n  Foo(int a) { }\n}\n",
			"class Foo 2-10\nmethod Foo.run 4-8\nmethod Foo.Foo 9-9\n"},
		{C, "/* { */\nstatic int add(int a, int b)\n{\n\tchar c = '{';\n\treturn a + b;\n}\nstruct point p = {1, 2};\nstruct point {\n\tint x;\n};\n",
			"func add 2-6\nstruct point 8-10\n"},
		// A C struct holds fields only; a function may return a
		// function pointer.
		// An enum constant's body is no method; its constructor is.
		{Java, "enum E {\n  A(1) {\n    int get() { return 1; }\n  };\n  E(int x) { }\n}\n",
			"enum E 1-6\nmethod E.get 3-3\nmethod E.E 5-5\n"},
		// A backslash escapes a quote in a triple-quoted string.
		{Python, `x('''f\'\'\'-{f"""*{f"+{f'.{x}.'}+"}*"""}-\'\'\'''')` + "\ndef a():\n    pass\n", "func a 2-3\n"},
		// A macro call without a semicolon before a typedef, and
		// __extension__.
		{C, "DEFINE_STACK(A, A)\n\ntypedef struct a_st A_BAGS;\n__extension__ typedef unsigned long long int __uintmax_t;\n",
			"type A_BAGS 3-3\ntype __uintmax_t 4-4\n"},
		{C, "struct iso {\n\tchar id[ISODCL(2,6)];\n\tstruct re *__REPB_PREFIX(buffer);\n};\nint (*get_writer(const M *m))(UI *);\n",
			"struct iso 1-4\nfunc get_writer 5-5\n"},
		// match is a name outside Rust and PHP; if constexpr is no
		// function.
		{CPP, "struct N : Node {\n  template<typename Fn> void match(Fn F) const { F(A); }\n  void f() {\n    if constexpr (sizeof(T) == 16)\n      return;\n  }\n};\n",
			"struct N 1-7\nmethod N.match 2-2\nmethod N.f 3-6\n"},
		{CPP, "namespace ns {\nint Foo::bar(int a) const {\n  return a;\n}\nclass Baz : public Q {\n public:\n  void qux() override { }\n};\n}\n",
			"namespace ns 1-9\nmethod ns.Foo.bar 2-4\nclass ns.Baz 5-8\nmethod ns.Baz.qux 7-7\n"},
		{Rust, "pub struct S<'a> { x: &'a str }\nimpl<'a> Display for S<'a> {\n    fn fmt(&self, f: &mut F) -> Result {\n        write!(f, \"}}\")\n    }\n}\npub(crate) async fn go() {}\n",
			"struct S 1-1\nimpl S 2-6\nmethod S.fmt 3-5\nfunc go 7-7\n"},
		{TypeScript, "export class A<T> {\n  async get(url: string): Promise<void> {\n    const t = `${url}}`;\n  }\n}\nexport const h = async (x: number) => {\n  return x;\n};\nfunction* gen() {}\n",
			"class A 1-5\nmethod A.get 2-4\nfunc h 6-8\nfunc gen 9-9\n"},
		// A template's substitution holds braces, quotes, a regular
		// expression and a template of its own.
		{JavaScript, "const q = v => `'${v.replace(/'/g, `'\\''`)}' ${ {a: 1}.a }`;\nfunction after() {}\nx.add = function List_add() {};\nvar C = class extends B {\n  f = () => {};\n};\n",
			"func q 1-1\nfunc after 2-2\nfunc add 3-3\nclass C 4-6\nmethod C.f 5-5\n"},
		// Signatures without semicolons, and an object type's members.
		{TypeScript, "export function f(a: string): Promise<void>\nexport function f(a: any) {}\ndeclare const api: {\n  get(): void\n  set(v: number): void\n};\n",
			"func f 1-1\nfunc f 2-2\nmethod get 4-4\nmethod set 5-5\n"},
		// A parameter's object type names no functions; a construct
		// signature is no method; type parameters may hold parentheses;
		// a generic arrow is a function.
		{TypeScript, "declare function g(op: {\n  apply: (v: T) => void;\n}): void;\ninterface I {\n  new (x: number): I\n  is<T extends new () => X>(v: T): v is T\n}\nconst id = <T,>(x: T): T => {\n  return x;\n};\n",
			"func g 1-3\ninterface I 4-7\nmethod I.is 6-6\nfunc id 8-10\n"},
		{CSharp, "namespace N {\n  public sealed class C : Base {\n    [HttpGet(\"x\")]\n    public IActionResult Get(int id) {\n      return null;\n    }\n    public C(int a) : base(a) { }\n  }\n}\n",
			"namespace N 1-9\nclass N.C 2-8\nmethod N.C.Get 3-6\nmethod N.C.C 7-7\n"},
		// A delegate is a type; default(T) in an accessor is an
		// expression; an attribute may hold an array's braces.
		{CSharp, "class K {\n  public delegate void Callback(object o);\n  public int P {\n    get { return _p ?? default(int); }\n  }\n  [A(X = new object[] { 0 })]\n  public int Q { get; set; }\n}\n",
			"class K 1-8\ndelegate K.Callback 2-2\n"},
		{Ruby, "module M\n  class K < Base\n    def a(x)\n      if x\n        y\n      end\n      [1].each do |i|\n      end\n    end\n    def self.b = 1\n    def c; end\n  end\nend\n",
			"module M 1-13\nclass M.K 2-12\nmethod M.K.a 3-9\nmethod M.K.c 11-11\n"},
		{PHP, "<?php\n# c {\nclass A {\n  public function f($a) {\n    return '}';\n  }\n}\nfunction g() {}\n",
			"class A 3-7\nmethod A.f 4-6\nfunc g 8-8\n"},
		{Shell, "#!/bin/sh\n# a { b\nusage() {\n  echo '}'\n}\nfunction main {\n  x=${#y}\n}\n",
			"func usage 3-5\nfunc main 6-8\n"},
	} {
		if got := render(outline(t, c.lang, c.src)); got != c.want {
			t.Errorf("%s:\n got:\n%s want:\n%s", c.lang, got, c.want)
		}
	}
}

func TestFindAndEnclosing(t *testing.T) {
	syms := outline(t, Go, "package p\ntype T struct{}\nfunc (T) M() {\n\tx()\n}\nfunc M() {}\n")
	if got := Find(syms, "M"); len(got) != 2 {
		t.Errorf("Find(M): %v", got)
	}
	if got := Find(syms, "T.M"); len(got) != 1 || got[0].Start != 3 {
		t.Errorf("Find(T.M): %v", got)
	}
	if s, ok := Enclosing(syms, 4); !ok || s.QualifiedName() != "T.M" {
		t.Errorf("Enclosing(4): %v %v", s, ok)
	}
	if _, ok := Enclosing(syms, 1); ok {
		t.Error("line 1 is in no definition")
	}
}

func TestDetect(t *testing.T) {
	for name, want := range map[string]Lang{"a.go": Go, "x/Y.JAVA": Java, "b.tsx": TypeScript, "c.h": C, "Makefile": "", "r.rb": Ruby} {
		if got := Detect(name); got != want {
			t.Errorf("Detect(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestLongHeaders: definitions in a header longer than the scanner keeps
// (an object's pairs past 1 KiB, a class body of signatures holding an
// object type) are read before its start is dropped.
func TestLongHeaders(t *testing.T) {
	var b strings.Builder
	b.WriteString("var m = exportAll({\n")
	for i := range 100 {
		fmt.Fprintf(&b, "\tname%d: () => require_name%d.name%d,\n", i, i, i)
	}
	b.WriteString("});\n")
	if got := len(outline(t, JavaScript, b.String())); got != 100 {
		t.Errorf("object of 100 arrow pairs: %d definitions", got)
	}
	b.Reset()
	b.WriteString("declare class K {\n")
	for i := range 40 {
		fmt.Fprintf(&b, "  method%d (options: Options): Promise<void>\n", i)
	}
	b.WriteString("  last (options?: {\n    x?: number;\n  }): void\n}\n")
	if got := len(outline(t, TypeScript, b.String())); got != 42 {
		t.Errorf("class of 41 signatures: %d definitions\n%s", got, render(outline(t, TypeScript, b.String())))
	}
}
