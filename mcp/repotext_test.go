package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectRepoChanges: view changes is the whole uncommitted change in
// one call: the status as git status --short writes it, then the patch
// git diff HEAD writes once the untracked files are added with intent to
// add (system git is the oracle), untracked contents included; the text
// channel carries both as plain text.
func TestInspectRepoChanges(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	e := newRWEnv(t)
	w := func(rel, s string) { writeFile(t, filepath.Join(e.root, filepath.FromSlash(rel)), []byte(s)) }
	w("mod.txt", "one\ntwo\nthree\n")
	w("staged.txt", "s1\ns2\n")
	w("both.txt", "b1\nb2\n")
	w("del.txt", "going\n")
	w("gone.txt", "removed from the index\n")
	w("run.sh", "#!/bin/sh\n")
	gitIn(t, e.root, "init", "-q", "-b", "main")
	gitIn(t, e.root, "config", "user.name", "T")
	gitIn(t, e.root, "config", "user.email", "t@example.invalid")
	gitIn(t, e.root, "add", "-A")
	gitIn(t, e.root, "commit", "-qm", "base")

	w("mod.txt", "one\n2\tTWO & <b> -> c\nthree\n")
	w("staged.txt", "s1\ns2 staged\n")
	gitIn(t, e.root, "add", "staged.txt")
	w("both.txt", "b1 staged\nb2\n")
	gitIn(t, e.root, "add", "both.txt")
	w("both.txt", "b1 staged\nb2 and unstaged\n")
	if err := os.Remove(filepath.Join(e.root, "del.txt")); err != nil {
		t.Fatal(err)
	}
	gitIn(t, e.root, "rm", "-q", "gone.txt")
	if err := os.Chmod(filepath.Join(e.root, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	w("added.txt", "added and staged\n")
	gitIn(t, e.root, "add", "added.txt")
	w("new.txt", "untracked\ttab & <x> -> y\r\ncafé, no final newline")
	w("newdir/deep.txt", "deep\n")
	cs := e.client(t, e.serveHTTP(t))

	status := gitIn(t, e.root, "status", "--short", "--untracked-files=all", "--no-renames")
	res := e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "changes"})
	out := structured[inspectRepoOut](t, res)
	text := resultText(res)

	gitIn(t, e.root, "add", "-N", "new.txt", "newdir/deep.txt")
	patch := gitIn(t, e.root, "-c", "core.abbrev=7", "diff", "HEAD", "--no-color", "--no-ext-diff", "--no-renames")
	if out.Diff == nil || out.Diff.Patch != patch {
		t.Fatalf("patch:\n%s\ngit diff HEAD (untracked added with -N):\n%s", out.Diff.Patch, patch)
	}
	head := strings.TrimSpace(gitIn(t, e.root, "rev-parse", "HEAD"))
	if want := "## main at " + head[:10] + "\n" + status + patch; text != want {
		t.Errorf("text:\n%s\nwant:\n%s", text, want)
	}
	// Untracked again, as the call saw them.
	gitIn(t, e.root, "reset", "-q", "--", "new.txt", "newdir/deep.txt")
	if !strings.Contains(text, "+untracked\ttab & <x> -> y\r\n+café, no final newline\n\\ No newline at end of file\n") {
		t.Errorf("untracked content not plain in the text:\n%s", text)
	}

	// Only some paths: a directory and a file.
	res = e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "changes", "paths": []string{"newdir", "mod.txt"}})
	if got := resultText(res); !strings.HasPrefix(got, "## main at "+head[:10]+"\n M mod.txt\n?? newdir/deep.txt\ndiff --git a/mod.txt b/mod.txt\n") || strings.Contains(got, "new.txt b/new.txt") {
		t.Errorf("changes of two paths:\n%s", got)
	}

	// Cut at max_bytes: the last line names what was left out and how to
	// get it; that call answers it.
	w("zbig.txt", strings.Repeat("a long untracked line of text\n", 60))
	res = e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "changes", "max_bytes": 1024})
	got := resultText(res)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "truncated: max_bytes 1024; ") || !strings.Contains(last, "zbig.txt") || !strings.Contains(last, "call view changes again with paths set to them") {
		t.Fatalf("truncated line %q of\n%s", last, got)
	}
	if o := structured[inspectRepoOut](t, res); !o.Diff.Truncated || len(o.Diff.Patch) > 1024 {
		t.Errorf("cut diff: %+v", o.Diff)
	}
	res = e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "changes", "paths": []string{"zbig.txt"}})
	if got := resultText(res); !strings.Contains(got, "new file mode 100644\n") || strings.Contains(got, "truncated") {
		t.Errorf("the rest:\n%s", got)
	}

	// The explicit diff views: plain patch text, files without a section
	// named on one line.
	res = e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "diff", "paths": []string{"mod.txt", "zbig.txt", "compose.yml"}})
	wantDiff := gitIn(t, e.root, "-c", "core.abbrev=7", "diff", "--no-color", "--no-ext-diff", "--", "mod.txt") + "no patch: compose.yml (unchanged), zbig.txt (untracked)\n"
	if got := resultText(res); got != wantDiff {
		t.Errorf("diff view:\n%s\nwant\n%s", got, wantDiff)
	}
	// status: the same lines, nothing escaped.
	res = e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "status", "limit": 2})
	if got := resultText(res); !strings.HasPrefix(got, "## main at "+head[:10]+"\n") || !strings.HasSuffix(got, "truncated: limit; more than 2 paths changed: raise limit (at most 10000)\n") {
		t.Errorf("status view:\n%s", got)
	}
}
