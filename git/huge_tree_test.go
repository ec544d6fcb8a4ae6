package git

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	sfs "github.com/serverfs/serverfs/fs"
)

// hugeTreeRepo makes, with git plumbing from generated input (no file
// on disk), a repository of three commits on main: root adds a tree
// whose one directory tree/ has treeEntries entries (one shared blob;
// git mktree, as fast-import is quadratic in one directory's size); one
// changes a single file of it; many adds commitFiles files of distinct
// content under many/ in 100 directories (git fast-import). It returns
// the three commit ids.
func hugeTreeRepo(t *testing.T, treeEntries, commitFiles int) (dir string, root, one, many string) {
	t.Helper()
	dir, _ = newCommitRepo(t)
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(stdin)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, stderr.String())
		}
		return strings.TrimSpace(string(out))
	}
	shared := run("shared\n", "hash-object", "-w", "--stdin")
	changed := run("changed\n", "hash-object", "-w", "--stdin")
	parent := headOf(t, dir)
	treeOf := func(changedAt int) string {
		var in strings.Builder
		for i := range treeEntries {
			blob := shared
			if i == changedAt {
				blob = changed
			}
			fmt.Fprintf(&in, "100644 blob %s\tf%06d.txt\n", blob, i)
		}
		sub := run(in.String(), "mktree")
		return run("040000 tree "+sub+"\ttree\n", "mktree")
	}
	root = run("", "commit-tree", treeOf(-1), "-p", parent, "-m", "a 200,000-entry tree")
	one = run("", "commit-tree", treeOf(123456), "-p", root, "-m", "one file changed in it")
	var in strings.Builder
	fmt.Fprintf(&in, "commit refs/heads/main\ncommitter Huge Tree <huge@example.invalid> 1700000000 +0000\ndata 13\n100,000 files\nfrom %s\n", one)
	for i := range commitFiles {
		body := fmt.Sprintf("file %d\nline two\n", i)
		fmt.Fprintf(&in, "M 100644 inline many/d%02d/f%06d.txt\ndata %d\n%s", i%100, i, len(body), body)
	}
	in.WriteString("\ndone\n")
	run(in.String(), "fast-import", "--quiet", "--force", "--done")
	gitCLI(t, dir, "reset", "-q", "--soft", "main")
	many = headOf(t, dir)
	return dir, root, one, many
}

// TestHugeTreeAndCommitHistory: read_repo_history's show and log of a
// 200,000-entry tree (its root commit, and a commit changing one file in
// it) and of a 100,000-file commit answer within their caps (show lists
// at most maxShowFiles files, files_truncated; log at most maxLogFiles per
// commit), each in a fresh process whose peak RSS grows by less than
// 64 MiB (three times that under the race detector, whose shadow memory
// grows with the heap), within the call's time cap, without an internal
// error; trees loose (as git mktree writes them) and packed.
func TestHugeTreeAndCommitHistory(t *testing.T) {
	const treeEntries, commitFiles = 200_000, 100_000
	start := time.Now()
	dir, root, one, many := hugeTreeRepo(t, treeEntries, commitFiles)
	t.Logf("repository made in %v", time.Since(start).Round(time.Millisecond))
	show := func(want int, truncated bool) func(json.RawMessage) string {
		return func(raw json.RawMessage) string {
			var s ShowResult
			if err := json.Unmarshal(raw, &s); err != nil {
				return err.Error()
			}
			if len(s.Files) != want || s.FilesTruncated != truncated || truncated && !s.Truncated {
				return fmt.Sprintf("%d files (files_truncated %v, truncated %v %q), want %d (%v)", len(s.Files), s.FilesTruncated, s.Truncated, s.TruncatedReason, want, truncated)
			}
			return ""
		}
	}
	logOf := func(commits int, perCommit []int) func(json.RawMessage) string {
		return func(raw json.RawMessage) string {
			var l LogResult
			if err := json.Unmarshal(raw, &l); err != nil {
				return err.Error()
			}
			if len(l.Commits) != commits {
				return fmt.Sprintf("%d commits, want %d", len(l.Commits), commits)
			}
			for i, c := range l.Commits {
				if i < len(perCommit) && (len(c.Files) != perCommit[i] || c.FilesTruncated != (perCommit[i] == maxLogFiles)) {
					return fmt.Sprintf("commit %d: %d files (truncated %v), want %d", i, len(c.Files), c.FilesTruncated, perCommit[i])
				}
			}
			return ""
		}
	}
	calls := []struct {
		name    string
		entries int
		op      hostileOp
		check   func(json.RawMessage) string
	}{
		{"show <root: 200,000-entry tree>", treeEntries, hostileOp{Op: "show", Rev: root}, show(maxShowFiles, true)},
		{"show <one file changed in it>", treeEntries, hostileOp{Op: "show", Rev: one}, show(1, false)},
		{"show <100,000-file commit>", commitFiles, hostileOp{Op: "show", Rev: many}, show(maxShowFiles, true)},
		{"show <100,000-file commit> -- many/d07", commitFiles / 100, hostileOp{Op: "show", Rev: many, Paths: []string{"many/d07"}}, show(commitFiles/100, false)},
		// The work tree's initial commit is the fourth, below root.
		{"log main", treeEntries + commitFiles, hostileOp{Op: "log", Rev: "main"}, logOf(4, []int{maxLogFiles, 1, maxLogFiles})},
		{"log main -- tree/f123456.txt", treeEntries, hostileOp{Op: "log", Rev: "main", Paths: []string{"tree/f123456.txt"}}, logOf(2, []int{1, 1})},
		{"log main -- many/d42/f004242.txt", commitFiles, hostileOp{Op: "log", Rev: "main", Paths: []string{"many/d42/f004242.txt"}}, logOf(1, []int{1})},
	}
	var tab strings.Builder
	fmt.Fprintf(&tab, "%-40s %-7s %8s %12s %10s %12s\n", "call", "trees", "entries", "RSS growth", "time", "answer")
	for _, layout := range []string{"loose", "packed"} {
		if layout == "packed" {
			gitCLI(t, dir, "repack", "-adq")
		}
		for _, c := range calls {
			c.name += ", " + layout
			op := c.op
			op.Dir = dir
			out := runHostile(t, op)
			g := out.AfterKiB - out.BeforeKiB
			fmt.Fprintf(&tab, "%-40s %-7s %8d %8.1f MiB %10v %8d KiB\n", strings.TrimSuffix(c.name, ", "+layout), layout, c.entries, float64(g)/1024, out.Elapsed.Round(time.Millisecond), len(out.Result)>>10)
			if out.Err != "" {
				t.Errorf("%s: %s %s", c.name, out.Code, out.Err)
				continue
			}
			if g > raceRSSFactor*maxHostileGrowthKiB {
				t.Errorf("%s: RSS grew by %d MiB (more than %d)", c.name, g>>10, raceRSSFactor*maxHostileGrowthKiB>>10)
			}
			if limit := sfs.DefaultLimits().SearchTimeout; out.Elapsed > limit {
				t.Errorf("%s took %v, more than the %v time cap", c.name, out.Elapsed, limit)
			}
			if msg := c.check(out.Result); msg != "" {
				t.Errorf("%s: %s", c.name, msg)
			}
		}
	}
	t.Log("\n" + tab.String())
}
