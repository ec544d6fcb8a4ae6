package mcp

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepoHistoryText: read_repo_history's text channel over HTTP: a log
// is one line per commit, files only when asked (and then capped per
// commit, saying so), show is the header and git's own patch, blame one
// line per source line with the commits once.
func TestRepoHistoryText(t *testing.T) {
	e := newRepoEnv(t)
	writeFile(t, filepath.Join(e.root, "sub", "a.txt"), []byte("alpha\n\tgamma & <delta> -> ε\n"))
	writeFile(t, filepath.Join(e.root, "id_rsa"), []byte("PRIVATE "+canaryText+" changed\n"))
	for i := range 55 {
		writeFile(t, filepath.Join(e.root, "many", fmt.Sprintf("f%02d.txt", i)), []byte("x\n"))
	}
	gitIn(t, e.root, "add", "-A")
	gitIn(t, e.root, "commit", "-qm", "second\n\nwith a body\n\nand a second paragraph")
	cs := e.client(t, e.serveHTTP(t))
	call := func(args map[string]any) (string, readRepoHistoryOut) {
		t.Helper()
		args["workdir"] = "wd"
		res := e.call(t, cs, "read_repo_history", args)
		return resultText(res), structured[readRepoHistoryOut](t, res)
	}

	text, out := call(map[string]any{"view": "log"})
	c0, c1 := out.Log.Commits[0], out.Log.Commits[1]
	line := func(id, date, subject string) string {
		return id[:10] + " " + date[:10] + " Agent Via ServerFS " + subject + "\n"
	}
	if want := line(c0.ID, c0.Author.Date, "second") + line(c1.ID, c1.Author.Date, "base"); text != want {
		t.Errorf("log:\n%s\nwant\n%s", text, want)
	}
	if c0.Files != nil || c0.HiddenFiles != 0 {
		t.Errorf("files without files: %+v", c0)
	}
	text, out = call(map[string]any{"view": "log", "files": true, "limit": 1})
	want := line(c0.ID, c0.Author.Date, "second")
	for i := range 50 {
		want += fmt.Sprintf("  A many/f%02d.txt\n", i)
	}
	want += "  … 6 more files (a log lists 50 per commit; view show with rev " + c0.ID[:10] + " lists them all)\n  (1 hidden files, not named)\nnext_cursor " + out.Log.NextCursor + "\n"
	if text != want || out.Log.NextCursor == "" || out.Log.Commits[0].MoreFiles != 6 {
		t.Errorf("log with files:\n%s\nwant\n%s", text, want)
	}

	// show: git show's patch, byte for byte.
	text, _ = call(map[string]any{"view": "show", "rev": c0.ID[:7], "paths": []string{"sub/a.txt"}})
	patch := gitIn(t, e.root, "-c", "core.abbrev=7", "show", "--format=", "--no-color", "--no-ext-diff", "--no-renames", c0.ID, "--", "sub/a.txt")
	head := "commit " + c0.ID + "\nAuthor: Agent Via ServerFS <agent@example.invalid> " + c0.Author.Date + "\n\n    second\n\n    with a body\n\n    and a second paragraph\n\n"
	if text != head+patch {
		t.Errorf("show:\n%s\nwant\n%s", text, head+patch)
	}

	text, _ = call(map[string]any{"view": "blame", "path": "sub/a.txt"})
	want = "blame wd:sub/a.txt at " + c0.ID[:10] + " lines 1-2 of 2\n" +
		c1.ID[:10] + " 1: alpha\n" + c0.ID[:10] + " 2: \tgamma & <delta> -> ε\ncommits:\n" +
		line(c1.ID, c1.Author.Date, "base") + line(c0.ID, c0.Author.Date, "second")
	if text != want {
		t.Errorf("blame:\n%s\nwant\n%s", text, want)
	}
	if strings.Contains(text+patch, canaryText) {
		t.Error("credential content in the text")
	}
}
