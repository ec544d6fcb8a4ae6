package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/serverfs/serverfs/bridge/wire"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

// The release built-ins: release_tag creates
// the caller's release tag at HEAD and pushes exactly that tag to
// origin; publish_npm then dispatches the repository's fixed GitHub
// Actions workflow for the tag with the operator's gh login. No argv, no
// npm token: the workflow publishes through trusted publishing.

// maxPackageJSONBytes bounds the package.json a release reads.
const maxPackageJSONBytes = 1 << 20

// ghEnvNames are what gh additionally receives: where its configuration
// (the operator's login) lives. Never a token variable.
var ghEnvNames = []string{"XDG_CONFIG_HOME", "GH_CONFIG_DIR"}

// runURLRE finds the run URL gh workflow run prints (newer versions).
var runURLRE = regexp.MustCompile(`https://github\.com/[A-Za-z0-9._-]+/[A-Za-z0-9._-]+/actions/runs/([0-9]{1,20})`)

// Release runs the release action name (kind release_tag or publish_npm)
// of workdir alias for tag. Every precondition is checked first, in this
// order, each with its own code and none changing anything: the branch
// is main (RELEASE_WRONG_BRANCH) tracking origin/main (NO_UPSTREAM);
// origin's fetch and push URLs are approved (REMOTE_NOT_APPROVED); the
// index equals HEAD (REPO_STAGED_CHANGES) and the work tree the index
// (REPO_DIRTY, untracked files included); package.json's version is the
// tag without "v" (VERSION_MISMATCH); origin's main, asked of origin, is
// HEAD (REMOTE_NOT_AT_HEAD); the tag is absent or at HEAD locally and on
// origin (TAG_CONFLICT); the pins verify (INTEGRITY_MISMATCH). Then the
// tag ref is created at HEAD (compare-and-create) and exactly
// refs/tags/<tag> is pushed with push_repo's hardening; a failed push
// deletes the tag it created. publish_npm then runs gh workflow run.
// The caller holds the workdir's writer lease around the call.
func Release(ctx context.Context, fsys *sfs.FS, alias string, wp WorkdirPolicy, name, tag string, lim RunLimits) (*wire.ReleaseResult, error) {
	start := time.Now()
	w, a, err := releaseAction(fsys, alias, wp, name, tag)
	if err != nil {
		return nil, err
	}
	if lim.Timeout <= 0 {
		lim.Timeout = actionTimeout(a, lim)
	}
	g, err := newGitRunner(alias, wp.Root, lim)
	if err != nil {
		return nil, err
	}
	rel := &releaseRun{g: g, sc: newScrubber(wp.Root, alias, lim), alias: alias, tag: tag, tagRef: "refs/tags/" + tag}
	if err := rel.checkBranch(ctx); err != nil {
		return nil, err
	}
	if err := rel.checkOrigin(ctx, a); err != nil {
		return nil, err
	}
	if err := rel.readHead(ctx); err != nil {
		return nil, err
	}
	// package.json's version.
	if err := checkPackageVersion(w, alias, tag); err != nil {
		return nil, err
	}
	remoteTag, err := rel.checkOriginRefs(ctx)
	if err != nil {
		return nil, err
	}
	res := &wire.ReleaseResult{Action: name, Kind: a.Kind, Tag: tag, Commit: rel.commit, Repository: a.Repository}
	localFound, err := rel.checkLocalTag(ctx)
	if err != nil {
		return nil, err
	}

	// Last thing before anything changes.
	if err := verifyPins(w, alias, a.Integrity); err != nil {
		return nil, err
	}

	if remoteTag == rel.commit {
		res.Status = "already_at_head"
	} else if err := rel.pushTag(ctx, localFound, res); err != nil {
		return nil, err
	}

	if a.Kind == KindPublishNPM {
		d, err := dispatchWorkflow(ctx, g, rel.sc, a, tag, lim)
		if err != nil {
			return nil, err
		}
		res.Dispatch = d
	}
	res.DurationMs = time.Since(start).Milliseconds()
	return res, nil
}

