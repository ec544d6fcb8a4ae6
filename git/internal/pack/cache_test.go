package pack

import "testing"

// TestIndexCacheBudget: the pack index cache keeps to its byte budget,
// dropping the least recently used, and keeps no index above half of it.
func TestIndexCacheBudget(t *testing.T) {
	c := &indexCache{max: 3000}
	idx := func(n int) *Index { return &Index{b: make([]byte, n)} }
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
