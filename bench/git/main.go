// Command sfsgit runs ServerFS's in-process git status and commit on a
// directory, for bench/git/run.sh to time side by side with the git CLI.
//
//	sfsgit status DIR
//	sfsgit commit DIR MESSAGE PATH...
//	sfsgit log DIR N [PATH]        (read_repo_history log)
//	sfsgit show DIR REV            (read_repo_history show, max_bytes 1 MiB)
//	sfsgit blame DIR PATH START N  (read_repo_history blame)
//	sfsgit gen-history COMMITS     (a git fast-import stream on stdout)
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "gen-history" {
		n, _ := strconv.Atoi(os.Args[2])
		genHistory(os.Stdout, n)
		return
	}
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: sfsgit status DIR | commit DIR MESSAGE PATH... | log DIR N [PATH] | show DIR REV | blame DIR PATH START N | gen-history COMMITS")
		os.Exit(2)
	}
	// As `serverfs serve` runs (cmd/serverfs sets GOGC=400 unless the
	// operator set GOGC).
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	// status opens the workdir read-only: a read-write one is swept for
	// leftover temporaries when opened, which the server does once at
	// start-up, not per request.
	spec := "wd=" + os.Args[2] + ":repo"
	if os.Args[1] == "commit" {
		spec = "wd=" + os.Args[2] + ":rw:repo"
	}
	cfg, err := sfs.LoadConfig([]string{"SERVERFS_MAX_WALK_ENTRIES=10000000", "SERVERFS_SEARCH_TIMEOUT_SECONDS=300"}, []string{spec})
	if err != nil {
		fail(err)
	}
	f, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		fail(err)
	}
	defer f.Close()
	r, err := git.Open(f, "wd")
	if err != nil {
		fail(err)
	}
	if p := os.Getenv("SFSGIT_CPUPROFILE"); p != "" {
		out, err := os.Create(p)
		if err != nil {
			fail(err)
		}
		pprof.StartCPUProfile(out)
		defer pprof.StopCPUProfile()
		// Repeat the status so that the profile has samples to show.
		if os.Args[1] == "status" {
			for range 9 {
				r.Status(context.Background(), 1_000_000)
			}
		}
	}
	repeat, _ := strconv.Atoi(os.Getenv("SFSGIT_REPEAT"))
	for range repeat {
		if r, err = git.Open(f, "wd"); err != nil {
			fail(err)
		}
		run(r)
	}
	run(r)
}

// run runs the command once.
func run(r *git.Repo) {
	switch os.Args[1] {
	case "status":
		st, err := r.Status(context.Background(), 1_000_000)
		if err != nil {
			fail(err)
		}
		fmt.Printf("%d entries\n", len(st.Entries))
	case "commit":
		if len(os.Args) < 5 {
			fail(fmt.Errorf("commit needs a message and paths"))
		}
		res, err := r.Commit(context.Background(), os.Args[4:], os.Args[3])
		if err != nil {
			fail(err)
		}
		fmt.Println(res.Commit)
	case "log":
		n, _ := strconv.Atoi(arg(3))
		var paths []string
		if len(os.Args) > 4 {
			paths = os.Args[4:]
		}
		res, err := r.Log(context.Background(), git.LogOptions{Files: true, Limit: n, Paths: paths})
		if err != nil {
			fail(err)
		}
		fmt.Printf("%d commits\n", len(res.Commits))
	case "show":
		res, err := r.Show(context.Background(), arg(3), nil, git.MaxDiffBytes)
		if err != nil {
			fail(err)
		}
		fmt.Printf("%d files, %d bytes of patch\n", len(res.Files), len(res.Patch))
	case "blame":
		start, _ := strconv.Atoi(arg(4))
		n, _ := strconv.Atoi(arg(5))
		res, err := r.BlameLines(context.Background(), "", arg(3), start, n)
		if err != nil {
			fail(err)
		}
		fmt.Printf("%d runs from %d commits\n", len(res.Runs), len(res.Commits))
	default:
		fail(fmt.Errorf("unknown command %q", os.Args[1]))
	}
}

func arg(i int) string {
	if i < len(os.Args) {
		return os.Args[i]
	}
	fail(fmt.Errorf("%s needs more arguments", os.Args[1]))
	return ""
}

// genHistory writes a fast-import stream of a linear history of n commits
// (with a merge every 250): 1,000 files in 10 directories; commit 2 (tag
// wide) changes all of them; blame.txt has 2,000 lines, edited by one
// commit in 12 (about 400 of 5,000); hot/path.txt changes in one commit in
// 20; every commit also edits one of the 1,000 files.
func genHistory(w io.Writer, n int) {
	bw := bufio.NewWriterSize(w, 1<<20)
	defer bw.Flush()
	rng := rand.New(rand.NewSource(1))
	files := make([][]string, 1000)
	seq := 0
	line := func() string { seq++; return fmt.Sprintf("line %d %x\n", seq, rng.Int63()) }
	for i := range files {
		for range 20 {
			files[i] = append(files[i], line())
		}
	}
	blame := make([]string, 2000)
	for i := range blame {
		blame[i] = line()
	}
	name := func(i int) string { return fmt.Sprintf("d%d/f%03d.txt", i%10, i) }
	data := func(ls []string) string { return strings.Join(ls, "") }
	when := int64(1_600_000_000)
	mark := 0
	commit := func(branch string, from, merge int, msg string, changes map[string]string) int {
		mark++
		when += 60
		fmt.Fprintf(bw, "commit refs/heads/%s\nmark :%d\nauthor A <a@example.invalid> %d +0000\ncommitter C <c@example.invalid> %d +0000\ndata %d\n%s\n", branch, mark, when, when, len(msg), msg)
		if from > 0 {
			fmt.Fprintf(bw, "from :%d\n", from)
		}
		if merge > 0 {
			fmt.Fprintf(bw, "merge :%d\n", merge)
		}
		keys := make([]string, 0, len(changes))
		for k := range changes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(bw, "M 100644 inline %s\ndata %d\n%s\n", k, len(changes[k]), changes[k])
		}
		bw.WriteString("\n")
		return mark
	}
	all := map[string]string{"blame.txt": data(blame), "hot/path.txt": line()}
	for i := range files {
		all[name(i)] = data(files[i])
	}
	tip := commit("main", 0, 0, "base", all)
	wide := map[string]string{}
	for i := range files {
		files[i][rng.Intn(20)] = line()
		wide[name(i)] = data(files[i])
	}
	tip = commit("main", tip, 0, "wide change", wide)
	fmt.Fprintf(bw, "reset refs/tags/wide\nfrom :%d\n\n", tip)
	side := 0
	for c := 2; c < n; c++ {
		ch := map[string]string{}
		i := rng.Intn(len(files))
		files[i][rng.Intn(20)] = line()
		ch[name(i)] = data(files[i])
		if c%12 == 0 {
			for range 1 + rng.Intn(5) {
				blame[rng.Intn(len(blame))] = line()
			}
			ch["blame.txt"] = data(blame)
		}
		if c%20 == 0 {
			ch["hot/path.txt"] = line()
		}
		switch {
		case c%250 == 100:
			side = commit("side", tip, 0, fmt.Sprintf("side %d", c), ch)
		case c%250 == 0 && side > 0:
			tip = commit("main", tip, side, fmt.Sprintf("merge %d", c), ch)
			side = 0
		default:
			tip = commit("main", tip, 0, fmt.Sprintf("commit %d\n\nbody of %d", c, c), ch)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "sfsgit:", err)
	os.Exit(1)
}
