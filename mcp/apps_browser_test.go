package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// appsHint says how to get what TestAppsViews needs.
const appsHint = "run .ci/run, which installs chromium, node and npm from apt when missing, then npm ci in .ci/npm"

// appsTools is what TestAppsViews runs: node, Debian's chromium and
// playwright-core from .ci/npm. It fails, never skips, when one is missing.
type appsTools struct{ root, node, chromium, playwright string }

func needAppsTools(t *testing.T) appsTools {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	at := appsTools{root: filepath.Dir(wd)} // go test runs in mcp/
	if at.node, err = exec.LookPath("node"); err != nil {
		t.Fatalf("node is not in PATH: %s", appsHint)
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatalf("npm is not in PATH: %s", appsHint)
	}
	if at.chromium, err = exec.LookPath("chromium"); err != nil {
		t.Fatalf("chromium is not in PATH: %s", appsHint)
	}
	at.playwright = filepath.Join(at.root, ".ci", "npm", "node_modules", "playwright-core")
	if _, err := os.Stat(filepath.Join(at.playwright, "package.json")); err != nil {
		t.Fatalf("playwright-core is not installed in .ci/npm: %s", appsHint)
	}
	return at
}

// viewBudget is the most bytes a view's HTML may have.
const viewBudget = 150 << 10

// buildViews copies ui/ (without node_modules) into a temporary
// directory, installs its pinned packages with npm ci and builds the views
// and the test host page there; it returns the output directory.
func buildViews(t *testing.T, root string) string {
	t.Helper()
	src, dir, out := filepath.Join(root, "ui"), t.TempDir(), t.TempDir()
	for _, p := range []string{"package.json", "package-lock.json", "tsconfig.json", "build.mjs", "src", "test"} {
		if err := os.CopyFS(filepath.Join(dir, p), os.DirFS(filepath.Join(src, p))); err != nil {
			// CopyFS copies directories; the files are read and written.
			b, rerr := os.ReadFile(filepath.Join(src, p))
			if rerr != nil {
				t.Fatal(err, rerr)
			}
			writeFile(t, filepath.Join(dir, p), b)
		}
	}
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, b)
		}
	}
	run("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	run("node", "build.mjs", out, "--host")
	return out
}

// TestAppsViews rebuilds the views from ui/ and requires the committed
// mcp/ui/*.html to be that build, each within the size budget and
// fetching nothing; then shows each in headless Chromium (appsBrowser).
func TestAppsViews(t *testing.T) {
	nt := needAppsTools(t)
	built := buildViews(t, nt.root)
	for _, v := range appViews {
		got, err := os.ReadFile(filepath.Join(built, v.name+".html"))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := appsFS.ReadFile("ui/" + v.name + ".html")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, committed) {
			t.Errorf("mcp/ui/%s.html is not the build of ui/: run (cd ui && npm ci && npm run build) and commit", v.name)
		}
		if len(committed) > viewBudget {
			t.Errorf("mcp/ui/%s.html: %d bytes, over %d", v.name, len(committed), viewBudget)
		}
		for _, ref := range []string{"<script src", "<link ", "@import", "url(http", "src=\"http", "href=\"http"} {
			if bytes.Contains(committed, []byte(ref)) {
				t.Errorf("mcp/ui/%s.html refers to something outside it: %q", v.name, ref)
			}
		}
		t.Logf("%s.html: %d bytes", v.name, len(committed))
	}
	if t.Failed() {
		return
	}
	appsBrowser(t, nt, built)
}

