package git

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/serverfs/serverfs/git/internal/odb"
	"github.com/serverfs/serverfs/git/internal/pack"
	"github.com/serverfs/serverfs/internal/errs"
)

// maxStructObjectBytes bounds a commit, tree or tag read (a tree of
// about 400,000 entries); blobs have the caps of the calls reading them
// (openBlob).
const maxStructObjectBytes = 16 << 20

// objectStorer is go-git's storage as git/ uses it: objects (commits,
// trees and tags, decoded by go-git) and references.
type objectStorer interface {
	storer.EncodedObjectStorer
	Reference(plumbing.ReferenceName) (*plumbing.Reference, error)
	HashesWithPrefix(prefix []byte) ([]plumbing.Hash, error)
}

// wrapObjectStorer wraps every objectStorer a Repo reads through (tests
// install one that fails on any blob read through it).
var wrapObjectStorer = func(s objectStorer) objectStorer { return s }

// sizedStorage is go-git's filesystem storage for references, its
// objects read by ServerFS (open: sizes from headers first, nothing over
// maxStructObjectBytes inflated, blobs of any size streamed) and decoded
// by go-git from memory: go-git's own object reading inflates a loose
// object whole when it is looked up, a packed delta's whole data to learn
// its size, a small delta's base whole whatever its size.
type sizedStorage struct {
	*filesystem.Storage
	r *Repo
}

// newStorage is the repository's storage.
func (r *Repo) newStorage() objectStorer {
	st := filesystem.NewStorage(&controlFS{c: r.ctl, root: ".git"}, cache.NewObjectLRUDefault())
	return wrapObjectStorer(&sizedStorage{Storage: st, r: r})
}

func (s *sizedStorage) EncodedObject(t plumbing.ObjectType, id plumbing.Hash) (plumbing.EncodedObject, error) {
	o, err := s.r.open(id, maxStructObjectBytes, true)
	if size, ok := tooLargeSize(err); ok {
		what := t.String()
		if t == plumbing.AnyObject {
			what = "object"
		}
		return nil, errs.At(errs.RepoUnsupported, s.r.w.Alias(), "", fmt.Sprintf("has a %s %s of %d bytes, more than ServerFS reads (%d MiB)", what, id, size, maxStructObjectBytes>>20))
	}
	if err != nil {
		return nil, err
	}
	data, err := o.readAll()
	if err != nil {
		return nil, err
	}
	if t != plumbing.AnyObject && o.typ != t {
		return nil, plumbing.ErrObjectNotFound // as go-git answers
	}
	return knownObject{id, &pack.Object{Type: o.typ, Data: data}}, nil
}

func (s *sizedStorage) HasEncodedObject(id plumbing.Hash) error {
	if !s.r.objs.Has(id) {
		return plumbing.ErrObjectNotFound
	}
	return nil
}

func (s *sizedStorage) EncodedObjectSize(id plumbing.Hash) (int64, error) {
	return s.r.objs.HeaderSize(id)
}

// objectErr is the one answer for an object that could not be read (kind
// names it: "commit", "tree", "blob"): REPO_INCOMPLETE when the object is
// missing (a partial or shallow clone, objects kept in alternates) or
// damaged (git fsck would report it), REPO_UNSUPPORTED when it is in a
// form ServerFS does not read; ServerFS errors pass unchanged.
func (r *Repo) objectErr(kind string, id plumbing.Hash, err error) error {
	alias := r.w.Alias()
	var se *errs.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return err
	case errors.Is(err, plumbing.ErrObjectNotFound):
		if r.hasAlternates() {
			return errs.At(errs.RepoIncomplete, alias, "", fmt.Sprintf("lacks the %s %s in its own object store: it borrows objects from another repository (objects/info/alternates, as git clone --shared or --reference leave it), which ServerFS does not read; git repack -a -d there copies them in", kind, id)).Wrap(err)
		}
		return errs.At(errs.RepoIncomplete, alias, "", fmt.Sprintf("lacks the %s %s (a partial clone or a damaged object store); git would fail here too", kind, id)).Wrap(err)
	case isDamage(err):
		return errs.At(errs.RepoIncomplete, alias, "", fmt.Sprintf("has a damaged %s %s (its stored data does not read back); git fsck reports it", kind, id)).Wrap(err)
	case errors.Is(err, odb.ErrDeltaReread):
		return errs.At(errs.RepoUnsupported, alias, "", fmt.Sprintf("stores the %s %s as a pack delta whose copies go back in its base more than ServerFS inflates again; git repack -adf stores it anew", kind, id)).Wrap(err)
	}
	return errs.At(errs.RepoUnsupported, alias, "", fmt.Sprintf("has a %s %s that ServerFS cannot read", kind, id)).Wrap(err)
}

