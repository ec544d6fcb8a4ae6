// Package gittest is the system git as the tests' oracle over a
// repository's objects: run it, require it to succeed, and write the
// trees that hold one path. Only tests import it.
package gittest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Oracle runs git in Dir (a repository, bare or a work tree's .git).
type Oracle struct {
	T   testing.TB
	Dir string
}

// Run runs git in the oracle's repository with stdin and extra
// environment, returning its output and whether it succeeded.
func (o *Oracle) Run(stdin string, env []string, args ...string) (string, bool) {
	cmd := exec.Command("git", args...)
	cmd.Dir = o.Dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + o.Dir, "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.invalid", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.invalid"}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// Must is Run without extra environment that fails the test when git
// does, returning its output trimmed.
func (o *Oracle) Must(stdin string, args ...string) string {
	o.T.Helper()
	out, ok := o.Run(stdin, nil, args...)
	if !ok {
		o.T.Fatalf("git %q: %s", args, out)
	}
	return strings.TrimSpace(out)
}

// Tree writes the trees that hold p (slash-separated) as a leaf of mode
// mode with content, and returns their ids, the root's first, then the
// leaf's.
func (o *Oracle) Tree(p string, mode filemode.FileMode, content string) []string {
	o.T.Helper()
	id := o.Must(content, "hash-object", "-w", "--stdin")
	kind := "blob"
	if mode == filemode.Submodule {
		kind = "commit"
	}
	comps := strings.Split(p, "/")
	ids := []string{id}
	for i := len(comps) - 1; i >= 0; i-- {
		id = o.Must(fmt.Sprintf("%06o %s %s\t%s\x00", uint32(mode), kind, id, comps[i]), "mktree", "-z", "--missing")
		ids = append([]string{id}, ids...)
		mode, kind = filemode.Dir, "tree"
	}
	return ids
}
