package mcp

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/decompress"
	"github.com/serverfs/serverfs/search"
	"github.com/serverfs/serverfs/search/symbols"
)

// read_text_file's symbol: a definition read whole by its name, in a
// file or below a directory (the files holding the name, found by the
// search engine's literal scan, then parsed), or a file's outline ("*").
// Real time: every file is read and parsed by the call that asks.

// maxSymbolFiles bounds the files a directory's symbol read parses, and
// maxSymbolOthers the other definitions its header names.
const (
	maxSymbolFiles  = 100
	maxSymbolPages  = 5
	maxSymbolOthers = 8
)

func readSymbol(ctx context.Context, d *Deps, in readTextFileIn) (*readTextFileOut, callInfo, error) {
	info := callInfo{workdir: in.Workdir, path: in.Path}
	if in.Tail > 0 || in.StartLine > 1 {
		return nil, info, argErr("symbol reads a definition whole: it cannot be combined with start_line or tail")
	}
	if decompress.Kind(in.Path[strings.LastIndexByte(in.Path, '/')+1:]) != "" || sfs.InArchive(in.Path) {
		return nil, info, argErr("symbol reads source files on disk, not compressed ones or archive members")
	}
	st, err := d.FS.Stat(in.Workdir, in.Path)
	if err != nil {
		return nil, info, err
	}
	if in.Symbol == "*" {
		if st.Type == sfs.TypeDirectory {
			return nil, info, argErr("symbol \"*\" outlines one file; path is a directory")
		}
		out, err := outlineFile(ctx, d, in.Workdir, st.Path)
		if err == nil {
			info.bytes = len(out.Text())
		}
		return out, info, err
	}
	candidates, more := []string{st.Path}, ""
	if st.Type == sfs.TypeDirectory {
		if candidates, more, err = symbolCandidates(ctx, d, in.Workdir, st.Path, in.Symbol); err != nil {
			return nil, info, err
		}
	}
	found, err := findDefinitions(ctx, d, in.Workdir, candidates, in.Symbol)
	if err != nil {
		return nil, info, err
	}
	if len(found) == 0 {
		return nil, info, noDefinition(ctx, d, in, st.Type == sfs.TypeDirectory, candidates, more)
	}
	first := found[0]
	n := first.End - first.Start + 1
	out, err := readText(ctx, d, in.Workdir, first.path, sfs.ReadOptions{StartLine: first.Start, MaxLines: min(n, d.FS.Limits().MaxReadLines)})
	if err != nil {
		return nil, info, err
	}
	out.Definition = first.Kind + " " + first.QualifiedName()
	for _, o := range found[1:min(len(found), 1+maxSymbolOthers)] {
		out.Others = append(out.Others, o.path+":"+strconv.Itoa(o.Start))
	}
	info.path, info.bytes = first.path, out.BytesReturned
	return out, info, nil
}

// located is a definition and the file it is in.
type located struct {
	symbols.Symbol
	path string
}

// symbolCandidates are the files below dir, in a language the outline
// reads, whose text holds the name's last part (case-sensitive, literal):
// at most maxSymbolPages pages of the search's files; more says the
// search stopped before the end (its reason).
func symbolCandidates(ctx context.Context, d *Deps, alias, dir, name string) (paths []string, more string, err error) {
	bare := name[strings.LastIndexByte(name, '.')+1:]
	if bare == "" {
		return nil, "", argErr("symbol %q names no definition", name)
	}
	req := search.Request{Workdir: alias, Path: dir, Query: bare, CaseSensitive: true, Glob: symbols.Glob(),
		Output: search.OutputFiles, Limit: min(maxSymbolFiles, d.FS.Limits().MaxSearchResults)}
	for range maxSymbolPages {
		r, err := d.Search.Search(ctx, req)
		if err != nil {
			return nil, "", err
		}
		for _, f := range r.Files {
			if !f.Compressed {
				paths = append(paths, f.Path)
			}
		}
		if !r.Truncated || r.NextCursor == "" {
			return paths, "", nil
		}
		more, req.Cursor = r.TruncatedReason, r.NextCursor
	}
	return paths, more, nil
}

