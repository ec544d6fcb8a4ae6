package git

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git/internal/indexfile"
	"github.com/serverfs/serverfs/git/internal/odb"
	"github.com/serverfs/serverfs/git/internal/pack"
	"github.com/serverfs/serverfs/internal/errs"
)

// maxConfigBytes bounds every config, ignore and HEAD file read.
const maxConfigBytes = 1 << 20

// fastBlobBytes is the size above which a blob is written with zlib's
// fastest level (writeBlob).
const fastBlobBytes = 1 << 20

// Repo is the repository whose work tree is a workdir's root.
type Repo struct {
	fs      *sfs.FS
	w       *sfs.Workdir
	ctl     *sfs.Control
	storage objectStorer
	// cfg holds system, global and repository configuration (each file
	// followed by the files it includes) in git's order (later files win
	// for single values).
	cfg []configLayer
	// globalAttrs are the rules of the operator's attributes files
	// (system, then core.attributesFile), the lowest precedence.
	globalAttrs []attrRule
	// fileMode is core.fileMode: whether the executable bit counts.
	fileMode bool
	// symlinks is core.symlinks: false when git checks symlinks out as
	// plain files holding their target.
	symlinks bool
	// trustCtime (core.trustCtime) and minimalStat (core.checkStat =
	// minimal) shape the stat-cache check.
	trustCtime, minimalStat bool

	// objs locates, sizes and streams the repository's objects.
	objs *odb.Store
	// pack reads small objects of the packs while a request holds it
	// open (history requests), else nil.
	pack *pack.Reader

	attrMu    sync.Mutex
	attrCache map[string][]attrRule // directory -> the attribute rules in force there
}

// Open opens the repository at the root of the workdir alias. A Repo
// reads the configuration once, when opened: open one per request. The root
// must hold a .git directory (not a file or symlink: a linked worktree or
// a submodule checkout keeps its repository elsewhere). Repository formats
// go-git cannot read exactly like git are REPO_UNSUPPORTED.
func Open(f *sfs.FS, alias string) (*Repo, error) {
	w, err := f.Workdir(alias)
	if err != nil {
		return nil, err
	}
	ctl := w.Control()
	st, err := ctl.Lstat(".git")
	switch {
	case errs.CodeOf(err) == errs.PathNotFound:
		return nil, errs.At(errs.RepoNotFound, alias, "", "is not a git repository: its root has no .git directory")
	case err != nil:
		return nil, err
	case st.Type() == sfs.TypeFile:
		return nil, errs.At(errs.RepoUnsupported, alias, "", "has a .git file (a linked worktree or submodule checkout whose repository lies elsewhere); only a .git directory is supported")
	case st.Type() != sfs.TypeDirectory:
		return nil, errs.At(errs.RepoUnsupported, alias, "", "has a .git that is not a directory (a symlink?); it is not followed")
	}
	r := &Repo{fs: f, w: w, ctl: ctl, objs: odb.New(ctl, w.Alias()), fileMode: true, trustCtime: true}
	repoCfg, err := r.readConfigFile(".git/config")
	if err != nil {
		return nil, err
	}
	r.cfg = r.appendRepoConfig(operatorConfigs(), repoCfg, ".git/config", 0)
	if err := r.checkSupported(repoCfg); err != nil {
		return nil, err
	}
	r.fileMode = parseBool(r.get("core", "", "filemode"), true)
	r.symlinks = parseBool(r.get("core", "", "symlinks"), true)
	r.trustCtime = parseBool(r.get("core", "", "trustctime"), true)
	r.minimalStat = strings.EqualFold(r.get("core", "", "checkstat"), "minimal")
	r.globalAttrs = r.loadGlobalAttrs()
	if err := r.loadReplaced(); err != nil {
		return nil, err
	}
	r.storage = r.newStorage()
	return r, nil
}