// releaseAction checks what the call may do from the policy alone: the
// workdir, the action and the tag.
func releaseAction(fsys *sfs.FS, alias string, wp WorkdirPolicy, name, tag string) (*sfs.Workdir, Action, error) {
	w, err := fsys.Workdir(alias)
	if err != nil {
		return nil, Action{}, err
	}
	if !wp.ReadWrite {
		return nil, Action{}, errs.At(errs.WorkdirReadOnly, alias, "", "is read-only; release actions need a read-write workdir")
	}
	if !wp.RepoOps {
		return nil, Action{}, errs.At(errs.RepoOpsDisabled, alias, "", "has no repository operations enabled")
	}
	a, ok := wp.Actions[name]
	if !ok {
		return nil, Action{}, errs.At(errs.ActionNotFound, alias, "", fmt.Sprintf("has no action %q", sfs.DisplayPath(name)))
	}
	if !a.IsRelease() {
		return nil, Action{}, errs.At(errs.InvalidArgument, alias, "", fmt.Sprintf("action %q is a command action; it takes no release_tag", name))
	}
	if why := wire.CheckReleaseTag(tag); why != "" {
		return nil, Action{}, errs.At(errs.InvalidArgument, alias, "", why)
	}
	st, err := w.Control().Lstat(".git")
	if err != nil || st.Type() != sfs.TypeDirectory {
		return nil, Action{}, errs.At(errs.RepoNotFound, alias, "", "is not the top of a git work tree (a .git directory)").Wrap(err)
	}
	return w, a, nil
}

// releaseRun carries one release between its checks and its push.
type releaseRun struct {
	g      *gitRunner
	sc     *scrubber
	alias  string
	tag    string
	tagRef string
	// urls holds origin's fetch and push URLs; trust the arguments that
	// harden git against them (as push_repo's).
	urls  []string
	trust []string
	// receivePack and uploadPack are the programs run for a local origin
	// (without its hooks) or named for a remote one.
	uploadPack, receivePack string
	commit                  string // HEAD's
}

// checkBranch requires the branch main, tracking origin/main.
func (rel *releaseRun) checkBranch(ctx context.Context) error {
	g, alias := rel.g, rel.alias
	head, found, err := g.value(ctx, "HEAD", "symbolic-ref", "-q", "HEAD")
	if err != nil {
		return err
	}
	if !found || head != "refs/heads/main" {
		return errs.At(errs.ReleaseWrongBranch, alias, "", "HEAD is not the branch main; releases are tagged on main")
	}
	remote, _, err := g.value(ctx, "the branch's remote", "config", "--get", "branch.main.remote")
	if err != nil {
		return err
	}
	merge, _, err := g.value(ctx, "the branch's upstream", "config", "--get", "branch.main.merge")
	if err != nil {
		return err
	}
	if remote != "origin" || merge != "refs/heads/main" {
		return errs.At(errs.NoUpstream, alias, "", "main does not track origin/main (git branch --set-upstream-to=origin/main main)")
	}
	return nil
}

// checkOrigin requires origin's URLs, as git resolves them, to be
// approved ones, and the repository to configure no filters.
func (rel *releaseRun) checkOrigin(ctx context.Context, a Action) error {
	fetchURLs, pushURLs, err := remoteURLs(ctx, rel.g, "origin")
	if err != nil {
		return err
	}
	if unapprovedURL(fetchURLs, a.FetchURLs) >= 0 {
		return errs.At(errs.RemoteNotApproved, rel.alias, "", "a fetch URL of origin is not among the action's approved fetch_urls")
	}
	if unapprovedURL(pushURLs, a.PushURLs) >= 0 {
		return errs.At(errs.RemoteNotApproved, rel.alias, "", "a push URL of origin is not among the action's approved push_urls")
	}
	rel.urls = append(append([]string(nil), fetchURLs...), pushURLs...)
	if rel.trust, err = pushTrustArgs(ctx, rel.g, "origin", rel.urls); err != nil {
		return err
	}
	rel.uploadPack, rel.receivePack = "git-upload-pack", "git-receive-pack"
	if anyLocal(rel.urls) {
		rel.uploadPack = "git -c core.hooksPath=/dev/null upload-pack"
		rel.receivePack = "git -c core.hooksPath=/dev/null receive-pack"
	}
	return refuseRepoFilters(ctx, rel.g)
}

