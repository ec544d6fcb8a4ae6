package git

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// gitCLI runs the system git in dir with a clean, fixed environment.
func gitCLI(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.invalid", "GIT_COMMITTER_NAME=c", "GIT_COMMITTER_EMAIL=c@example.invalid", "LC_ALL=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// openDir opens the repository in dir as the read-only workdir "wd",
// with an empty HOME (no global git configuration).
func openDir(t *testing.T, dir string) (*Repo, error) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	return Open(newWorkdirFS(t, "wd="+dir), "wd")
}

// newWorkdirFS is an FS over the --workdir specs, closed with the test.
func newWorkdirFS(t *testing.T, specs ...string) *sfs.FS {
	t.Helper()
	return newWorkdirFSEnv(t, nil, specs...)
}

// newWorkdirFSEnv is newWorkdirFS with the SERVERFS_ variables of env.
func newWorkdirFSEnv(t *testing.T, env []string, specs ...string) *sfs.FS {
	t.Helper()
	cfg, err := sfs.LoadConfig(env, specs)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func write(t *testing.T, path, content string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRefusals: repositories go-git cannot read like git are refused
// with REPO_UNSUPPORTED and the reason, never answered.
func TestOpenRefusals(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required (CI installs it)")
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		code  errs.Code
		msg   string
	}{
		{"no repository", func(t *testing.T, dir string) {}, errs.RepoNotFound, "no .git"},
		{".git file", func(t *testing.T, dir string) { write(t, filepath.Join(dir, ".git"), "gitdir: /elsewhere\n") }, errs.RepoUnsupported, ".git file"},
		{".git symlink", func(t *testing.T, dir string) {
			other := t.TempDir()
			gitCLI(t, other, "init", "-q")
			os.Symlink(filepath.Join(other, ".git"), filepath.Join(dir, ".git"))
		}, errs.RepoUnsupported, "not a directory"},
		{"sha256", func(t *testing.T, dir string) { gitCLI(t, dir, "init", "-q", "--object-format=sha256") }, errs.RepoUnsupported, "sha256"},
		{"worktreeConfig", func(t *testing.T, dir string) {
			gitCLI(t, dir, "init", "-q")
			gitCLI(t, dir, "config", "extensions.worktreeConfig", "true")
		}, errs.RepoUnsupported, "worktreeConfig"},
		{"split index", func(t *testing.T, dir string) {
			gitCLI(t, dir, "init", "-q")
			write(t, filepath.Join(dir, "a"), "a\n")
			gitCLI(t, dir, "add", "a")
			gitCLI(t, dir, "update-index", "--split-index")
		}, errs.RepoUnsupported, "split index"},
		{"autocrlf", func(t *testing.T, dir string) {
			gitCLI(t, dir, "init", "-q")
			gitCLI(t, dir, "config", "core.autocrlf", "input")
		}, errs.RepoUnsupported, "autocrlf"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(t, dir)
			_, err := openDir(t, dir)
			if errs.CodeOf(err) != c.code || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %v, want %s mentioning %q", err, c.code, c.msg)
			}
			if strings.Contains(err.Error(), dir) {
				t.Fatalf("host path in %q", err)
			}
		})
	}
}

// TestStatusScenario: one hand-built state covering staged, unstaged,
// untracked, ignored, deleted-but-present and hidden/denied paths,
// compared with what git prints for it.
func TestStatusScenario(t *testing.T) {
	dir := t.TempDir()
	gitCLI(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, "src/a.txt"), "hi\n")
	write(t, filepath.Join(dir, "b.txt"), "x\n")
	write(t, filepath.Join(dir, "gone.txt"), "g\n")
	write(t, filepath.Join(dir, ".gitignore"), "build/\n*.log\n")
	write(t, filepath.Join(dir, "id_rsa"), "k\n")
	gitCLI(t, dir, "add", "-A")
	gitCLI(t, dir, "commit", "-qm", "one")
	write(t, filepath.Join(dir, "src/a.txt"), "hi\nmore\n")
	write(t, filepath.Join(dir, "c.txt"), "new\n")
	write(t, filepath.Join(dir, "build/out"), "o\n")
	write(t, filepath.Join(dir, "x.log"), "l\n")
	write(t, filepath.Join(dir, "id_rsa"), "changed\n")
	write(t, filepath.Join(dir, ".hidden"), "h\n")
	os.Remove(filepath.Join(dir, "gone.txt"))
	gitCLI(t, dir, "rm", "-q", "--cached", "b.txt")
	write(t, filepath.Join(dir, "staged.txt"), "s\n")
	gitCLI(t, dir, "add", "staged.txt")
	os.Chmod(filepath.Join(dir, "staged.txt"), 0o755)

	r, err := openDir(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.Status(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range st.Entries {
		got = append(got, e.Staged+e.Unstaged+" "+e.Path)
	}
	// git status --porcelain=v2 -uall --no-renames, without the hidden
	// (.hidden) and denied (id_rsa) paths.
	want := []string{"D. b.txt", "?? b.txt", "?? c.txt", ".D gone.txt", ".M src/a.txt", "AM staged.txt"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("status\n got %q\nwant %q\ngit:\n%s", got, want, gitCLI(t, dir, "status", "--porcelain=v2", "-uall", "--no-renames"))
	}
	if st.Branch != "main" || len(st.Head) != 40 || st.Truncated {
		t.Fatalf("branch %q head %q truncated %v", st.Branch, st.Head, st.Truncated)
	}
	st, _ = r.Status(context.Background(), 2)
	if len(st.Entries) != 2 || !st.Truncated {
		t.Fatalf("limit 2: %d entries, truncated %v", len(st.Entries), st.Truncated)
	}
}