// appsBrowser serves the host page and /rpc, which forwards the page's MCP
// requests to a real ServerFS over HTTP on a session that declared the
// extension, and runs ui/test/harness.mjs against it.
func appsBrowser(t *testing.T, nt appsTools, built string) {
	var cs *sdk.ClientSession
	_, _, cs, _, submits := appsFixture(t, func(e *testEnv, url string) *sdk.ClientSession { return appsClient(t, url) })
	host, err := os.ReadFile(filepath.Join(built, "host.html"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var served []string // the tools/call requests /rpc forwarded
	mux := http.NewServeMux()
	mux.HandleFunc("GET /host.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(host)
	})
	mux.HandleFunc("POST /rpc", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		var res any
		err := json.NewDecoder(r.Body).Decode(&in)
		if err == nil {
			switch in.Method {
			case "tools/list":
				res, err = cs.ListTools(r.Context(), nil)
			case "resources/read":
				var p sdk.ReadResourceParams
				if err = json.Unmarshal(in.Params, &p); err == nil {
					res, err = cs.ReadResource(r.Context(), &p)
				}
			case "tools/call":
				var p sdk.CallToolParams
				if err = json.Unmarshal(in.Params, &p); err == nil {
					mu.Lock()
					served = append(served, p.Name+" "+string(in.Params))
					mu.Unlock()
					res, err = cs.CallTool(r.Context(), &p)
				}
			default:
				res, err = nil, os.ErrInvalid
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"result": res})
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)

	art := os.Getenv("ARTIFACTS")
	if art == "" {
		art = t.TempDir()
	} else if art, err = filepath.Abs(filepath.Join(art, "apps")); err != nil || os.MkdirAll(art, 0o755) != nil {
		t.Fatal("ARTIFACTS:", err)
	}
	cb, err := json.Marshal(submits)
	if err != nil {
		t.Fatal(err)
	}
	cf := filepath.Join(t.TempDir(), "submits.json")
	writeFile(t, cf, cb)
	sb, err := json.Marshal(spanCases(t))
	if err != nil {
		t.Fatal(err)
	}
	sf := filepath.Join(t.TempDir(), "spans.json")
	writeFile(t, sf, sb)
	cmd := exec.CommandContext(t.Context(), nt.node, filepath.Join(nt.root, "ui", "test", "harness.mjs"))
	cmd.Env = append(os.Environ(), "BASE="+ts.URL, "PLAYWRIGHT="+nt.playwright, "CHROMIUM="+nt.chromium, "ARTIFACTS="+art, "SUBMITS="+cf, "SPANS="+sf)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var rep struct {
		Requests []string `json:"requests"`
		Shots    []string `json:"shots"`
		Failures []string `json:"failures"`
		Timings  []string `json:"timings"`
	}
	if jerr := json.Unmarshal(out, &rep); jerr != nil {
		t.Fatalf("harness: %v %v\n%s\n%s", err, jerr, out, stderr.String())
	}
	for _, f := range rep.Failures {
		t.Error(f)
	}
	if err != nil && len(rep.Failures) == 0 {
		t.Errorf("harness: %v\n%s", err, stderr.String())
	}
	t.Logf("screenshots: %s", strings.Join(rep.Shots, " "))
	for _, tm := range rep.Timings {
		t.Log(tm)
	}
	// The view's own calls reached the server: the next window of the file,
	// the lines around two search hits and a commit's show, besides the
	// host's calls for each tool.
	mu.Lock()
	defer mu.Unlock()
	joined := strings.Join(served, "\n")
	for _, want := range []string{`read_text_file {"name":"read_text_file","arguments":{"workdir":"wd","path":"src/lib.go","start_line":25}}`,
		`read_text_file {"name":"read_text_file","arguments":{"workdir":"wd","path":"src/lib.go","start_line":1,"max_lines":21}}`,
		`read_text_file {"name":"read_text_file","arguments":{"workdir":"wd","path":"src/lib.go","start_line":22,"max_lines":21}}`, `"view":"show","rev":"`} {
		if !strings.Contains(joined, want) {
			t.Errorf("the server was not asked %s; it was asked:\n%s", want, joined)
		}
	}
	if os.Getenv("UPDATE_APPS_SHOTS") == "true" {
		for _, name := range []string{"changes-split", "conflict", "history", "file-search"} {
			b, err := os.ReadFile(filepath.Join(art, name+".png"))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(nt.root, "docs", "img", "apps-"+name+".png"), b)
		}
	}
}

// spanCase is a search_text call on re/ and the marks the file view must
// draw for it: by matching line, the [start, end) UTF-16 offsets of the
// matches Go's regexp finds in the line (touching ones as one, as the
// view draws them).
type spanCase struct {
	Name  string              `json:"name"`
	Args  map[string]any      `json:"args"`
	Lines map[string][][2]int `json:"lines"`
}

// spanCases: ^(\w+\s?)+$|x, which a backtracking engine takes
// exponential time over on reWords' first line, and a literal that ignores
// case on its non-ASCII line.
func spanCases(t *testing.T) []spanCase {
	var cases []spanCase
	for _, c := range []struct {
		name, query, expr string
		regex             bool
	}{
		{"catastrophic regex", `^(\w+\s?)+$|x`, `^(\w+\s?)+$|x`, true},
		{"literal ignoring case", "CAFÉ ☕", "(?i)" + regexp.QuoteMeta("CAFÉ ☕"), false},
	} {
		re := regexp.MustCompile(c.expr)
		sc := spanCase{Name: c.name, Args: map[string]any{"workdir": "wd", "path": "re", "query": c.query}, Lines: map[string][][2]int{}}
		if c.regex {
			sc.Args["regex"] = true
		} else {
			sc.Args["case_sensitive"] = false
		}
		for i, line := range strings.Split(strings.TrimSuffix(reWords, "\n"), "\n") {
			ms := re.FindAllStringIndex(line, -1)
			if len(ms) == 0 {
				continue
			}
			var spans [][2]int
			for _, m := range ms {
				a, b := len(utf16.Encode([]rune(line[:m[0]]))), len(utf16.Encode([]rune(line[:m[1]])))
				switch {
				case a == b:
				case len(spans) > 0 && spans[len(spans)-1][1] == a:
					spans[len(spans)-1][1] = b
				default:
					spans = append(spans, [2]int{a, b})
				}
			}
			sc.Lines[strconv.Itoa(i+1)] = spans
		}
		if len(sc.Lines) == 0 {
			t.Fatalf("%s matches no line of re/words.txt", c.name)
		}
		cases = append(cases, sc)
	}
	return cases
}
