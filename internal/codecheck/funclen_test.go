package codecheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxFuncLines bounds a production function: longer ones are split into
// named steps so that a reader can follow them one screen at a time.
const maxFuncLines = 120

// overLimit lists the production functions still over the bound, as
// "dir/file.go Name" (methods as Recv.Name). It only shrinks: an entry
// whose function is back under the bound fails the test too, so that it
// is removed when the function is split.
var overLimit = map[string]bool{}

// TestNoLongFunctions parses every production .go file of the repository
// (nested modules included; tests, testdata and tooling directories not)
// and fails naming each function over maxFuncLines that is not allowed.
func TestNoLongFunctions(t *testing.T) {
	root := repoRoot(t)
	long, err := longFunctions(root, maxFuncLines)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range long {
		seen[f.key] = true
		if !overLimit[f.key] {
			t.Errorf("%s is %d lines (limit %d): split it into named steps", f.key, f.lines, maxFuncLines)
		}
	}
	for key := range overLimit {
		if !seen[key] {
			t.Errorf("%s is allowed over %d lines but no longer is (or is gone): remove it from overLimit", key, maxFuncLines)
		}
	}
}

type longFunc struct {
	key   string
	lines int
}

func longFunctions(root string, limit int) ([]longFunc, error) {
	var out []longFunc
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if lines > limit {
				out = append(out, longFunc{key: rel + " " + funcName(fn), lines: lines})
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out, err
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr:
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fn.Name.Name
		}
		return fmt.Sprintf("?.%s", fn.Name.Name)
	}
}

// repoRoot is the directory holding the module's go.mod, two levels up.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found: %v", err)
	}
	return root
}

// TestLongFunctionsFinds checks the finder itself on a made-up tree: a
// function one line over the bound is named (methods with their
// receiver's type), one at the bound is not, and test files, testdata
// and dot directories are not read.
func TestLongFunctionsFinds(t *testing.T) {
	root := t.TempDir()
	body := func(name string, lines int) string {
		// "func ... {" and "}" are two of the lines.
		return name + " {\n" + strings.Repeat("\t_ = 0\n", lines-2) + "}\n"
	}
	write := func(rel, src string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/a.go", "package a\n\ntype T[P any] struct{}\n\n"+
		body("func Over()", 121)+body("func AtBound()", 120)+body("func (t *T[P]) Method()", 121))
	write("a/a_test.go", "package a\n\n"+body("func TestOver()", 200))
	write("a/testdata/t.go", "package t\n\n"+body("func Over()", 200))
	write(".hidden/h.go", "package h\n\n"+body("func Over()", 200))

	long, err := longFunctions(root, maxFuncLines)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range long {
		got = append(got, fmt.Sprintf("%s %d", f.key, f.lines))
	}
	want := []string{"a/a.go Over 121", "a/a.go T.Method 121"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
