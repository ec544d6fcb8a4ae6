package git

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/serverfs/serverfs/git/internal/odb"
	"github.com/serverfs/serverfs/git/internal/pack"
	"github.com/serverfs/serverfs/internal/errs"
)

// deltaRepo is a repository whose big.txt (about 9 MiB of lines, more
// than a delta base held in memory) changes over four commits, one of
// them moving its second half first (copies going back in the base),
// beside small files; packed by git with deltas (refDelta: REF_DELTA
// entries instead of OFS_DELTA).
func deltaRepo(t *testing.T, refDelta bool) string {
	t.Helper()
	dir, _ := newCommitRepo(t)
	var b strings.Builder
	for i := range 160_000 {
		fmt.Fprintf(&b, "line %06d of a file that changes a little in each commit\n", i)
	}
	text := b.String()
	for round := range 5 {
		switch round {
		case 4:
			half := strings.Index(text[len(text)/2:], "\n") + len(text)/2 + 1
			text = text[half:] + text[:half]
		default:
			text = strings.Replace(text, fmt.Sprintf("line %06d ", 1000+round*37_777), "a changed line ", 1)
		}
		write(t, filepath.Join(dir, "big.txt"), text)
		write(t, filepath.Join(dir, fmt.Sprintf("small%d.txt", round)), strings.Repeat(fmt.Sprintf("small %d\n", round), 50))
		gitCLI(t, dir, "add", "-A")
		gitCLI(t, dir, "commit", "-qm", fmt.Sprint(round))
	}
	gitCLI(t, dir, "-c", fmt.Sprintf("repack.useDeltaBaseOffset=%v", !refDelta), "repack", "-adfq", "--depth=10", "--window=10")
	if v := gitCLI(t, dir, "verify-pack", "-v", mustGlob(t, filepath.Join(dir, ".git/objects/pack/*.pack"))); !strings.Contains(v, "chain length = 2") {
		t.Fatalf("git stored no delta chain of 2:\n%s", v)
	}
	return dir
}

func mustGlob(t *testing.T, pattern string) string {
	t.Helper()
	m, _ := filepath.Glob(pattern)
	if len(m) != 1 {
		t.Fatalf("%s: %v", pattern, m)
	}
	return m[0]
}

