package mcp

import (
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/git"
)

// TestSubmitWorkspace, over real HTTP with a real MCP client: two
// workspaces changing different files both merge (strict, then replay
// after strict answers BASE_MOVED); a resubmit is already_merged; a real
// conflict answers MERGE_CONFLICT with its hunks and leaves the branch;
// a workspace without changes is no_change. The live checkout (clean)
// follows, git fsck --strict passes and git status is clean.
func TestSubmitWorkspace(t *testing.T) {
	e := workspaceEnv(t, "SERVERFS_WORKSPACE_LIMIT=8")
	gitIn(t, e.root, "config", "user.name", "Queue Test")
	gitIn(t, e.root, "config", "user.email", "queue@example.invalid")
	cs := e.client(t, e.serveHTTP(t))
	head := func() string { return strings.TrimSpace(gitIn(t, e.root, "rev-parse", "main")) }
	write := func(ws, path, content string) {
		t.Helper()
		args := map[string]any{"workdir": ws, "path": path, "content": content}
		if rd := e.call(t, cs, "read_text_file", map[string]any{"workdir": ws, "path": path}); !rd.IsError {
			args["expected_revision"] = structured[readTextFileOut](t, rd).Revision
		}
		if res := e.call(t, cs, "write_text_file", args); res.IsError {
			t.Fatal(resultText(res))
		}
	}
	submit := func(ws, mode string) submitWorkspaceOut {
		t.Helper()
		return structured[submitWorkspaceOut](t, e.call(t, cs, "submit_workspace", map[string]any{"workspace": ws, "message": "change from " + ws, "mode": mode}))
	}
	base := head()
	ws1, ws2 := createWS(t, e, cs).Workspace, createWS(t, e, cs).Workspace
	write(ws1, "one.txt", "one\n")
	write(ws2, "sub/two.txt", "two\n")

	r1 := submit(ws1, "strict")
	if r1.Code != "" || r1.Status != git.StatusMerged || r1.From != base || r1.To != head() || r1.Checkout != "updated" ||
		r1.Patch == nil || strings.Join(r1.Patch.FilesChanged, ",") != "one.txt" || len(r1.Patch.SHA256) != 64 || r1.Patch.Diffstat.Insertions != 1 {
		t.Fatalf("strict ws1: %+v", r1)
	}
	afterOne := head()
	if r := submit(ws2, "strict"); r.Code != "BASE_MOVED" || r.Status != git.StatusBaseMoved || head() != afterOne {
		t.Fatalf("strict ws2: %+v", r)
	}
	r2 := submit(ws2, "replay")
	if r2.Code != "" || r2.Status != git.StatusMerged || r2.From != afterOne || r2.Checkout != "updated" {
		t.Fatalf("replay ws2: %+v", r2)
	}
	if got := gitIn(t, e.root, "show", "main:one.txt") + gitIn(t, e.root, "show", "main:sub/two.txt"); got != "one\ntwo\n" {
		t.Fatalf("merged files: %q", got)
	}
	if r := submit(ws2, "replay"); r.Status != git.StatusAlreadyMerged || r.To != r2.To || head() != r2.To {
		t.Fatalf("resubmit: %+v", r)
	}

	// A real conflict: both change sub/a.txt's first line.
	ws3, ws4 := createWS(t, e, cs).Workspace, createWS(t, e, cs).Workspace
	write(ws3, "sub/a.txt", "ALPHA three\nbeta\n")
	write(ws4, "sub/a.txt", "alpha four\nbeta\n")
	if r := submit(ws3, "strict"); r.Status != git.StatusMerged {
		t.Fatalf("ws3: %+v", r)
	}
	before := head()
	res := e.call(t, cs, "submit_workspace", map[string]any{"workspace": ws4, "message": "four", "mode": "replay"})
	c := structured[submitWorkspaceOut](t, res)
	if c.Code != "MERGE_CONFLICT" || c.Status != git.StatusConflict || head() != before || strings.Join(c.Files, ",") != "sub/a.txt" || c.Artifact == nil || len(c.Hunks) != 1 {
		t.Fatalf("conflict: %+v", c)
	}
	if h := c.Hunks[0]; h.Base != "alpha\n" || h.Ours != "ALPHA three\n" || h.Theirs != "alpha four\n" || h.Line != 1 {
		t.Fatalf("hunk: %+v", h)
	}
	if txt, want := resultText(res), "==> sub/a.txt line 1 <==\n<<<<<<< ours (branch main)\nALPHA three\n||||||| base\nalpha\n=======\nalpha four\n>>>>>>> theirs (workspace "+ws4+")\n"; !strings.HasPrefix(txt, "MERGE_CONFLICT: the branch main did not move") || !strings.HasSuffix(txt, want) {
		t.Fatalf("text: %s", txt)
	}

	// Nothing changed: no_change.
	if r := submit(createWS(t, e, cs).Workspace, "strict"); r.Status != git.StatusNoChange || head() != before {
		t.Fatalf("no change: %+v", r)
	}
	toolErr(t, e.call(t, cs, "submit_workspace", map[string]any{"workspace": "wd@nope", "message": "x"}), "INVALID_ARGUMENT")
	toolErr(t, e.call(t, cs, "submit_workspace", map[string]any{"workspace": ws1, "message": "x", "mode": "force"}), "INVALID_ARGUMENT")

	if out := gitIn(t, e.root, "fsck", "--strict", "--no-progress", "--no-dangling"); strings.TrimSpace(out) != "" {
		t.Fatalf("fsck: %s", out)
	}
	if st := gitIn(t, e.root, "status", "--porcelain"); strings.TrimSpace(st) != "" {
		t.Fatalf("live status after the merges: %q", st)
	}
}

