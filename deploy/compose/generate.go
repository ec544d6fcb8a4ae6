// Package compose renders ServerFS's compose.yml and .env.example.
//
// Compose can only substitute variables, so every one of the 16 workdir
// slots is written out in full: a long-syntax bind mount of
// ${WORKDIR_NN_PATH:-./.empty} at /workdirs/NN with create_host_path: false,
// and one boolean per slot, WORKDIR_NN_READ_ONLY, that drives both the
// mount's read_only and the server's mode (fs.LoadConfig reads it). The
// server's environment is an explicit list: aliases, descriptions, modes
// and limits, never WORKDIR_NN_PATH and never CONTROL_PLANE_* (no env_file).
//
// The committed files are this package's output; compose_test.go checks
// that and loads compose.yml with compose-go, the loader docker compose
// uses. Regenerate with `go generate` in deploy/compose.
package compose

//go:generate go run ./cmd/gencompose -root ../..

import (
	"fmt"
	"strings"
)

// Slots is the number of workdir slots (fs.Slots).
const Slots = 16

// Fixed wiring between the two services.
const (
	ServerService   = "serverfs-mcp"
	TunnelService   = "openai-tunnel"
	InternalNetwork = "serverfs_internal"
	EgressNetwork   = "tunnel_egress"
	ServerPort      = "8000"
	ServerListen    = "0.0.0.0:" + ServerPort
	MCPServerURL    = "http://" + ServerService + ":" + ServerPort + "/mcp"
	TunnelImage     = "ghcr.io/openai/tunnel-client:v0.0.14"
	TunnelHealth    = "8080"
	DefaultImage    = "serverfs-mcp:0.1.0"
	DefaultUID      = "10001"
	DefaultGID      = "10001"
	WorkdirsRoot    = "/workdirs"
	EmptyDir        = "./.empty"
	// BridgeTarget is where the bridge's socket directory is mounted;
	// BridgeSecret the compose secret holding its token.
	BridgeTarget = "/run/serverfs-bridge"
	BridgeSecret = "bridge_token"
	// MCPTokenSecret is the compose secret holding the client token both
	// services mount: the server checks it (SERVERFS_AUTH_TOKEN_FILE), the
	// tunnel sends it in AuthHeader on every MCP request
	// (MCP_EXTRA_HEADERS). MCPTokenDefault is its host file, relative to
	// the repository (SERVERFS_MCP_TOKEN overrides it).
	MCPTokenSecret  = "mcp_token"
	MCPTokenDefault = "./secrets/mcp_token"
	MCPTokenFile    = "/run/secrets/" + MCPTokenSecret
	// AuthHeader is mcp.AuthHeader (this module does not import the
	// server's).
	AuthHeader = "X-ServerFS-Token"
	// TokenOneLiner makes the token file: 32 random bytes in base64, mode
	// 0640, group SERVERFS_GID's default (the server reads it through its
	// gid, the tunnel through group_add).
	TokenOneLiner = "mkdir -p secrets && head -c 32 /dev/urandom | base64 | sudo install -m 0640 -g " + DefaultGID + " /dev/stdin secrets/mcp_token"
)

// Limit is one numeric SERVERFS_* limit with its built-in default
// (fs.DefaultLimits).
type Limit struct {
	Name, Default, Help string
}

