package bridge

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/serverfs/serverfs/internal/settings"
)

// hostTools are the PATH every process the bridge starts gets (and
// where an action's program is looked up) and the git and gh found on
// it. The bridge resolves them once, when it starts: git and push_repo,
// release and gh run unsandboxed with the operator's credentials, so
// neither may come from a directory an agent or an action can write.
type hostTools struct {
	path    string // the PATH, cleaned (cleanPath)
	git, gh string // absolute; "" when not on path
}

// pathGuard is a directory an agent or an action can write (a workdir
// root, the workspaces dir, the temporary directory where each action
// gets its private HOME/TMPDIR): no PATH entry the bridge keeps lies
// under it. what names it in the operator's messages.
type pathGuard struct{ dir, what string }

// droppedPath is a PATH entry cleanPath left out: its position (from 1),
// the entry and why.
type droppedPath struct {
	pos   int
	entry string
	why   string
}

// errNoPath: cleaning left nothing. An empty PATH is no answer — a shell
// reads an empty entry, or a missing PATH, as the current directory.
var errNoPath = errors.New("no PATH entry is left once those that are empty, relative or under a directory an agent or action can write are dropped; " +
	"give the bridge a PATH of directories outside the workdirs, the workspaces dir and the temporary directory")

// resolveHostTools cleans pathVar (DefaultPath when empty) against guards
// and finds git and gh on what is left.
func resolveHostTools(pathVar string, guards []pathGuard) (*hostTools, []droppedPath, error) {
	if pathVar == "" {
		pathVar = DefaultPath
	}
	kept, dropped := cleanPath(pathVar, guards)
	if kept == "" {
		return nil, dropped, errNoPath
	}
	t := &hostTools{path: kept}
	// Not found is not fatal: a bridge may serve actions only; push and
	// release then say git (or gh) cannot be found.
	t.git, _ = lookPath("git", kept, "")
	t.gh, _ = lookPath("gh", kept, "")
	return t, dropped, nil
}

// cleanPath keeps the PATH entries that are absolute, have no "." or
// ".." component (after a symlink, ".." may lead anywhere) and lie under
// no guard, compared as given and with symlinks resolved (an entry that
// is, or passes through, a symlink into a workdir lies under it).
func cleanPath(pathVar string, guards []pathGuard) (string, []droppedPath) {
	var kept []string
	var dropped []droppedPath
	for i, e := range filepath.SplitList(pathVar) {
		why := ""
		switch {
		case e == "":
			why = "an empty entry, which means the current directory"
		case !filepath.IsAbs(e):
			why = "a relative entry, which depends on the current directory"
		case hasDotComponent(e):
			why = `it has a "." or ".." component`
		default:
			why = pathUnderGuard(e, guards)
		}
		if why != "" {
			dropped = append(dropped, droppedPath{pos: i + 1, entry: e, why: why})
			continue
		}
		kept = append(kept, e)
	}
	return strings.Join(kept, string(os.PathListSeparator)), dropped
}

func hasDotComponent(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == "." || c == ".." {
			return true
		}
	}
	return false
}

// pathUnderGuard says which guard the absolute entry e lies under, or "".
func pathUnderGuard(e string, guards []pathGuard) string {
	es, ok := pathForms(e)
	if !ok {
		return "it cannot be resolved (a symlink leading nowhere, or a path that cannot be examined), so where it leads is unknown"
	}
	for _, g := range guards {
		gs, _ := pathForms(g.dir)
		for _, gf := range gs {
			for _, ef := range es {
				if ef == gf || strings.HasPrefix(ef, strings.TrimSuffix(gf, "/")+"/") {
					return "it lies under " + g.what
				}
			}
		}
	}
	return ""
}

// pathForms are p cleaned and p with the symlinks of its longest
// existing prefix resolved (what does not exist yet is no symlink yet).
// ok is false when that prefix is a symlink leading nowhere (its target
// could be created anywhere) or cannot be examined.
func pathForms(p string) (forms []string, ok bool) {
	clean := filepath.Clean(p)
	rest := ""
	for dir := clean; ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return []string{clean, filepath.Join(r, rest)}, true
		}
		if _, err := os.Lstat(dir); !os.IsNotExist(err) || dir == "/" {
			return []string{clean}, false
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// tempGuard is the temporary directory tmp, where each action's private
// HOME/TMPDIR is made.
func tempGuard(tmp string) pathGuard {
	return pathGuard{tmp, "the temporary directory, where each action gets its private HOME and TMPDIR"}
}

// policyPathGuards are the directories of p an agent or action can
// write: every workdir root, the workspaces dir, the temporary directory.
func policyPathGuards(p *Policy) []pathGuard {
	var gs []pathGuard
	for _, a := range sortedKeys(p.Workdirs) {
		gs = append(gs, pathGuard{p.Workdirs[a].Root, fmt.Sprintf("the root of workdir %q", a)})
	}
	if d := p.WorkspacesDir; d != "" {
		gs = append(gs, pathGuard{d, "the workspaces_dir"})
	}
	return append(gs, tempGuard(os.TempDir()))
}

// envPathGuards are policyPathGuards as the .env in environ knows them:
// each slot's WORKDIR_NN_PATH and the temporary directory (environ's
// TMPDIR, else /tmp, as os.TempDir). The workspaces_dir is set in the
// policy file only.
func envPathGuards(env map[string]string) []pathGuard {
	var gs []pathGuard
	for n := 1; n <= settings.Slots; n++ {
		if p := env[fmt.Sprintf("WORKDIR_%02d_PATH", n)]; filepath.IsAbs(p) {
			gs = append(gs, pathGuard{p, fmt.Sprintf("the workdir of slot %02d", n)})
		}
	}
	tmp := env["TMPDIR"]
	if tmp == "" {
		tmp = "/tmp"
	}
	return append(gs, tempGuard(tmp))
}

// PathWarnings say which entries of environ's PATH a bridge started
// with it drops, given the workdirs of the .env in environ (render-policy
// and check-config print them; render-policy's own git uses what is
// left). They name an entry by its position, never its host path.
func PathWarnings(environ []string) []string {
	env := settings.EnvMap(environ)
	_, dropped, err := resolveHostTools(env["PATH"], envPathGuards(env))
	var out []string
	for _, d := range dropped {
		out = append(out, fmt.Sprintf("PATH entry %d: %s, so the bridge drops it (git, gh and actions' programs are never looked up there, nor is it passed on)", d.pos, d.why))
	}
	if err != nil {
		out = append(out, "the bridge refuses to start with this PATH: "+err.Error())
	}
	return out
}

// hostTools are lim's, resolved when the bridge started, or for a caller
// without them (render-policy, a test) the process's PATH cleaned now
// against root, lim.Protect and the temporary directory.
func (lim RunLimits) hostTools(root string) (*hostTools, error) {
	if lim.tools != nil {
		return lim.tools, nil
	}
	gs := []pathGuard{{root, "the workdir"}, tempGuard(os.TempDir())}
	for _, p := range lim.Protect {
		gs = append(gs, pathGuard{p, "a workdir or the workspaces dir"})
	}
	t, _, err := resolveHostTools(os.Getenv("PATH"), gs)
	return t, err
}
