package gitignore

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgainstGit compares the package with `git check-ignore` (the oracle)
// on patterns of a root .gitignore and of a nested one, for files and
// directories. A path is ignored when the deepest source's last matching
// pattern excludes it or one of its parent directories (git never looks
// inside an excluded directory, so nothing below one is re-included).
func TestAgainstGit(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is required (the oracle): %v", err)
	}
	rootRules := strings.Join([]string{
		"*.log", "!keep.log", "build/", "/root.txt", "**/gen/*.go", "docs/**/draft.md",
		"file?.cls", "[ab]*.cls", "[!ab]*.neg", "x/foo**/y.txt", "z/**/", "v/**", "!v/keep.txt",
		`a\ b`, `trail\ `, `\#hash`, `\!bang`, "*.[oa]", "[[:digit:]]*.num", "**/deep", "dir/*/x",
		"caf\xc3\xa9?", "[a-c]?.r", "[]q]1.br", "[!]]2.br", "[q-]3.br", "[[:alpha:]-]4.br", "[unclosed", "w/*/m", "w2/**/*/k", "*/top.lv", "[[:bogus:]]5.br", "# a comment", "", "   ", "sp ace ", "noext/", "!dir.with.dot",
	}, "\n") + "\n"
	nestedRules := "!*.log\n/anchored\n*.tmp\n!important.tmp\nsub2/\n"
	type probe struct {
		path  string
		isDir bool
	}
	paths := []string{
		"a.log", "keep.log", "sub/keep.log", "build", "sub/build", "root.txt", "sub/root.txt", "gen/a.go", "a/gen/b.go",
		"a/gen/b.txt", "docs/draft.md", "docs/a/b/draft.md", "file1.cls", "file12.cls", "apple.cls", "cherry.cls",
		"apple.neg", "cherry.neg", "x/foo/y.txt", "x/foobar/y.txt", "x/bar/y.txt", "z/f.txt", "z/d", "v/keep.txt",
		"v/drop.txt", "a b", "trail ", "trail", "#hash", "!bang", "x.o", "x.a", "x.c", "1.num", "a1.num", "q/deep",
		"deep", "dir/a/x", "dir/a/b/x", "café1", "cafe1", "]1.br", "q1.br", "x1.br", "a2.br", "]2.br", "-3.br", "q3.br", "r3.br", "-4.br", "z4.br", "14.br", "[unclosed", "w/a/m", "w/m", "w/a/b/m", "w2/k", "w2/a/k", "w2/a/b/k", "a/top.lv", "top.lv", "a/b/top.lv", "b5.br", "ax.r", "dx.r", "sp ace", "n/a.log", "n/anchored",
		"n/x/anchored", "n/s.tmp", "n/important.tmp", "n/sub2", "n/x/sub2", "noext", "dir.with.dot",
	}
	// git check-ignore -v -n reports the deciding pattern (or none) per
	// path; it asks the file system whether a path is a directory, so the
	// probes exist: as files in one repository, as directories in another.
	want := map[probe]bool{}
	for _, isDir := range []bool{false, true} {
		root := t.TempDir()
		write := func(rel, content string) {
			p := filepath.Join(root, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(".gitignore", rootRules)
		write("n/.gitignore", nestedRules)
		var stdin bytes.Buffer
		for _, p := range paths {
			if isDir {
				if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(p)), 0o755); err != nil {
					t.Fatal(err)
				}
			} else {
				write(p, "")
			}
			stdin.WriteString(p)
			stdin.WriteByte(0)
		}
		cmd := exec.Command(gitBin, "init", "-q")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
		cmd = exec.Command(gitBin, "-c", "core.excludesFile=/dev/null", "check-ignore", "--no-index", "-v", "-n", "-z", "--stdin")
		cmd.Dir = root
		cmd.Stdin = &stdin
		out, err := cmd.Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				t.Fatalf("git check-ignore: %v", err)
			}
		}
		fields := strings.Split(string(out), "\x00")
		n := 0
		for i := 0; i+3 < len(fields); i += 4 {
			want[probe{strings.TrimSuffix(fields[i+3], "/"), isDir}] = fields[i+2] != "" && !strings.HasPrefix(fields[i+2], "!")
			n++
		}
		if n != len(paths) {
			t.Fatalf("git answered for %d of %d probes", n, len(paths))
		}
	}
	var probes []probe
	for _, p := range paths {
		probes = append(probes, probe{p, false}, probe{p, true})
	}
	sources := []struct {
		dir []string
		ps  []Pattern
	}{{nil, Parse([]byte(rootRules), nil)}, {[]string{"n"}, Parse([]byte(nestedRules), []string{"n"})}}
	decide := func(path string, isDir bool) bool {
		for i := len(sources) - 1; i >= 0; i-- {
			if d := strings.Join(sources[i].dir, "/"); d != "" && !strings.HasPrefix(path, d+"/") {
				continue
			}
			if ign, ok := Decide(sources[i].ps, path, isDir); ok {
				return ign
			}
		}
		return false
	}
	for _, p := range probes {
		got := false
		comps := strings.Split(p.path, "/")
		for i := 1; i < len(comps) && !got; i++ {
			got = decide(strings.Join(comps[:i], "/"), true)
		}
		if !got {
			got = decide(p.path, p.isDir)
		}
		if got != want[p] {
			t.Errorf("%q (dir %v): ignored %v, git says %v", p.path, p.isDir, got, want[p])
		}
	}
}