// Limits are the limit variables, in the settings table's order (internal/settings compares them with .env.example).
var Limits = []Limit{
	{"SERVERFS_MAX_READ_BYTES", "524288", "bytes of text one read_text_file call returns (1024..16777216)"},
	{"SERVERFS_MAX_READ_LINES", "500", "lines one read_text_file call returns"},
	{"SERVERFS_DEFAULT_LIST_LIMIT", "100", "entries list_directory returns when the agent sets no limit"},
	{"SERVERFS_MAX_LIST_ENTRIES", "500", "entries one list_directory page returns at most"},
	{"SERVERFS_DEFAULT_SEARCH_RESULTS", "50", "results find_files/search_text return when the agent sets no limit"},
	{"SERVERFS_MAX_SEARCH_RESULTS", "100", "results find_files/search_text return at most"},
	{"SERVERFS_MAX_WALK_ENTRIES", "200000", "directory entries one find/search walk may read"},
	{"SERVERFS_SEARCH_TIMEOUT_SECONDS", "15", "seconds one search may run"},
	{"SERVERFS_SEARCH_MAX_FILE_BYTES", "52428800", "files larger than this are skipped by search_text"},
	{"SERVERFS_MAX_WRITE_BYTES", "1048576", "largest file the write tools create or change, and that reads give a revision (1024..67108864)"},
	{"SERVERFS_IMAGE_MAX_BYTES", "1048576", "encoded size of an image read_text_file shows the model, downscaled to fit (16384..16777216)"},
}

// ServerSettings are the other SERVERFS_* variables compose passes through.
// An empty value means ServerFS's built-in default.
var ServerSettings = []Limit{
	{"SERVERFS_LOG_LEVEL", "INFO", "DEBUG, INFO, WARN or ERROR (JSON lines on stderr)"},
	{"SERVERFS_ALLOW_HIDDEN", "false", "true lets agents see dot-files (the deny list still applies)"},
	{"SERVERFS_ALLOWED_HOSTS", "", "Host-header allowlist, comma-separated; empty: serverfs-mcp,localhost,127.0.0.1,[::1]"},
	{"SERVERFS_EXTRA_DENY_GLOBS", "", "extra deny globs, comma-separated, added to the built-in deny list (e.g. *.sqlite,secrets/**)"},
	{"SERVERFS_MEMORY_BUDGET_MB", "", "memory heavy calls may hold together, MiB (sizes the heavy-call limit and the runtime's soft limit); empty: 1024"},
	{"SERVERFS_MAX_HEAVY_CALLS", "", "searches, finds, repo status/diff/commit, huge listings, compressed reads run at once; empty: one per two CPUs within the budget"},
	{"SERVERFS_HEAVY_QUEUE", "", "heavy calls waiting for a slot before SERVER_BUSY; empty: 256"},
	{"SERVERFS_HEAVY_WAIT_SECONDS", "", "seconds a heavy call waits for a slot before SERVER_BUSY; empty: 5"},
	{"SERVERFS_MAX_SESSIONS", "", "live MCP sessions; past it the longest-idle is closed; empty: 1000"},
	{"SERVERFS_WRITE_TIMEOUT_SECONDS", "", "seconds one response write may take before the connection is dropped; empty: 30"},
	{"SERVERFS_MAX_CONNECTIONS", "", "open HTTP connections; past it a new one gets 503 and is closed; empty: half the open-file limit, at most 4096"},
	{"SERVERFS_MCP_PARAM_HEADERS", "false", "true declares every tool's workdir argument as x-mcp-header (Mcp-Param-Workdir) for a gateway; clients must then list tools before calling"},
	{"SERVERFS_SEARCH_FETCH", "false", "true serves ChatGPT's search and fetch tools (deep research, company knowledge) over every workdir; or a comma-separated list of aliases"},
}

// SlotVar is WORKDIR_NN_<suffix>.
func SlotVar(n int, suffix string) string { return fmt.Sprintf("WORKDIR_%02d_%s", n, suffix) }

// SlotTarget is the mount point of slot n in the container.
func SlotTarget(n int) string { return fmt.Sprintf("%s/%02d", WorkdirsRoot, n) }

// header starts both files.
func header(w *strings.Builder, what string) {
	fmt.Fprintf(w, "# %s: generated by deploy/compose (go generate ./... there); do not edit.\n", what)
}

// ComposeYAML renders compose.yml. The output is deterministic.
func ComposeYAML() string {
	var w strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&w, format+"\n", args...) }

	header(&w, "compose.yml")
	composeIntro(p)
	p("")
	serverService(p)
	tunnelService(p)
	secretsAndNetworks(p)
	return w.String()
}

