package bridge

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/serverfs/serverfs/bridge/wire"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

// checkGrantPolicy validates the policy's grants section.
func checkGrantPolicy(gp *GrantPolicy, probs *problems) {
	if gp == nil {
		return
	}
	if !hostIDRE.MatchString(gp.HostID) {
		probs.add("grants: host_id must be a host id (letters, digits, . _ -, at most 128, not starting with . _ -)")
	}
	if len(gp.PublicKeys) == 0 {
		probs.add("grants: public_keys is empty; list the operator's keys (serverfs grant keygen prints one) or drop the grants section")
	}
	seen := map[string]bool{}
	for i, k := range gp.PublicKeys {
		pub, err := ParsePublicKey(k)
		if err != nil {
			probs.add("grants: public_keys[%d] is %v", i, err)
			continue
		}
		if id := KeyID(pub); seen[id] {
			probs.add("grants: public_keys[%d] repeats key %s", i, id)
		} else {
			seen[id] = true
		}
	}
	if max := int(MaxActionTimeout.Seconds()); gp.TimeoutSeconds < 0 || gp.TimeoutSeconds > max {
		probs.add("grants: timeout_seconds %d is outside 0..%d", gp.TimeoutSeconds, max)
	}
}

// renderGrants reads the .env fields BRIDGE_GRANT_PUBLIC_KEYS (base64
// keys separated by commas or spaces; none: no grants),
// BRIDGE_GRANT_HOST_ID (default: the host name),
// BRIDGE_GRANT_ALLOW_MUTATES, BRIDGE_GRANT_ALLOW_NETWORK and
// BRIDGE_GRANT_ALLOW_UNIX_SOCKETS (true or false) and
// BRIDGE_GRANT_TIMEOUT_SECONDS.
func renderGrants(env map[string]string, probs *problems) *GrantPolicy {
	keys := strings.FieldsFunc(env["BRIDGE_GRANT_PUBLIC_KEYS"], func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(keys) == 0 {
		for _, k := range []string{"BRIDGE_GRANT_HOST_ID", "BRIDGE_GRANT_ALLOW_MUTATES", "BRIDGE_GRANT_ALLOW_NETWORK", "BRIDGE_GRANT_ALLOW_UNIX_SOCKETS", "BRIDGE_GRANT_TIMEOUT_SECONDS"} {
			if env[k] != "" {
				probs.add("%s is set but BRIDGE_GRANT_PUBLIC_KEYS is empty; grants are off", k)
			}
		}
		return nil
	}
	gp := &GrantPolicy{HostID: env["BRIDGE_GRANT_HOST_ID"], PublicKeys: keys}
	if gp.HostID == "" {
		gp.HostID = DefaultHostID()
	}
	for name, dst := range map[string]*bool{"BRIDGE_GRANT_ALLOW_MUTATES": &gp.AllowMutates, "BRIDGE_GRANT_ALLOW_NETWORK": &gp.AllowNetwork, "BRIDGE_GRANT_ALLOW_UNIX_SOCKETS": &gp.AllowUnixSockets} {
		switch v := strings.ToLower(env[name]); v {
		case "", "false":
		case "true":
			*dst = true
		default:
			probs.add("%s=%q: must be true or false", name, showSetting(v))
		}
	}
	if v := env["BRIDGE_GRANT_TIMEOUT_SECONDS"]; v != "" {
		if _, err := fmt.Sscanf(v, "%d", &gp.TimeoutSeconds); err != nil {
			probs.add("BRIDGE_GRANT_TIMEOUT_SECONDS=%q: must be a number of seconds", showSetting(v))
		}
	}
	checkGrantPolicy(gp, probs)
	return gp
}

// DefaultHostID is the host id of a bridge whose policy names none and
// of `serverfs grant sign` without --host: the host name.
func DefaultHostID() string {
	h, err := os.Hostname()
	if err != nil || !hostIDRE.MatchString(h) {
		return "localhost"
	}
	return h
}

// grantKeys maps key ids to the policy's public keys.
func grantKeys(gp *GrantPolicy) map[string]ed25519.PublicKey {
	out := map[string]ed25519.PublicKey{}
	if gp == nil {
		return out
	}
	for _, k := range gp.PublicKeys {
		if pub, err := ParsePublicKey(k); err == nil {
			out[KeyID(pub)] = pub
		}
	}
	return out
}

// verifyGrant verifies a grant in an order where the cheap checks come
// first and nothing is trusted before the signature is: size
// and shape, protocol, a known key, the signature, the time window (±
// GrantClockSkew), the lifetime, the host, the workdir, the argv hash.
// The persisted checks (uses, nonce, revocation) and the constraints
// follow in RunGrant. It returns the grant parsed so far with the error,
// for the ledger.
func (s *Server) verifyGrant(token, alias string, now time.Time) (*Grant, error) {
	g, err := parseGrant(token)
	if err != nil {
		return nil, err
	}
	if g.Signature == nil || g.Signature.Value == "" {
		return g, errs.At(errs.GrantBadSignature, alias, "", "the grant is not signed")
	}
	pub, ok := s.grantKeys[g.Signature.KeyID]
	if !ok {
		return g, errs.At(errs.GrantUnknownKey, alias, "", fmt.Sprintf("key %s is not pinned in the bridge policy", g.Signature.KeyID))
	}
	sig, err := base64.StdEncoding.DecodeString(g.Signature.Value)
	msg, merr := g.signedBytes()
	if err != nil || merr != nil || len(sig) != ed25519.SignatureSize || !ed25519.Verify(pub, msg, sig) {
		return g, errs.At(errs.GrantBadSignature, alias, "", "the signature does not match the grant")
	}
	issued, _ := time.Parse(time.RFC3339, g.IssuedAt)
	expires, _ := time.Parse(time.RFC3339, g.ExpiresAt)
	switch {
	case now.Before(issued.Add(-GrantClockSkew)):
		return g, errs.At(errs.GrantExpired, alias, "", "the grant is not valid yet (issued_at is in the future)")
	case now.After(expires.Add(GrantClockSkew)):
		return g, errs.At(errs.GrantExpired, alias, "", "the grant has expired")
	case !expires.After(issued) || expires.Sub(issued) > MaxGrantTTL:
		return g, errs.At(errs.GrantExpired, alias, "", fmt.Sprintf("the grant's lifetime is not within 0..%s", MaxGrantTTL))
	}
	if g.Host != s.policy.Grants.HostID {
		return g, errs.At(errs.GrantWrongHost, alias, "", "the grant is for another host")
	}
	if g.Workdir != alias {
		return g, errs.At(errs.GrantWrongWorkdir, alias, "", fmt.Sprintf("the grant is for workdir %q", g.Workdir))
	}
	if ArgvHash(g.Argv) != g.ArgvHash {
		return g, errs.At(errs.GrantArgvMismatch, alias, "", "argv_hash is not the SHA-256 of the grant's argv")
	}
	return g, nil
}

// RunGrant verifies a grant for workdir alias and, when every check
// passes, records the use (persisted before the process starts) and runs
// exactly its argv with the action runner. Every call leaves one ledger
// line: the refusal and its code, or the run's outcome.
func (s *Server) RunGrant(ctx context.Context, alias, token string) (*wire.GrantResult, error) {
	now := time.Now()
	entry := LedgerEntry{Event: "run", Workdir: alias, Outcome: "refused"}
	res, err := s.runGrant(ctx, alias, token, now, &entry)
	if err != nil {
		entry.Code = string(errs.CodeOf(err))
	}
	if lerr := s.grants.Append(entry, time.Now()); lerr != nil {
		s.log.Error("the grant ledger cannot be written", "event", "grant_ledger", "error", lerr.Error())
		if err == nil {
			// The command ran; its result stands, the log says what failed.
			return res, nil
		}
	}
	return res, err
}

func (s *Server) runGrant(ctx context.Context, alias, token string, now time.Time, entry *LedgerEntry) (*wire.GrantResult, error) {
	if s.policy.Grants == nil || s.grants == nil {
		return nil, errs.At(errs.GrantUnknownKey, alias, "", "this bridge pins no grant keys")
	}
	if !policyAliasRE.MatchString(alias) {
		entry.Workdir = ""
	}
	wp, err := s.workdir(alias)
	if err != nil {
		return nil, err
	}
	g, err := s.verifyGrant(token, alias, now)
	if g != nil {
		entry.GrantID, entry.ArgvHash = g.GrantID, g.ArgvHash
		if g.Signature != nil {
			entry.KeyID = g.Signature.KeyID
		}
	}
	if err != nil {
		return nil, err
	}
	w, err := s.fs.Workdir(alias)
	if err != nil {
		return nil, err
	}
	if !wp.ReadWrite {
		return nil, errs.At(errs.WorkdirReadOnly, alias, "", "is read-only; granted commands need a read-write workdir")
	}
	if !wp.RepoOps {
		return nil, errs.At(errs.RepoOpsDisabled, alias, "", "has no repository operations enabled")
	}
	// Constraints (checked last, reported after the persisted checks):
	// a grant only narrows.
	gp := s.policy.Grants
	c := g.Constraints
	dir, dirFD, err := grantCwd(w, wp.Root, c.Cwd)
	if dirFD != nil {
		defer dirFD.Close()
	}
	cerr := grantConstraintErr(gp, c, alias, err)
	timeout := DefaultActionTimeout
	if gp.TimeoutSeconds > 0 {
		timeout = time.Duration(gp.TimeoutSeconds) * time.Second
	}
	expires, _ := time.Parse(time.RFC3339, g.ExpiresAt)

	var ar *wire.ActionResult
	var uses int
	_, err = s.withLease(alias, "grant "+g.GrantID, func() (any, error) {
		// Uses, nonce and revocation, persisted: the use is counted
		// before the process starts, so a crash never gives one back.
		err := s.grants.update(func(st *grantState, now time.Time) (bool, error) {
			var err error
			uses, err = countGrantUse(st, now, g, expires, alias, cerr)
			return err == nil, err
		})
		if err != nil {
			var fe *errs.Error
			if !errors.As(err, &fe) {
				return nil, errs.At(errs.Internal, alias, "", "the grant state cannot be used").Wrap(err)
			}
			return nil, err
		}
		entry.Uses = uses
		entry.Outcome = "failed"
		if hook := grantBeforeStart.Load(); hook != nil {
			(*hook)()
		}
		var rerr error
		ar, rerr = runCommand(ctx, w, wp, command{
			what: fmt.Sprintf("the granted command (grant %s)", g.GrantID), argv: g.Argv, dir: dir, dirFD: dirFD,
			mutates: c.Mutates, network: c.Network, unixSockets: c.UnixSockets, timeout: min(timeout, MaxActionTimeout),
		}, s.runLimits())
		return ar, rerr
	})
	if ar == nil {
		return nil, err
	}
	code := ar.ExitCode
	entry.ExitCode, entry.Sandbox = &code, ar.Sandbox
	if err == nil {
		entry.Outcome = "ran"
	}
	return &wire.GrantResult{GrantID: g.GrantID, Argv: g.Argv, Uses: uses, MaxUses: g.MaxUses, ProcessResult: ar.ProcessResult}, err
}

// grantConstraintErr is the refusal of a grant's constraints the bridge
// policy does not allow, or cwdErr (the working directory's), or nil.
func grantConstraintErr(gp *GrantPolicy, c GrantConstraints, alias string, cwdErr error) error {
	switch {
	case c.Mutates && !gp.AllowMutates:
		return errs.At(errs.GrantConstraintViolation, alias, "", "the grant says mutates but the bridge policy does not allow grants to write (grants.allow_mutates)")
	case c.Network && !gp.AllowNetwork:
		return errs.At(errs.GrantConstraintViolation, alias, "", "the grant says network but the bridge policy does not allow grants the network (grants.allow_network)")
	case c.UnixSockets && !gp.AllowUnixSockets:
		return errs.At(errs.GrantConstraintViolation, alias, "", "the grant says unix_sockets but the bridge policy does not allow grants Unix sockets (grants.allow_unix_sockets)")
	}
	return cwdErr
}

// countGrantUse checks g against the persisted state st under its lock
// (expiry, uses, nonce, revocation, then cerr, the constraints' refusal)
// and counts one use, returning the uses so far.
func countGrantUse(st *grantState, now time.Time, g *Grant, expires time.Time, alias string, cerr error) (int, error) {
	// Again with the time under the locks: a call that passed
	// verifyGrant just before expiry and then waited for the
	// locks is past it now.
	if now.After(expires.Add(GrantClockSkew)) {
		return 0, errs.At(errs.GrantExpired, alias, "", "the grant has expired")
	}
	u := st.Grants[g.GrantID]
	if u != nil && u.Uses >= g.MaxUses {
		return 0, errs.At(errs.GrantReplay, alias, "", fmt.Sprintf("the grant was used %d of %d times already", u.Uses, g.MaxUses))
	}
	if u != nil && u.Nonce != g.Nonce {
		return 0, errs.At(errs.GrantReplay, alias, "", "the grant id was seen with another nonce")
	}
	for id, o := range st.Grants {
		if o.Nonce == g.Nonce && id != g.GrantID {
			return 0, errs.At(errs.GrantReplay, alias, "", "the nonce was seen with another grant")
		}
	}
	if _, revoked := st.Revoked[g.GrantID]; revoked {
		return 0, errs.At(errs.GrantRevoked, alias, "", "the operator revoked the grant")
	}
	if cerr != nil {
		return 0, cerr
	}
	if u == nil {
		if len(st.Grants) >= MaxLiveGrants {
			return 0, errs.At(errs.GrantReplay, alias, "", fmt.Sprintf("the bridge tracks at most %d unexpired grants; try again when some expired", MaxLiveGrants))
		}
		u = &grantUse{Nonce: g.Nonce, Until: expires.Add(GrantClockSkew).Unix()}
		st.Grants[g.GrantID] = u
	}
	u.Uses++
	return u.Uses, nil
}

// grantBeforeStart, when set (tests only), runs after the use is
// recorded and before the granted command starts.
var grantBeforeStart atomic.Pointer[func()]

// grantCwd resolves a grant's cwd: a directory inside the workdir,
// opened through the workdir's resolver (beneath the root, no symlinks);
// anything else is a constraint violation. The command starts in the
// directory the descriptor holds, not in whatever the path names by
// then; the path is for finding a relative argv[0] and for messages.
func grantCwd(w *sfs.Workdir, root, cwd string) (string, *os.File, error) {
	bad := errs.At(errs.GrantConstraintViolation, w.Alias(), "", "the grant's cwd is not a directory inside the workdir")
	clean, err := w.CleanPath(cwd)
	if err != nil {
		return "", nil, bad
	}
	d, err := w.OpenDir(clean)
	if err != nil {
		return "", nil, bad
	}
	defer d.Close()
	fd, err := unix.FcntlInt(uintptr(d.FD()), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return "", nil, bad
	}
	return filepath.Join(root, filepath.FromSlash(clean)), os.NewFile(uintptr(fd), "grant cwd"), nil
}

// errNoGrants is NewServer's refusal of grant keys without a state
// directory.
var errNoGrants = errors.New("bridge: grants need a state directory (--state-dir) for uses, nonces and the ledger")
