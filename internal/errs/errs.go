// Package errs is the one place ServerFS's errors are defined: the stable
// codes an agent sees (one file per domain), the Error type that carries a
// code with the workdir and path it is about, its constructors, and the
// rendering of any error as the "CODE: message" text of a tool result. It
// imports only the standard library so that every other package can use it.
package errs

import (
	"errors"
	"fmt"
)

// Code is a stable, machine-readable error code. Every error ServerFS returns
// to an agent carries exactly one Code; Render shows it as "CODE: message".
type Code string

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

// New returns an error that is not about a place in a workdir.
func New(code Code, msg string) *Error {
	return &Error{Code: code, Msg: msg}
}

// At returns an error about path (workdir-relative, "" for the root) in the
// workdir alias.
func At(code Code, workdir, path, msg string) *Error {
	return &Error{Code: code, Workdir: workdir, Path: path, Msg: msg}
}

// Wrap records cause, for the server log only, and returns e.
func (e *Error) Wrap(cause error) *Error {
	e.Err = cause
	return e
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

// CodeOf returns the Code of err, or Internal when err is not an *Error.
// It returns "" for a nil error.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// Render is the one mapping from any error to the text an agent sees:
// "CODE: alias:/path message" for an *Error, a generic INTERNAL_ERROR for
// any other error, or nil (the detail belongs in the server log only). An
// *Error whose code is Internal keeps only its location.
func Render(err error) (Code, string) {
	var e *Error
	if errors.As(err, &e) && e.Code != Internal {
		return e.Code, e.Error()
	}
	if errors.As(err, &e) && e.Location() != "" {
		return Internal, fmt.Sprintf("%s: %s failed; the server log has the details", Internal, e.Location())
	}
	return Internal, string(Internal) + ": the request failed; the server log has the details"
}
