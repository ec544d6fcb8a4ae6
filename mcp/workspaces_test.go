package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/bridge"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// workspaceEnv is newRWEnv with wd a git repository (its files committed)
// and workspaces served from a temporary state directory.
func workspaceEnv(t *testing.T, environ ...string) *testEnv {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	e := newRWEnv(t)
	writeFile(t, filepath.Join(e.root, ".gitignore"), []byte("*.log\n"))
	commitAll(t, e.root)
	e.reconfigure(t, []string{"wd=" + e.root + ":rw:repo", "ro=" + filepath.Join(e.parent, "ro")}, append([]string{stateDirTemp}, environ...), nil)
	return e
}

func createWS(t *testing.T, e *testEnv, cs *sdk.ClientSession) workspaceOut {
	t.Helper()
	ws := structured[workspaceOut](t, e.call(t, cs, "create_workspace", map[string]any{"workdir": "wd"}))
	if _, _, ok := sfs.SplitWorkspaceAlias(ws.Workspace); !ok || !strings.HasPrefix(ws.Workspace, "wd@") {
		t.Fatalf("workspace alias %q", ws.Workspace)
	}
	return ws
}

// TestWorkspaceChain: create -> write in ALIAS@ID -> read and search there
// -> the live tree is untouched -> list -> discard, over real HTTP.
func TestWorkspaceChain(t *testing.T) {
	e := workspaceEnv(t)
	cs := e.client(t, e.serveHTTP(t))
	head := gitIn(t, e.root, "rev-parse", "HEAD")
	ws := createWS(t, e, cs)
	if ws.Base != strings.TrimSpace(head) || ws.Branch != "main" || ws.Workdir != "wd" || !strings.HasPrefix(ws.Owner, "serverfs-test") || ws.Files == 0 {
		t.Fatalf("create_workspace: %+v (head %s)", ws, head)
	}
	a := ws.Workspace

	// list_workdirs shows it with base, owner and age.
	wds := structured[listWorkdirsOut](t, e.call(t, cs, "list_workdirs", map[string]any{}))
	var listed *sfs.WorkdirInfo
	for i := range wds.Workdirs {
		if wds.Workdirs[i].Alias == a {
			listed = &wds.Workdirs[i]
		}
	}
	if listed == nil || listed.Base != ws.Base || listed.Owner != ws.Owner || listed.Age == "" || listed.Mode != sfs.ModeReadWrite || listed.RepoOps {
		t.Fatalf("list_workdirs: %+v", wds)
	}

	// Read, then write with the revision, there.
	read := structured[readTextFileOut](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": a, "path": "sub/a.txt"}))
	if read.Content != aText || read.Revision == "" {
		t.Fatalf("read in the workspace: %+v", read)
	}
	res := e.call(t, cs, "write_text_file", map[string]any{"workdir": a, "path": "sub/a.txt", "content": "workspace only zebra\n", "expected_revision": read.Revision})
	if res.IsError {
		t.Fatal(resultText(res))
	}
	toolErr(t, e.call(t, cs, "write_text_file", map[string]any{"workdir": a, "path": "sub/a.txt", "content": "stale\n", "expected_revision": read.Revision}), "REVISION_MISMATCH")
	if res := e.call(t, cs, "write_text_file", map[string]any{"workdir": a, "path": "fresh.txt", "content": "zebra fresh\n"}); res.IsError {
		t.Fatal(resultText(res))
	}
	got := structured[readTextFileOut](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": a, "path": "sub/a.txt"}))
	if got.Content != "workspace only zebra\n" {
		t.Fatalf("read back: %q", got.Content)
	}
	if rr, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "serverfs://" + strings.Replace(a, "@", "%40", 1) + "/sub/a.txt"}); err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "workspace only zebra\n" {
		t.Errorf("resource in the workspace: %+v %v", rr, err)
	}
	found := resultText(e.call(t, cs, "search_text", map[string]any{"workdir": a, "query": "zebra"}))
	if !strings.Contains(found, "fresh.txt") || !strings.Contains(found, "sub/a.txt") {
		t.Errorf("search in the workspace: %s", found)
	}
	if live := resultText(e.call(t, cs, "search_text", map[string]any{"workdir": "wd", "query": "zebra"})); strings.Contains(live, "fresh.txt") || strings.Contains(live, "a.txt") {
		t.Errorf("search in the live tree finds workspace text: %s", live)
	}
	// .gitignore counts in a workspace as in its repository.
	if res := e.call(t, cs, "write_text_file", map[string]any{"workdir": a, "path": "sub/skip.log", "content": "zebra ignored\n"}); res.IsError {
		t.Fatal(resultText(res))
	}
	if got := resultText(e.call(t, cs, "search_text", map[string]any{"workdir": a, "query": "zebra ignored"})); strings.Contains(got, "skip.log") {
		t.Errorf("search in the workspace ignores its .gitignore: %s", got)
	}
	if got := resultText(e.call(t, cs, "search_text", map[string]any{"workdir": a, "query": "zebra ignored", "include_ignored": true})); !strings.Contains(got, "skip.log") {
		t.Errorf("include_ignored in the workspace: %s", got)
	}
	if files := resultText(e.call(t, cs, "find_files", map[string]any{"workdir": a, "pattern": "fresh*"})); !strings.Contains(files, "fresh.txt") {
		t.Errorf("find_files in the workspace: %s", files)
	}

	// The live tree is untouched.
	if b, _ := os.ReadFile(filepath.Join(e.root, "sub", "a.txt")); string(b) != aText {
		t.Errorf("live sub/a.txt: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(e.root, "fresh.txt")); !os.IsNotExist(err) {
		t.Errorf("fresh.txt in the live tree: %v", err)
	}
	if st := gitIn(t, e.root, "status", "--porcelain"); strings.TrimSpace(st) != "" {
		t.Errorf("live status: %q", st)
	}

	lst := structured[listWorkspacesOut](t, e.call(t, cs, "list_workspaces", map[string]any{"workdir": "wd"}))
	if len(lst.Workspaces) != 1 || lst.Workspaces[0].Workspace != a || lst.Workspaces[0].CreatedAt == "" {
		t.Fatalf("list_workspaces: %+v", lst)
	}
	toolErr(t, e.call(t, cs, "list_workspaces", map[string]any{"workdir": "nope"}), "WORKDIR_NOT_FOUND")

	if d := structured[discardWorkspaceOut](t, e.call(t, cs, "discard_workspace", map[string]any{"workspace": a})); d.Discarded != a {
		t.Fatalf("discard: %+v", d)
	}
	toolErr(t, e.call(t, cs, "read_text_file", map[string]any{"workdir": a, "path": "sub/a.txt"}), "WORKDIR_NOT_FOUND")
	toolErr(t, e.call(t, cs, "discard_workspace", map[string]any{"workspace": a}), "WORKDIR_NOT_FOUND")
	if lst := structured[listWorkspacesOut](t, e.call(t, cs, "list_workspaces", map[string]any{})); len(lst.Workspaces) != 0 {
		t.Errorf("after discard: %+v", lst)
	}
	if b, _ := os.ReadFile(filepath.Join(e.root, "sub", "a.txt")); string(b) != aText {
		t.Errorf("discard changed the live tree: %q", b)
	}
}

// gitNameRE finds a .git entry named in an answer (not .gitignore).
var gitNameRE = regexp.MustCompile(`(?i)\.git([/"\s,\]]|$)`)

// TestWorkspaceGitUnreachable: no tool reaches a .git in a workspace
// (there is none, and creating one is refused), with hidden paths served
// or not; the repository tools answer REPO_NOT_FOUND there.
func TestWorkspaceGitUnreachable(t *testing.T) {
	for _, hidden := range []string{"false", "true"} {
		t.Run("allow_hidden="+hidden, func(t *testing.T) {
			e := workspaceEnv(t, "SERVERFS_ALLOW_HIDDEN="+hidden)
			cs := e.client(t, e.serveHTTP(t))
			a := createWS(t, e, cs).Workspace
			gitText := "repositoryformatversion" // in .git/config
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"stat_file", map[string]any{"workdir": a, "path": ".git"}},
				{"stat_file", map[string]any{"workdir": a, "path": ".git/config"}},
				{"read_text_file", map[string]any{"workdir": a, "path": ".git/config"}},
				{"read_text_file", map[string]any{"workdir": a, "path": ".git/HEAD"}},
				{"read_text_files", map[string]any{"workdir": a, "paths": []string{".git/config"}}},
				{"list_directory", map[string]any{"workdir": a, "path": ".git"}},
				{"write_text_file", map[string]any{"workdir": a, "path": ".git/config", "content": "x"}},
				{"write_text_file", map[string]any{"workdir": a, "path": ".GIT", "content": "x"}},
				{"create_directory", map[string]any{"workdir": a, "path": ".git/hooks"}},
				{"move_path", map[string]any{"workdir": a, "source": "README.md", "destination": ".git"}},
				{"read_repo_history", map[string]any{"workdir": a}},
				{"commit_repo_changes", map[string]any{"workdir": a, "message": "x", "paths": []string{"README.md"}}},
			} {
				res := e.call(t, cs, c.tool, c.args)
				text := resultText(res)
				if !res.IsError && c.tool != "read_text_files" {
					t.Errorf("%s %v succeeded: %s", c.tool, c.args, text)
				}
				if strings.Contains(text, gitText) || strings.Contains(text, "refs/heads") {
					t.Errorf("%s %v shows .git content: %s", c.tool, c.args, text)
				}
				if c.tool == "read_text_files" && structured[readTextFilesOut](t, res).Files[0].Error == "" {
					t.Errorf("read_text_files .git/config: %s", text)
				}
			}
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"list_directory", map[string]any{"workdir": a, "depth": 3}},
				{"find_files", map[string]any{"workdir": a, "pattern": "**/*"}},
				{"find_files", map[string]any{"workdir": a, "pattern": "*config*"}},
				{"search_text", map[string]any{"workdir": a, "query": gitText, "include_ignored": true}},
				{"search_text", map[string]any{"workdir": a, "query": "ref: refs", "include_ignored": true}},
				// A review of the workspace against its base (review.go).
				{"inspect_repo", map[string]any{"workdir": a, "view": "changes"}},
			} {
				res := e.call(t, cs, c.tool, c.args)
				b, _ := json.Marshal(res.StructuredContent)
				text := resultText(res)
				if _, q, _ := strings.Cut(text, "\n"); c.tool == "search_text" {
					text = q // past the first line, which repeats the query
				}
				if res.IsError || gitNameRE.MatchString(text+string(b)) || strings.Contains(text, gitText) || strings.Contains(text, "ref: refs") || strings.Contains(string(b), `"matches"`) && c.tool == "search_text" {
					t.Errorf("%s %v names .git: %s %s", c.tool, c.args, text, b)
				}
			}
			enc := strings.Replace(a, "@", "%40", 1) // the template's {workdir} takes no raw '@'
			for _, uri := range []string{"serverfs://" + enc + "/.git/config", "serverfs://" + enc + "/.git%2fconfig", "serverfs://" + enc + "/%2e%2e/.git/config", "serverfs://" + enc + "/.GIT/HEAD"} {
				res, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri})
				if err == nil {
					t.Errorf("resource %s: %+v", uri, res)
				} else if strings.Contains(err.Error(), gitText) {
					t.Errorf("resource %s: %v", uri, err)
				}
			}
			if _, err := os.Lstat(filepath.Join(e.root, ".git", "hooks", "x")); !os.IsNotExist(err) {
				t.Error("a hook reached the live .git")
			}
		})
	}
}

