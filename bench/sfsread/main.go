// Command sfsread runs ServerFS's tail and tree readers on a host path and
// prints what they return, so bench/run.sh can time them against `tail -n`
// and `find -maxdepth`. It is a benchmark tool, not part of the product.
//
//	sfsread tail N FILE     the last N lines of FILE (fs.ReadTail)
//	sfsread tree DEPTH DIR  every entry of DIR down to DEPTH levels (fs.Tree, paged)
//	sfsread open N FILE     the workdir of FILE opened, nothing read (the
//	                        process's floor, to subtract from tail's time)
//
// SFSREAD_REPEAT=K runs the tail K more times first and prints its mean
// in-process time per call on stderr.
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	sfs "github.com/serverfs/serverfs/fs"
)

func die(err error) {
	fmt.Fprintln(os.Stderr, "sfsread:", err)
	os.Exit(2)
}

func main() {
	if len(os.Args) != 4 || (os.Args[1] != "tail" && os.Args[1] != "tree" && os.Args[1] != "open") {
		fmt.Fprintln(os.Stderr, "usage: sfsread tail N FILE | sfsread tree DEPTH DIR")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil {
		die(err)
	}
	target, err := filepath.Abs(os.Args[3])
	if err != nil {
		die(err)
	}
	root, rel := target, ""
	if os.Args[1] == "tail" || os.Args[1] == "open" {
		root, rel = filepath.Dir(target), filepath.Base(target)
	}
	env := []string{"SERVERFS_MAX_WALK_ENTRIES=100000000", "SERVERFS_MAX_LIST_ENTRIES=100000", "SERVERFS_MAX_READ_LINES=100000", "SERVERFS_MAX_READ_BYTES=16777216", "SERVERFS_SEARCH_TIMEOUT_SECONDS=300"}
	cfg, err := sfs.LoadConfig(env, []string{"d=" + root})
	if err != nil {
		die(err)
	}
	f, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		die(err)
	}
	ctx := context.Background()
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	defer w.Flush()
	if os.Args[1] == "open" {
		return
	}
	if k, _ := strconv.Atoi(os.Getenv("SFSREAD_REPEAT")); k > 0 && os.Args[1] == "tail" {
		t0 := time.Now()
		for range k {
			if _, err := f.ReadTail(ctx, "d", rel, n, nil); err != nil {
				die(err)
			}
		}
		fmt.Fprintf(os.Stderr, "tail %d: %.1f µs per call in process\n", n, float64(time.Since(t0).Microseconds())/float64(k))
	}
	if os.Args[1] == "tail" {
		win, err := f.ReadTail(ctx, "d", rel, n, nil)
		if err != nil {
			die(err)
		}
		w.WriteString(win.Content)
		return
	}
	for off := 0; ; {
		t, err := f.Tree(ctx, "d", "", sfs.TreeOptions{Depth: n, Offset: off, Limit: 100000})
		if err != nil {
			die(err)
		}
		for _, e := range t.Entries {
			w.WriteString(e.Path)
			w.WriteByte('\n')
		}
		if !t.HasMore {
			return
		}
		off = t.NextOffset
	}
}
