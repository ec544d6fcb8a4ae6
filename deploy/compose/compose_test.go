package compose

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// repoRoot is the ServerFS repository, two levels up from deploy/compose.
const repoRoot = "../.."

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCommittedFilesAreGenerated: compose.yml and .env.example are the
// generator's output, byte for byte.
func TestCommittedFilesAreGenerated(t *testing.T) {
	for name, want := range map[string]string{
		"compose.yml":  ComposeYAML(),
		".env.example": EnvExample(),
	} {
		if got := readRepoFile(t, name); got != want {
			t.Errorf("%s differs from the generator's output: run `go generate ./...` in deploy/compose", name)
		}
	}
}

func TestGeneratorIsDeterministic(t *testing.T) {
	if ComposeYAML() != ComposeYAML() || EnvExample() != EnvExample() {
		t.Fatal("two renderings differ")
	}
}

// TestComposeText checks what the loaded model cannot show: no env_file, no
// ports, no Docker socket, no short volume syntax, nothing left to expand.
func TestComposeText(t *testing.T) {
	var lines []string // without comment lines
	for _, line := range strings.Split(readRepoFile(t, "compose.yml"), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			lines = append(lines, line)
		}
	}
	text := strings.Join(lines, "\n")
	for _, bad := range []string{"env_file", "ports:", "docker.sock", "privileged", "network_mode", "pid:", "cap_add", "TODO", "..."} {
		if strings.Contains(text, bad) {
			t.Errorf("compose.yml contains %q", bad)
		}
	}
	// The 16 slots and the bridge's socket directory.
	if n := strings.Count(text, "create_host_path: false"); n != Slots+1 {
		t.Errorf("create_host_path: false appears %d times, want %d", n, Slots+1)
	}
	if n := strings.Count(text, "- type: bind"); n != Slots+1 {
		t.Errorf("long-syntax bind mounts: %d, want %d", n, Slots+1)
	}
	if regexp.MustCompile(`(?m)^\s*- [^ ]*:/workdirs`).MatchString(text) {
		t.Error("compose.yml uses the short volume syntax")
	}
}

// TestEnvExample: every slot, empty credentials, read-only by default, and
// every variable compose.yml reads.
func TestEnvExample(t *testing.T) {
	env := parseDotEnv(t, readRepoFile(t, ".env.example"))
	for n := 1; n <= Slots; n++ {
		for _, s := range []string{"ALIAS", "PATH", "DESCRIPTION"} {
			if v, ok := env[SlotVar(n, s)]; !ok || v != "" {
				t.Errorf("%s: %q (present %v), want present and empty", SlotVar(n, s), v, ok)
			}
		}
		if v := env[SlotVar(n, "READ_ONLY")]; v != "true" {
			t.Errorf("%s=%q, want true", SlotVar(n, "READ_ONLY"), v)
		}
		if v := env[SlotVar(n, "REPO_OPS_ENABLED")]; v != "false" {
			t.Errorf("%s=%q, want false", SlotVar(n, "REPO_OPS_ENABLED"), v)
		}
	}
	for _, k := range []string{"CONTROL_PLANE_TUNNEL_ID", "CONTROL_PLANE_API_KEY"} {
		if v, ok := env[k]; !ok || v != "" {
			t.Errorf("%s=%q (present %v): must be present and empty", k, v, ok)
		}
	}
	if env["OPENAI_TUNNEL_IMAGE"] != TunnelImage {
		t.Errorf("OPENAI_TUNNEL_IMAGE=%q", env["OPENAI_TUNNEL_IMAGE"])
	}
	if _, ok := env["TZ"]; !ok {
		t.Error("TZ missing")
	}
	// Every ${VAR} of compose.yml is documented in .env.example.
	for _, m := range regexp.MustCompile(`\$\{([A-Z0-9_]+)`).FindAllStringSubmatch(readRepoFile(t, "compose.yml"), -1) {
		if _, ok := env[m[1]]; !ok {
			t.Errorf("compose.yml reads %s, which .env.example does not list", m[1])
		}
	}
}

// parseDotEnv reads KEY=value lines (values unquoted), ignoring comments.
func parseDotEnv(t *testing.T, text string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf(".env.example:%d: not KEY=value: %q", i+1, line)
		}
		if _, dup := env[k]; dup {
			t.Errorf(".env.example: %s is set twice", k)
		}
		env[k] = strings.Trim(v, `"`)
	}
	return env
}

