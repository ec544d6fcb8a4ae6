package bridge

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/serverfs/serverfs/bridge/wire"
	"github.com/serverfs/serverfs/internal/errs"
)

// Grants: the operator signs one exact argv for
// one host, one workdir and a few minutes with an Ed25519 key the bridge
// policy pins; the bridge verifies the grant and runs that argv like a
// named action (no shell, allowlisted environment, lease, timeout, output
// cap, process-group kill, sandbox), at most max_uses times.

// Grant limits.
const (
	// GrantProtocol is the protocol every grant names.
	GrantProtocol = "serverfs-grant/v1"
	// MaxGrantBytes bounds a grant's JSON text.
	MaxGrantBytes = wire.MaxGrantBytes
	// MaxGrantTTL bounds expires_at - issued_at.
	MaxGrantTTL = 10 * time.Minute
	// GrantClockSkew is the tolerance of the time window on both ends.
	GrantClockSkew = 60 * time.Second
	// MaxGrantUses bounds max_uses.
	MaxGrantUses = 100
	// MaxGrantArgv bounds the number of argv elements.
	MaxGrantArgv = 256
)

// Grant is the signed object. The signature covers the canonical JSON
// (CanonicalJSON) of every field but Signature.
type Grant struct {
	Protocol string   `json:"protocol"`
	GrantID  string   `json:"grant_id"`
	Host     string   `json:"host"`
	Workdir  string   `json:"workdir"`
	Argv     []string `json:"argv"`
	// ArgvHash is the lower-case hex SHA-256 of the argv's canonical JSON
	// (ArgvHash).
	ArgvHash    string           `json:"argv_hash"`
	MaxUses     int              `json:"max_uses"`
	IssuedAt    string           `json:"issued_at"`  // RFC 3339, UTC
	ExpiresAt   string           `json:"expires_at"` // RFC 3339, UTC
	Nonce       string           `json:"nonce"`
	IssuedBy    string           `json:"issued_by"`
	Constraints GrantConstraints `json:"constraints"`
	Signature   *GrantSignature  `json:"signature,omitempty"`
}

// GrantConstraints narrow how the argv runs; they can never widen the
// bridge's own limits.
type GrantConstraints struct {
	// Mutates lets the command write in its workdir (only where the
	// policy's grants.allow_mutates and a read-write workdir allow it).
	Mutates bool `json:"mutates"`
	// Network lets it bind and connect TCP sockets (only with the
	// policy's grants.allow_network).
	Network bool `json:"network"`
	// UnixSockets lets it reach pathname Unix sockets (only with the
	// policy's grants.allow_unix_sockets). Absent when false, so that
	// grants signed before it existed verify unchanged.
	UnixSockets bool `json:"unix_sockets,omitempty"`
	// Cwd is the directory it runs in, relative to the workdir root
	// ("." for the root).
	Cwd string `json:"cwd"`
}

// GrantSignature is the operator's Ed25519 signature.
type GrantSignature struct {
	Alg   string `json:"alg"`    // "ed25519"
	KeyID string `json:"key_id"` // KeyID of the public key
	Value string `json:"value"`  // standard base64 of the 64-byte signature
}

var (
	grantIDRE  = regexp.MustCompile(`^[A-Za-z0-9_-]{8,64}$`)
	grantKeyRE = regexp.MustCompile(`^[0-9a-f]{16}$`)
	hostIDRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
)

// KeyID is the first 16 hex digits of the SHA-256 of an Ed25519 public key.
func KeyID(pub ed25519.PublicKey) string {
	s := sha256.Sum256(pub)
	return hex.EncodeToString(s[:])[:16]
}

