package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLedgerBounded: N+k submits leave at most maxLedgerItems items and
// maxLedgerBytes in the ledger, the oldest gone and the newest kept in
// order; an item still open (queued by another process, not settled) is
// never dropped; an event names at most maxLedgerFiles files; the pruned
// ledger still replays (CheckLedger) to the branch; a temporary a crash
// left mid-prune is replaced.
func TestLedgerBounded(t *testing.T) {
	oldI, oldB, oldF := maxLedgerItems, maxLedgerBytes, maxLedgerFiles
	maxLedgerItems, maxLedgerBytes, maxLedgerFiles = 8, 1<<20, 2
	t.Cleanup(func() { maxLedgerItems, maxLedgerBytes, maxLedgerFiles = oldI, oldB, oldF })

	dir, base := queueRepo(t)
	ws := checkoutTo(t, dir, base)
	r, w := openQueueRepo(t, dir, ws)
	ctx := context.Background()
	ledger := filepath.Join(dir, ".git/serverfs/queue/main.jsonl")
	submit := func(i int) string {
		t.Helper()
		head := headOf(t, dir)
		write(t, filepath.Join(ws, "a.txt"), fmt.Sprintf("a1\nchange %d\n", i))
		write(t, filepath.Join(ws, "b.txt"), fmt.Sprintf("b %d\n", i))
		write(t, filepath.Join(ws, "src/c.go"), fmt.Sprintf("package c // %d\n", i))
		p, err := r.CommitWorkspace(ctx, w, head, fmt.Sprintf("change %d", i))
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.Submit(ctx, "main", p, MergeStrict, "")
		if err != nil || res.Status != StatusMerged {
			t.Fatalf("submit %d: %+v %v", i, res, err)
		}
		return res.QueueID
	}
	var ids []string
	ids = append(ids, submit(0))
	// An item another process queued and never finished: open, so kept
	// however old (this process's worker already settled the ledger).
	const openID = "0pen0pen0pen0pen"
	if err := r.appendLedger("main", LedgerEvent{Event: "queued", QueueID: openID, Mode: MergeStrict}); err != nil {
		t.Fatal(err)
	}
	const extra = 7
	for i := 1; i < maxLedgerItems+extra; i++ {
		if i == 10 {
			// A temporary a crash left mid-prune: replaced.
			os.WriteFile(ledger+".prune", []byte("torn"), 0o644)
		}
		ids = append(ids, submit(i))
		events, torn, err := r.ReadLedger("main")
		if err != nil || torn != 0 {
			t.Fatalf("submit %d: ledger %v, %d torn", i, err, torn)
		}
		items := map[string]bool{}
		for _, ev := range events {
			items[ev.QueueID] = true
			if len(ev.Files) > maxLedgerFiles || ev.Files != nil && ev.FilesOmitted != 1 {
				t.Fatalf("event names %d files (%d omitted), cap %d of 3", len(ev.Files), ev.FilesOmitted, maxLedgerFiles)
			}
		}
		if len(items) > maxLedgerItems {
			t.Fatalf("submit %d: %d items in the ledger, cap %d", i, len(items), maxLedgerItems)
		}
		if !items[openID] || !items[ids[len(ids)-1]] {
			t.Fatalf("submit %d: the open item (%v) or the newest (%v) was dropped", i, items[openID], items[ids[len(ids)-1]])
		}
	}
	events, _, _ := r.ReadLedger("main")
	kept := map[string]bool{}
	for _, ev := range events {
		kept[ev.QueueID] = true
	}
	if kept[ids[0]] || kept[ids[1]] {
		t.Errorf("the oldest items are still in the ledger: %v", kept)
	}
	// The kept finished items are the newest, a suffix.
	for i := len(ids) - 1; i >= 0 && kept[ids[i]]; i-- {
		delete(kept, ids[i])
	}
	delete(kept, openID)
	if len(kept) != 0 {
		t.Errorf("kept items are not the newest: %v", kept)
	}
	if _, err := os.Stat(ledger + ".prune"); !os.IsNotExist(err) {
		t.Errorf("the prune temporary is left: %v", err)
	}
	if lc, err := r.CheckLedger(ctx, "main"); err != nil || lc.Outside != 0 || lc.Head != headOf(t, dir) {
		t.Errorf("CheckLedger of the pruned ledger: %+v %v", lc, err)
	}

	// The byte bound: a few items' worth.
	maxLedgerItems, maxLedgerBytes = 1000, 2048
	for i := 100; i < 112; i++ {
		submit(i)
		st, err := os.Stat(ledger)
		if err != nil || st.Size() > maxLedgerBytes {
			t.Fatalf("submit %d: ledger of %v bytes, cap %d", i, st.Size(), maxLedgerBytes)
		}
	}
}

