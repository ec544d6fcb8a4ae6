package git

import (
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/serverfs/serverfs/git/internal/refs"
	"github.com/serverfs/serverfs/internal/errs"
)

// updateRef moves the branch HEAD is on (or HEAD itself when detached)
// from h.commit to next, with reflog entries for the ref and HEAD.
func (r *Repo) updateRef(h headInfo, next plumbing.Hash, who object.Signature, msg string) error {
	alias := r.w.Alias()
	ref := "HEAD"
	if h.branch != "" {
		ref = "refs/heads/" + h.branch
		if !refs.ValidName(ref) {
			return errs.At(errs.RepoUnsupported, alias, "", "HEAD points at a branch name ServerFS does not write")
		}
	}
	unchanged := func() error {
		now, err := r.head()
		if err != nil {
			return err
		}
		if now.branch != h.branch || now.commit != h.commit {
			return errs.At(errs.RepoLocked, alias, "", "HEAD moved while the commit was being made (another git process?); nothing was committed")
		}
		return nil
	}
	return r.moveRef(ref, next, unchanged, ref != "HEAD", refs.Line(h.commit, next, who, msg))
}

// moveRef is refs.Move in this repository, its reflog written as
// core.logAllRefUpdates says (default true in a repository with a work
// tree).
func (r *Repo) moveRef(ref string, next plumbing.Hash, unchanged func() error, alsoHead bool, line string) error {
	return refs.Move(r.ctl, r.w.Alias(), ref, next, unchanged, alsoHead, parseBool(r.get("core", "", "logallrefupdates"), true), line)
}
