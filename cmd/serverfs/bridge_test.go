package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/serverfs/serverfs/bridge"
)

// bridgeFiles writes a valid policy (workdir wd, a sandbox read path
// tools) and a token file in a directory no read path grants, and
// returns the base directory and both files.
func bridgeFiles(t *testing.T) (base, policyFile, tokenFile string) {
	t.Helper()
	base = t.TempDir()
	for _, d := range []string{"wd", "tools", "safe"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	policyFile, tokenFile = filepath.Join(base, "safe", "policy.json"), filepath.Join(base, "safe", "token")
	if err := bridge.WritePolicy(policyFile, &bridge.Policy{
		Workdirs: map[string]bridge.WorkdirPolicy{"wd": {Root: filepath.Join(base, "wd"), ReadWrite: true, RepoOps: true}},
		Sandbox:  &bridge.SandboxPolicy{ReadPaths: []string{filepath.Join(base, "tools")}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokenFile, []byte(cmdTestToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return base, policyFile, tokenFile
}

// TestBridgeRefusesRoot: as uid 0 the bridge does not start without
// --allow-root and says why; as another uid it goes on (here to a
// missing policy file).
func TestBridgeRefusesRoot(t *testing.T) {
	base, _, tokenFile := bridgeFiles(t)
	args := []string{"bridge", "--policy", filepath.Join(base, "none.json"), "--socket", filepath.Join(base, "b.sock"), "--token-file", tokenFile}
	defer func(f func() int) { bridgeEUID = f }(bridgeEUID)
	bridgeEUID = func() int { return 0 }
	code, _, stderr := cliRun(t, args, nil)
	for _, want := range []string{"running as root (uid 0): every named action, granted command and push would run as root; run the bridge as a dedicated user", "--allow-root", "drops every capability"} {
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("as root: exit %d, stderr lacks %q:\n%s", code, want, stderr)
		}
	}
	for _, uid := range []int{0, 1000} {
		bridgeEUID = func() int { return uid }
		a := args
		if uid == 0 {
			a = append(a, "--allow-root")
		}
		if code, _, stderr := cliRun(t, a, nil); code != 1 || strings.Contains(stderr, "running as root") || !strings.Contains(stderr, "the policy file cannot be used") {
			t.Errorf("uid %d %v: exit %d %s", uid, a[len(a)-1], code, stderr)
		}
	}
}

// TestBridgeRefusesReadableSecrets: the bridge does not start when its
// token or policy file lies where actions may read it: under a sandbox
// read path (also reached through a symlink) or a workdir root. The
// message names the file, the read path and where to keep it instead.
func TestBridgeRefusesReadableSecrets(t *testing.T) {
	base, policyFile, tokenFile := bridgeFiles(t)
	tools, wd := filepath.Join(base, "tools"), filepath.Join(base, "wd")
	move := func(from, to string) string {
		t.Helper()
		if err := os.Rename(from, to); err != nil {
			t.Fatal(err)
		}
		return to
	}
	// The socket's directory does not exist: a bridge that passed the
	// check would fail to listen rather than serve.
	start := func(policyFile, tokenFile string) (int, string) {
		t.Helper()
		code, _, stderr := cliRun(t, []string{"bridge", "--policy", policyFile, "--socket", filepath.Join(base, "none", "b.sock"), "--token-file", tokenFile, "--state-dir", filepath.Join(base, "safe"), "--allow-root"}, nil)
		return code, stderr
	}
	if msg := secretFileProblem(mustLoadPolicy(t, policyFile), []string{filepath.Join(base, "safe")}, policyFile, tokenFile); msg != "" {
		t.Fatalf("the files in a directory no read path grants: %s", msg)
	}

	tok := move(tokenFile, filepath.Join(tools, "token"))
	code, stderr := start(policyFile, tok)
	if want := "the token file (--token-file " + tok + ") lies under " + tools + ", a sandbox.read_paths entry of the policy, which the action sandbox lets actions read"; code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "~/.config/serverfs/") {
		t.Errorf("token under a read path: exit %d\n%s\nwant %q", code, stderr, want)
	}
	link := filepath.Join(base, "safe", "token-link")
	if err := os.Symlink(tok, link); err != nil {
		t.Fatal(err)
	}
	if code, stderr := start(policyFile, link); code != 1 || !strings.Contains(stderr, "the token file (--token-file "+link+") lies under "+tools+",") {
		t.Errorf("token through a symlink: exit %d %s", code, stderr)
	}
	move(tok, tokenFile)

	pol := move(policyFile, filepath.Join(wd, "policy.json"))
	if code, stderr := start(pol, tokenFile); code != 1 || !strings.Contains(stderr, "the policy file (--policy "+pol+") lies under "+wd+`, the root of workdir "wd",`) {
		t.Errorf("policy in a workdir: exit %d %s", code, stderr)
	}
}

func mustLoadPolicy(t *testing.T, file string) *bridge.Policy {
	t.Helper()
	p, err := bridge.LoadPolicy(file)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBuildFileWarnings: render-policy and check-config print the same
// warning line for an action that gives make the caller's directory
// while only the root Makefile is pinned, and none for one that does not.
func TestBuildFileWarnings(t *testing.T) {
	slots := t.TempDir()
	if err := os.Mkdir(filepath.Join(slots, "01"), 0o755); err != nil {
		t.Fatal(err)
	}
	pin := strings.Repeat("a", 64)
	env := []string{
		"SERVERFS_WORKDIRS_ROOT=" + slots,
		"WORKDIR_01_ALIAS=proj", "WORKDIR_01_PATH=" + filepath.Join(slots, "01"), "WORKDIR_01_READ_ONLY=false", "WORKDIR_01_REPO_OPS_ENABLED=true",
		`WORKDIR_01_REPO_ACTIONS_JSON={"build":{"argv":["make","-C"],"argument":"path","argument_allow":{"directories":true},"integrity":{"Makefile":"` + pin + `"}},` +
			`"lint":{"argv":["make","lint"],"argument":"none","integrity":{"Makefile":"` + pin + `"}}}`,
	}
	want := `warning: slot 01: action "build": make -C <dir> (the caller's path, which may be a directory): <dir>/Makefile is agent-writable and unpinned`
	code, out, stderr := cliRun(t, []string{"bridge", "render-policy", "--out", filepath.Join(t.TempDir(), "policy.json")}, env)
	if code != 0 || !strings.Contains(out, "policy written: 1 workdirs, 2 actions\n") || !strings.Contains(out, "\n"+want) || strings.Count(out, "warning:") != 1 {
		t.Errorf("render-policy: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = cliRun(t, []string{"check-config"}, env)
	if code != 0 || !strings.Contains(out, "\n"+want) || strings.Count(out, "warning:") != 1 || strings.Contains(out, slots) {
		t.Errorf("check-config: exit %d\n%s%s", code, out, stderr)
	}
}

// TestPathWarnings: render-policy and check-config name, by position and
// never by host path, the PATH entries a bridge started with that PATH
// drops: here one under slot 01's workdir and an empty one.
func TestPathWarnings(t *testing.T) {
	slots := t.TempDir()
	if err := os.MkdirAll(filepath.Join(slots, "01", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"SERVERFS_WORKDIRS_ROOT=" + slots, "TMPDIR=" + t.TempDir(),
		"WORKDIR_01_ALIAS=proj", "WORKDIR_01_PATH=" + filepath.Join(slots, "01"),
		"PATH=" + filepath.Join(slots, "01", "bin") + "::/usr/bin:/bin",
	}
	want := []string{
		"warning: PATH entry 1: it lies under the workdir of slot 01, so the bridge drops it (",
		"warning: PATH entry 2: an empty entry, which means the current directory, so the bridge drops it (",
	}
	for _, args := range [][]string{{"bridge", "render-policy", "--out", filepath.Join(t.TempDir(), "policy.json")}, {"check-config"}} {
		code, out, stderr := cliRun(t, args, env)
		for _, w := range want {
			if code != 0 || !strings.Contains(out, "\n"+w) || strings.Count(out, "warning:") != 2 || strings.Contains(out, slots) {
				t.Errorf("%s: exit %d, want %q\n%s%s", args[0], code, w, out, stderr)
			}
		}
	}
}
