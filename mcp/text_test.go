package mcp

import (
	"path/filepath"
	"strings"
	"testing"
)

// textFixture holds what JSON would escape or a careless renderer would
// change: tabs, CRLF, & < > ->, non-ASCII, and no final newline.
var textFixture = []string{
	"package main\n",
	"\tif a && b < c {\r\n",
	"\t\treturn x->y // <tag> & \"quoted\"\r\n",
	"\t}\n",
	"// naïve café — 日本語 ✓\n",
	"\n",
	"end without newline",
}

// TestTextChannelIsTheFile: read_text_file's and read_text_files' text
// content is one header line per file and then the window's bytes exactly
// as in the file, over a real MCP client; the structured content keeps
// the same window as JSON.
func TestTextChannelIsTheFile(t *testing.T) {
	e := newRWEnv(t)
	file := strings.Join(textFixture, "")
	writeFile(t, filepath.Join(e.root, "code.go"), []byte(file))
	writeFile(t, filepath.Join(e.root, "empty.txt"), nil)
	cs := e.client(t, e.serveHTTP(t))

	read := func(args map[string]any) (string, readTextFileOut) {
		t.Helper()
		if args["workdir"] == nil {
			args["workdir"] = "wd"
		}
		res := e.call(t, cs, "read_text_file", args)
		return resultText(res), structured[readTextFileOut](t, res)
	}
	whole, w := read(map[string]any{"path": "code.go"})
	rev := w.Revision
	if !strings.HasPrefix(rev, "sha256:") {
		t.Fatalf("revision %q", rev)
	}
	if want := "==> wd:code.go lines 1-7 of 7 revision " + rev + " <==\n" + file; whole != want {
		t.Errorf("whole file:\n%q\nwant\n%q", whole, want)
	}
	if w.Content != file {
		t.Errorf("structured content %q", w.Content)
	}
	// A window in the middle: exactly lines 2-4, CRLF kept, and how to
	// continue.
	mid, _ := read(map[string]any{"path": "code.go", "start_line": 2, "max_lines": 3})
	window := strings.Join(textFixture[1:4], "")
	if want := "==> wd:code.go lines 2-4 revision " + rev + " next start_line 5 <==\n" + window; mid != want {
		t.Errorf("middle window:\n%q\nwant\n%q", mid, want)
	}
	tail, _ := read(map[string]any{"path": "code.go", "tail": 2})
	if want := "==> wd:code.go last 2 lines (6-7 of 7) revision " + rev + " <==\n" + strings.Join(textFixture[5:], ""); tail != want {
		t.Errorf("tail:\n%q\nwant\n%q", tail, want)
	}
	empty, ew := read(map[string]any{"path": "empty.txt"})
	if want := "==> wd:empty.txt empty revision " + ew.Revision + " <=="; empty != want || ew.Revision == "" {
		t.Errorf("empty file: %q, want %q", empty, want)
	}
	// A read-only workdir has no revision; a compressed file says so.
	ro, _ := read(map[string]any{"workdir": "ro", "path": "ro.txt"})
	if ro != "==> ro:ro.txt lines 1-1 of 1 <==\nread only\n" {
		t.Errorf("ro file: %q", ro)
	}
	gz, _ := read(map[string]any{"path": "logs/app.log.1.gz", "max_lines": 1})
	if want := "==> wd:logs/app.log.1.gz (gzip) lines 1-1 next start_line 2 <==\nline one\n"; gz != want {
		t.Errorf("gz: %q, want %q", gz, want)
	}

	// read_text_files: the same blocks one after another, each after the
	// first on a line of its own; a failed file is its header with the
	// error.
	res := e.call(t, cs, "read_text_files", map[string]any{"workdir": "wd", "paths": []string{"code.go", "missing.txt", "sub/a.txt", "empty.txt"}, "max_lines": 7})
	text := resultText(res)
	aw := structured[readTextFilesOut](t, res).Files[2]
	want := "==> wd:code.go lines 1-7 of 7 revision " + rev + " <==\n" + file +
		"\n==> wd:missing.txt PATH_NOT_FOUND: wd:/missing.txt does not exist <==" +
		"\n==> wd:sub/a.txt lines 1-2 of 2 revision " + aw.Revision + " <==\n" + aText +
		"\n==> wd:empty.txt empty revision " + ew.Revision + " <=="
	if text != want {
		t.Errorf("read_text_files:\n%q\nwant\n%q", text, want)
	}
	mres := e.call(t, cs, "read_text_files", map[string]any{"workdir": "wd", "paths": []string{"code.go"}, "max_lines": 3})
	if want := "==> wd:code.go lines 1-3 revision " + rev + " next start_line 4 <==\n" + strings.Join(textFixture[:3], ""); resultText(mres) != want {
		t.Errorf("read_text_files window:\n%q\nwant\n%q", resultText(mres), want)
	}
	for _, escaped := range []string{`\u0026`, `\u003c`, `\t`, `\r\n`, `\"`} {
		if strings.Contains(text, escaped) {
			t.Errorf("text channel holds the escape %s", escaped)
		}
	}
}

// TestReadTextFilesTextTruncated: the last line says when the call's
// total left files unread, and only then.
func TestReadTextFilesTextTruncated(t *testing.T) {
	e := newEnv(t)
	line := strings.Repeat("z", 99) + "\n"
	for _, n := range []string{"f0.txt", "f1.txt", "f2.txt"} {
		writeFile(t, filepath.Join(e.root, n), []byte(strings.Repeat(line, 6)))
	}
	e.reconfigure(t, []string{"wd=" + e.root}, []string{"SERVERFS_MAX_READ_BYTES=1100"}, nil)
	cs := e.client(t, e.serveHTTP(t))
	text := resultText(e.call(t, cs, "read_text_files", map[string]any{"workdir": "wd", "paths": []string{"f0.txt", "f1.txt", "f2.txt"}}))
	lines := strings.Split(text, "\n")
	if last := lines[len(lines)-1]; last != "truncated: this call's 1100-byte total left 1 file unread; read them with read_text_file" {
		t.Errorf("last line %q of\n%s", last, text)
	}
	if !strings.Contains(text, "==> wd:f1.txt lines 1-5 next start_line 6 <==\n") {
		t.Errorf("cut window:\n%s", text)
	}
	text = resultText(e.call(t, cs, "read_text_files", map[string]any{"workdir": "wd", "paths": []string{"f0.txt"}}))
	if strings.Contains(text, "truncated") {
		t.Errorf("nothing unread:\n%s", text)
	}
}
