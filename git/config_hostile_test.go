package git

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// hostileConfig is configuration naming target as every file a
// repository's config can name: the excludes and attributes files and
// (conditional) includes.
func hostileConfig(target string) string {
	return "[core]\n\texcludesFile = " + target + "\n\tattributesFile = " + target + "\n" +
		"[include]\n\tpath = " + target + "\n" +
		"[includeIf \"onbranch:main\"]\n\tpath = " + target + "\n" +
		"[includeIf \"gitdir:/\"]\n\tpath = " + target + "\n"
}

// TestRepoConfigNamesNoHostFile: a repository whose config points the
// excludes, attributes and include files at a file outside the workdir,
// a FIFO (outside and inside), /dev/stdin or /proc/self/environ answers
// status, diff and commit promptly, and none of those files has any
// effect. Each bait file would hide the untracked u.txt (excludes), make
// the commit fail (a filter attribute) or change the author (include).
func TestRepoConfigNamesNoHostFile(t *testing.T) {
	outside := t.TempDir()
	bait := filepath.Join(outside, "bait")
	write(t, filepath.Join(outside, "excl"), "*.txt\n")
	// One file that is all three at once: ignore patterns, attributes and
	// config lines ("*.txt" and "* filter=bait" are ignored by the config
	// parser only if it fails; the include then does nothing, which is
	// why an include-only bait follows).
	write(t, bait, "*.txt\n* filter=bait\n")
	incBait := filepath.Join(outside, "inc")
	write(t, incBait, "[user]\n\tname = Bait\n[core]\n\texcludesFile = "+filepath.Join(outside, "excl")+"\n")
	fifo := filepath.Join(outside, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		config func(dir string) string
	}{
		{"outside file", func(string) string { return hostileConfig(bait) }},
		{"outside include", func(string) string {
			return "[include]\n\tpath = " + incBait + "\n[core]\n\tattributesFile = " + bait + "\n"
		}},
		{"relative path leaving the root", func(dir string) string {
			rel, err := filepath.Rel(dir, bait)
			if err != nil {
				t.Fatal(err)
			}
			incRel, _ := filepath.Rel(filepath.Join(dir, ".git"), incBait)
			return hostileConfig(rel) + "[include]\n\tpath = " + incRel + "\n"
		}},
		{"home path", func(string) string {
			write(t, filepath.Join(os.Getenv("HOME"), "bait"), "*.txt\n* filter=bait\n")
			return hostileConfig("~/bait")
		}},
		{"FIFO outside", func(string) string { return hostileConfig(fifo) }},
		{"FIFO inside", func(dir string) string {
			if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
				t.Fatal(err)
			}
			// Relative paths: excludes and attributes from the work tree's
			// top, includes from .git.
			return hostileConfig("fifo") + "[include]\n\tpath = ../fifo\n"
		}},
		{"/dev/stdin", func(string) string { return hostileConfig("/dev/stdin") }},
		{"/proc/self/environ", func(string) string { return hostileConfig("/proc/self/environ") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, _ := newCommitRepo(t)
			// The file in .git/config the bait would hide or refuse.
			write(t, filepath.Join(dir, "u.txt"), "untracked\n")
			write(t, filepath.Join(dir, "a.txt"), "changed\n")
			cfgPath := filepath.Join(dir, ".git", "config")
			orig, err := os.ReadFile(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			write(t, cfgPath, string(orig)+c.config(dir))
			if c.name == "/dev/stdin" {
				stdinBait(t, "*.txt\n* filter=bait\n")
			}

			r, f := openRW(t, dir)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			prompt(t, "status", func() {
				st, err := r.Status(ctx, 100)
				if err != nil {
					t.Fatalf("status: %v", err)
				}
				var got []string
				for _, e := range st.Entries {
					got = append(got, e.Staged+e.Unstaged+" "+e.Path)
				}
				if !slices.Equal(got, []string{".M a.txt", "?? u.txt"}) {
					t.Errorf("status %q: the bait took effect", got)
				}
			})
			prompt(t, "diff", func() {
				d, err := r.Diff(ctx, false, []string{"a.txt"}, 1<<20)
				if err != nil || len(d.Files) != 1 || !strings.Contains(d.Patch, "+changed") {
					t.Errorf("diff: %+v, %v", d, err)
				}
			})
			prompt(t, "commit", func() {
				r, err := Open(f, "wd")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := r.Commit(ctx, []string{"a.txt", "u.txt"}, "m"); err != nil {
					t.Errorf("commit: %v", err)
				}
			})
			write(t, cfgPath, string(orig)) // for the git below
			if an := strings.TrimSpace(gitCLI(t, dir, "log", "-1", "--format=%an")); an != "Serv Er" {
				t.Errorf("author %q: an include outside took effect", an)
			}
		})
	}
}

// prompt runs fn, failing the test when it does not return within 10 s (a
// FIFO opened blocking would hang it for ever; the goroutine is then
// leaked, the test fails).
func prompt(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not answer within 10 s", what)
	}
}

// stdinBait makes the process's standard input a pipe holding content
// for the test, and checks at its end that nothing read from it.
func stdinBait(t *testing.T, content string) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Write(p[1], []byte(content)); err != nil {
		t.Fatal(err)
	}
	saved, err := unix.Dup(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Dup2(p[0], 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unix.Dup2(saved, 0)
		unix.Close(saved)
		unix.Close(p[1])
		if err := unix.SetNonblock(p[0], true); err != nil {
			t.Error(err)
		}
		buf := make([]byte, len(content)+1)
		n, _ := unix.Read(p[0], buf)
		unix.Close(p[0])
		if n != len(content) {
			t.Errorf("standard input was read: %d of %d bytes left", max(n, 0), len(content))
		}
	})
}

// TestRepoConfigIncludesInsideRepo: an include.path and a
// core.excludesFile that stay beneath the root are followed, as git
// follows them (git is the oracle for the author and the status).
func TestRepoConfigIncludesInsideRepo(t *testing.T) {
	dir, _ := newCommitRepo(t)
	write(t, filepath.Join(dir, ".git", "inc.cfg"), "[user]\n\tname = Included\n[core]\n\texcludesFile = .git/excl\n")
	write(t, filepath.Join(dir, ".git", "excl"), "*.log\n")
	gitCLI(t, dir, "config", "include.path", "inc.cfg")
	write(t, filepath.Join(dir, "x.log"), "l\n")
	write(t, filepath.Join(dir, "b.txt"), "b\n")
	r, _ := openRW(t, dir)
	st, err := r.Status(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Entries) != 1 || st.Entries[0].Path != "b.txt" {
		t.Errorf("status %+v; git says:\n%s", st.Entries, gitCLI(t, dir, "status", "--porcelain"))
	}
	if _, err := r.Commit(context.Background(), []string{"b.txt"}, "m"); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "c.txt"), "c\n")
	gitCLI(t, dir, "add", "c.txt")
	if out, err := gitOut(dir, "-c", "user.email=x@example.invalid", "commit", "-qm", "by git"); err != nil {
		t.Fatalf("git commit: %v\n%s", err, out)
	}
	if got := gitCLI(t, dir, "log", "-2", "--format=%an"); got != "Included\nIncluded\n" {
		t.Errorf("authors (ours, then git's) %q", got)
	}
}