// TestWorkspaceLimitAndHostileIDs: WORKSPACE_LIMIT over HTTP, and
// workspace arguments that are paths, empty or long are refused.
func TestWorkspaceLimitAndHostileIDs(t *testing.T) {
	e := workspaceEnv(t, "SERVERFS_WORKSPACE_LIMIT=2")
	cs := e.client(t, e.serveHTTP(t))
	createWS(t, e, cs)
	createWS(t, e, cs)
	toolErr(t, e.call(t, cs, "create_workspace", map[string]any{"workdir": "wd"}), "WORKSPACE_LIMIT")
	toolErr(t, e.call(t, cs, "create_workspace", map[string]any{"workdir": "ro"}), "REPO_OPS_DISABLED")
	toolErr(t, e.call(t, cs, "create_workspace", map[string]any{"workdir": "wd", "base": "-x"}), "")
	for _, id := range []string{"../x", "a/b", "@", "wd@", "wd@../../etc", "wd@" + strings.Repeat("a", 5000), "wd@aaaaaaaaaaaaaaaa/..", ""} {
		res := e.call(t, cs, "discard_workspace", map[string]any{"workspace": id})
		text := toolErr(t, res, "")
		if !strings.HasPrefix(text, "INVALID_ARGUMENT") && !strings.HasPrefix(text, "WORKDIR_NOT_FOUND") {
			t.Errorf("discard %.30q: %s", id, text)
		}
		if len(text) > 300 {
			t.Errorf("discard %.30q: a %d-byte answer", id, len(text))
		}
		if id == "" {
			// go-sdk reads an empty Mcp-Param-Workdir as no header: the
			// 2026-07-28 lane refuses the call (-32020) before any tool.
			continue
		}
		text = toolErr(t, e.call(t, cs, "read_text_file", map[string]any{"workdir": id, "path": "README.md"}), "")
		if !strings.HasPrefix(text, "WORKDIR_NOT_FOUND") && !strings.HasPrefix(text, "INVALID") {
			t.Errorf("read in %.30q: %s", id, text)
		}
	}
	if lst := structured[listWorkspacesOut](t, e.call(t, cs, "list_workspaces", map[string]any{})); len(lst.Workspaces) != 2 {
		t.Errorf("hostile discards removed workspaces: %+v", lst)
	}
}