// TestSubmitIntoEditedCheckout, over real HTTP: with the operator's edit
// of an unmerged file in the live checkout, a submit follows (the edit
// stays, nothing of the merge staged in reverse, and the operator's next
// commit keeps the merge); with their edit on a merged file it is
// REPO_DIRTY and the branch does not move.
func TestSubmitIntoEditedCheckout(t *testing.T) {
	e := workspaceEnv(t)
	gitIn(t, e.root, "config", "user.name", "Queue Test")
	gitIn(t, e.root, "config", "user.email", "queue@example.invalid")
	cs := e.client(t, e.serveHTTP(t))
	head := func() string { return strings.TrimSpace(gitIn(t, e.root, "rev-parse", "main")) }
	submit := func(ws string) *sdk.CallToolResult {
		return e.call(t, cs, "submit_workspace", map[string]any{"workspace": ws, "message": "change from " + ws})
	}
	writeFile(t, filepath.Join(e.root, "marker.txt"), []byte("the operator's edit\n"))
	ws := createWS(t, e, cs).Workspace
	if res := e.call(t, cs, "write_text_file", map[string]any{"workdir": ws, "path": "one.txt", "content": "one\n"}); res.IsError {
		t.Fatal(resultText(res))
	}
	r := structured[submitWorkspaceOut](t, submit(ws))
	if r.Status != git.StatusMerged || r.Checkout != "updated" || head() != r.To {
		t.Fatalf("submit: %+v", r)
	}
	if st := gitIn(t, e.root, "status", "--porcelain"); st != " M marker.txt\n" {
		t.Fatalf("live status: %q", st)
	}
	gitIn(t, e.root, "commit", "-qam", "the operator's commit")
	if got := gitIn(t, e.root, "show", "HEAD:one.txt"); got != "one\n" {
		t.Fatalf("the operator's commit undid the merge: one.txt %q", got)
	}

	ws2 := createWS(t, e, cs).Workspace
	rev := structured[readTextFileOut](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": ws2, "path": "one.txt"})).Revision
	if res := e.call(t, cs, "write_text_file", map[string]any{"workdir": ws2, "path": "one.txt", "content": "two\n", "expected_revision": rev}); res.IsError {
		t.Fatal(resultText(res))
	}
	writeFile(t, filepath.Join(e.root, "one.txt"), []byte("the operator's one\n"))
	before := head()
	if txt := toolErr(t, submit(ws2), "REPO_DIRTY"); !strings.Contains(txt, `"one.txt"`) || !strings.Contains(txt, "the branch did not move") {
		t.Fatalf("refusal: %s", txt)
	}
	if head() != before || gitIn(t, e.root, "status", "--porcelain") != " M one.txt\n" {
		t.Fatal("the refused submit changed the branch or the checkout")
	}
}