// readHead requires a clean index and work tree and reads HEAD's commit.
func (rel *releaseRun) readHead(ctx context.Context) error {
	if err := cleanTree(ctx, rel.g); err != nil {
		return err
	}
	commit, found, err := rel.g.value(ctx, "HEAD's commit", "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil {
		return err
	}
	if !found || !isObjectID(commit) {
		return errs.At(errs.ReleaseWrongBranch, rel.alias, "", "main has no commit yet")
	}
	rel.commit = commit
	return nil
}

// checkOriginRefs asks origin for its main and the tag: main must be at
// HEAD, the tag absent or at HEAD. It returns the commit origin's tag
// names ("" when absent).
func (rel *releaseRun) checkOriginRefs(ctx context.Context) (string, error) {
	alias, tag, tagRef, commit := rel.alias, rel.tag, rel.tagRef, rel.commit
	pr, err := rel.g.run(ctx, "git ls-remote", append(rel.trust, "ls-remote", "--upload-pack="+rel.uploadPack, "--", "origin", "refs/heads/main", tagRef, tagRef+"^{}")...)
	if err != nil {
		return "", err
	}
	if pr.exitCode != 0 {
		why := shortTail(scrubURLs(rel.sc, "origin", rel.urls, string(pr.stderr)))
		return "", errs.At(errs.RemoteUnreachable, alias, "", fmt.Sprintf("origin could not be asked for its main and tags (git ls-remote exit %d): %s", pr.exitCode, why))
	}
	refs := parseLsRemote(string(pr.stdout))
	switch rm := refs["refs/heads/main"]; {
	case rm == "":
		return "", errs.At(errs.RemoteNotAtHead, alias, "", fmt.Sprintf("origin has no main; HEAD is %s (push_repo first)", short(commit)))
	case rm != commit:
		return "", errs.At(errs.RemoteNotAtHead, alias, "", fmt.Sprintf("origin's main is %s, HEAD is %s: push_repo first, or bring main up to date on the host", short(rm), short(commit)))
	}
	remoteTag := refs[tagRef+"^{}"]
	if remoteTag == "" {
		remoteTag = refs[tagRef]
	}
	if remoteTag != "" && remoteTag != commit {
		return "", errs.At(errs.TagConflict, alias, "", fmt.Sprintf("origin has tag %s at %s, not at HEAD %s; nothing was changed", tag, short(remoteTag), short(commit)))
	}
	return remoteTag, nil
}

// checkLocalTag requires the local tag absent or at HEAD, and says
// whether it exists.
func (rel *releaseRun) checkLocalTag(ctx context.Context) (bool, error) {
	localTag, localFound, err := rel.g.value(ctx, "the local tag", "rev-parse", "--verify", "-q", rel.tagRef+"^{commit}")
	if err != nil {
		return false, err
	}
	if !localFound {
		// A tag that does not name a commit still exists.
		if _, exists, err := rel.g.value(ctx, "the local tag", "rev-parse", "--verify", "-q", rel.tagRef); err != nil {
			return false, err
		} else if exists {
			localFound, localTag = true, "a non-commit object"
		}
	}
	if localFound && localTag != rel.commit {
		return false, errs.At(errs.TagConflict, rel.alias, "", fmt.Sprintf("the local tag %s is at %s, not at HEAD %s; nothing was changed", rel.tag, short(localTag), short(rel.commit)))
	}
	return localFound, nil
}

