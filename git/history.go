package git

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/serverfs/serverfs/git/internal/revision"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git/internal/commitgraph"
	gitobject "github.com/serverfs/serverfs/git/internal/object"
	"github.com/serverfs/serverfs/git/internal/pack"
	"github.com/serverfs/serverfs/internal/errs"
)

// History: log, show and blame, read in process from the object
// store with go-git's plumbing, never by running git. Every walk is bounded
// by a commit cap and by the search timeout; what was found by then is
// answered with truncated set.

// History limits.
const (
	// MaxLogCommits bounds the commits one log answer returns.
	MaxLogCommits = 100
	// DefaultLogCommits is log's default limit.
	DefaultLogCommits = 20
	// MaxHistoryPaths bounds the paths log and show are restricted to.
	MaxHistoryPaths = 20
	// MaxWalkCommits bounds the commits one request walks (log, blame).
	MaxWalkCommits = 100_000
	// maxLogFiles bounds the changed files log lists per commit.
	maxLogFiles = 50
	// maxBodyBytes bounds a commit body in log and show.
	maxBodyBytes = 4 << 10
)

// Person is an author or committer: name, email and date (RFC 3339, UTC).
type Person struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Date  string `json:"date"`
}

// ChangedFile is one path a commit changed against its (first) parent,
// with git's --name-status letter (renames are not detected: a rename is
// a D and an A, as with git --no-renames).
type ChangedFile struct {
	Status string `json:"status"` // A added, D deleted, M modified, T type changed
	Path   string `json:"path"`
}

// CommitInfo is one commit's metadata.
type CommitInfo struct {
	ID      string   `json:"id"`
	Parents []string `json:"parents,omitempty"`
	Author  Person   `json:"author"`
	// Committer is present only when it differs from Author.
	Committer *Person `json:"committer,omitempty"`
	// Subject is git's %s: the first paragraph of the message, its lines
	// joined by spaces; Body is the rest (%b), cut at maxBodyBytes.
	Subject       string `json:"subject"`
	Body          string `json:"body,omitempty"`
	BodyTruncated bool   `json:"body_truncated,omitempty"`
	// Shallow marks a commit at the boundary of a shallow clone: its
	// parents are not in the repository and git, like this, treats it as
	// a root commit.
	Shallow bool `json:"shallow,omitempty"`
}

// history is the state of one history request.
type history struct {
	r       *Repo
	alias   string
	shallow map[plumbing.Hash]bool
	grafts  map[plumbing.Hash]bool // commits .git/info/grafts names
	// commits and trees cache what the walk reads again (a parent is
	// read as a child's parent, then walked); each is dropped whole when
	// it holds more than its budget, so memory stays bounded whatever
	// the history's size.
	commits gitobject.Cache[*object.Commit]
	trees   gitobject.Cache[*object.Tree]
	// rawTrees are the trees the pack reader does not hold (loose, or
	// larger than it inflates), as bytes: a 200,000-entry tree costs its
	// 8 MB, where decoded it cost five times that.
	rawTrees gitobject.Cache[*pack.Object]
	// pack reads small objects from the packs (r.pack; nil: every object
	// is streamed).
	pack *pack.Reader
	// zones are the time zones of the signatures read.
	zones gitobject.Zones
	// graph is the repository's commit-graph when a log walks with it
	// (useGraph): commits it holds are walked without reading them.
	graph *commitgraph.Graph
	// bloom are the Bloom keys of each log path (nil: the filters are
	// not used).
	bloom [][]commitgraph.Key
	// graphParents is walkCommit's scratch.
	graphParents []uint32
	// lastWalked is walkCommit's last commit from the graph.
	lastWalked *object.Commit
	// entries are rawEntry's last answers, nextEntry the one to replace.
	entries   [8]entryMemo
	nextEntry int
}

// Cache budgets of one history request (within the 64 MiB admission
// budgets a heavy call at).
const (
	maxCachedCommitBytes  = 16 << 20
	maxCachedTreeEntries  = 256 << 10
	maxCachedRawTreeBytes = 2 * maxStructObjectBytes
)

