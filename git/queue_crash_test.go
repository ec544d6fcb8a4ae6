package git

import (
	"bufio"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/serverfs/serverfs/internal/errs"
)

const queueChildEnv = "SERVERFS_QUEUE_CHILD"

// queueCrashKills is how many times TestMergeQueueKill kills the child.
const queueCrashKills = 50

// TestMergeQueueKill: a child process (this test binary again) merges
// workspaces into main as fast as it can and is killed with SIGKILL at a
// random moment, 50 times. After every kill: main is a whole commit id,
// one of the heads the ledger names (old or new, never between); git fsck
// --strict passes; the ledger is readable; our status of the live
// checkout agrees with git's; and the queue resumes: recovery settles the
// open item, and the merged events chain from the base to the branch.
func TestMergeQueueKill(t *testing.T) {
	if dir := os.Getenv(queueChildEnv); dir != "" {
		queueChild(t, dir)
		return
	}
	dir, _ := queueRepo(t)
	for i := range 8 {
		write(t, filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), strings.Repeat(fmt.Sprintf("line %d\n", i), 12))
	}
	gitCLI(t, dir, "add", "-A")
	gitCLI(t, dir, "commit", "-qm", "files")
	base := strings.TrimSpace(gitCLI(t, dir, "rev-parse", "HEAD"))
	ws := filepath.Join(t.TempDir(), "ws")
	os.MkdirAll(ws, 0o755)

	seed := time.Now().UnixNano()
	if s := os.Getenv("SERVERFS_QUEUE_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (SERVERFS_QUEUE_SEED replays the kill points)", seed)
	rnd := rand.New(rand.NewSource(seed))
	var merges, openAtKill, resumed, staleIndexLocks, dirty, prunesCut int
	for kill := range queueCrashKills {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMergeQueueKill$", "-test.count=1")
		cmd.Env = append(os.Environ(), queueChildEnv+"="+dir+"|"+ws+"|"+strconv.FormatInt(seed+int64(kill), 10))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		rd := bufio.NewReader(out)
		// The child says when it starts merging; then a random moment.
		if line, err := rd.ReadString('\n'); err != nil || line != "merging\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child: %q %v", line, err)
		}
		// After one or two merges, a random moment within the next:
		// the kill lands anywhere in a merge, whatever this machine's
		// speed.
		last := time.Now()
		var took time.Duration
		for range 1 + rnd.Intn(2) {
			if line, err := rd.ReadString('\n'); err != nil || line != "merged\n" {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("child: %q %v", line, err)
			}
			took, last = time.Since(last), time.Now()
		}
		time.Sleep(time.Duration(rnd.Int63n(int64(took) + 1)))
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		// The ref is whole and names a commit the ledger knows.
		raw, err := os.ReadFile(filepath.Join(dir, ".git/refs/heads/main"))
		if err != nil || len(raw) != 41 || !plumbing.IsHash(string(raw[:40])) {
			t.Fatalf("kill %d: refs/heads/main is %q (%v)", kill, raw, err)
		}
		f := newWorkdirFS(t, "wd="+dir+":rw:repo")
		r, err := Open(f, "wd")
		if err != nil {
			t.Fatal(err)
		}
		events, _, err := r.ReadLedger("main")
		if err != nil {
			t.Fatalf("kill %d: ledger unreadable: %v", kill, err)
		}
		known := map[string]bool{base: true}
		for _, ev := range events {
			if ev.To != "" {
				known[ev.To] = true
			}
		}
		head := string(raw[:40])
		if !known[head] {
			t.Fatalf("kill %d: main is at %s, which no ledger event names", kill, head)
		}
		if out, err := gitOut(dir, "fsck", "--strict", "--no-progress", "--no-dangling"); err != nil || strings.TrimSpace(out) != "" {
			t.Fatalf("kill %d: git fsck --strict: %v\n%s", kill, err, out)
		}
		// Resume: recovery settles what was open, then the ledger
		// replays to the branch.
		rec, err := r.RecoverQueue(context.Background(), "main")
		if err != nil {
			t.Fatalf("kill %d: recovery: %v", kill, err)
		}
		openAtKill += len(rec)
		for _, ev := range rec {
			if strings.Contains(ev.Note, "checkout was brought forward") {
				resumed++
			}
		}
		if _, err := os.Stat(filepath.Join(dir, ".git/serverfs/queue/main.jsonl.prune")); err == nil {
			prunesCut++
		}
		checkLedgerTail(t, r, dir, "main", base)
		// A kill while the checkout was being brought forward leaves
		// git's index lock, as a killed git does; the operator's part.
		if _, err := os.Stat(filepath.Join(dir, ".git/index.lock")); err == nil {
			staleIndexLocks++
			os.Remove(filepath.Join(dir, ".git/index.lock"))
		}
		st, err := r.Status(context.Background(), 1000)
		if err != nil {
			t.Fatal(err)
		}
		checkStatusAgrees(t, r, dir, st)
		if len(st.Entries) > 0 {
			dirty++
			gitCLI(t, dir, "reset", "-q", "--hard")
			gitCLI(t, dir, "clean", "-qfd")
		}
		// The child prunes the ledger: git's line counts the merges.
		merges = len(strings.Fields(gitCLI(t, dir, "rev-list", "--first-parent", base+"..main")))
	}
	t.Logf("%d kills: %d merges, %d kills mid-prune of the ledger, %d items open at a kill (settled by recovery; %d checkouts brought forward by it), %d stale index locks, %d checkouts left behind the branch or mid-update (reset by the test, as an operator would)",
		queueCrashKills, merges, prunesCut, openAtKill, resumed, staleIndexLocks, dirty)
	if merges < queueCrashKills || openAtKill < queueCrashKills/10 {
		t.Fatalf("%d merges and %d kills mid-merge in %d runs: too few to test anything", merges, openAtKill, queueCrashKills)
	}
}

