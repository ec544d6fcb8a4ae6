package git

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/serverfs/serverfs/internal/errs"
)

// Conflict bundles are bounded: past the file/byte caps files are named
// without their text (artifact truncated), and only the newest
// maxConflictArtifacts bundles stay on disk.
func TestConflictBundleBounded(t *testing.T) {
	oldB, oldF, oldK := maxConflictBundleBytes, maxConflictBundleFiles, maxConflictArtifacts
	maxConflictBundleBytes, maxConflictBundleFiles, maxConflictArtifacts = 1<<20, 1, 3
	t.Cleanup(func() { maxConflictBundleBytes, maxConflictBundleFiles, maxConflictArtifacts = oldB, oldF, oldK })

	dir, base := queueRepo(t)
	ws := checkoutTo(t, dir, base)
	write(t, filepath.Join(dir, "a.txt"), "a1\nA2\na3\na4\na5\na6\na7\na8\n")
	write(t, filepath.Join(dir, "b.txt"), "b1\nB2\nb3\n")
	gitCLI(t, dir, "commit", "-qam", "branch side")
	r, w := openQueueRepo(t, dir, ws)
	ctx := context.Background()
	confDir := filepath.Join(dir, ".git/serverfs/queue/conflicts")
	for i := 0; i < 6; i++ {
		write(t, filepath.Join(ws, "a.txt"), fmt.Sprintf("a1\nX%d\na3\na4\na5\na6\na7\na8\n", i))
		write(t, filepath.Join(ws, "b.txt"), fmt.Sprintf("b1\nY%d\nb3\n", i))
		p, err := r.CommitWorkspace(ctx, w, base, "ws")
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.Submit(ctx, "main", p, MergeReplay, "")
		if errs.CodeOf(err) != errs.MergeConflict || res.Artifact == nil || len(res.Files) != 2 {
			t.Fatalf("submit %d: %+v %v", i, res, err)
		}
		if !res.Artifact.Truncated {
			t.Fatalf("submit %d: two conflicted files past a one-file cap, artifact not truncated: %+v", i, res.Artifact)
		}
		b, err := os.ReadFile(filepath.Join(confDir, res.Artifact.SHA256))
		if err != nil || len(b) != res.Artifact.Bytes {
			t.Fatalf("submit %d: bundle %d bytes, %v; answer says %d", i, len(b), err, res.Artifact.Bytes)
		}
		ents, _ := os.ReadDir(confDir)
		if len(ents) > maxConflictArtifacts {
			t.Fatalf("submit %d: %d bundles kept, cap %d", i, len(ents), maxConflictArtifacts)
		}
	}
}

// Conflict hunks travel in a JSON answer: a hunk of text that is not
// UTF-8 is shown without its text (reason not_utf8), and the 2 KiB cut
// never splits a character.
func TestConflictHunksSurviveJSON(t *testing.T) {
	dir, base := queueRepo(t)
	ws := checkoutTo(t, dir, base)
	long := strings.Repeat("é", 1500) // 3000 bytes, cut at 2048: inside a character
	write(t, filepath.Join(dir, "a.txt"), "a1\ncaf\xe9 branch\na3\n")
	write(t, filepath.Join(dir, "b.txt"), "b1\n"+long+"branch\nb3\n")
	gitCLI(t, dir, "add", "a.txt", "b.txt")
	gitCLI(t, dir, "commit", "-qm", "branch side")
	write(t, filepath.Join(ws, "a.txt"), "a1\ncaf\xe9 workspace\na3\n")
	write(t, filepath.Join(ws, "b.txt"), "b1\n"+long+"workspace\nb3\n")
	r, w := openQueueRepo(t, dir, ws)
	p, err := r.CommitWorkspace(context.Background(), w, base, "ws")
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Submit(context.Background(), "main", p, MergeReplay, "")
	if errs.CodeOf(err) != errs.MergeConflict || len(res.Hunks) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	for _, h := range res.Hunks {
		var back ConflictHunk
		j, _ := json.Marshal(h)
		if json.Unmarshal(j, &back) != nil || back != h {
			t.Errorf("%s: the hunk does not survive JSON: %q", h.File, j)
		}
		switch h.File {
		case "a.txt":
			if h.Reason != "not_utf8" || h.Ours != "" || h.Theirs != "" {
				t.Errorf("a.txt: %+v", h)
			}
		case "b.txt":
			if !h.Truncated || !strings.HasPrefix(long, h.Ours) || h.Ours == "" {
				t.Errorf("b.txt: truncated %v, ours of %d bytes", h.Truncated, len(h.Ours))
			}
		}
	}
}
