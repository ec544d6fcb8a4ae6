package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// queueRepo makes a repository on main with a few files and a user
// identity, and returns its directory and base commit.
func queueRepo(t *testing.T) (string, string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Serv Er\n\temail = serverfs@example.invalid\n[init]\n\tdefaultBranch = main\n"), 0o644)
	dir := filepath.Join(t.TempDir(), "repo")
	os.MkdirAll(dir, 0o755)
	gitCLI(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, "a.txt"), "a1\na2\na3\na4\na5\na6\na7\na8\n")
	write(t, filepath.Join(dir, "b.txt"), "b1\nb2\nb3\n")
	write(t, filepath.Join(dir, "src/c.go"), "package c\n\nfunc C() int { return 1 }\n")
	write(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	gitCLI(t, dir, "add", "-A")
	gitCLI(t, dir, "commit", "-qm", "base")
	return dir, strings.TrimSpace(gitCLI(t, dir, "rev-parse", "HEAD"))
}

// checkoutTo writes the tree of commit into a fresh directory (what a
// workspace holds), without .git.
func checkoutTo(t *testing.T, repo, commit string) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	os.MkdirAll(ws, 0o755)
	gitCLI(t, repo, "--work-tree="+ws, "checkout", commit, "--", ".")
	gitCLI(t, repo, "reset", "-q") // the index is the live one's again
	return ws
}

