package bridge

import (
	"strings"
	"testing"
)

// TestBuildFileWarning: an action that hands a build program a directory
// while pinning only root files is warned about (make -C with the
// caller's directory, the hostile case; a fixed -C sub; npm --prefix=;
// a directory argument to pnpm); one that pins the directory's build
// file, passes no directory, pins nothing, or runs another program is
// not.
func TestBuildFileWarning(t *testing.T) {
	root := map[string]string{"Makefile": strings.Repeat("a", 64)}
	dirs := &ArgumentAllow{Directories: true}
	for _, c := range []struct {
		name string
		a    Action
		want string // a part of the warning; "" for none
	}{
		{"make -C caller dir", Action{Argv: []string{"make", "-C"}, Argument: ArgumentPath, ArgumentAllow: dirs, Integrity: root},
			"make -C <dir> (the caller's path, which may be a directory): <dir>/Makefile is agent-writable and unpinned (the action pins only files at the root); pin it (integrity) in every directory the caller may name, or drop the directory argument"},
		{"make -C sub", Action{Argv: []string{"/usr/bin/make", "-C", "sub", "test"}, Argument: ArgumentNone, Integrity: root}, "make -C sub: sub/Makefile is agent-writable"},
		{"make -Csub", Action{Argv: []string{"make", "-Csub"}, Argument: ArgumentNone, Integrity: root}, "sub/Makefile is agent-writable"},
		{"npm --prefix=", Action{Argv: []string{"npm", "--prefix=web", "test"}, Argument: ArgumentNone, Integrity: map[string]string{"package.json": "x"}}, "npm --prefix web: web/package.json"},
		{"pnpm dir argument", Action{Argv: []string{"pnpm", "install"}, Argument: ArgumentPath, ArgumentAllow: dirs, Integrity: map[string]string{"package.json": "x"}}, "pnpm <dir> (the caller's path, which may be a directory): <dir>/package.json"},
		{"cargo manifest", Action{Argv: []string{"cargo", "test", "--manifest-path", "crates/a/Cargo.toml"}, Argument: ArgumentNone, Integrity: map[string]string{"Cargo.toml": "x"}}, "crates/a/Cargo.toml is agent-writable"},

		{"sub pinned", Action{Argv: []string{"make", "-C", "sub"}, Argument: ArgumentNone, Integrity: map[string]string{"Makefile": "x", "sub/Makefile": "x"}}, ""},
		{"no directory", Action{Argv: []string{"make", "test"}, Argument: ArgumentNone, Integrity: root}, ""},
		{"-C a file argument", Action{Argv: []string{"make", "-C"}, Argument: ArgumentPath, Integrity: root}, ""},
		{"no pins", Action{Argv: []string{"make", "-C"}, Argument: ArgumentPath, ArgumentAllow: dirs}, ""},
		{"not a build program", Action{Argv: []string{"pytest"}, Argument: ArgumentPath, ArgumentAllow: dirs, Integrity: map[string]string{"conftest.py": "x"}}, ""},
		{"-C .", Action{Argv: []string{"make", "-C", "."}, Argument: ArgumentNone, Integrity: root}, ""},
		{"mvn -fae", Action{Argv: []string{"mvn", "-fae", "test"}, Argument: ArgumentNone, Integrity: map[string]string{"pom.xml": "x"}}, ""},
	} {
		got := buildFileWarning(c.a)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestActionWarnings: the .env's actions are read slot by slot; a slot
// whose JSON does not parse gives no warning (RenderPolicy reports it).
func TestActionWarnings(t *testing.T) {
	pin := strings.Repeat("a", 64)
	got := ActionWarnings([]string{
		`WORKDIR_02_REPO_ACTIONS_JSON={"build":{"argv":["make","-C"],"argument":"path","argument_allow":{"directories":true},"integrity":{"Makefile":"` + pin + `"}},"lint":{"argv":["make","lint"],"argument":"none","integrity":{"Makefile":"` + pin + `"}}}`,
		`WORKDIR_03_REPO_ACTIONS_JSON={"build":`,
	})
	if len(got) != 1 || !strings.HasPrefix(got[0], `slot 02: action "build": make -C <dir>`) {
		t.Errorf("%q", got)
	}
}

// TestActionRevealAndMaskNote: an action's reveal list is a warning
// (its output goes to the agent); the note says what actions cannot
// read under the .env's hidden setting, and nothing without actions.
func TestActionRevealAndMaskNote(t *testing.T) {
	env := []string{`WORKDIR_01_REPO_ACTIONS_JSON={"test":{"argv":["go","test","./..."],"argument":"none","reveal":[".env.test",".git"]}}`}
	if got := ActionWarnings(env); len(got) != 1 || !strings.Contains(got[0], `action "test" reads what the agent's tools refuse where it matches reveal ".env.test .git"`) {
		t.Errorf("%q", got)
	}
	if n := ActionMaskNote(env); !strings.Contains(n, "cannot read hidden paths") {
		t.Errorf("%q", n)
	}
	if n := ActionMaskNote(append(env, "SERVERFS_ALLOW_HIDDEN=true")); !strings.Contains(n, "cannot read deny-listed paths") || strings.Contains(n, "hidden") {
		t.Errorf("%q", n)
	}
	if n := ActionMaskNote(nil); n != "" {
		t.Errorf("%q", n)
	}
}
