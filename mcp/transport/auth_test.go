package transport

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/serverfs/serverfs/mcp/transport/transporttest"
)

func TestLoadTokenFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	short := "abcDEF0123456789abcDEF012345678" // 31 characters
	for _, c := range []struct {
		name, path, problem, warning string
	}{
		{"good, with the newline base64 writes", transporttest.WriteToken(t, transporttest.Token+"\n", 0o600), "", ""},
		{"good, CRLF", transporttest.WriteToken(t, transporttest.Token+"\r\n", 0o640), "", ""},
		{"good, no line ending", transporttest.WriteToken(t, transporttest.Token, 0o400), "", ""},
		{"relative path", "secrets/mcp_token", "absolute path", ""},
		{"missing", filepath.Join(dir, "nope"), "no such file", ""},
		{"directory", dir, "not a regular file", ""},
		{"FIFO (must not block)", fifo, "not a regular file", ""},
		{"empty", transporttest.WriteToken(t, "", 0o600), "is empty", ""},
		{"only a newline", transporttest.WriteToken(t, "\n", 0o600), "is empty", ""},
		{"too short", transporttest.WriteToken(t, short+"\n", 0o600), "32 to 1024 characters", ""},
		{"too long", transporttest.WriteToken(t, strings.Repeat("a", 1025), 0o600), "32 to 1024 characters", ""},
		{"larger than 4 KiB", transporttest.WriteToken(t, strings.Repeat("a", 5000), 0o600), "larger than 4096", ""},
		{"two lines", transporttest.WriteToken(t, transporttest.Token+"\n"+transporttest.Token+"\n", 0o600), "may hold only", ""},
		{"inner space", transporttest.WriteToken(t, transporttest.Token[:20]+" "+transporttest.Token[20:], 0o600), "may hold only", ""},
		{"comma (splits the tunnel's header list)", transporttest.WriteToken(t, transporttest.Token+",x", 0o600), "may hold only", ""},
		{"world-writable", transporttest.WriteToken(t, transporttest.Token, 0o602), "writable by every user", ""},
		{"world-readable: a warning", transporttest.WriteToken(t, transporttest.Token, 0o644), "", "readable by every user"},
	} {
		done := make(chan struct{})
		var cfg Config
		var probs []string
		go func() {
			defer close(done)
			cfg, probs = LoadConfig([]string{"SERVERFS_AUTH_TOKEN_FILE=" + c.path})
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: loading the token file blocked", c.name)
		}
		all := strings.Join(probs, "\n") + strings.Join(cfg.Warnings, "\n")
		if strings.Contains(all, transporttest.Token[:16]) || strings.Contains(all, short) {
			t.Errorf("%s: a message holds the token: %s", c.name, all)
		}
		if c.path != "secrets/mcp_token" && strings.Contains(all, c.path) {
			t.Errorf("%s: a message holds the host path: %s", c.name, all)
		}
		switch {
		case c.problem == "":
			if len(probs) > 0 || !cfg.AuthToken.Set() || !cfg.AuthToken.Matches(transporttest.Token) {
				t.Errorf("%s: problems %q, token set %v", c.name, probs, cfg.AuthToken.Set())
			}
		case len(probs) != 1 || !strings.Contains(probs[0], c.problem) || !strings.HasPrefix(probs[0], "SERVERFS_AUTH_TOKEN_FILE"):
			t.Errorf("%s: problems %q, want one with %q", c.name, probs, c.problem)
		}
		if (c.warning == "") != (len(cfg.Warnings) == 0) || (c.warning != "" && !strings.Contains(cfg.Warnings[0], c.warning)) {
			t.Errorf("%s: warnings %q, want %q", c.name, cfg.Warnings, c.warning)
		}
	}
	// Unset: no authentication.
	if cfg, probs := LoadConfig(nil); len(probs) > 0 || cfg.AuthToken.Set() || cfg.AuthToken.Matches("") {
		t.Fatalf("unset: %v %v", probs, cfg.AuthToken.Set())
	}
}

// TestTokenNeverPrinted formats a configuration holding a token every way a
// log line or an error could.
func TestTokenNeverPrinted(t *testing.T) {
	cfg, probs := LoadConfig([]string{"SERVERFS_AUTH_TOKEN_FILE=" + transporttest.WriteToken(t, transporttest.Token, 0o600)})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%v %+v %#v %s %q %x %X %d\n", cfg, cfg, cfg, cfg.AuthToken, cfg.AuthToken, cfg.AuthToken, cfg.AuthToken, cfg.AuthToken)
	b, _ := json.Marshal(cfg)
	out.Write(b)
	slog.New(slog.NewJSONHandler(&out, nil)).Info("x", "cfg", cfg, "tok", cfg.AuthToken)
	slog.New(slog.NewTextHandler(&out, nil)).Info("x", "cfg", cfg, "tok", cfg.AuthToken)
	s := out.String()
	digest := cfg.AuthToken.digest
	for _, bad := range []string{transporttest.Token[:12], fmt.Sprintf("%x", digest[:6]), fmt.Sprint(digest[0], " ", digest[1], " ", digest[2])} {
		if strings.Contains(s, bad) {
			t.Fatalf("printed configuration holds %q:\n%s", bad, s)
		}
	}
	if !strings.Contains(s, "[redacted]") {
		t.Fatalf("no redaction marker:\n%s", s)
	}
}
