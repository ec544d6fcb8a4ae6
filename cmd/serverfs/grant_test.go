package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/serverfs/serverfs/bridge"
)

// helperProcess runs `serverfs ARGS...` (this test binary, re-executed
// by the test named run) with env, and returns it once its stderr shows
// ready. The test's cleanup kills it by its PID.
type helperProcess struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	logs bytes.Buffer
	done chan struct{}
}

func startHelper(t *testing.T, run string, args, env []string, ready string) *helperProcess {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(args)
	cmd := exec.Command(self, "-test.run=^"+run+"$", "-test.count=1")
	cmd.Env = append([]string{"SFS_TEST_HELPER_ARGS=" + string(b)}, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helperProcess{cmd: cmd, done: make(chan struct{})}
	up := make(chan struct{})
	go func() {
		defer close(h.done)
		sc := bufio.NewScanner(stderr)
		seen := false
		for sc.Scan() {
			h.mu.Lock()
			h.logs.WriteString(sc.Text() + "\n")
			h.mu.Unlock()
			if !seen && strings.Contains(sc.Text(), ready) {
				seen = true
				close(up)
			}
		}
		cmd.Wait()
	}()
	t.Cleanup(func() { h.stop() })
	select {
	case <-up:
	case <-h.done:
		t.Fatalf("%v exited before %q:\n%s", args[:1], ready, h.log())
	case <-time.After(60 * time.Second):
		t.Fatalf("%v did not log %q within 60 s:\n%s", args[:1], ready, h.log())
	}
	return h
}

func (h *helperProcess) log() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logs.String()
}

// stop sends SIGTERM to the process (by its PID) and waits for it.
func (h *helperProcess) stop() {
	select {
	case <-h.done:
		return
	default:
	}
	h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.done:
	case <-time.After(20 * time.Second):
		h.cmd.Process.Kill()
		<-h.done
	}
}

