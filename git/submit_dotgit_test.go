package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/serverfs/serverfs/internal/errs"
)

// gitIn runs git in dir with stdin and returns its trimmed output.
func gitIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// dotGitCommit makes, with git's plumbing (which does not check names), a
// commit on base that adds <name>/hooks/post-checkout: what a patch made
// by hand, or a merge of one, could hold.
func dotGitCommit(t *testing.T, dir, base, name string) string {
	t.Helper()
	blob := gitIn(t, dir, "#!/bin/sh\necho pwned\n", "hash-object", "-w", "--stdin")
	hooks := gitIn(t, dir, "100755 blob "+blob+"\tpost-checkout\n", "mktree")
	dg := gitIn(t, dir, "040000 tree "+hooks+"\thooks\n", "mktree")
	root := gitIn(t, dir, gitIn(t, dir, "", "ls-tree", base)+"\n040000 tree "+dg+"\t"+name+"\n", "mktree")
	return gitIn(t, dir, "", "commit-tree", root, "-p", base, "-m", "hooks")
}

// A workspace holding .git in another case or spelling is refused by
// CommitWorkspace (GIT_PATH_REJECTED naming the path), never merged into the
// live tree: on case-insensitive file systems .GIT/hooks is the live
// repository's hooks.
func TestCommitWorkspaceRefusesDotGitSpellings(t *testing.T) {
	dir, base := queueRepo(t)
	for _, name := range []string{".GIT", ".Git", ".git.", ".git ", "GIT~1", "sub/.gIT", `a\.git`, ".git\u200c"} {
		t.Run(name, func(t *testing.T) {
			ws := checkoutTo(t, dir, base)
			hook := filepath.Join(ws, name, "hooks", "post-checkout")
			os.MkdirAll(filepath.Dir(hook), 0o755)
			os.WriteFile(hook, []byte("#!/bin/sh\necho pwned\n"), 0o755)
			f := newWorkdirFSEnv(t, []string{"SERVERFS_ALLOW_HIDDEN=true"}, "wd="+dir+":rw:repo", "ws="+ws+":rw")
			r, err := Open(f, "wd")
			if err != nil {
				t.Fatal(err)
			}
			w, _ := f.Workdir("ws")
			p, err := r.CommitWorkspace(context.Background(), w, base, "x")
			if errs.CodeOf(err) != errs.GitPathRejected || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "hasDotgit") {
				t.Fatalf("CommitWorkspace = %+v, %v; want GIT_PATH_REJECTED naming %q and hasDotgit", p, err, name)
			}
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				t.Fatalf("%s written into the live tree", name)
			}
		})
	}
}

// A patch whose commit holds .GIT (made with plumbing, past
// CommitWorkspace) is refused by verifyPatch, and planFollow never
// writes such a path into the live tree even if it were merged.
func TestSubmitAndFollowRefuseDotGitPaths(t *testing.T) {
	dir, base := queueRepo(t)
	f := newWorkdirFS(t, "wd="+dir+":rw:repo")
	r, err := Open(f, "wd")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".GIT", "git~1", ".git.", `x\.git`} {
		head := dotGitCommit(t, dir, base, name)
		hc, err := object.GetCommit(r.storage, plumbing.NewHash(head))
		if err != nil {
			t.Fatal(err)
		}
		bf, _, _ := r.flatTree(context.Background(), plumbing.NewHash(base))
		hf, _, _ := r.flatTree(context.Background(), plumbing.NewHash(head))
		changes := diffTrees(bf, hf)
		p := &Patch{Base: base, Head: head, Tree: hc.TreeHash.String(), SHA256: patchAddress(plumbing.NewHash(base), hc.TreeHash, changes)}
		for _, c := range changes {
			p.FilesChanged = append(p.FilesChanged, c.path)
		}
		if _, err := r.verifyPatch(context.Background(), p); errs.CodeOf(err) != errs.GitPathRejected {
			t.Fatalf("%s: verifyPatch = %v; want GIT_PATH_REJECTED", name, err)
		}
		res, err := r.Submit(context.Background(), "main", p, MergeStrict, "")
		if err == nil {
			t.Fatalf("%s: Submit = %+v; want a refusal", name, res)
		}
		if got := gitCLI(t, dir, "rev-parse", "main"); strings.TrimSpace(got) != base {
			t.Fatalf("%s: main moved to %s", name, got)
		}
		if _, err := r.planFollow(context.Background(), plumbing.NewHash(base), plumbing.NewHash(head)); errs.CodeOf(err) != errs.GitPathRejected {
			t.Fatalf("%s: planFollow = %v; want GIT_PATH_REJECTED", name, err)
		}
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Fatalf("%s written into the live tree", name)
		}
	}
	if st := gitCLI(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("live tree changed: %s", st)
	}
}

// CommitWorkspace checks its message as commit_repo_changes does: an empty
// one, one over MaxMessageBytes (a 1 MiB message would be stored in the
// live repository whole), one with a NUL byte or not UTF-8 is
// INVALID_ARGUMENT before any object is written.
func TestCommitWorkspaceChecksMessage(t *testing.T) {
	dir, base := queueRepo(t)
	ws := checkoutTo(t, dir, base)
	os.WriteFile(filepath.Join(ws, "new.txt"), []byte("new\n"), 0o644)
	r, w := openQueueRepo(t, dir, ws)
	before := gitIn(t, dir, "", "count-objects")
	for _, msg := range []string{" \n", strings.Repeat("m", 1<<20), "a\x00b", "a\xffb"} {
		if p, err := r.CommitWorkspace(context.Background(), w, base, msg); errs.CodeOf(err) != errs.InvalidArgument {
			t.Errorf("message of %d bytes: CommitWorkspace = %+v, %v; want INVALID_ARGUMENT", len(msg), p, err)
		}
	}
	if after := gitIn(t, dir, "", "count-objects"); after != before {
		t.Errorf("objects written for refused messages: %s, then %s", before, after)
	}
	if _, err := r.CommitWorkspace(context.Background(), w, base, "a message"); err != nil {
		t.Errorf("a good message: %v", err)
	}
}

// CommitWorkspace refuses a .gitmodules git fsck rejects (an option-like
// url), as commit_repo_changes does, before anything is merged.
func TestCommitWorkspaceRefusesBadGitmodules(t *testing.T) {
	dir, base := queueRepo(t)
	ws := checkoutTo(t, dir, base)
	os.WriteFile(filepath.Join(ws, ".gitmodules"), []byte("[submodule \"m\"]\n\tpath = m\n\turl = -u./x\n"), 0o644)
	f := newWorkdirFSEnv(t, []string{"SERVERFS_ALLOW_HIDDEN=true"}, "wd="+dir+":rw:repo", "ws="+ws+":rw")
	r, err := Open(f, "wd")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := f.Workdir("ws")
	if p, err := r.CommitWorkspace(context.Background(), w, base, "x"); errs.CodeOf(err) != errs.GitPathRejected || !strings.Contains(err.Error(), "gitmodulesUrl") {
		t.Fatalf("CommitWorkspace = %+v, %v; want GIT_PATH_REJECTED naming gitmodulesUrl", p, err)
	}
}
