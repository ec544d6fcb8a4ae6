package mcp

import (
	"testing"

	sfs "github.com/serverfs/serverfs/fs"
)

// TestRevisionOnlyWhereWritable: stat_file, read_text_file and
// read_text_files give a file's revision in a rw workdir, where a write
// takes it, and none in a read-only workdir, where no write could use it
// (computing it would cost a pass over the file). The descriptions say so
// (testdata/surface).
func TestRevisionOnlyWhereWritable(t *testing.T) {
	e := newRWEnv(t)
	cs := e.client(t, e.serveHTTP(t))
	for _, c := range []struct {
		workdir, path, want string
	}{
		{"wd", "README.md", sfs.Revision([]byte(readmeText))},
		{"ro", "ro.txt", ""},
	} {
		args := map[string]any{"workdir": c.workdir, "path": c.path}
		if st := structured[sfs.FileInfo](t, e.call(t, cs, "stat_file", args)); st.Revision != c.want {
			t.Errorf("stat_file %s:%s revision %q, want %q", c.workdir, c.path, st.Revision, c.want)
		}
		if rd := structured[readTextFileOut](t, e.call(t, cs, "read_text_file", args)); rd.Revision != c.want {
			t.Errorf("read_text_file %s:%s revision %q, want %q", c.workdir, c.path, rd.Revision, c.want)
		}
		// A partial window still has the whole file's revision.
		part := map[string]any{"workdir": c.workdir, "path": c.path, "max_lines": 1}
		if rd := structured[readTextFileOut](t, e.call(t, cs, "read_text_file", part)); rd.Revision != c.want || !rd.HasMore && c.workdir == "wd" {
			t.Errorf("read_text_file max_lines 1 %s:%s revision %q has_more %v, want %q", c.workdir, c.path, rd.Revision, rd.HasMore, c.want)
		}
		files := structured[readTextFilesOut](t, e.call(t, cs, "read_text_files", map[string]any{"workdir": c.workdir, "paths": []string{c.path}}))
		if len(files.Files) != 1 || files.Files[0].Revision != c.want {
			t.Errorf("read_text_files %s:%s = %+v, want revision %q", c.workdir, c.path, files.Files, c.want)
		}
	}
}
