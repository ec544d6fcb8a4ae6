// Command sfsgit runs ServerFS's in-process git status and commit on a
// directory, for bench/git/run.sh to time side by side with the git CLI.
//
//	sfsgit status DIR
//	sfsgit commit DIR MESSAGE PATH...
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/pprof"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: sfsgit status DIR | sfsgit commit DIR MESSAGE PATH...")
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
		for range 9 {
			r.Status(context.Background(), 1_000_000)
		}
	}
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
	default:
		fail(fmt.Errorf("unknown command %q", os.Args[1]))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "sfsgit:", err)
	os.Exit(1)
}
