package mcp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestArchivesInPlace: a tar.gz and a zip made by the system tools are
// read as directories through the tools an agent uses (list_directory,
// stat_file, read_text_file with windows and tail), hidden and denied
// members unnamed and unreadable as on disk, a link member named and
// never followed, over real HTTP.
func TestArchivesInPlace(t *testing.T) {
	for _, tool := range []string{"tar", "zip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s makes this test's archives: apt-get install tar zip", tool)
		}
	}
	e := newEnv(t)
	src := filepath.Join(e.parent, "src")
	var log strings.Builder
	for i := 1; i <= 300; i++ {
		level := "INFO"
		if i == 123 {
			level = "ERROR"
		}
		fmt.Fprintf(&log, "2025-11-03T10:%02d:%02d %s request %d\n", i/60, i%60, level, i)
	}
	for name, body := range map[string]string{"app/app.log": log.String(), "app/.env": "SECRET=1\n", "app/.history": "ls\n", "certs/key.pem": "KEY\n", "docs/runbook.md": "# Failover\nPromote the replica.\n"} {
		writeFile(t, filepath.Join(src, filepath.FromSlash(name)), []byte(body))
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(src, "app", "passwd")); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{{"tar", "-czf", filepath.Join(e.root, "logs.tar.gz"), "."}, {"zip", "-q", "-r", "-y", filepath.Join(e.root, "release.zip"), "."}} {
		cmd := exec.Command(c[0], c[1:]...)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v %s", c, err, out)
		}
	}
	// A directory named like an archive, holding one.
	if err := os.MkdirAll(filepath.Join(e.root, "dir.zip"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(e.root, "logs.tar.gz"), filepath.Join(e.root, "dir.zip", "logs.tar.gz")); err != nil {
		t.Fatal(err)
	}
	// A FIFO named like an archive is never opened for reading: it
	// would block.
	if err := syscall.Mkfifo(filepath.Join(e.root, "pipe.tar"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := e.client(t, e.serveHTTP(t))
	text := func(tool string, args map[string]any) (string, bool) {
		t.Helper()
		args["workdir"] = "wd"
		res := e.call(t, cs, tool, args)
		return resultText(res), res.IsError
	}
	for _, p := range []string{"pipe.tar", "pipe.tar/a.log"} {
		tool := map[bool]string{true: "list_directory", false: "read_text_file"}[p == "pipe.tar"]
		if got, isErr := text(tool, map[string]any{"path": p}); !isErr {
			t.Errorf("%s %s, a FIFO: %s", tool, p, got)
		}
	}
	for _, arc := range []string{"logs.tar.gz", "release.zip", "dir.zip/logs.tar.gz"} {
		root, isErr := text("list_directory", map[string]any{"path": arc})
		if isErr || !strings.Contains(root, "app/") || !strings.Contains(root, "docs/") || strings.Contains(root, "certs") && strings.Contains(root, "key.pem") {
			t.Errorf("%s: list_directory of the archive:\n%s", arc, root)
		}
		app, isErr := text("list_directory", map[string]any{"path": arc + "/app"})
		if isErr || !strings.Contains(app, "app.log") || strings.Contains(app, ".env") || strings.Contains(app, ".history") || !strings.Contains(app, "passwd") {
			t.Errorf("%s: list_directory app:\n%s", arc, app)
		}
		if certs, _ := text("list_directory", map[string]any{"path": arc + "/certs"}); strings.Contains(certs, "key.pem") {
			t.Errorf("%s: a denied member is listed:\n%s", arc, certs)
		}
		tail, isErr := text("read_text_file", map[string]any{"path": arc + "/app/app.log", "tail": 2})
		if isErr || !strings.Contains(tail, "request 299\n") || !strings.Contains(tail, "request 300") || strings.Contains(tail, "request 298\n") {
			t.Errorf("%s: tail:\n%s", arc, tail)
		}
		win, isErr := text("read_text_file", map[string]any{"path": arc + "/app/app.log", "start_line": 123, "max_lines": 1})
		if isErr || !strings.Contains(win, "ERROR request 123") || !strings.Contains(win, arc+"/app/app.log") {
			t.Errorf("%s: window:\n%s", arc, win)
		}
		st, isErr := text("stat_file", map[string]any{"path": arc + "/docs/runbook.md"})
		if isErr || !strings.Contains(st, "file") || !strings.Contains(st, "32") {
			t.Errorf("%s: stat_file:\n%s", arc, st)
		}
		// search_text and find_files inside: the policy's members are
		// neither found nor named.
		found, isErr := text("search_text", map[string]any{"path": arc, "query": "ERROR", "archives": true})
		if isErr || !strings.Contains(found, "app/app.log\n123:2025-11-03T10:02:03 ERROR request 123") || !strings.Contains(found, "archives searched: "+arc) {
			t.Errorf("%s: search_text inside:\n%s", arc, found)
		}
		secret, _ := text("search_text", map[string]any{"query": "SECRET", "archives": true})
		key, _ := text("search_text", map[string]any{"query": "KEY", "archives": true, "case_sensitive": true})
		if strings.Contains(secret, ".env") || strings.Contains(key, "key.pem") || !strings.Contains(secret, "0 matches") && !strings.Contains(secret, "files_scanned") {
			t.Errorf("%s: search_text names a hidden member:\n%s\n%s", arc, secret, key)
		}
		names, isErr := text("find_files", map[string]any{"pattern": "*", "archives": true})
		if isErr || !strings.Contains(names, arc+"/app/app.log") || !strings.Contains(names, arc+"/docs/runbook.md") || strings.Contains(names, ".env") ||
			strings.Contains(names, ".history") || strings.Contains(names, "key.pem") || !strings.Contains(names, arc+"/app/passwd@") {
			t.Errorf("%s: find_files inside:\n%s", arc, names)
		}
		for member, code := range map[string]string{"app/.env": "DENIED_PATH", "app/.history": "HIDDEN_PATH_NOT_ALLOWED", "certs/key.pem": "DENIED_PATH", "app/passwd": "NOT_A_FILE", "nope.txt": "PATH_NOT_FOUND"} {
			got, isErr := text("read_text_file", map[string]any{"path": arc + "/" + member})
			if !isErr || !strings.HasPrefix(got, code) || strings.Contains(got, e.root) || strings.Contains(got, "root:") {
				t.Errorf("%s: read %s: %s (want %s)", arc, member, got, code)
			}
		}
	}
}

// TestArchiveSearchAnswer: search_text and find_files say they do not go
// inside an archive (not that it is a file), and read_text_files reads
// across members.
func TestArchiveSearchAnswer(t *testing.T) {
	e := newEnv(t)
	src := filepath.Join(e.parent, "src")
	writeFile(t, filepath.Join(src, "a.log"), []byte("one ERROR\n"))
	writeFile(t, filepath.Join(src, "b.log"), []byte("two\n"))
	cmd := exec.Command("tar", "-czf", filepath.Join(e.root, "l.tar.gz"), ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tar: %v %s", err, out)
	}
	cs := e.client(t, e.serveHTTP(t))
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"search_text", map[string]any{"workdir": "wd", "path": "l.tar.gz", "query": "ERROR"}},
		{"find_files", map[string]any{"workdir": "wd", "path": "l.tar.gz", "pattern": "*.log"}},
		{"read_text_files", map[string]any{"workdir": "wd", "paths": []string{"l.tar.gz/a.log", "l.tar.gz/b.log"}}},
		{"read_text_file", map[string]any{"workdir": "wd", "path": "l.tar.gz/a.log", "symbol": "F"}},
	} {
		res := e.call(t, cs, c.tool, c.args)
		text := resultText(res)
		if c.tool == "read_text_files" {
			if res.IsError || !strings.Contains(text, "one ERROR") || !strings.Contains(text, "two") {
				t.Errorf("read_text_files across members:\n%s", text)
			}
		} else if c.tool == "read_text_file" {
			if !res.IsError || !strings.Contains(text, "not compressed ones or archive members") {
				t.Errorf("symbol in an archive member:\n%s", text)
			}
		} else if !res.IsError || !strings.Contains(text, "archive or inside one: find_files and search_text go inside with archives true") {
			t.Errorf("%s into an archive:\n%s", c.tool, text)
		}
	}
}