// pushTag creates the tag at HEAD unless it exists (compare-and-create)
// and pushes exactly it to origin; a failed push deletes the tag this
// call created.
func (rel *releaseRun) pushTag(ctx context.Context, localFound bool, res *wire.ReleaseResult) error {
	g, alias, tag, tagRef, commit := rel.g, rel.alias, rel.tag, rel.tagRef, rel.commit
	created := false
	if !localFound {
		pr, err := g.run(ctx, "creating the tag", "update-ref", "--no-deref", tagRef, commit, strings.Repeat("0", len(commit)))
		if err != nil {
			return err
		}
		if pr.exitCode != 0 {
			return errs.At(errs.TagConflict, alias, "", fmt.Sprintf("tag %s appeared while it was being created; nothing was changed", tag))
		}
		created = true
	}
	undo := func() {
		if created {
			// Compare-and-delete: only the tag this call made.
			g.run(context.WithoutCancel(ctx), "removing the tag", "update-ref", "--no-deref", "-d", tagRef, commit)
		}
	}
	pr, err := g.run(ctx, "git push", append(rel.trust, "push", "--porcelain", "--no-verify", "--no-follow-tags", "--no-signed",
		"--recurse-submodules=no", "--receive-pack="+rel.receivePack,
		"--", "origin", tagRef+":"+tagRef)...)
	if pr != nil {
		res.PushOutput = pushOutput(g, rel.sc, "origin", rel.urls, pr)
	}
	if err != nil {
		undo()
		return err
	}
	status, reason := parsePorcelain(string(pr.stdout), tagRef)
	switch {
	case status == "ok" && pr.exitCode == 0:
		res.Status = "created"
	case status == "up_to_date" && pr.exitCode == 0:
		res.Status = "already_at_head"
	case status == "rejected" && strings.Contains(reason, "already exists"):
		undo()
		return errs.At(errs.TagConflict, alias, "", fmt.Sprintf("origin refused tag %s: it already exists there (made meanwhile); the local tag this call made was removed", tag))
	default:
		undo()
		why := reason
		if why == "" {
			why = shortTail(failureLine(res.PushOutput))
		}
		return errs.At(errs.PushRejected, alias, "", fmt.Sprintf("the push of tag %s to origin failed: %s; the local tag this call made was removed", tag, scrubURLs(rel.sc, "origin", rel.urls, why)))
	}
	return nil
}

// dispatchWorkflow runs `gh workflow run <workflow> --repo <repository>
// --ref <tag>` with the allowlisted environment (HOME for the operator's
// gh login; no token variable), in a private empty directory, within
// what is left of the action's deadline.
func dispatchWorkflow(ctx context.Context, g *gitRunner, sc *scrubber, a Action, tag string, lim RunLimits) (*wire.DispatchResult, error) {
	env := childEnv(g.tools.path, ghEnvNames, "GH_PROMPT_DISABLED=1", "GH_NO_UPDATE_NOTIFIER=1", "GH_SPINNER_DISABLED=1", "NO_COLOR=1")
	exe := a.GH
	if exe == "" {
		exe = g.tools.gh // as found when the bridge started
	}
	err := exec.ErrNotFound
	if exe != "" {
		err = checkExecutable(exe)
	}
	if err != nil {
		return nil, errs.At(errs.DispatchFailed, g.alias, "", fmt.Sprintf("tag %s is on origin, but the GitHub CLI (gh) cannot be found on the bridge; the same call again retries the dispatch", tag)).Wrap(err)
	}
	dir, err := os.MkdirTemp("", "serverfs-gh-")
	if err != nil {
		return nil, errs.At(errs.Internal, g.alias, "", "no temporary directory for gh").Wrap(err)
	}
	defer os.RemoveAll(dir)
	sc.add(dir, scrubBridgePath)
	left := time.Until(g.deadline)
	if left <= 0 {
		return nil, errs.At(errs.ActionTimeout, g.alias, "", fmt.Sprintf("tag %s is on origin, but no time was left to dispatch the workflow", tag))
	}
	pr, err := runProcess(ctx, procSpec{
		path: exe, argv: []string{"gh", "workflow", "run", a.Workflow, "--repo", a.Repository, "--ref", tag},
		dir: dir, env: env, timeout: left, maxOutput: g.maxOut, tail: g.tail,
	})
	if err != nil {
		return nil, errs.At(errs.DispatchFailed, g.alias, "", fmt.Sprintf("tag %s is on origin, but gh could not be started; the same call again retries the dispatch", tag)).Wrap(err)
	}
	out, _ := sc.tail(append(append([]byte(nil), pr.stdout...), pr.stderr...), pr.stdoutTruncated || pr.stderrTruncated, g.tail)
	d := &wire.DispatchResult{Workflow: a.Workflow, Output: out}
	if m := runURLRE.FindStringSubmatch(out); m != nil {
		d.RunURL, d.RunID = m[0], m[1]
	}
	switch {
	case pr.canceled:
		return nil, errs.At(errs.Canceled, g.alias, "", fmt.Sprintf("tag %s is on origin; the dispatch was cancelled and gh killed", tag)).Wrap(ctx.Err())
	case pr.timedOut, pr.overflowed, pr.exitCode != 0:
		detail := ""
		if t := shortTail(out); t != "" {
			detail = ": " + t
		}
		return nil, errs.At(errs.DispatchFailed, g.alias, "", fmt.Sprintf("tag %s is on origin, but gh workflow run %s failed (exit %d)%s; the same call again retries the dispatch", tag, a.Workflow, pr.exitCode, detail))
	}
	return d, nil
}

