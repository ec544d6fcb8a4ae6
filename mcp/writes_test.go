package mcp

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	sfs "github.com/serverfs/serverfs/fs"
)

var writeToolNames = []string{"write_text_file", "edit_text_file", "create_directory", "move_path", "delete_path"}

// TestWriteToolsListed: a read-write workdir adds exactly the five write
// tools, with explicit annotations; the instructions explain revisions.
// (TestToolsList shows a read-only configuration serves none of them.)
func TestWriteToolsListed(t *testing.T) {
	e := newRWEnv(t)
	cs := e.client(t, e.serveHTTP(t))
	var names []string
	for _, tool := range listTools(t, cs) {
		names = append(names, tool.Name)
		if !slices.Contains(writeToolNames, tool.Name) {
			continue // the repo tools have their own test
		}
		a := tool.Annotations
		destructive := tool.Name == "write_text_file" || tool.Name == "edit_text_file" || tool.Name == "delete_path"
		if a == nil || a.ReadOnlyHint || a.OpenWorldHint == nil || *a.OpenWorldHint || a.DestructiveHint == nil || *a.DestructiveHint != destructive {
			t.Errorf("%s: annotations %+v, want readOnly=false, openWorld=false, destructive=%v, all present", tool.Name, a, destructive)
		}
		if len(tool.Description) < 80 {
			t.Errorf("%s: description too thin for a model: %q", tool.Name, tool.Description)
		}
	}
	want := append(append(slices.Clone(toolNames), writeToolNames...), "inspect_repo", "read_repo_history", "commit_repo_changes")
	if !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(want))) {
		t.Fatalf("tools/list = %v, want %v", names, want)
	}
	if inv := ToolNames(e.deps.FS, e.deps.Bridge != nil); !slices.Equal(inv, want) {
		t.Errorf("ToolNames = %v, want %v", inv, want)
	}
	ins := cs.InitializeResult().Instructions
	if !strings.Contains(ins, "expected_revision") || !strings.Contains(ins, "REVISION_MISMATCH") || strings.Contains(ins, "never modifies") || !strings.Contains(ins, "untrusted") {
		t.Errorf("instructions with writes: %q", ins)
	}
}