// newHistory starts a history request, its packs open for its duration
// (packScope); done closes them.
func (r *Repo) newHistory() (h *history, done func(), err error) {
	done = r.packScope()
	defer func() {
		if err != nil {
			done()
		}
	}()
	h = &history{r: r, alias: r.w.Alias(), commits: gitobject.NewCache[*object.Commit](maxCachedCommitBytes), trees: gitobject.NewCache[*object.Tree](maxCachedTreeEntries), rawTrees: gitobject.NewCache[*pack.Object](maxCachedRawTreeBytes), pack: r.pack}
	b, err := r.readControl(".git/shallow")
	if err != nil {
		return nil, nil, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); plumbing.IsHash(l) {
			if h.shallow == nil {
				h.shallow = map[plumbing.Hash]bool{}
			}
			h.shallow[plumbing.NewHash(l)] = true
		}
	}
	// Grafts (.git/info/grafts, deprecated) give commits other parents
	// in git's history; a walk that reads one is refused (commit).
	if b, err = r.readControl(".git/info/grafts"); err != nil {
		return nil, nil, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 0 && plumbing.IsHash(f[0]) {
			if h.grafts == nil {
				h.grafts = map[plumbing.Hash]bool{}
			}
			h.grafts[plumbing.NewHash(f[0])] = true
		}
	}
	return h, done, nil
}

// change and pathspec are the tree differ's, below in internal/object.
type (
	change   = gitobject.Change
	pathspec = gitobject.Pathspec
)

// diffTrees calls fn for every file that differs between trees a and b
// below base, restricted to ps, in git's order (gitobject.DiffTrees).
func (h *history) diffTrees(a, b plumbing.Hash, base string, ps pathspec, fn func(change) bool) (bool, error) {
	return gitobject.DiffTrees(h, a, b, base, ps, fn)
}

// RawTree and Tree are where the differ reads trees (gitobject.Trees).
func (h *history) RawTree(id plumbing.Hash) ([]byte, bool)     { return h.rawTree(id) }
func (h *history) Tree(id plumbing.Hash) (*object.Tree, error) { return h.tree(id) }

// historyAt opens the history reader and reads the commit rev names; on
// success the caller closes the reader with done. A caller that reads
// no commit's parents (a checkout) does not mind grafts.
func (r *Repo) historyAt(rev string, parents bool) (h *history, id plumbing.Hash, c *object.Commit, done func(), err error) {
	h, done, err = r.newHistory()
	if err != nil {
		return nil, id, nil, nil, err
	}
	if !parents {
		h.grafts = nil
	}
	if id, err = h.resolveRev(rev); err == nil {
		c, err = h.commit(id)
	}
	if err != nil {
		done()
		return nil, id, nil, nil, err
	}
	return h, id, c, done, nil
}

// commit reads a commit (cached for the request). Only its fields are
// for use (a commit read from the packs has no storer).
func (h *history) commit(id plumbing.Hash) (*object.Commit, error) {
	if c, ok := h.commits.Get(id); ok {
		return c, nil
	}
	if h.grafts[id] {
		return nil, errs.At(errs.RepoUnsupported, h.alias, "", fmt.Sprintf("has a graft for the commit %s (.git/info/grafts), which gives it other parents in git's history; ServerFS does not apply grafts (a deprecated git feature): without the file, history is what the commits record", id))
	}
	c, err := h.getCommit(id)
	if err != nil {
		return nil, h.r.objectErr("commit", id, err)
	}
	h.commits.Put(id, c, len(c.Message)+256)
	return c, nil
}

// getCommit reads a commit from the packs, or else through go-git.
func (h *history) getCommit(id plumbing.Hash) (*object.Commit, error) {
	o, ok, err := h.pack.GetOnce(id) // h.commits keeps it
	if err != nil {
		return nil, err
	}
	if !ok {
		return object.GetCommit(h.r.storage, id)
	}
	if o.Type != plumbing.CommitObject {
		return nil, plumbing.ErrObjectNotFound // as go-git answers
	}
	if c := gitobject.DecodeCommit(id, o.Data, &h.zones); c != nil {
		return c, nil
	}
	return object.DecodeCommit(h.r.storage, knownObject{id, o})
}

// getTree reads a tree from the packs, or else through go-git.
func (h *history) getTree(id plumbing.Hash) (*object.Tree, error) {
	o, ok, err := h.pack.Get(id)
	if err != nil {
		return nil, err
	}
	if !ok {
		return object.GetTree(h.r.storage, id)
	}
	if o.Type != plumbing.TreeObject {
		return nil, plumbing.ErrObjectNotFound
	}
	if t := gitobject.DecodeTree(id, o.Data); t != nil {
		return t, nil
	}
	return object.DecodeTree(h.r.storage, knownObject{id, o})
}

// parents are a commit's parent ids as git sees them: none at a shallow
// boundary.
func (h *history) parents(c *object.Commit) []plumbing.Hash {
	if h.shallow[c.Hash] {
		return nil
	}
	return c.ParentHashes
}