// isDamage reports whether err says an object's stored form is broken
// (ours, or what go-git and compress/zlib answer for it).
func isDamage(err error) bool {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, errObjectDamaged), errors.As(err, &corrupt),
		errors.Is(err, zlib.ErrChecksum), errors.Is(err, zlib.ErrHeader), errors.Is(err, zlib.ErrDictionary),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, objfile.ErrHeader), errors.Is(err, objfile.ErrNegativeSize),
		errors.Is(err, packfile.ErrInvalidDelta), errors.Is(err, packfile.ErrDeltaCmd),
		errors.Is(err, plumbing.ErrInvalidType):
		return true
	}
	var pe *packfile.Error
	return errors.As(err, &pe) || errors.Is(err, object.ErrMalformedTree) || errors.Is(err, object.ErrMalformedCommit) ||
		errors.Is(err, object.ErrMalformedTag) || errors.Is(err, object.ErrUnsupportedObject) || errors.Is(err, idxfile.ErrMalformedIdxFile)
}

// getCommit reads and decodes commit id (kind names it in errors).
func (r *Repo) getCommit(id plumbing.Hash) (*object.Commit, error) {
	c, err := object.GetCommit(r.storage, id)
	if err != nil {
		return nil, r.objectErr("commit", id, err)
	}
	return c, nil
}

// getTree reads and decodes tree id.
func (r *Repo) getTree(id plumbing.Hash) (*object.Tree, error) {
	t, err := object.GetTree(r.storage, id)
	if err != nil {
		return nil, r.objectErr("tree", id, err)
	}
	return t, nil
}

// loadReplaced reads the objects refs/replace names, loose and packed,
// unless core.useReplaceRefs is false (git then ignores them).
func (r *Repo) loadReplaced() error {
	if !parseBool(r.get("core", "", "usereplacerefs"), true) {
		return nil
	}
	add := func(name string) {
		if id, ok := strings.CutPrefix(name, "refs/replace/"); ok && plumbing.IsHash(id) {
			r.objs.Replace(plumbing.NewHash(id))
		}
	}
	ents, _, err := r.ctl.ReadDir(".git/refs/replace", maxStorageDirEntries)
	if err == nil {
		for _, e := range ents {
			add("refs/replace/" + e.Name)
		}
	}
	f, err := r.ctl.Open(".git/packed-refs")
	if err != nil {
		return nil
	}
	defer f.Close()
	// packed-refs may be large: scanned line by line, never held whole.
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		if _, name, ok := strings.Cut(sc.Text(), " "); ok {
			add(name)
		}
	}
	return nil
}

// packScope gives the request a pack reader (r.pack, with its caches,
// its packs open) until done; within a scope, a scope is the same one.
func (r *Repo) packScope() (done func()) {
	if r.pack != nil {
		return func() {}
	}
	r.pack = pack.Open(r.ctl)
	return func() {
		r.pack.Close()
		r.pack = nil
	}
}

// knownObject is a pack.Object as a go-git EncodedObject whose id is the
// one it was looked up by (not computed again).
type knownObject struct {
	id plumbing.Hash
	*pack.Object
}

func (o knownObject) Hash() plumbing.Hash             { return o.id }
func (o knownObject) Type() plumbing.ObjectType       { return o.Object.Type }
func (o knownObject) SetType(plumbing.ObjectType)     {}
func (o knownObject) Size() int64                     { return int64(len(o.Data)) }
func (o knownObject) SetSize(int64)                   {}
func (o knownObject) Writer() (io.WriteCloser, error) { return nil, errReadOnly }
func (o knownObject) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.Data)), nil
}

// errObjectDamaged marks an object whose stored form cannot be read
// (pack.ErrDamaged, which the pack reader and the object store answer
// too).
var errObjectDamaged = pack.ErrDamaged

func damaged(format string, args ...any) error { return pack.Damaged(format, args...) }

// hasAlternates reports whether the object store borrows objects from
// others (objects/info/alternates, as git clone --shared and --reference
// leave it), which ServerFS does not read.
func (r *Repo) hasAlternates() bool {
	b, err := r.readControl(".git/objects/info/alternates")
	return err == nil && len(bytes.TrimSpace(b)) > 0
}