// TestConflictArtifactsBytesBounded: the conflicts directory keeps the
// bundles within maxConflictArtifactsBytes in all (the newest first), and
// always the one the answer just named, even past the bound alone.
func TestConflictArtifactsBytesBounded(t *testing.T) {
	oldK, oldB := maxConflictArtifacts, maxConflictArtifactsBytes
	maxConflictArtifacts, maxConflictArtifactsBytes = 100, 600
	t.Cleanup(func() { maxConflictArtifacts, maxConflictArtifactsBytes = oldK, oldB })

	dir, base := queueRepo(t)
	ws := checkoutTo(t, dir, base)
	write(t, filepath.Join(dir, "a.txt"), "a1\nA2\na3\na4\na5\na6\na7\na8\n")
	gitCLI(t, dir, "commit", "-qam", "branch side")
	r, w := openQueueRepo(t, dir, ws)
	ctx := context.Background()
	confDir := filepath.Join(dir, ".git/serverfs/queue/conflicts")
	var names []string
	for i := 0; i < 8; i++ {
		pad := ""
		if i == 7 {
			pad = strings.Repeat("x", 700) // alone past the bound
		}
		write(t, filepath.Join(ws, "a.txt"), fmt.Sprintf("a1\nX%d%s\na3\na4\na5\na6\na7\na8\n", i, pad))
		p, err := r.CommitWorkspace(ctx, w, base, "ws")
		if err != nil {
			t.Fatal(err)
		}
		res, _ := r.Submit(ctx, "main", p, MergeReplay, "")
		if res == nil || res.Artifact == nil {
			t.Fatalf("submit %d: %+v", i, res)
		}
		names = append(names, res.Artifact.SHA256)
		// Distinct modification times, whatever the clock's grain.
		old := time.Now().Add(time.Duration(i-100) * time.Second)
		os.Chtimes(filepath.Join(confDir, res.Artifact.SHA256), old, old)
		ents, _ := os.ReadDir(confDir)
		var total int64
		have := map[string]bool{}
		for _, e := range ents {
			info, _ := e.Info()
			total += info.Size()
			have[e.Name()] = true
		}
		if !have[res.Artifact.SHA256] {
			t.Fatalf("submit %d: the bundle the answer names was removed", i)
		}
		if i < 7 && total > maxConflictArtifactsBytes {
			t.Fatalf("submit %d: %d bytes of bundles, cap %d", i, total, maxConflictArtifactsBytes)
		}
		if i == 7 && len(ents) != 1 {
			t.Fatalf("a bundle past the bound alone: %d bundles kept, want it alone", len(ents))
		}
		// What is kept is the newest bundles, oldest gone first.
		j := len(names)
		for j > 0 && have[names[j-1]] {
			j--
		}
		if len(names)-j != len(ents) {
			t.Fatalf("submit %d: %d bundles kept, not the newest %d", i, len(ents), len(names)-j)
		}
		if i == 6 && j == 0 {
			t.Fatalf("submit %d: %d bytes of bundles and none removed", i, total)
		}
	}
}
