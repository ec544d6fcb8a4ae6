package git

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/serverfs/serverfs/internal/errs"
)

// TestStatusAttributes: status compares what git add would store, after
// the line-ending conversion .gitattributes selects. Every state is
// compared with git status (the oracle), with the files' stat made dirty
// so that content, not the stat cache, decides.
func TestStatusAttributes(t *testing.T) {
	orcNeedGit(t)
	dir := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	gitCLI(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, ".gitattributes"), "*.txt text=auto\n*.bat eol=crlf\n*.raw -text\n*.md text\n*.old crlf\nkept/* text=auto\n")
	// Added with CRLF work-tree content: the blobs of text paths hold LF,
	// the index records the CRLF sizes. Then every stat is made dirty, so
	// that content after conversion, not the stat cache, decides.
	files := map[string]string{
		"lf.txt":     "a\r\nb\r\n",  // text=auto: blob LF; unchanged
		"same.txt":   "a\r\nb\r\n",  // text=auto: changed, same size
		"mixed.txt":  "a\r\nb\rc\n", // a lone CR: binary for auto, stored as is
		"run.bat":    "echo a\r\n",  // eol=crlf: blob LF; unchanged
		"data.raw":   "x\r\ny\r\n",  // -text: stored as is; unchanged
		"doc.md":     "t\r\nu\r\n",  // text: blob LF; unchanged
		"legacy.old": "l\r\n",       // crlf (deprecated) = text; unchanged
		"kept/w.cfg": "k\r\nv\r\n",  // text=auto: unchanged
		"plain.c":    "int x;\r\n",  // no attribute: stored as is; changed, same size
		"empty.txt":  "",
	}
	for p, c := range files {
		write(t, filepath.Join(dir, p), c)
	}
	gitCLI(t, dir, "add", "-A")
	gitCLI(t, dir, "commit", "-qm", "base")
	write(t, filepath.Join(dir, "same.txt"), "a\r\nc\r\n")
	write(t, filepath.Join(dir, "plain.c"), "int y;\r\n")
	later := time.Now().Add(-time.Hour)
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && !strings.Contains(p, "/.git/") {
			os.Chtimes(p, later, later)
		}
		return nil
	})
	// Ours first: git status refreshes the index's stat data, after which
	// no content would be compared at all.
	r, err := openDir(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Status(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	want := gitStatusV2(t, dir)
	if len(want.Entries) != 2 {
		t.Fatalf("setup: git should see exactly same.txt and plain.c modified:\n%s", gitCLI(t, dir, "status", "--porcelain=v2"))
	}
	filtered := want.filtered(r.fs.Policy())
	if !orcSame(filtered, got) {
		t.Fatalf("status with attributes differs from git:\n%s\ngit:\n%s", orcStatusDiff(filtered, got), gitCLI(t, dir, "status", "--porcelain=v2"))
	}
	// A filter driver cannot be run: refused, not guessed.
	write(t, filepath.Join(dir, ".gitattributes"), "*.txt filter=lfs\n")
	write(t, filepath.Join(dir, "lf.txt"), "c\nd\n") // same size as the index's: content decides
	os.Chtimes(filepath.Join(dir, "lf.txt"), later.Add(time.Minute), later.Add(time.Minute))
	r, _ = openDir(t, dir)
	if _, err := r.Status(context.Background(), 1000); errs.CodeOf(err) != errs.RepoUnsupported || !strings.Contains(err.Error(), "filter") {
		t.Fatalf("a file under a filter with dirty stat: %v", err)
	}
}