// findDefinitions parses each candidate and returns the definitions of
// name, in the candidates' order. The candidates are parsed by as many
// workers as there are CPUs, each file by one.
func findDefinitions(ctx context.Context, d *Deps, alias string, paths []string, name string) ([]located, error) {
	if len(paths) == 1 {
		syms, err := outlineOf(ctx, d, alias, paths[0])
		if err != nil {
			return nil, err
		}
		return locate(symbols.Find(syms, name), paths[0]), nil
	}
	perFile := make([][]located, len(paths))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				// A directory's unreadable or unparsable file is
				// left out.
				if syms, err := outlineOf(ctx, d, alias, paths[i]); err == nil {
					perFile[i] = locate(symbols.Find(syms, name), paths[i])
				}
			}
		}()
	}
	for i := range paths {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var found []located
	for _, f := range perFile {
		found = append(found, f...)
	}
	return found, nil
}

func locate(syms []symbols.Symbol, path string) []located {
	var out []located
	for _, s := range syms {
		out = append(out, located{s, path})
	}
	return out
}

// outlineOf reads a file (at most the outline's byte limit) and parses it.
func outlineOf(ctx context.Context, d *Deps, alias, path string) ([]symbols.Symbol, error) {
	lang := symbols.Detect(path)
	if lang == "" {
		return nil, argErr("%s: symbol reads %s files", path, symbolExtensions)
	}
	w, err := d.FS.Workdir(alias)
	if err != nil {
		return nil, err
	}
	f, _, err := w.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, int64(symbols.DefaultLimits.MaxBytes)+1))
	if err != nil {
		return nil, err
	}
	syms, _, err := symbols.Outline(ctx, lang, src, symbols.DefaultLimits)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, argErr("%s: %v", path, err)
	}
	return syms, nil
}

const symbolExtensions = "Go, Python, JavaScript, TypeScript, Java, C, C++, C#, Rust, Ruby, PHP and shell"

// noDefinition says that nothing is named so, with the names there are.
func noDefinition(ctx context.Context, d *Deps, in readTextFileIn, dir bool, candidates []string, more string) error {
	if dir && more != "" {
		return argErr("no definition named %q in the first %d source files below %s that hold the name (the search stopped: %s); name a smaller path", in.Symbol, len(candidates), in.Path, more)
	}
	if dir {
		return argErr("no definition named %q in the %d source files below %s that hold the name", in.Symbol, len(candidates), in.Path)
	}
	syms, _ := outlineOf(ctx, d, in.Workdir, candidates[0])
	var names []string
	for _, s := range syms {
		if len(names) == 20 {
			names = append(names, "…")
			break
		}
		names = append(names, s.QualifiedName())
	}
	return argErr("%s has no definition named %q (it has: %s)", in.Path, in.Symbol, strings.Join(names, ", "))
}

// outlineFile is a file's outline as an answer.
func outlineFile(ctx context.Context, d *Deps, alias, path string) (*readTextFileOut, error) {
	syms, err := outlineOf(ctx, d, alias, path)
	if err != nil {
		return nil, err
	}
	out := &readTextFileOut{TextWindow: sfs.TextWindow{Workdir: alias, Path: path}, Outline: syms}
	if syms == nil {
		out.Outline = []symbols.Symbol{}
	}
	return out, nil
}

// appendOutline writes an outline: a header, then a definition a line,
// "START-END kind name", indented by nesting.
func appendOutline(b []byte, workdir, path string, syms []symbols.Symbol) []byte {
	b = fmt.Appendf(b, "==> %s:%s outline, %d definitions <==\n", workdir, path, len(syms))
	var open []int // ends of the enclosing definitions
	for _, s := range syms {
		for len(open) > 0 && open[len(open)-1] < s.Start {
			open = open[:len(open)-1]
		}
		b = append(b, strings.Repeat("  ", len(open))...)
		b = fmt.Appendf(b, "%d-%d %s %s\n", s.Start, s.End, s.Kind, s.QualifiedName())
		open = append(open, s.End)
	}
	return b
}
