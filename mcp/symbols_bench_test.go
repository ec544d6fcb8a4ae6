package mcp

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkDefinitions runs the definition reads against their ripgrep
// anchors side by side, on a copy of GOROOT/src (11 k files) as a
// workdir, over real HTTP: a definition by name across the tree
// (read_text_file symbol) against rg -w NAME, and hits with their
// enclosing definition (search_text definition) against rg -C 10. The
// ratio is ns/op of one over the other; bench/README.md has a run.
func BenchmarkDefinitions(b *testing.B) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Fatal("rg (ripgrep) is the anchor: apt-get install ripgrep")
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatal(err)
	}
	e := newEnvMode(b, false)
	src := filepath.Join(e.root, "goroot")
	if out, err := exec.Command("cp", "-r", filepath.Join(strings.TrimSpace(string(goroot)), "src"), src).CombinedOutput(); err != nil {
		b.Fatalf("copying GOROOT/src: %v %s", err, out)
	}
	cs := e.client(b, e.serveHTTP(b))
	tool := func(name string, args map[string]any) func(b *testing.B) {
		return func(b *testing.B) {
			args["workdir"] = "wd"
			for b.Loop() {
				res := e.call(b, cs, name, args)
				if res.IsError {
					b.Fatalf("%s %v: %s", name, args, resultText(res))
				}
			}
		}
	}
	anchor := func(args ...string) func(b *testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(rg, args...)
				cmd.Stdout, cmd.Dir = nil, e.root
				if err := cmd.Run(); err != nil {
					b.Fatalf("rg %v: %v", args, err)
				}
			}
		}
	}
	b.Run("definition DialContext/serverfs", tool("read_text_file", map[string]any{"path": "goroot", "symbol": "DialContext"}))
	b.Run("definition DialContext/rg -w", anchor("-w", "-n", "DialContext", "goroot"))
	b.Run("definition Dialer.DialContext/serverfs", tool("read_text_file", map[string]any{"path": "goroot", "symbol": "Dialer.DialContext"}))
	b.Run("enclosing ReadDir/serverfs", tool("search_text", map[string]any{"path": "goroot/os", "query": "ReadDir", "definition": true}))
	b.Run("enclosing ReadDir/rg -C 10", anchor("-n", "-C", "10", "ReadDir", "goroot/os"))
}
