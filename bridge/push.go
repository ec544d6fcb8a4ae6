package bridge

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/serverfs/serverfs/bridge/wire"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// GitAllowProtocol is the transport allowlist every git the bridge runs
// gets (GIT_ALLOW_PROTOCOL overrides any protocol.* configuration, so a
// repository cannot re-enable ext:: or another remote helper).
const GitAllowProtocol = "https:ssh:file"

// gitEnvNames are the variables git additionally receives: the user's
// SSH agent, where its global configuration lives, and an SSH command
// the operator set for the bridge itself.
var gitEnvNames = []string{"SSH_AUTH_SOCK", "XDG_CONFIG_HOME", "GIT_SSH_COMMAND"}

// gitConfigOverrides neutralise repository configuration that would run
// a command of the repository's choosing or widen what a push sends.
// Command-line configuration beats every configuration file. With
// GIT_SSH_COMMAND in the operator's environment, that (operator-owned)
// command wins over core.sshCommand; otherwise git runs plain "ssh" from
// the allowlisted PATH. (An empty core.sshCommand would not fall back to
// ssh: git would try to run the empty command.)
var gitConfigOverrides = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.sshCommand=ssh",
	"-c", "core.askPass=",
}

// git runs the host git for one workdir, within one deadline.
type gitRunner struct {
	exe      string
	env      []string
	tools    *hostTools // exe is its git; a release dispatch takes its PATH and gh
	root     string
	alias    string
	deadline time.Time
	maxOut   int
	tail     int
}

func newGitRunner(alias, root string, lim RunLimits) (*gitRunner, error) {
	tools, err := lim.hostTools(root)
	if err != nil {
		return nil, errs.At(errs.Internal, alias, "", "git cannot be run: the bridge has no usable PATH").Wrap(err)
	}
	if tools.git == "" {
		return nil, errs.At(errs.Internal, alias, "", "git cannot be found on the bridge's PATH")
	}
	env := childEnv(tools.path, gitEnvNames,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ALLOW_PROTOCOL="+GitAllowProtocol,
		// The repository is the workdir root, never a directory above.
		"GIT_CEILING_DIRECTORIES="+filepath.Dir(filepath.Clean(root)),
	)
	timeout := DefaultPushTimeout
	if lim.Timeout > 0 {
		timeout = lim.Timeout
	}
	timeout = min(timeout, MaxActionTimeout)
	maxOut, tail := outputLimits(lim)
	return &gitRunner{exe: tools.git, env: env, tools: tools, root: root, alias: alias, deadline: time.Now().Add(timeout), maxOut: maxOut, tail: tail}, nil
}

// inGitDir is a runner of git in the private git directory dir (see
// pushGitDir) with the repository's objects: the repository's own
// configuration is not read.
func (g *gitRunner) inGitDir(dir, objects string) *gitRunner {
	c := *g
	c.env = append(append([]string(nil), g.env...), "GIT_DIR="+dir, "GIT_OBJECT_DIRECTORY="+objects)
	c.root = dir
	return &c
}

// run runs git with args (after the fixed overrides). A timeout, an
// output overflow or ctx ending is an error; a non-zero exit is not.
func (g *gitRunner) run(ctx context.Context, what string, args ...string) (*procResult, error) {
	left := time.Until(g.deadline)
	if left <= 0 {
		return nil, errs.At(errs.ActionTimeout, g.alias, "", fmt.Sprintf("push ran out of time before %s", what))
	}
	argv := append([]string{"git"}, gitConfigOverrides...)
	argv = append(argv, args...)
	pr, err := runProcess(ctx, procSpec{
		path: g.exe, argv: argv, dir: g.root, env: g.env,
		timeout: left, maxOutput: g.maxOut, tail: g.tail,
	})
	if err != nil {
		return nil, errs.At(errs.Internal, g.alias, "", "git could not be started").Wrap(err)
	}
	switch {
	case pr.canceled:
		return pr, errs.At(errs.Canceled, g.alias, "", fmt.Sprintf("push was cancelled during %s; git was killed", what)).Wrap(ctx.Err())
	case pr.timedOut:
		return pr, errs.At(errs.ActionTimeout, g.alias, "", fmt.Sprintf("%s ran past the push timeout and was killed", what))
	case pr.overflowed:
		return pr, errs.At(errs.OutputLimitExceeded, g.alias, "", fmt.Sprintf("%s wrote more than %d bytes and was killed", what, g.maxOut))
	}
	return pr, nil
}

