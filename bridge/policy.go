package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/serverfs/serverfs/internal/settings"

	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// MaxPolicyFileBytes bounds the private policy file LoadPolicy reads.
const MaxPolicyFileBytes = 1 << 20

var (
	// policyAliasRE is the server's alias rule (fs.aliasRE).
	policyAliasRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,31}$`)
	actionNameRE  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	sha256HexRE   = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// PolicyError lists every problem found in a policy (or in the .env fields
// it is rendered from), one line each. No line contains a host path, an
// argv element or any other value that may be secret.
type PolicyError struct {
	Problems []string
}

func (e *PolicyError) Error() string {
	return "invalid bridge policy:\n  " + strings.Join(e.Problems, "\n  ")
}

// problems collects problem lines.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return &PolicyError{Problems: p}
}

// RenderPolicy turns the operator's .env fields ("KEY=value" entries) into
// the private bridge policy: one workdir per slot NN (01..16) whose
// WORKDIR_NN_ALIAS and WORKDIR_NN_PATH are set. It returns a *PolicyError
// listing every problem found, each naming its slot.
func RenderPolicy(environ []string) (*Policy, error) {
	p, _, err := RenderPolicyNotes(environ)
	return p, err
}

// RenderPolicyNotes is RenderPolicy, also returning what the operator
// should know of a valid policy: for each read-write repo-ops workdir,
// the push destination read from its repository, or why none was.
func RenderPolicyNotes(environ []string) (*Policy, []string, error) {
	env := settings.EnvMap(environ)
	var probs problems
	var notes []string
	p := &Policy{Workdirs: map[string]WorkdirPolicy{}}
	slotOf := map[string]string{} // alias -> first slot using it
	// The git reading push defaults runs from environ's PATH as the
	// bridge cleans it (nil: nothing is left, PathWarnings says so).
	tools, _, _ := resolveHostTools(env["PATH"], envPathGuards(env))

	for n := 1; n <= settings.Slots; n++ {
		slot := fmt.Sprintf("slot %02d", n)
		v := func(suffix string) string { return env[fmt.Sprintf("WORKDIR_%02d_%s", n, suffix)] }
		name := func(suffix string) string { return fmt.Sprintf("WORKDIR_%02d_%s", n, suffix) }
		alias, path := v("ALIAS"), v("PATH")
		rawOps, rawActions := v("REPO_OPS_ENABLED"), strings.TrimSpace(v("REPO_ACTIONS_JSON"))

		if alias == "" && path == "" {
			// An unused slot: repo settings there are a mistake.
			if strings.EqualFold(rawOps, "true") {
				probs.add("%s: %s is true but the slot is not in use (%s and %s are empty)", slot, name("REPO_OPS_ENABLED"), name("ALIAS"), name("PATH"))
			}
			for _, f := range []string{"REPO_ACTIONS_JSON", "PUSH_URLS", "PUSH_BRANCHES"} {
				if strings.TrimSpace(v(f)) != "" {
					probs.add("%s: %s is set but the slot is not in use (%s and %s are empty)", slot, name(f), name("ALIAS"), name("PATH"))
				}
			}
			continue
		}
		if alias == "" {
			probs.add("%s: %s is set but %s is empty; set an alias or unset the path", slot, name("PATH"), name("ALIAS"))
			continue
		}
		if path == "" {
			probs.add("%s: %s is set but %s is empty", slot, name("ALIAS"), name("PATH"))
			continue
		}

		ok := true
		if !policyAliasRE.MatchString(alias) {
			probs.add("%s: %s=%q is invalid: it must match ^[A-Za-z][A-Za-z0-9_-]{0,31}$", slot, name("ALIAS"), showSetting(alias))
			ok = false
		} else if first, dup := slotOf[alias]; dup {
			probs.add("%s: alias %q is already used by %s; aliases must be unique", slot, alias, first)
			ok = false
		} else {
			slotOf[alias] = slot
		}

		root, rootOK := renderRoot(slot, name("PATH"), path, &probs)
		ok = ok && rootOK

		w := WorkdirPolicy{Root: root}
		rw, rwOK := renderReadWrite(slot, v("READ_ONLY"), v("MODE"), name, &probs)
		w.ReadWrite = rw
		ok = ok && rwOK

		opsValid := true
		switch strings.ToLower(rawOps) {
		case "", "false":
		case "true":
			w.RepoOps = true
		default:
			probs.add("%s: %s=%q: must be true or false", slot, name("REPO_OPS_ENABLED"), showSetting(rawOps))
			opsValid, ok = false, false
		}

		if rawActions != "" {
			if opsValid && !w.RepoOps {
				probs.add("%s: %s is set but %s is not true; repo ops are off for the slot", slot, name("REPO_ACTIONS_JSON"), name("REPO_OPS_ENABLED"))
				ok = false
			}
			actions, errList := parseActions([]byte(rawActions))
			for _, line := range errList {
				probs.add("%s: %s: %s", slot, name("REPO_ACTIONS_JSON"), line)
			}
			if len(errList) > 0 {
				ok = false
			}
			w.Actions = actions
		}

		if rootOK && rwOK && opsValid {
			var note string
			w.Push, note = renderPush(slot, alias, root, tools, w.ReadWrite && w.RepoOps, v("PUSH_URLS"), v("PUSH_BRANCHES"), name, &probs)
			if note != "" {
				notes = append(notes, note)
			}
		}

		before := len(probs)
		checked := w
		if !rwOK {
			checked.ReadWrite = true // the read-only setting was reported already
		}
		checkWorkdir(slot, checked, &probs, true)
		if ok && len(probs) == before {
			p.Workdirs[alias] = w
		}
	}
	p.Sandbox = renderSandbox(env, &probs)
	p.Grants = renderGrants(env, &probs)
	if len(p.Workdirs) == 0 && len(probs) == 0 {
		probs.add("no workdir is configured: set WORKDIR_NN_ALIAS and WORKDIR_NN_PATH for at least one slot")
	}
	if err := probs.err(); err != nil {
		return nil, nil, err
	}
	return p, notes, nil
}

// renderPush reads WORKDIR_NN_PUSH_URLS and _PUSH_BRANCHES (each a list
// separated by spaces or tabs: neither a URL nor a branch name holds
// one). For a read-write repo-ops workdir, a field left empty defaults to
// what the repository says now (repoPushDefault); the note says what was
// approved that way, or why nothing could be.
func renderPush(slot, alias, root string, tools *hostTools, pushable bool, rawURLs, rawBranches string, name func(string) string, probs *problems) (*PushPolicy, string) {
	urls, branches := strings.Fields(rawURLs), strings.Fields(rawBranches)
	if !pushable {
		for _, f := range []struct {
			suffix string
			set    bool
		}{{"PUSH_URLS", len(urls) > 0}, {"PUSH_BRANCHES", len(branches) > 0}} {
			if f.set {
				probs.add("%s: %s is set but push_repo needs a read-write workdir with repo ops (%s=false, %s=true)", slot, name(f.suffix), name("READ_ONLY"), name("REPO_OPS_ENABLED"))
			}
		}
		return nil, ""
	}
	if len(urls) > 0 && len(branches) > 0 {
		return &PushPolicy{URLs: urls, Branches: branches}, ""
	}
	def, remote, err := repoPushDefault(alias, root, tools)
	if err != nil {
		why := err.Error()
		if fe, ok := err.(*errs.Error); ok {
			why = fe.Msg
		}
		if len(urls) > 0 || len(branches) > 0 {
			probs.add("%s: %s and %s must both be set, or the missing one read from the repository, which cannot be: %s", slot, name("PUSH_URLS"), name("PUSH_BRANCHES"), why)
			return nil, ""
		}
		return nil, fmt.Sprintf("%s (%s): no push destination: %s; push_repo refuses to push until %s and %s are set or the repository has an upstream, and render-policy runs again", slot, alias, why, name("PUSH_URLS"), name("PUSH_BRANCHES"))
	}
	from := []string{}
	if len(urls) == 0 {
		urls = def.URLs
		from = append(from, name("PUSH_URLS"))
	}
	if len(branches) == 0 {
		branches = def.Branches
		from = append(from, name("PUSH_BRANCHES"))
	}
	shown := make([]string, len(urls))
	for i, u := range urls {
		shown[i] = redactURL(u)
	}
	return &PushPolicy{URLs: urls, Branches: branches}, fmt.Sprintf("%s (%s): push_repo may push to branch %s at %s (%s read from the repository's upstream, remote %q)",
		slot, alias, strings.Join(branches, ", "), strings.Join(shown, ", "), strings.Join(from, " and "), remote)
}

// redactURL hides the password a URL may carry.
func redactURL(u string) string {
	if strings.Contains(u, "://") {
		if pu, err := url.Parse(u); err == nil {
			return pu.Redacted()
		}
		return "<a URL that does not parse>"
	}
	return u
}

// renderGitTimeout bounds the git commands reading one workdir's push
// default.
const renderGitTimeout = 30 * time.Second

// repoPushDefault is the push destination the repository at root names
// now: the current branch's upstream branch and the push URLs of its
// remote as git resolves them, read with push_repo's hardened git and
// refused as push_repo would refuse them (a repository rewrite rule, a
// foreign transport, ...), and the remote's name. tools are the git and
// PATH the bridge would use (nil: its PATH would leave nothing).
func repoPushDefault(alias, root string, tools *hostTools) (*PushPolicy, string, error) {
	if st, err := os.Lstat(filepath.Join(root, ".git")); err != nil || !st.IsDir() {
		return nil, "", errors.New("the path is not the top of a git work tree (a .git directory)")
	}
	if tools == nil {
		return nil, "", errors.New("git cannot be run: " + errNoPath.Error())
	}
	ctx := context.Background()
	g, err := newGitRunner(alias, root, RunLimits{Timeout: renderGitTimeout, tools: tools})
	if err != nil {
		return nil, "", err
	}
	up, err := resolveUpstream(ctx, g)
	if err != nil {
		return nil, "", err
	}
	fetch, push, err := remoteURLs(ctx, g, up.remote)
	if err != nil {
		return nil, "", err
	}
	if _, err := pushTrustArgs(ctx, g, up.remote, append(fetch, push...)); err != nil {
		return nil, "", err
	}
	return &PushPolicy{URLs: push, Branches: []string{up.upstream}}, up.remote, nil
}

// renderRoot checks WORKDIR_NN_PATH: absolute, clean (a trailing '/' is
// tolerated), not "/", an existing directory, not the unused-slot
// placeholder. Messages say "the path", never its value.
func renderRoot(slot, varName, raw string, probs *problems) (string, bool) {
	if !filepath.IsAbs(raw) {
		probs.add("%s: %s: the path must be absolute", slot, varName)
		return "", false
	}
	root := strings.TrimRight(raw, "/")
	if root == "" {
		probs.add("%s: %s: refusing the filesystem root; choose a narrower directory", slot, varName)
		return "", false
	}
	if filepath.Clean(root) != root {
		probs.add("%s: %s: the path must be clean (no '.' or '..' components, no repeated '/')", slot, varName)
		return "", false
	}
	st, err := os.Stat(root)
	if err != nil {
		probs.add("%s: %s: the path cannot be used: %s", slot, varName, describeFSError(err))
		return "", false
	}
	if !st.IsDir() {
		probs.add("%s: %s: the path is not a directory", slot, varName)
		return "", false
	}
	if _, err := os.Lstat(filepath.Join(root, sfs.DisabledSentinel)); err == nil {
		probs.add("%s: %s: the directory contains %s, a file name ServerFS reserves for unused slots", slot, varName, sfs.DisabledSentinel)
		return "", false
	}
	return root, true
}

// renderReadWrite reads WORKDIR_NN_READ_ONLY (true by default, as the
// compose bind mount): the workdir is read-write only when it is "false".
// WORKDIR_NN_MODE, when set, must agree.
func renderReadWrite(slot, rawRO, rawMode string, name func(string) string, probs *problems) (bool, bool) {
	var rw bool
	switch strings.ToLower(rawRO) {
	case "", "true":
	case "false":
		rw = true
	default:
		probs.add("%s: %s=%q: must be true or false", slot, name("READ_ONLY"), showSetting(rawRO))
		return false, false
	}
	switch rawMode {
	case "":
	case "ro", "rw":
		if (rawMode == "rw") != rw {
			probs.add("%s: %s=%s disagrees with %s (read-only unless it is false)", slot, name("MODE"), rawMode, name("READ_ONLY"))
			return false, false
		}
	default:
		probs.add("%s: %s=%q: must be ro or rw", slot, name("MODE"), showSetting(rawMode))
		return false, false
	}
	return rw, true
}

// Validate checks a policy (as LoadPolicy read it, or before WritePolicy
// writes it) and returns a *PolicyError with every problem.
func (p *Policy) Validate() error {
	var probs problems
	if p == nil || len(p.Workdirs) == 0 {
		probs.add("the policy has no workdirs")
		return probs.err()
	}
	for _, alias := range sortedKeys(p.Workdirs) {
		src := fmt.Sprintf("workdir %q", showSetting(alias))
		if !policyAliasRE.MatchString(alias) {
			probs.add("%s: the alias is invalid: it must match ^[A-Za-z][A-Za-z0-9_-]{0,31}$", src)
			continue
		}
		checkWorkdir(src, p.Workdirs[alias], &probs, false)
	}
	checkSandboxPolicy(p.Sandbox, &probs)
	checkGrantPolicy(p.Grants, &probs)
	if d := p.WorkspacesDir; d != "" && (!filepath.IsAbs(d) || filepath.Clean(d) != d || d == "/" || strings.IndexByte(d, 0) >= 0) {
		probs.add("workspaces_dir must be a clean absolute path other than /")
	}
	return probs.err()
}

// checkWorkdir validates one workdir; src names it in messages ("slot 03"
// or `workdir "docs"`). When rendering, the root and the repo-ops switch
// were checked against the .env fields already.
func checkWorkdir(src string, w WorkdirPolicy, probs *problems, rendering bool) {
	if !rendering {
		switch {
		case w.Root == "":
			probs.add("%s: the root is empty", src)
		case strings.IndexByte(w.Root, 0) >= 0:
			probs.add("%s: the root contains a NUL byte", src)
		case !filepath.IsAbs(w.Root):
			probs.add("%s: the root must be an absolute path", src)
		case filepath.Clean(w.Root) != w.Root:
			probs.add("%s: the root must be a clean path (no '.' or '..' components, no repeated or trailing '/')", src)
		case w.Root == "/":
			probs.add("%s: refusing the filesystem root as a workdir root", src)
		}
		if len(w.Actions) > 0 && !w.RepoOps {
			probs.add("%s: actions are configured but repo ops are disabled", src)
		}
	}
	if len(w.Actions) > 0 && !w.ReadWrite {
		probs.add("%s: actions are configured on a read-only workdir; actions need a read-write workdir", src)
	}
	if w.Push != nil {
		checkPushPolicy(src, w, probs)
	}
	for _, name := range sortedKeys(w.Actions) {
		a := w.Actions[name]
		if a.IsRelease() && !w.ReadWrite && actionNameRE.MatchString(name) {
			probs.add("%s: action %q: kind %q creates and pushes a tag: it needs a read-write workdir", src, name, a.Kind)
		}
		checkAction(src, name, a, probs)
	}
}

// Bounds of a workdir's push section.
const (
	MaxPushURLs     = 16
	MaxPushBranches = 64
)

// checkPushPolicy validates a workdir's push section. URLs and branch
// names are not shown: a URL may hold a host path or a password.
func checkPushPolicy(src string, w WorkdirPolicy, probs *problems) {
	if !w.ReadWrite || !w.RepoOps {
		probs.add("%s: a push destination is set but push_repo needs a read-write workdir with repo ops", src)
	}
	p := w.Push
	checkPushListSize(src, "URL", "URLs", len(p.URLs), MaxPushURLs, probs)
	for i, u := range p.URLs {
		if _, ok := urlProtocol(u); !ok {
			probs.add("%s: push URL %d is not an https, ssh or file URL git could use", src, i+1)
		} else if strings.ContainsAny(u, "=\r") {
			// push_repo names the URL in a -c configuration key.
			probs.add("%s: push URL %d contains '=' or a carriage return, which push_repo cannot pin", src, i+1)
		}
	}
	checkPushListSize(src, "branch", "branches", len(p.Branches), MaxPushBranches, probs)
	for i, b := range p.Branches {
		if !validBranchName(b) {
			probs.add("%s: push branch %d is not a valid branch name (the name under refs/heads/, such as main)", src, i+1)
		}
	}
}

// checkPushListSize refuses an empty list of push URLs or branches, or
// one longer than max.
func checkPushListSize(src, one, many string, n, max int, probs *problems) {
	switch {
	case n == 0:
		probs.add("%s: the push destination lists no %s", src, one)
	case n > max:
		probs.add("%s: the push destination lists more than %d %s", src, max, many)
	}
}

var (
	// githubRepoRE is a GitHub "owner/name".
	githubRepoRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)
	// workflowFileRE is a workflow file name in .github/workflows.
	workflowFileRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}\.ya?ml$`)
)