// TestWorkspaceActions: a named action of wd runs in a workspace of wd
// through a real bridge whose policy names the state directory: on the
// workspace's files (its writes stay there), never on the live tree, and
// the pins are checked against the workspace's copy (an agent's edit of
// a pinned script is INTEGRITY_MISMATCH: nothing runs).
func TestWorkspaceActions(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	e := newRWEnv(t)
	show := []byte("#!/bin/sh\ncat sub/a.txt\ntest -e .git && echo HAS_GIT\ncat " + filepath.Join(e.root, "marker.txt") + " >/dev/null 2>&1 && echo LIVE_READ || echo LIVE_DENIED\n")
	writeFile(t, filepath.Join(e.root, "tools", "show.sh"), show)
	commitAll(t, e.root)
	state := t.TempDir()
	policy := &bridge.Policy{WorkspacesDir: state, Workdirs: map[string]bridge.WorkdirPolicy{"wd": {Root: e.root, ReadWrite: true, RepoOps: true, Actions: map[string]bridge.Action{
		"show": {Argv: []string{"/bin/sh", "tools/show.sh"}, Argument: "none", Integrity: map[string]string{"tools/show.sh": sha(show)}},
		"make": {Argv: []string{"/bin/sh", "-c", "echo made > made.txt"}, Argument: "none", Mutates: true},
	}}}}
	bc := e.reconfigure(t, []string{"wd=" + e.root + ":rw:repo", "ro=" + filepath.Join(e.parent, "ro")}, []string{"SERVERFS_STATE_DIR=" + state}, policy)
	cs := e.client(t, e.serveHTTP(t))
	a := createWS(t, e, cs).Workspace
	_, id, _ := sfs.SplitWorkspaceAlias(a)

	read := structured[readTextFileOut](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": a, "path": "sub/a.txt"}))
	e.call(t, cs, "write_text_file", map[string]any{"workdir": a, "path": "sub/a.txt", "content": "workspace text\n", "expected_revision": read.Revision})
	out := structured[runRepoActionOut](t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": a, "action": "show"}))
	if out.ExitCode == nil || *out.ExitCode != 0 || !strings.Contains(out.Stdout, "workspace text") || strings.Contains(out.Stdout, "HAS_GIT") {
		t.Fatalf("show in the workspace: %+v", out)
	}
	t.Logf("sandbox %s: %q", bridge.SandboxLevel(), out.Stdout)
	if bridge.SandboxLevel() == bridge.SandboxEnforced && !strings.Contains(out.Stdout, "LIVE_DENIED") {
		t.Errorf("the action read the live tree: %s", out.Stdout)
	}
	live := structured[runRepoActionOut](t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": "wd", "action": "show"}))
	if !strings.Contains(live.Stdout, aText) || strings.Contains(live.Stdout, "workspace text") || live.Sandbox == bridge.SandboxEnforced && !slices.Contains(live.SandboxControls, bridge.ControlLandlockFS) {
		t.Errorf("show in the live tree: %+v", live)
	}
	if res := e.call(t, cs, "run_repo_action", map[string]any{"workdir": a, "action": "make"}); res.IsError {
		t.Fatal(resultText(res))
	}
	if got := structured[readTextFileOut](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": a, "path": "made.txt"})); got.Content != "made\n" {
		t.Errorf("made.txt in the workspace: %q", got.Content)
	}
	if _, err := os.Lstat(filepath.Join(e.root, "made.txt")); !os.IsNotExist(err) {
		t.Errorf("the action wrote the live tree: %v", err)
	}
	// An edited pinned script runs nowhere.
	// (The script names the live tree's host path: no answer may show
	// its content, so it is replaced by delete and create.)
	sh := structured[sfs.FileInfo](t, e.call(t, cs, "stat_file", map[string]any{"workdir": a, "path": "tools/show.sh"}))
	if res := e.call(t, cs, "delete_path", map[string]any{"workdir": a, "path": "tools/show.sh", "expected_revision": sh.Revision}); res.IsError {
		t.Fatal(resultText(res))
	}
	e.call(t, cs, "write_text_file", map[string]any{"workdir": a, "path": "tools/show.sh", "content": "#!/bin/sh\necho PWNED\n"})
	toolErr(t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": a, "action": "show"}), "INTEGRITY_MISMATCH")
	toolErr(t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": a, "action": "show", "release_tag": "v1.0.0"}), "INVALID_ARGUMENT")

	// The bridge checks the workspace itself: hostile or unknown IDs, and
	// a workspace that is not the workdir's.
	for wid, code := range map[string]errs.Code{"../x": errs.InvalidArgument, "a/b": errs.InvalidArgument, "": errs.InvalidArgument, "zzzzzzzzzzzzzzzz": errs.WorkdirNotFound} {
		if wid == "" {
			continue // an empty ID is a run in the workdir
		}
		if _, err := bc.RunWorkspaceAction(t.Context(), "wd", wid, "show", ""); errs.CodeOf(err) != code {
			t.Errorf("bridge, workspace %q: %v", wid, err)
		}
	}
	os.MkdirAll(filepath.Join(state, "workspaces", "qqqqqqqqqqqqqqqq", "tree"), 0o755)
	os.WriteFile(filepath.Join(state, "workspaces", "qqqqqqqqqqqqqqqq", "meta.json"), []byte(`{"workdir":"other","id":"qqqqqqqqqqqqqqqq"}`), 0o600)
	if _, err := bc.RunWorkspaceAction(t.Context(), "wd", "qqqqqqqqqqqqqqqq", "show", ""); errs.CodeOf(err) != errs.WorkdirNotFound {
		t.Errorf("bridge, another workdir's workspace: %v", err)
	}
	// Discarded: gone for the bridge too.
	e.call(t, cs, "discard_workspace", map[string]any{"workspace": a})
	if _, err := bc.RunWorkspaceAction(t.Context(), "wd", id, "show", ""); errs.CodeOf(err) != errs.WorkdirNotFound {
		t.Errorf("bridge, discarded workspace: %v", err)
	}
	toolErr(t, e.call(t, cs, "run_repo_action", map[string]any{"workdir": a, "action": "show"}), "WORKDIR_NOT_FOUND")
}

// commitAll makes dir a repository on main whose one commit, "base",
// holds every file in it (the identity given on the command line, none
// configured).
func commitAll(t *testing.T, dir string) {
	t.Helper()
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "-c", "user.name=T", "-c", "user.email=t@example.invalid", "add", "-A")
	gitIn(t, dir, "-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-qm", "base")
}

// TestWorkspaceReview: inspect_repo on a workspace shows its change
// against its base before submit: status the files (git's letters),
// diff and changes the patch, which git apply takes in a clone at the
// base to give the workspace's files.
func TestWorkspaceReview(t *testing.T) {
	e := workspaceEnv(t)
	cs := e.client(t, e.serveHTTP(t))
	ws := createWS(t, e, cs)
	a := ws.Workspace
	if got := resultText(e.call(t, cs, "inspect_repo", map[string]any{"workdir": a, "view": "status"})); !strings.Contains(got, "nothing changed") {
		t.Fatalf("an untouched workspace: %s", got)
	}
	read := structured[readTextFileOut](t, e.call(t, cs, "read_text_file", map[string]any{"workdir": a, "path": "sub/a.txt"}))
	for _, args := range []map[string]any{
		{"workdir": a, "path": "sub/a.txt", "content": "changed in the workspace\n", "expected_revision": read.Revision},
		{"workdir": a, "path": "fresh.txt", "content": "a new file\n"},
	} {
		if res := e.call(t, cs, "write_text_file", args); res.IsError {
			t.Fatal(resultText(res))
		}
	}
	status := resultText(e.call(t, cs, "inspect_repo", map[string]any{"workdir": a, "view": "status"}))
	if !strings.Contains(status, "## workspace "+a+" against its base "+ws.Base[:7]) || !strings.Contains(status, "\nM sub/a.txt\n") ||
		!strings.Contains(status, "\nA fresh.txt\n") || strings.Contains(status, "@@") {
		t.Fatalf("status of the workspace:\n%s", status)
	}
	out := structured[inspectRepoOut](t, e.call(t, cs, "inspect_repo", map[string]any{"workdir": a, "view": "changes"}))
	if out.Review == nil || out.Review.Patch == "" {
		t.Fatalf("changes of the workspace: %+v", out)
	}
	clone := t.TempDir()
	gitIn(t, e.parent, "clone", "-q", e.root, clone)
	gitIn(t, clone, "checkout", "-q", ws.Base)
	patch := filepath.Join(t.TempDir(), "p.diff")
	writeFile(t, patch, []byte(out.Review.Patch))
	gitIn(t, clone, "apply", patch)
	for p, want := range map[string]string{"sub/a.txt": "changed in the workspace\n", "fresh.txt": "a new file\n"} {
		if got, err := os.ReadFile(filepath.Join(clone, p)); err != nil || string(got) != want {
			t.Errorf("%s after git apply: %q %v", p, got, err)
		}
	}
	// The live tree and its branch did not move.
	if head := gitIn(t, e.root, "rev-parse", "HEAD"); !strings.HasPrefix(head, ws.Base) {
		t.Errorf("review moved HEAD to %s", head)
	}
	toolErr(t, e.call(t, cs, "inspect_repo", map[string]any{"workdir": a, "view": "staged_diff"}), "INVALID_ARGUMENT")
}