// composeIntro is the file's opening comment: how to start it and what
// reaches which service.
func composeIntro(p func(format string, args ...any)) {
	p("#")
	p("# ServerFS, a read-only MCP file server, behind the official OpenAI tunnel client:")
	p("#")
	p("#   cp .env.example .env && chmod 600 .env   # then set the workdirs and the tunnel in .env")
	p("#   %s", TokenOneLiner)
	p("#   docker compose up -d")
	p("#")
	p("# .env is read by Compose only (there is no env_file): WORKDIR_NN_PATH becomes a bind")
	p("# mount and CONTROL_PLANE_* reaches %s alone. %s receives aliases,", TunnelService, ServerService)
	p("# descriptions, modes and limits, never a host path or a tunnel secret. Nothing is")
	p("# published on the host: %s is reachable only on the internal network, at", ServerService)
	p("# %s, and the tunnel connects outbound. Every MCP request must", MCPServerURL)
	p("# carry the client token (secret %s) in %s; the tunnel adds it.", MCPTokenSecret, AuthHeader)
}

// serverService is the ServerFS service: built from this repository, not
// root, reachable only on the internal network.
func serverService(p func(format string, args ...any)) {
	p("services:")
	p("  %s:", ServerService)
	p("    build:")
	p("      context: .")
	p("      dockerfile: Dockerfile.scratch")
	p("    image: ${SERVERFS_IMAGE:-%s}", DefaultImage)
	p("    restart: unless-stopped")
	p("    # Not root. The host directories must be readable by this UID/GID (the :ro")
	p("    # mount does not bypass file permissions); nothing is chmod-ed or chown-ed.")
	p("    user: \"${SERVERFS_UID:-%s}:${SERVERFS_GID:-%s}\"", DefaultUID, DefaultGID)
	p("    # An explicit list: an empty value means ServerFS's built-in default.")
	serverEnvironment(p)
	serverVolumes(p)
	p("    secrets:")
	p("      - %s", BridgeSecret)
	p("      - %s", MCPTokenSecret)
	p("    expose:")
	p("      - \"%s\"", ServerPort)
	p("    networks:")
	p("      - %s", InternalNetwork)
	hardening(p)
	p("    healthcheck:")
	p("      test: [\"CMD\", \"/serverfs\", \"healthcheck\"]")
	p("      interval: 10s")
	p("      timeout: 3s")
	p("      retries: 5")
	p("      start_period: 5s")
	p("")
}

// serverEnvironment lists the server's variables, each passed from .env
// (an empty value means the built-in default).
func serverEnvironment(p func(format string, args ...any)) {
	p("    environment:")
	p("      TZ: ${TZ:-Asia/Shanghai}")
	p("      # Fixed: the tunnel's MCP_SERVER_URL, expose and the healthcheck use port %s.", ServerPort)
	p("      SERVERFS_LISTEN: \"%s\"", ServerListen)
	p("      # Every request must carry this token in %s (the tunnel adds it).", AuthHeader)
	p("      SERVERFS_AUTH_TOKEN_FILE: %s", MCPTokenFile)
	for _, s := range ServerSettings {
		p("      %s: ${%s:-}", s.Name, s.Name)
	}
	p("      # Set only when SERVERFS_BRIDGE_DIR is: the host bridge's socket and token.")
	p("      SERVERFS_BRIDGE_SOCKET: ${SERVERFS_BRIDGE_DIR:+%s/bridge.sock}", BridgeTarget)
	p("      SERVERFS_BRIDGE_TOKEN_FILE: ${SERVERFS_BRIDGE_DIR:+/run/secrets/%s}", BridgeSecret)
	for _, l := range Limits {
		p("      %s: ${%s:-}", l.Name, l.Name)
	}
	for n := 1; n <= Slots; n++ {
		p("      %s: ${%s:-}", SlotVar(n, "ALIAS"), SlotVar(n, "ALIAS"))
		p("      %s: ${%s:-}", SlotVar(n, "DESCRIPTION"), SlotVar(n, "DESCRIPTION"))
		p("      %s: ${%s:-true}", SlotVar(n, "READ_ONLY"), SlotVar(n, "READ_ONLY"))
		p("      %s: ${%s:-false}", SlotVar(n, "REPO_OPS_ENABLED"), SlotVar(n, "REPO_OPS_ENABLED"))
		p("      %s: ${%s:-}", SlotVar(n, "URL_TEMPLATE"), SlotVar(n, "URL_TEMPLATE"))
	}
}