// TestOpenBlobMatchesGit: every blob of packs holding delta chains (OFS
// and REF, bases over what is held in memory, copies going back), read
// through openBlob as a stream, and inside a history request (small ones
// from its pack reader), is the content git stores (its id hashes back),
// of the size git says.
func TestOpenBlobMatchesGit(t *testing.T) {
	for _, ref := range []bool{false, true} {
		t.Run(fmt.Sprintf("refDelta=%v", ref), func(t *testing.T) {
			dir := deltaRepo(t, ref)
			r, _ := openRW(t, dir)
			check := func(id plumbing.Hash, want int64) {
				t.Helper()
				b, err := r.openBlob(id, math.MaxInt64)
				if err != nil {
					t.Fatalf("%s: %v", id, err)
				}
				defer b.Close()
				h := plumbing.NewHasher(plumbing.BlobObject, b.size)
				n, err := io.Copy(h, b)
				if err != nil || n != want || b.size != want || h.Sum() != id {
					t.Errorf("%s: %d bytes (header %d, git %d), hash %s, %v", id, n, b.size, want, h.Sum(), err)
				}
			}
			blobs := 0
			for _, l := range strings.Split(strings.TrimSpace(gitCLI(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objecttype) %(objectname) %(objectsize)")), "\n") {
				var typ, id string
				var size int64
				fmt.Sscan(l, &typ, &id, &size)
				if typ != "blob" {
					continue
				}
				blobs++
				check(plumbing.NewHash(id), size)
				if size <= pack.MaxObject {
					done := r.packScope()
					check(plumbing.NewHash(id), size)
					done()
				}
			}
			if blobs < 8 {
				t.Fatalf("%d blobs", blobs)
			}
		})
	}
}

// TestOpenBlobRefusesFromHeader: a blob over the caller's cap, loose, or
// packed as a delta whose data is all inserted bytes (as large as the
// blob), is refused from its header: almost nothing is inflated (the
// loose header's bytes, a delta's two sizes).
func TestOpenBlobRefusesFromHeader(t *testing.T) {
	dir, _ := newCommitRepo(t)
	loose := writeZeroBlob(t, dir, 64<<20, map[int64]byte{5: 'x'})
	delta, size := writeDeltaPack(t, dir, 32)
	r, _ := openRW(t, dir)
	for _, c := range []struct {
		id   string
		size int64
	}{{loose, 64 << 20}, {delta, size}} {
		before := odb.InflatedBytes()
		_, err := r.readBlob(plumbing.NewHash(c.id), maxDiffFileBytes)
		got, ok := tooLargeSize(err)
		if n := odb.InflatedBytes() - before; !ok || got != c.size || n > 1<<10 {
			t.Errorf("%s: %v (size %d, want %d), %d bytes inflated", c.id, err, got, c.size, n)
		}
		// Under the cap, the hostile delta streams: its content is git's.
		b, err := r.openBlob(plumbing.NewHash(c.id), math.MaxInt64)
		if err != nil {
			t.Fatal(err)
		}
		h := plumbing.NewHasher(plumbing.BlobObject, b.size)
		if n, err := io.Copy(h, b); err != nil || n != c.size || h.Sum().String() != c.id {
			t.Errorf("%s streamed: %d bytes, %v, hash %s", c.id, n, err, h.Sum())
		}
		b.Close()
	}
}

// TestLargeTreeRefusedFromHeader: a tree of 20 MiB (over what ServerFS
// reads of a tree) is refused from its header wherever it is read
// (status, log, show, checkout): REPO_UNSUPPORTED, and go-git never
// reads its content (the test storer would panic past 16 MiB).
func TestLargeTreeRefusedFromHeader(t *testing.T) {
	dir, _ := newCommitRepo(t)
	tree := writeZeroObject(t, dir, "tree", 20<<20, nil)
	commit := strings.TrimSpace(gitCLI(t, dir, "commit-tree", "-m", "a huge tree", "-p", "HEAD", tree))
	gitCLI(t, dir, "update-ref", "refs/heads/main", commit)
	for _, op := range []string{"status", "log", "show", "checkout"} {
		_, err := runRepoKindOp(t, dir, op)
		if errs.CodeOf(err) != errs.RepoUnsupported || !strings.Contains(err.Error(), "more than ServerFS reads") {
			t.Errorf("%s: %v, want REPO_UNSUPPORTED from the tree's size", op, err)
		}
	}
	// git fsck at the end of the test: the huge tree is not a tree.
	gitCLI(t, dir, "update-ref", "refs/heads/main", commit+"~1")
	os.Remove(objectFile(t, dir, tree))
	os.Remove(objectFile(t, dir, commit))
}

// TestStrictStorerCatchesBlobReads: the storer of these tests fails a
// blob read through go-git's storage (what every Repo here reads
// through), so a code path that bypasses openBlob fails its test.
func TestStrictStorerCatchesBlobReads(t *testing.T) {
	dir, r := newCommitRepo(t)
	id := plumbing.NewHash(strings.TrimSpace(gitCLI(t, dir, "rev-parse", "HEAD:a.txt")))
	for name, read := range map[string]func(){
		"GetBlob":   func() { object.GetBlob(r.storage, id) },
		"AnyObject": func() { r.storage.EncodedObject(plumbing.AnyObject, id) },
	} {
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "openBlob") {
					t.Errorf("%s: %v, want the storer's panic", name, p)
				}
			}()
			read()
		}()
	}
	// And what goes through openBlob is fine.
	if _, err := r.Show(context.Background(), "HEAD", nil, 0); err != nil {
		t.Fatal(err)
	}
}