// value runs a git query and returns its first output line; found is
// false when git exits 1 (not set / not a symbolic ref).
func (g *gitRunner) value(ctx context.Context, what string, args ...string) (string, bool, error) {
	pr, err := g.run(ctx, what, args...)
	if err != nil {
		return "", false, err
	}
	switch pr.exitCode {
	case 0:
		line, _, _ := strings.Cut(string(pr.stdout), "\n")
		return strings.TrimRight(line, "\r"), true, nil
	case 1:
		return "", false, nil
	}
	return "", false, errs.At(errs.RepoUnsupported, g.alias, "", fmt.Sprintf("git failed reading %s (exit %d)", what, pr.exitCode))
}

var remoteNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._/-]*$`)

// validBranchName applies git's ref-name rules (check-ref-format) to the
// part of a ref after refs/heads/.
func validBranchName(b string) bool {
	if b == "" || b == "@" || strings.HasPrefix(b, "-") || strings.HasPrefix(b, "/") || strings.HasSuffix(b, "/") ||
		strings.HasSuffix(b, ".") || strings.Contains(b, "..") || strings.Contains(b, "//") || strings.Contains(b, "@{") {
		return false
	}
	for _, r := range b {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return false
		}
	}
	for _, c := range strings.Split(b, "/") {
		if strings.HasPrefix(c, ".") || strings.HasSuffix(c, ".lock") {
			return false
		}
	}
	return true
}

var (
	schemeURLRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://`)
	helperURLRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9+.-]*::`)
)

// urlProtocol classifies a remote URL the way git's transport selection
// does: "<helper>::..." is a remote helper, "<scheme>://" a URL, an
// scp-like "host:path" ssh, and anything else a local path (file).
func urlProtocol(u string) (proto string, ok bool) {
	if u == "" || strings.HasPrefix(u, "-") || strings.ContainsAny(u, "\x00\n") {
		return "", false
	}
	if m := helperURLRE.FindString(u); m != "" {
		return strings.TrimSuffix(m, "::") + "::", false
	}
	if m := schemeURLRE.FindStringSubmatch(u); m != nil {
		s := strings.ToLower(m[1])
		if s == "https" || s == "ssh" || s == "file" {
			if s == "ssh" {
				pu, err := url.Parse(u)
				if err != nil || strings.HasPrefix(pu.Hostname(), "-") {
					return s, false
				}
			}
			return s, true
		}
		return s, false
	}
	// As git's url_is_local_not_ssh and parse_connect_url: the host of
	// "[host]:path" may hold colons.
	search := u
	off := 0
	if strings.HasPrefix(u, "[") {
		if end := strings.IndexByte(u, ']'); end > 0 {
			search, off = u[end:], end
		}
	}
	colon := strings.IndexByte(search, ':')
	if colon >= 0 {
		colon += off
	}
	slash := strings.IndexByte(u, '/')
	if colon < 0 || (slash >= 0 && slash < colon) {
		return "file", true
	}
	// scp-like [user@]host:path; a host starting with '-' would be an
	// ssh option.
	host := u[:colon]
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:]
	}
	host = strings.TrimPrefix(strings.TrimSuffix(host, "]"), "[")
	if host == "" || strings.HasPrefix(host, "-") {
		return "ssh", false
	}
	return "ssh", true
}

// Push pushes the commit of the workdir repository's current branch to
// that branch's upstream: exactly one ref, `<commit>:refs/heads/<b>`,
// never forced, with hooks disabled, the repository's SSH and askpass
// commands neutralised, only https/ssh/file transports, no terminal
// prompts, and the allowlisted environment (plus SSH_AUTH_SOCK) so that
// the user's credential helpers and SSH agent work — only the operator's
// helpers, TLS always verified, the URL the remote's own (pushTrustArgs).
// The destination is the operator's: the upstream branch must be one of
// the policy's push branches and every push URL of the remote one of its
// push URLs (PUSH_DESTINATION_DENIED otherwise, and without a push
// section), and git pushes from a private git directory to exactly those
// URLs (pushGitDir), so that the repository's configuration changing
// after the check cannot redirect it. The workdir must be read-write
// with repository operations enabled. A rejected push returns the result
// (Status "rejected") together with PUSH_REJECTED. The caller holds the
// workdir's writer lease around the call.
func Push(ctx context.Context, fsys *sfs.FS, alias string, wp WorkdirPolicy, lim RunLimits) (*wire.PushResult, error) {
	w, err := fsys.Workdir(alias)
	if err != nil {
		return nil, err
	}
	if !wp.RepoOps {
		return nil, errs.At(errs.RepoOpsDisabled, alias, "", "has no repository operations enabled")
	}
	if !wp.ReadWrite {
		return nil, errs.At(errs.WorkdirReadOnly, alias, "", "is read-only; push_repo needs a read-write workdir")
	}
	// A .git directory only, as the server's git package requires: a
	// .git file points at a repository elsewhere (whose config the agent
	// might reach).
	st, err := w.Control().Lstat(".git")
	if err != nil || st.Type() != sfs.TypeDirectory {
		return nil, errs.At(errs.RepoNotFound, alias, "", "is not the top of a git work tree (a .git directory)").Wrap(err)
	}
	if wp.Push == nil {
		return nil, errs.At(errs.PushDestinationDenied, alias, "", "has no approved push destination in the bridge's policy; nothing was pushed. The operator re-runs `serverfs bridge render-policy` (it approves the repository's current upstream, or the .env's WORKDIR_NN_PUSH_URLS and _PUSH_BRANCHES) and restarts the bridge")
	}
	g, err := newGitRunner(alias, wp.Root, lim)
	if err != nil {
		return nil, err
	}
	d, err := checkPushDestination(ctx, g, alias, wp.Push)
	if err != nil {
		return nil, err
	}
	up, pushURLs, urls := d.up, d.pushURLs, d.urls
	res := &wire.PushResult{Branch: up.branch, Remote: up.remote, Upstream: up.upstream}
	commit, found, err := g.value(ctx, "the branch's commit", "rev-parse", "--verify", "-q", "refs/heads/"+up.branch+"^{commit}")
	if err != nil {
		return nil, err
	}
	if !found || !isObjectID(commit) {
		return nil, errs.At(errs.NoUpstream, alias, "", fmt.Sprintf("branch %q has no commit yet", up.branch))
	}
	tracking, _, err := g.value(ctx, "the branch's tracking ref", "for-each-ref", "--format=%(upstream)", "refs/heads/"+up.branch)
	if err != nil {
		return nil, err
	}
	format, _, err := g.value(ctx, "the object format", "rev-parse", "--show-object-format")
	if err != nil {
		return nil, err
	}
	dir, err := pushGitDir(w, alias, format)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	sc := newScrubber(wp.Root, alias, lim)
	sc.add(dir, scrubBridgePath)
	pg := g.inGitDir(dir, filepath.Join(wp.Root, ".git", "objects"))

	if testHookPushChecked != nil {
		testHookPushChecked()
	}
	dst := "refs/heads/" + up.upstream
	var all procResult
	status := "up_to_date"
	for i, u := range pushURLs {
		pr, err := pg.run(ctx, "git push", pushArgs(d.trust, u, commit, dst)...)
		if pr != nil {
			all.stdout = append(all.stdout, pr.stdout...)
			all.stderr = append(all.stderr, pr.stderr...)
			all.stdoutTruncated = all.stdoutTruncated || pr.stdoutTruncated
			all.stderrTruncated = all.stderrTruncated || pr.stderrTruncated
			res.Output = pushOutput(g, sc, up.remote, urls, &all)
		}
		if err != nil {
			return nil, err
		}
		where := up.remote
		if len(pushURLs) > 1 {
			where = fmt.Sprintf("%s (push URL %d of %d)", up.remote, i+1, len(pushURLs))
		}
		urlStatus, reason := parsePorcelain(string(pr.stdout), dst)
		switch {
		case urlStatus == "rejected":
			res.Status = "rejected"
			return res, errs.At(errs.PushRejected, alias, "", fmt.Sprintf("%s rejected the push of %s to %s: %s", where, up.branch, up.upstream, scrubURLs(sc, up.remote, urls, reason)))
		case urlStatus != "" && pr.exitCode == 0:
			if urlStatus == "ok" {
				status = "ok"
			}
			continue
		}
		res.Status = "rejected"
		why := shortTail(failureLine(pushOutput(g, sc, up.remote, urls, pr)))
		if why == "" {
			why = fmt.Sprintf("git exited with %d", pr.exitCode)
		}
		return res, errs.At(errs.PushRejected, alias, "", fmt.Sprintf("the push of %s to %s/%s failed: %s", up.branch, where, up.upstream, why))
	}
	res.Status = status
	// git updates the remote-tracking branch after a push to a named
	// remote; this push named a URL, so it is done here. Never through a
	// symbolic ref, and only a ref under refs/remotes/: the tracking ref
	// is the repository's to say, so it must not name a local branch.
	// The remote has the commit either way: a failure here is only a
	// stale tracking ref, which the next fetch corrects.
	if strings.HasPrefix(tracking, "refs/remotes/") {
		g.run(ctx, "updating the tracking ref", "update-ref", "--no-deref", "-m", "push_repo", tracking, commit)
	}
	return res, nil
}

// pushDestination is where a push goes once checked against the policy.
type pushDestination struct {
	up       upstreamOf
	pushURLs []string
	urls     []string // the remote's fetch and push URLs
	trust    []string // pushTrustArgs for urls
}

// checkPushDestination resolves the branch's upstream and requires its
// branch and every push URL of its remote, as git resolves them, to be
// among those the policy approves.
func checkPushDestination(ctx context.Context, g *gitRunner, alias string, pp *PushPolicy) (*pushDestination, error) {
	up, err := resolveUpstream(ctx, g)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(pp.Branches, up.upstream) {
		return nil, errs.At(errs.PushDestinationDenied, alias, "", fmt.Sprintf("the upstream of branch %q is %q, which is not among the branches the operator approved for pushes (%s); nothing was pushed. Push a branch whose upstream is approved, or the operator fixes the repository's upstream or approves the branch (WORKDIR_NN_PUSH_BRANCHES, then render-policy and a bridge restart)", up.branch, up.upstream, strings.Join(pp.Branches, ", ")))
	}
	fetchURLs, pushURLs, err := remoteURLs(ctx, g, up.remote)
	if err != nil {
		return nil, err
	}
	if i := unapprovedURL(pushURLs, pp.URLs); i >= 0 {
		return nil, errs.At(errs.PushDestinationDenied, alias, "", fmt.Sprintf("push URL %d of %d of remote %q (as git resolves it) is not among the URLs the operator approved for pushes; nothing was pushed. The operator fixes the repository's remote (git remote set-url, remote.%s.pushurl, url.*.insteadOf) or approves the URL (WORKDIR_NN_PUSH_URLS, then render-policy and a bridge restart)", i+1, len(pushURLs), up.remote, up.remote))
	}
	urls := append(append([]string(nil), fetchURLs...), pushURLs...)
	trust, err := pushTrustArgs(ctx, g, up.remote, urls)
	if err != nil {
		return nil, err
	}
	return &pushDestination{up: up, pushURLs: pushURLs, urls: urls, trust: trust}, nil
}

// pushArgs is the git command line pushing commit to dst at the URL u.
func pushArgs(trust []string, u, commit, dst string) []string {
	// A local remote's receive-pack runs on this host, as the
	// operator: its hooks (pre-receive, ...) would run too, so they
	// are switched off for it. A remote host runs its own
	// receive-pack as it wants.
	receivePack := "git-receive-pack"
	if anyLocal([]string{u}) {
		receivePack = "git -c core.hooksPath=/dev/null receive-pack"
	}
	// u, as git resolved it for the check, is given on the command
	// line in the private git directory, which has no remote and
	// none of the repository's configuration. The rule rewriting u
	// onto itself is as long as any rule matching u can be, so the
	// operator's own insteadOf/pushInsteadOf, which may have made
	// u, does not rewrite it a second time (only an operator rule
	// whose value is exactly u, read before ours, would still win).
	// Measured with git 2.39, the alternatives do not hold: -c
	// remote.<name>.url=/pushurl= add to the repository's values of
	// those multi-valued keys, and git pushes to every one; a URL
	// on the command line in the repository itself is still
	// rewritten by the repository's url.*.insteadOf (one as long as
	// ours, read first, wins) and redirected by a repository
	// remote.<that URL>.pushurl.
	return append(append([]string(nil), trust...), "-c", "url."+u+".insteadOf="+u, "-c", "url."+u+".pushInsteadOf="+u,
		"push", "--porcelain", "--no-verify", "--no-follow-tags", "--no-signed",
		"--recurse-submodules=no", "--receive-pack="+receivePack,
		"--", u, commit+":"+dst)
}

// testHookPushChecked, when set by a test, runs between Push's checks
// and its git push: where a process an action left behind could change
// the repository's configuration.
var testHookPushChecked func()

// upstreamOf is a branch and the remote and remote branch it tracks.
type upstreamOf struct {
	branch, remote, upstream string
}

// resolveUpstream reads the current branch of the repository and its
// upstream: a named remote (not "." or a URL) and a branch under
// refs/heads/ there (NO_UPSTREAM otherwise).
func resolveUpstream(ctx context.Context, g *gitRunner) (upstreamOf, error) {
	var up upstreamOf
	head, found, err := g.value(ctx, "HEAD", "symbolic-ref", "-q", "HEAD")
	if err != nil {
		return up, err
	}
	if !found {
		return up, errs.At(errs.NoUpstream, g.alias, "", "HEAD is detached; push_repo pushes the current branch to its upstream")
	}
	branch, ok := strings.CutPrefix(head, "refs/heads/")
	if !ok || !validBranchName(branch) {
		return up, errs.At(errs.NoUpstream, g.alias, "", "HEAD is not a local branch")
	}
	remote, found, err := g.value(ctx, "the branch's remote", "config", "--get", "branch."+branch+".remote")
	if err != nil {
		return up, err
	}
	if !found || remote == "" {
		return up, errs.At(errs.NoUpstream, g.alias, "", fmt.Sprintf("branch %q has no upstream (git branch --set-upstream-to sets one)", branch))
	}
	if remote == "." || remote == ".." || !remoteNameRE.MatchString(remote) {
		return up, errs.At(errs.NoUpstream, g.alias, "", fmt.Sprintf("the upstream of branch %q is not on a named remote", branch))
	}
	merge, found, err := g.value(ctx, "the branch's upstream", "config", "--get", "branch."+branch+".merge")
	if err != nil {
		return up, err
	}
	upstream, ok := strings.CutPrefix(merge, "refs/heads/")
	if !found || !ok || !validBranchName(upstream) {
		return up, errs.At(errs.NoUpstream, g.alias, "", fmt.Sprintf("the upstream of branch %q is not a branch (refs/heads/...) of remote %q", branch, remote))
	}
	return upstreamOf{branch: branch, remote: remote, upstream: upstream}, nil
}

// unapprovedURL is the index of the first of urls that approved does not
// list, or -1: URLs are compared exactly, as git resolved them (push_repo
// against the policy's push URLs, the release actions against their
// fetch_urls and push_urls).
func unapprovedURL(urls, approved []string) int {
	for i, u := range urls {
		if !slices.Contains(approved, u) {
			return i
		}
	}
	return -1
}

// maxShallowBytes bounds the shallow file pushGitDir copies (a line per
// shallow commit).
const maxShallowBytes = 8 << 20

// pushGitDir makes a private git directory for one push, in a new
// temporary directory the caller removes: no configuration but the
// repository's object format, no hooks, no refs, no remotes. The push runs
// there (GIT_DIR) with the workdir repository's objects
// (GIT_OBJECT_DIRECTORY) and a copy of its shallow list, so that nothing
// in the repository's configuration — which a process left behind by an
// action may change after push_repo checked it — takes part: not its
// remotes, rewrite rules, credential helpers, hooks or TLS settings. The
// objects are content-addressed: whatever the object directory holds,
// the commit pushed is the one checked.
func pushGitDir(w *sfs.Workdir, alias, objectFormat string) (dir string, err error) {
	config := "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
	switch objectFormat {
	case "sha1":
	case "sha256":
		config = "[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectformat = sha256\n"
	default:
		return "", errs.At(errs.RepoUnsupported, alias, "", "the repository's object format is neither sha1 nor sha256")
	}
	var shallow []byte
	if f, err := w.Control().Open(".git/shallow"); err == nil {
		shallow, err = io.ReadAll(io.LimitReader(f, maxShallowBytes+1))
		f.Close()
		if err != nil || len(shallow) > maxShallowBytes {
			return "", errs.At(errs.RepoUnsupported, alias, "", fmt.Sprintf("the repository's shallow list (.git/shallow) cannot be read or is larger than %d bytes", maxShallowBytes)).Wrap(err)
		}
	} else if errs.CodeOf(err) != errs.PathNotFound {
		return "", errs.At(errs.RepoUnsupported, alias, "", "the repository's shallow list (.git/shallow) is not a regular file").Wrap(err)
	}
	dir, err = os.MkdirTemp("", "serverfs-push-")
	if err != nil {
		return "", errs.At(errs.Internal, alias, "", "no temporary directory for the push").Wrap(err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	files := map[string]string{"HEAD": "ref: refs/heads/push\n", "config": config}
	if shallow != nil {
		files["shallow"] = string(shallow)
	}
	if err := os.Mkdir(filepath.Join(dir, "refs"), 0o700); err != nil {
		return "", errs.At(errs.Internal, alias, "", "the push's git directory cannot be made").Wrap(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return "", errs.At(errs.Internal, alias, "", "the push's git directory cannot be made").Wrap(err)
		}
	}
	return dir, nil
}

// anyLocal reports whether a URL is served by a process on this host
// (file:// or a plain path) rather than over ssh or https.
func anyLocal(urls []string) bool {
	for _, u := range urls {
		switch {
		case strings.HasPrefix(u, "file://"), strings.HasPrefix(u, "/"), strings.HasPrefix(u, "."):
			return true
		case !strings.Contains(u, "://") && !strings.Contains(u, ":"):
			return true
		}
	}
	return false
}

// remoteURLs returns the fetch and the push URLs of remote as git
// resolves them (after insteadOf/pushInsteadOf rewriting), refusing a
// remote that is not configured, uses a foreign VCS helper, or has a URL
// outside https/ssh/file.
func remoteURLs(ctx context.Context, g *gitRunner, remote string) (fetch, push []string, err error) {
	if _, found, err := g.value(ctx, "the remote's vcs", "config", "--get", "remote."+remote+".vcs"); err != nil {
		return nil, nil, err
	} else if found {
		return nil, nil, errs.At(errs.NoUpstream, g.alias, "", fmt.Sprintf("remote %q uses a remote helper; push_repo allows only https, ssh and file remotes", remote))
	}
	for _, isPush := range []bool{false, true} {
		args := []string{"remote", "get-url", "--all"}
		if isPush {
			args = append(args, "--push")
		}
		pr, err := g.run(ctx, "the remote's URL", append(args, "--", remote)...)
		if err != nil {
			return nil, nil, err
		}
		if pr.exitCode != 0 {
			return nil, nil, errs.At(errs.NoUpstream, g.alias, "", fmt.Sprintf("remote %q is not configured", remote))
		}
		for _, u := range strings.Split(strings.TrimRight(string(pr.stdout), "\n"), "\n") {
			if proto, ok := urlProtocol(u); !ok {
				what := "has an unusable URL"
				if proto != "" {
					what = fmt.Sprintf("uses the %q transport", proto)
				}
				return nil, nil, errs.At(errs.NoUpstream, g.alias, "", fmt.Sprintf("remote %q %s; push_repo allows only https, ssh and file remotes", remote, what))
			}
			if isPush {
				push = append(push, u)
			} else {
				fetch = append(fetch, u)
			}
		}
	}
	return fetch, push, nil
}

// configEntry is one configuration value as `git config -z --show-scope
// --get-regexp` reports it.
type configEntry struct {
	scope, key, value string
	hasValue          bool
}