// tree reads a tree (cached for the request); the zero hash is empty.
// Only its Hash and Entries are for use (a tree read from the packs has
// no storer).
func (h *history) tree(id plumbing.Hash) (*object.Tree, error) {
	if id.IsZero() || id == emptyTree {
		return &object.Tree{}, nil
	}
	if t, ok := h.trees.Get(id); ok {
		return t, nil
	}
	t, err := h.getTree(id)
	if err != nil {
		return nil, h.r.objectErr("tree", id, err)
	}
	h.trees.Put(id, t, len(t.Entries)+1)
	return t, nil
}

// resolveRev turns a revision argument into a commit id: HEAD, a local
// branch, a tag (peeled to its commit) or a commit id or unique prefix
// (revision.Parse refuses the rest). Like git, a name that is both a ref
// and a hex prefix is the ref, and a tag wins over a branch of the same
// name.
func (h *history) resolveRev(rev string) (plumbing.Hash, error) {
	p, err := revision.Parse(rev)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if p.Head {
		hd, err := h.r.head()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if hd.commit.IsZero() {
			return plumbing.ZeroHash, errs.At(errs.RevNotFound, h.alias, "", "has no commits yet (HEAD is unborn)")
		}
		return hd.commit, nil
	}
	for _, n := range p.Refs {
		ref, err := h.r.storage.Reference(plumbing.ReferenceName(n))
		if err == plumbing.ErrReferenceNotFound {
			continue
		}
		if err != nil {
			return plumbing.ZeroHash, errs.At(errs.RepoUnsupported, h.alias, "", fmt.Sprintf("has a ref %s that cannot be read", n)).Wrap(err)
		}
		if ref.Type() != plumbing.HashReference {
			return plumbing.ZeroHash, errs.New(errs.InvalidArgument, fmt.Sprintf("%s is a symbolic reference; name the branch it points at", n))
		}
		return h.peel(ref.Hash(), rev)
	}
	switch {
	case len(p.Prefix) == 40:
		return h.peel(plumbing.NewHash(p.Prefix), p.Prefix)
	case p.Prefix != "":
		return h.resolvePrefix(p.Prefix)
	case p.ShortHex:
		return plumbing.ZeroHash, errs.New(errs.InvalidArgument, fmt.Sprintf("rev %q: a commit id prefix needs at least 7 hex digits", rev))
	}
	return plumbing.ZeroHash, errs.At(errs.RevNotFound, h.alias, "", fmt.Sprintf("has no branch, tag or commit %q", rev))
}

// resolvePrefix finds the one object whose id starts with prefix.
func (h *history) resolvePrefix(prefix string) (plumbing.Hash, error) {
	ids, err := h.r.storage.HashesWithPrefix(revision.PrefixBytes(prefix))
	if err != nil {
		return plumbing.ZeroHash, errs.At(errs.RepoUnsupported, h.alias, "", "has an object store that cannot be searched").Wrap(err)
	}
	var match []plumbing.Hash
	for _, id := range ids {
		if strings.HasPrefix(id.String(), prefix) {
			match = append(match, id)
		}
	}
	switch len(match) {
	case 1:
		return h.peel(match[0], prefix)
	case 0:
		return plumbing.ZeroHash, errs.At(errs.RevNotFound, h.alias, "", fmt.Sprintf("has no branch, tag or commit %q", prefix))
	}
	return plumbing.ZeroHash, errs.At(errs.RevNotFound, h.alias, "", fmt.Sprintf("has %d objects whose ids start with %s; give more digits", len(match), prefix))
}

// peel follows annotated tags to the commit they name.
func (h *history) peel(id plumbing.Hash, rev string) (plumbing.Hash, error) {
	for range 10 {
		// The type from the object's header: a blob is named, not read.
		typ, err := h.r.objs.ObjectType(id)
		if err != nil {
			if errors.Is(err, plumbing.ErrObjectNotFound) && !h.r.hasAlternates() {
				return plumbing.ZeroHash, errs.At(errs.RevNotFound, h.alias, "", fmt.Sprintf("has no commit %s", rev))
			}
			return plumbing.ZeroHash, h.r.objectErr("object", id, err)
		}
		switch typ {
		case plumbing.CommitObject:
			return id, nil
		case plumbing.TagObject:
			t, err := object.GetTag(h.r.storage, id)
			if err != nil {
				return plumbing.ZeroHash, h.r.objectErr("tag", id, err)
			}
			id = t.Target
		default:
			return plumbing.ZeroHash, errs.New(errs.InvalidArgument, fmt.Sprintf("rev %q names a %s, not a commit", rev, typ))
		}
	}
	return plumbing.ZeroHash, errs.New(errs.InvalidArgument, fmt.Sprintf("rev %q: too many nested tags", rev))
}

