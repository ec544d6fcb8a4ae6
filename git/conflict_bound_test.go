package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	sfs "github.com/serverfs/serverfs/fs"
)

// Conflict bundles are bounded: past the file/byte caps files are named
// without their text (artifact truncated), and only the newest
// maxConflictArtifacts bundles stay on disk (issue 24 review).
func TestConflictBundleBounded(t *testing.T) {
	oldB, oldF, oldK := maxConflictBundleBytes, maxConflictBundleFiles, maxConflictArtifacts
	maxConflictBundleBytes, maxConflictBundleFiles, maxConflictArtifacts = 1<<20, 1, 3
	t.Cleanup(func() { maxConflictBundleBytes, maxConflictBundleFiles, maxConflictArtifacts = oldB, oldF, oldK })

	dir, base := queueRepo(t)
	ws := checkoutTo(t, dir, base)
	write(t, filepath.Join(dir, "a.txt"), "a1\nA2\na3\na4\na5\na6\na7\na8\n")
	write(t, filepath.Join(dir, "b.txt"), "b1\nB2\nb3\n")
	gitCLI(t, dir, "commit", "-qam", "branch side")
	f := newWorkdirFS(t, "wd="+dir+":rw:repo", "ws="+ws+":rw")
	r, err := Open(f, "wd")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := f.Workdir("ws")
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
		if sfs.CodeOf(err) != sfs.CodeMergeConflict || res.Artifact == nil || len(res.Files) != 2 {
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
