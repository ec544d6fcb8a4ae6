// Command gencompose writes ServerFS's compose.yml and .env.example from
// package compose. Run it in deploy/compose: `go generate ./...`, or
// `go run ./cmd/gencompose -root ../..`.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/serverfs/serverfs/deploy/compose"
)

func main() {
	root := flag.String("root", "../..", "the repository root, where compose.yml and .env.example are written")
	flag.Parse()
	if err := write(*root); err != nil {
		fmt.Fprintln(os.Stderr, "gencompose:", err)
		os.Exit(1)
	}
}

func write(root string) error {
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return fmt.Errorf("%s does not look like the repository root: %w", root, err)
	}
	for name, text := range map[string]string{
		"compose.yml":  compose.ComposeYAML(),
		".env.example": compose.EnvExample(),
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}
