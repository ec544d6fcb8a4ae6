package git

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/serverfs/serverfs/internal/errs"
)

// newCommitRepo is a repository with one commit and an identity, in a
// read-write repo-ops workdir, with HOME pointing at a clean directory.
func newCommitRepo(t *testing.T) (string, *Repo) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	dir := t.TempDir()
	gitCLI(t, dir, "init", "-q", "-b", "main")
	gitCLI(t, dir, "config", "user.name", "Serv Er")
	gitCLI(t, dir, "config", "user.email", "s@example.invalid")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	gitCLI(t, dir, "add", "a.txt")
	gitCLI(t, dir, "commit", "-qm", "base")
	r, _ := openRW(t, dir)
	return dir, r
}

func headOf(t *testing.T, dir string) string {
	t.Helper()
	return strings.TrimSpace(gitCLI(t, dir, "rev-parse", "HEAD"))
}

// TestCommitRefusals: every refusal leaves HEAD, the index and the work
// tree as they were.
func TestCommitRefusals(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		paths   []string
		message string
		code    errs.Code
	}{
		{"option-like path", nil, []string{"-x"}, "m", errs.InvalidArgument},
		{"output option", nil, []string{"--output=/tmp/x"}, "m", errs.InvalidArgument},
		{"pathspec magic", nil, []string{":(top)a.txt"}, "m", errs.InvalidArgument},
		{".git path", nil, []string{".git/config"}, "m", errs.HiddenPathNotAllowed},
		{"traversal", nil, []string{"../x"}, "m", errs.PathOutsideWorkdir},
		{"denied", func(t *testing.T, dir string) { write(t, filepath.Join(dir, "id_rsa"), "k\n") }, []string{"id_rsa"}, "m", errs.DeniedPath},
		{"NUL in message", nil, []string{"a.txt"}, "a\x00b", errs.InvalidArgument},
		{"empty message", nil, []string{"a.txt"}, " \n ", errs.InvalidArgument},
		{"huge message", nil, []string{"a.txt"}, strings.Repeat("m", MaxMessageBytes+1), errs.InvalidArgument},
		{"no paths", nil, nil, "m", errs.InvalidArgument},
		{"nothing to commit", nil, []string{"a.txt"}, "m", errs.NothingToCommit},
		{"absent path", nil, []string{"nope.txt"}, "m", errs.PathNotFound},
		{"directory", func(t *testing.T, dir string) { write(t, filepath.Join(dir, "d/x.txt"), "x\n") }, []string{"d"}, "m", errs.InvalidArgument},
		{"ignored", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, ".gitignore"), "*.log\n")
			write(t, filepath.Join(dir, "x.log"), "l\n")
		}, []string{"x.log"}, "m", errs.InvalidArgument},
		{"staged changes", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "s.txt"), "s\n")
			gitCLI(t, dir, "add", "s.txt")
			write(t, filepath.Join(dir, "a.txt"), "changed\n")
		}, []string{"a.txt"}, "m", errs.RepoStagedChanges},
		{"merge in progress", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, ".git/MERGE_HEAD"), headOf(t, dir)+"\n")
			write(t, filepath.Join(dir, "a.txt"), "changed\n")
		}, []string{"a.txt"}, "m", errs.RepoBusy},
		{"rebase in progress", func(t *testing.T, dir string) {
			os.MkdirAll(filepath.Join(dir, ".git/rebase-merge"), 0o755)
			write(t, filepath.Join(dir, "a.txt"), "changed\n")
		}, []string{"a.txt"}, "m", errs.RepoBusy},
		{"unmerged", func(t *testing.T, dir string) {
			h := strings.TrimSpace(gitCLI(t, dir, "rev-parse", "HEAD:a.txt"))
			cmd := exec.Command("git", "update-index", "--index-info")
			cmd.Dir = dir
			cmd.Stdin = strings.NewReader("0 0000000000000000000000000000000000000000\ta.txt\n100644 " + h + " 1\ta.txt\n100644 " + h + " 2\ta.txt\n")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v %s", err, out)
			}
		}, []string{"a.txt"}, "m", errs.RepoBusy},
		{"lfs filter", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, ".gitattributes"), "*.bin filter=lfs diff=lfs merge=lfs -text\n")
			write(t, filepath.Join(dir, "x.bin"), "data\n")
		}, []string{"x.bin"}, "m", errs.RepoUnsupported},
		{"nested attributes filter", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "sub/.gitattributes"), "secret.txt filter=crypt\n")
			write(t, filepath.Join(dir, "sub/secret.txt"), "data\n")
		}, []string{"sub/secret.txt"}, "m", errs.RepoUnsupported},
		{"info/attributes filter", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, ".git/info/attributes"), "*.txt filter=x\n")
			write(t, filepath.Join(dir, "a.txt"), "changed\n")
		}, []string{"a.txt"}, "m", errs.RepoUnsupported},
		{"text attribute with CRLF", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, ".gitattributes"), "* text=auto\n")
			write(t, filepath.Join(dir, "w.txt"), "a\r\nb\r\n")
		}, []string{"w.txt"}, "m", errs.RepoUnsupported},
		{"identity missing", func(t *testing.T, dir string) {
			gitCLI(t, dir, "config", "--unset", "user.name")
			write(t, filepath.Join(dir, "a.txt"), "changed\n")
		}, []string{"a.txt"}, "m", errs.RepoIdentityMissing},
		{"index.lock present", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, ".git/index.lock"), "")
			write(t, filepath.Join(dir, "a.txt"), "changed\n")
		}, []string{"a.txt"}, "m", errs.RepoLocked},
		{"ref lock present", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, ".git/refs/heads/main.lock"), "")
			write(t, filepath.Join(dir, "a.txt"), "changed\n")
		}, []string{"a.txt"}, "m", errs.RepoLocked},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, r := newCommitRepo(t)
			if c.setup != nil {
				c.setup(t, dir)
				r, _ = openRW(t, dir) // as each tool call does: configuration read afresh
			}
			head := headOf(t, dir)
			index, _ := os.ReadFile(filepath.Join(dir, ".git/index"))
			_, err := r.Commit(ctx, c.paths, c.message)
			if errs.CodeOf(err) != c.code {
				t.Fatalf("got %v, want %s", err, c.code)
			}
			if strings.Contains(err.Error(), dir) {
				t.Fatalf("host path in %q", err)
			}
			if headOf(t, dir) != head {
				t.Fatal("HEAD moved")
			}
			if now, _ := os.ReadFile(filepath.Join(dir, ".git/index")); string(now) != string(index) {
				t.Fatal("the index changed")
			}
			if c.name != "index.lock present" {
				if _, err := os.Stat(filepath.Join(dir, ".git/index.lock")); err == nil {
					t.Fatal("index.lock left behind")
				}
			}
		})
	}
	t.Run("read-only workdir", func(t *testing.T) {
		dir, _ := newCommitRepo(t)
		write(t, filepath.Join(dir, "a.txt"), "changed\n")
		r, err := openDir(t, dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Commit(ctx, []string{"a.txt"}, "m"); errs.CodeOf(err) != errs.WorkdirReadOnly {
			t.Fatalf("got %v", err)
		}
	})
}