// TestWriteChain: the revision-guarded edit cycle an agent goes through,
// over real HTTP with go-sdk's client.
func TestWriteChain(t *testing.T) {
	e := newRWEnv(t)
	cs := e.client(t, e.serveHTTP(t))

	win := structured[sfs.TextWindow](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt"}))
	if win.Revision != sfs.Revision([]byte(aText)) {
		t.Fatalf("read_text_file revision %q", win.Revision)
	}
	st := structured[sfs.FileInfo](t, e.call(t, cs, "stat_file", map[string]any{"workdir": "wd", "path": "sub/a.txt"}))
	if st.Revision != win.Revision {
		t.Fatalf("stat_file revision %q, read said %q", st.Revision, win.Revision)
	}
	// The file changes behind the agent's back: its edit is refused and
	// told the current revision.
	writeFile(t, filepath.Join(e.root, "sub/a.txt"), []byte("alpha\nBETA\n"))
	text := toolErr(t, e.call(t, cs, "edit_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt", "expected_revision": win.Revision,
		"edits": []map[string]any{{"old_text": "beta", "new_text": "gamma"}}}), "REVISION_MISMATCH: wd:/sub/a.txt ")
	current := sfs.Revision([]byte("alpha\nBETA\n"))
	if !strings.Contains(text, current) {
		t.Fatalf("mismatch %q does not name the current revision", text)
	}
	edited := e.call(t, cs, "edit_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt", "expected_revision": current,
		"edits": []map[string]any{{"old_text": "BETA", "new_text": "gamma"}}})
	res := structured[sfs.WriteResult](t, edited)
	if res.Action != "edited" || res.Revision != sfs.Revision([]byte("alpha\ngamma\n")) || !strings.Contains(res.Diff, "-BETA\n+gamma\n") {
		t.Fatalf("edit: %+v", res)
	}
	// The text a model reads: what happened, the new revision, and the
	// diff as plain unified-diff text.
	if got, want := resultText(edited), "edited wd:sub/a.txt revision "+res.Revision+" size 12\n"+res.Diff; got != want {
		t.Fatalf("edit text:\n%s\nwant:\n%s", got, want)
	}
	toolErr(t, e.call(t, cs, "edit_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt", "expected_revision": res.Revision,
		"edits": []map[string]any{{"old_text": "a", "new_text": "b"}}}), "EDIT_AMBIGUOUS: wd:/sub/a.txt edit 1: old_text occurs 4 times")
	toolErr(t, e.call(t, cs, "edit_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt", "expected_revision": res.Revision,
		"edits": []map[string]any{{"old_text": "delta", "new_text": "b"}}}), "EDIT_NOT_FOUND: wd:/sub/a.txt edit 1")

	// The file content is never logged, even when the agent writes it.
	toolErr(t, e.call(t, cs, "write_text_file", map[string]any{"workdir": "wd", "path": "notes/todo.md", "content": markerText}), "PATH_NOT_FOUND: wd:/notes/todo.md cannot be written: its parent directory")
	mk := structured[sfs.WriteResult](t, e.call(t, cs, "create_directory", map[string]any{"workdir": "wd", "path": "notes"}))
	if mk.Action != "created_directory" {
		t.Fatalf("create_directory: %+v", mk)
	}
	created := structured[sfs.WriteResult](t, e.call(t, cs, "write_text_file", map[string]any{"workdir": "wd", "path": "notes/todo.md", "content": markerText + "\n"}))
	if created.Action != "created" || !strings.HasPrefix(created.Diff, "--- /dev/null\n+++ b/notes/todo.md\n") {
		t.Fatalf("create: %+v", created)
	}
	toolErr(t, e.call(t, cs, "write_text_file", map[string]any{"workdir": "wd", "path": "notes/todo.md", "content": "x"}), "REVISION_MISMATCH: wd:/notes/todo.md already exists (current revision "+created.Revision)
	mv := structured[sfs.WriteResult](t, e.call(t, cs, "move_path", map[string]any{"workdir": "wd", "source": "notes/todo.md", "destination": "notes/done.md"}))
	if mv.Path != "notes/done.md" || mv.FromPath != "notes/todo.md" {
		t.Fatalf("move: %+v", mv)
	}
	toolErr(t, e.call(t, cs, "move_path", map[string]any{"workdir": "wd", "source": "notes/done.md", "destination": "README.md"}), "PATH_EXISTS: wd:/README.md ")
	toolErr(t, e.call(t, cs, "delete_path", map[string]any{"workdir": "wd", "path": "notes/done.md"}), "INVALID_ARGUMENT: wd:/notes/done.md is a file: expected_revision is required")
	toolErr(t, e.call(t, cs, "delete_path", map[string]any{"workdir": "wd", "path": "notes"}), "DIRECTORY_NOT_EMPTY: wd:/notes ")
	structured[sfs.WriteResult](t, e.call(t, cs, "delete_path", map[string]any{"workdir": "wd", "path": "notes/done.md", "expected_revision": created.Revision}))
	structured[sfs.WriteResult](t, e.call(t, cs, "delete_path", map[string]any{"workdir": "wd", "path": "notes"}))
	if _, err := os.Stat(filepath.Join(e.root, "notes")); !os.IsNotExist(err) {
		t.Fatalf("notes still exists: %v", err)
	}
	if strings.Contains(e.log.String(), markerText) {
		t.Fatal("written content reached the log")
	}
	if !strings.Contains(e.log.String(), `"tool":"edit_text_file"`) || !strings.Contains(e.log.String(), `"error_code":"REVISION_MISMATCH"`) {
		t.Fatalf("write calls not logged:\n%s", e.log.String())
	}
}

