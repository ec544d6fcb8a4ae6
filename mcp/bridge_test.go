package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/serverfs/serverfs/bridge"
	"github.com/serverfs/serverfs/bridge/wire"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git"
	"github.com/serverfs/serverfs/git/workspace"
	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/search"
)

// withBridge starts a real bridge for the environment's workdir "wd" (the
// actions given) and wires its client into the server: the lease too.
func withBridge(t *testing.T, e *testEnv, actions map[string]bridge.Action) *wire.Client {
	t.Helper()
	return withPushBridge(t, e, actions, nil)
}

// withPushBridge is withBridge with push, the workdir's approved push
// destinations.
func withPushBridge(t *testing.T, e *testEnv, actions map[string]bridge.Action, push *bridge.PushPolicy) *wire.Client {
	t.Helper()
	policy := &bridge.Policy{Workdirs: map[string]bridge.WorkdirPolicy{"wd": {Root: e.root, ReadWrite: true, RepoOps: true, Actions: actions, Push: push}}}
	return e.reconfigure(t, []string{"wd=" + e.root + ":rw:repo", "ro=" + filepath.Join(e.parent, "ro")}, nil, policy)
}

// startBridge serves a real bridge with policy on a Unix socket until the
// test ends and returns a client of it.
func startBridge(t *testing.T, policy *bridge.Policy) *wire.Client {
	t.Helper()
	srv, err := bridge.NewServer(policy, []byte("0123456789abcdef-mcp-test"), []uint32{uint32(os.Getuid())}, t.TempDir(), slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "b.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, ln.(*net.UnixListener)); close(done) }()
	t.Cleanup(func() { cancel(); <-done; srv.Close() })
	tok := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tok, []byte("0123456789abcdef-mcp-test"), 0o600)
	c, err := wire.NewClient(sock, tok)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// reconfigure replaces the environment's FS with one loaded from environ
// and the --workdir flags, and, with a policy, starts a bridge whose
// client the server and the FS's writes use (as serve wires them).
func (e *testEnv) reconfigure(t *testing.T, flags, environ []string, policy *bridge.Policy) *wire.Client {
	t.Helper()
	var c *wire.Client
	opts := sfs.Options{}
	if policy != nil {
		c = startBridge(t, policy)
		opts.Lease = c
	}
	e.deps.FS.Close()
	environ = slices.Clone(environ)
	for i, kv := range environ {
		if kv == stateDirTemp {
			environ[i] = "SERVERFS_STATE_DIR=" + t.TempDir()
		}
	}
	cfg, err := sfs.LoadConfig(environ, flags)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sfs.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	e.deps.FS = f
	e.deps.Search = search.New(f)
	e.deps.Bridge = c
	e.deps.Workspaces = nil
	if wc, probs := workspace.LoadConfig(environ, ""); len(probs) > 0 {
		t.Fatal(probs)
	} else if wc.StateDir != "" {
		m, _, err := workspace.Open(f, wc)
		if err != nil {
			t.Fatal(err)
		}
		e.deps.Workspaces = m
	}
	e.deps.Grants = false
	if c != nil {
		// As serve does: the bridge says whether it offers grants.
		off, err := c.Offer(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		e.deps.Grants = off.Grants
	}
	return c
}

// stateDirTemp, in reconfigure's environ, becomes SERVERFS_STATE_DIR set
// to a fresh temporary directory: the workspace tools are served.
const stateDirTemp = "SERVERFS_STATE_DIR=<temp>"

// testGrantKey is an Ed25519 public key for policies that pin one (its
// private key is not kept: nothing signed with it is needed).
const testGrantKey = "41wIYQnE2LwzbVVFNlAufgdkYL2hrSqGDfYId9Y9Ugg="

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// TestBridgeAcceptanceFlow is the bridge's acceptance flow against a real
// bare remote: inspect_repo(actions) -> inspect_repo(status) -> a named
// lint action -> edit -> commit_repo_changes -> push_repo -> clean status.
func TestBridgeAcceptanceFlow(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	e := newRWEnv(t)
	remote := filepath.Join(t.TempDir(), "remote.git")
	gitIn(t, e.parent, "init", "-q", "--bare", "-b", "main", remote)
	lint := []byte("#!/bin/sh\n# lint: fails on TODO\n! grep -rn TODO sub/\n")
	writeFile(t, filepath.Join(e.root, "tools/lint.sh"), lint)
	gitIn(t, e.root, "init", "-q", "-b", "main")
	gitIn(t, e.root, "config", "user.name", "Agent")
	gitIn(t, e.root, "config", "user.email", "agent@example.invalid")
	gitIn(t, e.root, "remote", "add", "origin", remote)
	gitIn(t, e.root, "add", "-A")
	gitIn(t, e.root, "commit", "-qm", "base")
	gitIn(t, e.root, "push", "-q", "-u", "origin", "main")
	withPushBridge(t, e, map[string]bridge.Action{
		"lint": {Argv: []string{"sh", "tools/lint.sh"}, Argument: bridge.ArgumentNone, Integrity: map[string]string{"tools/lint.sh": sha(lint)}},
	}, &bridge.PushPolicy{URLs: []string{remote}, Branches: []string{"main"}})
	cs := e.client(t, e.serveHTTP(t))

	names := []string{}
	for _, tool := range listTools(t, cs) {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"run_repo_action", "push_repo"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools/list without %s: %v", want, names)
		}
	}
	out := structured[inspectRepoOut](t, e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "actions"}))
	if len(out.Actions) != 1 || out.Actions[0] != (wire.ActionInfo{Name: "lint", Argument: "none"}) {
		t.Fatalf("actions: %+v", out.Actions)
	}
	out = structured[inspectRepoOut](t, e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "status"}))
	if out.Status.Upstream != "origin/main" || *out.Status.Ahead != 0 || len(out.Status.Entries) != 0 {
		t.Fatalf("status: %+v", out.Status)
	}
	win := structured[sfs.TextWindow](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt"}))
	structured[sfs.WriteResult](t, e.call(t, cs, "edit_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt", "expected_revision": win.Revision,
		"edits": []map[string]any{{"old_text": "beta", "new_text": "beta TODO"}}}))
	lintRes := e.call(t, cs, "run_repo_action", map[string]any{"workdir": "wd", "action": "lint"})
	res := structured[wire.ActionResult](t, lintRes)
	if res.ExitCode == 0 || !strings.Contains(res.Stdout, "sub/a.txt") {
		t.Fatalf("lint on a TODO: %+v", res)
	}
	// The text a model reads: how it ended, then the output as written.
	if txt := resultText(lintRes); !strings.HasPrefix(txt, fmt.Sprintf("action lint: exit %d in ", res.ExitCode)) || !strings.Contains(txt, "\n--- stdout ---\n"+res.Stdout) {
		t.Fatalf("lint text:\n%s", txt)
	}
	win = structured[sfs.TextWindow](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt"}))
	structured[sfs.WriteResult](t, e.call(t, cs, "edit_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt", "expected_revision": win.Revision,
		"edits": []map[string]any{{"old_text": "beta TODO", "new_text": "gamma"}}}))
	if res := structured[wire.ActionResult](t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": "wd", "action": "lint"})); res.ExitCode != 0 {
		t.Fatalf("lint after the fix: %+v", res)
	}
	c := structured[git.CommitResult](t, e.call(t, cs, "commit_repo_changes", map[string]any{"workdir": "wd", "paths": []string{"sub/a.txt"}, "message": "Fix a.txt"}))
	fsckStrict(t, e.root)
	p := structured[wire.PushResult](t, e.call(t, cs, "push_repo", map[string]any{"workdir": "wd"}))
	if p.Status != "ok" {
		t.Fatalf("push: %+v", p)
	}
	if got := strings.TrimSpace(gitIn(t, remote, "rev-parse", "main")); got != c.Commit {
		t.Fatalf("remote main %s, commit %s", got, c.Commit)
	}
	out = structured[inspectRepoOut](t, e.call(t, cs, "inspect_repo", map[string]any{"workdir": "wd", "view": "status"}))
	if *out.Status.Ahead != 0 || *out.Status.Behind != 0 || len(out.Status.Entries) != 0 {
		t.Fatalf("final status: %+v", out.Status)
	}
	if p := structured[wire.PushResult](t, e.call(t, cs, "push_repo", map[string]any{"workdir": "wd"})); p.Status != "up_to_date" {
		t.Fatalf("second push: %+v", p)
	}
	// Refusals through the protocol.
	toolErr(t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": "wd", "action": "rm -rf"}), "ACTION_NOT_FOUND: ")
	toolErr(t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": "ro", "action": "lint"}), "REPO_OPS_DISABLED: ")
	toolErr(t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": "wd", "action": "lint", "path": "../x"}), "PATH_OUTSIDE_WORKDIR: ")
	// A pin that no longer matches: nothing runs.
	writeFile(t, filepath.Join(e.root, "tools/lint.sh"), []byte("#!/bin/sh\ntouch PWNED\n"))
	toolErr(t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": "wd", "action": "lint"}), "INTEGRITY_MISMATCH: ")
	if _, err := os.Stat(filepath.Join(e.root, "PWNED")); !os.IsNotExist(err) {
		t.Fatal("a changed pinned script ran")
	}
}

// TestBridgeLeaseExcludesWrites: while an action holds the workdir's
// lease (blocked on a FIFO), a write waits for it; it succeeds once the
// action has finished.
func TestBridgeLeaseExcludesWrites(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	e := newRWEnv(t)
	gitInitBase(t, e.root)
	writeFile(t, filepath.Join(e.root, "README.md"), []byte("changed\n"))
	// In the workdir: the action's sandbox lets it read nothing else.
	fifo := filepath.Join(e.root, "gate")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	c := withBridge(t, e, map[string]bridge.Action{"wait": {Argv: []string{"cat", fifo}, Argument: bridge.ArgumentNone}})
	done := make(chan error, 1)
	go func() {
		_, err := c.RunAction(context.Background(), "wd", "wait", "")
		done <- err
	}()
	// The action holds the lease once it has opened the FIFO for reading:
	// opening it for writing returns exactly then.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err = e.deps.FS.WriteFile(ctx, "wd", "new.txt", "x\n", "")
	cancel()
	if errs.CodeOf(err) != errs.Canceled {
		t.Fatalf("a write during the action: %v (want it to wait for the lease)", err)
	}
	if _, err := os.Stat(filepath.Join(e.root, "new.txt")); !os.IsNotExist(err) {
		t.Fatal("the write happened while the action held the lease")
	}
	// A commit waits for the same lease.
	repo, err := git.Open(e.deps.FS, "wd")
	if err != nil {
		t.Fatal(err)
	}
	head := gitIn(t, e.root, "rev-parse", "HEAD")
	ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err = repo.Commit(ctx, []string{"README.md"}, "during the action")
	cancel()
	if errs.CodeOf(err) != errs.Canceled || gitIn(t, e.root, "rev-parse", "HEAD") != head {
		t.Fatalf("a commit during the action: %v (want it to wait for the lease)", err)
	}
	w.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := e.deps.FS.WriteFile(context.Background(), "wd", "new.txt", "x\n", ""); err != nil {
		t.Fatalf("after the action: %v", err)
	}
	if _, err := repo.Commit(context.Background(), []string{"README.md"}, "after the action"); err != nil {
		t.Fatalf("commit after the action: %v", err)
	}
	fsckStrict(t, e.root)
}