// operatorScope reports whether a value comes from the operator's own
// files (system, global and what they include) rather than from the
// repository (local, worktree) or the command line (our overrides).
func (e configEntry) operatorScope() bool { return e.scope == "system" || e.scope == "global" }

// pushConfigRE selects the settings pushTrustArgs looks at: credential
// helpers, URL rewriting, and certificate authorities.
const pushConfigRE = `^(credential\.helper|credential\..*\.helper|url\..*\.insteadof|url\..*\.pushinsteadof|http\.(.*\.)?(sslcainfo|sslcapath|sslcert|sslkey|cookiefile))$`

// configEntries lists the values whose key matches re, in git's order,
// with their scope (includes followed).
func configEntries(ctx context.Context, g *gitRunner, re string) ([]configEntry, error) {
	pr, err := g.run(ctx, "the configuration", "config", "-z", "--includes", "--show-scope", "--get-regexp", re)
	if err != nil {
		return nil, err
	}
	switch pr.exitCode {
	case 0:
	case 1:
		return nil, nil // none
	default:
		return nil, errs.At(errs.RepoUnsupported, g.alias, "", fmt.Sprintf("git failed reading the configuration (exit %d)", pr.exitCode))
	}
	if pr.stdoutTruncated {
		return nil, errs.At(errs.RepoUnsupported, g.alias, "", "the configuration is too large to check")
	}
	fields := strings.Split(string(pr.stdout), "\x00")
	var out []configEntry
	for i := 0; i+1 < len(fields); i += 2 {
		e := configEntry{scope: fields[i]}
		e.key, e.value, e.hasValue = strings.Cut(fields[i+1], "\n")
		out = append(out, e)
	}
	return out, nil
}

