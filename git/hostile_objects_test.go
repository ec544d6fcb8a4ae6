package git

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/serverfs/serverfs/internal/errs"
)

// largeBlobMiB is the size of the blobs of TestLargeBlobsEveryTool: 128
// MiB, twice the RSS growth a call may show, so that one blob read whole
// fails it; SERVERFS_HOSTILE_BLOB_MIB sets another (300 for a deeper run).
func largeBlobMiB(t *testing.T) int64 {
	v := os.Getenv("SERVERFS_HOSTILE_BLOB_MIB")
	if v == "" {
		return 128
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 9 {
		t.Fatalf("SERVERFS_HOSTILE_BLOB_MIB=%q: want a number of MiB of at least 9", v)
	}
	return n
}

// largeBlobRepo is a repository whose HEAD~1 adds big.txt (blob b1 of
// size bytes) and HEAD changes it (b2, the same size), with b1 staged
// back and big.txt absent from the work tree; packed, after git gc
// (which stores one of them as a delta of the other), else both loose,
// as git add and git commit leave them.
func largeBlobRepo(t *testing.T, size int64, packed bool) (dir string, b1, b2 map[int64]byte, id2 string) {
	t.Helper()
	dir, _ = newCommitRepo(t)
	b1 = map[int64]byte{123: 'A', size - 1: '\n'}
	b2 = map[int64]byte{5 << 20: 'B', size - 1: '\n'}
	id1 := writeZeroBlob(t, dir, size, b1)
	id2 = writeZeroBlob(t, dir, size, b2)
	gitCLI(t, dir, "update-index", "--add", "--cacheinfo", "100644,"+id1+",big.txt")
	gitCLI(t, dir, "commit", "-qm", "add big.txt")
	gitCLI(t, dir, "update-index", "--cacheinfo", "100644,"+id2+",big.txt")
	gitCLI(t, dir, "commit", "-qm", "change big.txt")
	gitCLI(t, dir, "update-index", "--cacheinfo", "100644,"+id1+",big.txt")
	if packed {
		gitCLI(t, dir, "gc", "-q")
		if n := gitCLI(t, dir, "count-objects"); !strings.HasPrefix(n, "0 objects") {
			t.Fatalf("after git gc: %s", n)
		}
	}
	return dir, b1, b2, id2
}

// TestLargeBlobsEveryTool: two blobs of 128 MiB (SERVERFS_HOSTILE_BLOB_MIB),
// loose and packed, through every repository tool and view, each call in
// a fresh process (this test binary, re-executed) whose peak RSS (VmHWM)
// grows by less than 64 MiB: sizes come from object headers before any
// content is inflated, and what is read whole (a checkout, a merge's
// files) is streamed.
func TestLargeBlobsEveryTool(t *testing.T) {
	size := largeBlobMiB(t) << 20
	const mid = 90 << 20 // a file a submit adds: below the 100 MiB a commit stores
	type call struct {
		name string
		op   hostileOp
		// prepare, when set, changes the repository first (the calls
		// run in order).
		prepare func(dir string, b2 map[int64]byte) string
		check   func(out hostileOut) string
	}
	code := func(want errs.Code) func(hostileOut) string {
		return func(out hostileOut) string {
			if out.Code != string(want) {
				return fmt.Sprintf("code %q (%s), want %q", out.Code, out.Err, want)
			}
			return ""
		}
	}
	ok := func(what func(res json.RawMessage) bool) func(hostileOut) string {
		return func(out hostileOut) string {
			if out.Err != "" || !what(out.Result) {
				return fmt.Sprintf("%s %s", out.Err, out.Result)
			}
			return ""
		}
	}
	tooLarge := func(res json.RawMessage) bool {
		var d DiffResult
		return json.Unmarshal(res, &d) == nil && len(d.Files) == 1 && d.Files[0].Change == "too_large"
	}
	calls := []call{
		{name: "inspect_repo status", op: hostileOp{Op: "status"}, check: ok(func(res json.RawMessage) bool {
			var st Status
			return json.Unmarshal(res, &st) == nil && len(st.Entries) == 1 && st.Entries[0].Path == "big.txt"
		})},
		{name: "inspect_repo diff big.txt", op: hostileOp{Op: "diff", Paths: []string{"big.txt"}}, check: ok(tooLarge)},
		{name: "inspect_repo staged_diff big.txt", op: hostileOp{Op: "staged_diff", Paths: []string{"big.txt"}}, check: ok(tooLarge)},
		{name: "read_repo_history log -- big.txt", op: hostileOp{Op: "log", Paths: []string{"big.txt"}}, check: ok(func(res json.RawMessage) bool {
			var l LogResult
			return json.Unmarshal(res, &l) == nil && len(l.Commits) == 2
		})},
		{name: "read_repo_history log <blob id>", op: hostileOp{Op: "log", Rev: "id2"}, check: code(errs.InvalidArgument)},
		{name: "read_repo_history show HEAD", op: hostileOp{Op: "show", Rev: "HEAD"}, check: ok(func(res json.RawMessage) bool {
			var s ShowResult
			return json.Unmarshal(res, &s) == nil && len(s.Files) == 1 && s.Files[0].TooLarge
		})},
		{name: "read_repo_history blame big.txt", op: hostileOp{Op: "blame", Paths: []string{"big.txt"}}, check: code(errs.ReadLimitExceeded)},
		{name: "create_workspace (checkout HEAD)", op: hostileOp{Op: "checkout", Rev: "HEAD"}, check: ok(func(res json.RawMessage) bool {
			var c CheckoutResult
			return json.Unmarshal(res, &c) == nil && c.Bytes == size+2 && c.Files == 2
		})},
		{name: "submit_workspace (big.txt kept, 90 MiB added)", op: hostileOp{Op: "submit"},
			prepare: func(dir string, b2 map[int64]byte) string {
				// The live tree clean at HEAD, so that the merge brings it
				// forward (writing the new file); the workspace a checkout
				// of HEAD with a.txt changed and mid.bin added.
				gitCLI(t, dir, "reset", "-q")
				sparseFile(t, filepath.Join(dir, "big.txt"), size, b2)
				gitCLI(t, dir, "update-index", "-q", "--refresh")
				ws := t.TempDir()
				write(t, filepath.Join(ws, "a.txt"), "a, changed in the workspace\n")
				sparseFile(t, filepath.Join(ws, "big.txt"), size, b2)
				sparseFile(t, filepath.Join(ws, "mid.bin"), mid, map[int64]byte{7: 'm', mid - 1: '\n'})
				return ws
			},
			check: ok(func(res json.RawMessage) bool {
				var m MergeResult
				return json.Unmarshal(res, &m) == nil && m.Status == "merged" && m.Checkout == "updated"
			})},
		{name: "commit_repo_changes big.txt (deleted)", op: hostileOp{Op: "commit", Paths: []string{"big.txt"}},
			prepare: func(dir string, _ map[int64]byte) string {
				os.Remove(filepath.Join(dir, "big.txt"))
				return ""
			},
			check: ok(func(res json.RawMessage) bool { return true })},
	}
	growth := make([][2]string, len(calls))
	for col, layout := range []string{"loose", "packed"} {
		dir, _, b2, id2 := largeBlobRepo(t, size, layout == "packed")
		for i, c := range calls {
			op := c.op
			op.Dir = dir
			if op.Rev == "id2" {
				op.Rev = id2
			}
			if c.prepare != nil {
				op.Workspace = c.prepare(dir, b2)
			}
			if op.Op == "submit" {
				op.Rev = headOf(t, dir) // the workspace's base
			}
			out := runHostile(t, op)
			g := out.AfterKiB - out.BeforeKiB
			growth[i][col] = fmt.Sprintf("%.1f MiB", float64(g)/1024)
			if g > maxHostileGrowthKiB {
				t.Errorf("%s, %s: RSS grew by %d MiB (more than %d)", c.name, layout, g>>10, maxHostileGrowthKiB>>10)
			}
			if msg := c.check(out); msg != "" {
				t.Errorf("%s, %s: %s", c.name, layout, msg)
			}
		}
		// What the submit merged, and brought into the work tree, is git's.
		if got, want := strings.TrimSpace(gitCLI(t, dir, "rev-parse", "HEAD~1:mid.bin")), strings.TrimSpace(gitCLI(t, dir, "hash-object", "mid.bin")); got != want {
			t.Errorf("%s: mid.bin in the work tree is %s, not the merged blob %s", layout, want, got)
		}
	}
	var tab strings.Builder
	fmt.Fprintf(&tab, "peak RSS growth per call, two %d MiB blobs:\n%-48s %8s %8s\n", size>>20, "call", "loose", "packed")
	for i, c := range calls {
		fmt.Fprintf(&tab, "%-48s %8s %8s\n", c.name, growth[i][0], growth[i][1])
	}
	t.Log(tab.String())
}