// TestGrantEndToEnd: the operator makes a key and signs one argv with
// the CLI; a real bridge process with the key pinned and a real serve
// process are started; a real MCP client over HTTP (on a unix socket)
// sees run_granted_command and passes the token: the command runs once,
// in the sandbox, with its hostile-looking arguments exactly as signed;
// the second use is refused, and still after the bridge process is
// restarted (the use count is persisted); a revoked grant is refused;
// grant log shows every outcome with its code.
func TestGrantEndToEnd(t *testing.T) {
	if a := os.Getenv("SFS_TEST_HELPER_ARGS"); a != "" {
		var args []string
		json.Unmarshal([]byte(a), &args)
		os.Exit(run(args, os.Environ(), os.Stdout, os.Stderr))
	}
	if abi := bridge.LandlockABI(); abi < 6 {
		t.Skipf("this kernel's Landlock ABI is %d (< 6): the sandbox this test expects cannot exist here; bridge's TestSandboxRequired proves a grant's command then reports its lower level, or runs nothing under sandbox.required", abi)
	}
	base := t.TempDir()
	root, state, home := filepath.Join(base, "wd"), filepath.Join(base, "state"), filepath.Join(base, "home")
	for _, d := range []string{root, state, home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// A work tree: in a root without .git a mutating command could
	// create no top-level file.
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	// The canary exists: where the kernel refuses user namespaces the
	// bridge's Landlock rules keep new top-level entries out, and .git is
	// kept read-only by them instead of a read-only bind.
	if err := os.WriteFile(filepath.Join(root, "ran"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	gitControl := bridge.ControlGitMount
	probe := exec.Command("/bin/true")
	probe.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
	if err := probe.Run(); err != nil {
		t.Logf("this kernel refuses user namespaces (%v): want %s", err, bridge.ControlGitLandlock)
		gitControl = bridge.ControlGitLandlock
	}
	sockDir, err := os.MkdirTemp("", "sfs-grant-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	bridgeSock, mcpSock := filepath.Join(sockDir, "b.sock"), filepath.Join(sockDir, "m.sock")

	// The operator's key.
	key := filepath.Join(base, "grant.key")
	code, out, stderr := cliRun(t, []string{"grant", "keygen", "--out", key}, nil)
	if code != 0 {
		t.Fatalf("keygen: %d %s", code, stderr)
	}
	st, err := os.Stat(key)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	pubB, _ := os.ReadFile(key + ".pub")
	pubText := strings.TrimSpace(string(pubB))
	pub, err := bridge.ParsePublicKey(pubText)
	if err != nil || !strings.Contains(out, "key id: "+bridge.KeyID(pub)+"\n") {
		t.Fatalf("keygen printed %q (%v)", out, err)
	}
	if code, _, _ := cliRun(t, []string{"grant", "keygen", "--out", key}, nil); code == 0 {
		t.Error("keygen overwrote an existing key")
	}

	policyFile := filepath.Join(base, "policy.json")
	if err := bridge.WritePolicy(policyFile, &bridge.Policy{
		Workdirs: map[string]bridge.WorkdirPolicy{"wd": {Root: root, ReadWrite: true, RepoOps: true}},
		Grants:   &bridge.GrantPolicy{HostID: "e2e-host", PublicKeys: []string{pubText}, AllowMutates: true},
	}); err != nil {
		t.Fatal(err)
	}
	tokFile := filepath.Join(base, "bridge.token")
	os.WriteFile(tokFile, []byte(cmdTestToken+"\n"), 0o600)
	bridgeEnv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	// The tests run as root; --allow-root lets the bridge start.
	bridgeArgs := []string{"bridge", "--policy", policyFile, "--socket", bridgeSock, "--token-file", tokFile, "--state-dir", state, "--allow-root"}
	b := startHelper(t, "TestGrantEndToEnd", bridgeArgs, bridgeEnv, `"msg":"bridge serving"`)
	if !strings.Contains(b.log(), `"grant_keys":1`) {
		t.Errorf("bridge start-up line: %s", b.log())
	}
	serverEnv := []string{"SERVERFS_LISTEN=unix:" + mcpSock, "SERVERFS_BRIDGE_SOCKET=" + bridgeSock, "SERVERFS_BRIDGE_TOKEN_FILE=" + tokFile}
	startHelper(t, "TestGrantEndToEnd", []string{"serve", "--workdir", "wd=" + root + ":rw:repo"}, serverEnv, "serving streamable HTTP")

	// check-config asks the same bridge and says what serve serves.
	code, out, stderr = cliRun(t, []string{"check-config", "--workdir", "wd=" + root + ":rw:repo"}, serverEnv)
	if code != 0 || !strings.Contains(out, "host bridge configured (grants on)") || !strings.Contains(out, "push_repo, run_granted_command\n") {
		t.Errorf("check-config: %d %s %s", code, out, stderr)
	}

	sign := func(argv ...string) (string, string) {
		t.Helper()
		code, tok, stderr := cliRun(t, append([]string{"grant", "sign", "--key", key, "--workdir", "wd", "--host", "e2e-host", "--ttl", "5m", "--mutates", "--"}, argv...), nil)
		if code != 0 {
			t.Fatalf("sign: %d %s", code, stderr)
		}
		var g bridge.Grant
		if err := json.Unmarshal([]byte(tok), &g); err != nil {
			t.Fatalf("the token is not JSON: %q", tok)
		}
		for i, a := range argv {
			if !strings.Contains(stderr, "  ["+strconv.Itoa(i)+"] "+strconv.Quote(a)+"\n") {
				t.Errorf("sign did not show argv[%d] %q:\n%s", i, a, stderr)
			}
		}
		return strings.TrimSpace(tok), g.GrantID
	}
	argv := []string{"sh", "-c", `echo granted >> ran && printf '%s|' "$@"`, "sh", "-x", "KEY=value", "@file"}
	tok, _ := sign(argv...)

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "grant-e2e", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://localhost/mcp", HTTPClient: &http.Client{Transport: unixTransport(mcpSock)}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "run_granted_command") {
		t.Fatalf("tools/list: %v", names)
	}
	call := func(token string) *sdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_granted_command", Arguments: map[string]any{"workdir": "wd", "grant": token}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	text := func(r *sdk.CallToolResult) string { return r.Content[0].(*sdk.TextContent).Text }
	runs := func() int {
		b, _ := os.ReadFile(filepath.Join(root, "ran"))
		return strings.Count(string(b), "granted\n")
	}

	res := call(tok)
	var got struct {
		Argv     []string `json:"argv"`
		ExitCode int      `json:"exit_code"`
		Stdout   string   `json:"stdout"`
		Uses     int      `json:"uses"`
		Sandbox  string   `json:"sandbox"`
		Controls []string `json:"sandbox_controls"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &got)
	if res.IsError || got.ExitCode != 0 || got.Stdout != "-x|KEY=value|@file|" || got.Uses != 1 || got.Sandbox != "enforced" || !slices.Contains(got.Controls, gitControl) || !slices.Equal(got.Argv, argv) || runs() != 1 {
		t.Fatalf("first use: %s (%+v), runs %d", text(res), got, runs())
	}
	if res := call(tok); !res.IsError || !strings.HasPrefix(text(res), "GRANT_REPLAY: ") {
		t.Fatalf("second use: %s", text(res))
	}

	// The bridge process restarts: the use it counted is still counted.
	b.stop()
	startHelper(t, "TestGrantEndToEnd", bridgeArgs, bridgeEnv, `"msg":"bridge serving"`)
	if res := call(tok); !res.IsError || !strings.HasPrefix(text(res), "GRANT_REPLAY: ") {
		t.Fatalf("use after the bridge restarted: %s", text(res))
	}

	tok2, id2 := sign("sh", "-c", "echo granted >> ran")
	if code, _, stderr := cliRun(t, []string{"grant", "revoke", "--policy", policyFile, id2}, nil); code == 0 {
		t.Fatalf("revoke beside the policy found no state (the bridge's is --state-dir): %s", stderr)
	}
	if code, out, stderr := cliRun(t, []string{"grant", "revoke", "--state-dir", state, id2}, nil); code != 0 || !strings.Contains(out, "revoked") {
		t.Fatalf("revoke: %d %s %s", code, out, stderr)
	}
	if res := call(tok2); !res.IsError || !strings.HasPrefix(text(res), "GRANT_REVOKED: ") {
		t.Fatalf("revoked grant: %s", text(res))
	}
	if runs() != 1 {
		t.Fatalf("the command ran %d times", runs())
	}

	code, out, _ = cliRun(t, []string{"grant", "log", "--state-dir", state}, nil)
	var outcomes []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e bridge.LedgerEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("ledger line %q: %v", line, err)
		}
		outcomes = append(outcomes, e.Outcome+":"+e.Code+":"+e.Sandbox)
	}
	if want := []string{"ran::enforced", "refused:GRANT_REPLAY:", "refused:GRANT_REPLAY:", "revoked::", "refused:GRANT_REVOKED:"}; code != 0 || !slices.Equal(outcomes, want) {
		t.Errorf("grant log: %v, want %v", outcomes, want)
	}
	for _, leak := range []string{root, state, home} {
		if strings.Contains(out, leak) {
			t.Errorf("the ledger holds a host path")
		}
	}
}

// TestWorkdirProgramWarning: grant sign warns when the signed argv does
// not pin what runs (a program or script in the workdir, a tool driven
// by workdir files), and stays quiet for inline code and system tools.
func TestWorkdirProgramWarning(t *testing.T) {
	for _, c := range []struct {
		argv []string
		warn bool
	}{
		{[]string{"./deploy.sh"}, true},
		{[]string{"scripts/migrate", "--yes"}, true},
		{[]string{"make", "test"}, true},
		{[]string{"/usr/bin/make"}, true},
		{[]string{"git", "status"}, true},
		{[]string{"python3.12", "-u", "tools/gen.py"}, true},
		{[]string{"bash", "run.sh"}, true},
		{[]string{"sh", "-c", "echo hi > out"}, false},
		{[]string{"python3", "-c", "print(1)"}, false},
		{[]string{"/usr/bin/sha256sum", "file"}, false},
		{[]string{"true"}, false},
	} {
		if got := workdirProgramWarning(c.argv) != ""; got != c.warn {
			t.Errorf("%q: warning %v, want %v", c.argv, got, c.warn)
		}
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "k")
	if code, _, stderr := cliRun(t, []string{"grant", "keygen", "--out", key}, nil); code != 0 {
		t.Fatalf("keygen: %d %s", code, stderr)
	}
	code, tok, stderr := cliRun(t, []string{"grant", "sign", "--key", key, "--workdir", "wd", "--", "./deploy.sh"}, nil)
	if code != 0 || tok == "" || !strings.Contains(stderr, "warning: \"./deploy.sh\" is a file inside the workdir") {
		t.Fatalf("sign ./deploy.sh: %d, stderr %s", code, stderr)
	}
	if strings.Contains(tok, "warning") {
		t.Fatalf("the warning reached stdout (the token): %s", tok)
	}
}
