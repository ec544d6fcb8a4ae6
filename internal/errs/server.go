package errs

// Server codes: HTTP authentication, admission and internal failures.
const (
	// Unauthorized: an HTTP request without the client token
	// (SERVERFS_AUTH_TOKEN_FILE) in its X-ServerFS-Token header, or with a
	// wrong one; the body of the 401 answer carries this code.
	Unauthorized Code = "UNAUTHORIZED"

	// Admission codes.

	// ServerBusy: the server is at its limit of concurrent heavy
	// calls (or sessions) and the short wait for a slot passed; nothing
	// ran. Retrying after a few seconds is safe.
	ServerBusy Code = "SERVER_BUSY"

	// Internal: a bug or an unexpected system error; details are only
	// in the server log.
	Internal Code = "INTERNAL_ERROR"
)
