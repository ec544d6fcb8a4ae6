package errs

// Workspace and merge queue codes.
const (
	// WorkspaceLimit: the workdir has as many active workspaces as
	// SERVERFS_WORKSPACE_LIMIT allows; discard one first. Nothing was
	// created.
	WorkspaceLimit Code = "WORKSPACE_LIMIT"
	// WorkspaceTooLarge: the checkout of the base has more files or
	// bytes than SERVERFS_WORKSPACE_MAX_FILES / _MAX_BYTES allow, or did
	// not finish in time; nothing was kept.
	WorkspaceTooLarge Code = "WORKSPACE_TOO_LARGE"

	// Merge queue codes.

	// BaseMoved: a strict submit whose base is no longer the head of
	// the target branch; the branch did not move. Resubmit with replay,
	// or from a workspace at the new head.
	BaseMoved Code = "BASE_MOVED"
	// MergeConflict: a replay submit whose changes conflict with the
	// branch's; the branch did not move. The answer lists the files and
	// hunks.
	MergeConflict Code = "MERGE_CONFLICT"
	// PatchMismatch: a patch whose content address (sha256) or
	// metadata does not match the commits it names (tampered or
	// corrupted); nothing was merged.
	PatchMismatch Code = "PATCH_MISMATCH"
)
