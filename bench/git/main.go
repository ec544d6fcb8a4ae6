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

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: sfsgit status DIR | sfsgit commit DIR MESSAGE PATH...")
		os.Exit(2)
	}
	cfg, err := sfs.LoadConfig([]string{"SERVERFS_MAX_WALK_ENTRIES=10000000", "SERVERFS_SEARCH_TIMEOUT_SECONDS=300"}, []string{"wd=" + os.Args[2] + ":rw:repo"})
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
