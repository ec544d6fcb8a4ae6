package errs

// Host bridge codes: named actions, pushes, the release actions and operator-signed grants (run_granted_command), each refused before anything ran unless it says otherwise.
const (
	// BridgeUnavailable: the host bridge is not configured, not
	// running, or did not answer in time.
	BridgeUnavailable Code = "BRIDGE_UNAVAILABLE"
	// BridgeAuthFailed: the bridge refused the caller (uid or token).
	BridgeAuthFailed Code = "BRIDGE_AUTH_FAILED"
	// ActionNotFound: no named action of that name on the workdir.
	ActionNotFound Code = "ACTION_NOT_FOUND"
	// IntegrityMismatch: a pinned file of an action is missing, not a
	// regular file, too large, or its SHA-256 differs; nothing ran.
	IntegrityMismatch Code = "INTEGRITY_MISMATCH"
	// ActionTimeout: the action ran past its timeout and was killed.
	ActionTimeout Code = "ACTION_TIMEOUT"
	// SandboxUnavailable: the policy requires the sandbox but this
	// kernel cannot enforce it fully, or it could not be applied; nothing
	// was run.
	SandboxUnavailable Code = "SANDBOX_UNAVAILABLE"
	// OutputLimitExceeded: the action wrote more than the output cap
	// and was killed.
	OutputLimitExceeded Code = "OUTPUT_LIMIT_EXCEEDED"
	// PushRejected: the remote refused the push (not a fast-forward,
	// a protected branch, ...).
	PushRejected Code = "PUSH_REJECTED"
	// NoUpstream: push_repo needs a branch with an upstream branch
	// (the release actions: main tracking origin/main).
	NoUpstream Code = "NO_UPSTREAM"
	// PushDestinationDenied: push_repo would push to a URL or an
	// upstream branch the operator's bridge policy does not approve for
	// the workdir (or the policy names no push destination for it);
	// nothing was pushed.
	PushDestinationDenied Code = "PUSH_DESTINATION_DENIED"

	// Release action codes: the preconditions of release_tag
	// and publish_npm, each failing before anything changed.

	// ReleaseWrongBranch: HEAD is not the branch main.
	ReleaseWrongBranch Code = "RELEASE_WRONG_BRANCH"
	// RepoDirty: the work tree has modified, deleted or untracked
	// files (staged changes are REPO_STAGED_CHANGES); for a submit,
	// where the merge would write into the live checkout.
	RepoDirty Code = "REPO_DIRTY"
	// VersionMismatch: package.json at the root is missing, not JSON,
	// or its version is not the release tag without its "v".
	VersionMismatch Code = "VERSION_MISMATCH"
	// RemoteNotApproved: a fetch or push URL of origin is not among
	// the ones the administrator approved for the action.
	RemoteNotApproved Code = "REMOTE_NOT_APPROVED"
	// RemoteUnreachable: origin could not be asked for its main and
	// tags (git ls-remote failed).
	RemoteUnreachable Code = "REMOTE_UNREACHABLE"
	// RemoteNotAtHead: origin's main (as origin reports it now) is
	// not HEAD: the remote is ahead, behind, diverged or has no main.
	RemoteNotAtHead Code = "REMOTE_NOT_AT_HEAD"
	// TagConflict: the release tag already exists, locally or on
	// origin, at another commit; nothing moved.
	TagConflict Code = "TAG_CONFLICT"
	// DispatchFailed: publish_npm pushed the tag but gh could not
	// dispatch the workflow; the same call again retries the dispatch.
	DispatchFailed Code = "DISPATCH_FAILED"

	// Grant codes: an operator-signed grant
	// (run_granted_command) refused by the bridge, checked in this
	// order; nothing ran.

	// GrantMalformed: not a grant object (not JSON, unknown or
	// missing fields, a wrong type, an unknown protocol).
	GrantMalformed Code = "GRANT_MALFORMED"
	// GrantTooLarge: the grant is larger than 8 KiB.
	GrantTooLarge Code = "GRANT_TOO_LARGE"
	// GrantUnknownKey: its key id is not among the bridge's pinned
	// public keys.
	GrantUnknownKey Code = "GRANT_UNKNOWN_KEY"
	// GrantBadSignature: unsigned, or the Ed25519 signature does not
	// match the grant's content.
	GrantBadSignature Code = "GRANT_BAD_SIGNATURE"
	// GrantExpired: past expires_at, before issued_at (beyond 60 s of
	// clock skew), or a lifetime over 10 minutes.
	GrantExpired Code = "GRANT_EXPIRED"
	// GrantWrongHost: the grant names another host.
	GrantWrongHost Code = "GRANT_WRONG_HOST"
	// GrantWrongWorkdir: the grant names another workdir.
	GrantWrongWorkdir Code = "GRANT_WRONG_WORKDIR"
	// GrantArgvMismatch: argv_hash is not the SHA-256 of the argv.
	GrantArgvMismatch Code = "GRANT_ARGV_MISMATCH"
	// GrantReplay: the grant was used max_uses times already, or its
	// nonce was seen with another grant.
	GrantReplay Code = "GRANT_REPLAY"
	// GrantRevoked: the operator revoked the grant.
	GrantRevoked Code = "GRANT_REVOKED"
	// GrantConstraintViolation: the grant asks for more than the
	// bridge allows (mutates or network beyond the policy, a cwd outside
	// the workdir, a change on a read-only workdir).
	GrantConstraintViolation Code = "GRANT_CONSTRAINT_VIOLATION"
)