// load loads compose.yml from the repository root, as `docker compose` run
// there would, with envText as .env and nothing from the OS environment.
func load(t *testing.T, envText string) (*types.Project, error) {
	t.Helper()
	envFile := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(envFile, []byte(envText), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := cli.NewProjectOptions(
		[]string{filepath.Join(root, "compose.yml")},
		cli.WithName("serverfs"),
		cli.WithWorkingDirectory(root),
		cli.WithEnvFiles(envFile),
		cli.WithDotEnv,
	)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return opts.LoadProject(ctx)
}

func mustLoad(t *testing.T, envText string) *types.Project {
	t.Helper()
	p, err := load(t, envText)
	if err != nil {
		t.Fatalf("loading compose.yml: %v", err)
	}
	return p
}

func service(t *testing.T, p *types.Project, name string) types.ServiceConfig {
	t.Helper()
	s, err := p.GetService(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func env(s types.ServiceConfig, key string) (string, bool) {
	v, ok := s.Environment[key]
	if !ok || v == nil {
		return "", ok
	}
	return *v, true
}

// slotCase is one slot of the test .env.
type slotCase struct {
	alias, desc string
	readOnly    string // the .env value; "" leaves WORKDIR_NN_READ_ONLY unset
	dir         string // host path; "" leaves WORKDIR_NN_PATH unset
}

// TestComposeLoads loads compose.yml with a .env that enables some slots
// (one read-write) and sets dummy tunnel credentials, and checks every
// requirement of the deployment.
func TestComposeLoads(t *testing.T) {
	tmp := t.TempDir()
	mk := func(name string) string {
		d := filepath.Join(tmp, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	slots := map[int]slotCase{
		1:  {alias: "projects", desc: "Project code", readOnly: "true", dir: mk("projects")},
		3:  {alias: "scratch", desc: "A writable scratch area", readOnly: "false", dir: mk("scratch")},
		7:  {alias: "docs", dir: mk("docs with space")},
		16: {alias: "last", desc: "The last slot", readOnly: "TRUE", dir: mk("last")},
	}
	const (
		apiKey   = "sk-runtime-DUMMY-0123456789"
		tunnelID = "tunnel_DUMMY_abc"
	)
	var e strings.Builder
	fmt.Fprintf(&e, "CONTROL_PLANE_API_KEY=%s\nCONTROL_PLANE_TUNNEL_ID=%s\n", apiKey, tunnelID)
	fmt.Fprintf(&e, "SERVERFS_UID=1500\nSERVERFS_GID=1600\nSERVERFS_MAX_READ_BYTES=65536\n")
	fmt.Fprintf(&e, "SERVERFS_EXTRA_DENY_GLOBS=*.sqlite,secrets/**\n")
	for n, s := range slots {
		fmt.Fprintf(&e, "%s=%s\n%s=%s\n%s=\"%s\"\n", SlotVar(n, "ALIAS"), s.alias, SlotVar(n, "PATH"), s.dir, SlotVar(n, "DESCRIPTION"), s.desc)
		if s.readOnly != "" {
			fmt.Fprintf(&e, "%s=%s\n", SlotVar(n, "READ_ONLY"), s.readOnly)
		}
	}
	p := mustLoad(t, e.String())
	root, _ := filepath.Abs(repoRoot)

	if got := p.ServiceNames(); !slices.Equal(sortedCopy(got), []string{TunnelService, ServerService}) {
		t.Fatalf("services %v", got)
	}
	srv := service(t, p, ServerService)
	tun := service(t, p, TunnelService)

	// Mounts: 16, long syntax, bind, no host path creation, .empty for unset
	// slots, read-only unless the slot says false.
	if len(srv.Volumes) != Slots+1 {
		t.Fatalf("%s has %d volumes, want %d (the slots and the bridge)", ServerService, len(srv.Volumes), Slots+1)
	}
	for i, v := range srv.Volumes[:Slots] {
		n := i + 1
		sc, set := slots[n]
		wantSource := filepath.Join(root, ".empty")
		if set {
			wantSource = sc.dir
		}
		wantRO := !set || sc.readOnly != "false"
		if v.Type != types.VolumeTypeBind || v.Target != SlotTarget(n) || v.Source != wantSource || v.ReadOnly != wantRO {
			t.Errorf("slot %02d: type=%s source=%s target=%s read_only=%v; want bind %s %s %v", n, v.Type, v.Source, v.Target, v.ReadOnly, wantSource, SlotTarget(n), wantRO)
		}
		if v.Bind == nil || bool(v.Bind.CreateHostPath) {
			t.Errorf("slot %02d: create_host_path is not false", n)
		}
		// The server's mode follows the same variable.
		wantMode := "true"
		if !wantRO {
			wantMode = "false"
		}
		if got, _ := env(srv, SlotVar(n, "READ_ONLY")); !strings.EqualFold(got, wantMode) {
			t.Errorf("slot %02d: server %s=%q, want %s", n, SlotVar(n, "READ_ONLY"), got, wantMode)
		}
		gotAlias, ok1 := env(srv, SlotVar(n, "ALIAS"))
		gotDesc, ok2 := env(srv, SlotVar(n, "DESCRIPTION"))
		if !ok1 || !ok2 || gotAlias != sc.alias || gotDesc != sc.desc {
			t.Errorf("slot %02d: server alias %q desc %q, want %q %q", n, gotAlias, gotDesc, sc.alias, sc.desc)
		}
	}

	// The server's environment: aliases, descriptions, modes and limits only;
	// no host path, no tunnel secret.
	wantKeys := map[string]bool{"TZ": true, "SERVERFS_LISTEN": true, "SERVERFS_AUTH_TOKEN_FILE": true, "SERVERFS_BRIDGE_SOCKET": true, "SERVERFS_BRIDGE_TOKEN_FILE": true}
	for _, l := range append(slices.Clone(Limits), ServerSettings...) {
		wantKeys[l.Name] = true
	}
	for n := 1; n <= Slots; n++ {
		for _, s := range []string{"ALIAS", "DESCRIPTION", "READ_ONLY", "REPO_OPS_ENABLED", "URL_TEMPLATE"} {
			wantKeys[SlotVar(n, s)] = true
		}
	}
	for k, v := range srv.Environment {
		if !wantKeys[k] {
			t.Errorf("unexpected variable %s in the server's environment", k)
		}
		if strings.HasPrefix(k, "CONTROL_PLANE_") || strings.HasSuffix(k, "_PATH") || strings.Contains(k, "TUNNEL") {
			t.Errorf("%s must not reach the server", k)
		}
		if v == nil {
			t.Errorf("%s has no value (it would be taken from the caller's environment)", k)
			continue
		}
		for _, secret := range []string{apiKey, tunnelID, tmp} {
			if strings.Contains(*v, secret) {
				t.Errorf("%s=%q carries a host path or tunnel secret", k, *v)
			}
		}
	}
	if len(srv.Environment) != len(wantKeys) {
		t.Errorf("server environment has %d variables, want %d", len(srv.Environment), len(wantKeys))
	}
	for k, want := range map[string]string{
		"SERVERFS_LISTEN":           ServerListen,
		"SERVERFS_AUTH_TOKEN_FILE":  MCPTokenFile,
		"SERVERFS_MAX_READ_BYTES":   "65536",
		"SERVERFS_MAX_READ_LINES":   "",
		"SERVERFS_EXTRA_DENY_GLOBS": "*.sqlite,secrets/**",
	} {
		if got, _ := env(srv, k); got != want {
			t.Errorf("server %s=%q, want %q", k, got, want)
		}
	}

	// Server: image, build, user, hardening, network, healthcheck.
	if srv.Image != DefaultImage {
		t.Errorf("server image %q", srv.Image)
	}
	if srv.Build == nil || srv.Build.Dockerfile != "Dockerfile.scratch" || srv.Build.Context != root {
		t.Errorf("server build %+v", srv.Build)
	}
	if srv.User != "1500:1600" {
		t.Errorf("server user %q, want 1500:1600 from SERVERFS_UID/GID", srv.User)
	}
	checkHardening(t, srv)
	if !slices.Equal([]string(srv.Expose), []string{ServerPort}) {
		t.Errorf("server expose %v", srv.Expose)
	}
	if !slices.Equal(sortedCopy(mapKeys(srv.Networks)), []string{InternalNetwork}) {
		t.Errorf("server networks %v, want only %s", mapKeys(srv.Networks), InternalNetwork)
	}
	hc := srv.HealthCheck
	if hc == nil || hc.Disable || !slices.Equal([]string(hc.Test), []string{"CMD", "/serverfs", "healthcheck"}) ||
		!durationIs(hc.Interval, 10*time.Second) || !durationIs(hc.Timeout, 3*time.Second) ||
		!durationIs(hc.StartPeriod, 5*time.Second) || hc.Retries == nil || *hc.Retries != 5 {
		t.Errorf("server healthcheck %+v", hc)
	}
	if srv.Restart != types.RestartPolicyUnlessStopped {
		t.Errorf("server restart %q", srv.Restart)
	}

	// Tunnel: pinned image, credentials, wait for a healthy server, own
	// hardening, both networks, no mounts.
	if tun.Image != TunnelImage {
		t.Errorf("tunnel image %q, want %q", tun.Image, TunnelImage)
	}
	for k, want := range map[string]string{
		"CONTROL_PLANE_API_KEY":    apiKey,
		"CONTROL_PLANE_TUNNEL_ID":  tunnelID,
		"CONTROL_PLANE_BASE_URL":   "https://api.openai.com",
		"MCP_SERVER_URL":           MCPServerURL,
		"MCP_EXTRA_HEADERS":        AuthHeader + ": file:" + MCPTokenFile,
		"MCP_STARTUP_WAIT_TIMEOUT": "60s",
		"LOG_LEVEL":                "info",
		"LOG_FORMAT":               "json",
		"HEALTH_LISTEN_ADDR":       ":" + TunnelHealth,
	} {
		if got, _ := env(tun, k); got != want {
			t.Errorf("tunnel %s=%q, want %q", k, got, want)
		}
	}
	for k := range tun.Environment {
		if strings.HasPrefix(k, "WORKDIR_") {
			t.Errorf("tunnel gets %s", k)
		}
	}
	if dep, ok := tun.DependsOn[ServerService]; !ok || dep.Condition != types.ServiceConditionHealthy {
		t.Errorf("tunnel depends_on %+v", tun.DependsOn)
	}
	if tun.User != "" {
		t.Errorf("tunnel user overridden: %q", tun.User)
	}
	checkHardening(t, tun)
	if !slices.Equal([]string(tun.Expose), []string{TunnelHealth}) {
		t.Errorf("tunnel expose %v", tun.Expose)
	}
	if !slices.Equal(sortedCopy(mapKeys(tun.Networks)), []string{InternalNetwork, EgressNetwork}) {
		t.Errorf("tunnel networks %v", mapKeys(tun.Networks))
	}
	if len(tun.Volumes) != 0 {
		t.Errorf("tunnel has volumes %v", tun.Volumes)
	}

	// Networks.
	if n, ok := p.Networks[InternalNetwork]; !ok || !n.Internal {
		t.Errorf("%s is not internal: %+v", InternalNetwork, n)
	}
	if n, ok := p.Networks[EgressNetwork]; !ok || n.Internal {
		t.Errorf("%s: %+v (present %v), want a non-internal network", EgressNetwork, n, ok)
	}
	_, okBridge := p.Secrets[BridgeSecret]
	mcpTok, okMCP := p.Secrets[MCPTokenSecret]
	if len(p.Volumes) != 0 || len(p.Secrets) != 2 || !okBridge || !okMCP || len(p.Configs) != 0 {
		t.Errorf("unexpected top-level volumes/secrets/configs (only the bridge and MCP token secrets are expected)")
	}
	if mcpTok.File != filepath.Join(root, MCPTokenDefault) {
		t.Errorf("MCP token secret file %q", mcpTok.File)
	}
	// The client token: both services mount it; the tunnel reads it through
	// the server's group, and gets no other secret.
	if len(tun.Secrets) != 1 || tun.Secrets[0].Source != MCPTokenSecret {
		t.Errorf("the tunnel's secrets: %+v", tun.Secrets)
	}
	if !slices.Equal(tun.GroupAdd, []string{"1600"}) {
		t.Errorf("tunnel group_add %v, want SERVERFS_GID 1600", tun.GroupAdd)
	}
	var srvSecrets []string
	for _, s := range srv.Secrets {
		srvSecrets = append(srvSecrets, s.Source)
	}
	if !slices.Equal(sortedCopy(srvSecrets), []string{BridgeSecret, MCPTokenSecret}) {
		t.Errorf("the server's secrets: %v", srvSecrets)
	}
}

// TestTunnelHeaderMatchesServer: the header the tunnel is told to send is
// the one the server checks, and MCP_EXTRA_HEADERS parses the way the
// tunnel client parses it (entries split at ',' and ';', then "Key: value",
// a "file:" value read from that path).
func TestTunnelHeaderMatchesServer(t *testing.T) {
	if !strings.Contains(readRepoFile(t, "mcp/transport/auth.go"), `const AuthHeader = "`+AuthHeader+`"`) {
		t.Errorf("mcp/transport/auth.go does not define AuthHeader as %q", AuthHeader)
	}
	tun := service(t, mustLoad(t, ""), TunnelService)
	v, _ := env(tun, "MCP_EXTRA_HEADERS")
	entries := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' })
	if len(entries) != 1 {
		t.Fatalf("MCP_EXTRA_HEADERS=%q: %d entries", v, len(entries))
	}
	key, val, ok := strings.Cut(entries[0], ":")
	if !ok || strings.TrimSpace(key) != AuthHeader || strings.TrimSpace(val) != "file:"+MCPTokenFile {
		t.Errorf("MCP_EXTRA_HEADERS=%q", v)
	}
	// The token file never enters git or the image's build context.
	for _, f := range []string{".gitignore", ".dockerignore"} {
		if !slices.Contains(strings.Split(readRepoFile(t, f), "\n"), "/secrets/") {
			t.Errorf("%s does not list /secrets/", f)
		}
	}
}

// checkHardening: no ports, no env_file, no Docker socket, read-only root,
// tmpfs /tmp, every capability dropped, no new privileges.
func checkHardening(t *testing.T, s types.ServiceConfig) {
	t.Helper()
	if len(s.Ports) != 0 {
		t.Errorf("%s publishes ports %v", s.Name, s.Ports)
	}
	if len(s.EnvFiles) != 0 {
		t.Errorf("%s has env_file %v", s.Name, s.EnvFiles)
	}
	for _, v := range s.Volumes {
		if strings.Contains(v.Source, "docker.sock") {
			t.Errorf("%s mounts %s", s.Name, v.Source)
		}
	}
	if !s.ReadOnly {
		t.Errorf("%s: read_only is not true", s.Name)
	}
	if !slices.Equal([]string(s.Tmpfs), []string{"/tmp"}) {
		t.Errorf("%s: tmpfs %v", s.Name, s.Tmpfs)
	}
	if !slices.Equal(s.CapDrop, []string{"ALL"}) || len(s.CapAdd) != 0 {
		t.Errorf("%s: cap_drop %v cap_add %v", s.Name, s.CapDrop, s.CapAdd)
	}
	if !slices.Equal(s.SecurityOpt, []string{"no-new-privileges:true"}) {
		t.Errorf("%s: security_opt %v", s.Name, s.SecurityOpt)
	}
	if s.Privileged || s.NetworkMode != "" || s.Pid != "" || s.Ipc != "" {
		t.Errorf("%s: privileged/network_mode/pid/ipc set", s.Name)
	}
}

// TestComposeWithEnvExample: the quick start (`cp .env.example .env`) loads,
// every slot is the disabled placeholder, read-only, and the tunnel
// credentials are empty.
func TestComposeWithEnvExample(t *testing.T) {
	p := mustLoad(t, readRepoFile(t, ".env.example"))
	root, _ := filepath.Abs(repoRoot)
	// The placeholder every unset slot mounts, with its marker (fs.DisabledSentinel).
	if st, err := os.Stat(filepath.Join(root, ".empty", ".serverfs-disabled")); err != nil || !st.Mode().IsRegular() {
		t.Errorf(".empty/.serverfs-disabled: %v", err)
	}
	srv := service(t, p, ServerService)
	for i, v := range srv.Volumes {
		if v.Source != filepath.Join(root, ".empty") || !v.ReadOnly {
			t.Errorf("slot %02d: source %s read_only %v", i+1, v.Source, v.ReadOnly)
		}
	}
	if srv.User != DefaultUID+":"+DefaultGID {
		t.Errorf("user %q", srv.User)
	}
	tun := service(t, p, TunnelService)
	if tun.Image != TunnelImage {
		t.Errorf("tunnel image %q", tun.Image)
	}
	for _, k := range []string{"CONTROL_PLANE_API_KEY", "CONTROL_PLANE_TUNNEL_ID"} {
		if v, _ := env(tun, k); v != "" {
			t.Errorf("%s=%q", k, v)
		}
	}
	// The limits in .env.example reach the server unchanged.
	for _, l := range Limits {
		if got, _ := env(srv, l.Name); got != l.Default {
			t.Errorf("%s=%q, want %s", l.Name, got, l.Default)
		}
	}
}

// TestComposeEmptyEnv: with no .env at all the file still loads, with the
// same safe defaults (read-only placeholders, uid 10001, pinned image).
func TestComposeEmptyEnv(t *testing.T) {
	p := mustLoad(t, "")
	srv := service(t, p, ServerService)
	for _, k := range []string{"SERVERFS_BRIDGE_SOCKET", "SERVERFS_BRIDGE_TOKEN_FILE"} {
		if v, _ := env(srv, k); v != "" {
			t.Errorf("no bridge configured, but the server gets %s=%q", k, v)
		}
	}
	if b := srv.Volumes[Slots]; b.Target != BridgeTarget || !b.ReadOnly || !strings.HasSuffix(b.Source, "/.empty") {
		t.Errorf("bridge mount without a bridge: %+v", b)
	}
	for i, v := range srv.Volumes[:Slots] {
		if !v.ReadOnly || !strings.HasSuffix(v.Source, "/.empty") {
			t.Errorf("slot %02d: %s read_only %v", i+1, v.Source, v.ReadOnly)
		}
		if got, _ := env(srv, SlotVar(i+1, "READ_ONLY")); got != "true" {
			t.Errorf("slot %02d: server READ_ONLY %q", i+1, got)
		}
	}
	if srv.User != "10001:10001" || service(t, p, TunnelService).Image != TunnelImage {
		t.Errorf("defaults: user %q", srv.User)
	}
}

// TestComposeRejectsBadReadOnly: a WORKDIR_NN_READ_ONLY that is not a
// boolean fails in compose, before any container starts.
func TestComposeRejectsBadReadOnly(t *testing.T) {
	if _, err := load(t, "WORKDIR_02_READ_ONLY=maybe\n"); err == nil {
		t.Error("WORKDIR_02_READ_ONLY=maybe loaded")
	}
}

func durationIs(d *types.Duration, want time.Duration) bool {
	return d != nil && time.Duration(*d) == want
}

func mapKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// TestComposeBridge: with SERVERFS_BRIDGE_DIR set the server gets the
// socket path and the token secret, the directory is mounted read-only,
// and the bridge's policy inputs (REPO_ACTIONS_JSON, host paths) never
// reach the server's environment.
func TestComposeBridge(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	os.WriteFile(tok, []byte("0123456789abcdef0123"), 0o600)
	work := t.TempDir()
	actions := `{"lint":{"argv":["make","lint"],"mutates":false,"argument":"none"}}`
	p := mustLoad(t, fmt.Sprintf("SERVERFS_BRIDGE_DIR=%s\nSERVERFS_BRIDGE_TOKEN=%s\nWORKDIR_01_ALIAS=w\nWORKDIR_01_PATH=%s\nWORKDIR_01_REPO_OPS_ENABLED=true\nWORKDIR_01_REPO_ACTIONS_JSON='%s'\n", dir, tok, work, actions))
	srv := service(t, p, ServerService)
	if v, _ := env(srv, "SERVERFS_BRIDGE_SOCKET"); v != BridgeTarget+"/bridge.sock" {
		t.Errorf("SERVERFS_BRIDGE_SOCKET=%q", v)
	}
	if v, _ := env(srv, "SERVERFS_BRIDGE_TOKEN_FILE"); v != "/run/secrets/"+BridgeSecret {
		t.Errorf("SERVERFS_BRIDGE_TOKEN_FILE=%q", v)
	}
	if v, _ := env(srv, "WORKDIR_01_REPO_OPS_ENABLED"); v != "true" {
		t.Errorf("WORKDIR_01_REPO_OPS_ENABLED=%q", v)
	}
	if b := srv.Volumes[Slots]; b.Source != dir || b.Target != BridgeTarget || !b.ReadOnly {
		t.Errorf("bridge mount %+v", b)
	}
	if len(srv.Secrets) != 2 || srv.Secrets[0].Source != BridgeSecret || srv.Secrets[1].Source != MCPTokenSecret {
		t.Errorf("secrets %+v", srv.Secrets)
	}
	if s, ok := p.Secrets[BridgeSecret]; !ok || s.File != tok {
		t.Errorf("top-level secret %+v", p.Secrets)
	}
	for k, v := range srv.Environment {
		val := ""
		if v != nil {
			val = *v
		}
		if strings.Contains(k, "ACTIONS") || strings.Contains(val, "make") || strings.Contains(val, work) || strings.Contains(val, dir) && k != "SERVERFS_BRIDGE_SOCKET" {
			t.Errorf("the server's environment carries %s=%q", k, val)
		}
	}
}
