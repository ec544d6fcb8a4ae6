package bridge

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/serverfs/serverfs/internal/errs"
)

// The git runs push, release and the policy's rendering share: git as
// the operator's user with a fixed environment and configuration
// overrides (gitRunner), the remote and URL checks, and the push
// output's reading and scrubbing.

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

var (
	schemeURLRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://`)
	helperURLRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9+.-]*::`)
)
