package archive

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/serverfs/serverfs/internal/errs"
)

// The differential: archives made by tar and zip from a real tree (odd
// names, links, empty and nested directories), read here and by the
// tools a person would use: names and types against tar -tvf and
// zipinfo, every file's bytes against tar -xOf and unzip -p.

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is the oracle of this test: apt-get install tar zip unzip zstd bzip2", tool)
		}
	}
}

func run(t *testing.T, dir, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s %v: %v %s", name, args, err, stderr)
	}
	return out
}

// tree makes the files archived: what real trees hold.
func tree(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "src")
	files := map[string]string{
		"README.md":                 "# readme\n",
		"logs/app.log":              strings.Repeat("2026-11-03T10:00:00 INFO served\n", 2000) + "2026-11-03T10:00:01 ERROR refused\n",
		"logs/empty.log":            "",
		"a b/ünïcödé name.txt":      "unicode\n",
		"deep/1/2/3/4/5/leaf.txt":   "leaf\n",
		".env":                      "SECRET=1\n",
		"certs/server.pem":          "-----BEGIN PRIVATE KEY-----\n",
		"certs/README":              "certificates\n",
		"data/zeros.bin":            string(make([]byte, 70000)),
		"percent%41literal.txt":     "a percent\n",
		"docs/notes/2025/11/03.txt": "notes\n",
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "empty", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"logs/current": "app.log", "escape": "../../etc/passwd"} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

type fixture struct {
	format Format
	file   string
}

// archives makes one archive of root per format, with the system tools.
func archives(t *testing.T, root string) []fixture {
	t.Helper()
	need(t, "tar", "zip", "unzip", "zipinfo", "zstd", "bzip2")
	dir := filepath.Dir(root)
	out := []fixture{}
	for _, c := range []struct {
		format Format
		name   string
		args   []string
	}{
		{Tar, "a.tar", []string{"-cf"}},
		{TarGz, "a.tar.gz", []string{"-czf"}},
		{TarZst, "a.tar.zst", []string{"--zstd", "-cf"}},
		{TarBz2, "a.tar.bz2", []string{"-cjf"}},
	} {
		run(t, root, "tar", append(c.args, filepath.Join(dir, c.name), ".")...)
		out = append(out, fixture{c.format, filepath.Join(dir, c.name)})
	}
	run(t, root, "zip", "-q", "-r", "-y", filepath.Join(dir, "a.zip"), ".")
	return append(out, fixture{Zip, filepath.Join(dir, "a.zip")})
}

func source(t *testing.T, file string) Source {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return Source{R: f, Size: st.Size()}
}

// all lists every member below dir, recursively, through List's pages.
func all(t *testing.T, src Source, f Format, dir string, opt Options) []Member {
	t.Helper()
	var out []Member
	opt.Limit = 3 // pages of three: the paging is exercised
	for opt.Offset = 0; ; opt.Offset += opt.Limit {
		p, err := List(context.Background(), src, f, dir, opt)
		if err != nil {
			t.Fatalf("List(%q): %v", dir, err)
		}
		for _, m := range p.Members {
			out = append(out, m)
			if m.Type == Dir {
				sub := opt
				sub.Offset = 0
				out = append(out, all(t, src, f, m.Name, sub)...)
			}
		}
		if opt.Offset+opt.Limit >= p.Total {
			return out
		}
	}
}

// oracleMembers are the names and types tar -tvf or zipinfo give.
func oracleMembers(t *testing.T, fx fixture) map[string]string {
	t.Helper()
	got := map[string]string{}
	if fx.format == Zip {
		for _, l := range strings.Split(string(run(t, "", "zipinfo", "-l", fx.file)), "\n") {
			f := strings.Fields(l)
			if len(f) < 9 || len(f[0]) != 10 {
				continue // the header and the totals
			}
			name := strings.TrimSuffix(strings.Join(f[9:], " "), "/")
			got[name] = typeLetter(f[0][0])
		}
		return got
	}
	for _, l := range strings.Split(string(run(t, "", "tar", "-tvf", fx.file)), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 {
			continue
		}
		name := strings.Join(f[5:], " ")
		if i := strings.Index(name, " -> "); i >= 0 {
			name = name[:i]
		}
		name = strings.TrimSuffix(strings.TrimPrefix(name, "./"), "/")
		if name == "." || name == "" {
			continue // the archive's root
		}
		got[name] = typeLetter(f[0][0])
	}
	return got
}

func typeLetter(c byte) string {
	switch c {
	case 'd':
		return "dir"
	case 'l':
		return "symlink"
	case 'h':
		return "hardlink"
	}
	return "file"
}

