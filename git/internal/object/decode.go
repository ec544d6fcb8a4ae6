package object

import (
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// DecodeCommit decodes a commit of the plain form (tree, parents, author,
// committer, a blank line, the message) as go-git's decoder would, with
// its signatures parsed as go-git's Signature.Decode parses them
// (DecodeSignature); any other form (more headers: encoding,
// gpgsig, mergetag, ...) answers nil and go-git's decoder reads it. The
// commit has no storer: only its fields are for use.
func DecodeCommit(id plumbing.Hash, d []byte, zones *Zones) *object.Commit {
	str := string(d)
	line := func(key string) (string, bool) {
		if !strings.HasPrefix(str, key+" ") {
			return "", false
		}
		v, rest, ok := strings.Cut(str[len(key)+1:], "\n")
		if !ok {
			return "", false
		}
		str = rest
		return v, true
	}
	tree, ok := line("tree")
	if !ok {
		return nil
	}
	c := &object.Commit{Hash: id, Encoding: "UTF-8"}
	if c.TreeHash, ok = ParseID(tree); !ok {
		return nil
	}
	for strings.HasPrefix(str, "parent ") {
		p, ok := line("parent")
		if !ok {
			return nil
		}
		ph, ok := ParseID(p)
		if !ok {
			return nil
		}
		c.ParentHashes = append(c.ParentHashes, ph)
	}
	author, ok := line("author")
	if !ok {
		return nil
	}
	committer, ok := line("committer")
	if !ok || !strings.HasPrefix(str, "\n") {
		return nil
	}
	c.Author = DecodeSignature(author, zones)
	c.Committer = DecodeSignature(committer, zones)
	c.Message = str[1:]
	return c
}

// ParseID is plumbing.NewHash(s) where plumbing.IsHash(s) (40 hex digits
// of either case), without their allocations.
func ParseID(s string) (plumbing.Hash, bool) {
	var h plumbing.Hash
	if len(s) != 40 {
		return h, false
	}
	for i := range h {
		hi, ok1 := unhex(s[2*i])
		lo, ok2 := unhex(s[2*i+1])
		if !ok1 || !ok2 {
			return plumbing.Hash{}, false
		}
		h[i] = hi<<4 | lo
	}
	return h, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// DecodeSignature is go-git's Signature.Decode (the same fields for every
// input, its quirks included: "-0030" is +00:30) on a string, the name
// and email sharing the commit's string, and each time zone offset made
// once per request (zones) instead of once per signature.
func DecodeSignature(b string, zones *Zones) object.Signature {
	var s object.Signature
	open, close := strings.LastIndexByte(b, '<'), strings.LastIndexByte(b, '>')
	if open == -1 || close == -1 || close < open {
		return s
	}
	s.Name = strings.Trim(b[:open], " ")
	s.Email = b[open+1 : close]
	if close+2 >= len(b) {
		return s
	}
	b = b[close+2:]
	space := strings.IndexByte(b, ' ')
	if space == -1 {
		space = len(b)
	}
	ts, err := strconv.ParseInt(b[:space], 10, 64)
	if err != nil {
		return s
	}
	s.When = time.Unix(ts, 0).In(time.UTC)
	tzStart := space + 1
	if tzStart >= len(b) || tzStart+5 > len(b) {
		return s
	}
	tz := b[tzStart : tzStart+5]
	hours, err1 := strconv.ParseInt(tz[0:3], 10, 64)
	mins, err2 := strconv.ParseInt(tz[3:], 10, 64)
	if err1 != nil || err2 != nil {
		return s
	}
	if hours < 0 {
		mins *= -1
	}
	s.When = s.When.In(zones.get(int(hours*60*60 + mins*60)))
	return s
}

// Zones holds the fixed time zones of one request by offset, at most
// maxZones of them (more are made each time).
type Zones map[int]*time.Location

const maxZones = 1024

func (z *Zones) get(off int) *time.Location {
	if loc, ok := (*z)[off]; ok {
		return loc
	}
	loc := time.FixedZone("", off)
	if *z == nil {
		*z = Zones{}
	}
	if len(*z) < maxZones {
		(*z)[off] = loc
	}
	return loc
}

// DecodeTree decodes a well-formed tree as go-git's decoder would (modes
// canonicalized, names sharing one string), or answers nil and go-git's
// decoder reads it (and refuses what is malformed). The tree has no
// storer: only its Hash and Entries are for use.
func DecodeTree(id plumbing.Hash, d []byte) *object.Tree {
	str := string(d)
	n := strings.Count(str, "\x00")
	t := &object.Tree{Hash: id, Entries: make([]object.TreeEntry, 0, n)}
	for i := 0; i < len(str); {
		sp := strings.IndexByte(str[i:], ' ')
		if sp < 0 {
			return nil
		}
		m, err := TreeMode(str[i : i+sp])
		if err != nil {
			return nil
		}
		i += sp + 1
		nul := strings.IndexByte(str[i:], 0)
		if nul <= 0 || len(str)-i-nul-1 < 20 {
			return nil
		}
		e := object.TreeEntry{Name: str[i : i+nul], Mode: CanonicalMode(m)}
		i += nul + 1
		copy(e.Hash[:], str[i:i+20])
		i += 20
		t.Entries = append(t.Entries, e)
	}
	return t
}

// TreeMode is filemode.New(string(s)), without its octal parse for the
// modes git writes (and, for a []byte, without a conversion).
func TreeMode[T string | []byte](s T) (filemode.FileMode, error) {
	switch string(s) {
	case "100644":
		return filemode.Regular, nil
	case "40000":
		return filemode.Dir, nil
	case "100755":
		return filemode.Executable, nil
	case "120000":
		return filemode.Symlink, nil
	case "160000":
		return filemode.Submodule, nil
	}
	return filemode.New(string(s))
}

// CanonicalMode is a tree entry's mode as go-git's tree decoder (and git's
// tree walk) reads it: 100664 is 100644, and so on.
func CanonicalMode(m filemode.FileMode) filemode.FileMode {
	switch m & 0o170000 {
	case 0o040000:
		return filemode.Dir
	case 0o100000:
		if m&0o111 != 0 {
			return filemode.Executable
		}
		return filemode.Regular
	case 0o120000:
		return filemode.Symlink
	}
	return filemode.Submodule
}

// Cache keeps the objects one request decoded, dropped whole when
// the cost they hold passes max, so memory stays bounded whatever the
// history's size.
type Cache[V any] struct {
	m         map[plumbing.Hash]V
	cost, max int
}

func NewCache[V any](max int) Cache[V] {
	return Cache[V]{m: map[plumbing.Hash]V{}, max: max}
}

// Put keeps v for id at the given cost.
func (c *Cache[V]) Put(id plumbing.Hash, v V, cost int) {
	if c.cost += cost; c.cost > c.max {
		clear(c.m)
		c.cost = cost
	}
	c.m[id] = v
}

// Get is the object kept for id.
func (c *Cache[V]) Get(id plumbing.Hash) (V, bool) {
	v, ok := c.m[id]
	return v, ok
}