// TestCommitRunsNoHook: hooks that would leave a canary are never run.
func TestCommitRunsNoHook(t *testing.T) {
	dir, r := newCommitRepo(t)
	canary := filepath.Join(t.TempDir(), "canary")
	for _, hook := range []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "reference-transaction", "post-index-change"} {
		p := filepath.Join(dir, ".git/hooks", hook)
		write(t, p, "#!/bin/sh\necho "+hook+" >> "+canary+"\n")
		os.Chmod(p, 0o755)
	}
	gitCLI(t, dir, "config", "commit.gpgSign", "true")
	write(t, filepath.Join(dir, "a.txt"), "changed\n")
	res, err := r.Commit(context.Background(), []string{"a.txt"}, "no hooks")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(canary); err == nil {
		b, _ := os.ReadFile(canary)
		t.Fatalf("a hook ran: %s", b)
	}
	if sig := gitCLI(t, dir, "cat-file", "commit", res.Commit); strings.Contains(sig, "gpgsig") {
		t.Fatal("the commit is signed")
	}
	// The hooks do work for git itself: the canary test can fail.
	write(t, filepath.Join(dir, "a.txt"), "again\n")
	gitCLI(t, dir, "-c", "commit.gpgSign=false", "commit", "-qam", "by git")
	if _, err := os.Stat(canary); err != nil {
		t.Fatal("git's own commit did not run the hooks: the canary proves nothing")
	}
}

