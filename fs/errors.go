package fs

import (
	"errors"
	"fmt"
)

// Code is a stable, machine-readable error code. Every error ServerFS returns
// to an agent carries exactly one Code; the protocol layer renders it as
// "CODE: message". This file is the one place codes are defined.
type Code string

// The error codes, by domain: paths and reads first, then writes,
// repositories, history, the bridge, releases, workspaces, grants, HTTP,
// admission and the merge queue.
const (
	CodeWorkdirNotFound         Code = "WORKDIR_NOT_FOUND"
	CodePathNotFound            Code = "PATH_NOT_FOUND"
	CodeNotADirectory           Code = "NOT_A_DIRECTORY"
	CodeNotAFile                Code = "NOT_A_FILE"
	CodeAccessDenied            Code = "ACCESS_DENIED"
	CodePathOutsideWorkdir      Code = "PATH_OUTSIDE_WORKDIR"
	CodeSymlinkNotAllowed       Code = "SYMLINK_NOT_ALLOWED"
	CodeHiddenPathNotAllowed    Code = "HIDDEN_PATH_NOT_ALLOWED"
	CodeDeniedPath              Code = "DENIED_PATH"
	CodeBinaryFile              Code = "BINARY_FILE"
	CodeUnsupportedTextEncoding Code = "UNSUPPORTED_TEXT_ENCODING"
	CodeUnsupportedFileType     Code = "UNSUPPORTED_FILE_TYPE"
	CodeReadLimitExceeded       Code = "READ_LIMIT_EXCEEDED"
	CodeLineTooLarge            Code = "LINE_TOO_LARGE"
	CodeSearchTimeout           Code = "SEARCH_TIMEOUT"
	CodeSearchLimitReached      Code = "SEARCH_LIMIT_REACHED"

	// CodeInvalidPath: the path text itself is unusable (absolute, NUL,
	// backslash, not UTF-8, too long).
	CodeInvalidPath Code = "INVALID_PATH"
	// CodeInvalidArgument: a numeric or enum argument is out of range.
	CodeInvalidArgument Code = "INVALID_ARGUMENT"
	// CodeInvalidPattern: a glob pattern does not compile or is too long.
	CodeInvalidPattern Code = "INVALID_PATTERN"
	// CodeLineOutOfRange: read start_line is past the last line.
	CodeLineOutOfRange Code = "LINE_OUT_OF_RANGE"
	// CodeDirectoryTooLarge: a directory holds more entries than
	// SERVERFS_MAX_WALK_ENTRIES, so it cannot be listed in a stable order.
	CodeDirectoryTooLarge Code = "DIRECTORY_TOO_LARGE"
	// CodeCanceled: the request was cancelled or ran out of time.
	CodeCanceled Code = "CANCELED"

	// Write codes.

	// CodeWorkdirReadOnly: a write on a workdir the operator did not mark rw.
	CodeWorkdirReadOnly Code = "WORKDIR_READ_ONLY"
	// CodeRevisionMismatch: expected_revision is not the file's current
	// revision (or a create found the target present); nothing changed.
	CodeRevisionMismatch Code = "REVISION_MISMATCH"
	// CodeEditNotFound: an edit's old_text does not occur in the file.
	CodeEditNotFound Code = "EDIT_NOT_FOUND"
	// CodeEditAmbiguous: an edit's old_text occurs more than once.
	CodeEditAmbiguous Code = "EDIT_AMBIGUOUS"
	// CodePathExists: the destination of a create or move already exists.
	CodePathExists Code = "PATH_EXISTS"
	// CodeDirectoryNotEmpty: delete_path on a directory with entries.
	CodeDirectoryNotEmpty Code = "DIRECTORY_NOT_EMPTY"
	// CodeWriteLimitExceeded: new content, or the file being changed, is
	// larger than SERVERFS_MAX_WRITE_BYTES.
	CodeWriteLimitExceeded Code = "WRITE_LIMIT_EXCEEDED"
	// CodeInvalidContent: content to write is not UTF-8 text without NUL.
	CodeInvalidContent Code = "INVALID_CONTENT"
	// CodeNoSpace: the filesystem is full or the quota is exhausted.
	CodeNoSpace Code = "NO_SPACE"
	// CodeLeaseBusy: another write holds the workdir's writer lease for
	// longer than a request may wait.
	CodeLeaseBusy Code = "LEASE_BUSY"

	// Repository codes.

	// CodeRepoOpsDisabled: the operator did not enable the repository
	// tools on this workdir (WORKDIR_NN_REPO_OPS_ENABLED).
	CodeRepoOpsDisabled Code = "REPO_OPS_DISABLED"
	// CodeRepoNotFound: the workdir's root is not a git work tree.
	CodeRepoNotFound Code = "REPO_NOT_FOUND"
	// CodeRepoUnsupported: a repository ServerFS cannot handle exactly
	// like git (the message says why); it answers nothing rather than a
	// possibly wrong answer.
	CodeRepoUnsupported Code = "REPO_UNSUPPORTED"

	// CodeRepoLocked: another git process holds .git/index.lock or the
	// branch's ref lock; nothing was changed.
	CodeRepoLocked Code = "REPO_LOCKED"
	// CodeRepoBusy: a merge, rebase, cherry-pick or revert is in progress,
	// or the index holds unmerged paths.
	CodeRepoBusy Code = "REPO_OPERATION_IN_PROGRESS"
	// CodeRepoStagedChanges: the index already differs from HEAD; a
	// commit would include changes the caller did not name (a release
	// action: the tree is not clean).
	CodeRepoStagedChanges Code = "REPO_STAGED_CHANGES"
	// CodeNothingToCommit: the named paths do not change HEAD.
	CodeNothingToCommit Code = "NOTHING_TO_COMMIT"
	// CodeRepoIdentityMissing: no user.name or user.email in any git
	// configuration file.
	CodeRepoIdentityMissing Code = "REPO_IDENTITY_MISSING"
	// CodeGitPathRejected: a commit would record a path git refuses (git
	// fsck's tree rules, or verify_path's: a .git spelling, a symlinked
	// .gitmodules, ...), or a .gitmodules or .gitattributes whose content
	// git fsck rejects; the message names the rule. Nothing changed.
	CodeGitPathRejected Code = "GIT_PATH_REJECTED"

	// History codes.

	// CodeRevNotFound: a log, show or blame revision names no branch,
	// tag or commit (or a commit id prefix is ambiguous, or HEAD is
	// unborn).
	CodeRevNotFound Code = "REV_NOT_FOUND"
	// CodeRepoIncomplete: an object the answer needs is missing from the
	// repository (a partial clone, or a damaged object store).
	CodeRepoIncomplete Code = "REPO_INCOMPLETE"

	// Host bridge codes.

	// CodeBridgeUnavailable: the host bridge is not configured, not
	// running, or did not answer in time.
	CodeBridgeUnavailable Code = "BRIDGE_UNAVAILABLE"
	// CodeBridgeAuthFailed: the bridge refused the caller (uid or token).
	CodeBridgeAuthFailed Code = "BRIDGE_AUTH_FAILED"
	// CodeActionNotFound: no named action of that name on the workdir.
	CodeActionNotFound Code = "ACTION_NOT_FOUND"
	// CodeIntegrityMismatch: a pinned file of an action is missing, not a
	// regular file, too large, or its SHA-256 differs; nothing ran.
	CodeIntegrityMismatch Code = "INTEGRITY_MISMATCH"
	// CodeActionTimeout: the action ran past its timeout and was killed.
	CodeActionTimeout Code = "ACTION_TIMEOUT"
	// CodeSandboxUnavailable: the policy requires the sandbox but this
	// kernel cannot enforce it fully, or it could not be applied; nothing
	// was run.
	CodeSandboxUnavailable Code = "SANDBOX_UNAVAILABLE"
	// CodeOutputLimitExceeded: the action wrote more than the output cap
	// and was killed.
	CodeOutputLimitExceeded Code = "OUTPUT_LIMIT_EXCEEDED"
	// CodePushRejected: the remote refused the push (not a fast-forward,
	// a protected branch, ...).
	CodePushRejected Code = "PUSH_REJECTED"
	// CodeNoUpstream: push_repo needs a branch with an upstream branch
	// (the release actions: main tracking origin/main).
	CodeNoUpstream Code = "NO_UPSTREAM"
	// CodePushDestinationDenied: push_repo would push to a URL or an
	// upstream branch the operator's bridge policy does not approve for
	// the workdir (or the policy names no push destination for it);
	// nothing was pushed.
	CodePushDestinationDenied Code = "PUSH_DESTINATION_DENIED"

	// Release action codes: the preconditions of release_tag
	// and publish_npm, each failing before anything changed.

	// CodeReleaseWrongBranch: HEAD is not the branch main.
	CodeReleaseWrongBranch Code = "RELEASE_WRONG_BRANCH"
	// CodeRepoDirty: the work tree has modified, deleted or untracked
	// files (staged changes are REPO_STAGED_CHANGES).
	CodeRepoDirty Code = "REPO_DIRTY"
	// CodeVersionMismatch: package.json at the root is missing, not JSON,
	// or its version is not the release tag without its "v".
	CodeVersionMismatch Code = "VERSION_MISMATCH"
	// CodeRemoteNotApproved: a fetch or push URL of origin is not among
	// the ones the administrator approved for the action.
	CodeRemoteNotApproved Code = "REMOTE_NOT_APPROVED"
	// CodeRemoteUnreachable: origin could not be asked for its main and
	// tags (git ls-remote failed).
	CodeRemoteUnreachable Code = "REMOTE_UNREACHABLE"
	// CodeRemoteNotAtHead: origin's main (as origin reports it now) is
	// not HEAD: the remote is ahead, behind, diverged or has no main.
	CodeRemoteNotAtHead Code = "REMOTE_NOT_AT_HEAD"
	// CodeTagConflict: the release tag already exists, locally or on
	// origin, at another commit; nothing moved.
	CodeTagConflict Code = "TAG_CONFLICT"
	// CodeDispatchFailed: publish_npm pushed the tag but gh could not
	// dispatch the workflow; the same call again retries the dispatch.
	CodeDispatchFailed Code = "DISPATCH_FAILED"

	// Workspace codes.

	// CodeWorkspaceLimit: the workdir has as many active workspaces as
	// SERVERFS_WORKSPACE_LIMIT allows; discard one first. Nothing was
	// created.
	CodeWorkspaceLimit Code = "WORKSPACE_LIMIT"
	// CodeWorkspaceTooLarge: the checkout of the base has more files or
	// bytes than SERVERFS_WORKSPACE_MAX_FILES / _MAX_BYTES allow, or did
	// not finish in time; nothing was kept.
	CodeWorkspaceTooLarge Code = "WORKSPACE_TOO_LARGE"

	// Grant codes: an operator-signed grant
	// (run_granted_command) refused by the bridge, checked in this
	// order; nothing ran.

	// CodeGrantMalformed: not a grant object (not JSON, unknown or
	// missing fields, a wrong type, an unknown protocol).
	CodeGrantMalformed Code = "GRANT_MALFORMED"
	// CodeGrantTooLarge: the grant is larger than 8 KiB.
	CodeGrantTooLarge Code = "GRANT_TOO_LARGE"
	// CodeGrantUnknownKey: its key id is not among the bridge's pinned
	// public keys.
	CodeGrantUnknownKey Code = "GRANT_UNKNOWN_KEY"
	// CodeGrantBadSignature: unsigned, or the Ed25519 signature does not
	// match the grant's content.
	CodeGrantBadSignature Code = "GRANT_BAD_SIGNATURE"
	// CodeGrantExpired: past expires_at, before issued_at (beyond 60 s of
	// clock skew), or a lifetime over 10 minutes.
	CodeGrantExpired Code = "GRANT_EXPIRED"
	// CodeGrantWrongHost: the grant names another host.
	CodeGrantWrongHost Code = "GRANT_WRONG_HOST"
	// CodeGrantWrongWorkdir: the grant names another workdir.
	CodeGrantWrongWorkdir Code = "GRANT_WRONG_WORKDIR"
	// CodeGrantArgvMismatch: argv_hash is not the SHA-256 of the argv.
	CodeGrantArgvMismatch Code = "GRANT_ARGV_MISMATCH"
	// CodeGrantReplay: the grant was used max_uses times already, or its
	// nonce was seen with another grant.
	CodeGrantReplay Code = "GRANT_REPLAY"
	// CodeGrantRevoked: the operator revoked the grant.
	CodeGrantRevoked Code = "GRANT_REVOKED"
	// CodeGrantConstraintViolation: the grant asks for more than the
	// bridge allows (mutates or network beyond the policy, a cwd outside
	// the workdir, a change on a read-only workdir).
	CodeGrantConstraintViolation Code = "GRANT_CONSTRAINT_VIOLATION"

	// HTTP codes.

	// CodeUnauthorized: an HTTP request without the client token
	// (SERVERFS_AUTH_TOKEN_FILE) in its X-ServerFS-Token header, or with a
	// wrong one; the body of the 401 answer carries this code.
	CodeUnauthorized Code = "UNAUTHORIZED"

	// Admission codes.

	// CodeServerBusy: the server is at its limit of concurrent heavy
	// calls (or sessions) and the short wait for a slot passed; nothing
	// ran. Retrying after a few seconds is safe.
	CodeServerBusy Code = "SERVER_BUSY"

	// Merge queue codes.

	// CodeBaseMoved: a strict submit whose base is no longer the head of
	// the target branch; the branch did not move. Resubmit with replay,
	// or from a workspace at the new head.
	CodeBaseMoved Code = "BASE_MOVED"
	// CodeMergeConflict: a replay submit whose changes conflict with the
	// branch's; the branch did not move. The answer lists the files and
	// hunks.
	CodeMergeConflict Code = "MERGE_CONFLICT"
	// CodePatchMismatch: a patch whose content address (sha256) or
	// metadata does not match the commits it names (tampered or
	// corrupted); nothing was merged.
	CodePatchMismatch Code = "PATCH_MISMATCH"

	// CodeInternal: a bug or an unexpected system error; details are only
	// in the server log.
	CodeInternal Code = "INTERNAL_ERROR"
)