// refuseRepoFilters refuses a repository whose own configuration names a
// filter driver: git status would run its clean command.
func refuseRepoFilters(ctx context.Context, g *gitRunner) error {
	entries, err := configEntries(ctx, g, `^filter\..*\.(clean|smudge|process)$`)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.operatorScope() && e.scope != "command" {
			return errs.At(errs.RepoUnsupported, g.alias, "", "the repository's own configuration names a filter driver (filter.*.clean, smudge or process); release actions run no repository command")
		}
	}
	return nil
}

// cleanTree checks the index equals HEAD and the work tree the index,
// with no untracked file, without taking git's optional index lock.
func cleanTree(ctx context.Context, g *gitRunner) error {
	pr, err := g.run(ctx, "git status", "--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=dirty")
	if err != nil {
		return err
	}
	if pr.exitCode != 0 {
		return errs.At(errs.RepoUnsupported, g.alias, "", fmt.Sprintf("git status failed (exit %d)", pr.exitCode))
	}
	staged, dirty := 0, 0
	recs := strings.Split(string(pr.stdout), "\x00")
	for i := 0; i < len(recs); i++ {
		r := recs[i]
		if len(r) < 3 {
			continue
		}
		if r[0] == 'R' || r[0] == 'C' {
			i++ // the source path follows
		}
		if r[0] != ' ' && r[0] != '?' {
			staged++
		} else {
			dirty++
		}
	}
	if pr.stdoutTruncated {
		dirty++
	}
	switch {
	case staged > 0:
		return errs.At(errs.RepoStagedChanges, g.alias, "", fmt.Sprintf("%d path(s) have staged changes; a release needs a clean index and work tree", staged))
	case dirty > 0:
		return errs.At(errs.RepoDirty, g.alias, "", fmt.Sprintf("%d path(s) are modified, deleted or untracked; a release needs a clean work tree (commit or remove them)", dirty))
	}
	return nil
}

// checkPackageVersion reads package.json at the root (a regular file,
// no symlink, bounded) and compares its version with the tag.
func checkPackageVersion(w *sfs.Workdir, alias, tag string) error {
	fail := func(msg string, cause error) error {
		return errs.At(errs.VersionMismatch, alias, "package.json", msg).Wrap(cause)
	}
	f, err := w.Control().Open("package.json")
	if err != nil {
		return fail("cannot be read: a release needs package.json at the root", err)
	}
	defer f.Close()
	if st, err := f.Fstat(); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fail("is not a regular file", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPackageJSONBytes+1))
	if err != nil {
		return fail("cannot be read", err)
	}
	if len(data) > maxPackageJSONBytes {
		return fail(fmt.Sprintf("is larger than %d bytes", maxPackageJSONBytes), nil)
	}
	var pkg struct {
		Version *string `json:"version"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return fail("is not a JSON object with a version string", err)
	}
	if pkg.Version == nil {
		return fail("has no version", nil)
	}
	if *pkg.Version != strings.TrimPrefix(tag, "v") {
		return fail(fmt.Sprintf("has version %q; the tag %s needs %q", showValue(*pkg.Version), tag, strings.TrimPrefix(tag, "v")), nil)
	}
	return nil
}

// parseLsRemote reads `git ls-remote` lines "<id>\t<ref>".
func parseLsRemote(out string) map[string]string {
	refs := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		id, ref, ok := strings.Cut(strings.TrimRight(line, "\r"), "\t")
		if ok && isObjectID(id) {
			refs[ref] = id
		}
	}
	return refs
}

func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func short(id string) string {
	if isObjectID(id) {
		return id[:12]
	}
	return id
}