// checkRelease validates a release_tag or publish_npm action: none of
// the command fields, a GitHub repository, approved origin URLs, a pin of
// package.json, and for publish_npm a workflow file and, when set, an
// absolute gh.
func checkRelease(at string, a Action, probs *problems) {
	for _, f := range []struct {
		name string
		set  bool
	}{{"argv", a.Argv != nil}, {"argument", a.Argument != ""}, {"argument_allow", a.ArgumentAllow != nil}, {"reveal", a.Reveal != nil}} {
		if f.set {
			probs.add("%s: %s is for command actions; kind %q runs no argv and takes only a release tag", at, f.name, a.Kind)
		}
	}
	if !githubRepoRE.MatchString(a.Repository) {
		probs.add("%s: repository must be a GitHub owner/name", at)
	}
	for _, f := range []struct {
		name string
		urls []string
	}{{"fetch_urls", a.FetchURLs}, {"push_urls", a.PushURLs}} {
		if len(f.urls) == 0 {
			probs.add("%s: %s is missing: list the approved URLs of the remote origin", at, f.name)
		}
		for i, u := range f.urls {
			if _, ok := urlProtocol(u); !ok {
				probs.add("%s: %s[%d] is not an https, ssh or file URL git could use", at, f.name, i)
			}
		}
	}
	if _, ok := a.Integrity["package.json"]; !ok {
		probs.add("%s: integrity must pin package.json (the version the tag must equal is read from it)", at)
	}
	if a.Kind == KindReleaseTag {
		if a.Workflow != "" {
			probs.add("%s: workflow is for publish_npm actions", at)
		}
		if a.GH != "" {
			probs.add("%s: gh is for publish_npm actions", at)
		}
		return
	}
	if !workflowFileRE.MatchString(a.Workflow) {
		probs.add("%s: workflow must be the file name of a workflow in .github/workflows (such as publish.yml)", at)
	}
	if a.GH != "" && (!filepath.IsAbs(a.GH) || filepath.Clean(a.GH) != a.GH || strings.IndexByte(a.GH, 0) >= 0) {
		probs.add("%s: gh must be an absolute, clean path to the GitHub CLI (or absent: gh on the bridge's PATH)", at)
	}
}