// checkSupported refuses what go-git or ServerFS would get wrong.
func (r *Repo) checkSupported(c *gitconfig.Config) error {
	alias := r.w.Alias()
	core, ext := c.Section("core"), c.Section("extensions")
	if v := core.Option("repositoryformatversion"); v != "" && v != "0" && v != "1" {
		return errs.At(errs.RepoUnsupported, alias, "", fmt.Sprintf("uses repository format version %s", v))
	}
	if f := ext.Option("objectformat"); f != "" && !strings.EqualFold(f, "sha1") {
		return errs.At(errs.RepoUnsupported, alias, "", fmt.Sprintf("uses object format %s; only sha1 repositories are supported", f))
	}
	if parseBool(ext.Option("worktreeconfig"), false) {
		return errs.At(errs.RepoUnsupported, alias, "", "uses extensions.worktreeConfig, which go-git cannot read")
	}
	if parseBool(c.Section("index").Option("splitindex"), false) || r.hasSharedIndex() {
		return errs.At(errs.RepoUnsupported, alias, "", "uses a split index (index.splitIndex), which go-git cannot read")
	}
	for _, v := range []string{r.getIn(c, "core", "", "autocrlf")} {
		if v != "" && !strings.EqualFold(v, "false") {
			return errs.At(errs.RepoUnsupported, alias, "", fmt.Sprintf("sets core.autocrlf=%s; line-ending conversion is not supported (git would compare converted content)", v))
		}
	}
	return nil
}

func (r *Repo) hasSharedIndex() bool {
	ents, _, err := r.ctl.ReadDir(".git", 4096)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name, "sharedindex.") {
			return true
		}
	}
	return false
}

// readConfigFile reads and parses a config file beneath the workdir root.
func (r *Repo) readConfigFile(name string) (*gitconfig.Config, error) {
	b, err := r.readControl(name)
	if err != nil {
		return nil, err
	}
	c := gitconfig.New()
	if b != nil {
		if err := gitconfig.NewDecoder(bytes.NewReader(b)).Decode(c); err != nil {
			return nil, errs.At(errs.RepoUnsupported, r.w.Alias(), "", fmt.Sprintf("has a %s that cannot be parsed", name))
		}
	}
	return c, nil
}

// readControl reads a control file beneath the root; nil, nil when absent.
func (r *Repo) readControl(name string) ([]byte, error) {
	f, err := r.ctl.Open(name)
	if errs.CodeOf(err) == errs.PathNotFound || errs.CodeOf(err) == errs.NotADirectory {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxConfigBytes {
		return nil, errs.At(errs.RepoUnsupported, r.w.Alias(), "", fmt.Sprintf("%s is larger than %d bytes", name, maxConfigBytes))
	}
	return b, nil
}

// get returns the last value of section[.subsection].key across the
// configuration files.
func (r *Repo) get(section, subsection, key string) string {
	for i := len(r.cfg) - 1; i >= 0; i-- {
		if v := r.getIn(r.cfg[i].c, section, subsection, key); v != "" {
			return v
		}
	}
	return ""
}

func (r *Repo) getIn(c *gitconfig.Config, section, subsection, key string) string {
	if !c.HasSection(section) {
		return ""
	}
	s := c.Section(section)
	if subsection == "" {
		return s.Option(key)
	}
	if !s.HasSubsection(subsection) {
		return ""
	}
	return s.Subsection(subsection).Option(key)
}

// parseBool reads a git boolean ("true", "yes", "on", "1", ...).
func parseBool(v string, def bool) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1":
		return true
	case "false", "no", "off", "0", "":
		if v == "" {
			return def
		}
		return false
	}
	return def
}

// headInfo is what HEAD points at.
type headInfo struct {
	branch string        // short branch name; "" when detached
	commit plumbing.Hash // zero before the first commit
}

func (r *Repo) head() (headInfo, error) {
	b, err := r.readControl(".git/HEAD")
	if err != nil {
		return headInfo{}, err
	}
	s := strings.TrimSpace(string(b))
	if ref, ok := strings.CutPrefix(s, "ref: "); ok {
		h := headInfo{branch: strings.TrimPrefix(ref, "refs/heads/")}
		resolved, err := r.storage.Reference(plumbing.ReferenceName(ref))
		if err == plumbing.ErrReferenceNotFound {
			return h, nil // unborn branch
		}
		if err != nil {
			return h, fmt.Errorf("resolving %s: %w", ref, err)
		}
		if resolved.Type() == plumbing.SymbolicReference {
			return h, errs.At(errs.RepoUnsupported, r.w.Alias(), "", "HEAD's branch is itself a symbolic reference")
		}
		h.commit = resolved.Hash()
		return h, nil
	}
	if !plumbing.IsHash(s) {
		return headInfo{}, errs.At(errs.RepoUnsupported, r.w.Alias(), "", "has an unreadable .git/HEAD")
	}
	return headInfo{commit: plumbing.NewHash(s)}, nil
}

