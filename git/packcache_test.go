package git

import (
	"path/filepath"
	"testing"
)

// TestPackIndexCache: a second request reads no pack index again; a
// repack (a new pack, the old one removed) is read anew, and log still
// equals git's over the new pack; the cache keeps to its byte budget,
// dropping the least recently used.
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
		if d := diffLogs(want, logAll(t, r, LogOptions{Limit: 100})); d != "" {
			t.Fatal(d)
		}
	}
	before := indexReads.Load()
	logOnce()
	logOnce()
	if n := indexReads.Load() - before; n != 1 {
		t.Fatalf("two logs read %d pack indexes, want 1", n)
	}
	orcGit(t, dir, "-c", "user.name=L", "-c", "user.email=l@example.com", "commit", "-q", "--allow-empty", "-m", "after the cache")
	orcGit(t, dir, "repack", "-adfq")
	logOnce()
	if n := indexReads.Load() - before; n != 2 {
		t.Fatalf("after a repack: %d pack indexes read, want 2", n)
	}

	c := &indexCache{max: 3000}
	idx := func(n int) *rawIndex { return &rawIndex{b: make([]byte, n)} }
	c.put(indexKey{ino: 1}, idx(1000))
	c.put(indexKey{ino: 2}, idx(1000))
	c.get(indexKey{ino: 1})
	c.put(indexKey{ino: 3}, idx(1000))
	c.put(indexKey{ino: 4}, idx(1000)) // drops 2, the least recently used
	c.put(indexKey{ino: 5}, idx(2000)) // above half the budget: not kept
	if c.bytes > c.max || c.get(indexKey{ino: 2}) != nil || c.get(indexKey{ino: 1}) == nil || c.get(indexKey{ino: 4}) == nil || c.get(indexKey{ino: 5}) != nil {
		t.Fatalf("cache holds %d bytes: %v", c.bytes, c.m)
	}
}
