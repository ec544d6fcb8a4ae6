// Package refs writes git refs and their reflogs as git does (under the
// ref's lock file, checked unchanged, fsynced, renamed into place), and
// says which ref names ServerFS writes.
package refs

import (
	"fmt"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// Move writes next into ref of the repository ctl holds (workdir alias)
// the way git does: under "<ref>.lock" (created exclusively; a running git
// holds it), only if unchanged, run under the lock, finds the ref still at
// the value read before; fsynced, renamed into place, then line appended
// to the ref's reflog (and HEAD's when alsoHead), when git would:
// logAllRefUpdates (core.logAllRefUpdates) or the log exists.
func Move(ctl *sfs.Control, alias, ref string, next plumbing.Hash, unchanged func() error, alsoHead, logAllRefUpdates bool, line string) error {
	file := ".git/" + ref
	if err := ctl.MkdirAll(path.Dir(file), 0o755); err != nil {
		return err
	}
	lock, err := ctl.CreateExclusive(file+".lock", 0o644)
	if errs.CodeOf(err) == errs.PathExists {
		return errs.At(errs.RepoLocked, alias, "", fmt.Sprintf("is locked by another git process (%s.lock exists); try again", ref))
	}
	if err != nil {
		return err
	}
	done := false
	defer func() {
		lock.Close()
		if !done {
			ctl.Remove(file + ".lock")
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
	if err := ctl.Rename(file+".lock", file); err != nil {
		return err
	}
	done = true
	if err := ctl.SyncDir(path.Dir(file)); err != nil {
		return err
	}
	logs := []string{".git/logs/" + ref}
	if alsoHead {
		logs = append(logs, ".git/logs/HEAD")
	}
	for _, l := range logs {
		if err := appendReflog(ctl, l, line, logAllRefUpdates); err != nil {
			return err
		}
	}
	return nil
}

// Line is one reflog entry for a move from old to next.
func Line(old, next plumbing.Hash, who object.Signature, msg string) string {
	return fmt.Sprintf("%s %s %s <%s> %d %s\t%s\n", old, next, who.Name, who.Email, who.When.Unix(), who.When.Format("-0700"), strings.ReplaceAll(msg, "\n", " "))
}

// appendReflog appends one entry when git would: logAllRefUpdates, or
// the log exists.
func appendReflog(ctl *sfs.Control, name, line string, logAllRefUpdates bool) error {
	if !logAllRefUpdates {
		if _, err := ctl.Lstat(name); err != nil {
			return nil
		}
	}
	if err := ctl.MkdirAll(path.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := ctl.OpenAppend(name, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write([]byte(line)); err != nil {
		return err
	}
	return f.Sync()
}

// ValidName is a conservative subset of git check-ref-format.
func ValidName(ref string) bool {
	for _, c := range strings.Split(ref, "/") {
		if c == "" || c == "." || c == ".." || strings.HasPrefix(c, ".") || strings.HasSuffix(c, ".lock") {
			return false
		}
	}
	return !strings.ContainsAny(ref, " ~^:?*[\\\x7f") && !strings.Contains(ref, "..") && !strings.Contains(ref, "@{")
}
