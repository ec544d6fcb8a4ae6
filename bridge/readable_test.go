package bridge

import (
	"os"
	"path/filepath"
	"testing"
)

// TestActionReadPath: a file under a default read path (/etc), a policy
// read path (also through a symlink), a workdir root or the workspaces
// dir is readable by actions; one in the bridge user's HOME or state
// directory is not, even with a read path above them (it is left out,
// as when an action runs).
func TestActionReadPath(t *testing.T) {
	base := t.TempDir()
	root, tools, ws, home, state, safe := filepath.Join(base, "wd"), filepath.Join(base, "tools"), filepath.Join(base, "ws"), filepath.Join(base, "home"), filepath.Join(base, "state"), filepath.Join(base, "safe")
	for _, d := range []string{root, tools, ws, home, state, safe} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	link := filepath.Join(safe, "token")
	if err := os.Symlink(filepath.Join(tools, "token"), link); err != nil {
		t.Fatal(err)
	}
	rtWrite(t, filepath.Join(tools, "token"), "x")
	p := &Policy{WorkspacesDir: ws, Sandbox: &SandboxPolicy{ReadPaths: []string{tools, base}},
		Workdirs: map[string]WorkdirPolicy{"wd": {Root: root, ReadWrite: true, RepoOps: true}}}
	for _, c := range []struct {
		file, granted, what string
	}{
		{"/etc/serverfs/bridge-token", "/etc", "a default sandbox read path"},
		{filepath.Join(tools, "sub", "policy.json"), tools, "a sandbox.read_paths entry of the policy"},
		{link, tools, "a sandbox.read_paths entry of the policy"},
		{filepath.Join(root, ".token"), root, `the root of workdir "wd"`},
		{filepath.Join(ws, "token"), ws, "the policy's workspaces_dir"},
		// base contains HOME and the state directory: it is left out.
		{filepath.Join(home, ".config", "serverfs", "bridge-token"), "", ""},
		{filepath.Join(state, "bridge-token"), "", ""},
		{filepath.Join(safe, "other"), "", ""},
	} {
		granted, what := ActionReadPath(p, []string{state}, c.file)
		if granted != c.granted || what != c.what {
			t.Errorf("%s: %q (%s), want %q (%s)", c.file, granted, what, c.granted, c.what)
		}
	}
}
