package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git/internal/commitgraph"
	"github.com/serverfs/serverfs/git/internal/pack"
	"github.com/serverfs/serverfs/git/internal/refs"
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
	// maxRevLen bounds a revision argument.
	maxRevLen = 256
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

// LogCommit is one commit of a log, with the files it changed.
type LogCommit struct {
	CommitInfo
	// Files are the visible paths changed against the parent (a root
	// commit: against nothing; a merge lists none, as git log does), at
	// most maxLogFiles, restricted to the log's paths when it has some.
	Files          []ChangedFile `json:"files,omitempty"`
	FilesTruncated bool          `json:"files_truncated,omitempty"`
	// MoreFiles counts the visible changed paths past maxLogFiles.
	MoreFiles int `json:"more_files,omitempty"`
	// HiddenFiles counts changed paths the policy hides; never named.
	HiddenFiles int `json:"hidden_files,omitempty"`
}

// MaxLogFiles is how many changed files log lists per commit.
const MaxLogFiles = maxLogFiles

// LogResult is one page of `git log`.
type LogResult struct {
	Commits []LogCommit `json:"commits"`
	// Truncated: the walk stopped before the end of history, for
	// TruncatedReason: "limit" (NextCursor continues), "commit_cap" or
	// "timeout" (narrow with paths, since or until).
	Truncated       bool   `json:"truncated,omitempty"`
	TruncatedReason string `json:"truncated_reason,omitempty"`
	NextCursor      string `json:"next_cursor,omitempty"`
}

// LogOptions are the arguments of Log.
type LogOptions struct {
	Rev    string   // "" or HEAD, a local branch, a tag, a commit id or a unique prefix of >= 7 hex digits
	Paths  []string // literal paths (files or directories): commits that changed them
	Since  string   // RFC 3339: stop at commits committed before
	Until  string   // RFC 3339: skip commits committed after
	Limit  int      // 1..MaxLogCommits (default DefaultLogCommits)
	Cursor string   // NextCursor of the previous page
	// Files lists each commit's changed files (LogCommit.Files); without
	// it no commit's trees are compared for them.
	Files bool
	// MaxWalk overrides MaxWalkCommits (tests); 0 is the default.
	MaxWalk int
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
	commits objectCache[*object.Commit]
	trees   objectCache[*object.Tree]
	// rawTrees are the trees the pack reader does not hold (loose, or
	// larger than it inflates), as bytes: a 200,000-entry tree costs its
	// 8 MB, where decoded it cost five times that.
	rawTrees objectCache[*pack.Object]
	// pack reads small objects from the packs (r.pack; nil: every object
	// is streamed).
	pack *pack.Reader
	// zones are the time zones of the signatures read.
	zones zoneCache
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

// useGraph has a log walk with the commit-graph, when there is one git
// would use as well: not in a shallow repository, nor with grafts or
// replaced objects (the graph records the commits as written). With
// changed-path Bloom filters, the paths' keys too.
func (h *history) useGraph(ps pathspec) {
	if h.shallow != nil || h.grafts != nil || h.r.objs.HasReplacements() {
		return
	}
	if h.graph = commitgraph.Open(h.r.ctl); h.graph == nil || len(ps) == 0 {
		return
	}
	for _, p := range ps {
		keys, ok := h.graph.Keys(p)
		if !ok {
			h.bloom = nil
			return
		}
		h.bloom = append(h.bloom, keys)
	}
}

// walkCommit is the commit id as a walk needs it: from the commit-graph
// when it holds the commit (its id, tree, parents and committer time
// only: h.commit reads the rest), else read whole by h.commit.
func (h *history) walkCommit(id plumbing.Hash) (*object.Commit, error) {
	// simplify reads a parent, then the walk queues it.
	if h.lastWalked != nil && h.lastWalked.Hash == id {
		return h.lastWalked, nil
	}
	if h.graph != nil {
		if pos, ok := h.graph.Find(id); ok {
			tree, ps, when, ok := h.graph.Commit(pos, h.graphParents)
			h.graphParents = ps
			if ok {
				c := &object.Commit{Hash: id, TreeHash: tree, ParentHashes: make([]plumbing.Hash, len(ps))}
				for i, p := range ps {
					c.ParentHashes[i] = h.graph.ID(p)
				}
				c.Committer.When = time.Unix(when, 0)
				graphCommits.Add(1)
				h.lastWalked = c
				return c, nil
			}
		}
	}
	return h.commit(id)
}

// bloomSame reports whether the Bloom filter of c says it certainly did
// not change any log path against its first parent (for a root: has
// none of them).
func (h *history) bloomSame(c *object.Commit) bool {
	if h.bloom == nil {
		return false
	}
	pos, ok := h.graph.Find(c.Hash)
	if !ok {
		return false
	}
	for _, keys := range h.bloom {
		if h.graph.MaybeChanged(pos, keys) {
			return false
		}
	}
	bloomSkips.Add(1)
	return true
}

// graphCommits and bloomSkips count the commits walked from the
// commit-graph and the tree diffs Bloom filters spared (tests watch them).
var graphCommits, bloomSkips atomic.Int64

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
	h = &history{r: r, alias: r.w.Alias(), commits: newObjectCache[*object.Commit](maxCachedCommitBytes), trees: newObjectCache[*object.Tree](maxCachedTreeEntries), rawTrees: newObjectCache[*pack.Object](maxCachedRawTreeBytes), pack: r.pack}
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

// objectCache keeps the objects one request decoded, dropped whole when
// the cost they hold passes max, so memory stays bounded whatever the
// history's size.
type objectCache[V any] struct {
	m         map[plumbing.Hash]V
	cost, max int
}

func newObjectCache[V any](max int) objectCache[V] {
	return objectCache[V]{m: map[plumbing.Hash]V{}, max: max}
}

// put keeps v for id at the given cost.
func (c *objectCache[V]) put(id plumbing.Hash, v V, cost int) {
	if c.cost += cost; c.cost > c.max {
		clear(c.m)
		c.cost = cost
	}
	c.m[id] = v
}

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
	if c, ok := h.commits.m[id]; ok {
		return c, nil
	}
	if h.grafts[id] {
		return nil, errs.At(errs.RepoUnsupported, h.alias, "", fmt.Sprintf("has a graft for the commit %s (.git/info/grafts), which gives it other parents in git's history; ServerFS does not apply grafts (a deprecated git feature): without the file, history is what the commits record", id))
	}
	c, err := h.getCommit(id)
	if err != nil {
		return nil, h.r.objectErr("commit", id, err)
	}
	h.commits.put(id, c, len(c.Message)+256)
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
	if c := quickCommit(id, o.Data, &h.zones); c != nil {
		return c, nil
	}
	return object.DecodeCommit(h.r.storage, knownObject{id, o})
}