// checkHistoryPaths cleans log/show paths: literal, visible, outside .git.
func (r *Repo) checkHistoryPaths(paths []string) (pathspec, error) {
	if len(paths) > MaxHistoryPaths {
		return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("paths names at most %d paths", MaxHistoryPaths))
	}
	seen := map[string]bool{}
	var out pathspec
	for _, raw := range paths {
		if strings.HasPrefix(raw, "-") || strings.HasPrefix(raw, ":") {
			return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("path %q looks like an option or pathspec magic; name files or directories by their path", sfs.DisplayPath(raw)))
		}
		p, err := r.w.CleanPath(raw)
		if err != nil {
			return nil, err
		}
		if p == "" {
			return nil, errs.New(errs.InvalidArgument, "a path of the root is the whole repository: leave paths out instead")
		}
		if sfs.InGitDir(p) {
			return nil, errs.At(errs.DeniedPath, r.w.Alias(), p, "is inside .git, which has no history")
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// treeObject is tree id's bytes: from the pack reader, or else read
// whole (at most maxStructObjectBytes, as go-git's decoding would) and
// kept in rawTrees; ok is false when it is no tree or cannot be read
// (go-git's decoding then says why), or was decoded already.
func (h *history) treeObject(id plumbing.Hash) (*pack.Object, bool) {
	o, ok, err := h.pack.Get(id)
	if err != nil {
		return nil, false
	}
	if !ok {
		if _, decoded := h.trees.Get(id); decoded {
			return nil, false // already paid for: used decoded
		}
		if o, ok = h.rawTrees.Get(id); !ok {
			rd, err := h.r.open(id, maxStructObjectBytes, false)
			if err != nil {
				return nil, false
			}
			if rd.typ != plumbing.TreeObject {
				if rd.s != nil {
					rd.s.Close()
				}
				return nil, false
			}
			data, err := rd.readAll()
			if err != nil {
				return nil, false
			}
			o = &pack.Object{Type: plumbing.TreeObject, Data: data}
			h.rawTrees.Put(id, o, len(data))
		}
	}
	return o, o.Type == plumbing.TreeObject
}

// rawTree is tree id's bytes (treeObject) when quickTree would decode it
// (so that diffRaw reads the entries diffTrees would read decoded); ok
// is false otherwise (unreadable, or of a form left to go-git's
// decoder). The zero id and the empty tree are empty.
func (h *history) rawTree(id plumbing.Hash) ([]byte, bool) {
	if id.IsZero() || id == emptyTree {
		return nil, true
	}
	o, ok := h.treeObject(id)
	if !ok {
		return nil, false
	}
	if o.TreeForm == 0 {
		o.TreeForm = 2
		if gitobject.Decodable(o.Data) {
			o.TreeForm = 1
		}
	}
	return o.Data, o.TreeForm == 1
}

// treesame reports whether trees a and b agree on ps.
func (h *history) treesame(a, b plumbing.Hash, ps pathspec) (bool, error) {
	if len(ps) > 0 {
		if same, ok := h.quickTreesame(a, b, ps); ok {
			return same, nil
		}
	}
	same := true
	_, err := h.diffTrees(a, b, "", ps, func(change) bool { same = false; return false })
	return same, err
}

// quickTreesame answers treesame for paths by looking each one up,
// component by component, in the raw trees of the packs (no tree is
// decoded); ok is false when it cannot tell simply (a tree outside the
// packs, a type change, a path that is a directory in both with different
// ids, duplicate names) and diffTrees should decide.
func (h *history) quickTreesame(a, b plumbing.Hash, ps pathspec) (same, ok bool) {
	for _, p := range ps {
		ta, tb := a, b
		for rest := p; ; {
			name, more, last := rest, "", true
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				name, more, last = rest[:i], rest[i+1:], false
			}
			ma, ha, oka := h.rawEntry(ta, name)
			mb, hb, okb := h.rawEntry(tb, name)
			if !oka || !okb {
				return false, false
			}
			if ma == mb && ha == hb {
				break // equal (or absent from both) below here
			}
			if last || ma != filemode.Dir || mb != filemode.Dir {
				if !last || ma == filemode.Dir || mb == filemode.Dir || ma != 0 && mb != 0 && gitobject.Kind(ma) != gitobject.Kind(mb) {
					return false, false
				}
				return false, true // the file differs
			}
			ta, tb, rest = ha, hb, more
		}
	}
	return true, true
}