func checkAction(src, name string, a Action, probs *problems) {
	if !actionNameRE.MatchString(name) {
		probs.add("%s: action name %q is invalid: it must match ^[a-z][a-z0-9_]{0,63}$", src, showSetting(name))
		return
	}
	at := fmt.Sprintf("%s: action %q", src, name)
	switch a.Kind {
	case "", KindCommand:
		for _, f := range []struct {
			name string
			set  bool
		}{{"repository", a.Repository != ""}, {"fetch_urls", a.FetchURLs != nil}, {"push_urls", a.PushURLs != nil}, {"workflow", a.Workflow != ""}, {"gh", a.GH != ""}} {
			if f.set {
				probs.add("%s: %s is for the release kinds (release_tag, publish_npm), not a command action", at, f.name)
			}
		}
	case KindReleaseTag, KindPublishNPM:
		checkRelease(at, a, probs)
		checkPins(at, a, probs)
		return
	default:
		probs.add("%s: kind %q is unknown; it must be %q, %q or %q", at, showSetting(a.Kind), KindCommand, KindReleaseTag, KindPublishNPM)
		return
	}
	switch {
	case len(a.Argv) == 0:
		probs.add("%s: argv is empty", at)
	case a.Argv[0] == "":
		probs.add("%s: argv[0] (the program) is empty", at)
	}
	for i, arg := range a.Argv {
		if strings.IndexByte(arg, 0) >= 0 {
			probs.add("%s: argv[%d] contains a NUL byte", at, i)
		}
	}
	// A program inside the workdir (a relative path such as
	// ./scripts/test.sh) is repository content the agent can rewrite: it
	// runs only when pinned.
	if len(a.Argv) > 0 && strings.Contains(a.Argv[0], "/") && !strings.HasPrefix(a.Argv[0], "/") {
		prog := path.Clean(a.Argv[0])
		if _, pinned := a.Integrity[prog]; !pinned {
			probs.add("%s: argv[0] is a program inside the workdir; it must have an integrity pin (under its clean path)", at)
		}
	}
	switch a.Argument {
	case ArgumentNone, ArgumentPath, ArgumentBasename:
	case "":
		probs.add("%s: argument is missing; set it to %q, %q or %q", at, ArgumentNone, ArgumentPath, ArgumentBasename)
	default:
		probs.add("%s: argument %q is unknown; it must be %q, %q or %q", at, showSetting(a.Argument), ArgumentNone, ArgumentPath, ArgumentBasename)
	}
	if al := a.ArgumentAllow; al != nil {
		if a.Argument != ArgumentPath && a.Argument != ArgumentBasename {
			probs.add("%s: argument_allow is set but argument is not %q or %q", at, ArgumentPath, ArgumentBasename)
		}
		for _, r := range al.Chars {
			if r == utf8.RuneError || r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\\' {
				probs.add("%s: argument_allow.chars may hold printable characters only (no control character, NUL or backslash)", at)
				break
			}
		}
	}
	for i, g := range a.Reveal {
		if _, err := sfs.NewPatterns([]string{g}); err != nil {
			probs.add("%s: reveal[%d] is not a valid pattern (%v)", at, i, err)
		}
	}
	checkPins(at, a, probs)
}

