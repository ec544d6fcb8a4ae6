package git

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/serverfs/serverfs/internal/errs"
)

// The history differential tests: repositories generated with git
// fast-import (branches, merges that take either side or a mix, several
// root commits, renames as delete+add, binary files, symlinks, executable
// bits, empty commits, file<->directory replacements, unicode and odd
// names, hidden files, equal and skewed commit dates), then log, show and
// blame compared with the git CLI on the same repository.

// genFile is one file of a generated tree.
type genFile struct {
	mode    string // 100644, 100755, 120000
	content string
}

type genRepo struct {
	rng     *rand.Rand
	buf     bytes.Buffer
	mark    int
	blobs   map[string]int // content -> mark
	heads   []string       // branch names
	state   map[string]map[string]genFile
	tip     map[string]int // branch -> commit mark
	when    int64
	lineSeq int
	commits int
	// rich adds the edits the blame and show differentials need most
	// (richEdit); the seeds without it keep their repositories.
	rich bool
}

// richNames are the names richEdit adds and renames to.
var richNames = []string{"code.go", "tool.sh", "bin/run", "huge.txt", "lib/moved.go", "ren/ämed.c"}

// codeLines are n lines of code-like text, many of them repeated (blank
// lines, braces, indented returns): where a diff puts a repeated line is
// what xdiff's heuristics decide.
func (g *genRepo) codeLines(n int) string {
	var b strings.Builder
	for range n {
		switch g.rng.Intn(8) {
		case 0:
			b.WriteString("\n")
		case 1:
			b.WriteString("}\n")
		case 2:
			b.WriteString("\t}\n")
		case 3:
			b.WriteString("\treturn nil\n")
		case 4:
			g.lineSeq++
			fmt.Fprintf(&b, "func f%d() {\n", g.lineSeq)
		case 5:
			b.WriteString("        x++\n")
		default:
			g.lineSeq++
			fmt.Fprintf(&b, "\tcall(%d)\n", g.lineSeq)
		}
	}
	return b.String()
}

// textFiles are st's regular files that are line text (not binary, not
// Latin-1), sorted.
func textFiles(st map[string]genFile) []string {
	var out []string
	for _, p := range sortedKeys(st) {
		f := st[p]
		if (f.mode == "100644" || f.mode == "100755") && strings.IndexByte(f.content, 0) < 0 && utf8.ValidString(f.content) {
			out = append(out, p)
		}
	}
	return out
}

// richEdit is one of: a rename with a small edit (and, half the time, the
// executable bit flipped), code-like lines with repeats inserted or
// deleted, a large file (600 to 1,400 lines) added or more than 500 of its
// lines changed, or a chmod with an edit.
func (g *genRepo) richEdit(st map[string]genFile) {
	files := textFiles(st)
	pickText := func() (string, genFile, bool) {
		if len(files) == 0 {
			return "", genFile{}, false
		}
		p := files[g.rng.Intn(len(files))]
		return p, st[p], true
	}
	flip := func(m string) string {
		if m == "100644" {
			return "100755"
		}
		return "100644"
	}
	editLines := func(content string, k int) string {
		ls := strings.SplitAfter(content, "\n")
		if ls[len(ls)-1] == "" {
			ls = ls[:len(ls)-1]
		}
		for range k {
			i := g.rng.Intn(len(ls) + 1)
			switch g.rng.Intn(3) {
			case 0:
				ls = append(ls[:i], append([]string{g.codeLines(1 + g.rng.Intn(4))}, ls[i:]...)...)
			case 1:
				if i < len(ls) {
					ls = append(ls[:i], ls[min(len(ls), i+1+g.rng.Intn(3)):]...)
				}
			default:
				if i < len(ls) {
					ls[i] = g.codeLines(1)
				}
			}
		}
		return strings.Join(ls, "")
	}
	switch op := g.rng.Intn(10); {
	case op < 3: // a rename with an edit, maybe a mode change
		p, f, ok := pickText()
		if !ok || strings.Count(f.content, "\n") < 8 {
			put(st, richNames[g.rng.Intn(len(richNames))], genFile{[]string{"100644", "100755"}[g.rng.Intn(2)], g.codeLines(10 + g.rng.Intn(30))})
			return
		}
		delete(st, p)
		f.content = editLines(f.content, 1)
		if g.rng.Intn(2) == 0 {
			f.mode = flip(f.mode)
		}
		put(st, richNames[g.rng.Intn(len(richNames))], f)
	case op < 6: // code with repeated lines
		p, f, ok := pickText()
		if !ok {
			return
		}
		f.content = editLines(f.content, 1+g.rng.Intn(4))
		st[p] = f
	case op < 8: // a large file, or a large edit of one
		p, f, ok := pickText()
		if !ok || strings.Count(f.content, "\n") < 600 {
			put(st, "huge.txt", genFile{"100644", g.codeLines(600 + g.rng.Intn(800))})
			return
		}
		ls := strings.SplitAfter(f.content, "\n")
		from := g.rng.Intn(len(ls) / 4)
		for i := from; i < len(ls)-1 && i < from+700; i++ {
			if g.rng.Intn(10) < 8 {
				ls[i] = g.codeLines(1)
			}
		}
		f.content = strings.Join(ls, "")
		st[p] = f
	default: // chmod with an edit
		p, f, ok := pickText()
		if !ok {
			return
		}
		f.mode = flip(f.mode)
		f.content = editLines(f.content, 1)
		st[p] = f
	}
}

var genNames = []string{
	"a.txt", "b.txt", "src/main.go", "src/lib/util.go", "src/lib/deep/x.go", "docs/read me.md",
	"dïr/ñame.txt", "日本/語.txt", "odd\tname.txt", "quote\"d.txt", "back\\slash.txt", "x", "x/y.txt",
	"x-a", "x.b/c", "big.txt", "bin.dat", "link", ".hidden/secret.txt", ".env", "src/.cache/c.txt",
	"src/lib", "#hash.txt", "sp ace/f", "z/z/z/z.txt", "latin1.txt",
}