// serverVolumes mounts the workdir slots and the bridge's socket directory.
func serverVolumes(p func(format string, args ...any)) {
	p("    # One slot per workdir, all 16 written out. An unset WORKDIR_NN_PATH mounts")
	p("    # ./.empty, whose .serverfs-disabled marks the slot unused; a mistyped path")
	p("    # fails instead of being created. WORKDIR_NN_READ_ONLY (default true) sets")
	p("    # both the mount and the server's mode for the slot.")
	p("    volumes:")
	for n := 1; n <= Slots; n++ {
		p("      - type: bind")
		p("        source: ${%s:-%s}", SlotVar(n, "PATH"), EmptyDir)
		p("        target: %s", SlotTarget(n))
		p("        read_only: ${%s:-true}", SlotVar(n, "READ_ONLY"))
		p("        bind:")
		p("          create_host_path: false")
	}
	p("    # The host bridge's socket directory (serverfs bridge --socket DIR/bridge.sock;")
	p("    # unset: the empty placeholder, no bridge). Host paths and named actions stay")
	p("    # in the bridge's private policy on the host.")
	p("      - type: bind")
	p("        source: ${SERVERFS_BRIDGE_DIR:-%s}", EmptyDir)
	p("        target: %s", BridgeTarget)
	p("        read_only: true")
	p("        bind:")
	p("          create_host_path: false")
}

// tunnelService is the OpenAI tunnel client, the only service with a
// route out.
func tunnelService(p func(format string, args ...any)) {
	p("  %s:", TunnelService)
	p("    image: ${OPENAI_TUNNEL_IMAGE:-%s}", TunnelImage)
	p("    restart: unless-stopped")
	p("    depends_on:")
	p("      %s:", ServerService)
	p("        condition: service_healthy")
	p("    # The image's own non-root user is kept. CONTROL_PLANE_API_KEY is a Runtime")
	p("    # API key (Tunnels Read + Use), never an Admin key.")
	p("    environment:")
	p("      CONTROL_PLANE_BASE_URL: ${CONTROL_PLANE_BASE_URL:-https://api.openai.com}")
	p("      CONTROL_PLANE_TUNNEL_ID: ${CONTROL_PLANE_TUNNEL_ID:-}")
	p("      CONTROL_PLANE_API_KEY: ${CONTROL_PLANE_API_KEY:-}")
	p("      MCP_SERVER_URL: %s", MCPServerURL)
	p("      # Read from the secret file at start-up, sent on every MCP request.")
	p("      MCP_EXTRA_HEADERS: \"%s: file:%s\"", AuthHeader, MCPTokenFile)
	p("      MCP_STARTUP_WAIT_TIMEOUT: ${MCP_STARTUP_WAIT_TIMEOUT:-60s}")
	p("      LOG_LEVEL: ${TUNNEL_LOG_LEVEL:-info}")
	p("      LOG_FORMAT: ${TUNNEL_LOG_FORMAT:-json}")
	p("      HEALTH_LISTEN_ADDR: \"${HEALTH_LISTEN_ADDR:-:%s}\"", TunnelHealth)
	p("      TZ: ${TZ:-Asia/Shanghai}")
	p("    # The token file is a bind mount with its host mode (0640, group")
	p("    # SERVERFS_GID): the image's user reads it through this group.")
	p("    group_add:")
	p("      - \"${SERVERFS_GID:-%s}\"", DefaultGID)
	p("    secrets:")
	p("      - %s", MCPTokenSecret)
	p("    # /healthz, /readyz, /metrics and /ui stay on the internal networks.")
	p("    expose:")
	p("      - \"%s\"", TunnelHealth)
	p("    networks:")
	p("      - %s", InternalNetwork)
	p("      - %s", EgressNetwork)
	hardening(p)
	p("")
}

