package git

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	gitobject "github.com/serverfs/serverfs/git/internal/object"
	"github.com/serverfs/serverfs/git/internal/pack"
)

// TestPackIndexCache: a second request reads no pack index again; a
// repack (a new pack, the old one removed) is read anew, and log still
// equals git's over the new pack.
func TestPackIndexCache(t *testing.T) {
	orcNeedGit(t)
	orcSetHome(t)
	src, _ := historyRepo(t, 2, 60)
	dir := filepath.Join(t.TempDir(), "c")
	orcGit(t, filepath.Dir(dir), "clone", "-q", "--no-local", "file://"+src, "c")
	orcGit(t, dir, "repack", "-adq")
	fsys := newWorkdirFS(t, "wd="+dir)
	logOnce := func() {
		t.Helper()
		r, err := Open(fsys, "wd")
		if err != nil {
			t.Fatal(err)
		}
		want := gitLog(t, dir, "HEAD", "--")
		visibleOnly(r, want)
		if d := diffLogs(want, logAll(t, r, LogOptions{Files: true, Limit: 100})); d != "" {
			t.Fatal(d)
		}
	}
	before := pack.IndexReads()
	logOnce()
	logOnce()
	if n := pack.IndexReads() - before; n != 1 {
		t.Fatalf("two logs read %d pack indexes, want 1", n)
	}
	orcGit(t, dir, "-c", "user.name=L", "-c", "user.email=l@example.com", "commit", "-q", "--allow-empty", "-m", "after the cache")
	orcGit(t, dir, "repack", "-adfq")
	logOnce()
	if n := pack.IndexReads() - before; n != 2 {
		t.Fatalf("after a repack: %d pack indexes read, want 2", n)
	}
}

// TestDiffRawMatchesDecoded: diffRaw (raw trees from the packs) answers
// the changes, in the order, that diffTrees answers over decoded trees,
// for random trees of names that sort close (a, a.b, a-, ab, a as a
// directory) with nested directories, type changes and legacy modes.
func TestDiffRawMatchesDecoded(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	names := []string{"a", "a.b", "a-", "ab", "b", "a0", "é", "z"}
	modes := []string{"100644", "100755", "120000", "160000", "100664"}
	objs := map[plumbing.Hash]*pack.Object{}
	raw := pack.Preloaded(objs)
	decoded := &history{trees: gitobject.NewCache[*object.Tree](maxCachedTreeEntries)}
	withRaw := &history{trees: gitobject.NewCache[*object.Tree](maxCachedTreeEntries), pack: raw}
	n := 0
	var mk func(depth int) plumbing.Hash
	mk = func(depth int) plumbing.Hash {
		type ent struct {
			key, line string
		}
		var ents []ent
		seen := map[string]bool{}
		for range rng.Intn(6) {
			name := names[rng.Intn(len(names))]
			if seen[name] {
				continue
			}
			seen[name] = true
			var id plumbing.Hash
			if depth < 2 && rng.Intn(3) == 0 {
				id = mk(depth + 1)
				ents = append(ents, ent{name + "/", "40000 " + name + "\x00" + string(id[:])})
				continue
			}
			id[0], id[1] = byte(rng.Intn(3)), 1
			ents = append(ents, ent{name, modes[rng.Intn(len(modes))] + " " + name + "\x00" + string(id[:])})
		}
		sort.Slice(ents, func(i, j int) bool { return ents[i].key < ents[j].key })
		var b strings.Builder
		for _, e := range ents {
			b.WriteString(e.line)
		}
		n++
		var id plumbing.Hash
		id[0], id[1], id[2] = 0xee, byte(n), byte(n>>8)
		objs[id] = &pack.Object{Type: plumbing.TreeObject, Data: []byte(b.String())}
		decoded.trees.Put(id, gitobject.DecodeTree(id, []byte(b.String())), 1)
		return id
	}
	for range 400 {
		a, b := mk(0), mk(0)
		if rng.Intn(4) == 0 {
			a = plumbing.ZeroHash
		}
		for _, ps := range []pathspec{nil, {"a"}, {"a.b", "b/a"}} {
			var want, got []change
			if _, err := decoded.diffTrees(a, b, "", ps, func(c change) bool { want = append(want, c); return true }); err != nil {
				t.Fatal(err)
			}
			if _, err := withRaw.diffTrees(a, b, "", ps, func(c change) bool { got = append(got, c); return true }); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("paths %q:\nraw     %v\ndecoded %v", ps, got, want)
			}
		}
	}
}
