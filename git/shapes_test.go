package git

// Regression tests of issue 14: the repository shapes real work trees
// have (backslash names, files replaced by directories, git rm --cached,
// submodules, staged hidden files), each checked against the git CLI.

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fsckStrict fails the test unless git fsck --strict finds nothing.
func fsckStrict(t *testing.T, dir string) {
	t.Helper()
	out, err := gitOut(dir, "fsck", "--strict", "--no-dangling")
	if err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

// TestBackslashNames: on Linux a backslash is an ordinary byte of a name;
// status lists such a file, and diff, staged diff and commit act on it.
func TestBackslashNames(t *testing.T) {
	dir, r := newCommitRepo(t)
	ctx := context.Background()
	name := `a\b.txt`
	write(t, filepath.Join(dir, name), "one\n")
	gitCLI(t, dir, "add", "--", name)
	gitCLI(t, dir, "commit", "-qm", "backslash")
	write(t, filepath.Join(dir, name), "two\n")
	st, err := r.Status(ctx, 100)
	if err != nil || len(st.Entries) != 1 || st.Entries[0] != (Entry{name, ".", "M"}) {
		t.Fatalf("status: %+v %v", st, err)
	}
	d, err := r.Diff(ctx, false, []string{name}, 0)
	if err != nil || len(d.Files) != 1 || d.Files[0].Change != "modified" || !strings.Contains(d.Patch, `"a/a\\b.txt"`) {
		t.Fatalf("diff: %+v %v", d, err)
	}
	if out, err := gitApplyCheck(dir, d.Patch); err != nil {
		t.Fatalf("git apply --cached --check: %v\n%s", err, out)
	}
	if _, err := r.Commit(ctx, []string{name}, "edit"); err != nil {
		t.Fatal(err)
	}
	fsckStrict(t, dir)
	if s := gitCLI(t, dir, "status", "--porcelain"); s != "" {
		t.Fatalf("git status after commit: %q", s)
	}
	// What Windows reads as absolute stays refused.
	for _, bad := range []string{`\\host\share\x`, `\x`, `C:\x`, `C:/x`} {
		if _, err := r.Diff(ctx, false, []string{bad}, 0); err == nil {
			t.Errorf("diff of %q accepted", bad)
		}
	}
}

func gitApplyCheck(dir, patch string) (string, error) {
	cmd := exec.Command("git", "apply", "--cached", "--check", "-")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(patch)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
