// Package wire is the bridge's protocol, shared by its two ends: the
// methods, their parameters and results, the request and response lines,
// and the Client the MCP server calls the bridge with. One request per
// connection, one JSON line each way; requests are capped at
// MaxRequestBytes and must arrive within RequestReadTimeout; the answer
// comes when the work is done (an action may run up to its timeout).
package wire

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/serverfs/serverfs/internal/errs"
)

// MaxRequestBytes bounds one request line.
const MaxRequestBytes = 64 << 10

// RequestReadTimeout bounds how long a client may take to send its request.
const RequestReadTimeout = 5 * time.Second

// maxResponseBytes bounds one answer (action output tails are bounded
// well below it).
const maxResponseBytes = 4 << 20

// DefaultLeaseTTL is how long a lease lives unrenewed; holders renew it
// every third of that (RenewUntil).
const DefaultLeaseTTL = 30 * time.Second

// MaxGrantBytes bounds a grant's JSON text.
const MaxGrantBytes = 8 << 10

// The methods.
const (
	MethodLeaseAcquire     = "lease.acquire"
	MethodLeaseRenew       = "lease.renew"
	MethodLeaseRelease     = "lease.release"
	MethodLeaseGuardCommit = "lease.guard_commit"
	MethodActionsList      = "actions.list"
	MethodActionsRun       = "actions.run"
	MethodActionsRelease   = "actions.release"
	MethodBridgeOffer      = "bridge.offer"
	MethodGrantsRun        = "grants.run"
	MethodRepoPush         = "repo.push"
)

// Request is one call to the bridge.
type Request struct {
	Token  string          `json:"token"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Response answers a Request: Result on success, Error otherwise.
type Response struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Error is an *errs.Error on the wire: a code and a message without
// host paths.
type Error struct {
	Code    string `json:"code"`
	Workdir string `json:"workdir,omitempty"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

// ErrorOf turns an error into its wire form (the bridge's side); anything
// but an *errs.Error is INTERNAL_ERROR without detail (the detail stays in
// the bridge's log).
func ErrorOf(err error) *Error {
	var e *errs.Error
	if errors.As(err, &e) && e.Code != errs.Internal {
		return &Error{Code: string(e.Code), Workdir: e.Workdir, Path: e.Path, Message: e.Msg}
	}
	return &Error{Code: string(errs.Internal), Message: "the bridge failed; its log has the details"}
}

// Err is e as an *errs.Error again (the client's side).
func (e *Error) Err() *errs.Error {
	return errs.At(errs.Code(e.Code), e.Workdir, e.Path, e.Message)
}

// Method parameters. Alias is the workdir a call names.
type (
	// LeaseParams are the lease methods' parameters.
	LeaseParams struct {
		Workdir    string `json:"workdir"`
		Purpose    string `json:"purpose,omitempty"`
		Lease      string `json:"lease,omitempty"`
		TTLSeconds int    `json:"ttl_seconds,omitempty"`
		Ref        string `json:"ref,omitempty"` // lease.guard_commit
		Old        string `json:"old,omitempty"`
	}
	// ActionParams are actions.run's and actions.release's.
	ActionParams struct {
		Workdir string `json:"workdir"`
		Action  string `json:"action"`
		Path    string `json:"path,omitempty"`
		// ReleaseTag: actions.release only.
		ReleaseTag string `json:"release_tag,omitempty"`
		// Workspace: actions.run only; the ID of a workspace of the
		// workdir to run the action in.
		Workspace string `json:"workspace,omitempty"`
	}
	// PushParams are repo.push's and actions.list's: the workdir alone.
	PushParams struct {
		Workdir string `json:"workdir"`
	}
	// GrantParams are grants.run's.
	GrantParams struct {
		Workdir string `json:"workdir"`
		Grant   string `json:"grant"`
	}
)

func (p LeaseParams) Alias() string  { return p.Workdir }
func (p ActionParams) Alias() string { return p.Workdir }
func (p PushParams) Alias() string   { return p.Workdir }
func (p GrantParams) Alias() string  { return p.Workdir }

// LeaseResult is lease.acquire's result: the lease's id.
type LeaseResult struct {
	Lease string `json:"lease"`
}

// ActionInfo describes a named action to the MCP server (no argv).
// A release action's Argument is "release_tag" and its Kind set.
type ActionInfo struct {
	Name     string `json:"name"`
	Kind     string `json:"kind,omitempty"` // release_tag or publish_npm
	Argument string `json:"argument"`
	Mutates  bool   `json:"mutates"`
}

// Offer is what a bridge tells the MCP server it serves (bridge.offer),
// so that the server's tool list is true for it.
type Offer struct {
	// Grants: the policy pins grant keys (run_granted_command).
	Grants bool `json:"grants,omitempty"`
}

// RenewUntil calls renew every third of a lease's TTL until done is
// closed: the heartbeat of a holder (the server's client, or the bridge
// itself around an action or push).
func RenewUntil(done <-chan struct{}, renew func()) {
	t := time.NewTicker(DefaultLeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			renew()
		}
	}
}
