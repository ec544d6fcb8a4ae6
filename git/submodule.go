package git

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git/internal/refs"
	"github.com/serverfs/serverfs/internal/errs"
)

// Submodules (gitlinks): the commit a submodule's checkout is at, read
// the way git's resolve_gitlink_ref does, from the checkout's .git
// directory or from the directory a .git file names ("gitdir: ..", the
// layout git submodule has used since 1.7.8, normally beneath the
// superproject's .git/modules). Only what lies beneath the workdir root
// is read, through the control reader.

// submoduleGitDir returns the git directory of the checkout at dir
// (workdir-relative), or "" when dir holds no repository (a plain
// directory: a submodule not checked out).
func (r *Repo) submoduleGitDir(dir string) (string, error) {
	dotgit := dir + "/.git"
	st, err := r.ctl.Lstat(dotgit)
	switch {
	case errs.CodeOf(err) == errs.PathNotFound || errs.CodeOf(err) == errs.NotADirectory:
		return "", nil
	case err != nil:
		return "", err
	case st.Type() == sfs.TypeDirectory:
		return dotgit, nil
	case st.Type() != sfs.TypeFile:
		return "", nil // a symlink or special file: git would not take it either way we can follow
	}
	b, err := r.readControl(dotgit)
	if err != nil || b == nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	target, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "gitdir: ")
	if !ok || target == "" {
		return "", nil // not a gitfile: not a repository
	}
	if strings.HasPrefix(target, "/") {
		return "", errs.At(errs.RepoUnsupported, r.w.Alias(), "", fmt.Sprintf(
			"has a submodule at %q whose .git file names an absolute git directory; ServerFS reads submodule repositories only beneath the workdir root (relative gitdir, as git submodule writes it)", dir))
	}
	gd := path.Clean(path.Join(dir, target))
	if gd == ".." || strings.HasPrefix(gd, "../") || gd == "." {
		return "", errs.At(errs.RepoUnsupported, r.w.Alias(), "", fmt.Sprintf(
			"has a submodule at %q whose .git file names a git directory outside the workdir", dir))
	}
	return gd, nil
}

// submoduleHead returns the commit the checkout at dir has checked out;
// ok is false when dir is not a repository or its HEAD is unborn (git
// then compares nothing: the gitlink counts as unchanged).
func (r *Repo) submoduleHead(dir string) (plumbing.Hash, bool, error) {
	gd, err := r.submoduleGitDir(dir)
	if gd == "" || err != nil {
		return plumbing.ZeroHash, false, err
	}
	// A linked worktree's refs live in its common directory.
	common := gd
	if b, err := r.readControl(gd + "/commondir"); err != nil {
		return plumbing.ZeroHash, false, err
	} else if b != nil {
		c := strings.TrimSpace(string(b))
		if strings.HasPrefix(c, "/") {
			return plumbing.ZeroHash, false, nil
		}
		common = path.Clean(path.Join(gd, c))
		if common == ".." || strings.HasPrefix(common, "../") {
			return plumbing.ZeroHash, false, nil
		}
	}
	ref := "HEAD"
	for range 5 {
		dirOf := common
		if ref == "HEAD" {
			dirOf = gd
		}
		b, err := r.readControl(dirOf + "/" + ref)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		if b == nil && ref != "HEAD" {
			b, err = r.packedRef(common, ref)
			if err != nil {
				return plumbing.ZeroHash, false, err
			}
		}
		if b == nil {
			return plumbing.ZeroHash, false, nil // unborn, or not a repository
		}
		s := strings.TrimSpace(string(b))
		if next, ok := strings.CutPrefix(s, "ref: "); ok {
			if !refs.ValidName(next) {
				return plumbing.ZeroHash, false, nil
			}
			ref = next
			continue
		}
		if !plumbing.IsHash(s) {
			return plumbing.ZeroHash, false, nil
		}
		return plumbing.NewHash(s), true, nil
	}
	return plumbing.ZeroHash, false, nil
}

// packedRef looks ref up in gd/packed-refs; nil when absent.
func (r *Repo) packedRef(gd, ref string) ([]byte, error) {
	b, err := r.readControl(gd + "/packed-refs")
	if err != nil || b == nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxConfigBytes)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		hash, name, ok := strings.Cut(line, " ")
		if ok && name == ref {
			return []byte(hash), nil
		}
	}
	return nil, nil
}

// subprojectText is a gitlink's content as git's diff shows it.
func subprojectText(h plumbing.Hash) []byte {
	return []byte("Subproject commit " + h.String() + "\n")
}
