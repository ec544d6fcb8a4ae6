// Command sfsgrep runs ServerFS's search engine over a directory and prints
// ripgrep-style "path:line:text" lines, so bench/ can time it against
// `rg -F` and tests can compare the two. It is a benchmark tool, not part of
// the product.
//
//	sfsgrep [-i] [-e] [-z] [-g GLOB] [--no-ignore] [--limit N] QUERY DIR
//
// -e reads QUERY as an RE2 regular expression (search_text's regex); -z
// searches inside archives (search_text's archives).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/search"
)

func main() {
	ignoreCase := flag.Bool("i", false, "case-insensitive")
	regex := flag.Bool("e", false, "QUERY is an RE2 regular expression")
	glob := flag.String("g", "", "glob on the path")
	noIgnore := flag.Bool("no-ignore", false, "include .gitignore'd files")
	archives := flag.Bool("z", false, "search inside archives (search_text's archives)")
	limit := flag.Int("limit", 1<<30, "result limit")
	stats := flag.Bool("stats", false, "print statistics to stderr")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile here")
	traceFile := flag.String("trace", "", "write an execution trace here")
	memProfile := flag.String("memprofile", "", "write an allocation profile here")
	repeat := flag.Int("repeat", 1, "run the search this many times (for profiles)")
	flag.Parse()
	if *memProfile != "" {
		runtime.MemProfileRate = 512
	}
	// Stopped at the end; every earlier exit is a usage or setup error.
	if *traceFile != "" {
		trace.Start(create(*traceFile))
	}
	if *cpuProfile != "" {
		pprof.StartCPUProfile(create(*cpuProfile))
	}
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: sfsgrep [-i] [-e] [-z] [-g GLOB] [--no-ignore] [--limit N] QUERY DIR")
		os.Exit(2)
	}
	env := []string{"SERVERFS_MAX_WALK_ENTRIES=100000000", "SERVERFS_SEARCH_MAX_FILE_BYTES=68719476736", "SERVERFS_SEARCH_TIMEOUT_SECONDS=300"}
	dir, err := filepath.Abs(flag.Arg(1))
	exitOn(err)
	cfg, err := sfs.LoadConfig(env, []string{"d=" + dir})
	exitOn(err)
	// A benchmark wants every match: lift the product's result cap.
	cfg.Limits.MaxSearchResults = *limit
	f, err := sfs.New(cfg, sfs.Options{})
	exitOn(err)
	var res *search.Result
	for range *repeat {
		res, err = search.New(f).Search(context.Background(), search.Request{
			Workdir: "d", Query: flag.Arg(0), Regex: *regex, CaseSensitive: !*ignoreCase, Glob: *glob, Limit: *limit, IncludeIgnored: *noIgnore, Archives: *archives,
		})
		exitOn(err)
	}
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	var line []byte
	for _, m := range res.Matches {
		line = append(line[:0], m.Path...)
		line = append(line, ':')
		line = strconv.AppendInt(line, int64(m.Line), 10)
		line = append(line, ':')
		line = append(line, m.Text...)
		line = append(line, '\n')
		w.Write(line)
	}
	w.Flush()
	if *stats {
		fmt.Fprintf(os.Stderr, "returned=%d truncated=%v reason=%s scanned=%d skipped=%+v\n", res.Returned, res.Truncated, res.TruncatedReason, res.FilesScanned, res.Skipped)
	}
	pprof.StopCPUProfile()
	trace.Stop()
	if *memProfile != "" {
		pf := create(*memProfile)
		exitOn(pprof.Lookup("allocs").WriteTo(pf, 0))
		exitOn(pf.Close())
	}
	if res.Returned == 0 {
		os.Exit(1)
	}
}

// exitOn ends the program with status 2 (ripgrep's error status) on err.
func exitOn(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// create creates a profile or trace file, or ends the program.
func create(path string) *os.File {
	f, err := os.Create(path)
	exitOn(err)
	return f
}
