package transport

import (
	"os"
	"path/filepath"
	"testing"
)

const testToken = "q3Vb1XJ0mJ5tZs0nH6tT9Yc2kQeR8uWvA4sD7fG1hJk="

// writeToken writes a token file with mode perm and returns its path.
func writeToken(t *testing.T, content string, perm os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mcp_token")
	if err := os.WriteFile(p, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
	return p
}