// pushTrustArgs returns the -c settings for git push that keep the
// repository's configuration from choosing what runs or whom to trust:
//
//   - credential helpers: the list is reset (an empty credential.helper
//     clears every helper read before it, URL-specific ones included) and
//     only the operator's system/global helpers are given again, in
//     their order; a repository's `credential.helper = !cmd` never runs;
//   - TLS: http.sslVerify=true, generically and for each remote URL (a
//     URL-specific setting beats a generic one of any origin); a
//     repository that names its own certificate authorities, client
//     certificate or cookie file (http.sslCAInfo, sslCAPath, sslCert,
//     sslKey, cookieFile: files the operator's git would read and trust
//     or send) is refused;
//   - URL rewriting: a repository's url.<base>.insteadOf or
//     pushInsteadOf that applies to the remote's configured URL is
//     refused, so that the URL pushed to is the remote's own (as the
//     operator's rewrite rules, if any, turn it), which remoteURLs
//     resolved and checked.
func pushTrustArgs(ctx context.Context, g *gitRunner, remote string, urls []string) ([]string, error) {
	entries, err := configEntries(ctx, g, pushConfigRE)
	if err != nil {
		return nil, err
	}
	var raw []string
	for _, key := range []string{"remote." + remote + ".url", "remote." + remote + ".pushurl"} {
		pr, err := g.run(ctx, "the remote's URL", "config", "-z", "--get-all", key)
		if err != nil {
			return nil, err
		}
		if pr.exitCode == 0 {
			raw = append(raw, strings.Split(strings.TrimSuffix(string(pr.stdout), "\x00"), "\x00")...)
		}
	}
	if len(raw) == 0 {
		return nil, errs.At(errs.NoUpstream, g.alias, "", fmt.Sprintf("remote %q has no remote.%s.url in the git configuration; push_repo pushes only to a configured URL", remote, remote))
	}
	args := []string{"-c", "credential.helper="}
	for _, e := range entries {
		key := strings.ToLower(e.key)
		switch {
		case strings.HasPrefix(key, "credential."):
			if e.operatorScope() && e.hasValue {
				args = append(args, "-c", e.key+"="+e.value)
			}
		case strings.HasPrefix(key, "url."):
			if e.operatorScope() || e.scope == "command" {
				continue
			}
			for _, u := range raw {
				if e.value != "" && strings.HasPrefix(u, e.value) {
					return nil, errs.At(errs.NoUpstream, g.alias, "", fmt.Sprintf("the repository's configuration rewrites the URL of remote %q (url.*.insteadOf or pushInsteadOf); push_repo pushes only to the remote's configured URL (rewrite rules belong in the operator's global configuration)", remote))
				}
			}
		case strings.HasPrefix(key, "http."):
			if !e.operatorScope() && e.scope != "command" {
				return nil, errs.At(errs.RepoUnsupported, g.alias, "", "the repository's configuration names TLS or cookie files (http.sslCAInfo, sslCAPath, sslCert, sslKey or cookieFile); push_repo uses only those of the operator's global configuration")
			}
		}
	}
	args = append(args, "-c", "http.sslVerify=true")
	seen := map[string]bool{}
	for _, u := range append(append([]string(nil), urls...), raw...) {
		if seen[u] || !strings.Contains(u, "://") {
			continue
		}
		if strings.ContainsAny(u, "=\n\x00") {
			// It cannot be a -c key; its URL-specific settings could
			// not be overridden.
			return nil, errs.At(errs.NoUpstream, g.alias, "", fmt.Sprintf("remote %q has a URL with '=' or a control character; push_repo cannot pin its TLS settings", remote))
		}
		seen[u] = true
		args = append(args, "-c", "http."+u+".sslVerify=true")
	}
	return args, nil
}

