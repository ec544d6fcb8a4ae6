package object

import (
	"bytes"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Trees is where DiffTrees reads trees: as raw bytes when they are in
// the form DecodeTree decodes (ok false otherwise), else decoded.
type Trees interface {
	RawTree(id plumbing.Hash) ([]byte, bool)
	Tree(id plumbing.Hash) (*object.Tree, error)
}

// Pathspec is a set of literal paths (files or directories); empty
// matches everything.
type Pathspec []string

// matches reports whether the file p is one of the paths or below one.
func (ps Pathspec) Matches(p string) bool {
	if len(ps) == 0 {
		return true
	}
	for _, x := range ps {
		if p == x || strings.HasPrefix(p, x) && p[len(x)] == '/' {
			return true
		}
	}
	return false
}

// enter reports whether the directory d can hold a match.
func (ps Pathspec) Enter(d string) bool {
	if len(ps) == 0 || d == "" {
		return true
	}
	for _, x := range ps {
		if d == x || strings.HasPrefix(x, d) && x[len(d)] == '/' || strings.HasPrefix(d, x) && d[len(x)] == '/' {
			return true
		}
	}
	return false
}

// Change is one leaf difference between two trees.
type Change struct {
	Path     string
	From, To object.TreeEntry // zero Hash: absent
}

// Status is the change as git log --name-status letters it.
func (c Change) Status() string {
	switch {
	case c.From.Hash.IsZero():
		return "A"
	case c.To.Hash.IsZero():
		return "D"
	case Kind(c.From.Mode) != Kind(c.To.Mode):
		return "T"
	}
	return "M"
}

func entryKey(e *object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

// Kind groups modes the way git's type changes do.
func Kind(m filemode.FileMode) int {
	switch m {
	case filemode.Symlink:
		return 1
	case filemode.Submodule:
		return 2
	default:
		return 0
	}
}

// DiffTrees calls fn for every file (blob or gitlink) that differs
// between trees a and b (zero: empty) below base, restricted to ps, in
// git's order; fn returns false to stop early.
func DiffTrees(src Trees, a, b plumbing.Hash, base string, ps Pathspec, fn func(Change) bool) (bool, error) {
	if a == b {
		return true, nil
	}
	if ra, ok := src.RawTree(a); ok {
		if rb, ok := src.RawTree(b); ok {
			return diffRaw(src, ra, rb, base, ps, fn)
		}
	}
	ta, err := src.Tree(a)
	if err != nil {
		return false, err
	}
	tb, err := src.Tree(b)
	if err != nil {
		return false, err
	}
	ea, eb := ta.Entries, tb.Entries
	i, j := 0, 0
	for i < len(ea) || j < len(eb) {
		var x, y *object.TreeEntry
		switch {
		case i >= len(ea):
			y = &eb[j]
			j++
		case j >= len(eb):
			x = &ea[i]
			i++
		default:
			ka, kb := entryKey(&ea[i]), entryKey(&eb[j])
			switch {
			case ka < kb:
				x = &ea[i]
				i++
			case ka > kb:
				y = &eb[j]
				j++
			default:
				x, y = &ea[i], &eb[j]
				i, j = i+1, j+1
			}
		}
		if x != nil && y != nil && x.Hash == y.Hash && x.Mode == y.Mode {
			continue
		}
		e := x
		if e == nil {
			e = y
		}
		p := e.Name
		if base != "" {
			p = base + "/" + e.Name
		}
		if e.Mode == filemode.Dir {
			if !ps.Enter(p) {
				continue
			}
			var ha, hb plumbing.Hash
			if x != nil {
				ha = x.Hash
			}
			if y != nil {
				hb = y.Hash
			}
			if ok, err := DiffTrees(src, ha, hb, p, ps, fn); !ok || err != nil {
				return ok, err
			}
			continue
		}
		if !ps.Matches(p) {
			continue
		}
		c := Change{Path: p}
		if x != nil {
			c.From = *x
		}
		if y != nil {
			c.To = *y
		}
		if !fn(c) {
			return false, nil
		}
	}
	return true, nil
}

// Decodable reports whether DecodeTree decodes d (and does not leave
// it to go-git's decoder).
func Decodable(d []byte) bool {
	for len(d) > 0 {
		sp := bytes.IndexByte(d, ' ')
		if sp < 0 {
			return false
		}
		if _, err := TreeMode(d[:sp]); err != nil {
			return false
		}
		d = d[sp+1:]
		nul := bytes.IndexByte(d, 0)
		if nul <= 0 || len(d)-nul-1 < 20 {
			return false
		}
		d = d[nul+21:]
	}
	return true
}

// rawEnt is one entry of a raw tree, its mode canonical as DecodeTree's.
type rawEnt struct {
	name []byte
	mode filemode.FileMode
	hash plumbing.Hash
}

// nextRaw reads the next entry of a raw tree in DecodeTree's form.
func nextRaw(d *[]byte, e *rawEnt) bool {
	b := *d
	if len(b) == 0 {
		return false
	}
	sp := bytes.IndexByte(b, ' ')
	m, _ := TreeMode(b[:sp])
	b = b[sp+1:]
	nul := bytes.IndexByte(b, 0)
	e.name, e.mode = b[:nul], CanonicalMode(m)
	copy(e.hash[:], b[nul+1:nul+21])
	*d = b[nul+21:]
	return true
}

// cmpRaw orders entries as DiffTrees does (entryKey: a directory's name
// compares as if it ended in "/").
func cmpRaw(a, b *rawEnt) int {
	n := min(len(a.name), len(b.name))
	if c := bytes.Compare(a.name[:n], b.name[:n]); c != 0 {
		return c
	}
	key := func(e *rawEnt, i int) (byte, bool) {
		switch {
		case i < len(e.name):
			return e.name[i], true
		case i == len(e.name) && e.mode == filemode.Dir:
			return '/', true
		}
		return 0, false
	}
	for i := n; ; i++ {
		ca, oka := key(a, i)
		cb, okb := key(b, i)
		switch {
		case !oka && !okb:
			return 0
		case !oka || oka && okb && ca < cb:
			return -1
		case !okb || ca > cb:
			return 1
		}
	}
}

// diffRaw is DiffTrees over two raw trees in DecodeTree's form: the same
// changes in the same order, without decoding either tree.
func diffRaw(src Trees, da, db []byte, base string, ps Pathspec, fn func(Change) bool) (bool, error) {
	var ea, eb rawEnt
	okA, okB := false, false // ea, eb hold the next entries
	for {
		if !okA && !okB {
			// Byte for byte the same next entries pair and are equal:
			// skipped unread (most of two versions of a directory).
			for len(da) > 0 && len(db) > 0 {
				n := bytes.IndexByte(da, 0) + 21
				if len(db) < n || !bytes.Equal(da[:n], db[:n]) {
					break
				}
				da, db = da[n:], db[n:]
			}
		}
		if !okA {
			okA = nextRaw(&da, &ea)
		}
		if !okB {
			okB = nextRaw(&db, &eb)
		}
		if !okA && !okB {
			break
		}
		var x, y *rawEnt
		switch c := 0; {
		case !okA:
			y = &eb
		case !okB:
			x = &ea
		default:
			if c = cmpRaw(&ea, &eb); c <= 0 {
				x = &ea
			}
			if c >= 0 {
				y = &eb
			}
		}
		same := x != nil && y != nil && x.hash == y.hash && x.mode == y.mode
		e := x
		if e == nil {
			e = y
		}
		var p string
		var from, to object.TreeEntry
		isDir := e.mode == filemode.Dir
		if !same {
			if base != "" {
				p = base + "/" + string(e.name)
			} else {
				p = string(e.name)
			}
			name := p[len(p)-len(e.name):]
			if x != nil {
				from = object.TreeEntry{Name: name, Mode: x.mode, Hash: x.hash}
			}
			if y != nil {
				if x != nil && !bytes.Equal(x.name, y.name) {
					name = string(y.name)
				}
				to = object.TreeEntry{Name: name, Mode: y.mode, Hash: y.hash}
			}
		}
		okA, okB = okA && x == nil, okB && y == nil // consumed
		switch {
		case same:
		case isDir:
			if !ps.Enter(p) {
				continue
			}
			if ok, err := DiffTrees(src, from.Hash, to.Hash, p, ps, fn); !ok || err != nil {
				return ok, err
			}
		case !ps.Matches(p):
		default:
			if !fn(Change{Path: p, From: from, To: to}) {
				return false, nil
			}
		}
	}
	return true, nil
}
