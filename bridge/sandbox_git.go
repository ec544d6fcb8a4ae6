package bridge

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// A mutating process may write its work tree but never its .git (the
// repository's config, hooks and refs are what the bridge's own git
// push, unsandboxed and with the operator's credentials, later obeys).
//
// gitByMount: the helper starts in a user and mount namespace of its
// own (its uid and gid mapped to themselves, CAP_SYS_ADMIN and
// CAP_SETPCAP as ambient capabilities there), makes every mount
// private, binds <root>/.git over itself read-only (open_tree's clone,
// which follows no symlink, made read-only with mount_setattr, which
// needs no remount and so trips over no locked flag), enters its
// directory again inside the namespace and drops every capability
// before Landlock. A mount point cannot be renamed or removed, hard
// links cannot cross it, and the process can neither mount nor unmount
// (Landlock refuses mounts; a new namespace would lock the bind).
//
// gitByLandlock, where the kernel refuses the namespace (user
// namespaces disabled or restricted, as by Ubuntu's
// apparmor_restrict_unprivileged_userns): Landlock's writable set is
// each top-level entry of the root but .git, and the root directory
// itself is read-only: the process cannot create, remove or rename a
// top-level entry (no new top-level file, no rename onto one).
//
// A .git that is a file (a gitdir pointer: a linked worktree, a
// submodule) is bound read-only in the same way; the repository it
// points to lies outside the work tree, where the process cannot
// write. A root without a .git (or with a .git symlink) gets
// gitByLandlock, so that no repository appears that push would later
// use; a workspace tree, which never has one and whose .git no tool
// reaches, needs neither.

// gitMountDisabled forces gitByLandlock (tests play a kernel that
// refuses user namespaces).
var gitMountDisabled atomic.Bool

// maxTopLevelEntries bounds the rules gitByLandlock adds.
const maxTopLevelEntries = 4096

// gitProtection is how a mutating process's .git in root is kept
// read-only ("" when there is nothing to protect).
func gitProtection(root string, workspace bool) string {
	st, err := os.Lstat(filepath.Join(root, ".git"))
	switch {
	case err != nil && errors.Is(err, os.ErrNotExist) && workspace:
		return ""
	case err == nil && (st.IsDir() || st.Mode().IsRegular()) && !gitMountDisabled.Load():
		return gitByMount
	}
	return gitByLandlock
}

// mountNamespaceRefused says whether a helper start in a user and mount
// namespace failed because the kernel refused the namespace.
func mountNamespaceRefused(err error) bool {
	for _, e := range []error{unix.EPERM, unix.EACCES, unix.ENOSPC, unix.EUSERS, unix.EINVAL, unix.ENOSYS} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// gitReadonlyMount (in the helper, in its own user and mount namespace)
// binds root/.git over itself read-only and re-enters the starting
// directory, cwd relative to root, inside the namespace: the directory
// inherited from the parent belongs to its mount namespace, where .git
// is writable.
func gitReadonlyMount(root, cwd string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening the work tree: %w", err)
	}
	defer unix.Close(rootFD)
	tree, err := unix.OpenTree(rootFD, ".git", unix.OPEN_TREE_CLONE|unix.O_CLOEXEC|unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW)
	if err != nil {
		return fmt.Errorf("cloning .git: %w", err)
	}
	defer unix.Close(tree)
	var want unix.Stat_t
	if err := unix.Fstat(tree, &want); err != nil {
		return err
	}
	if t := want.Mode & unix.S_IFMT; t != unix.S_IFDIR && t != unix.S_IFREG {
		return errors.New(".git is neither a directory nor a file")
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
		return fmt.Errorf("making .git read-only: %w", err)
	}
	if err := unix.MoveMount(tree, "", rootFD, ".git", unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("binding .git: %w", err)
	}
	// What the root's .git names now is that read-only tree.
	got, err := unix.Openat(rootFD, ".git", unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening the bound .git: %w", err)
	}
	defer unix.Close(got)
	var st unix.Stat_t
	var sfs unix.Statfs_t
	if unix.Fstat(got, &st) != nil || unix.Fstatfs(got, &sfs) != nil || st.Dev != want.Dev || st.Ino != want.Ino || sfs.Flags&unix.ST_RDONLY == 0 {
		return errors.New("the bound .git is not the read-only clone")
	}
	dir, err := unix.Openat2(rootFD, cwd, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return fmt.Errorf("entering the starting directory: %w", err)
	}
	defer unix.Close(dir)
	var old, cur unix.Stat_t
	if unix.Stat(".", &old) != nil || unix.Fstat(dir, &cur) != nil || old.Dev != cur.Dev || old.Ino != cur.Ino {
		return errors.New("the starting directory moved")
	}
	if err := unix.Fchdir(dir); err != nil {
		return fmt.Errorf("entering the starting directory: %w", err)
	}
	return nil
}

// addTopLevelRules (gitByLandlock) makes each top-level entry of root
// but .git writable: directories with RWDirs' rights, other files with
// RWFiles', within handled. Entries are opened beneath root without
// following symlinks; a symlink gets no rule (Landlock judges its
// target where it lies).
func addTopLevelRules(rulesetFD int, handled landlock.AccessFSSet, root string) error {
	const fileRW = llsyscall.AccessFSExecute | llsyscall.AccessFSReadFile | llsyscall.AccessFSWriteFile | llsyscall.AccessFSTruncate
	const dirRW = fileRW | llsyscall.AccessFSReadDir | llsyscall.AccessFSRemoveDir | llsyscall.AccessFSRemoveFile |
		llsyscall.AccessFSMakeChar | llsyscall.AccessFSMakeDir | llsyscall.AccessFSMakeReg | llsyscall.AccessFSMakeSock |
		llsyscall.AccessFSMakeFifo | llsyscall.AccessFSMakeBlock | llsyscall.AccessFSMakeSym
	d, err := os.OpenFile(root, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return fmt.Errorf("opening the work tree: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(maxTopLevelEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("listing the work tree: %w", err)
	}
	if len(names) > maxTopLevelEntries {
		return fmt.Errorf("the work tree has more than %d top-level entries", maxTopLevelEntries)
	}
	for _, name := range names {
		if name == ".git" {
			continue
		}
		fd, err := unix.Openat(int(d.Fd()), name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("opening a top-level entry: %w", err)
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		access := uint64(0)
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
		case unix.S_IFDIR:
			access = uint64(dirRW) & uint64(handled)
		default:
			access = uint64(fileRW) & uint64(handled)
		}
		if err == nil && access != 0 {
			err = llsyscall.LandlockAddPathBeneathRule(rulesetFD, &llsyscall.PathBeneathAttr{ParentFd: fd, AllowedAccess: access}, 0)
		}
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("landlock rule for a top-level entry: %w", err)
		}
	}
	return nil
}
