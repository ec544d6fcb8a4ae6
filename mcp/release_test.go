package mcp

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/serverfs/serverfs/bridge"
	"github.com/serverfs/serverfs/bridge/wire"
	"github.com/serverfs/serverfs/git"
)

// TestBridgeReleaseFlow is the seed's acceptance flow extended with a
// release over MCP against a real bare remote: status -> lint action ->
// commit -> push -> run_repo_action release_tag v0.1.0; origin then has
// exactly that tag, at the pushed commit.
func TestBridgeReleaseFlow(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	e := newRWEnv(t)
	remote := filepath.Join(t.TempDir(), "remote.git")
	gitIn(t, e.parent, "init", "-q", "--bare", "-b", "main", remote)
	lint := []byte("#!/bin/sh\n! grep -rn TODO sub/\n")
	pkg := []byte("{\"name\": \"widget\", \"version\": \"0.1.0\"}\n")
	writeFile(t, filepath.Join(e.root, "tools/lint.sh"), lint)
	writeFile(t, filepath.Join(e.root, "package.json"), pkg)
	gitIn(t, e.root, "init", "-q", "-b", "main")
	gitIn(t, e.root, "config", "user.name", "Agent")
	gitIn(t, e.root, "config", "user.email", "agent@example.invalid")
	gitIn(t, e.root, "remote", "add", "origin", remote)
	gitIn(t, e.root, "add", "-A")
	gitIn(t, e.root, "commit", "-qm", "base")
	gitIn(t, e.root, "push", "-q", "-u", "origin", "main")
	withPushBridge(t, e, map[string]bridge.Action{
		"lint": {Argv: []string{"sh", "tools/lint.sh"}, Argument: bridge.ArgumentNone, Integrity: map[string]string{"tools/lint.sh": sha(lint)}},
		"release": {Kind: bridge.KindReleaseTag, Repository: "acme/widget", FetchURLs: []string{remote}, PushURLs: []string{remote},
			Integrity: map[string]string{"package.json": sha(pkg)}},
	}, &bridge.PushPolicy{URLs: []string{remote}, Branches: []string{"main"}})
	cs := e.client(t, e.serveHTTP(t))

	out := structured[inspectRepoOut](t, e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "actions"}))
	if len(out.Actions) != 2 || out.Actions[1] != (wire.ActionInfo{Name: "release", Kind: "release_tag", Argument: "release_tag", Mutates: true}) {
		t.Fatalf("actions: %+v", out.Actions)
	}
	out = structured[inspectRepoOut](t, e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "status"}))
	if out.Status.Upstream != "origin/main" || len(out.Status.Entries) != 0 {
		t.Fatalf("status: %+v", out.Status)
	}
	win := structured[struct {
		Revision string `json:"revision"`
	}](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt"}))
	e.call(t, cs, "edit_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt", "expected_revision": win.Revision,
		"edits": []map[string]any{{"old_text": "beta", "new_text": "gamma"}}})
	res := structured[runRepoActionOut](t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": "wd", "action": "lint"}))
	if res.ExitCode == nil || *res.ExitCode != 0 || res.Release != nil {
		t.Fatalf("lint: %+v", res)
	}
	// Not pushed yet: origin's main is behind HEAD.
	c := structured[git.CommitResult](t, e.call(t, cs, "commit_repo_changes", map[string]any{"workdir": "wd", "paths": []string{"sub/a.txt"}, "message": "Fix a.txt"}))
	toolErr(t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": "wd", "action": "release", "release_tag": "v0.1.0"}), "REMOTE_NOT_AT_HEAD: ")
	if p := structured[wire.PushResult](t, e.call(t, cs, "push_repo", map[string]any{"workdir": "wd"})); p.Status != "ok" {
		t.Fatalf("push: %+v", p)
	}
	res = structured[runRepoActionOut](t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": "wd", "action": "release", "release_tag": "v0.1.0"}))
	if r := res.Release; res.ExitCode != nil || r == nil || r.Status != "created" || r.Tag != "v0.1.0" || r.Commit != c.Commit {
		t.Fatalf("release: %+v %+v", res, res.Release)
	}
	if strings.Contains(res.Release.PushOutput, remote) || strings.Contains(res.Release.PushOutput, e.root) {
		t.Fatalf("push output shows a host path: %q", res.Release.PushOutput)
	}
	if got, want := strings.TrimSpace(gitIn(t, e.parent, "ls-remote", "--tags", remote)), c.Commit+"\trefs/tags/v0.1.0"; got != want {
		t.Fatalf("git ls-remote --tags: %q, want %q", got, want)
	}

	// Refusals through the protocol; origin keeps exactly its tag.
	for _, bad := range []string{"v1.2", "1.2.3", "v01.2.3", "v1.2.3-rc.1", "v1.2.3\n", "--tags"} {
		toolErr(t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": "wd", "action": "release", "release_tag": bad}), "INVALID_ARGUMENT: ")
	}
	toolErr(t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": "wd", "action": "release", "release_tag": "v0.1.0", "path": "package.json"}), "INVALID_ARGUMENT: ")
	toolErr(t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": "wd", "action": "release"}), "INVALID_ARGUMENT: ")
	toolErr(t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": "wd", "action": "lint", "release_tag": "v0.1.0"}), "INVALID_ARGUMENT: ")
	toolErr(t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": "ro", "action": "release", "release_tag": "v0.1.0"}), "REPO_OPS_DISABLED: ")
	if got := strings.TrimSpace(gitIn(t, e.parent, "ls-remote", "--tags", remote)); got != c.Commit+"\trefs/tags/v0.1.0" {
		t.Fatalf("git ls-remote --tags after refusals: %q", got)
	}
}