func TestSubmitQueue(t *testing.T) {
	dir, base := queueRepo(t)
	ws1, ws2, ws3, ws4 := checkoutTo(t, dir, base), checkoutTo(t, dir, base), checkoutTo(t, dir, base), checkoutTo(t, dir, base)
	f := newWorkdirFS(t, "wd="+dir+":rw:repo", "ws1="+ws1+":rw", "ws2="+ws2+":rw", "ws3="+ws3+":rw", "ws4="+ws4+":rw")
	r, err := Open(f, "wd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if out, err := gitOut(dir, "fsck", "--strict", "--no-progress"); err != nil || strings.Contains(out, "error") {
			t.Errorf("git fsck --strict: %v\n%s", err, out)
		}
	})
	ctx := context.Background()
	wsd := func(alias string) *sfs.Workdir {
		w, err := f.Workdir(alias)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	head := func() string { return strings.TrimSpace(gitCLI(t, dir, "rev-parse", "main")) }

	// ws1 changes a.txt, adds a file and an ignored one; ws2 changes b.txt.
	write(t, filepath.Join(ws1, "a.txt"), "a1\nA2\na3\na4\na5\na6\na7\na8\n")
	write(t, filepath.Join(ws1, "new/n.txt"), "n\n")
	write(t, filepath.Join(ws1, "build.log"), "ignored\n")
	write(t, filepath.Join(ws2, "b.txt"), "b1\nB2\nb3\n")
	os.Remove(filepath.Join(ws2, "src/c.go"))
	p1, err := r.CommitWorkspace(ctx, wsd("ws1"), base, "ws1: a and n")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(p1.FilesChanged, ",") != "a.txt,new/n.txt" || p1.Diffstat != (Diffstat{Files: 2, Insertions: 2, Deletions: 1}) || p1.Base != base {
		t.Fatalf("patch 1: %+v", p1)
	}
	p2, err := r.CommitWorkspace(ctx, wsd("ws2"), base, "ws2: b")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(p2.FilesChanged, ",") != "b.txt,src/c.go" {
		t.Fatalf("patch 2: %+v", p2)
	}

	// strict: p1 fast-forwards; the live checkout (clean) follows.
	res, err := r.Submit(ctx, "main", p1, MergeStrict, "")
	if err != nil || res.Status != StatusMerged || res.To != p1.Head || res.Checkout != "updated" {
		t.Fatalf("strict p1: %+v %v", res, err)
	}
	if head() != p1.Head || gitCLI(t, dir, "status", "--porcelain") != "" {
		t.Fatalf("after p1: head %s, status %q", head(), gitCLI(t, dir, "status", "--porcelain"))
	}
	// strict p2: base moved; the branch stays.
	res, err = r.Submit(ctx, "main", p2, MergeStrict, "")
	if errs.CodeOf(err) != errs.BaseMoved || res.Status != StatusBaseMoved || head() != p1.Head {
		t.Fatalf("strict p2: %+v %v", res, err)
	}
	// replay p2: merged on top of p1.
	res, err = r.Submit(ctx, "main", p2, MergeReplay, "")
	if err != nil || res.Status != StatusMerged || res.From != p1.Head || res.Checkout != "updated" {
		t.Fatalf("replay p2: %+v %v", res, err)
	}
	merged := head()
	if got := gitCLI(t, dir, "show", "main:b.txt") + gitCLI(t, dir, "show", "main:a.txt"); got != "b1\nB2\nb3\na1\nA2\na3\na4\na5\na6\na7\na8\n" {
		t.Fatalf("merged content %q", got)
	}
	if gitCLI(t, dir, "rev-parse", "main^") != p1.Head+"\n" || gitCLI(t, dir, "status", "--porcelain") != "" {
		t.Fatal("replay commit's parent or the checkout is wrong")
	}
	if _, err := os.Stat(filepath.Join(dir, "src/c.go")); !os.IsNotExist(err) {
		t.Fatal("the deleted file is still in the checkout")
	}
	// Resubmitted: recognised.
	res, err = r.Submit(ctx, "main", p2, MergeReplay, "")
	if err != nil || res.Status != StatusAlreadyMerged || res.To != merged || head() != merged {
		t.Fatalf("resubmit: %+v %v", res, err)
	}

	// ws3 changes line 2 of a.txt differently: a conflict, hunks, the
	// branch stays.
	write(t, filepath.Join(ws3, "a.txt"), "a1\nX2\na3\na4\na5\na6\na7\na8\n")
	p3, err := r.CommitWorkspace(ctx, wsd("ws3"), base, "ws3")
	if err != nil {
		t.Fatal(err)
	}
	res, err = r.Submit(ctx, "main", p3, MergeReplay, "")
	if errs.CodeOf(err) != errs.MergeConflict || res.Status != StatusConflict || head() != merged {
		t.Fatalf("conflict: %+v %v", res, err)
	}
	if strings.Join(res.Files, ",") != "a.txt" || len(res.Hunks) != 1 || res.Artifact == nil {
		t.Fatalf("conflict answer %+v", res)
	}
	if h := res.Hunks[0]; h.Base != "a2\n" || h.Ours != "A2\n" || h.Theirs != "X2\n" || h.Line != 2 {
		t.Fatalf("hunk %+v", h)
	}
	// The same change on the branch's side merges as already there.
	write(t, filepath.Join(ws4, "a.txt"), "a1\nA2\na3\na4\na5\na6\na7\na8\n")
	p4, err := r.CommitWorkspace(ctx, wsd("ws4"), base, "ws4")
	if err != nil {
		t.Fatal(err)
	}
	if res, err = r.Submit(ctx, "main", p4, MergeReplay, ""); err != nil || res.Status != StatusAlreadyMerged {
		t.Fatalf("same change: %+v %v", res, err)
	}

	// No change.
	pe, err := r.CommitWorkspace(ctx, wsd("ws4"), p1.Head, "nothing")
	if err != nil {
		t.Fatal(err)
	}
	if !pe.Empty {
		// ws4 is base + A2 = p1 without new/n.txt: a change; make it empty.
		write(t, filepath.Join(ws4, "new/n.txt"), "n\n")
		if pe, err = r.CommitWorkspace(ctx, wsd("ws4"), p1.Head, "nothing"); err != nil || !pe.Empty {
			t.Fatalf("empty patch: %+v %v", pe, err)
		}
	}
	if res, err = r.Submit(ctx, "main", pe, MergeStrict, ""); err != nil || res.Status != StatusNoChange {
		t.Fatalf("no change: %+v %v", res, err)
	}

	// Tampered patches are refused.
	for name, tamper := range map[string]func(p *Patch){
		"sha":   func(p *Patch) { p.SHA256 = strings.Repeat("0", 64) },
		"files": func(p *Patch) { p.FilesChanged = []string{"b.txt"} },
		"base":  func(p *Patch) { p.Base = p1.Head },
		"tree":  func(p *Patch) { p.Tree = p1.Tree },
	} {
		bad := *p3
		tamper(&bad)
		if _, err := r.Submit(ctx, "main", &bad, MergeReplay, ""); errs.CodeOf(err) != errs.PatchMismatch {
			t.Errorf("tampered %s: %v", name, err)
		}
	}
	if head() != merged {
		t.Fatal("a refused patch moved the branch")
	}

	// A checkout with an unrelated edit follows; the edit stays.
	write(t, filepath.Join(dir, "b.txt"), "dirty\n")
	write(t, filepath.Join(ws3, "a.txt"), "a1\na2\na3\na4\na5\na6\na7\nZ8\n")
	p5, err := r.CommitWorkspace(ctx, wsd("ws3"), base, "ws3 again")
	if err != nil {
		t.Fatal(err)
	}
	if res, err = r.Submit(ctx, "main", p5, MergeReplay, "replayed ws3"); err != nil || res.Status != StatusMerged || res.Checkout != "updated" {
		t.Fatalf("dirty checkout: %+v %v", res, err)
	}
	st, err := r.Status(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	checkStatusAgrees(t, r, dir, st)
	if got := gitCLI(t, dir, "status", "--porcelain"); got != " M b.txt\n" {
		t.Fatalf("after a merge into an edited checkout: %q", got)
	}

	// The ledger replays to the branch: merged events chain from the
	// base to the head, and each is a first-parent step of main.
	checkLedger(t, r, dir, "main", base)
}

// checkStatusAgrees compares our status with git status --porcelain
// (paths only: what is changed, not how it is worded), where the policy
// shows them.
func checkStatusAgrees(t *testing.T, r *Repo, dir string, st *Status) {
	t.Helper()
	var ours []string
	for _, e := range st.Entries {
		ours = append(ours, e.Path)
	}
	var theirs []string
	for _, l := range strings.Split(strings.TrimRight(gitCLI(t, dir, "status", "--porcelain", "--untracked-files=all", "--no-renames"), "\n"), "\n") {
		if len(l) > 3 && r.visible(l[3:]) {
			theirs = append(theirs, l[3:])
		}
	}
	sort.Strings(ours)
	sort.Strings(theirs)
	if strings.Join(ours, "\n") != strings.Join(theirs, "\n") {
		t.Fatalf("status: ours %q, git %q", ours, theirs)
	}
}

// checkLedger replays the ledger's merged events: CheckLedger finds no
// break and no move outside the queue, and the merged commits, in order,
// are git's first-parent line from base to the branch head.
func checkLedger(t *testing.T, r *Repo, dir, branch, base string) {
	t.Helper()
	merged, line := ledgerAndLine(t, r, dir, branch, base)
	if strings.Join(merged, " ") != strings.Join(line, " ") {
		t.Fatalf("ledger merged %v, git's first-parent line from the base %v", merged, line)
	}
}

// checkLedgerTail is checkLedger for a ledger the bound pruned: its
// merged events are the newest of git's first-parent line from the base,
// in order, and the ledger ends at the branch.
func checkLedgerTail(t *testing.T, r *Repo, dir, branch, base string) {
	t.Helper()
	merged, line := ledgerAndLine(t, r, dir, branch, base)
	if len(merged) > len(line) || strings.Join(merged, " ") != strings.Join(line[len(line)-len(merged):], " ") {
		t.Fatalf("ledger merged %v, not the newest of git's first-parent line from the base %v", merged, line)
	}
}

// ledgerAndLine checks the ledger (CheckLedger: no break, no move outside
// the queue) and returns its merged commits and git's first-parent line
// from base to branch, both oldest first.
func ledgerAndLine(t *testing.T, r *Repo, dir, branch, base string) (merged, line []string) {
	t.Helper()
	events, _, err := r.ReadLedger(branch)
	if err != nil {
		t.Fatalf("ledger: %v", err)
	}
	lc, err := r.CheckLedger(context.Background(), branch)
	if err != nil || lc.Outside != 0 {
		t.Fatalf("CheckLedger: %+v %v", lc, err)
	}
	for _, ev := range events {
		if ev.Event == "merged" {
			merged = append(merged, ev.To)
		}
	}
	return merged, strings.Fields(gitCLI(t, dir, "rev-list", "--first-parent", "--reverse", base+".."+branch))
}

// TestCheckLedgerOutside: a commit made outside the queue is counted; a
// branch reset behind the last merge is an error.
func TestCheckLedgerOutside(t *testing.T) {
	dir, base := queueRepo(t)
	ws := checkoutTo(t, dir, base)
	r, w := openQueueRepo(t, dir, ws)
	write(t, filepath.Join(ws, "b.txt"), "queued\n")
	p, err := r.CommitWorkspace(context.Background(), w, base, "queued")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Submit(context.Background(), "main", p, MergeStrict, ""); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "a.txt"), "outside\n")
	gitCLI(t, dir, "commit", "-qam", "outside the queue")
	if lc, err := r.CheckLedger(context.Background(), "main"); err != nil || lc.Merged != 1 || lc.Outside != 1 || lc.LastMerged != p.Head {
		t.Fatalf("after an outside commit: %+v %v", lc, err)
	}
	gitCLI(t, dir, "reset", "-q", "--hard", base)
	if _, err := r.CheckLedger(context.Background(), "main"); err == nil {
		t.Fatal("a reset behind the last merge passed")
	}
}

