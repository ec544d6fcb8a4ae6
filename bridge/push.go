package bridge

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/serverfs/serverfs/bridge/wire"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

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