// checkPins validates an action's integrity pins and timeout.
func checkPins(at string, a Action, probs *problems) {
	for _, rel := range sortedKeys(a.Integrity) {
		if why := badRelPath(rel); why != "" {
			// The key is not shown: a bad one may well be a host path.
			probs.add("%s: an integrity path %s; pins name clean workdir-relative paths", at, why)
			continue
		}
		if !sha256HexRE.MatchString(a.Integrity[rel]) {
			probs.add("%s: integrity pin for %q is not 64 lower-case hex digits (a SHA-256)", at, showValue(rel))
		}
	}
	if max := int(MaxActionTimeout.Seconds()); a.TimeoutSeconds < 0 || a.TimeoutSeconds > max {
		probs.add("%s: timeout_seconds %d is outside 0..%d", at, a.TimeoutSeconds, max)
	}
}

// badRelPath says why rel is not a clean relative path, or "".
func badRelPath(rel string) string {
	switch {
	case rel == "":
		return "is empty"
	case strings.IndexByte(rel, 0) >= 0:
		return "contains a NUL byte"
	case strings.Contains(rel, `\`):
		return "contains a backslash"
	case strings.HasPrefix(rel, "/"):
		return "is absolute"
	}
	for _, c := range strings.Split(rel, "/") {
		switch c {
		case "":
			return "has an empty component (repeated, leading or trailing '/')"
		case ".", "..":
			return "has a '.' or '..' component"
		}
	}
	return ""
}

// Public is what the MCP server may learn of the policy: each alias and the
// sorted names of its actions (an empty list when it has none). No argv,
// root, integrity pin or other detail.
func (p *Policy) Public() map[string][]string {
	out := map[string][]string{}
	if p == nil {
		return out
	}
	for alias, w := range p.Workdirs {
		out[alias] = sortedKeys(w.Actions)
	}
	return out
}

// LoadPolicy reads and validates the private policy file. It refuses a
// symlink, anything but a regular file, a file larger than
// MaxPolicyFileBytes and a file group or others may read or write (it
// holds host paths). Decoding is strict: unknown fields (matched exactly,
// not case-insensitively), duplicate keys and trailing data are refused.
func LoadPolicy(path string) (*Policy, error) {
	var probs problems
	fail := func(format string, args ...any) (*Policy, error) {
		probs.add(format, args...)
		return nil, probs.err()
	}
	lst, err := os.Lstat(path)
	if err != nil {
		return fail("the policy file cannot be used: %s", describeFSError(err))
	}
	if why := badPolicyFile(lst); why != "" {
		return fail("the policy file %s", why)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fail("the policy file cannot be opened: %s", describeFSError(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fail("the policy file cannot be inspected: %s", describeFSError(err))
	}
	if !os.SameFile(lst, st) {
		return fail("the policy file changed while it was opened")
	}
	if why := badPolicyFile(st); why != "" {
		return fail("the policy file %s", why)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxPolicyFileBytes+1))
	if err != nil {
		return fail("the policy file cannot be read: %s", describeFSError(err))
	}
	if len(data) > MaxPolicyFileBytes {
		return fail("the policy file is larger than %d bytes", MaxPolicyFileBytes)
	}
	if errList := checkJSON(data, policySchema); len(errList) > 0 {
		for _, e := range errList {
			probs.add("the policy file: %s", e)
		}
		return nil, probs.err()
	}
	var p Policy
	if err := strictDecode(data, &p); err != "" {
		return fail("the policy file: %s", err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

func badPolicyFile(st fs.FileInfo) string {
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		return "is a symbolic link; give the real file"
	case !st.Mode().IsRegular():
		return "is not a regular file"
	case st.Size() > MaxPolicyFileBytes:
		return fmt.Sprintf("is larger than %d bytes", MaxPolicyFileBytes)
	case st.Mode().Perm()&0o077 != 0:
		return fmt.Sprintf("has mode %04o: group or others may access it (it holds host paths); chmod 600 it", st.Mode().Perm())
	}
	return ""
}

// WritePolicy validates p and writes it to path atomically: a 0600
// temporary file in the same directory, fsync, rename, fsync of the
// directory.
func WritePolicy(path string, p *Policy) (err error) {
	if err := p.Validate(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the policy: %w", err)
	}
	data = append(data, '\n')
	if err := atomicWriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing the policy file: %s", describeFSError(err))
	}
	return nil
}

// showSetting shows a name or setting in a message, unless it may be a
// host path (it contains '/'), long or odd.
func showSetting(s string) string {
	if strings.ContainsAny(s, "/\\") {
		return "<not shown: contains a slash>"
	}
	return showValue(s)
}

func showValue(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// describeFSError is an error's text without the path os errors carry.
func describeFSError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		err = se.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "it does not exist"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, syscall.ELOOP):
		return "it is a symbolic link"
	}
	return err.Error()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