// scrubURLs replaces the remote's URLs (and the path of a local one) by
// the remote's name, and the workdir root by "alias:".
func scrubURLs(sc *scrubber, remote string, urls []string, s string) string {
	var more [][2]string
	for _, u := range urls {
		more = append(more, [2]string{u, remote})
		if p, ok := strings.CutPrefix(u, "file://"); ok && p != "" && p != "/" {
			more = append(more, [2]string{p, remote})
		} else if proto, _ := urlProtocol(u); proto == "file" && filepath.IsAbs(u) && u != "/" {
			more = append(more, [2]string{filepath.Clean(u), remote})
		}
	}
	// Longest first, so that a URL is replaced before its path.
	for i := range more {
		for j := i + 1; j < len(more); j++ {
			if len(more[j][0]) > len(more[i][0]) {
				more[i], more[j] = more[j], more[i]
			}
		}
	}
	return sc.replace([]byte(s), more...)
}

// pushOutput is git push's output for the result: stdout without the
// "To <url>" lines, then stderr, host paths and remote URLs replaced,
// bounded to the tail.
func pushOutput(g *gitRunner, sc *scrubber, remote string, urls []string, pr *procResult) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(string(pr.stdout), "\n") {
		if line == "" || strings.HasPrefix(line, "To ") {
			continue
		}
		b.WriteString(line)
	}
	b.Write(pr.stderr)
	out := scrubURLs(sc, remote, urls, b.String())
	s, _ := sc.tail([]byte(out), pr.stdoutTruncated || pr.stderrTruncated || len(out) > g.tail, g.tail)
	return s
}

// parsePorcelain reads `git push --porcelain` lines
// "<flag>\t<from>:<to>\t<summary>" for the destination ref and returns
// "ok", "up_to_date" or "rejected" ("" when there is no such line), and
// for a rejection its summary.
func parsePorcelain(out, dst string) (status, reason string) {
	for _, line := range strings.Split(out, "\n") {
		if len(line) < 2 || line[1] != '\t' {
			continue
		}
		fields := strings.SplitN(line[2:], "\t", 2)
		if _, to, ok := strings.Cut(fields[0], ":"); !ok || to != dst {
			continue
		}
		summary := ""
		if len(fields) == 2 {
			summary = strings.TrimSpace(fields[1])
		}
		switch line[0] {
		case '!':
			return "rejected", summary
		case ' ', '*', '+':
			status = "ok"
		case '=':
			if status == "" {
				status = "up_to_date"
			}
		}
	}
	return status, ""
}

// failureLine picks the line of git's output that says why it failed.
func failureLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for _, prefix := range []string{"fatal:", "error:", "remote:"} {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
	}
	return lines[len(lines)-1]
}