// ArgvHash is the lower-case hex SHA-256 of argv's canonical JSON (an
// array of the strings as given: no shell parsing, no expansion).
func ArgvHash(argv []string) string {
	b, _ := CanonicalJSON(argv)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// CanonicalJSON encodes v as canonical JSON: object keys sorted, no
// whitespace, UTF-8, no HTML escaping (as JavaScript's JSON.stringify of
// an object with sorted keys).
func CanonicalJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var g any
	if err := dec.Decode(&g); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := canonicalValue(&buf, g); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func canonicalValue(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			canonicalString(buf, k)
			buf.WriteByte(':')
			if err := canonicalValue(buf, x[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := canonicalValue(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case string:
		canonicalString(buf, x)
	case json.Number:
		buf.WriteString(x.String())
	case bool:
		if x {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case nil:
		buf.WriteString("null")
	default:
		return fmt.Errorf("canonical JSON: unexpected %T", v)
	}
	return nil
}

func canonicalString(buf *bytes.Buffer, s string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	buf.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// signedBytes is what the signature covers: the canonical JSON of the
// grant without its signature.
func (g Grant) signedBytes() ([]byte, error) {
	g.Signature = nil
	return CanonicalJSON(g)
}

// GrantRequest is what the operator signs (SignGrant fills in the rest).
type GrantRequest struct {
	Host, Workdir, IssuedBy string
	Argv                    []string
	TTL                     time.Duration
	MaxUses                 int
	Constraints             GrantConstraints
	// Now is the signing time (zero: time.Now()).
	Now time.Time
}

// SignGrant builds and signs a grant: a random grant_id and nonce, the
// argv hash, issued_at now. It refuses what no bridge would accept
// (a TTL over MaxGrantTTL, an empty argv, a NUL in it, ...).
func SignGrant(priv ed25519.PrivateKey, r GrantRequest) (*Grant, string, error) {
	if r.TTL <= 0 || r.TTL > MaxGrantTTL {
		return nil, "", fmt.Errorf("the TTL must be more than 0 and at most %s", MaxGrantTTL)
	}
	if r.MaxUses < 1 || r.MaxUses > MaxGrantUses {
		return nil, "", fmt.Errorf("max-uses must be 1..%d", MaxGrantUses)
	}
	now := r.Now
	if now.IsZero() {
		now = time.Now()
	}
	if r.Constraints.Cwd == "" {
		r.Constraints.Cwd = "."
	}
	g := &Grant{
		Protocol: GrantProtocol, GrantID: randomHex(16), Host: r.Host, Workdir: r.Workdir,
		Argv: r.Argv, ArgvHash: ArgvHash(r.Argv), MaxUses: r.MaxUses,
		IssuedAt:  now.UTC().Truncate(time.Second).Format(time.RFC3339),
		ExpiresAt: now.UTC().Truncate(time.Second).Add(r.TTL).Format(time.RFC3339),
		Nonce:     randomHex(16), IssuedBy: r.IssuedBy, Constraints: r.Constraints,
	}
	if why := g.shapeProblem(); why != "" {
		return nil, "", errors.New(why)
	}
	tok, err := SignGrantObject(priv, g)
	return g, tok, err
}

// SignGrantObject signs g as it is (tests use it to build grants no
// honest signer would) and returns the token: the grant's canonical JSON
// with its signature.
func SignGrantObject(priv ed25519.PrivateKey, g *Grant) (string, error) {
	msg, err := g.signedBytes()
	if err != nil {
		return "", err
	}
	g.Signature = &GrantSignature{Alg: "ed25519", KeyID: KeyID(priv.Public().(ed25519.PublicKey)),
		Value: base64.StdEncoding.EncodeToString(ed25519.Sign(priv, msg))}
	b, err := CanonicalJSON(g)
	return string(b), err
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// grantSchema is the exact field set of a grant (checkJSON refuses
// duplicate keys and unknown or differently cased fields).
var grantSchema = &jsonSchema{fields: map[string]*jsonSchema{
	"protocol": leafSchema, "grant_id": leafSchema, "host": leafSchema, "workdir": leafSchema,
	"argv": leafSchema, "argv_hash": leafSchema, "max_uses": leafSchema, "issued_at": leafSchema,
	"expires_at": leafSchema, "nonce": leafSchema, "issued_by": leafSchema,
	"constraints": {fields: map[string]*jsonSchema{"mutates": leafSchema, "network": leafSchema, "unix_sockets": leafSchema, "cwd": leafSchema}},
	"signature":   {fields: map[string]*jsonSchema{"alg": leafSchema, "key_id": leafSchema, "value": leafSchema}},
}}

// maxGrantDepth bounds the nesting of a grant's JSON: a grant is at most
// an object of objects and arrays of strings.
const maxGrantDepth = 3

// jsonTooDeep reports whether data nests arrays or objects deeper than
// max (outside strings), in one pass and without decoding.
func jsonTooDeep(data []byte, max int) bool {
	depth, inStr, esc := 0, false, false
	for _, c := range data {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
			if depth > max {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// parseGrant checks size and shape (steps 1 and 2 of the verification):
// at most MaxGrantBytes, one strict JSON object of the grant's fields
// with the right types and formats, protocol GrantProtocol. The error is
// GRANT_TOO_LARGE or GRANT_MALFORMED. An unsigned grant parses; the
// signature step refuses it.
func parseGrant(token string) (*Grant, error) {
	if len(token) > MaxGrantBytes {
		return nil, errs.New(errs.GrantTooLarge, fmt.Sprintf("the grant is larger than %d bytes", MaxGrantBytes))
	}
	bad := func(why string) error { return errs.New(errs.GrantMalformed, why) }
	data := []byte(strings.TrimSpace(token))
	if jsonTooDeep(data, maxGrantDepth) {
		return nil, bad("the grant nests deeper than a grant does")
	}
	if errList := checkJSON(data, grantSchema); len(errList) > 0 {
		return nil, bad("the grant is not a grant object: " + errList[0])
	}
	var g Grant
	if why := strictDecode(data, &g); why != "" {
		return nil, bad("the grant is not a grant object: " + why)
	}
	if g.Protocol != GrantProtocol {
		return nil, bad(fmt.Sprintf("the grant's protocol is not %q", GrantProtocol))
	}
	if why := g.shapeProblem(); why != "" {
		return nil, bad(why)
	}
	if s := g.Signature; s != nil && (s.Alg != "ed25519" || !grantKeyRE.MatchString(s.KeyID)) {
		return nil, bad("the signature must be alg ed25519 with a 16-hex-digit key_id")
	}
	return &g, nil
}

// shapeProblem says what makes g no grant at all, or "".
func (g *Grant) shapeProblem() string {
	switch {
	case !grantIDRE.MatchString(g.GrantID):
		return "grant_id must be 8 to 64 letters, digits, _ or -"
	case !grantIDRE.MatchString(g.Nonce) || len(g.Nonce) < 16:
		return "nonce must be 16 to 64 letters, digits, _ or -"
	case !hostIDRE.MatchString(g.Host):
		return "host must be a host id (letters, digits, . _ -, at most 128)"
	case !policyAliasRE.MatchString(g.Workdir):
		return "workdir must be a workdir alias"
	case len(g.Argv) == 0 || g.Argv[0] == "":
		return "argv must name a program"
	case len(g.Argv) > MaxGrantArgv:
		return fmt.Sprintf("argv has more than %d elements", MaxGrantArgv)
	case !sha256HexRE.MatchString(g.ArgvHash):
		return "argv_hash must be 64 lower-case hex digits"
	case g.MaxUses < 1 || g.MaxUses > MaxGrantUses:
		return fmt.Sprintf("max_uses must be 1..%d", MaxGrantUses)
	case len(g.IssuedBy) > 128 || !utf8.ValidString(g.IssuedBy):
		return "issued_by must be at most 128 bytes of UTF-8"
	case g.Constraints.Cwd == "" || len(g.Constraints.Cwd) > 1024:
		return `constraints.cwd must be a workdir-relative directory ("." for the root)`
	}
	for _, a := range g.Argv {
		if strings.IndexByte(a, 0) >= 0 || !utf8.ValidString(a) {
			return "an argv element contains a NUL byte or is not UTF-8"
		}
	}
	for _, ts := range []string{g.IssuedAt, g.ExpiresAt} {
		if _, err := time.Parse(time.RFC3339, ts); err != nil {
			return "issued_at and expires_at must be RFC 3339 times"
		}
	}
	return ""
}

// PublicKeyText is how a public key is written in the policy: standard
// base64 of its 32 bytes.
func PublicKeyText(pub ed25519.PublicKey) string { return base64.StdEncoding.EncodeToString(pub) }

// ParsePublicKey reads a policy's public key.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, errors.New("not the base64 of a 32-byte Ed25519 public key")
	}
	return ed25519.PublicKey(b), nil
}

// MarshalPrivateKey is the PEM (PKCS #8) text of a grant signing key.
func MarshalPrivateKey(priv ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParsePrivateKey reads MarshalPrivateKey's text.
func ParsePrivateKey(data []byte) (ed25519.PrivateKey, error) {
	blk, _ := pem.Decode(data)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, errors.New("not a PEM PRIVATE KEY")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, errors.New("not a PKCS #8 private key")
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, errors.New("not an Ed25519 key")
	}
	return priv, nil
}