// TestWriteToolRefusals: the policy, the ro workdir and argument checks
// through the protocol surface; nothing changes.
func TestWriteToolRefusals(t *testing.T) {
	e := newRWEnv(t)
	cs := e.client(t, e.serveHTTP(t))
	readmeRev := sfs.Revision([]byte(readmeText))
	for _, c := range []struct {
		tool   string
		args   map[string]any
		prefix string
	}{
		{"write_text_file", map[string]any{"workdir": "ro", "path": "ro.txt", "content": "x", "expected_revision": sfs.Revision([]byte("read only\n"))}, "WORKDIR_READ_ONLY: ro:/ is read-only"},
		{"create_directory", map[string]any{"workdir": "ro", "path": "d"}, "WORKDIR_READ_ONLY: "},
		{"delete_path", map[string]any{"workdir": "ro", "path": "ro.txt", "expected_revision": sfs.Revision([]byte("read only\n"))}, "WORKDIR_READ_ONLY: "},
		{"write_text_file", map[string]any{"workdir": "wd", "path": "../secret.txt", "content": "x"}, "PATH_OUTSIDE_WORKDIR: "},
		{"write_text_file", map[string]any{"workdir": "wd", "path": "link.txt", "content": "x", "expected_revision": readmeRev}, "SYMLINK_NOT_ALLOWED: wd:/link.txt"},
		{"write_text_file", map[string]any{"workdir": "wd", "path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}, "HIDDEN_PATH_NOT_ALLOWED: "},
		{"write_text_file", map[string]any{"workdir": "wd", "path": ".env", "content": "A=1\n"}, "DENIED_PATH: "},
		{"write_text_file", map[string]any{"workdir": "wd", "path": "x.txt", "content": "a\x00b"}, "INVALID_CONTENT: "},
		{"write_text_file", map[string]any{"workdir": "wd", "path": "x.txt", "content": strings.Repeat("x", 1<<20+1)}, "WRITE_LIMIT_EXCEEDED: "},
		{"write_text_file", map[string]any{"workdir": "wd", "path": "README.md", "content": "x", "expected_revision": "sha256:nope"}, "INVALID_ARGUMENT: expected_revision "},
		{"write_text_file", map[string]any{"workdir": "wd", "path": "x.txt"}, "INVALID_ARGUMENT: "},
		{"edit_text_file", map[string]any{"workdir": "wd", "path": "README.md", "expected_revision": readmeRev}, "INVALID_ARGUMENT: "},
		{"edit_text_file", map[string]any{"workdir": "wd", "path": "README.md", "expected_revision": readmeRev, "edits": []any{}}, "INVALID_ARGUMENT: "},
		{"edit_text_file", map[string]any{"workdir": "wd", "path": "README.md", "expected_revision": readmeRev, "edits": "x"}, `INVALID_ARGUMENT: validating "arguments": property "edits" must be an array`},
		{"edit_text_file", map[string]any{"workdir": "wd", "path": "README.md", "expected_revision": readmeRev, "edits": []map[string]any{{"old_text": "Demo", "new_text": "x", "regex": true}}}, "INVALID_ARGUMENT: "},
		{"move_path", map[string]any{"workdir": "wd", "source": "README.md", "destination": "../moved.md"}, "PATH_OUTSIDE_WORKDIR: "},
		{"move_path", map[string]any{"workdir": "wd", "source": "link.txt", "destination": "l2"}, "SYMLINK_NOT_ALLOWED: "},
		{"delete_path", map[string]any{"workdir": "wd", "path": "sub"}, "DIRECTORY_NOT_EMPTY: "},
		{"delete_path", map[string]any{"workdir": "wd", "path": "-rf"}, "PATH_NOT_FOUND: "},
		{"delete_path", map[string]any{"workdir": "wd", "path": ""}, "INVALID_PATH: "},
	} {
		toolErr(t, e.call(t, cs, c.tool, c.args), c.prefix)
	}
	if b, _ := os.ReadFile(filepath.Join(e.root, "README.md")); string(b) != readmeText {
		t.Error("README.md changed")
	}
	if b, _ := os.ReadFile(filepath.Join(e.parent, "secret.txt")); string(b) != canaryText+"\n" {
		t.Error("the canary outside changed")
	}
	for _, p := range []string{"x.txt", ".git", ".env"} {
		if _, err := os.Lstat(filepath.Join(e.root, p)); !os.IsNotExist(err) {
			t.Errorf("%s was created", p)
		}
	}
}

// TestWriteConcurrentClients: clients on their own sessions race to change
// one file from one revision; exactly one wins.
func TestWriteConcurrentClients(t *testing.T) {
	e := newRWEnv(t)
	url := e.serveHTTP(t)
	rev := sfs.Revision([]byte(aText))
	const n = 12
	sessions := make([]*sdk.ClientSession, n)
	for i := range sessions {
		sessions[i] = e.client(t, url)
	}
	var wg sync.WaitGroup
	results := make([]*sdk.CallToolResult, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.call(t, sessions[i], "write_text_file", map[string]any{"workdir": "wd", "path": "sub/a.txt", "content": fmt.Sprintf("writer %d\n", i), "expected_revision": rev})
		}()
	}
	wg.Wait()
	winner := -1
	for i, r := range results {
		if !r.IsError {
			if winner >= 0 {
				t.Fatalf("writers %d and %d both succeeded", winner, i)
			}
			winner = i
			continue
		}
		toolErr(t, r, "REVISION_MISMATCH: ")
	}
	if winner < 0 {
		t.Fatal("no writer succeeded")
	}
	if b, _ := os.ReadFile(filepath.Join(e.root, "sub/a.txt")); string(b) != fmt.Sprintf("writer %d\n", winner) {
		t.Fatalf("file holds %q, winner was %d", b, winner)
	}
}
