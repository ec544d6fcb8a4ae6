package errs

// Repository and history codes: the repository tools, commits and the history reads.
const (
	// RepoOpsDisabled: the operator did not enable the repository
	// tools on this workdir (WORKDIR_NN_REPO_OPS_ENABLED).
	RepoOpsDisabled Code = "REPO_OPS_DISABLED"
	// RepoNotFound: the workdir's root is not a git work tree.
	RepoNotFound Code = "REPO_NOT_FOUND"
	// RepoUnsupported: a repository ServerFS cannot handle exactly
	// like git (the message says why); it answers nothing rather than a
	// possibly wrong answer.
	RepoUnsupported Code = "REPO_UNSUPPORTED"

	// RepoLocked: another git process holds .git/index.lock or the
	// branch's ref lock; nothing was changed.
	RepoLocked Code = "REPO_LOCKED"
	// RepoBusy: a merge, rebase, cherry-pick or revert is in progress,
	// or the index holds unmerged paths.
	RepoBusy Code = "REPO_OPERATION_IN_PROGRESS"
	// RepoStagedChanges: the index already differs from HEAD; a
	// commit would include changes the caller did not name (a release
	// action: the tree is not clean).
	RepoStagedChanges Code = "REPO_STAGED_CHANGES"
	// NothingToCommit: the named paths do not change HEAD.
	NothingToCommit Code = "NOTHING_TO_COMMIT"
	// RepoIdentityMissing: no user.name or user.email in any git
	// configuration file.
	RepoIdentityMissing Code = "REPO_IDENTITY_MISSING"
	// GitPathRejected: a commit would record a path git refuses (git
	// fsck's tree rules, or verify_path's: a .git spelling, a symlinked
	// .gitmodules, ...), or a .gitmodules or .gitattributes whose content
	// git fsck rejects; the message names the rule. Nothing changed.
	GitPathRejected Code = "GIT_PATH_REJECTED"

	// RevNotFound: a log, show or blame revision names no branch,
	// tag or commit (or a commit id prefix is ambiguous, or HEAD is
	// unborn).
	RevNotFound Code = "REV_NOT_FOUND"
	// RepoIncomplete: an object the answer needs is missing from the
	// repository (a partial clone, or a damaged object store).
	RepoIncomplete Code = "REPO_INCOMPLETE"
)
