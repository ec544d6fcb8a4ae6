package git

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/serverfs/serverfs/fs/ignore"
	"github.com/serverfs/serverfs/internal/gitignore"
)

// newIgnoreStack returns the exclude rules of a work-tree walk in git's
// precedence (lowest first): core.excludesFile (or the default
// $XDG_CONFIG_HOME/git/ignore), .git/info/exclude, then each directory's
// .gitignore from the root down (package ignore). Matching stops when ctx
// is done; fromIndex may be nil.
func (r *Repo) newIgnoreStack(ctx context.Context, fromIndex func(string) []byte) *ignore.Stack {
	// A repository's own core.excludesFile is confined to the workdir
	// (config.go).
	base := [][]byte{r.configFile("core", "excludesfile", xdgGitFile("ignore"))}
	if b, err := r.readControl(".git/info/exclude"); err == nil {
		base = append(base, b)
	}
	return ignore.New(ctx, ignore.Options{Nested: true, Base: base, BasePath: ".git/info/exclude",
		MaxFileBytes: maxConfigBytes, FromIndex: fromIndex,
		OverMsg: fmt.Sprintf("the ignore rules in force here hold more than %d MiB (patterns and text); git status is not computed with part of them", gitignore.MaxCostInForce>>20)})
}

// skipWorktreeBlobs returns the fromIndex function of an ignore stack for
// the index entries given (path -> entry).
func (r *Repo) skipWorktreeBlobs(entry func(path string) *index.Entry) func(string) []byte {
	return func(p string) []byte {
		e := entry(p)
		if e == nil || !e.SkipWorktree || e.Mode == filemode.Symlink {
			return nil
		}
		// Its size from the object header first: a large one is not read
		// (nor inflated) at all.
		data, err := r.readBlob(e.Hash, maxConfigBytes)
		if err != nil {
			return nil
		}
		return data
	}
}
