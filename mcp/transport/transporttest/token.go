// Package transporttest holds what the transport's tests and the server's
// tests both need to serve with a client token.
package transporttest

import (
	"os"
	"path/filepath"
	"testing"
)

// Token is what "head -c 32 /dev/urandom | base64" gives: 44 characters
// of base64.
const Token = "q3Vb1XJ0mJ5tZs0nH6tT9Yc2kQeR8uWvA4sD7fG1hJk="

// WriteToken writes a token file with mode perm and returns its path.
func WriteToken(t testing.TB, content string, perm os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mcp_token")
	if err := os.WriteFile(p, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil { // past the umask
		t.Fatal(err)
	}
	return p
}