// TestSubmitQueueEdges: a packed branch, binary and mode changes, a ref
// lock held by someone else, a branch moved under the queue, and
// concurrent submits (one worker: both merge, one after the other).
func TestSubmitQueueEdges(t *testing.T) {
	dir, _ := queueRepo(t)
	os.WriteFile(filepath.Join(dir, "bin.dat"), []byte("\x00\x01binary\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "run.sh"), []byte("echo 1\necho 2\necho 3\necho 4\n"), 0o644)
	gitCLI(t, dir, "add", "-A")
	gitCLI(t, dir, "commit", "-qm", "bin and script")
	gitCLI(t, dir, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(dir, ".git/refs/heads/main")); !os.IsNotExist(err) {
		t.Fatal("main should be packed")
	}
	base := strings.TrimSpace(gitCLI(t, dir, "rev-parse", "HEAD"))
	var wss []string
	specs := []string{"wd=" + dir + ":rw:repo"}
	for i := range 6 {
		wss = append(wss, checkoutTo(t, dir, base))
		specs = append(specs, "ws"+string(rune('0'+i))+"="+wss[i]+":rw")
	}
	f := newWorkdirFS(t, specs...)
	r, err := Open(f, "wd")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	patch := func(i int, msg string) *Patch {
		t.Helper()
		w, err := f.Workdir("ws" + string(rune('0'+i)))
		if err != nil {
			t.Fatal(err)
		}
		p, err := r.CommitWorkspace(ctx, w, base, msg)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	head := func() string { return strings.TrimSpace(gitCLI(t, dir, "rev-parse", "main")) }

	// ws0 changes the binary file and makes run.sh executable with a
	// change at its end; ws1 changes the binary file too, and run.sh's
	// first line.
	os.WriteFile(filepath.Join(wss[0], "bin.dat"), []byte("\x00\x02zero\n"), 0o644)
	os.WriteFile(filepath.Join(wss[0], "run.sh"), []byte("echo 1\necho 2\necho 3\necho four\n"), 0o755)
	os.Chmod(filepath.Join(wss[0], "run.sh"), 0o755)
	os.WriteFile(filepath.Join(wss[1], "bin.dat"), []byte("\x00\x03one\n"), 0o644)
	os.WriteFile(filepath.Join(wss[1], "run.sh"), []byte("echo one\necho 2\necho 3\necho 4\n"), 0o644)
	p0, p1 := patch(0, "zero"), patch(1, "one")
	if res, err := r.Submit(ctx, "main", p0, MergeStrict, ""); err != nil || res.Status != StatusMerged {
		t.Fatalf("p0 onto the packed branch: %+v %v", res, err)
	}
	res, err := r.Submit(ctx, "main", p1, MergeReplay, "")
	if errs.CodeOf(err) != errs.MergeConflict || strings.Join(res.Files, ",") != "bin.dat" || res.Hunks[0].Reason != "binary" {
		t.Fatalf("binary conflict: %+v %v", res, err)
	}
	// Without the binary change, run.sh merges: both lines, and the
	// executable bit ws0 set.
	os.WriteFile(filepath.Join(wss[1], "bin.dat"), []byte("\x00\x01binary\n"), 0o644)
	p1 = patch(1, "one, text only")
	if res, err := r.Submit(ctx, "main", p1, MergeReplay, ""); err != nil || res.Status != StatusMerged {
		t.Fatalf("p1: %+v %v", res, err)
	}
	if got := gitCLI(t, dir, "ls-tree", "main", "run.sh"); !strings.HasPrefix(got, "100755 ") {
		t.Fatalf("mode after the merge: %q", got)
	}
	if got := gitCLI(t, dir, "show", "main:run.sh"); got != "echo one\necho 2\necho 3\necho four\n" {
		t.Fatalf("run.sh merged to %q", got)
	}

	// A ref lock held by another git: REPO_LOCKED, nothing moves.
	os.WriteFile(filepath.Join(wss[2], "b.txt"), []byte("b1\nb2\nb3\nb4\n"), 0o644)
	p2 := patch(2, "b4")
	lock := filepath.Join(dir, ".git/refs/heads/main.lock")
	os.WriteFile(lock, nil, 0o644)
	before := head()
	if _, err := r.Submit(ctx, "main", p2, MergeReplay, ""); errs.CodeOf(err) != errs.RepoLocked || head() != before {
		t.Fatalf("locked ref: %v", err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatal("someone else's lock was removed")
	}
	if evs, _, _ := r.ReadLedger("main"); evs[len(evs)-1].Event != "interrupted" || evs[len(evs)-1].Note != string(errs.RepoLocked) {
		t.Fatalf("the refused apply is not closed in the ledger: %+v", evs[len(evs)-1])
	}
	os.Remove(lock)
	// The branch moved between the merge and the swap: refused by the
	// compare-and-swap.
	if err := r.updateBranch("main", plumbing.NewHash(base), plumbing.NewHash(p2.Head), false, object.Signature{Name: "x", Email: "x@x"}, "x"); errs.CodeOf(err) != errs.RepoLocked || head() != before {
		t.Fatalf("stale compare-and-swap: %v", err)
	}

	// Concurrent submits of different files: both merge, in turn.
	os.WriteFile(filepath.Join(wss[3], "src/c.go"), []byte("package c\n\nfunc C() int { return 3 }\n"), 0o644)
	os.WriteFile(filepath.Join(wss[4], "a.txt"), []byte("a1\na2\na3\na4\na5\na6\na7\na8\na9\n"), 0o644)
	p3, p4 := patch(3, "c3"), patch(4, "a9")
	errList := make(chan error, 3)
	for _, p := range []*Patch{p2, p3, p4} {
		go func() {
			res, err := r.Submit(ctx, "main", p, MergeReplay, "")
			if err == nil && res.Status != StatusMerged {
				err = fmt.Errorf("status %s", res.Status)
			}
			errList <- err
		}()
	}
	for range 3 {
		if err := <-errList; err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(gitCLI(t, dir, "log", "--oneline", before+"..main"), "\n"); n != 3 {
		t.Fatalf("%d commits merged, want 3", n)
	}
	if out := gitCLI(t, dir, "fsck", "--strict", "--no-progress", "--no-dangling"); strings.TrimSpace(out) != "" {
		t.Fatalf("fsck: %s", out)
	}
	st, err := r.Status(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	checkStatusAgrees(t, r, dir, st)
	if len(st.Entries) != 0 {
		t.Fatalf("the clean checkout did not follow: %+v", st.Entries)
	}
	checkLedger(t, r, dir, "main", base)
}

// TestCommitWorkspaceHostile: a FIFO in the workspace is skipped without
// blocking, a sparse file past the blob limit is refused from its size
// (nothing read: bounded time and memory), and a symlink is committed as
// a symlink, never followed.
func TestCommitWorkspaceHostile(t *testing.T) {
	dir, base := queueRepo(t)
	ws := checkoutTo(t, dir, base)
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink("../../outside/secret", filepath.Join(ws, "link"))
	r, w := openQueueRepo(t, dir, ws)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := r.CommitWorkspace(ctx, w, base, "fifo and link")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(p.FilesChanged, ",") != "link" {
		t.Fatalf("changes %v", p.FilesChanged)
	}
	if got := gitCLI(t, dir, "ls-tree", p.Head, "link"); !strings.HasPrefix(got, "120000 ") {
		t.Fatalf("link committed as %q", got)
	}
	big, err := os.Create(filepath.Join(ws, "huge.bin"))
	if err != nil {
		t.Fatal(err)
	}
	big.Truncate(4 << 30)
	big.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err = r.CommitWorkspace(ctx, w, base, "huge")
	runtime.ReadMemStats(&after)
	if errs.CodeOf(err) != errs.WriteLimitExceeded {
		t.Fatalf("4 GiB file: %v", err)
	}
	if took, alloc := time.Since(start), after.TotalAlloc-before.TotalAlloc; took > 10*time.Second || alloc > 64<<20 {
		t.Fatalf("refusing the 4 GiB file took %v and %d bytes", took, alloc)
	}
}

// openQueueRepo opens the repository dir as workdir "wd" (rw, repo ops)
// and the workspace checkout ws as workdir "ws" of one FS.
func openQueueRepo(t *testing.T, dir, ws string) (*Repo, *sfs.Workdir) {
	t.Helper()
	f := newWorkdirFS(t, "wd="+dir+":rw:repo", "ws="+ws+":rw")
	r, err := Open(f, "wd")
	if err != nil {
		t.Fatal(err)
	}
	w, err := f.Workdir("ws")
	if err != nil {
		t.Fatal(err)
	}
	return r, w
}