// sameDirs are directories whose index entries equal HEAD's.
type sameDirs map[string]bool

// covers reports whether path lies in one of the directories.
func (s sameDirs) covers(path string) bool {
	if len(s) == 0 {
		return false
	}
	if s[""] {
		return true
	}
	for i := 0; i < len(path); i++ {
		if path[i] == '/' && s[path[:i]] {
			return true
		}
	}
	return false
}

// headTreeExcept flattens HEAD's tree like headTree, but does not descend
// into a directory whose valid cache-tree node has HEAD's tree id for it:
// those directories are returned in same.
func (r *Repo) headTreeExcept(ctx context.Context, commit plumbing.Hash, cache map[string]plumbing.Hash) (map[string]treeEntry, sameDirs, error) {
	out, same := map[string]treeEntry{}, sameDirs{}
	if commit.IsZero() {
		return out, same, nil
	}
	c, err := r.getCommit(commit)
	if err != nil {
		return nil, nil, err
	}
	n := 0
	var walk func(h plumbing.Hash, prefix string) error
	walk = func(h plumbing.Hash, prefix string) error {
		if ch, ok := cache[prefix]; ok && ch == h {
			same[prefix] = true
			return nil
		}
		if h == emptyTree {
			return nil
		}
		if n++; n%64 == 0 && ctx.Err() != nil {
			return canceled(r.w.Alias())
		}
		t, err := r.getTree(h)
		if err != nil {
			return err
		}
		for _, e := range t.Entries {
			p := e.Name
			if prefix != "" {
				p = prefix + "/" + e.Name
			}
			if e.Mode == filemode.Dir {
				if err := walk(e.Hash, p); err != nil {
					return err
				}
				continue
			}
			out[p] = treeEntry{hash: e.Hash, mode: e.Mode}
		}
		return nil
	}
	if err := walk(c.TreeHash, ""); err != nil {
		return nil, nil, err
	}
	return out, same, nil
}

// emptyTree is the id of the tree with no entries, which git knows
// without storing it.
var emptyTree = plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")

type treeEntry struct {
	hash plumbing.Hash
	mode filemode.FileMode
}

// maxIndexBytes bounds the index read into memory (50,000 entries take
// about 5 MB).
const maxIndexBytes = 256 << 20

// readIndex decodes .git/index (an absent one is empty) and returns the
// index file's stat (for racily clean entries).
func (r *Repo) readIndex() (*indexfile.File, sfs.StatData, error) {
	f, err := r.ctl.Open(".git/index")
	if errs.CodeOf(err) == errs.PathNotFound {
		return &indexfile.File{Version: 2}, sfs.StatData{}, nil
	}
	if err != nil {
		return nil, sfs.StatData{}, err
	}
	defer f.Close()
	st, err := f.Fstat()
	if err != nil {
		return nil, st, err
	}
	if st.Size > maxIndexBytes {
		return nil, st, errs.At(errs.RepoUnsupported, r.w.Alias(), "", "has an index larger than 256 MiB")
	}
	b := make([]byte, st.Size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, st, err
	}
	idx, err := indexfile.Decode(b)
	if err != nil {
		return nil, st, errs.At(errs.RepoUnsupported, r.w.Alias(), "", "has an index ServerFS cannot read ("+err.Error()+")")
	}
	return idx, st, nil
}

func canceled(alias string) error {
	return errs.At(errs.Canceled, alias, "", "the repository status did not finish in time")
}

// visible reports whether the policy lets agents see path.
func (r *Repo) visible(path string) bool {
	comps := strings.Split(path, "/")
	p := r.fs.Policy()
	if !p.AllowHidden() {
		for _, c := range comps {
			if sfs.IsHidden(c) {
				return false
			}
		}
	}
	return !p.Denied(comps)
}

// treeEntriesAt looks up only the given paths in a tree (path -> blob or