func quoteFI(p string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (g *genRepo) lines(n int) string {
	var b strings.Builder
	for range n {
		g.lineSeq++
		fmt.Fprintf(&b, "line %d %x\n", g.lineSeq, g.rng.Int63())
	}
	return b.String()
}

func (g *genRepo) blob(content string) int {
	if m, ok := g.blobs[content]; ok {
		return m
	}
	g.mark++
	fmt.Fprintf(&g.buf, "blob\nmark :%d\ndata %d\n%s\n", g.mark, len(content), content)
	g.blobs[content] = g.mark
	return g.mark
}

// put sets path in st, removing what a file there replaces (a file that
// is a leading directory of it, or files below it).
func put(st map[string]genFile, p string, f genFile) {
	for q := range st {
		if strings.HasPrefix(p, q+"/") || strings.HasPrefix(q, p+"/") {
			delete(st, q)
		}
	}
	st[p] = f
}

func (g *genRepo) edit(st map[string]genFile) {
	if g.rich && g.rng.Intn(2) == 0 {
		g.richEdit(st)
		return
	}
	keys := make([]string, 0, len(st))
	for k := range st {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pick := func() (string, bool) {
		if len(keys) == 0 {
			return "", false
		}
		return keys[g.rng.Intn(len(keys))], true
	}
	switch op := g.rng.Intn(20); {
	case op < 4 || len(keys) == 0: // add
		p := genNames[g.rng.Intn(len(genNames))]
		switch {
		case p == "bin.dat":
			put(st, p, genFile{"100644", "\x00\x01bin" + g.lines(2)})
		case p == "link":
			put(st, p, genFile{"120000", "target/" + strconv.Itoa(g.rng.Intn(5))})
		case p == "latin1.txt": // text git shows, not UTF-8
			put(st, p, genFile{"100644", "\x89PNG\r\ncaf\xe9\n" + g.lines(3)})
		case p == "big.txt":
			put(st, p, genFile{"100644", g.lines(60 + g.rng.Intn(60))})
		default:
			put(st, p, genFile{"100644", g.lines(1 + g.rng.Intn(12))})
		}
	case op < 13: // modify lines
		p, _ := pick()
		f := st[p]
		if f.mode == "120000" {
			f.content += "x"
			st[p] = f
			return
		}
		ls := strings.SplitAfter(f.content, "\n")
		if ls[len(ls)-1] == "" {
			ls = ls[:len(ls)-1]
		}
		for range 1 + g.rng.Intn(3) {
			i := g.rng.Intn(len(ls) + 1)
			switch g.rng.Intn(3) {
			case 0:
				ls = append(ls[:i], append([]string{g.lines(1 + g.rng.Intn(3))}, ls[i:]...)...)
			case 1:
				if i < len(ls) {
					ls = append(ls[:i], ls[i+1:]...)
				}
			case 2:
				if i < len(ls) {
					ls[i] = g.lines(1)
				}
			}
		}
		f.content = strings.Join(ls, "")
		if g.rng.Intn(15) == 0 {
			f.content = strings.TrimSuffix(f.content, "\n") // no final newline
		}
		st[p] = f
	case op < 15: // delete
		p, _ := pick()
		delete(st, p)
	case op < 17: // rename (git sees D + A)
		p, _ := pick()
		f := st[p]
		delete(st, p)
		put(st, genNames[g.rng.Intn(len(genNames))], f)
	case op < 18: // chmod
		p, _ := pick()
		f := st[p]
		switch f.mode {
		case "100644":
			f.mode = "100755"
		case "100755":
			f.mode = "100644"
		}
		st[p] = f
	case op < 19: // type change: a file becomes a symlink or back
		p, _ := pick()
		f := st[p]
		if f.mode == "120000" {
			st[p] = genFile{"100644", g.lines(2)}
		} else {
			st[p] = genFile{"120000", "t/" + p}
		}
	default: // nothing: an empty commit
	}
}

func (g *genRepo) tick() int64 {
	switch n := g.rng.Intn(20); {
	case n == 0: // the same second as the previous commit
	case n == 1:
		g.when -= 1000 // clock skew
	default:
		g.when += int64(1 + g.rng.Intn(300))
	}
	return g.when
}

func (g *genRepo) commit(branch string, parents []int, st map[string]genFile) {
	g.commits++
	cw := g.tick()
	aw := cw - int64(g.rng.Intn(5000))
	msg := fmt.Sprintf("commit %d on %s", g.commits, branch)
	switch g.rng.Intn(6) {
	case 0:
		msg += "\nsecond subject line  \n\nbody paragraph\nwith ünïcode\n\n\nand more\n"
	case 1:
		msg = "\n\n  " + msg + "\t\n\nbody\n"
	case 2:
		msg += "\n\nbody only\n"
	}
	// Blobs first: fast-import wants them before the commit that uses them.
	paths := make([]string, 0, len(st))
	for p := range st {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	marks := make([]int, len(paths))
	for i, p := range paths {
		marks[i] = g.blob(st[p].content)
	}
	g.mark++
	m := g.mark
	fmt.Fprintf(&g.buf, "commit refs/heads/%s\nmark :%d\nauthor Ä Author <a%d@example.invalid> %d +0000\ncommitter C Committer <c@example.invalid> %d +0000\ndata %d\n%s\n",
		branch, m, g.rng.Intn(3), aw, cw, len(msg), msg)
	if len(parents) > 0 {
		fmt.Fprintf(&g.buf, "from :%d\n", parents[0])
	}
	for i := 1; i < len(parents); i++ {
		fmt.Fprintf(&g.buf, "merge :%d\n", parents[i])
	}
	g.buf.WriteString("deleteall\n")
	for i, p := range paths {
		fmt.Fprintf(&g.buf, "M %s :%d %s\n", st[p].mode, marks[i], quoteFI(p))
	}
	g.buf.WriteString("\n")
	g.tip[branch] = m
	g.state[branch] = st
}

func sortedKeys(st map[string]genFile) []string {
	out := make([]string, 0, len(st))
	for k := range st {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func clone(st map[string]genFile) map[string]genFile {
	out := make(map[string]genFile, len(st))
	for k, v := range st {
		out[k] = v
	}
	return out
}

// genHistory builds a repository of about n commits in dir with seed
// (with richEdit's edits too for a seed of richSeeds).
func genHistory(t testing.TB, dir string, seed int64, n int) {
	t.Helper()
	g := &genRepo{rng: rand.New(rand.NewSource(seed)), blobs: map[string]int{}, state: map[string]map[string]genFile{}, tip: map[string]int{}, when: 1_600_000_000}
	g.rich = seed >= richSeedBase
	g.heads = []string{"main"}
	g.commit("main", nil, map[string]genFile{"a.txt": {"100644", g.lines(5)}})
	for g.commits < n {
		b := g.heads[g.rng.Intn(len(g.heads))]
		switch r := g.rng.Intn(20); {
		case r == 0 && len(g.heads) < 6: // a new branch from a tip
			from := g.heads[g.rng.Intn(len(g.heads))]
			nb := fmt.Sprintf("b%d", len(g.heads))
			g.heads = append(g.heads, nb)
			st := clone(g.state[from])
			g.edit(st)
			g.commit(nb, []int{g.tip[from]}, st)
		case r == 1 && len(g.heads) < 6 && g.rng.Intn(3) == 0: // another root
			nb := fmt.Sprintf("r%d", len(g.heads))
			g.heads = append(g.heads, nb)
			st := map[string]genFile{}
			g.edit(st)
			g.commit(nb, nil, st)
		case r < 5 && len(g.heads) > 1: // a merge of another branch into b
			o := g.heads[g.rng.Intn(len(g.heads))]
			if o == b || g.tip[o] == g.tip[b] {
				continue
			}
			ours, theirs := g.state[b], g.state[o]
			var st map[string]genFile
			switch g.rng.Intn(4) {
			case 0:
				st = clone(ours) // "ours": TREESAME to the first parent
			case 1:
				st = clone(theirs) // TREESAME to the second parent
			default:
				st = clone(ours)
				// (Sorted: the draws, so the repository, depend on the seed alone.)
				for _, p := range sortedKeys(theirs) {
					if g.rng.Intn(2) == 0 {
						put(st, p, theirs[p])
					}
				}
				for _, p := range sortedKeys(ours) {
					if _, ok := theirs[p]; !ok && g.rng.Intn(3) == 0 {
						delete(st, p)
					}
				}
				if g.rng.Intn(3) == 0 {
					g.edit(st)
				}
			}
			parents := []int{g.tip[b], g.tip[o]}
			if g.rng.Intn(8) == 0 && len(g.heads) > 2 { // an octopus
				if x := g.heads[g.rng.Intn(len(g.heads))]; x != b && x != o && g.tip[x] != g.tip[b] && g.tip[x] != g.tip[o] {
					parents = append(parents, g.tip[x])
				}
			}
			g.commit(b, parents, st)
		default:
			st := clone(g.state[b])
			for range 1 + g.rng.Intn(3) {
				g.edit(st)
			}
			g.commit(b, []int{g.tip[b]}, st)
		}
	}
	g.buf.WriteString("reset refs/tags/v1\nfrom :" + strconv.Itoa(g.tip["main"]) + "\n\n")
	orcGit(t, dir, "init", "-q", "-b", "main")
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Env, cmd.Stdin = dir, orcEnv(), &g.buf
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	orcGit(t, dir, "tag", "-a", "-m", "annotated", "v1a", "v1")
	orcGit(t, dir, "checkout", "-q", "-f", "main")
}

// gitLog runs git log with the format fields this test compares and
// parses it, files included (--name-status --no-renames).
func gitLog(t *testing.T, dir string, args ...string) []LogCommit {
	t.Helper()
	const f = "--format=%x01%H%x00%P%x00%an%x00%ae%x00%at%x00%cn%x00%ce%x00%ct%x00%s%x00%b%x00"
	out := orcGit(t, dir, append([]string{"log", "--no-renames", "--name-status", "-z", f}, args...)...)
	var cs []LogCommit
	for _, chunk := range strings.Split(out, "\x01")[1:] {
		fs := strings.Split(chunk, "\x00")
		at, _ := strconv.ParseInt(fs[4], 10, 64)
		ct, _ := strconv.ParseInt(fs[7], 10, 64)
		c := LogCommit{CommitInfo: CommitInfo{ID: fs[0], Author: Person{fs[2], fs[3], time.Unix(at, 0).UTC().Format(time.RFC3339)},
			Subject: fs[8], Body: strings.TrimRight(fs[9], "\n")}}
		if fs[1] != "" {
			c.Parents = strings.Split(fs[1], " ")
		}
		if cm := (Person{fs[5], fs[6], time.Unix(ct, 0).UTC().Format(time.RFC3339)}); cm != c.Author {
			c.Committer = &cm
		}
		rest := fs[10:]
		for i := 0; i < len(rest); i++ {
			st := strings.TrimLeft(rest[i], "\n")
			if st == "" || i+1 >= len(rest) {
				continue
			}
			c.Files = append(c.Files, ChangedFile{Status: st, Path: rest[i+1]})
			i++
		}
		cs = append(cs, c)
	}
	return cs
}

// visibleOnly applies the policy to git's file lists as Log does.
func visibleOnly(r *Repo, cs []LogCommit) {
	for i := range cs {
		var keep []ChangedFile
		for _, f := range cs[i].Files {
			if r.visible(f.Path) {
				keep = append(keep, f)
			} else {
				cs[i].HiddenFiles++
			}
		}
		if len(keep) > maxLogFiles {
			keep, cs[i].FilesTruncated = keep[:maxLogFiles], true
		}
		cs[i].Files = keep
	}
}

func logAll(t *testing.T, r *Repo, o LogOptions) []LogCommit {
	t.Helper()
	var all []LogCommit
	for page := 0; ; page++ {
		res, err := r.Log(context.Background(), o)
		if err != nil {
			t.Fatalf("Log(%+v): %v", o, err)
		}
		all = append(all, res.Commits...)
		if res.NextCursor == "" {
			if res.Truncated {
				t.Fatalf("Log(%+v) truncated: %s", o, res.TruncatedReason)
			}
			return all
		}
		o.Cursor = res.NextCursor
	}
}

func diffLogs(want, got []LogCommit) string {
	for i := 0; i < len(want) || i < len(got); i++ {
		if i >= len(want) {
			return fmt.Sprintf("extra commit #%d %s", i, got[i].ID)
		}
		if i >= len(got) {
			return fmt.Sprintf("missing commit #%d %s (%d commits)", i, want[i].ID, len(got))
		}
		wj, _ := json.Marshal(want[i])
		gj, _ := json.Marshal(got[i])
		if w, g := string(wj), string(gj); w != g {
			return fmt.Sprintf("commit #%d:\n git: %s\nours: %s", i, w, g)
		}
	}
	return ""
}

// The differentials run on seeds 1 and 2 (300 commits each) and on
// richRepos small repositories with richEdit's edits (richCommits each),
// seeds richSeedBase on.
const (
	richSeedBase = 1000
	richRepos    = 25 // times SERVERFS_GIT_SCALE
	richCommits  = 24
)

// pick is a differential's sample size: small for a rich seed's small
// repository, big for the 300-commit ones.
func pick(rich bool, small, big int) int {
	if rich {
		return small
	}
	return big
}

// diffSeeds are the differentials' seeds and each one's commit count.
func diffSeeds() [][2]int64 {
	out := [][2]int64{{1, 300}, {2, 300}}
	for i := range int64(richRepos * gitScale()) {
		out = append(out, [2]int64{richSeedBase + i, richCommits})
	}
	return out
}

// historyRepos are the generated repositories the history tests share
// (generated once per test binary run).
var historyRepos = map[int64]string{}

func historyRepo(t *testing.T, seed int64, n int) (string, *Repo) {
	t.Helper()
	dir, ok := historyRepos[seed]
	if !ok {
		var err error
		if dir, err = os.MkdirTemp("", "sfshistory"); err != nil {
			t.Fatal(err)
		}
		genHistory(t, dir, seed, n)
		historyRepos[seed] = dir
	}
	r, err := Open(newWorkdirFS(t, "wd="+dir), "wd")
	if err != nil {
		t.Fatal(err)
	}
	return dir, r
}

func TestMain(m *testing.M) {
	wrapObjectStorer = func(s objectStorer) objectStorer { return strictStorer{s} }
	code := m.Run()
	for _, d := range historyRepos {
		if os.Getenv("SFS_KEEP") == "" {
			os.RemoveAll(d)
		}
	}
	os.Exit(code)
}

// TestLogMatchesGit: log equals git log (--no-renames --name-status) from
// every branch and tag, whole and restricted to paths (git's default
// history simplification, merges included), with since/until, read page
// by page through next_cursor.
func TestLogMatchesGit(t *testing.T) {
	orcNeedGit(t)
	orcSetHome(t)
	cases := 0
	for _, sn := range diffSeeds() {
		seed, rich := sn[0], sn[0] >= richSeedBase
		dir, r := historyRepo(t, seed, int(sn[1]))
		rng := rand.New(rand.NewSource(seed))
		revs := []string{"", "main", "v1", "v1a"}
		revs = append(revs, strings.Fields(orcGit(t, dir, "for-each-ref", "--format=%(refname:short)", "refs/heads"))...)
		allIDs := strings.Fields(orcGit(t, dir, "rev-list", "--all"))
		revs = append(revs, allIDs[rng.Intn(len(allIDs))][:9])
		check := func(o LogOptions, args ...string) {
			t.Helper()
			cases++
			want := gitLog(t, dir, args...)
			visibleOnly(r, want)
			got := logAll(t, r, o)
			if d := diffLogs(want, got); d != "" {
				t.Errorf("seed %d: log %+v (git log %q): %s", seed, o, args, d)
			}
		}
		for _, rev := range revs {
			gitRev := rev
			if gitRev == "" {
				gitRev = "HEAD"
			}
			check(LogOptions{Files: true, Rev: rev, Limit: 100}, gitRev)
			for range pick(rich, 1, 6) {
				var paths []string
				for range 1 + rng.Intn(2) {
					p := genNames[rng.Intn(len(genNames))]
					if rng.Intn(3) == 0 && strings.Contains(p, "/") {
						p = p[:strings.LastIndex(p, "/")] // a directory
					}
					if r.visible(p) {
						paths = append(paths, p)
					}
				}
				if len(paths) == 0 {
					continue
				}
				check(LogOptions{Files: true, Rev: rev, Paths: paths, Limit: 1 + rng.Intn(40)}, append([]string{gitRev, "--"}, paths...)...)
			}
		}
		// since and until, at commit dates of the history.
		dates := strings.Fields(orcGit(t, dir, "log", "--format=%ct", "HEAD"))
		for range pick(rich, 1, 6) {
			s, _ := strconv.ParseInt(dates[rng.Intn(len(dates))], 10, 64)
			u, _ := strconv.ParseInt(dates[rng.Intn(len(dates))], 10, 64)
			if s > u {
				s, u = u, s
			}
			check(LogOptions{Files: true, Since: time.Unix(s, 0).UTC().Format(time.RFC3339), Until: time.Unix(u, 0).UTC().Format(time.RFC3339), Limit: 50},
				"HEAD", fmt.Sprintf("--since=@%d", s), fmt.Sprintf("--until=@%d", u))
			check(LogOptions{Files: true, Since: time.Unix(s, 0).UTC().Format(time.RFC3339), Paths: []string{"src"}, Limit: 7},
				"HEAD", fmt.Sprintf("--since=@%d", s), "--", "src")
		}
	}
	t.Logf("%d log cases", cases)
}

// TestHistoryRefusals: the hostile corpus of revisions, paths and limits
// is refused with a code, and changes nothing.
func TestHistoryRefusals(t *testing.T) {
	orcNeedGit(t)
	orcSetHome(t)
	dir, r := historyRepo(t, 1, 300)
	orcGit(t, dir, "update-ref", "refs/remotes/origin/main", "HEAD")
	orcGit(t, dir, "update-ref", "refs/notes/x", "HEAD")
	orcGit(t, dir, "stash", "list")
	before := orcGit(t, dir, "for-each-ref")
	entries, _ := os.ReadDir(filepath.Join(dir, ".git"))
	ctx := context.Background()
	for _, c := range []struct {
		o    LogOptions
		code errs.Code
	}{
		{LogOptions{Files: true, Rev: "--output=probe-out"}, errs.InvalidArgument},
		{LogOptions{Files: true, Rev: "-p"}, errs.InvalidArgument},
		{LogOptions{Files: true, Rev: "HEAD@{1}"}, errs.InvalidArgument},
		{LogOptions{Files: true, Rev: "@{-1}"}, errs.InvalidArgument},
		{LogOptions{Files: true, Rev: "main..b1"}, errs.InvalidArgument},
		{LogOptions{Files: true, Rev: "main...b1"}, errs.InvalidArgument},
		{LogOptions{Files: true, Rev: "HEAD~1"}, errs.InvalidArgument},
		{LogOptions{Files: true, Rev: "HEAD^"}, errs.InvalidArgument},
		{LogOptions{Files: true, Rev: "HEAD:a.txt"}, errs.InvalidArgument},
		{LogOptions{Files: true, Rev: "refs/remotes/origin/main"}, errs.InvalidArgument},
		{LogOptions{Files: true, Rev: "origin/main"}, errs.RevNotFound},
		{LogOptions{Files: true, Rev: "refs/notes/x"}, errs.InvalidArgument},
		{LogOptions{Files: true, Rev: "refs/stash"}, errs.InvalidArgument},
		{LogOptions{Files: true, Rev: "FETCH_HEAD"}, errs.RevNotFound},
		{LogOptions{Files: true, Rev: "ORIG_HEAD"}, errs.RevNotFound},
		{LogOptions{Files: true, Rev: "../../etc/passwd"}, errs.InvalidArgument},
		{LogOptions{Files: true, Rev: "refs/heads/../../config"}, errs.InvalidArgument},
		{LogOptions{Files: true, Rev: "abc"}, errs.InvalidArgument},
		{LogOptions{Files: true, Rev: "0000000"}, errs.RevNotFound},
		{LogOptions{Files: true, Rev: strings.Repeat("a", 300)}, errs.InvalidArgument},
		{LogOptions{Files: true, Rev: "a\nb"}, errs.InvalidArgument},
		{LogOptions{Files: true, Rev: "--all"}, errs.InvalidArgument},
		{LogOptions{Files: true, Limit: 101}, errs.InvalidArgument},
		{LogOptions{Files: true, Limit: 1 << 40}, errs.InvalidArgument},
		{LogOptions{Files: true, Paths: []string{"-p"}}, errs.InvalidArgument},
		{LogOptions{Files: true, Paths: []string{":(glob)*"}}, errs.InvalidArgument},
		{LogOptions{Files: true, Paths: []string{".env"}}, errs.DeniedPath},
		{LogOptions{Files: true, Paths: []string{".hidden/secret.txt"}}, errs.HiddenPathNotAllowed},
		{LogOptions{Files: true, Paths: []string{"../x"}}, errs.PathOutsideWorkdir},
		{LogOptions{Files: true, Paths: []string{"/etc"}}, errs.InvalidPath},
		{LogOptions{Files: true, Since: "yesterday"}, errs.InvalidArgument},
		{LogOptions{Files: true, Until: "--since=1"}, errs.InvalidArgument},
		{LogOptions{Files: true, Cursor: "x"}, errs.InvalidArgument},
		{LogOptions{Files: true, Cursor: "0000000000000000000000000000000000000000.1.00000000"}, errs.InvalidArgument},
	} {
		_, err := r.Log(ctx, c.o)
		if errs.CodeOf(err) != c.code {
			t.Errorf("Log(%+v) = %v, want %s", c.o, err, c.code)
		}
	}
	if after := orcGit(t, dir, "for-each-ref"); after != before {
		t.Errorf("refs changed:\n%s\n%s", before, after)
	}
	after, _ := os.ReadDir(filepath.Join(dir, ".git"))
	if len(after) != len(entries) {
		t.Errorf(".git changed: %d entries, then %d", len(entries), len(after))
	}
	if _, err := os.Stat(filepath.Join(dir, "probe-out")); err == nil {
		t.Errorf("--output=probe-out wrote a file")
	}
	tf := someTextFile(t, dir, r)
	for _, c := range []struct {
		rev, path  string
		start, end int
		code       errs.Code
	}{
		{"--output=probe-out", "a.txt", 0, 0, errs.InvalidArgument},
		{"HEAD@{1}", "a.txt", 0, 0, errs.InvalidArgument},
		{"", "-L1,2", 0, 0, errs.InvalidArgument},
		{"", ".env", 0, 0, errs.DeniedPath},
		{"", ".hidden/secret.txt", 0, 0, errs.HiddenPathNotAllowed},
		{"", "src", 0, 0, errs.PathNotFound},
		{"", "no/such.txt", 0, 0, errs.PathNotFound},
		{"", tf, 1, 1 << 40, errs.InvalidArgument},
		{"", tf, 1 << 30, 0, errs.LineOutOfRange},
		{"", tf, 5, 2, errs.InvalidArgument},
	} {
		if _, err := r.Blame(ctx, c.rev, c.path, c.start, c.end); errs.CodeOf(err) != c.code {
			t.Errorf("Blame(%q, %q, %d, %d) = %v, want %s", c.rev, c.path, c.start, c.end, err, c.code)
		}
	}
	// A walk cap answers what it found, truncated.
	res, err := r.Log(ctx, LogOptions{Files: true, Paths: []string{"no/such/path"}, MaxWalk: 50})
	if err != nil || !res.Truncated || res.TruncatedReason != "commit_cap" || res.NextCursor != "" {
		t.Errorf("capped walk: %+v %v", res, err)
	}
	// Hidden files are counted, never named, in a log without paths.
	all := logAll(t, r, LogOptions{Files: true, Limit: 100})
	hidden := 0
	for _, c := range all {
		hidden += c.HiddenFiles
		for _, f := range c.Files {
			if strings.Contains(f.Path, ".hidden") || strings.Contains(f.Path, ".env") || strings.Contains(f.Path, ".cache") {
				t.Fatalf("hidden path named: %+v", c)
			}
		}
	}
	if hidden == 0 {
		t.Errorf("the generated history has no hidden file changes to count")
	}
}

// someTextFile is a visible text file of HEAD.
func someTextFile(t *testing.T, dir string, r *Repo) string {
	t.Helper()
	for _, f := range strings.Split(orcGit(t, dir, "ls-tree", "-r", "-z", "--name-only", "HEAD"), "\x00") {
		if f != "" && r.visible(f) && orcGit(t, dir, "cat-file", "-t", "HEAD:"+f) == "blob\n" && strings.HasPrefix(orcGit(t, dir, "show", "HEAD:"+f), "line ") &&
			strings.Count(orcGit(t, dir, "show", "HEAD:"+f), "\n") >= 5 {
			return f
		}
	}
	t.Fatal("HEAD has no text file of 5 lines")
	return ""
}

// TestHistoryShallowAndMissing: a shallow clone's boundary commits are
// roots (as git shows them) marked shallow; a missing object is
// REPO_INCOMPLETE.
func TestHistoryShallowAndMissing(t *testing.T) {
	orcNeedGit(t)
	orcSetHome(t)
	src, _ := historyRepo(t, 1, 300)
	dir := t.TempDir()
	orcGit(t, dir, "clone", "-q", "--depth=5", "--no-local", "file://"+src, "c")
	dir = filepath.Join(dir, "c")
	r, err := Open(newWorkdirFS(t, "wd="+dir), "wd")
	if err != nil {
		t.Fatal(err)
	}
	want := gitLog(t, dir, "HEAD")
	visibleOnly(r, want)
	got := logAll(t, r, LogOptions{Files: true, Limit: 100})
	shallow := 0
	for i := range got {
		if got[i].Shallow {
			shallow++
			got[i].Shallow = false
		}
	}
	if d := diffLogs(want, got); d != "" || shallow == 0 {
		t.Fatalf("shallow log (%d boundary commits): %s", shallow, d)
	}
	last := got[len(got)-1]
	if res, err := r.Show(context.Background(), last.ID, nil, 0); err != nil || !res.Commit.Shallow || len(res.Commit.Parents) != 0 {
		t.Fatalf("show of a shallow boundary: %+v %v", res, err)
	}
	// Blame in the shallow clone: git's answer, the boundary marked.
	bf := someTextFile(t, dir, r)
	bl := gitBlame(t, dir, "HEAD", bf, 1, len(strings.Split(strings.TrimSuffix(orcGit(t, dir, "show", "HEAD:"+bf), "\n"), "\n")))
	bres, err := r.Blame(context.Background(), "", bf, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	boundary := false
	i := 0
	for _, run := range bres.Runs {
		boundary = boundary || bres.Commits[run.Commit].Boundary
		for k := range run.Lines {
			if i >= len(bl) || bl[i][0] != run.Commit || bl[i][1] != strconv.Itoa(run.OrigLine+k) {
				t.Fatalf("shallow blame line %d: git %v, ours %+v", i+1, bl[min(i, len(bl)-1)], run)
			}
			i++
		}
	}
	if i != len(bl) || !boundary {
		t.Fatalf("shallow blame: %d lines of %d, boundary %v", i, len(bl), boundary)
	}
	// Remove one commit object of a full copy: REPO_INCOMPLETE.
	full := filepath.Join(t.TempDir(), "f")
	orcGit(t, filepath.Dir(full), "clone", "-q", "--no-local", "file://"+src, "f")
	ids := strings.Fields(orcGit(t, full, "rev-list", "HEAD"))
	victim, child := ids[20], ""
	for _, l := range strings.Split(orcGit(t, full, "rev-list", "--parents", "HEAD"), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == victim {
			child = f[0]
		}
	}
	packs, _ := filepath.Glob(filepath.Join(full, ".git/objects/pack/*.pack"))
	for _, p := range packs {
		data, _ := os.ReadFile(p)
		os.Remove(p)
		os.Remove(strings.TrimSuffix(p, ".pack") + ".idx")
		cmd := exec.Command("git", "unpack-objects", "-q")
		cmd.Dir, cmd.Env, cmd.Stdin = full, orcEnv(), bytes.NewReader(data)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("unpack: %v %s", err, out)
		}
	}
	if child == "" {
		t.Fatal("no commit has the victim as first parent")
	}
	os.Remove(filepath.Join(full, ".git/objects", victim[:2], victim[2:]))
	r2, err := Open(newWorkdirFS(t, "wd="+full), "wd")
	if err != nil {
		t.Fatal(err)
	}
	_, err = r2.Log(context.Background(), LogOptions{Files: true, Limit: 100})
	if err == nil {
		t.Fatal("log over a missing commit succeeded")
	}
	if errs.CodeOf(err) != errs.RepoIncomplete {
		t.Fatalf("missing commit: %v", err)
	}
	if _, err := r2.Show(context.Background(), victim, nil, 0); errs.CodeOf(err) != errs.RevNotFound {
		t.Fatalf("show of a missing commit: %v", err)
	}
	if _, err := r2.Show(context.Background(), child, nil, 0); errs.CodeOf(err) != errs.RepoIncomplete {
		t.Fatalf("show of a commit whose parent is missing: %v", err)
	}
}

// gitShowFiles is git show's --name-status and --numstat of each commit
// (--no-renames, merges against their first parent), keyed by commit.
func gitShowFiles(t *testing.T, dir string, ids []string, paths []string) map[string][]ShowFile {
	t.Helper()
	split := func(out string) map[string][]string {
		m := map[string][]string{}
		for _, chunk := range strings.Split(out, "\x01")[1:] {
			id, rest, _ := strings.Cut(chunk, "\x00")
			var toks []string
			for _, tok := range strings.Split(strings.TrimPrefix(rest, "\n"), "\x00") {
				if tok != "" {
					toks = append(toks, tok)
				}
			}
			m[id] = toks
		}
		return m
	}
	args := func(kind string) []string {
		a := append([]string{"show", "-z", "--format=%x01%H", "--no-renames", "--diff-merges=first-parent", kind}, ids...)
		if len(paths) > 0 {
			a = append(append(a, "--"), paths...)
		}
		return a
	}
	names, stats := split(orcGit(t, dir, args("--name-status")...)), split(orcGit(t, dir, args("--numstat")...))
	out := map[string][]ShowFile{}
	for _, id := range ids {
		ns, st := names[id], stats[id]
		var fs []ShowFile
		for i := 0; i+1 < len(ns); i += 2 {
			fs = append(fs, ShowFile{Status: ns[i], Path: ns[i+1]})
		}
		if len(st) != len(fs) {
			t.Fatalf("%s: %d names, %d stats", id, len(fs), len(st))
		}
		for i, s := range st {
			f := strings.SplitN(s, "\t", 3)
			if f[2] != fs[i].Path {
				t.Fatalf("%s: numstat %q, name-status %q", id, f[2], fs[i].Path)
			}
			if f[0] == "-" {
				fs[i].Binary = true
				continue
			}
			fs[i].Added, _ = strconv.Atoi(f[0])
			fs[i].Deleted, _ = strconv.Atoi(f[1])
		}
		out[id] = fs
	}
	return out
}

// TestShowMatchesGit: show's file list and line counts equal git show's
// (--no-renames --diff-merges=first-parent --name-status/--numstat), and
// its patch applies to the parent's tree with git apply --check, for
// commits of every kind (roots, merges, empty, binary, type changes).
func TestShowMatchesGit(t *testing.T) {
	orcNeedGit(t)
	orcSetHome(t)
	cases, large := 0, 0
	for _, sn := range diffSeeds() {
		seed, rich := sn[0], sn[0] >= richSeedBase
		dir, r := historyRepo(t, seed, int(sn[1]))
		rng := rand.New(rand.NewSource(seed))
		all := strings.Fields(orcGit(t, dir, "rev-list", "--all"))
		var ids []string
		for _, id := range all {
			if rng.Intn(5) == 0 || len(strings.Fields(orcGit(t, dir, "rev-list", "--parents", "-n1", id))) != 2 {
				ids = append(ids, id) // a sample, and every root and merge
			}
		}
		want := gitShowFiles(t, dir, ids, nil)
		index := filepath.Join(t.TempDir(), "index")
		for _, id := range ids {
			cases++
			var paths []string
			rev := id
			if rng.Intn(3) == 0 {
				rev = id[:7+rng.Intn(10)]
			}
			res, err := r.Show(context.Background(), rev, paths, MaxDiffBytes)
			if err != nil {
				t.Fatalf("seed %d: Show(%s): %v", seed, rev, err)
			}
			var visible []ShowFile
			hidden := 0
			for _, f := range want[id] {
				if r.visible(f.Path) {
					visible = append(visible, f)
				} else {
					hidden++
				}
			}
			// (Files that are not UTF-8 have git's counts, and a section
			// in Latin-1: the patch must survive JSON whole.)
			var back string
			if j, _ := json.Marshal(res.Patch); json.Unmarshal(j, &back) != nil || back != res.Patch {
				t.Fatalf("seed %d: show %s: the patch does not survive JSON:\n%q", seed, id, res.Patch)
			}
			files := slices.Clone(res.Files)
			for i := range files {
				files[i].NotUTF8 = false
				if files[i].Added+files[i].Deleted > 1000 {
					large++
				}
			}
			wj, _ := json.Marshal(visible)
			gj, _ := json.Marshal(files)
			if len(visible) == 0 {
				wj = []byte("[]")
			}
			if string(wj) != string(gj) || hidden != res.HiddenFiles || res.Commit.ID != id || res.Truncated {
				t.Errorf("seed %d: show %s:\n git: %s (hidden %d)\nours: %s (hidden %d, truncated %v)", seed, id, wj, hidden, gj, res.HiddenFiles, res.Truncated)
				continue
			}
			// The patch applies to the parent's tree.
			parent := "--empty"
			if ps := res.Commit.Parents; len(ps) > 0 {
				parent = ps[0]
			}
			cmd := exec.Command("git", "read-tree", parent)
			cmd.Dir, cmd.Env = dir, append(orcEnv(), "GIT_INDEX_FILE="+index)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("read-tree: %v %s", err, out)
			}
			var dfs []DiffFile
			for _, f := range res.Files {
				dfs = append(dfs, DiffFile{Path: f.Path, Binary: f.Binary, NotUTF8: f.NotUTF8})
			}
			// Each file's hunks are git show's, byte for byte, the
			// function name git puts after a hunk's "@@ ... @@" included.
			gitHunks := patchHunks(orcGit(t, dir, "show", "--format=", "--no-renames", "--diff-merges=first-parent", "-p", id))
			for hdr, h := range patchHunks(fromLatin1(res.Patch, dfs)) {
				if h != gitHunks[hdr] {
					t.Errorf("seed %d: show %s: %s: hunks differ from git show's:\n git:\n%s\nours:\n%s", seed, id, hdr, gitHunks[hdr], h)
				}
			}
			if p := dropBinary(fromLatin1(res.Patch, dfs), dfs); p != "" {
				cmd = exec.Command("git", "apply", "--cached", "--check", "-")
				cmd.Dir, cmd.Env, cmd.Stdin = dir, append(orcEnv(), "GIT_INDEX_FILE="+index), strings.NewReader(p)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("seed %d: show %s: git apply --check: %v %s\n%s", seed, id, err, out, p)
				}
			}
		}
		// Restricted to paths.
		for range pick(rich, 3, 20) {
			id := all[rng.Intn(len(all))]
			p := genNames[rng.Intn(len(genNames))]
			if rng.Intn(2) == 0 && strings.Contains(p, "/") {
				p = p[:strings.Index(p, "/")]
			}
			if !r.visible(p) {
				continue
			}
			cases++
			var w []ShowFile
			for _, f := range gitShowFiles(t, dir, []string{id}, []string{p})[id] {
				if r.visible(f.Path) {
					w = append(w, f)
				}
			}
			res, err := r.Show(context.Background(), id, []string{p}, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i := range res.Files {
				res.Files[i].NotUTF8 = false
			}
			wj, _ := json.Marshal(w)
			gj, _ := json.Marshal(res.Files)
			if len(w) == 0 {
				wj = []byte("[]")
			}
			if string(wj) != string(gj) {
				t.Errorf("seed %d: show %s -- %s:\n git: %s\nours: %s", seed, id, p, wj, gj)
			}
		}
	}
	t.Logf("%d show cases (%d files with over 1,000 lines added and deleted)", cases, large)
}

// patchHunks splits a git patch by its "diff --git" lines into each
// file's hunks: the text from its first "@@".
func patchHunks(patch string) map[string]string {
	out := map[string]string{}
	hdr, in := "", false
	var b strings.Builder
	flush := func() {
		if hdr != "" {
			out[hdr] = b.String()
		}
		b.Reset()
	}
	for _, l := range strings.SplitAfter(patch, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			flush()
			hdr, in = strings.TrimSuffix(l, "\n"), false
		case strings.HasPrefix(l, "@@ -"):
			in = true
			b.WriteString(l)
		case in:
			b.WriteString(l)
		}
	}
	flush()
	return out
}

// gitBlame is git blame --porcelain's (commit, original line) per line.
func gitBlame(t *testing.T, dir, rev, path string, start, end int) [][3]string {
	t.Helper()
	out := orcGit(t, dir, "blame", "--porcelain", fmt.Sprintf("-L%d,%d", start, end), rev, "--", path)
	var lines [][3]string
	group := 0                   // the first line of the current group
	names := map[string]string{} // commit -> the file name git last gave it
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if name, ok := strings.CutPrefix(l, "filename "); ok {
			for i := group; i < len(lines); i++ {
				lines[i][2] = name
			}
			names[lines[group][0]] = name
			continue
		}
		if len(f) >= 3 && len(f[0]) == 40 && !strings.HasPrefix(l, "\t") {
			if _, err := strconv.Atoi(f[1]); err == nil {
				if len(f) == 4 {
					group = len(lines)
				}
				// git names the file only with a commit's first group
				// (or when the commit has several paths).
				lines = append(lines, [3]string{f[0], f[1], names[f[0]]})
			}
		}
	}
	return lines
}

// unquoteC undoes git's quote_c_style (for the names blame prints).
func unquoteC(s string) string {
	if !strings.HasPrefix(s, "\"") {
		return s
	}
	u, err := strconv.Unquote(s)
	if err != nil {
		return s
	}
	return u
}

// TestBlameMatchesGit: blame's (commit, original line, file name) of
// every line equals git blame --porcelain's, for files and line ranges picked at
// random commits of the generated histories.
func TestBlameMatchesGit(t *testing.T) {
	orcNeedGit(t)
	orcSetHome(t)
	cases, renamed, hiddenOrigins := 0, 0, 0
	for _, sn := range diffSeeds() {
		seed, rich := sn[0], sn[0] >= richSeedBase
		dir, r := historyRepo(t, seed, int(sn[1]))
		rng := rand.New(rand.NewSource(seed))
		all := strings.Fields(orcGit(t, dir, "rev-list", "--all"))
		for n := 0; n < pick(rich, 6, 60); {
			id := all[rng.Intn(len(all))]
			var files []string
			for _, f := range strings.Split(orcGit(t, dir, "ls-tree", "-r", "-z", "--name-only", id), "\x00") {
				if f != "" && r.visible(f) {
					files = append(files, f)
				}
			}
			if len(files) == 0 {
				continue
			}
			if rich && rng.Intn(3) != 0 { // richEdit's files, where they are
				var rf []string
				for _, f := range files {
					if slices.Contains(richNames, f) {
						rf = append(rf, f)
					}
				}
				if len(rf) > 0 {
					files = rf
				}
			}
			f := files[rng.Intn(len(files))]
			total := len(strings.SplitAfter(strings.TrimSuffix(orcGit(t, dir, "cat-file", "-p", id+":"+f), "\n"), "\n"))
			if out := orcGit(t, dir, "cat-file", "-s", id+":"+f); strings.TrimSpace(out) == "0" {
				continue
			}
			n++
			cases++
			start, end := 1, total
			if rng.Intn(3) == 0 {
				start = 1 + rng.Intn(total)
				end = start + rng.Intn(total-start+1)
			}
			end = min(end, start+MaxBlameLines-1)
			want := gitBlame(t, dir, id, f, start, end)
			res, err := r.Blame(context.Background(), id, f, start, end)
			if err != nil {
				t.Fatalf("seed %d: Blame(%s, %q, %d, %d): %v", seed, id, f, start, end, err)
			}
			var got [][3]string
			for _, run := range res.Runs {
				name := f
				if run.OrigPath != "" {
					name = run.OrigPath
				} else if run.OrigPathHidden {
					name = "(hidden)"
					hiddenOrigins++
				}
				if run.OrigPath != "" {
					renamed++
				}
				for i := range run.Lines {
					got = append(got, [3]string{run.Commit, strconv.Itoa(run.OrigLine + i), quotePath(name)})
				}
			}
			for i := range want {
				if !r.visible(unquoteC(want[i][2])) {
					want[i][2] = "(hidden)"
				}
			}
			if fmt.Sprint(want) != fmt.Sprint(got) {
				for i := range want {
					if i >= len(got) || want[i] != got[i] {
						t.Errorf("seed %d: blame %s %q -L%d,%d: line %d: git %v, ours %v", seed, id, f, start, end, start+i, want[i], got[min(i, len(got)-1)])
						break
					}
				}
				if len(want) != len(got) {
					t.Errorf("seed %d: blame %s %q: %d lines from git, %d ours", seed, id, f, len(want), len(got))
				}
			}
		}
	}
	t.Logf("%d blame cases (%d runs from a renamed file, %d from a hidden one)", cases, renamed, hiddenOrigins)
}

// TestLogPackLayouts: log (read through pack.Reader) equals git log however
// the objects are stored: deep OFS_DELTA chains, REF_DELTA packs, several
// packs, and loose objects beside packs (which go-git's storage reads).
func TestLogPackLayouts(t *testing.T) {
	orcNeedGit(t)
	orcSetHome(t)
	src, _ := historyRepo(t, 1, 300)
	layouts := map[string][][]string{
		"deep-ofs":  {{"repack", "-adfq", "--depth=4000", "--window=50"}},
		"ref-delta": {{"-c", "pack.useDeltaBaseOffset=false", "repack", "-adfq"}},
		"loose-on-packs": {{"repack", "-adq"},
			{"-c", "user.name=L", "-c", "user.email=l@example.com", "commit", "-q", "--allow-empty", "-m", "loose one"},
			{"-c", "user.name=L", "-c", "user.email=l@example.com", "commit", "-q", "--allow-empty", "-m", "loose two\n\nbody"}},
		"two-packs": {{"repack", "-adq"},
			{"-c", "user.name=L", "-c", "user.email=l@example.com", "commit", "-q", "--allow-empty", "-m", "second pack"},
			{"repack", "-dq"}},
	}
	for name, steps := range layouts {
		dir := filepath.Join(t.TempDir(), name)
		orcGit(t, filepath.Dir(dir), "clone", "-q", "--no-local", "file://"+src, name)
		for _, s := range steps {
			orcGit(t, dir, s...)
		}
		r, err := Open(newWorkdirFS(t, "wd="+dir), "wd")
		if err != nil {
			t.Fatal(err)
		}
		for _, paths := range [][]string{nil, {"src"}, {"a.txt", "x/y.txt"}, {"src/lib/deep/x.go"}} {
			want := gitLog(t, dir, append([]string{"HEAD", "--"}, paths...)...)
			visibleOnly(r, want)
			got := logAll(t, r, LogOptions{Files: true, Paths: paths, Limit: 100})
			if d := diffLogs(want, got); d != "" {
				t.Fatalf("%s: log -- %q: %s", name, paths, d)
			}
		}
	}
}

// TestLogNonCanonicalModes: a tree entry written with a legacy mode
// (100664) is the same as 100644 to git's tree walk; log -- path over a
// commit that only rewrites the mode that way skips it, as git log does.
func TestLogNonCanonicalModes(t *testing.T) {
	orcNeedGit(t)
	orcSetHome(t)
	dir := t.TempDir()
	orcGit(t, dir, "init", "-q", "-b", "main")
	run := func(stdin []byte, args ...string) string {
		t.Helper()
		out, err := orcRun(dir, stdin, args...)
		if err != nil {
			t.Fatalf("git %q: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	hexID := func(s string) []byte { b, _ := hex.DecodeString(s); return b }
	blob := run([]byte("hello\n"), "hash-object", "-w", "--stdin")
	other := run([]byte("other\n"), "hash-object", "-w", "--stdin")
	tree := func(mode, otherBlob string) string {
		sub := append([]byte(mode+" f.txt\x00"), hexID(blob)...)
		subID := run(sub, "hash-object", "-t", "tree", "--literally", "-w", "--stdin")
		root := append([]byte("100644 a.txt\x00"), hexID(otherBlob)...)
		root = append(append(root, "40000 d\x00"...), hexID(subID)...)
		return run(root, "hash-object", "-t", "tree", "--literally", "-w", "--stdin")
	}
	c1 := run([]byte("one\n"), "commit-tree", tree("100644", blob))
	c2 := run([]byte("legacy mode\n"), "commit-tree", tree("100664", other), "-p", c1)
	c3 := run([]byte("back\n"), "commit-tree", tree("100644", blob), "-p", c2)
	run(nil, "update-ref", "refs/heads/main", c3)
	run(nil, "repack", "-adq")
	r, err := Open(newWorkdirFS(t, "wd="+dir), "wd")
	if err != nil {
		t.Fatal(err)
	}
	for _, paths := range [][]string{{"d/f.txt"}, {"d"}, {"a.txt"}} {
		want := gitLog(t, dir, append([]string{"HEAD", "--"}, paths...)...)
		got := logAll(t, r, LogOptions{Files: true, Paths: paths, Limit: 100})
		if d := diffLogs(want, got); d != "" {
			t.Fatalf("log -- %q: %s", paths, d)
		}
	}
}

// TestBlameTrimsCommonTail: git blame's diff leaves a common tail of whole
// 1 KiB blocks out (xdi_diff's trim_common_tail), which decides which copy
// of a repeated line is the new one: here a "}" inserted into a run of
// 600 is line 91 for git (the run ends at the trim), not line 602.
func TestBlameTrimsCommonTail(t *testing.T) {
	orcNeedGit(t)
	orcSetHome(t)
	dir := t.TempDir()
	orcGit(t, dir, "init", "-q", "-b", "main")
	write := func(n int) {
		if err := os.WriteFile(filepath.Join(dir, "f.c"), []byte("a\n"+strings.Repeat("}\n", n)), 0o644); err != nil {
			t.Fatal(err)
		}
		orcGit(t, dir, "add", "f.c")
		orcGit(t, dir, "commit", "-q", "-m", fmt.Sprintf("%d braces", n))
	}
	write(600)
	write(601)
	want := gitBlame(t, dir, "HEAD", "f.c", 1, 500)
	head := strings.TrimSpace(orcGit(t, dir, "rev-parse", "HEAD"))
	if want[90][0] != head {
		t.Fatalf("git blames line 91 on %s, not on HEAD: the premise changed", want[90][0])
	}
	r, err := Open(newWorkdirFS(t, "wd="+dir), "wd")
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Blame(context.Background(), "HEAD", "f.c", 1, 500)
	if err != nil {
		t.Fatal(err)
	}
	var got [][3]string
	for _, run := range res.Runs {
		for i := range run.Lines {
			got = append(got, [3]string{run.Commit, strconv.Itoa(run.OrigLine + i), "f.c"})
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		for i := range want {
			if i >= len(got) || got[i] != want[i] {
				t.Fatalf("line %d: git %v, ours %v", i+1, want[i], got[min(i, len(got)-1)])
			}
		}
		t.Fatalf("%d lines from git, %d ours", len(want), len(got))
	}
}

// TestLogCommitGraphMatchesGit: log walks with the commit-graph, without
// and with changed-path Bloom filters (version 1, as git writes them, and
// the same file marked version 2, whose hash agrees on these ASCII paths),
// and still equals git log: whole, by paths and directories, with since.
// A damaged graph (truncated, a flipped byte, a chunk offset past the end
// with its checksum made good) is not used and changes no answer.
func TestLogCommitGraphMatchesGit(t *testing.T) {
	orcNeedGit(t)
	orcSetHome(t)
	seeds := diffSeeds()[:6] // the two 300-commit histories and four small ones
	states := []string{"graph", "bloom", "bloom-v2", "stale", "truncated", "flipped", "bad-offset"}
	for _, sn := range seeds {
		seed, rich := sn[0], sn[0] >= richSeedBase
		src, _ := historyRepo(t, seed, int(sn[1]))
		for _, state := range states {
			dir := filepath.Join(t.TempDir(), state)
			orcGit(t, filepath.Dir(dir), "clone", "-q", "--no-local", "file://"+src, state)
			args := []string{"commit-graph", "write", "--reachable"}
			if state != "graph" {
				args = append(args, "--changed-paths")
			}
			orcGit(t, dir, args...)
			// git itself walks without the graph: the reference.
			orcGit(t, dir, "config", "core.commitGraph", "false")
			cg := filepath.Join(dir, ".git/objects/info/commit-graph")
			damageGraph(t, cg, state)
			if state == "stale" {
				// Commits the graph does not hold: read from the objects.
				if err := os.MkdirAll(filepath.Join(dir, "after"), 0o755); err != nil {
					t.Fatal(err)
				}
				for i, p := range []string{"after/one.txt", "after/one.txt", "after/two.txt"} {
					if err := os.WriteFile(filepath.Join(dir, p), []byte(fmt.Sprintf("after the graph %d\n", i)), 0o644); err != nil {
						t.Fatal(err)
					}
					orcGit(t, dir, "add", "--", p)
					orcGit(t, dir, "-c", "user.name=S", "-c", "user.email=s@example.com", "commit", "-q", "-m", "after the graph")
				}
			}
			r, err := Open(newWorkdirFS(t, "wd="+dir), "wd")
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewSource(seed))
			walked, skipped := graphCommits.Load(), bloomSkips.Load()
			check := func(o LogOptions, args ...string) {
				t.Helper()
				want := gitLog(t, dir, args...)
				visibleOnly(r, want)
				got := logAll(t, r, o)
				if d := diffLogs(want, got); d != "" {
					t.Errorf("seed %d, %s: log %+v (git log %q): %s", seed, state, o, args, d)
				}
			}
			check(LogOptions{Files: true, Limit: 100}, "HEAD")
			for range pick(rich, 4, 12) {
				var paths []string
				for range 1 + rng.Intn(2) {
					p := genNames[rng.Intn(len(genNames))]
					if rng.Intn(3) == 0 && strings.Contains(p, "/") {
						p = p[:strings.LastIndex(p, "/")]
					}
					// The file marked version 2 holds version 1's hashes,
					// which agree only on ASCII (other paths lose commits).
					if r.visible(p) && (state != "bloom-v2" || isASCII(p)) {
						paths = append(paths, p)
					}
				}
				if len(paths) > 0 {
					check(LogOptions{Files: true, Rev: "main", Paths: paths, Limit: 1 + rng.Intn(40)}, append([]string{"main", "--"}, paths...)...)
				}
			}
			check(LogOptions{Files: true, Paths: []string{"src"}, Limit: 7}, "HEAD", "--", "src")
			if state == "stale" {
				check(LogOptions{Files: true, Paths: []string{"after/one.txt", "src"}, Limit: 9}, "HEAD", "--", "after/one.txt", "src")
			}
			dates := strings.Fields(orcGit(t, dir, "log", "--format=%ct", "HEAD"))
			s, _ := strconv.ParseInt(dates[len(dates)/2], 10, 64)
			check(LogOptions{Files: true, Since: time.Unix(s, 0).UTC().Format(time.RFC3339), Paths: []string{"src"}, Limit: 50},
				"HEAD", fmt.Sprintf("--since=@%d", s), "--", "src")
			usedGraph, usedBloom := graphCommits.Load() > walked, bloomSkips.Load() > skipped
			wantBloom := strings.HasPrefix(state, "bloom") || state == "stale"
			if wantGraph := state == "graph" || wantBloom; usedGraph != wantGraph || usedBloom != wantBloom {
				t.Errorf("seed %d, %s: walked from the graph %v, Bloom filters spared diffs %v", seed, state, usedGraph, usedBloom)
			}
		}
	}
}

// damageGraph changes the commit-graph file at p as state names.
func damageGraph(t *testing.T, p, state string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	resum := func() {
		s := sha1.Sum(b[:len(b)-20])
		copy(b[len(b)-20:], s[:])
	}
	chunk := func(id string) int {
		for i := 0; i < int(b[6]); i++ {
			if string(b[8+i*12:12+i*12]) == id {
				return 8 + i*12
			}
		}
		t.Fatalf("no %s chunk in %s", id, p)
		return 0
	}
	switch state {
	case "bloom-v2":
		off := binary.BigEndian.Uint64(b[chunk("BDAT")+4:])
		if v := binary.BigEndian.Uint32(b[off:]); v != 1 {
			t.Fatalf("git wrote Bloom filters of version %d", v)
		}
		binary.BigEndian.PutUint32(b[off:], 2)
		resum()
	case "truncated":
		b = b[:len(b)/2]
	case "flipped":
		b[binary.BigEndian.Uint64(b[chunk("CDAT")+4:])+21] ^= 1 // a first parent
	case "bad-offset":
		binary.BigEndian.PutUint64(b[chunk("CDAT")+4:], uint64(len(b)))
		resum()
	default:
		return
	}
	// A new file, as git writes one (the cache knows files by identity).
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o444); err != nil {
		t.Fatal(err)
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