// Error is the error type of every ServerFS operation, in the spirit of
// *fs.PathError: what went wrong (Code), where (Workdir, Path — always the
// workdir alias and a workdir-relative path, never a host path), a short
// human explanation, and the underlying cause for the server log.
type Error struct {
	Code    Code
	Workdir string // workdir alias; empty when the error is not about one
	Path    string // workdir-relative path, "" for the workdir root
	// Sent: Path is the path as the agent sent it (absolute, climbing
	// out, unusable), not a workdir-relative one, so it is shown alone:
	// "wd:/" before "/etc/passwd" would name a path that was never sent.
	Sent bool
	Msg  string // short explanation, no host paths
	Err  error  // underlying cause (an errno, ...); never shown to agents
}

// Error renders "CODE: alias:/rel/path message". The underlying cause is
// deliberately left out: it may carry system detail that agents need not see.
func (e *Error) Error() string {
	loc := e.Location()
	switch {
	case loc == "" && e.Msg == "":
		return string(e.Code)
	case loc == "":
		return fmt.Sprintf("%s: %s", e.Code, e.Msg)
	case e.Msg == "":
		return fmt.Sprintf("%s: %s", e.Code, loc)
	default:
		return fmt.Sprintf("%s: %s %s", e.Code, loc, e.Msg)
	}
}

// Location renders the place an error is about as "alias:/rel/path" (a
// path as sent alone, when Sent), or "" when it is not about a workdir.
func (e *Error) Location() string {
	if e.Workdir == "" {
		return ""
	}
	if e.Sent {
		return e.Path
	}
	return e.Workdir + ":/" + e.Path
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// CodeOf returns the Code of err, or CodeInternal when err is not an *Error.
// It returns "" for a nil error.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

func newErr(code Code, wd, path, msg string, cause error) *Error {
	return &Error{Code: code, Workdir: wd, Path: path, Msg: msg, Err: cause}
}
