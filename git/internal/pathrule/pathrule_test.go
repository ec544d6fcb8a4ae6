package pathrule

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/serverfs/serverfs/git/internal/gittest"
)

// gitNameOracle asks system git about tree paths: what git fsck --strict
// says of the trees holding them, and whether git's index (verify_path,
// as git checkout and clone use it) takes them.
type gitNameOracle struct{ gittest.Oracle }

func newGitNameOracle(t *testing.T) *gitNameOracle {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required (CI installs it)")
	}
	dir := filepath.Join(t.TempDir(), "oracle.git")
	if out, err := gitOut(filepath.Dir(dir), "init", "-q", "--bare", dir); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return &gitNameOracle{gittest.Oracle{T: t, Dir: dir}}
}

var fsckMessage = regexp.MustCompile(`(?m)^(?:error|warning) in (?:tree|blob|commit) ([0-9a-f]{40}): (\w+):`)

// fsck runs git fsck --strict over every object and returns, per object,
// the message ids it reports.
func (o *gitNameOracle) fsck() map[string][]string {
	out, _ := o.Run("", nil, "fsck", "--strict", "--no-dangling", "--no-progress")
	ids := map[string][]string{}
	for _, m := range fsckMessage.FindAllStringSubmatch(out, -1) {
		ids[m[1]] = append(ids[m[1]], m[2])
	}
	return ids
}

// readTree reports whether git read-tree takes the tree into an index
// (every path through verify_path), with extra configuration.
func (o *gitNameOracle) readTree(tree string, config ...string) (string, bool) {
	idx := filepath.Join(o.T.TempDir(), "index")
	args := []string{}
	for _, c := range config {
		args = append(args, "-c", c)
	}
	return o.Run("", []string{"GIT_INDEX_FILE=" + idx}, append(args, "read-tree", tree)...)
}

