package symbols

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
)

// goOutline reads Go exactly: the parser's declarations, each from its
// doc comment to its end.
func goOutline(ctx context.Context, src []byte) ([]Symbol, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	line := func(p token.Pos) int { return fset.Position(p).Line }
	start := func(doc *ast.CommentGroup, p token.Pos) int {
		if doc != nil {
			return line(doc.Pos())
		}
		return line(p)
	}
	var out []Symbol
	for _, d := range f.Decls {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		switch d := d.(type) {
		case *ast.FuncDecl:
			s := Symbol{Kind: "func", Name: d.Name.Name, Start: start(d.Doc, d.Pos()), End: line(d.End())}
			if d.Recv != nil && len(d.Recv.List) > 0 {
				s.Kind, s.Container = "method", receiverType(d.Recv.List[0].Type)
			}
			out = append(out, s)
			if d.Body != nil {
				// Types declared in the body are definitions too, of
				// the function.
				ast.Inspect(d.Body, func(n ast.Node) bool {
					if g, ok := n.(*ast.GenDecl); ok && g.Tok == token.TYPE {
						out = appendTypes(out, g, d.Name.Name, line, start)
					}
					return true
				})
			}
		case *ast.GenDecl:
			if d.Tok == token.TYPE {
				out = appendTypes(out, d, "", line, start)
			}
		}
	}
	return out, nil
}

func appendTypes(out []Symbol, d *ast.GenDecl, container string, line func(token.Pos) int, start func(*ast.CommentGroup, token.Pos) int) []Symbol {
	for _, spec := range d.Specs {
		ts := spec.(*ast.TypeSpec)
		s := Symbol{Kind: "type", Name: ts.Name.Name, Container: container, Start: start(ts.Doc, ts.Pos()), End: line(ts.End())}
		if len(d.Specs) == 1 {
			s.Start, s.End = start(d.Doc, d.Pos()), line(d.End())
		}
		switch ts.Type.(type) {
		case *ast.StructType:
			s.Kind = "struct"
		case *ast.InterfaceType:
			s.Kind = "interface"
		}
		out = append(out, s)
	}
	return out
}

// receiverType is a method's receiver type name, without * and type
// parameters.
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