// quickCommit decodes a commit of the plain form (tree, parents, author,
// committer, a blank line, the message) as go-git's decoder would, with
// its signatures parsed as go-git's Signature.Decode parses them
// (quickSignature); any other form (more headers: encoding,
// gpgsig, mergetag, ...) answers nil and go-git's decoder reads it. The
// commit has no storer: only its fields are for use.
func quickCommit(id plumbing.Hash, d []byte, zones *zoneCache) *object.Commit {
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
	if c.TreeHash, ok = parseID(tree); !ok {
		return nil
	}
	for strings.HasPrefix(str, "parent ") {
		p, ok := line("parent")
		if !ok {
			return nil
		}
		ph, ok := parseID(p)
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
	c.Author = quickSignature(author, zones)
	c.Committer = quickSignature(committer, zones)
	c.Message = str[1:]
	return c
}

// parseID is plumbing.NewHash(s) where plumbing.IsHash(s) (40 hex digits
// of either case), without their allocations.
func parseID(s string) (plumbing.Hash, bool) {
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

// quickSignature is go-git's Signature.Decode (the same fields for every
// input, its quirks included: "-0030" is +00:30) on a string, the name
// and email sharing the commit's string, and each time zone offset made
// once per request (zones) instead of once per signature.
func quickSignature(b string, zones *zoneCache) object.Signature {
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

// zoneCache holds the fixed time zones of one request by offset, at most
// maxZones of them (more are made each time).
type zoneCache map[int]*time.Location

const maxZones = 1024

func (z *zoneCache) get(off int) *time.Location {
	if loc, ok := (*z)[off]; ok {
		return loc
	}
	loc := time.FixedZone("", off)
	if *z == nil {
		*z = zoneCache{}
	}
	if len(*z) < maxZones {
		(*z)[off] = loc
	}
	return loc
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
	if t := quickTree(id, o.Data); t != nil {
		return t, nil
	}
	return object.DecodeTree(h.r.storage, knownObject{id, o})
}

// quickTree decodes a well-formed tree as go-git's decoder would (modes
// canonicalized, names sharing one string), or answers nil and go-git's
// decoder reads it (and refuses what is malformed). The tree has no
// storer: only its Hash and Entries are for use.
func quickTree(id plumbing.Hash, d []byte) *object.Tree {
	str := string(d)
	n := strings.Count(str, "\x00")
	t := &object.Tree{Hash: id, Entries: make([]object.TreeEntry, 0, n)}
	for i := 0; i < len(str); {
		sp := strings.IndexByte(str[i:], ' ')
		if sp < 0 {
			return nil
		}
		m, err := treeMode(str[i : i+sp])
		if err != nil {
			return nil
		}
		i += sp + 1
		nul := strings.IndexByte(str[i:], 0)
		if nul <= 0 || len(str)-i-nul-1 < 20 {
			return nil
		}
		e := object.TreeEntry{Name: str[i : i+nul], Mode: canonicalMode(m)}
		i += nul + 1
		copy(e.Hash[:], str[i:i+20])
		i += 20
		t.Entries = append(t.Entries, e)
	}
	return t
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
	if t, ok := h.trees.m[id]; ok {
		return t, nil
	}
	t, err := h.getTree(id)
	if err != nil {
		return nil, h.r.objectErr("tree", id, err)
	}
	h.trees.put(id, t, len(t.Entries)+1)
	return t, nil
}

// resolveRev turns a revision argument into a commit id. Only HEAD, local
// branches (refs/heads), tags (refs/tags, peeled to their commit) and
// commit ids (full, or a unique prefix of at least 7 hex digits) are
// accepted: no options, no reflog (@{...}), no ranges or navigation
// (.., ~, ^, :), no other refs. Like git, a name that is both a ref and
// a hex prefix is the ref, and a tag wins over a branch of the same name.
func (h *history) resolveRev(rev string) (plumbing.Hash, error) {
	if rev == "" || rev == "HEAD" {
		hd, err := h.r.head()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if hd.commit.IsZero() {
			return plumbing.ZeroHash, errs.At(errs.RevNotFound, h.alias, "", "has no commits yet (HEAD is unborn)")
		}
		return hd.commit, nil
	}
	if len(rev) > maxRevLen || !utf8.ValidString(rev) {
		return plumbing.ZeroHash, errs.New(errs.InvalidArgument, "rev is too long or not UTF-8")
	}
	if strings.HasPrefix(rev, "-") {
		return plumbing.ZeroHash, errs.New(errs.InvalidArgument, fmt.Sprintf("rev %q looks like an option; name a branch, a tag or a commit id", rev))
	}
	if strings.Contains(rev, "@{") || strings.Contains(rev, "..") || strings.ContainsAny(rev, "~^:?*[\\ \t\n\x7f") {
		return plumbing.ZeroHash, errs.New(errs.InvalidArgument, fmt.Sprintf("rev %q uses revision syntax (ranges, ~, ^, :, @{...}) that is not accepted; name a branch, a tag or a commit id", rev))
	}
	for _, c := range rev {
		if c < 0x20 {
			return plumbing.ZeroHash, errs.New(errs.InvalidArgument, "rev contains a control character")
		}
	}
	var names []string
	switch {
	case strings.HasPrefix(rev, "refs/heads/") || strings.HasPrefix(rev, "refs/tags/"):
		names = []string{rev}
	case strings.HasPrefix(rev, "refs/"):
		return plumbing.ZeroHash, errs.New(errs.InvalidArgument, fmt.Sprintf("rev %q is outside refs/heads and refs/tags; only local branches and tags are read", rev))
	default:
		names = []string{"refs/tags/" + rev, "refs/heads/" + rev}
	}
	for _, n := range names {
		if !refs.ValidName(n) {
			return plumbing.ZeroHash, errs.New(errs.InvalidArgument, fmt.Sprintf("rev %q is not a valid branch or tag name", rev))
		}
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
	if isHex(rev) && len(rev) >= 7 && len(rev) <= 40 {
		rev = strings.ToLower(rev)
		if len(rev) == 40 {
			return h.peel(plumbing.NewHash(rev), rev)
		}
		ids, err := h.r.storage.HashesWithPrefix(hexPrefixBytes(rev))
		if err != nil {
			return plumbing.ZeroHash, errs.At(errs.RepoUnsupported, h.alias, "", "has an object store that cannot be searched").Wrap(err)
		}
		var match []plumbing.Hash
		for _, id := range ids {
			if strings.HasPrefix(id.String(), rev) {
				match = append(match, id)
			}
		}
		switch len(match) {
		case 1:
			return h.peel(match[0], rev)
		case 0:
		default:
			return plumbing.ZeroHash, errs.At(errs.RevNotFound, h.alias, "", fmt.Sprintf("has %d objects whose ids start with %s; give more digits", len(match), rev))
		}
	} else if isHex(rev) && len(rev) < 7 {
		return plumbing.ZeroHash, errs.New(errs.InvalidArgument, fmt.Sprintf("rev %q: a commit id prefix needs at least 7 hex digits", rev))
	}
	return plumbing.ZeroHash, errs.At(errs.RevNotFound, h.alias, "", fmt.Sprintf("has no branch, tag or commit %q", rev))
}

// hexPrefixBytes is the whole bytes of a hex prefix (HashesWithPrefix
// compares bytes; the odd digit is checked by the caller).
func hexPrefixBytes(s string) []byte {
	b := make([]byte, len(s)/2)
	for i := range b {
		v, _ := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
		b[i] = byte(v)
	}
	return b
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s != ""
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

// pathspec is a set of literal paths (files or directories); empty
// matches everything.
type pathspec []string

// matches reports whether the file p is one of the paths or below one.
func (ps pathspec) matches(p string) bool {
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
func (ps pathspec) enter(d string) bool {
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

// change is one leaf difference between two trees.
type change struct {
	path     string
	from, to object.TreeEntry // zero Hash: absent
}

func (c change) status() string {
	switch {
	case c.from.Hash.IsZero():
		return "A"
	case c.to.Hash.IsZero():
		return "D"
	case kind(c.from.Mode) != kind(c.to.Mode):
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

// diffTrees calls fn for every file (blob or gitlink) that differs
// between trees a and b (zero: empty) below base, restricted to ps, in
// git's order; fn returns false to stop early.
func (h *history) diffTrees(a, b plumbing.Hash, base string, ps pathspec, fn func(change) bool) (bool, error) {
	if a == b {
		return true, nil
	}
	if ra, ok := h.rawTree(a); ok {
		if rb, ok := h.rawTree(b); ok {
			return h.diffRaw(ra, rb, base, ps, fn)
		}
	}
	ta, err := h.tree(a)
	if err != nil {
		return false, err
	}
	tb, err := h.tree(b)
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
			if !ps.enter(p) {
				continue
			}
			var ha, hb plumbing.Hash
			if x != nil {
				ha = x.Hash
			}
			if y != nil {
				hb = y.Hash
			}
			if ok, err := h.diffTrees(ha, hb, p, ps, fn); !ok || err != nil {
				return ok, err
			}
			continue
		}
		if !ps.matches(p) {
			continue
		}
		c := change{path: p}
		if x != nil {
			c.from = *x
		}
		if y != nil {
			c.to = *y
		}
		if !fn(c) {
			return false, nil
		}
	}
	return true, nil
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
		if _, decoded := h.trees.m[id]; decoded {
			return nil, false // already paid for: used decoded
		}
		if o, ok = h.rawTrees.m[id]; !ok {
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
			h.rawTrees.put(id, o, len(data))
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
		if quickTreeForm(o.Data) {
			o.TreeForm = 1
		}
	}
	return o.Data, o.TreeForm == 1
}

// quickTreeForm reports whether quickTree decodes d (and does not leave
// it to go-git's decoder).
func quickTreeForm(d []byte) bool {
	for len(d) > 0 {
		sp := bytes.IndexByte(d, ' ')
		if sp < 0 {
			return false
		}
		if _, err := treeMode(d[:sp]); err != nil {
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

// rawEnt is one entry of a raw tree, its mode canonical as quickTree's.
type rawEnt struct {
	name []byte
	mode filemode.FileMode
	hash plumbing.Hash
}

// nextRaw reads the next entry of a raw tree in quickTree's form.
func nextRaw(d *[]byte, e *rawEnt) bool {
	b := *d
	if len(b) == 0 {
		return false
	}
	sp := bytes.IndexByte(b, ' ')
	m, _ := treeMode(b[:sp])
	b = b[sp+1:]
	nul := bytes.IndexByte(b, 0)
	e.name, e.mode = b[:nul], canonicalMode(m)
	copy(e.hash[:], b[nul+1:nul+21])
	*d = b[nul+21:]
	return true
}

// cmpRaw orders entries as diffTrees does (entryKey: a directory's name
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

// diffRaw is diffTrees over two raw trees in quickTree's form: the same
// changes in the same order, without decoding either tree.
func (h *history) diffRaw(da, db []byte, base string, ps pathspec, fn func(change) bool) (bool, error) {
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
			if !ps.enter(p) {
				continue
			}
			if ok, err := h.diffTrees(from.Hash, to.Hash, p, ps, fn); !ok || err != nil {
				return ok, err
			}
		case !ps.matches(p):
		default:
			if !fn(change{path: p, from: from, to: to}) {
				return false, nil
			}
		}
	}
	return true, nil
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
				if !last || ma == filemode.Dir || mb == filemode.Dir || ma != 0 && mb != 0 && kind(ma) != kind(mb) {
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
		m, err := treeMode(d[:sp])
		if err != nil || nul == sp+1 {
			return 0, plumbing.ZeroHash, false
		}
		if string(d[sp+1:nul]) == name {
			if n++; n > 1 {
				return 0, plumbing.ZeroHash, false
			}
			mode = canonicalMode(m)
			copy(found[:], d[nul+1:nul+21])
		}
		d = d[nul+21:]
	}
	return mode, found, true
}

// treeMode is filemode.New(string(s)), without its octal parse for the
// modes git writes (and, for a []byte, without a conversion).
func treeMode[T string | []byte](s T) (filemode.FileMode, error) {
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

// canonicalMode is a tree entry's mode as go-git's tree decoder (and git's
// tree walk) reads it: 100664 is 100644, and so on.
func canonicalMode(m filemode.FileMode) filemode.FileMode {
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

// commitQueue is git's date-ordered commit list (commit_list_insert_by_date:
// a commit goes after every commit with the same or a later date).
type dateQueue []*object.Commit

func (q *dateQueue) insert(c *object.Commit) {
	d := c.Committer.When.Unix()
	i := sort.Search(len(*q), func(i int) bool { return (*q)[i].Committer.When.Unix() < d })
	*q = append(*q, nil)
	copy((*q)[i+1:], (*q)[i:])
	(*q)[i] = c
}

func (q *dateQueue) pop() *object.Commit {
	c := (*q)[0]
	*q = (*q)[1:]
	return c
}

func parseTime(name, s string) (int64, bool, error) {
	if s == "" {
		return 0, false, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0, false, errs.New(errs.InvalidArgument, fmt.Sprintf("%s must be an RFC 3339 time such as 2024-05-01T00:00:00Z", name))
	}
	return t.Unix(), true, nil
}

func logCursor(start plumbing.Hash, skip int, key uint32) string {
	return fmt.Sprintf("%s.%d.%08x", start, skip, key)
}

func (o *LogOptions) key(paths pathspec) uint32 {
	f := fnv.New32a()
	fmt.Fprintf(f, "%q %q %q %q", o.Rev, []string(paths), o.Since, o.Until)
	return f.Sum32()
}

// Log is `git log [rev] [--since] [--until] -- paths` as git walks it by
// default: newest committer date first, and with paths git's default
// history simplification (a commit is shown when it differs from its
// parents on the paths; a merge that equals one of its parents there
// follows only that parent; a root commit is shown when it has the paths).
// Each commit carries the files it changed (git log --name-status
// --no-renames). At most Limit commits; NextCursor continues.
func (r *Repo) Log(ctx context.Context, o LogOptions) (*LogResult, error) {
	ctx, cancel := context.WithTimeout(ctx, r.fs.Limits().SearchTimeout)
	defer cancel()
	if o.Limit <= 0 {
		o.Limit = DefaultLogCommits
	}
	if o.Limit > MaxLogCommits {
		return nil, errs.New(errs.InvalidArgument, fmt.Sprintf("limit must be between 1 and %d", MaxLogCommits))
	}
	maxWalk := MaxWalkCommits
	if o.MaxWalk > 0 {
		maxWalk = o.MaxWalk
	}
	ps, err := r.checkHistoryPaths(o.Paths)
	if err != nil {
		return nil, err
	}
	since, hasSince, err := parseTime("since", o.Since)
	if err != nil {
		return nil, err
	}
	until, hasUntil, err := parseTime("until", o.Until)
	if err != nil {
		return nil, err
	}
	h, done, err := r.newHistory()
	if err != nil {
		return nil, err
	}
	defer done()
	key := o.key(ps)
	var start plumbing.Hash
	skip := 0
	if o.Cursor != "" {
		f := strings.Split(o.Cursor, ".")
		n, nerr := strconv.Atoi(safeIndex(f, 1))
		if len(f) != 3 || !plumbing.IsHash(f[0]) || nerr != nil || n < 0 || f[2] != fmt.Sprintf("%08x", key) {
			return nil, errs.New(errs.InvalidArgument, "cursor is not a next_cursor of a log with these rev, paths, since and until")
		}
		start, skip = plumbing.NewHash(f[0]), n
	} else if start, err = h.resolveRev(o.Rev); err != nil {
		return nil, err
	}
	h.useGraph(ps)
	first, err := h.walkCommit(start)
	if err != nil {
		return nil, err
	}
	res := &LogResult{Commits: []LogCommit{}}
	q := dateQueue{first}
	hint := 0
	if h.graph != nil {
		hint = int(min(h.graph.Len(), uint32(maxWalk), 1<<16))
	}
	seen := make(map[plumbing.Hash]bool, hint)
	seen[start] = true
	shown, walked := 0, 0
	for len(q) > 0 {
		if walked++; walked > maxWalk {
			res.Truncated, res.TruncatedReason = true, "commit_cap"
			return res, nil
		}
		if walked%64 == 0 && ctx.Err() != nil {
			if ctx.Err() == context.DeadlineExceeded {
				res.Truncated, res.TruncatedReason = true, "timeout"
				return res, nil
			}
			return nil, canceled(h.alias)
		}
		c := q.pop()
		if hasSince && c.Committer.When.Unix() < since {
			continue // git stops walking this line here
		}
		parents := h.parents(c)
		same := false
		if len(ps) > 0 {
			if same, parents, err = h.simplify(c, parents, ps); err != nil {
				return nil, err
			}
		}
		for _, p := range parents {
			if seen[p] {
				continue
			}
			seen[p] = true
			pc, err := h.walkCommit(p)
			if err != nil {
				return nil, err
			}
			q.insert(pc)
		}
		if same || hasUntil && c.Committer.When.Unix() > until {
			continue
		}
		if shown++; shown <= skip {
			continue
		}
		if len(res.Commits) == o.Limit {
			res.Truncated, res.TruncatedReason = true, "limit"
			res.NextCursor = logCursor(start, skip+o.Limit, key)
			return res, nil
		}
		if h.graph != nil {
			if c, err = h.commit(c.Hash); err != nil { // all of it
				return nil, err
			}
		}
		lc, err := h.logCommit(c, ps, o.Files)
		if err != nil {
			return nil, err
		}
		res.Commits = append(res.Commits, lc)
	}
	return res, nil
}

func safeIndex(f []string, i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}

// simplify is git's try_to_simplify_commit with every commit relevant:
// whether c is TREESAME on ps, and the parents the walk follows.
func (h *history) simplify(c *object.Commit, parents []plumbing.Hash, ps pathspec) (bool, []plumbing.Hash, error) {
	// The filter is of the change against the first parent: TREESAME
	// with it, which git's loop would find first.
	if h.bloomSame(c) {
		return true, parents[:min(len(parents), 1)], nil
	}
	if len(parents) == 0 {
		same, err := h.treesame(plumbing.ZeroHash, c.TreeHash, ps)
		return same, parents, err
	}
	for _, p := range parents {
		pc, err := h.walkCommit(p)
		if err != nil {
			return false, nil, err
		}
		same, err := h.treesame(pc.TreeHash, c.TreeHash, ps)
		if err != nil {
			return false, nil, err
		}
		if same {
			return true, []plumbing.Hash{p}, nil
		}
	}
	return false, parents, nil
}

// logCommit is a commit with its changed files against its only parent
// (or nothing for a root); merges list none.
func (h *history) logCommit(c *object.Commit, ps pathspec, files bool) (LogCommit, error) {
	lc := LogCommit{CommitInfo: h.info(c)}
	parents := h.parents(c)
	if len(parents) > 1 || !files {
		return lc, nil
	}
	var from plumbing.Hash
	if len(parents) == 1 {
		pc, err := h.walkCommit(parents[0])
		if err != nil {
			return lc, err
		}
		from = pc.TreeHash
	}
	_, err := h.diffTrees(from, c.TreeHash, "", ps, func(ch change) bool {
		switch {
		case !h.r.visible(ch.path):
			lc.HiddenFiles++
		case len(lc.Files) == maxLogFiles:
			lc.FilesTruncated = true
			lc.MoreFiles++
		default:
			lc.Files = append(lc.Files, ChangedFile{Status: ch.status(), Path: ch.path})
		}
		return true
	})
	return lc, err
}