// TestGitPathRules: the name rules commits and checkouts apply, on the
// spellings git's own checks look for, each checked against git itself:
// a path our commit refuses is one git fsck --strict flags (with the rule
// named) or git's index refuses with both NTFS and HFS+ protection; a
// path our checkout refuses is one git read-tree on Linux refuses.
func TestGitPathRules(t *testing.T) {
	const ok = ""
	link, file, exe := filemode.Symlink, filemode.Regular, filemode.Executable
	cases := []struct {
		path       string
		mode       filemode.FileMode
		commitRule string // the fsck id (or invalidPath) our commit names
		checkout   bool   // git on Linux checks it out
	}{
		{`notes\todo.txt`, file, ok, true},
		{`..\..\x`, file, ok, true},
		{"tab\there/q\"uote 日本.md", exe, ok, true},
		{".gitx", file, ok, true},
		{"foo.git/x", file, ok, true},
		{"git~2/x", file, ok, true},
		{"git~1.txt", file, ok, true},
		{".gitmodules", file, ok, true},
		{".gitmodules/x", file, "gitmodulesBlob", true},
		{"GITATT~1/x", file, "gitattributesBlob", true},
		{`a\.gitmodules/x`, file, "gitmodulesBlob", true},
		{`a\.gitattributes/x`, file, ok, true},
		{".gitmodules", filemode.Submodule, "gitmodulesBlob", true},
		{`.gitmodules:\.git/x`, file, "hasDotgit", false},
		{".git-foo/.gitignore", file, ok, true},
		{`a\.git\config`, file, "hasDotgit", false},
		{`.git\config`, file, "hasDotgit", false},
		{`sub/.git\x`, file, "hasDotgit", false},
		{`a\git~1`, file, "hasDotgit", false},
		{`\.git`, file, "hasDotgit", true}, // verify_path looks after a backslash only inside a component
		{".GIT/x", file, "hasDotgit", false},
		{".Git", link, "hasDotgit", false},
		{".git./x", file, "hasDotgit", false},
		{".git . ./x", file, "hasDotgit", false},
		{"git~1/x", file, "hasDotgit", false},
		{"GIT~1 /x", file, "hasDotgit", false},
		{".git::$INDEX_ALLOCATION/x", file, "hasDotgit", false},
		{".git:x", file, "hasDotgit", false},
		{".git\u200c/x", file, "hasDotgit", true}, // HFS+ only: git on Linux leaves protectHFS off
		{".g\u200dit", file, "hasDotgit", true},
		{"\ufeff.GIT/x", file, "hasDotgit", true},
		{".git\xff", file, "hasDotgit", true}, // malformed UTF-8 ends a name for HFS+
		{".gitmodules", link, "gitmodulesSymlink", false},
		{".GitModules", link, "gitmodulesSymlink", false},
		{".gitmodules. ", link, "gitmodulesSymlink", false},
		{".gitmodules:$DATA", link, "gitmodulesSymlink", false},
		{"GITMOD~1", link, "gitmodulesSymlink", false},
		{"gi7eba~9", link, "gitmodulesSymlink", false},
		{`x\.gitmodules`, link, "gitmodulesSymlink", false},
		{"d/.git\u200cmodules", link, "gitmodulesSymlink", true},
		{"GITMOD~5", link, ok, true},
		{".gitignore", link, "gitignoreSymlink", true},
		{"GITIGN~1", link, "gitignoreSymlink", true},
		{".gitattributes ", link, "gitattributesSymlink", true},
		{"gi7d29~1", link, "gitattributesSymlink", true},
		{".mailmap", link, "mailmapSymlink", true},
		{".MAILMAP.", link, "mailmapSymlink", true},
		{`x\.gitignore`, link, ok, true}, // fsck follows backslashes for .git and .gitmodules only
		{".gitmodules/x", link, "gitmodulesBlob", false},
		{"d/.GITMODULES/d/x", link, "gitmodulesBlob", false},
		{"git~1", filemode.Submodule, "hasDotgit", false},
	}
	o := newGitNameOracle(t)
	type made struct{ trees []string }
	built := make([]made, len(cases))
	for i, c := range cases {
		// Valid as .gitmodules and .gitattributes, so fsck judges only
		// the name; one of its own per case, so no two share a tree.
		content := fmt.Sprintf("# %d\n", i)
		if c.mode == filemode.Submodule {
			// A commit the repository holds (else fsck says
			// gitmodulesMissing of a .gitmodules gitlink).
			content = fmt.Sprintf("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a@b> 0 +0000\ncommitter a <a@b> 0 +0000\n\n%d\n", i)
			o.Must("", "hash-object", "-w", "-t", "tree", "/dev/null")
			id := o.Must(content, "hash-object", "-w", "-t", "commit", "--stdin")
			tree := o.Must(fmt.Sprintf("160000 commit %s\t%s\x00", id, c.path), "mktree", "-z", "--missing")
			built[i] = made{[]string{tree, id}}
			continue
		}
		built[i] = made{o.Tree(c.path, c.mode, content)}
	}
	flagged := o.fsck()
	for i, c := range cases {
		name := fmt.Sprintf("%q (mode %o)", c.path, uint32(c.mode))
		var gitIDs []string
		for _, tr := range built[i].trees {
			gitIDs = append(gitIDs, flagged[tr]...)
		}
		_, linuxOK := o.readTree(built[i].trees[0])
		_, strictOK := o.readTree(built[i].trees[0], "core.protectHFS=true", "core.protectNTFS=true")
		ours := ""
		if r := Commit(c.path, c.mode); r != nil {
			ours = r.ID
		}
		if ours != c.commitRule {
			t.Errorf("%s: commit rule %q, want %q", name, ours, c.commitRule)
		}
		switch {
		case ours == ok && (len(gitIDs) > 0 || !strictOK):
			t.Errorf("%s: we would commit it; git fsck says %q, git's index with both protections takes it: %v", name, gitIDs, strictOK)
		case ours == "invalidPath" && (strictOK || len(gitIDs) > 0):
			t.Errorf("%s: we name verify_path; git fsck says %q, git's index with both protections takes it: %v", name, gitIDs, strictOK)
		case ours != ok && ours != "invalidPath" && !strings.Contains(strings.Join(gitIDs, " "), ours):
			t.Errorf("%s: we name %s; git fsck says %q", name, ours, gitIDs)
		}
		if got := Checkout(c.path, c.mode) == nil; got != c.checkout || got != linuxOK {
			t.Errorf("%s: our checkout takes it: %v, want %v; git read-tree takes it: %v", name, got, c.checkout, linuxOK)
		}
	}
}

// gitOut runs the system git in dir with a clean, fixed environment.
func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C", "TZ=UTC"}
	out, err := cmd.CombinedOutput()
	return string(out), err
}
