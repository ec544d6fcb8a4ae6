package git

import (
	"fmt"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	sfs "github.com/serverfs/serverfs/fs"
)

// updateRef moves the branch HEAD is on (or HEAD itself when detached)
// from h.commit to next, with reflog entries for the ref and HEAD.
func (r *Repo) updateRef(h headInfo, next plumbing.Hash, who object.Signature, msg string) error {
	alias := r.w.Alias()
	ref := "HEAD"
	if h.branch != "" {
		ref = "refs/heads/" + h.branch
		if !validRefName(ref) {
			return repoErr(sfs.CodeRepoUnsupported, alias, "HEAD points at a branch name ServerFS does not write")
		}
	}
	unchanged := func() error {
		now, err := r.head()
		if err != nil {
			return err
		}
		if now.branch != h.branch || now.commit != h.commit {
			return repoErr(sfs.CodeRepoLocked, alias, "HEAD moved while the commit was being made (another git process?); nothing was committed")
		}
		return nil
	}
	return r.moveRef(ref, next, unchanged, ref != "HEAD", reflogLine(h.commit, next, who, msg))
}

// moveRef writes next into ref the way git does: under "<ref>.lock"
// (created exclusively; a running git holds it), only if unchanged, run
// under the lock, finds the ref still at the value read before; fsynced,
// renamed into place, then line appended to the ref's reflog (and HEAD's
// when alsoHead).
func (r *Repo) moveRef(ref string, next plumbing.Hash, unchanged func() error, alsoHead bool, line string) error {
	alias := r.w.Alias()
	file := ".git/" + ref
	if err := r.ctl.MkdirAll(path.Dir(file), 0o755); err != nil {
		return err
	}
	lock, err := r.ctl.CreateExclusive(file+".lock", 0o644)
	if sfs.CodeOf(err) == sfs.CodePathExists {
		return repoErr(sfs.CodeRepoLocked, alias, fmt.Sprintf("is locked by another git process (%s.lock exists); try again", ref))
	}
	if err != nil {
		return err
	}
	done := false
	defer func() {
		lock.Close()
		if !done {
			r.ctl.Remove(file + ".lock")
		}
	}()
	if err := unchanged(); err != nil {
		return err
	}
	if _, err := lock.Write([]byte(next.String() + "\n")); err != nil {
		return err
	}
	if err := lock.Sync(); err != nil {
		return err
	}
	if err := lock.Close(); err != nil {
		return err
	}
	if err := r.ctl.Rename(file+".lock", file); err != nil {
		return err
	}
	done = true
	r.ctl.SyncDir(path.Dir(file))
	logs := []string{".git/logs/" + ref}
	if alsoHead {
		logs = append(logs, ".git/logs/HEAD")
	}
	for _, l := range logs {
		if err := r.appendReflog(l, line); err != nil {
			return err
		}
	}
	return nil
}

// reflogLine is one reflog entry for a move from old to next.
func reflogLine(old, next plumbing.Hash, who object.Signature, msg string) string {
	return fmt.Sprintf("%s %s %s <%s> %d %s\t%s\n", old, next, who.Name, who.Email, who.When.Unix(), who.When.Format("-0700"), strings.ReplaceAll(msg, "\n", " "))
}

// appendReflog appends one entry when git would: core.logAllRefUpdates
// (default true in a repository with a work tree), or the log exists.
func (r *Repo) appendReflog(name, line string) error {
	if !parseBool(r.get("core", "", "logallrefupdates"), true) {
		if _, err := r.ctl.Lstat(name); err != nil {
			return nil
		}
	}
	if err := r.ctl.MkdirAll(path.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := r.ctl.OpenAppend(name, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write([]byte(line)); err != nil {
		return err
	}
	return f.Sync()
}

// validRefName is a conservative subset of git check-ref-format.
func validRefName(ref string) bool {
	for _, c := range strings.Split(ref, "/") {
		if c == "" || c == "." || c == ".." || strings.HasPrefix(c, ".") || strings.HasSuffix(c, ".lock") {
			return false
		}
	}
	return !strings.ContainsAny(ref, " ~^:?*[\\\x7f") && !strings.Contains(ref, "..") && !strings.Contains(ref, "@{")
}
