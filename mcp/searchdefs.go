package mcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"

	"github.com/serverfs/serverfs/search"
	"github.com/serverfs/serverfs/search/symbols"
)

// search_text's definition: each matching line shown inside the
// definition that encloses it (a function, method, type or class, whole)
// instead of N lines around it. The search runs as a lines search; each
// file with matches is then read and parsed once, in this call.

// Bounds of a definition context: a definition longer than
// maxDefinitionLines shows its first defHeadLines lines and
// defAroundLines around each match; a match in no definition (or in a
// file no outline reads) shows defAroundLines around it.
const (
	maxDefinitionLines = 150
	defHeadLines       = 8
	defAroundLines     = 3
	maxLineText        = search.MaxLineText
)

// withDefinitions turns r's matches into blocks spanning their enclosing
// definitions, at most maxBytes of text in all (then r is truncated
// with reason bytes at the last whole block).
func withDefinitions(ctx context.Context, d *Deps, r *search.Result, maxBytes int) (*search.Result, error) {
	var blocks []search.Block
	size := 0
	for i := 0; i < len(r.Matches); {
		j := i
		for j < len(r.Matches) && r.Matches[j].Path == r.Matches[i].Path {
			j++
		}
		fileBlocks, err := fileDefinitionBlocks(ctx, d, r.Workdir, r.Matches[i:j])
		if err != nil {
			return nil, err
		}
		for _, b := range fileBlocks {
			n := blockBytes(b)
			if size+n > maxBytes && len(blocks) > 0 {
				r.Truncated, r.TruncatedReason, r.NextCursor = true, "bytes", ""
				r.Matches, r.Blocks = nil, blocks
				return r, nil
			}
			size += n
			blocks = append(blocks, b)
		}
		i = j
	}
	r.Matches, r.Blocks = nil, blocks
	if r.Blocks == nil {
		r.Blocks = []search.Block{}
	}
	return r, nil
}

func blockBytes(b search.Block) int {
	n := 0
	for _, l := range b.Lines {
		n += len(l.Text) + 8
	}
	return n
}

// fileDefinitionBlocks are the blocks of one file's matches (in line
// order): its lines read once, its outline parsed once.
func fileDefinitionBlocks(ctx context.Context, d *Deps, alias string, ms []search.Match) ([]search.Block, error) {
	path := ms[0].Path
	var lines [][]byte
	var syms []symbols.Symbol
	if lang := symbols.Detect(path); lang != "" && !ms[0].Compressed && !ms[0].InArchive {
		src, err := readSource(d, alias, path)
		if err == nil {
			lines = bytes.Split(src, []byte{'\n'})
			syms, _, _ = symbols.Outline(ctx, lang, src, symbols.DefaultLimits)
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	match := map[int]bool{}
	for _, m := range ms {
		match[m.Line] = true
	}
	// The line ranges to show, in order, merged where they touch.
	var spans [][2]int
	add := func(a, b int) {
		if n := len(spans); n > 0 && a <= spans[n-1][1]+1 {
			spans[n-1][1] = max(spans[n-1][1], b)
			return
		}
		spans = append(spans, [2]int{a, b})
	}
	for _, m := range ms {
		s, ok := symbols.Enclosing(syms, m.Line)
		switch {
		case lines == nil:
			add(m.Line, m.Line)
		case !ok:
			add(max(1, m.Line-defAroundLines), min(len(lines), m.Line+defAroundLines))
		case s.End-s.Start+1 <= maxDefinitionLines:
			add(s.Start, min(s.End, len(lines)))
		default:
			add(s.Start, s.Start+defHeadLines-1)
			add(max(s.Start, m.Line-defAroundLines), min(s.End, m.Line+defAroundLines))
		}
	}
	text := func(n int) (string, bool) {
		if lines == nil {
			for _, m := range ms {
				if m.Line == n {
					return m.Text, m.TextTruncated
				}
			}
			return "", false
		}
		l := bytes.TrimSuffix(lines[n-1], []byte{'\r'})
		if len(l) > maxLineText {
			return string(l[:maxLineText]), true
		}
		return string(l), false
	}
	var out []search.Block
	for _, sp := range spans {
		b := search.Block{Path: path, Compressed: ms[0].Compressed, InArchive: ms[0].InArchive}
		for n := sp[0]; n <= sp[1]; n++ {
			t, cut := text(n)
			b.Lines = append(b.Lines, search.BlockLine{Line: n, Text: t, Match: match[n], TextTruncated: cut})
		}
		out = append(out, b)
	}
	return out, nil
}

// readSource reads a file whole, up to the outline's byte limit.
func readSource(d *Deps, alias, path string) ([]byte, error) {
	w, err := d.FS.Workdir(alias)
	if err != nil {
		return nil, err
	}
	f, _, err := w.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(symbols.DefaultLimits.MaxBytes)+1))
}

// search_text's output references: the lines where the query, an
// identifier, is used as one in code (comments, strings and longer words
// left out, in the languages the outline reads), and where it is defined
// in the files that hold it. A lines search finds the candidates; each
// file with matches is read and parsed once.

// outputReferences is search_text's references output.
const outputReferences = "references"

// withReferences keeps r's matches that are code uses of name and
// returns the definitions of name in their files ("path:start-end kind
// qualified-name").
func withReferences(ctx context.Context, d *Deps, r *search.Result, name string) ([]string, error) {
	var defs []string
	kept := r.Matches[:0]
	for i := 0; i < len(r.Matches); {
		j := i
		for j < len(r.Matches) && r.Matches[j].Path == r.Matches[i].Path {
			j++
		}
		ms := r.Matches[i:j]
		i = j
		lang := symbols.Detect(ms[0].Path)
		if lang == "" || ms[0].Compressed || ms[0].InArchive {
			kept = append(kept, ms...)
			continue
		}
		src, err := readSource(d, r.Workdir, ms[0].Path)
		if err != nil {
			kept = append(kept, ms...)
			continue
		}
		code, err := symbols.CodeLines(ctx, lang, src, name)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			kept = append(kept, ms...)
			continue
		}
		for _, m := range ms {
			if m.Line < len(code) && code[m.Line] {
				kept = append(kept, m)
			}
		}
		syms, _, _ := symbols.Outline(ctx, lang, src, symbols.DefaultLimits)
		for _, s := range symbols.Find(syms, name) {
			defs = append(defs, fmt.Sprintf("%s:%d-%d %s %s", ms[0].Path, s.Start, s.End, s.Kind, s.QualifiedName()))
		}
	}
	r.Matches = kept
	r.Returned = len(kept)
	return defs, nil
}

// identifierRE is what references takes as its query.
var identifierRE = regexp.MustCompile(`^[A-Za-z_$][\w$]*$`)
