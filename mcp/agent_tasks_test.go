package mcp

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/search"
)

// TestAgentTasks runs ten everyday server tasks the way an agent does,
// through a real MCP client over HTTP, against one rw repository workdir
// and one ro logs workdir, reading only the text channel (all that the
// OpenAI Agents SDK passes to its model). Each answer is checked for what
// the task needs; the calls and the text bytes the model read are counted
// and bounded, so a change that makes an agent call more or read more
// fails here.
func TestAgentTasks(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	parent := t.TempDir()
	proj, logs := filepath.Join(parent, "proj"), filepath.Join(parent, "logs")
	w := func(root, rel, s string) { writeFile(t, filepath.Join(root, filepath.FromSlash(rel)), []byte(s)) }
	w(proj, "README.md", "# Relay\nRelay forwards teh requests it receives to one upstream.\n")
	w(proj, "go.mod", "module example.com/relay\n\ngo 1.24\n")
	w(proj, "cmd/relay/main.go", "package main\n\nimport \"example.com/relay/net\"\n\nfunc main() {\n\t// TODO: flags\n\tnet.Dial(\"upstream:80\")\n}\n")
	w(proj, "net/dialer.go", "package net\n\nimport \"net\"\n\n// Dial connects to addr, retrying once.\nfunc Dial(addr string) (net.Conn, error) {\n\tc, err := net.Dial(\"tcp\", addr)\n\tif err != nil {\n\t\t// TODO: backoff\n\t\treturn net.Dial(\"tcp\", addr)\n\t}\n\treturn c, nil\n}\n")
	w(proj, "net/dialer_test.go", "package net\n\nimport \"testing\"\n\n// TODO: a real listener\nfunc TestDial(t *testing.T) {}\n")
	w(proj, "docs/DIAL_NOTES.md", "Dialing notes.\nTODO: document retries\nTODO: document timeouts\n")
	w(proj, "config/relay.toml", "upstream = \"upstream:80\"\n")
	// A root commit of some size, as real ones are: a log must not list
	// its files unless asked.
	for i := range 45 {
		w(proj, fmt.Sprintf("internal/gen/table%02d.go", i), fmt.Sprintf("package gen\n\n// Table%02d is generated.\nvar Table%02d = []int{%d}\n", i, i, i))
	}
	gitIn(t, proj, "init", "-q", "-b", "main")
	gitIn(t, proj, "config", "user.name", "Dev One")
	gitIn(t, proj, "config", "user.email", "dev@example.invalid")
	gitIn(t, proj, "add", "-A")
	gitIn(t, proj, "commit", "-qm", "Initial relay")
	w(proj, "config/relay.toml", "upstream = \"upstream:8080\"\n")
	gitIn(t, proj, "commit", "-qam", "Upstream on port 8080")
	// Uncommitted: a change and an untracked file.
	w(proj, "net/dialer.go", strings.Replace(readFileT(t, filepath.Join(proj, "net/dialer.go")), "retrying once", "retrying once on error", 1))
	w(proj, "CHANGELOG.md", "## Unreleased\n- retries\n")

	var applog strings.Builder
	for i := 1; i <= 200; i++ {
		level := "INFO"
		if i%50 == 0 {
			level = "ERROR"
		}
		fmt.Fprintf(&applog, "2026-12-01T10:%02d:%02d %s request %d served\n", i/60, i%60, level, i)
	}
	w(logs, "app.log", applog.String())
	writeFile(t, filepath.Join(logs, "app.log.1.gz"), gzipped(t, "2026-11-30T23:59:00 INFO rotated\n2026-11-30T23:59:30 ERROR upstream refused\n2026-11-30T23:59:59 INFO bye\n"))

	cfg, err := sfs.LoadConfig(nil, []string{"proj=" + proj + ":rw:repo", "logs=" + logs})
	if err != nil {
		t.Fatal(err)
	}
	f, err := sfs.New(cfg, sfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	e := &testEnv{parent: parent, root: proj, log: &syncBuffer{}}
	e.deps = &Deps{FS: f, Search: search.New(f), Log: &Logger{Logger: slog.New(slog.NewJSONHandler(e.log, nil))}}
	cs := e.client(t, e.serveHTTP(t))

	var calls, bytes int
	type row struct {
		task  string
		calls int
		bytes int
	}
	var rows []row
	task := func(name string) { rows = append(rows, row{task: name}) }
	call := func(tool string, args map[string]any) string {
		t.Helper()
		res := e.call(t, cs, tool, args)
		text := resultText(res)
		calls++
		bytes += len(text)
		rows[len(rows)-1].calls++
		rows[len(rows)-1].bytes += len(text)
		if res.IsError {
			t.Fatalf("%s(%v): %s", tool, args, text)
		}
		return text
	}
	has := func(what, text string, wants ...string) {
		t.Helper()
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%s: the answer does not hold %q:\n%s", what, want, text)
			}
		}
	}
	hasNot := func(what, text string, bads ...string) {
		t.Helper()
		for _, bad := range bads {
			if strings.Contains(text, bad) {
				t.Errorf("%s: the answer holds %q:\n%s", what, bad, text)
			}
		}
	}

	task("which workdirs")
	has("workdirs", call("list_workdirs", map[string]any{}), "proj", "logs", "rw", "ro")

	task("what is in a root")
	has("root", call("list_directory", map[string]any{"workdir": "proj"}), "cmd/", "net/", "README.md")

	task("find files by name")
	has("find", call("find_files", map[string]any{"workdir": "proj", "pattern": "*dial*"}), "net/dialer.go", "net/dialer_test.go", "docs/DIAL_NOTES.md")

	task("where is a function defined, show it")
	// The definition read whole by its name, below a directory: no
	// search first, no window to guess.
	def := call("read_text_file", map[string]any{"workdir": "proj", "path": "net", "symbol": "Dial"})
	// Workdir-relative, so it can be pasted into the next call.
	has("definition", def, "net/dialer.go", "// Dial connects to addr", "func Dial(addr string) (net.Conn, error) {", "return c, nil\n}")

	task("tail a log and every ERROR with context, .gz included")
	has("tail", call("read_text_file", map[string]any{"workdir": "logs", "path": "app.log", "tail": 5}), "INFO request 199 served", "ERROR request 200 served")
	has("errors", call("search_text", map[string]any{"workdir": "logs", "query": "ERROR", "context": 1}),
		"ERROR request 50 served", "INFO request 49 served", "ERROR upstream refused", "app.log.1.gz")

	task("what changed recently and what is uncommitted")
	log := call("read_repo_history", map[string]any{"workdir": "proj", "view": "log", "limit": 5})
	has("log", log, "Upstream on port 8080", "Initial relay", "Dev One")
	hasNot("log", log, "cmd/relay/main.go") // no file lists unless asked
	changes := call("inspect_repo", map[string]any{"workdir": "proj", "view": "changes"})
	has("uncommitted", changes, "net/dialer.go", "+// Dial connects to addr, retrying once on error.", "CHANGELOG.md", "+- retries")

	task("fix a typo, check the diff, commit")
	hit := call("search_text", map[string]any{"workdir": "proj", "query": "teh "})
	rev := regexp.MustCompile(`(?m)^README\.md revision (\S+)$`).FindStringSubmatch(hit)
	if rev == nil {
		t.Fatalf("search_text in an rw workdir gives no revision for README.md:\n%s", hit)
	}
	edit := call("edit_text_file", map[string]any{"workdir": "proj", "path": "README.md", "expected_revision": rev[1],
		"edits": []map[string]any{{"old_text": "teh requests", "new_text": "the requests"}}})
	has("edit", edit, "-Relay forwards teh requests", "+Relay forwards the requests")
	has("commit", call("commit_repo_changes", map[string]any{"workdir": "proj", "paths": []string{"README.md"}, "message": "Fix a typo in the README"}), "[main ", "] Fix a typo in the README\n  M README.md\n")
	if got := gitIn(t, proj, "log", "-1", "--format=%s"); strings.TrimSpace(got) != "Fix a typo in the README" {
		t.Errorf("git log -1: %q", got)
	}
	fsckStrict(t, proj)

	task("TODO count per file")
	has("count", call("search_text", map[string]any{"workdir": "proj", "query": "TODO", "output": "count"}),
		"docs/DIAL_NOTES.md:2", "net/dialer.go:1", "cmd/relay/main.go:1", "net/dialer_test.go:1", "total: 5")

	task("a two-level tree")
	has("tree", call("list_directory", map[string]any{"workdir": "proj", "depth": 2}), "cmd/", "relay/", "net/", "dialer.go")

	task("three small files")
	has("files", call("read_text_files", map[string]any{"workdir": "proj", "paths": []string{"go.mod", "config/relay.toml", "CHANGELOG.md"}}),
		"module example.com/relay", "upstream = \"upstream:8080\"", "## Unreleased")

	var tbl strings.Builder
	tbl.WriteString("| task | calls | text bytes |\n|---|--:|--:|\n")
	for _, r := range rows {
		fmt.Fprintf(&tbl, "| %s | %d | %d |\n", r.task, r.calls, r.bytes)
	}
	fmt.Fprintf(&tbl, "| **all ten** | **%d** | **%d** |\n", calls, bytes)
	t.Logf("the ten tasks:\n%s", tbl.String())
	const maxCalls, maxBytes = 14, 25000
	if calls > maxCalls || bytes > maxBytes {
		t.Errorf("the ten tasks took %d calls and %d bytes of text, want at most %d and %d", calls, bytes, maxCalls, maxBytes)
	}
}

func readFileT(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
