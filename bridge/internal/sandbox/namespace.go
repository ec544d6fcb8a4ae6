package sandbox

import (
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"
)

// namespaceView (in the helper, PID 1 of its own user, mount and PID
// namespaces) makes every mount private, mounts a fresh /proc (only
// this action's processes), mounts over the masked paths, binds
// root/.git over itself read-only (s.Git == GitByMount, unless it is
// masked: then it is unreadable already) and re-enters the starting
// directory, s.Cwd relative to root, inside the namespace: the directory
// inherited from the parent belongs to its mount namespace.
func namespaceView(s Spec, masks []maskedPath) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting a fresh /proc: %w", err)
	}
	rootFD, err := unix.Open(s.Root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening the work tree: %w", err)
	}
	defer unix.Close(rootFD)
	if err := mountMasks(rootFD, masks); err != nil {
		return err
	}
	if s.Git == GitByMount && !slices.ContainsFunc(masks, func(m maskedPath) bool { return m.rel == ".git" }) {
		if err := bindGitReadonly(rootFD); err != nil {
			return err
		}
	}
	dir, err := unix.Openat2(rootFD, s.Cwd, &unix.OpenHow{
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

// bindGitReadonly binds .git of the tree at rootFD over itself,
// read-only.
func bindGitReadonly(rootFD int) error {
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
	return nil
}

// setLimits lowers the process's resource limits to s's (never raising
// one): RLIMIT_DATA for each process and, in the action's own user
// namespace, RLIMIT_NPROC, which the kernel counts per user per user
// namespace there, so that it bounds this action's processes alone
// (outside one it would count every process of the bridge's user).
func setLimits(s Spec) error {
	set := func(res int, v uint64, what string) error {
		var cur unix.Rlimit
		if err := unix.Getrlimit(res, &cur); err != nil {
			return fmt.Errorf("reading the %s limit: %w", what, err)
		}
		lim := unix.Rlimit{Cur: min(cur.Cur, v), Max: min(cur.Max, v)}
		if err := unix.Setrlimit(res, &lim); err != nil {
			return fmt.Errorf("setting the %s limit: %w", what, err)
		}
		return nil
	}
	if s.DataBytes > 0 {
		if err := set(unix.RLIMIT_DATA, s.DataBytes, "memory"); err != nil {
			return err
		}
	}
	if s.NS && s.Procs > 0 {
		return set(unix.RLIMIT_NPROC, s.Procs, "process")
	}
	return nil
}
