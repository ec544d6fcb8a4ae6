package git

import (
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/serverfs/serverfs/git/internal/indexfile"
	"github.com/serverfs/serverfs/git/internal/pathrule"
)

// The trees of a commit written from the index, and the index's cache
// tree that records them.

// cacheNode is one directory of the trees a commit writes: what git's
// cache tree (the index's TREE extension) records about it.
type cacheNode struct {
	name    string
	entries int // index entries below it
	hash    plumbing.Hash
	subs    []*cacheNode
}

// writeTrees writes the trees of the index entries (bottom up) and returns
// the root tree's id and the cache tree describing them.
func (r *Repo) writeTrees(entries map[string]*indexfile.Entry) (plumbing.Hash, *cacheNode, error) {
	type node struct {
		files map[string]treeEntry
		dirs  map[string]*node
	}
	newNode := func() *node { return &node{files: map[string]treeEntry{}, dirs: map[string]*node{}} }
	root := newNode()
	for p, e := range entries {
		if e.IntentToAdd {
			continue
		}
		// (A named path passed pathrule.Commit when staged; one the
		// commit leaves as it was must not carry .git in either.)
		if pathrule.DotGitComponent(p) {
			return plumbing.ZeroHash, nil, pathrule.Err(r.w.Alias(), p, &pathrule.RuleHasDotgit)
		}
		comps := strings.Split(p, "/")
		n := root
		for _, c := range comps[:len(comps)-1] {
			if n.dirs[c] == nil {
				n.dirs[c] = newNode()
			}
			n = n.dirs[c]
		}
		n.files[comps[len(comps)-1]] = treeEntry{hash: e.Hash, mode: e.Mode}
	}
	var write func(name string, n *node) (*cacheNode, error)
	write = func(name string, n *node) (*cacheNode, error) {
		cn := &cacheNode{name: name, entries: len(n.files)}
		t := &object.Tree{}
		for fname, f := range n.files {
			t.Entries = append(t.Entries, object.TreeEntry{Name: fname, Mode: f.mode, Hash: f.hash})
		}
		for dname, d := range n.dirs {
			sub, err := write(dname, d)
			if err != nil {
				return nil, err
			}
			if sub.entries > 0 {
				t.Entries = append(t.Entries, object.TreeEntry{Name: dname, Mode: filemode.Dir, Hash: sub.hash})
				cn.entries += sub.entries
				cn.subs = append(cn.subs, sub)
			}
		}
		if len(t.Entries) == 0 {
			cn.hash = emptyTree
			return cn, nil
		}
		// git's tree order: names compared as if directories ended in '/'.
		sort.Slice(t.Entries, func(i, j int) bool { return treeKey(t.Entries[i]) < treeKey(t.Entries[j]) })
		enc := &plumbing.MemoryObject{}
		if err := t.Encode(enc); err != nil {
			return nil, err
		}
		content, _ := io.ReadAll(mustReader(enc))
		h, err := r.writeObject(plumbing.TreeObject, content)
		cn.hash = h
		return cn, err
	}
	cn, err := write("", root)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	if cn.entries == 0 {
		// The empty tree: git does not need it stored, but a commit
		// pointing at it is easier on every reader if it exists.
		h, err := r.writeObject(plumbing.TreeObject, nil)
		return h, nil, err
	}
	return cn.hash, cn, nil
}

// encodeCacheTree is the TREE extension's data: each node as "name NUL
// entry-count SP subtree-count LF sha", children after their parent.
func encodeCacheTree(b []byte, n *cacheNode) []byte {
	b = append(b, n.name...)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(n.entries), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(n.subs)), 10)
	b = append(b, '\n')
	b = append(b, n.hash[:]...)
	sort.Slice(n.subs, func(i, j int) bool { return n.subs[i].name < n.subs[j].name })
	for _, s := range n.subs {
		b = encodeCacheTree(b, s)
	}
	return b
}

func treeKey(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}
