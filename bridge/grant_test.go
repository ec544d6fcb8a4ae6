package bridge

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/serverfs/serverfs/bridge/wire"
	"github.com/serverfs/serverfs/internal/errs"
)

const grantTestHost = "host-a"

// grantFixture is a real bridge (over its socket) with grant keys pinned,
// two workdirs and a known state directory.
type grantFixture struct {
	c           *wire.Client
	priv, other ed25519.PrivateKey
	root, root2 string
	state       string
}

func newGrantFixture(t *testing.T, gp func(*GrantPolicy)) *grantFixture {
	t.Helper()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	f := &grantFixture{priv: priv, other: other, root: rtRepo(t), root2: rtRepo(t), state: t.TempDir()}
	// The canary exists: where the kernel refuses user namespaces,
	// Landlock keeps new top-level entries out (sandbox_git.go).
	rtWrite(t, filepath.Join(f.root, "ran"), "")
	rtWrite(t, filepath.Join(f.root2, "ran"), "")
	g := &GrantPolicy{HostID: grantTestHost, PublicKeys: []string{PublicKeyText(priv.Public().(ed25519.PublicKey))}, AllowMutates: true}
	if gp != nil {
		gp(g)
	}
	policy := &Policy{Workdirs: map[string]WorkdirPolicy{
		"wd":  {Root: f.root, ReadWrite: true, RepoOps: true},
		"wd2": {Root: f.root2, ReadWrite: true, RepoOps: true},
	}, Grants: g}
	dir, err := os.MkdirTemp("", "serverfs-grant-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f.c, _ = startBridgeIn(t, policy, f.state, dir)
	return f
}

// grant is a valid, unsigned grant for wd that appends a line to the
// canary file "ran" in the workdir (mutates) when it runs.
func (f *grantFixture) grant(now time.Time) *Grant {
	argv := []string{"sh", "-c", "echo ran >> ran"}
	return &Grant{Protocol: GrantProtocol, GrantID: randomHex(16), Host: grantTestHost, Workdir: "wd",
		Argv: argv, ArgvHash: ArgvHash(argv), MaxUses: 1,
		IssuedAt: now.UTC().Format(time.RFC3339), ExpiresAt: now.Add(5 * time.Minute).UTC().Format(time.RFC3339),
		Nonce: randomHex(16), IssuedBy: "test", Constraints: GrantConstraints{Mutates: true, Cwd: "."}}
}

func (f *grantFixture) sign(t *testing.T, g *Grant) string {
	t.Helper()
	tok, err := SignGrantObject(f.priv, g)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// runs counts the canary's lines in both workdirs: how often a granted
// command ran.
func (f *grantFixture) runs(t *testing.T) int {
	n := 0
	for _, r := range []string{f.root, f.root2} {
		b, _ := os.ReadFile(filepath.Join(r, "ran"))
		n += strings.Count(string(b), "ran\n")
	}
	return n
}

func (f *grantFixture) lastLedger(t *testing.T) LedgerEntry {
	t.Helper()
	s, err := OpenGrantStore(f.state)
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Ledger()
	if err != nil || len(l) == 0 {
		t.Fatalf("ledger: %v, %d lines", err, len(l))
	}
	return l[len(l)-1]
}

// TestGrantNegativeMatrix: each bad grant is refused with
// its code, the command it carries never runs (its canary file stays
// absent), and the ledger has a line with that code.
func TestGrantNegativeMatrix(t *testing.T) {
	needLandlock(t)
	f := newGrantFixture(t, nil)
	now := time.Now()
	ctx := context.Background()
	mustRefuse := func(name, workdir, token string, want errs.Code) {
		t.Helper()
		before := f.runs(t)
		res, err := f.c.RunGrant(ctx, workdir, token)
		if errs.CodeOf(err) != want {
			t.Errorf("%s: %+v, %v; want %s", name, res, err, want)
		}
		if f.runs(t) != before {
			t.Errorf("%s: the command ran", name)
		}
		if e := f.lastLedger(t); e.Code != string(want) || e.Outcome != "refused" || e.ExitCode != nil {
			t.Errorf("%s: last ledger line %+v, want a refusal with %s", name, e, want)
		}
	}

	g := f.grant(now)
	mustRefuse("unsigned", "wd", mustJSON(t, g), errs.GrantBadSignature)

	g = f.grant(now)
	tok := f.sign(t, g)
	sig := g.Signature.Value
	bad := []byte(sig)
	bad[3] ^= 1
	if bad[3] == '+' || bad[3] == '/' {
		bad[3] = 'A'
	}
	mustRefuse("wrong signature", "wd", strings.Replace(tok, sig, string(bad), 1), errs.GrantBadSignature)

	g = f.grant(now)
	tok, _ = SignGrantObject(f.other, g)
	mustRefuse("unknown key", "wd", tok, errs.GrantUnknownKey)

	g = f.grant(now)
	g.IssuedAt, g.ExpiresAt = now.Add(-20*time.Minute).UTC().Format(time.RFC3339), now.Add(-12*time.Minute).UTC().Format(time.RFC3339)
	mustRefuse("expired", "wd", f.sign(t, g), errs.GrantExpired)

	g = f.grant(now)
	g.IssuedAt, g.ExpiresAt = now.Add(5*time.Minute).UTC().Format(time.RFC3339), now.Add(10*time.Minute).UTC().Format(time.RFC3339)
	mustRefuse("not yet valid", "wd", f.sign(t, g), errs.GrantExpired)

	g = f.grant(now)
	g.ExpiresAt = now.Add(11 * time.Minute).UTC().Format(time.RFC3339)
	mustRefuse("TTL over 10 min", "wd", f.sign(t, g), errs.GrantExpired)

	g = f.grant(now)
	g.Host = "host-b"
	mustRefuse("other host", "wd", f.sign(t, g), errs.GrantWrongHost)

	g = f.grant(now)
	mustRefuse("other workdir", "wd2", f.sign(t, g), errs.GrantWrongWorkdir)

	// The argv changed after signing: the signature no longer matches.
	g = f.grant(now)
	tok = f.sign(t, g)
	mustRefuse("altered argv", "wd", strings.Replace(tok, "echo ran", "echo RAN", 1), errs.GrantBadSignature)
	// A signed argv_hash that is not the argv's.
	g = f.grant(now)
	g.ArgvHash = ArgvHash([]string{"true"})
	mustRefuse("argv hash mismatch", "wd", f.sign(t, g), errs.GrantArgvMismatch)

	// Replay: the first use runs, the second is refused.
	g = f.grant(now)
	tok = f.sign(t, g)
	res, err := f.c.RunGrant(ctx, "wd", tok)
	if err != nil || res.ExitCode != 0 || res.Uses != 1 || res.Sandbox != SandboxEnforced || f.runs(t) != 1 {
		t.Fatalf("first use: %+v, %v, runs %d", res, err, f.runs(t))
	}
	if e := f.lastLedger(t); e.Outcome != "ran" || e.GrantID != g.GrantID || e.KeyID != KeyID(f.priv.Public().(ed25519.PublicKey)) ||
		e.ArgvHash != g.ArgvHash || e.Workdir != "wd" || e.ExitCode == nil || *e.ExitCode != 0 || e.Sandbox != SandboxEnforced {
		t.Errorf("ledger of the run: %+v", e)
	}
	mustRefuse("replay", "wd", tok, errs.GrantReplay)

	// Over max_uses: two uses run, the third is refused.
	g = f.grant(now)
	g.MaxUses = 2
	tok = f.sign(t, g)
	for i := 1; i <= 2; i++ {
		if res, err := f.c.RunGrant(ctx, "wd", tok); err != nil || res.Uses != i {
			t.Fatalf("use %d of 2: %+v, %v", i, res, err)
		}
	}
	mustRefuse("over max_uses", "wd", tok, errs.GrantReplay)

	// The nonce of a grant already seen, under another grant id.
	g2 := f.grant(now)
	g2.Nonce = g.Nonce
	mustRefuse("nonce seen", "wd", f.sign(t, g2), errs.GrantReplay)

	g = f.grant(now)
	tok = f.sign(t, g)
	st, err := OpenGrantStore(f.state)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Revoke(g.GrantID, now); err != nil {
		t.Fatal(err)
	}
	mustRefuse("revoked", "wd", tok, errs.GrantRevoked)

	g = f.grant(now)
	g.Constraints.Network = true
	mustRefuse("network beyond the policy", "wd", f.sign(t, g), errs.GrantConstraintViolation)
	g = f.grant(now)
	g.Constraints.UnixSockets = true
	mustRefuse("Unix sockets beyond the policy", "wd", f.sign(t, g), errs.GrantConstraintViolation)
	g = f.grant(now)
	g.Constraints.Cwd = "../"
	mustRefuse("cwd outside the workdir", "wd", f.sign(t, g), errs.GrantConstraintViolation)

	g = f.grant(now)
	g.Argv = []string{"sh", "-c", "echo ran >> ran", strings.Repeat("x", MaxGrantBytes)}
	g.ArgvHash = ArgvHash(g.Argv)
	mustRefuse("oversized", "wd", f.sign(t, g), errs.GrantTooLarge)

	mustRefuse("not JSON", "wd", "run it please", errs.GrantMalformed)
	g = f.grant(now)
	mustRefuse("unknown field", "wd", strings.Replace(f.sign(t, g), `{"argv"`, `{"shell":"sh -c","argv"`, 1), errs.GrantMalformed)
	g = f.grant(now)
	mustRefuse("duplicate key", "wd", strings.Replace(f.sign(t, g), `{"argv"`, `{"workdir":"wd2","argv"`, 1), errs.GrantMalformed)
	g = f.grant(now)
	g.Protocol = "w2m-grant/v1"
	mustRefuse("other protocol", "wd", f.sign(t, g), errs.GrantMalformed)

	if n := f.runs(t); n != 3 {
		t.Errorf("the canary shows %d runs; want the 3 valid uses", n)
	}
}

// TestGrantMutatesNeedsPolicy: without grants.allow_mutates a grant
// that says mutates is a constraint violation; one that does not runs in
// a read-only workdir (the sandbox refuses its write).
func TestGrantMutatesNeedsPolicy(t *testing.T) {
	needLandlock(t)
	f := newGrantFixture(t, func(g *GrantPolicy) { g.AllowMutates = false })
	now := time.Now()
	g := f.grant(now)
	if _, err := f.c.RunGrant(context.Background(), "wd", f.sign(t, g)); errs.CodeOf(err) != errs.GrantConstraintViolation {
		t.Fatalf("mutates without allow_mutates: %v", err)
	}
	g = f.grant(now)
	g.Constraints.Mutates = false
	res, err := f.c.RunGrant(context.Background(), "wd", f.sign(t, g))
	if err != nil || res.ExitCode == 0 || f.runs(t) != 0 || !strings.Contains(res.Stderr, "Permission denied") {
		t.Fatalf("a read-only grant wrote: %+v, %v, runs %d", res, err, f.runs(t))
	}
}

// TestGrantArgvAsGiven: argv elements that a shell or a program could
// read as options, assignments, response files or expansions reach the
// program exactly as signed; the cwd constraint is where it runs.
func TestGrantArgvAsGiven(t *testing.T) {
	needLandlock(t)
	f := newGrantFixture(t, nil)
	rtWrite(t, filepath.Join(f.root, "sub", "here.txt"), "x")
	now := time.Now()
	g := f.grant(now)
	g.Argv = []string{"printf", `[%s]\n`, "-x", "KEY=value", "@file", "$HOME", "a b;c", "`id`", "*"}
	g.ArgvHash = ArgvHash(g.Argv)
	g.Constraints = GrantConstraints{Cwd: "sub"}
	res, err := f.c.RunGrant(context.Background(), "wd", f.sign(t, g))
	if err != nil {
		t.Fatal(err)
	}
	if want := "[-x]\n[KEY=value]\n[@file]\n[$HOME]\n[a b;c]\n[`id`]\n[*]\n"; res.Stdout != want || res.ExitCode != 0 {
		t.Fatalf("argv was not run as given: %+v", res)
	}
	g = f.grant(now)
	g.Argv = []string{"ls"}
	g.ArgvHash = ArgvHash(g.Argv)
	g.Constraints = GrantConstraints{Cwd: "sub"}
	if res, err := f.c.RunGrant(context.Background(), "wd", f.sign(t, g)); err != nil || res.Stdout != "here.txt\n" {
		t.Fatalf("cwd sub: %+v, %v", res, err)
	}
}

// TestGrantHostileJSON: a huge grant and a deeply nested one are refused
// before they are decoded, quickly.
func TestGrantHostileJSON(t *testing.T) {
	for _, tc := range []struct {
		name  string
		token string
		want  errs.Code
	}{
		{"64 MiB", `{"argv":["` + strings.Repeat("a", 64<<20) + `"]}`, errs.GrantTooLarge},
		{"deep arrays", `{"argv":` + strings.Repeat("[", 4000) + strings.Repeat("]", 4000) + `}`, errs.GrantMalformed},
		{"deep objects", strings.Repeat(`{"constraints":`, 500) + "{}" + strings.Repeat("}", 500), errs.GrantMalformed},
		{"not UTF-8", "{\"argv\":[\"\xff\"]}", errs.GrantMalformed},
	} {
		start := time.Now()
		_, err := parseGrant(tc.token)
		if errs.CodeOf(err) != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: refused after %s", tc.name, d)
		}
	}
}

// TestGrantStatePruned: entries of expired grants and revocations leave
// the state file, which stays bounded.
func TestGrantStatePruned(t *testing.T) {
	s, err := OpenGrantStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i := 0; i < 50; i++ {
		if err := s.Revoke(fmt.Sprintf("grant-%04d", i), now.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Revoke("grant-live", now); err != nil {
		t.Fatal(err)
	}
	st, err := s.read()
	if err != nil || len(st.Revoked) != 1 || st.Revoked["grant-live"] == 0 {
		t.Fatalf("state after pruning: %+v, %v", st, err)
	}
	if l, _ := s.Ledger(); len(l) != 51 {
		t.Errorf("ledger has %d lines, want 51 revocations", len(l))
	}
}

// TestSignGrantRefuses: the signer never produces what a bridge refuses.
func TestSignGrantRefuses(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	base := GrantRequest{Host: "h1", Workdir: "wd", Argv: []string{"true"}, TTL: time.Minute, MaxUses: 1}
	for name, mod := range map[string]func(*GrantRequest){
		"ttl":     func(r *GrantRequest) { r.TTL = 11 * time.Minute },
		"uses":    func(r *GrantRequest) { r.MaxUses = 0 },
		"argv":    func(r *GrantRequest) { r.Argv = nil },
		"nul":     func(r *GrantRequest) { r.Argv = []string{"a\x00b"} },
		"workdir": func(r *GrantRequest) { r.Workdir = "../x" },
	} {
		r := base
		mod(&r)
		if _, _, err := SignGrant(priv, r); err == nil {
			t.Errorf("%s: signed", name)
		}
	}
	g, tok, err := SignGrant(priv, base)
	if err != nil {
		t.Fatal(err)
	}
	// Canonical: sorted keys, no whitespace; the signature verifies.
	if strings.ContainsAny(tok, " \n") || !strings.HasPrefix(tok, `{"argv":["true"],"argv_hash":"`) {
		t.Errorf("token not canonical: %s", tok)
	}
	p, err := parseGrant(tok)
	if err != nil || p.GrantID != g.GrantID {
		t.Fatal(err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGrantPolicyFields: the grants section loads strictly and is
// validated (keys, host id); render-policy reads BRIDGE_GRANT_*.
func TestGrantPolicyFields(t *testing.T) {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	key := PublicKeyText(pub)
	root := t.TempDir()
	p := &Policy{Workdirs: map[string]WorkdirPolicy{"w": rtPolicy(root, nil)},
		Grants: &GrantPolicy{HostID: "h1", PublicKeys: []string{key}, AllowNetwork: true, AllowUnixSockets: true, TimeoutSeconds: 30}}
	file := filepath.Join(t.TempDir(), "policy.json")
	if err := WritePolicy(file, p); err != nil {
		t.Fatal(err)
	}
	got, err := LoadPolicy(file)
	if err != nil || got.Grants == nil || got.Grants.HostID != "h1" || !got.Grants.AllowNetwork || !got.Grants.AllowUnixSockets || got.Grants.PublicKeys[0] != key {
		t.Fatalf("loaded %+v, %v", got, err)
	}
	b, _ := os.ReadFile(file)
	os.WriteFile(file, []byte(strings.Replace(string(b), `"host_id"`, `"HOST_ID"`, 1)), 0o600)
	if _, err := LoadPolicy(file); err == nil {
		t.Error("a grants field in another case was accepted")
	}
	for name, g := range map[string]GrantPolicy{
		"no keys":   {HostID: "h1"},
		"bad key":   {HostID: "h1", PublicKeys: []string{"AAAA"}},
		"same key":  {HostID: "h1", PublicKeys: []string{key, key}},
		"bad host":  {HostID: "h 1", PublicKeys: []string{key}},
		"long time": {HostID: "h1", PublicKeys: []string{key}, TimeoutSeconds: 99999},
	} {
		p.Grants = &g
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "grants: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
	env := []string{"WORKDIR_01_ALIAS=w", "WORKDIR_01_PATH=" + root, "BRIDGE_GRANT_PUBLIC_KEYS=" + key, "BRIDGE_GRANT_HOST_ID=build-1", "BRIDGE_GRANT_ALLOW_MUTATES=true", "BRIDGE_GRANT_ALLOW_UNIX_SOCKETS=true"}
	rp, err := RenderPolicy(env)
	if err != nil || rp.Grants == nil || rp.Grants.HostID != "build-1" || !rp.Grants.AllowMutates || rp.Grants.AllowNetwork || !rp.Grants.AllowUnixSockets {
		t.Fatalf("rendered %+v, %v", rp, err)
	}
	if _, err := RenderPolicy(append(env[:2:2], "BRIDGE_GRANT_HOST_ID=x")); err == nil {
		t.Error("BRIDGE_GRANT_HOST_ID without keys was accepted")
	}
	if rp, err := RenderPolicy(env[:2]); err != nil || rp.Grants != nil {
		t.Errorf("no keys: %+v, %v", rp, err)
	}
}

// TestGrantConcurrentUses: eight callers race with one single-use
// grant: exactly one runs it, the others are refused (GRANT_REPLAY, or
// LEASE_BUSY while the one holds the workdir), nothing runs twice.
func TestGrantConcurrentUses(t *testing.T) {
	needLandlock(t)
	f := newGrantFixture(t, nil)
	tok := f.sign(t, f.grant(time.Now()))
	var wg sync.WaitGroup
	codes := make([]errs.Code, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.c.RunGrant(context.Background(), "wd", tok)
			codes[i] = errs.CodeOf(err)
		}()
	}
	wg.Wait()
	ok := 0
	for _, c := range codes {
		switch c {
		case "":
			ok++
		case errs.GrantReplay, errs.LeaseBusy:
		default:
			t.Errorf("code %s", c)
		}
	}
	if ok != 1 || f.runs(t) != 1 {
		t.Fatalf("%d callers succeeded, the command ran %d times (codes %v)", ok, f.runs(t), codes)
	}
}

// BenchmarkGrantRefused is one refused call (a valid signature for
// another workdir) through the bridge's socket: parse, Ed25519 verify,
// the ledger line with its fsync.
func BenchmarkGrantRefused(b *testing.B) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	g := &Grant{Protocol: GrantProtocol, GrantID: randomHex(16), Host: grantTestHost, Workdir: "wd2", Argv: []string{"true"}, ArgvHash: ArgvHash([]string{"true"}),
		MaxUses: 1, IssuedAt: time.Now().UTC().Format(time.RFC3339), ExpiresAt: time.Now().Add(5 * time.Minute).UTC().Format(time.RFC3339),
		Nonce: randomHex(16), Constraints: GrantConstraints{Cwd: "."}}
	tok, _ := SignGrantObject(priv, g)
	policy := &Policy{Workdirs: map[string]WorkdirPolicy{"wd": {Root: b.TempDir(), ReadWrite: true, RepoOps: true}},
		Grants: &GrantPolicy{HostID: grantTestHost, PublicKeys: []string{PublicKeyText(priv.Public().(ed25519.PublicKey))}}}
	srv, err := NewServer(policy, []byte(testToken), nil, b.TempDir(), slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	b.ResetTimer()
	for range b.N {
		if _, err := srv.RunGrant(context.Background(), "wd", tok); errs.CodeOf(err) != errs.GrantWrongWorkdir {
			b.Fatal(err)
		}
	}
}

// TestGrantUsesAfterExpiryWait: a call that passed the time check just
// before its grant expired and then waited for the grant state's locks
// while another call, acting later, updated the state, must not find the
// entry pruned and count the grant's uses from zero again. The grant
// state's clock is moved past expiry to stand for that wait: the entry
// survives the other call's pruning (pruneMargin), the waiting call is
// refused with GRANT_EXPIRED, and the single-use command ran once.
func TestGrantUsesAfterExpiryWait(t *testing.T) {
	needLandlock(t)
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	root := rtRepo(t)
	rtWrite(t, filepath.Join(root, "ran"), "") // as in newGrantFixture
	policy := &Policy{Workdirs: map[string]WorkdirPolicy{"wd": {Root: root, ReadWrite: true, RepoOps: true}},
		Grants: &GrantPolicy{HostID: grantTestHost, PublicKeys: []string{PublicKeyText(priv.Public().(ed25519.PublicKey))}, AllowMutates: true}}
	srv, err := NewServer(policy, []byte(testToken), nil, t.TempDir(), slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	f := &grantFixture{priv: priv}
	g := f.grant(time.Now())
	tok := f.sign(t, g)
	ran := func() int {
		b, _ := os.ReadFile(filepath.Join(root, "ran"))
		return strings.Count(string(b), "ran\n")
	}
	if _, err := srv.RunGrant(context.Background(), "wd", tok); err != nil || ran() != 1 {
		t.Fatalf("first use: %v, ran %d times", err, ran())
	}
	expires, _ := time.Parse(time.RFC3339, g.ExpiresAt)
	later := expires.Add(GrantClockSkew + time.Second)
	srv.grants.now = func() time.Time { return later }
	// Another call, acting after the grant expired, updates the state.
	if err := srv.grants.Revoke("some-other-grant", later); err != nil {
		t.Fatal(err)
	}
	st, err := srv.grants.read()
	if err != nil || st.Grants[g.GrantID] == nil {
		t.Fatalf("the used grant's entry was pruned while a call could still be waiting: %+v, %v", st, err)
	}
	// The call that passed verifyGrant (at the real time) and waited.
	_, err = srv.RunGrant(context.Background(), "wd", tok)
	if errs.CodeOf(err) != errs.GrantExpired || ran() != 1 {
		t.Fatalf("the waiting call: %v (want GRANT_EXPIRED), the single-use command ran %d times", err, ran())
	}
	// Pruning stays bounded: past the margin the entry goes.
	later = time.Unix(st.Grants[g.GrantID].Until, 0).Add(pruneMargin + time.Second)
	if err := srv.grants.Revoke("some-other-grant", later); err != nil {
		t.Fatal(err)
	}
	if st, err := srv.grants.read(); err != nil || st.Grants[g.GrantID] != nil {
		t.Fatalf("an entry past the margin is kept: %+v, %v", st, err)
	}
}

// TestGrantCwdSwappedForSymlink: the cwd is checked (no symlink, inside
// the workdir) and then a process the agent controls swaps it for a
// symlink to a directory outside before the command starts (the hook
// stands for that race). The command still runs in the directory that
// was checked, never in the symlink's target; a cwd that is a symlink
// when the grant is checked is refused.
func TestGrantCwdSwappedForSymlink(t *testing.T) {
	needLandlock(t)
	f := newGrantFixture(t, nil)
	outside := t.TempDir()
	rtWrite(t, filepath.Join(f.root, "sub", "inside.txt"), "x")
	rtWrite(t, filepath.Join(outside, "outside.txt"), "x")
	if err := os.Symlink(outside, filepath.Join(f.root, "link")); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	g := f.grant(now)
	g.Argv = []string{"ls"}
	g.ArgvHash = ArgvHash(g.Argv)
	g.Constraints = GrantConstraints{Cwd: "link"}
	if _, err := f.c.RunGrant(context.Background(), "wd", f.sign(t, g)); errs.CodeOf(err) != errs.GrantConstraintViolation {
		t.Fatalf("a symlinked cwd: %v, want GRANT_CONSTRAINT_VIOLATION", err)
	}
	swap := func() {
		if err := os.Rename(filepath.Join(f.root, "sub"), filepath.Join(f.root, "moved")); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(outside, filepath.Join(f.root, "sub")); err != nil {
			t.Error(err)
		}
	}
	grantBeforeStart.Store(&swap)
	defer grantBeforeStart.Store(nil)
	g = f.grant(now)
	g.Argv = []string{"ls"}
	g.ArgvHash = ArgvHash(g.Argv)
	g.Constraints = GrantConstraints{Cwd: "sub"}
	res, err := f.c.RunGrant(context.Background(), "wd", f.sign(t, g))
	if err != nil || res.Stdout != "inside.txt\n" {
		t.Fatalf("cwd swapped for a symlink after the check: %+v, %v (want the checked directory's listing, inside.txt)", res, err)
	}
}

// TestGrantOutputHidesOtherWorkdirs: a granted command in wd that prints
// the roots of wd2 and wd shows them as "wd2:" and "wd:".
func TestGrantOutputHidesOtherWorkdirs(t *testing.T) {
	needLandlock(t)
	f := newGrantFixture(t, nil)
	g := f.grant(time.Now())
	g.Argv = []string{"echo", f.root2 + "/x", f.root}
	g.ArgvHash = ArgvHash(g.Argv)
	res, err := f.c.RunGrant(context.Background(), "wd", f.sign(t, g))
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "wd2:/x wd:\n" {
		t.Errorf("stdout %q", res.Stdout)
	}
}