// TestCommitRefusedWhileGitHoldsIndexLock: a real git commit waiting in its
// editor holds .git/index.lock; our commit answers REPO_LOCKED and changes
// nothing; afterwards it succeeds.
func TestCommitRefusedWhileGitHoldsIndexLock(t *testing.T) {
	dir, r := newCommitRepo(t)
	write(t, filepath.Join(dir, "a.txt"), "changed\n")
	fifos := t.TempDir()
	ready, release := filepath.Join(fifos, "ready"), filepath.Join(fifos, "release")
	for _, f := range []string{ready, release} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("git", "commit", "-a")
	cmd.Dir = dir
	// The editor tells the test it runs (git holds the lock by then), then
	// waits until the test releases it, and leaves the message empty.
	cmd.Env = append(os.Environ(), "GIT_EDITOR=echo ready > "+ready+"; cat "+release+" >/dev/null; :")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	f, err := os.Open(ready) // blocks until the editor opens it
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(f).ReadString('\n')
	f.Close()
	if line != "ready\n" {
		t.Fatalf("editor said %q", line)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git/index.lock")); err != nil {
		t.Fatal("git's index.lock is not there while its editor runs")
	}
	head := headOf(t, dir)
	if _, err := r.Commit(context.Background(), []string{"a.txt"}, "while git runs"); errs.CodeOf(err) != errs.RepoLocked {
		t.Fatalf("got %v, want REPO_LOCKED", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git/index.lock")); err != nil {
		t.Fatal("our refusal removed git's index.lock")
	}
	w, err := os.OpenFile(release, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	cmd.Wait() // git aborts: empty message
	if headOf(t, dir) != head {
		t.Fatal("HEAD moved")
	}
	if _, err := r.Commit(context.Background(), []string{"a.txt"}, "after git"); err != nil {
		t.Fatalf("after git finished: %v", err)
	}
}

// TestCommitSmudgesRacilyCleanEntries: an entry modified in the same second
// its index was written (racily clean) must not look clean under the new,
// later index a commit writes; git smudges such entries (size 0) and so
// must ServerFS. Deterministic: the old index and the file are dated 10 s
// back, and the stat check is limited to mtime and size.
func TestCommitSmudgesRacilyCleanEntries(t *testing.T) {
	dir, _ := newCommitRepo(t)
	gitCLI(t, dir, "config", "core.trustCtime", "false")
	gitCLI(t, dir, "config", "core.checkStat", "minimal")
	write(t, filepath.Join(dir, "b.txt"), "XXXX\n")
	gitCLI(t, dir, "add", "b.txt")
	gitCLI(t, dir, "commit", "-qm", "b")
	past := time.Now().Add(-10 * time.Second).Truncate(time.Second)
	// b.txt changes (same size) but keeps its recorded mtime, in the same
	// second as the index: racily clean.
	// Record the old content's entry with the file's stat, then change
	// the content back to YYYY keeping size and mtime.
	write(t, filepath.Join(dir, "b.txt"), "XXXX\n")
	os.Chtimes(filepath.Join(dir, "b.txt"), past, past)
	gitCLI(t, dir, "update-index", "b.txt")
	write(t, filepath.Join(dir, "b.txt"), "YYYY\n")
	os.Chtimes(filepath.Join(dir, "b.txt"), past, past)
	os.Chtimes(filepath.Join(dir, ".git/index"), past, past)
	// --no-optional-locks: this status must not write (and so smudge)
	// the index itself.
	if st := gitCLI(t, dir, "--no-optional-locks", "status", "--porcelain"); st != " M b.txt\n" {
		t.Fatalf("setup: git status %q (git itself must see the racy change)", st)
	}
	write(t, filepath.Join(dir, "a.txt"), "changed\n")
	r, _ := openRW(t, dir)
	if _, err := r.Commit(context.Background(), []string{"a.txt"}, "a only"); err != nil {
		t.Fatal(err)
	}
	if st := gitCLI(t, dir, "--no-optional-locks", "status", "--porcelain"); st != " M b.txt\n" {
		t.Fatalf("after our commit git status says %q: the racily clean entry was not smudged", st)
	}
}

// TestCommitRefusesNamesGitRejects: names git fsck flags, or git's index
// refuses, are GIT_PATH_REJECTED naming the rule, with or without hidden
// paths, changing nothing; names git takes on Linux (a backslash in an
// ordinary name) are committed and check out again.
func TestCommitRefusesNamesGitRejects(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		path, rule string
		hidden     bool // needs SERVERFS_ALLOW_HIDDEN
		link       bool
	}{
		{`a\.git\config`, "hasDotgit", false, false},
		{`x/GIT~1\hooks`, "hasDotgit", false, false},
		{`.git\config`, "hasDotgit", true, false},
		{`sub/.git\x`, "hasDotgit", true, false},
		{".git\u200c/config", "hasDotgit", true, false},
		{".GIT./config", "hasDotgit", true, false},
		{".gitmodules", "gitmodulesSymlink", true, true},
		{"GITMOD~1", "gitmodulesSymlink", false, true},
		{".gitignore", "gitignoreSymlink", true, true},
		{".gitmodules/x", "gitmodulesBlob", true, false},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			dir, _ := newCommitRepo(t)
			full := filepath.Join(dir, filepath.FromSlash(c.path))
			os.MkdirAll(filepath.Dir(full), 0o755)
			if c.link {
				os.Symlink("a.txt", full)
			} else {
				write(t, full, "x\n")
			}
			var env []string
			if c.hidden {
				env = []string{"SERVERFS_ALLOW_HIDDEN=true"}
			}
			r, err := Open(newWorkdirFSEnv(t, env, "wd="+dir+":rw:repo"), "wd")
			if err != nil {
				t.Fatal(err)
			}
			head := headOf(t, dir)
			index, _ := os.ReadFile(filepath.Join(dir, ".git/index"))
			_, err = r.Commit(ctx, []string{c.path}, "m")
			if errs.CodeOf(err) != errs.GitPathRejected || !strings.Contains(err.Error(), c.rule+":") || strings.Contains(err.Error(), dir) {
				t.Fatalf("got %v, want GIT_PATH_REJECTED naming %s", err, c.rule)
			}
			if headOf(t, dir) != head {
				t.Fatal("HEAD moved")
			}
			if now, _ := os.ReadFile(filepath.Join(dir, ".git/index")); string(now) != string(index) {
				t.Fatal("the index changed")
			}
		})
	}
	// The content git fsck reads of .gitmodules and .gitattributes.
	for name, c := range map[string]struct{ path, content, rule string }{
		"option url":      {".gitmodules", "[submodule \"m\"]\n\tpath = m\n\turl = -oProxyCommand=x\n", "gitmodulesUrl"},
		"unparsable":      {"GITMOD~1", "[submodule \"m\"\n", "gitmodulesParse"},
		"long attributes": {"sub/.gitattributes", "*.x " + strings.Repeat("a", 2048) + "\n", "gitattributesLineLength"},
	} {
		t.Run(name, func(t *testing.T) {
			dir, _ := newCommitRepo(t)
			write(t, filepath.Join(dir, c.path), c.content)
			r, err := Open(newWorkdirFSEnv(t, []string{"SERVERFS_ALLOW_HIDDEN=true"}, "wd="+dir+":rw:repo"), "wd")
			if err != nil {
				t.Fatal(err)
			}
			head := headOf(t, dir)
			if _, err := r.Commit(ctx, []string{c.path}, "m"); errs.CodeOf(err) != errs.GitPathRejected || !strings.Contains(err.Error(), c.rule+":") {
				t.Fatalf("got %v, want GIT_PATH_REJECTED naming %s", err, c.rule)
			}
			if headOf(t, dir) != head {
				t.Fatal("HEAD moved")
			}
		})
	}
	t.Run("backslash git takes", func(t *testing.T) {
		dir, r := newCommitRepo(t)
		write(t, filepath.Join(dir, `notes\todo.txt`), "todo\n")
		// A directory named .gitattributes holds no rules, as for git.
		os.MkdirAll(filepath.Join(dir, ".gitattributes"), 0o755)
		if _, err := r.Commit(ctx, []string{`notes\todo.txt`}, "m"); err != nil {
			t.Fatal(err)
		}
		co := checkoutDir(t, r, "HEAD")
		if b, err := os.ReadFile(filepath.Join(co, `notes\todo.txt`)); err != nil || string(b) != "todo\n" {
			t.Fatalf("checkout: %q, %v", b, err)
		}
	})
}
