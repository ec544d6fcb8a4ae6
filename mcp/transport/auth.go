package transport

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"syscall"

	"github.com/serverfs/serverfs/internal/errs"
)

// AuthHeader is the request header that carries the client token when
// SERVERFS_AUTH_TOKEN_FILE is set. It is not Authorization on purpose: the
// OpenAI tunnel client forwards a connector's own Authorization header and
// lets it override the static headers it adds (MCP_EXTRA_HEADERS), so a
// connector configured with OAuth or an API key would replace the token.
const AuthHeader = "X-ServerFS-Token"

// Token length bounds, in bytes: "head -c 32 /dev/urandom | base64" is 44
// characters, "openssl rand -hex 16" is 32.
const (
	minTokenLen = 32
	maxTokenLen = 1024
)

// Token is the client token's SHA-256 digest; the token itself is not kept
// after loading. The zero Token means no client authentication. Printing a
// Token in any way (fmt, slog, JSON) shows "[redacted]".
type Token struct {
	digest [sha256.Size]byte
	set    bool
}

// Set reports whether the token is configured.
func (t Token) Set() bool { return t.set }

// Matches reports, in constant time, whether presented is the token. The
// digests are compared, so not even the token's length leaks.
func (t Token) Matches(presented string) bool {
	d := sha256.Sum256([]byte(presented))
	return t.set && subtle.ConstantTimeCompare(d[:], t.digest[:]) == 1
}

// String shows "[redacted]": the digest never reaches a log line or a
// message.
func (t Token) String() string { return "[redacted]" }

// GoString shows "[redacted]" for %#v.
func (t Token) GoString() string { return "[redacted]" }

// Format shows "[redacted]" for every verb (%x and %d included).
func (t Token) Format(f fmt.State, _ rune) { io.WriteString(f, "[redacted]") }

// LogValue shows "[redacted]" in slog records.
func (t Token) LogValue() slog.Value { return slog.StringValue("[redacted]") }

// MarshalText shows "[redacted]" in JSON and other text encodings.
func (t Token) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

// tokenChar reports whether c may appear in a token: base64, base64url and
// hex all fit, and none of the characters is one the tunnel's header list
// (comma- and semicolon-separated), a shell or a header value treat
// specially.
func tokenChar(c byte) bool {
	switch {
	case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '.', '_', '~', '+', '/', '=', '-':
		return true
	}
	return false
}

// loadToken reads the client token file named by SERVERFS_AUTH_TOKEN_FILE.
// It returns the token, warnings (start-up logs them) and at most one
// problem. Neither names the token, and problems name the variable, not the
// path. The file is opened non-blocking (a FIFO cannot hang start-up),
// must be a regular file of at most 4 KiB, not writable by others (anyone
// could choose the token) and should not be readable by others (anyone on
// the host could use it). One trailing line ending is dropped, as the
// tunnel client does for file: header values.
func loadToken(path string) (tok Token, warnings []string, problem string) {
	const v = "SERVERFS_AUTH_TOKEN_FILE"
	if !filepath.IsAbs(path) {
		return tok, nil, v + ": must be an absolute path"
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return tok, nil, fmt.Sprintf("%s: cannot open the token file (%s)", v, errnoText(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return tok, nil, fmt.Sprintf("%s: cannot stat the token file (%s)", v, errnoText(err))
	}
	if !st.Mode().IsRegular() {
		return tok, nil, v + ": the token file is not a regular file"
	}
	if st.Mode().Perm()&0o002 != 0 {
		return tok, nil, v + ": the token file is writable by every user; make it 0600 or 0640"
	}
	if st.Mode().Perm()&0o004 != 0 {
		warnings = append(warnings, v+": the token file is readable by every user on the host, who can then reach the server; make it 0600 or 0640")
	}
	buf, err := io.ReadAll(io.LimitReader(f, 4097))
	if err != nil {
		return tok, nil, fmt.Sprintf("%s: cannot read the token file (%s)", v, errnoText(err))
	}
	if len(buf) > 4096 {
		return tok, nil, v + ": the token file is larger than 4096 bytes"
	}
	s := string(buf)
	switch {
	case len(s) >= 2 && s[len(s)-2:] == "\r\n":
		s = s[:len(s)-2]
	case len(s) >= 1 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r'):
		s = s[:len(s)-1]
	}
	if s == "" {
		return tok, nil, v + ": the token file is empty"
	}
	if len(s) < minTokenLen || len(s) > maxTokenLen {
		return tok, nil, fmt.Sprintf("%s: the token must be %d to %d characters long (e.g. head -c 32 /dev/urandom | base64)", v, minTokenLen, maxTokenLen)
	}
	for i := 0; i < len(s); i++ {
		if !tokenChar(s[i]) {
			return tok, nil, v + ": the token may hold only A-Z a-z 0-9 . _ ~ + / = - (one line; e.g. head -c 32 /dev/urandom | base64)"
		}
	}
	return Token{digest: sha256.Sum256([]byte(s)), set: true}, warnings, ""
}

// errnoText is the system error of err without the path it names.
func errnoText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return "error"
}

// unauthorizedBody is the 401 answer: a JSON-RPC error (id null, as for a
// request that could not be read) whose message is "CODE: explanation".
var unauthorizedBody = fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":%q}}`+"\n",
	(errs.New(errs.Unauthorized, "this server requires its client token in the "+AuthHeader+" header")).Error())

// requireToken lets through only requests that carry tok in exactly one
// AuthHeader, and marks their connection authenticated (connlimit.go);
// every other request gets 401 and unauthorizedBody, and a log line that
// says why but holds neither the presented value nor the token, and its
// connection is closed: a connection stays pre-auth at most until its
// first request is answered. With an unset tok every request is let
// through and marks its connection authenticated.
func requireToken(tok Token, log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vals := r.Header.Values(AuthHeader)
		if !tok.Set() || (len(vals) == 1 && tok.Matches(vals[0])) {
			markAuthenticated(r.Context())
			next.ServeHTTP(w, r)
			return
		}
		reason := "wrong client token"
		switch {
		case len(vals) == 0:
			reason = "no client token"
		case len(vals) > 1:
			reason = "more than one client token"
		}
		log.Warn("refused request", "event", "http_refused", "reason", reason)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("WWW-Authenticate", `ServerFS-Token header="`+AuthHeader+`"`)
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, unauthorizedBody)
	})
}
