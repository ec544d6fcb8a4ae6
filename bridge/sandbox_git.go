package bridge

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/serverfs/serverfs/bridge/internal/sandbox"

	"golang.org/x/sys/unix"
)

// A mutating process may write its work tree but never its .git (the
// repository's config, hooks and refs are what the bridge's own git
// push, unsandboxed and with the operator's credentials, later obeys).
//
// sandbox.GitByMount: the helper starts in a user and mount namespace of its
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
// sandbox.GitByLandlock, where the kernel refuses the namespace (user
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
// sandbox.GitByLandlock, so that no repository appears that push would later
// use; a workspace tree, which never has one and whose .git no tool
// reaches, needs neither.

// namespacesDisabled keeps the helper out of namespaces (tests play a
// kernel that refuses user namespaces).
var namespacesDisabled atomic.Bool

// gitProtection is how a mutating process's .git in root is kept
// read-only ("" when there is nothing to protect): bound read-only in
// the helper's mount namespace (ns) when it is a directory or a file,
// else by Landlock.
func gitProtection(root string, workspace, ns bool) string {
	st, err := os.Lstat(filepath.Join(root, ".git"))
	switch {
	case err != nil && errors.Is(err, os.ErrNotExist) && workspace:
		return ""
	case err == nil && (st.IsDir() || st.Mode().IsRegular()) && ns:
		return sandbox.GitByMount
	}
	return sandbox.GitByLandlock
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