// queueChild merges forever: a workspace at the branch head (or an older
// commit, for replays) with one line of one file changed, submitted in
// replay mode.
func queueChild(t *testing.T, spec string) {
	parts := strings.Split(spec, "|")
	dir, ws := parts[0], parts[1]
	seed, _ := strconv.ParseInt(parts[2], 10, 64)
	rnd := rand.New(rand.NewSource(seed))
	// A small ledger bound: the kills land in prunes too.
	maxLedgerItems = 6
	f := newWorkdirFS(t, "wd="+dir+":rw:repo", "ws="+ws+":rw")
	r, err := Open(f, "wd")
	if err != nil {
		t.Fatal(err)
	}
	wsd, err := f.Workdir("ws")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fmt.Println("merging")
	var prev plumbing.Hash
	for i := 0; ; i++ {
		head, err := r.branchHead("main")
		if err != nil {
			t.Fatal(err)
		}
		base := head
		if !prev.IsZero() && rnd.Intn(2) == 0 {
			base = prev // behind: a replay onto the moved head
		}
		prev = head
		flat, _, err := r.flatTree(ctx, base)
		if err != nil {
			t.Fatal(err)
		}
		// The workspace root stays (the workdir holds it open); its
		// content is the base's.
		ents, _ := os.ReadDir(ws)
		for _, e := range ents {
			os.RemoveAll(filepath.Join(ws, e.Name()))
		}
		for p, e := range flat {
			size, _ := r.blobSize(e.hash)
			b, err := r.readBlob(e.hash, size)
			if err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Join(ws, filepath.Dir(p)), 0o755)
			os.WriteFile(filepath.Join(ws, p), b, 0o644)
		}
		name := filepath.Join(ws, fmt.Sprintf("f%d.txt", rnd.Intn(8)))
		b, _ := os.ReadFile(name)
		lines := strings.SplitAfter(string(b), "\n")
		lines[rnd.Intn(len(lines)-1)] = fmt.Sprintf("changed %d %d\n", seed, i)
		os.WriteFile(name, []byte(strings.Join(lines, "")), 0o644)
		p, err := r.CommitWorkspace(ctx, wsd, base.String(), fmt.Sprintf("change %d", i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Submit(ctx, "main", p, MergeReplay, ""); err != nil && errs.CodeOf(err) != errs.MergeConflict {
			t.Fatal(err)
		}
		fmt.Println("merged")
	}
}