func TestMembersMatchTheTools(t *testing.T) {
	root := tree(t)
	for _, fx := range archives(t, root) {
		t.Run(string(fx.format), func(t *testing.T) {
			src := source(t, fx.file)
			if got := Detect(fx.file, head(t, fx.file)); got != fx.format {
				t.Errorf("Detect: %q", got)
			}
			raw := oracleMembers(t, fx)
			want, stored := map[string]string{}, map[string]string{}
			for name, typ := range raw {
				shown, _ := DisplayName(name)
				want[shown], stored[shown] = typ, name
			}
			got := map[string]string{}
			for _, m := range all(t, src, fx.format, "", Options{}) {
				got[m.Name] = m.Type.String()
			}
			if fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(want)) {
				t.Errorf("members:\n got %v\nwant %v", sorted(got), sorted(want))
			}
			// Every file's bytes, against the tool's.
			for name, typ := range want {
				if typ != "file" {
					continue
				}
				var oracle []byte
				if fx.format == Zip {
					oracle = run(t, "", "unzip", "-p", fx.file, stored[name])
				} else {
					oracle = run(t, "", "tar", "-xOf", fx.file, "./"+stored[name])
				}
				rc, m, err := Open(context.Background(), src, fx.format, name, Options{})
				if err != nil {
					t.Errorf("Open(%q): %v", name, err)
					continue
				}
				b, err := io.ReadAll(rc)
				rc.Close()
				if err != nil || !bytes.Equal(b, oracle) || m.Size != int64(len(oracle)) {
					t.Errorf("Open(%q): %d bytes (size %d, err %v), the tool gives %d", name, len(b), m.Size, err, len(oracle))
				}
			}
			// A link is named, never followed or opened.
			if _, _, err := Open(context.Background(), src, fx.format, "escape", Options{}); errs.CodeOf(err) != errs.NotAFile {
				t.Errorf("Open(escape), a symlink: %v", err)
			}
			if m, err := Stat(context.Background(), src, fx.format, "logs/current", Options{}); err != nil || m.Type != Symlink {
				t.Errorf("Stat(logs/current): %v %v", m, err)
			}
			if _, _, err := Open(context.Background(), src, fx.format, "logs", Options{}); errs.CodeOf(err) != errs.NotAFile {
				t.Errorf("Open(logs), a directory: %v", err)
			}
			if _, err := List(context.Background(), src, fx.format, "README.md", Options{}); errs.CodeOf(err) != errs.NotADirectory {
				t.Errorf("List(README.md): %v", err)
			}
			if _, err := Stat(context.Background(), src, fx.format, "nope", Options{}); errs.CodeOf(err) != errs.PathNotFound {
				t.Errorf("Stat(nope): %v", err)
			}
		})
	}
}

func head(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return b[:min(len(b), 512)]
}

func sorted(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+" "+v)
	}
	sort.Strings(out)
	return out
}

// TestPolicyAppliesToMembers: a hidden or denied name inside an archive
// is unnamed and unreadable through every call, its subtree too.
func TestPolicyAppliesToMembers(t *testing.T) {
	root := tree(t)
	deny := func(name string, isDir bool) bool {
		base := path.Base(name)
		return !strings.HasPrefix(base, ".") && !strings.HasSuffix(base, ".pem") && base != "notes"
	}
	opt := Options{Filter: deny}
	for _, fx := range archives(t, root) {
		src := source(t, fx.file)
		for _, m := range all(t, src, fx.format, "", opt) {
			if m.Name == ".env" || strings.HasSuffix(m.Name, ".pem") || strings.Contains(m.Name, "notes") {
				t.Errorf("%s: listed %q", fx.format, m.Name)
			}
		}
		for _, name := range []string{".env", "certs/server.pem", "docs/notes/2025/11/03.txt"} {
			if _, _, err := Open(context.Background(), src, fx.format, name, opt); errs.CodeOf(err) != errs.PathNotFound {
				t.Errorf("%s: Open(%q): %v", fx.format, name, err)
			}
			if _, err := Stat(context.Background(), src, fx.format, name, opt); errs.CodeOf(err) != errs.PathNotFound {
				t.Errorf("%s: Stat(%q): %v", fx.format, name, err)
			}
		}
		err := Walk(context.Background(), src, fx.format, opt, func(m Member, r io.Reader) error {
			if m.Name == ".env" || strings.HasSuffix(m.Name, ".pem") || strings.Contains(m.Name, "notes") {
				t.Errorf("%s: walked %q", fx.format, m.Name)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: Walk: %v", fx.format, err)
		}
	}
}

// TestHostileNames: names that climb, are absolute, hold backslashes or
// control characters are shown escaped, addressed as shown, never
// resolved.
func TestHostileNames(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := map[string]string{
		"../../etc/passwd":  "%2E%2E/%2E%2E/etc/passwd",
		"/abs/path":         "abs/path",
		`win\dir\file`:      "win%5Cdir%5Cfile",
		"bell\a\x1b[31mred": "bell%07%1B[31mred",
		"rtl\u202egnp.exe":  "rtl%E2%80%AEgnp.exe",
		"bad\xffutf8":       "bad%FFutf8",
		"%41 stays":         "%2541 stays",
		"a/./b//c":          "a/b/c",
	}
	for raw := range names {
		w, err := zw.Create(raw)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(w, "body of %q", raw)
	}
	zw.Close()
	src := Source{R: bytes.NewReader(buf.Bytes()), Size: int64(buf.Len())}
	for raw, shown := range names {
		rc, m, err := Open(context.Background(), src, Zip, shown, Options{})
		if err != nil {
			t.Errorf("Open(%q) (stored %q): %v", shown, raw, err)
			continue
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if string(b) != fmt.Sprintf("body of %q", raw) {
			t.Errorf("Open(%q): %q", shown, b)
		}
		if m.Escaped != (raw != shown && raw != "a/./b//c") {
			t.Errorf("%q: escaped %v", raw, m.Escaped)
		}
	}
}