// secretsAndNetworks declares the two secrets and the two networks.
func secretsAndNetworks(p func(format string, args ...any)) {
	p("secrets:")
	p("  # The token shared with the host bridge (readable by SERVERFS_UID; unset: a")
	p("  # placeholder, and no bridge is used).")
	p("  %s:", BridgeSecret)
	p("    file: ${SERVERFS_BRIDGE_TOKEN:-%s/%s}", EmptyDir, ".serverfs-disabled")
	p("  # The MCP client token (required). Make it with:")
	p("  #   %s", TokenOneLiner)
	p("  %s:", MCPTokenSecret)
	p("    file: ${SERVERFS_MCP_TOKEN:-%s}", MCPTokenDefault)
	p("")
	p("networks:")
	p("  # No route out: only the tunnel reaches %s.", ServerService)
	p("  %s:", InternalNetwork)
	p("    internal: true")
	p("  # The tunnel's outbound HTTPS to the OpenAI control plane.")
	p("  %s: {}", EgressNetwork)
}

// EnvExample renders .env.example: every variable compose reads, all 16
// slots, and empty tunnel credentials. The output is deterministic.
func EnvExample() string {
	var w strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&w, format+"\n", args...) }
	rule := "# ============================================================"

	header(&w, ".env.example")
	p("#")
	p("#   cp .env.example .env && chmod 600 .env")
	p("#")
	p("# .env holds the tunnel's API key: keep it mode 600 and out of git (.gitignore")
	p("# lists it). Compose reads it; the ServerFS container only sees the aliases,")
	p("# descriptions, modes and limits (never the host paths or the tunnel key).")
	p("")
	p(rule)
	p("# ServerFS MCP")
	p(rule)
	p("")
	p("SERVERFS_IMAGE=%s", DefaultImage)
	p("")
	p("# The container's user. The workdirs must be readable by it on the host.")
	p("SERVERFS_UID=%s", DefaultUID)
	p("SERVERFS_GID=%s", DefaultGID)
	p("")
	p("# The MCP client token file on the host (required): the server refuses every")
	p("# request without it in the %s header; the tunnel sends it. Make it with", AuthHeader)
	p("#   %s", TokenOneLiner)
	p("# (mode 0640, group %s = SERVERFS_GID: the server and the tunnel read it, other", DefaultGID)
	p("# users on the host do not). Replace it and run docker compose up -d to rotate it.")
	p("SERVERFS_MCP_TOKEN=%s", MCPTokenDefault)
	p("")
	for _, s := range ServerSettings {
		p("# %s", s.Help)
		p("%s=%s", s.Name, s.Default)
	}
	p("")
	p("# Limits (the values below are the built-in defaults; empty means the default).")
	for _, l := range Limits {
		p("# %s", l.Help)
		p("%s=%s", l.Name, l.Default)
	}
	p("")
	p("")
	p(rule)
	p("# Workdirs (slots 01..16)")
	p(rule)
	p("#")
	p("# A slot is used when its PATH and ALIAS are set, e.g.")
	p("#")
	p("#   %s=projects", SlotVar(1, "ALIAS"))
	p("#   %s=/srv/projects", SlotVar(1, "PATH"))
	p("#   %s=\"Project code, deployment configuration and documentation\"", SlotVar(1, "DESCRIPTION"))
	p("#   %s=true", SlotVar(1, "READ_ONLY"))
	p("#   %s=false", SlotVar(1, "REPO_OPS_ENABLED"))
	p("#")
	p("# ALIAS        the name agents use: a letter, then letters, digits, _ or -, at most")
	p("#              32 characters, unique across slots.")
	p("# PATH         an existing absolute host directory (never /, the Docker socket,")
	p("#              ~/.ssh or other credential stores). Not created if missing.")
	p("#              Mounted at /workdirs/NN; empty: the slot is unused.")
	p("# DESCRIPTION  free text shown to agents (at most 1024 bytes).")
	p("# READ_ONLY    true (default): read-only mount and read-only workdir. false makes")
	p("#              both writable. Must be true or false.")
	p("# REPO_OPS_ENABLED  false (default). true serves the repository tools for the")
	p("#              slot (inspect_repo; commit_repo_changes when READ_ONLY=false): the")
	p("#              slot's root must be a git work tree.")
	p("# URL_TEMPLATE where search/fetch citations of the slot's files point (empty:")
	p("#              serverfs://ALIAS/PATH), e.g.")
	p("#              https://git.example.com/repo/blob/main/{path}#L{line}")
	for n := 1; n <= Slots; n++ {
		p("")
		p("%s=", SlotVar(n, "ALIAS"))
		p("%s=", SlotVar(n, "PATH"))
		p("%s=", SlotVar(n, "DESCRIPTION"))
		p("%s=true", SlotVar(n, "READ_ONLY"))
		p("%s=false", SlotVar(n, "REPO_OPS_ENABLED"))
		p("%s=", SlotVar(n, "URL_TEMPLATE"))
	}
	p("")
	p("")
	p(rule)
	p("# Host bridge (optional: named actions and push_repo; see deploy/serverfs-bridge.service)")
	p(rule)
	p("")
	p("# The directory holding the bridge's socket (bridge.sock), and its token file")
	p("# (readable by SERVERFS_UID). Empty: no bridge. The bridge itself reads its")
	p("# policy (host paths, WORKDIR_NN_REPO_ACTIONS_JSON, the approved push destinations")
	p("# WORKDIR_NN_PUSH_URLS and _PUSH_BRANCHES) from a private file on the host.")
	p("SERVERFS_BRIDGE_DIR=")
	p("SERVERFS_BRIDGE_TOKEN=")
	p("")
	p("")
	p(rule)
	p("# OpenAI Secure MCP Tunnel")
	p(rule)
	p("")
	p("OPENAI_TUNNEL_IMAGE=%s", TunnelImage)
	p("")
	p("CONTROL_PLANE_BASE_URL=https://api.openai.com")
	p("")
	p("# Fill these in .env only; never commit them. The key is a Runtime API key")
	p("# with Tunnels Read + Use, not an Admin key.")
	p("CONTROL_PLANE_TUNNEL_ID=")
	p("CONTROL_PLANE_API_KEY=")
	p("")
	p("MCP_STARTUP_WAIT_TIMEOUT=60s")
	p("")
	p("TUNNEL_LOG_LEVEL=info")
	p("TUNNEL_LOG_FORMAT=json")
	p("")
	p("# The tunnel's /healthz, /readyz, /metrics and /ui (not published on the host).")
	p("HEALTH_LISTEN_ADDR=:%s", TunnelHealth)
	p("")
	p("")
	p(rule)
	p("# Runtime")
	p(rule)
	p("")
	p("TZ=Asia/Shanghai")
	return w.String()
}

// hardening writes the container hardening both services share: read-only
// root, tmpfs /tmp, no capabilities, no privilege gain.
func hardening(p func(format string, args ...any)) {
	p("    read_only: true")
	p("    tmpfs:")
	p("      - /tmp")
	p("    cap_drop:")
	p("      - ALL")
	p("    security_opt:")
	p("      - no-new-privileges:true")
}
