package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/serverfs/serverfs/internal/settings"
)

// Config is the tool layer's configuration from the environment; the
// transport reads its own (transport.LoadConfig).
type Config struct {
	LogLevel slog.Level
	// Admission sizes the gate of heavy tool calls (HTTP and stdio).
	Admission AdmissionConfig
	// ParamHeaders (SERVERFS_MCP_PARAM_HEADERS=true) declares every tool's
	// workdir argument as x-mcp-header (Deps.ParamHeaders).
	ParamHeaders bool
}

// LoadConfig reads SERVERFS_LOG_LEVEL, SERVERFS_MCP_PARAM_HEADERS and the
// admission variables, returning one problem line per bad value.
func LoadConfig(environ []string) (Config, []string) {
	env := settings.EnvMap(environ)
	cfg := Config{LogLevel: slog.LevelInfo}
	var probs []string
	cfg.Admission = loadAdmissionConfig(env, &probs)
	switch v := strings.ToLower(env["SERVERFS_MCP_PARAM_HEADERS"]); v {
	case "", "false":
	case "true":
		cfg.ParamHeaders = true
	default:
		probs = append(probs, "SERVERFS_MCP_PARAM_HEADERS must be true or false")
	}
	switch strings.ToUpper(env["SERVERFS_LOG_LEVEL"]) {
	case "", "INFO":
	case "DEBUG":
		cfg.LogLevel = slog.LevelDebug
	case "WARN", "WARNING":
		cfg.LogLevel = slog.LevelWarn
	case "ERROR":
		cfg.LogLevel = slog.LevelError
	default:
		probs = append(probs, fmt.Sprintf("SERVERFS_LOG_LEVEL=%q: must be DEBUG, INFO, WARN or ERROR", env["SERVERFS_LOG_LEVEL"]))
	}
	return cfg, probs
}

// maxRequestBytes caps a request body when no workdir takes writes: tool
// arguments are small. RequestBytes raises it for file content.
const maxRequestBytes = 1 << 20

// RequestBytes is the request body cap the transport must apply for the
// tools d serves (transport.Config.MaxRequestBytes): with writes, room for
// content of SERVERFS_MAX_WRITE_BYTES twice over (JSON escaping) plus the
// rest.
func RequestBytes(d *Deps) int64 {
	if !writable(d.FS) {
		return maxRequestBytes
	}
	return int64(2*d.FS.Limits().MaxWriteBytes + maxRequestBytes)
}

// WithClient records in ctx the client a call comes from, for the
// heavy-call gate's fairness (transport.Config.CallContext).
func WithClient(ctx context.Context, client string) context.Context {
	return context.WithValue(ctx, clientKey{}, client)
}