// rawEntry finds name in tree id (zero: empty) read raw from the packs:
// its mode and id, zero when absent; ok is false when the tree is not in
// the packs or cannot be read simply (then go-git's decoding decides).
func (h *history) rawEntry(id plumbing.Hash, name string) (filemode.FileMode, plumbing.Hash, bool) {
	if id.IsZero() || id == emptyTree {
		return 0, plumbing.ZeroHash, true
	}
	// A walk looks each tree up twice in a row (as a commit's, then as
	// its parent's against the next commit): the last few answers are
	// kept (a tree's content is its id).
	for i := range h.entries {
		if e := &h.entries[i]; e.tree == id && e.name == name {
			return e.mode, e.id, e.ok
		}
	}
	mode, found, ok := h.scanEntry(id, name)
	h.entries[h.nextEntry] = entryMemo{id, name, mode, found, ok}
	h.nextEntry = (h.nextEntry + 1) % len(h.entries)
	return mode, found, ok
}

// entryMemo is one answer of rawEntry.
type entryMemo struct {
	tree plumbing.Hash
	name string
	mode filemode.FileMode
	id   plumbing.Hash
	ok   bool
}

// scanEntry is rawEntry read from the tree.
func (h *history) scanEntry(id plumbing.Hash, name string) (filemode.FileMode, plumbing.Hash, bool) {
	o, ok := h.treeObject(id)
	if !ok {
		return 0, plumbing.ZeroHash, false
	}
	var mode filemode.FileMode
	var found plumbing.Hash
	n := 0
	for d := o.Data; len(d) > 0; {
		sp := bytes.IndexByte(d, ' ')
		if sp < 0 {
			return 0, plumbing.ZeroHash, false
		}
		nul := bytes.IndexByte(d[sp:], 0)
		if nul < 0 || len(d) < sp+nul+1+20 {
			return 0, plumbing.ZeroHash, false
		}
		nul += sp
		// Malformed entries (a bad mode, an empty name) anywhere in the
		// tree are left to go-git's decoder, which refuses them.
		m, err := gitobject.TreeMode(d[:sp])
		if err != nil || nul == sp+1 {
			return 0, plumbing.ZeroHash, false
		}
		if string(d[sp+1:nul]) == name {
			if n++; n > 1 {
				return 0, plumbing.ZeroHash, false
			}
			mode = gitobject.CanonicalMode(m)
			copy(found[:], d[nul+1:nul+21])
		}
		d = d[nul+21:]
	}
	return mode, found, true
}

// info renders a commit's metadata.
func (h *history) info(c *object.Commit) CommitInfo {
	ci := CommitInfo{ID: c.Hash.String(), Author: person(c.Author), Shallow: h.shallow[c.Hash]}
	for _, p := range h.parents(c) {
		ci.Parents = append(ci.Parents, p.String())
	}
	if cm := person(c.Committer); cm != ci.Author {
		ci.Committer = &cm
	}
	ci.Subject, ci.Body = splitMessage(c.Message)
	ci.Body = strings.TrimRight(ci.Body, "\n")
	if len(ci.Body) > maxBodyBytes {
		cut := maxBodyBytes
		for cut > 0 && !utf8.RuneStart(ci.Body[cut]) {
			cut--
		}
		ci.Body, ci.BodyTruncated = ci.Body[:cut], true
	}
	return ci
}

func person(s object.Signature) Person {
	return Person{Name: s.Name, Email: s.Email, Date: s.When.UTC().Format(time.RFC3339)}
}

// splitMessage is git's %s and %b (pretty.c): blank lines skipped, the
// subject is the first paragraph with each line's trailing whitespace
// removed and lines joined by a space; the body starts after the blank
// lines that follow it.
func splitMessage(msg string) (subject, body string) {
	skipBlank := func(s string) string {
		for s != "" {
			line, rest, _ := strings.Cut(s, "\n")
			if strings.TrimRight(line, " \t\r\n\v\f") != "" {
				break
			}
			s = rest
		}
		return s
	}
	msg = skipBlank(msg)
	var sub []string
	for msg != "" {
		line, rest, _ := strings.Cut(msg, "\n")
		t := strings.TrimRight(line, " \t\r\n\v\f")
		if t == "" {
			break
		}
		sub = append(sub, t)
		msg = rest
	}
	return strings.Join(sub, " "), skipBlank(msg)
}
