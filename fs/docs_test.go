package fs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/serverfs/serverfs/internal/settings"
)

// docsRoot is the repository root (fs/ is one of its directories), where
// the documentation is: README.md and docs/*.md.
const docsRoot = ".."

// docFiles are the documentation's Markdown files, relative to the
// repository root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(docsRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no docs/*.md")
	}
	out := []string{"README.md"}
	for _, f := range files {
		rel, _ := filepath.Rel(docsRoot, f)
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(docsRoot, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// allDocs is every documentation file's text, concatenated.
func allDocs(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, f := range docFiles(t) {
		b.WriteString(readDoc(t, f))
		b.WriteString("\n")
	}
	return b.String()
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	mdFence   = regexp.MustCompile("(?ms)^```.*?^```")
	mdCode    = regexp.MustCompile("`[^`\n]*`")
)

// anchors are the ids GitHub gives a Markdown file's headings: lower case,
// punctuation other than - and _ dropped, spaces as -, a repeated id
// suffixed -1, -2, ...
func anchors(text string) map[string]bool {
	text = mdFence.ReplaceAllString(text, "")
	ids := map[string]bool{}
	seen := map[string]int{}
	for _, m := range mdHeading.FindAllStringSubmatch(text, -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 0x7f && !strings.ContainsRune("…→←·—–", r):
				b.WriteRune(r)
			}
		}
		id := b.String()
		if n := seen[id]; n > 0 {
			ids[id+"-"+strconv.Itoa(n)] = true
		} else {
			ids[id] = true
		}
		seen[id]++
	}
	return ids
}

// TestDocsLinksResolve: every relative link in README.md and docs/*.md
// names a file of the repository, and its #anchor a heading of that file
// (or of the linking file, for a bare #anchor).
func TestDocsLinksResolve(t *testing.T) {
	for _, f := range docFiles(t) {
		text := readDoc(t, f)
		// Code is not Markdown: a link-like text there is not a link.
		prose := mdCode.ReplaceAllString(mdFence.ReplaceAllString(text, ""), "")
		links := mdLink.FindAllStringSubmatch(prose, -1)
		for _, m := range links {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target, anchor, _ := strings.Cut(link, "#")
			targetFile := f
			if target != "" {
				targetFile = filepath.ToSlash(filepath.Join(filepath.Dir(f), target))
				if strings.HasPrefix(targetFile, "../") {
					t.Errorf("%s: link %q leaves the repository", f, link)
					continue
				}
				if _, err := os.Stat(filepath.Join(docsRoot, filepath.FromSlash(targetFile))); err != nil {
					t.Errorf("%s: link %q: %v", f, link, err)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(targetFile, ".md") {
				t.Errorf("%s: link %q has an anchor into a file that is not Markdown", f, link)
				continue
			}
			if !anchors(readDoc(t, targetFile))[anchor] {
				t.Errorf("%s: link %q: %s has no heading with id %q", f, link, targetFile, anchor)
			}
		}
	}
}

// TestDocsNameEveryVariable: every SERVERFS_* variable ServerFS or its
// compose file reads and every WORKDIR_NN_* setting is documented, and
// every limit has its row in docs/limits.md with the default and lower
// bound the code has.
func TestDocsNameEveryVariable(t *testing.T) {
	docs := allDocs(t)
	mentioned := func(name string) bool {
		return regexp.MustCompile(regexp.QuoteMeta(name) + `\b`).MatchString(docs)
	}
	for _, v := range settings.Vars {
		if !mentioned(v.Name) {
			t.Errorf("%s is read but documented nowhere in README.md or docs/", v.Name)
		}
	}

	limits := readDoc(t, "docs/limits.md")
	row := func(name string) []string {
		m := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(name) + "` \\| ([^|]*) \\| ([^|]*)").FindStringSubmatch(limits)
		if m == nil {
			return nil
		}
		return []string{strings.TrimSpace(m[1]), strings.TrimSpace(m[2])}
	}
	d := DefaultLimits()
	for _, v := range limitVars {
		r := row(v.name)
		if r == nil {
			t.Errorf("docs/limits.md has no row for %s", v.name)
			continue
		}
		def := limitField(d, v.name)
		if v.name == "SERVERFS_SEARCH_TIMEOUT_SECONDS" {
			def = int64(d.SearchTimeout.Seconds())
		}
		if r[0] != strconv.FormatInt(def, 10) {
			t.Errorf("docs/limits.md: %s default %q, the code's is %d", v.name, r[0], def)
		}
		if want := strconv.FormatInt(v.bounds().Min, 10) + " – "; !strings.HasPrefix(r[1], want) {
			t.Errorf("docs/limits.md: %s allows %q, the code's lower bound is %d", v.name, r[1], v.bounds().Min)
		}
		// An upper bound stated as a number is the code's (some are
		// another variable's value instead).
		if hi, _, _ := strings.Cut(strings.TrimPrefix(r[1], strconv.FormatInt(v.bounds().Min, 10)+" – "), ":"); regexp.MustCompile(`^\d+$`).MatchString(hi) && hi != strconv.FormatInt(v.bounds().Max, 10) {
			t.Errorf("docs/limits.md: %s allows up to %s, the code %d", v.name, hi, v.bounds().Max)
		}
	}
	// The other variables a deployment tunes have their row too; the
	// ones that are not limits (compose's own, the bridge's socket, the
	// state directory) are documented where they are used.
	notLimits := []string{"SERVERFS_BRIDGE_SOCKET", "SERVERFS_BRIDGE_TOKEN_FILE", "SERVERFS_STATE_DIR"}
	for _, v := range settings.Vars {
		if name := v.Name; strings.HasPrefix(name, "SERVERFS_") && v.Owner != "compose" && !slices.Contains(notLimits, name) && row(name) == nil {
			t.Errorf("docs/limits.md has no row for %s", name)
		}
	}
}
