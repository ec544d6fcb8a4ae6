package bridge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/serverfs/serverfs/bridge/wire"
	"github.com/serverfs/serverfs/internal/errs"
)

const testPackageJSON = "{\n  \"name\": \"widget\",\n  \"version\": \"0.1.0\"\n}\n"

// relRepo is ptSetup plus a committed and pushed package.json at 0.1.0,
// a release action "rel" of kind (file URL of the bare remote approved)
// and a fake gh at an absolute path that records its argv, environment
// and directory in logDir and prints a run URL.
type relRepo struct {
	*ptRepo
	logDir string
	gh     string
}

func relSetup(t *testing.T, kind string) *relRepo {
	t.Helper()
	r := &relRepo{ptRepo: ptSetup(t)}
	rtWrite(t, filepath.Join(r.work, "package.json"), testPackageJSON)
	ptGit(t, r.work, "add", "package.json")
	ptGit(t, r.work, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "package.json")
	ptGit(t, r.work, "push", "-q", "origin", "main")
	r.logDir = filepath.Join(r.base, "ghlog")
	if err := os.Mkdir(r.logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	r.gh = filepath.Join(r.base, "bin", "fake-gh")
	rtWrite(t, r.gh, "#!/bin/sh\nprintf '%s\\n' \"$@\" > "+r.logDir+"/argv\nenv > "+r.logDir+"/env\npwd > "+r.logDir+"/pwd\n"+
		"echo \"Created workflow_dispatch event for $3 at $7 (config $HOME/.config/gh, in $(pwd))\"\necho 'https://github.com/acme/widget/actions/runs/987654'\n")
	os.Chmod(r.gh, 0o755)
	a := Action{Kind: kind, Repository: "acme/widget", FetchURLs: []string{"file://" + r.remote}, PushURLs: []string{"file://" + r.remote},
		Integrity: map[string]string{"package.json": rtSHA(testPackageJSON)}}
	if kind == KindPublishNPM {
		a.Workflow, a.GH = "publish.yml", r.gh
	}
	r.wp.Actions = map[string]Action{"rel": a}
	return r
}

func (r *relRepo) release(t *testing.T, tag string) (*wire.ReleaseResult, error) {
	t.Helper()
	return Release(context.Background(), r.fsys, "w", r.wp, "rel", tag, RunLimits{Timeout: 30 * time.Second})
}

// tags lists the tags of a repository (local or the bare remote).
func tags(t *testing.T, dir string) string {
	t.Helper()
	return ptGit(t, dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/tags")
}

func (r *relRepo) ghRan() bool { return rtExists(filepath.Join(r.logDir, "argv")) }

func TestReleaseTagHappyPath(t *testing.T) {
	r := relSetup(t, KindReleaseTag)
	head := ptGit(t, r.work, "rev-parse", "HEAD")
	res, err := r.release(t, "v0.1.0")
	if err != nil {
		t.Fatalf("Release: %v", err)
	}
	if res.Status != "created" || res.Tag != "v0.1.0" || res.Commit != head || res.Kind != KindReleaseTag || res.Repository != "acme/widget" || res.Dispatch != nil {
		t.Fatalf("result %+v", res)
	}
	ptNoHostPath(t, r.ptRepo, "push output", res.PushOutput)
	// Exactly that tag, at HEAD, locally and on origin; main unchanged.
	want := "refs/tags/v0.1.0 " + head
	if got := tags(t, r.remote); got != want {
		t.Fatalf("remote tags %q, want %q", got, want)
	}
	if got := tags(t, r.work); got != want {
		t.Fatalf("local tags %q, want %q", got, want)
	}
	if r.remoteRef(t, "refs/heads/main") != head {
		t.Fatal("remote main moved")
	}
	// Again: origin has it at HEAD; reported, nothing changes.
	res, err = r.release(t, "v0.1.0")
	if err != nil || res.Status != "already_at_head" || res.PushOutput != "" {
		t.Fatalf("second Release = %+v, %v", res, err)
	}
}

func TestReleasePublishNPM(t *testing.T) {
	for _, k := range []string{"NPM_TOKEN", "NODE_AUTH_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "OPENAI_API_KEY", "SERVERFS_BRIDGE_TOKEN", "AWS_SECRET_ACCESS_KEY"} {
		t.Setenv(k, "secret-value-"+k)
	}
	r := relSetup(t, KindPublishNPM)
	head := ptGit(t, r.work, "rev-parse", "HEAD")
	c, _ := startBridge(t, &Policy{Workdirs: map[string]WorkdirPolicy{"w": r.wp}})
	res, err := c.RunRelease(context.Background(), "w", "rel", "v0.1.0")
	if err != nil {
		t.Fatalf("RunRelease: %v", err)
	}
	if res.Status != "created" || res.Commit != head || res.Dispatch == nil {
		t.Fatalf("result %+v", res)
	}
	if d := res.Dispatch; d.Workflow != "publish.yml" || d.RunID != "987654" || d.RunURL != "https://github.com/acme/widget/actions/runs/987654" {
		t.Fatalf("dispatch %+v", d)
	}
	if got := tags(t, r.remote); got != "refs/tags/v0.1.0 "+head {
		t.Fatalf("remote tags %q", got)
	}
	ptNoHostPath(t, r.ptRepo, "dispatch output", res.Dispatch.Output)
	if !strings.Contains(res.Dispatch.Output, "Created workflow_dispatch event for publish.yml at v0.1.0 (config ~/.config/gh, in <bridge>)") {
		t.Errorf("dispatch output %q", res.Dispatch.Output)
	}
	argv := readString(filepath.Join(r.logDir, "argv"))
	if argv != "workflow\nrun\npublish.yml\n--repo\nacme/widget\n--ref\nv0.1.0\n" {
		t.Fatalf("gh argv %q", argv)
	}
	env := readString(filepath.Join(r.logDir, "env"))
	for _, bad := range []string{"secret-value-", testToken, "NPM_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "SSH_AUTH_SOCK", "GIT_"} {
		if strings.Contains(env, bad) {
			t.Errorf("gh's environment holds %q:\n%s", bad, env)
		}
	}
	if !strings.Contains(env, "HOME="+os.Getenv("HOME")+"\n") || !strings.Contains(env, "GH_PROMPT_DISABLED=1") {
		t.Errorf("gh's environment lacks the operator's HOME or GH_PROMPT_DISABLED:\n%s", env)
	}
	if pwd := strings.TrimSpace(readString(filepath.Join(r.logDir, "pwd"))); strings.HasPrefix(pwd, r.work) {
		t.Errorf("gh ran in the workdir (%s)", pwd)
	}

	// gh failing: DISPATCH_FAILED, the tag stays, the same call retries.
	rtWrite(t, r.gh, "#!/bin/sh\necho 'HTTP 404: workflow not found' >&2\nexit 1\n")
	_, err = c.RunRelease(context.Background(), "w", "rel", "v0.1.0")
	if fe := rtCode(t, err, errs.DispatchFailed); !strings.Contains(fe.Msg, "HTTP 404") {
		t.Fatalf("message %q", fe.Msg)
	}
	if got := tags(t, r.remote); got != "refs/tags/v0.1.0 "+head {
		t.Fatalf("remote tags after a failed dispatch %q", got)
	}
}

// TestReleasePreconditions: each precondition failing on its own gives
// its code, leaves no tag anywhere, and gh never runs.
func TestReleasePreconditions(t *testing.T) {
	cases := []struct {
		name  string
		tag   string
		setup func(t *testing.T, r *relRepo)
		code  errs.Code
	}{
		{"wrong branch", "v0.1.0", func(t *testing.T, r *relRepo) {
			ptGit(t, r.work, "checkout", "-q", "-b", "release")
			ptGit(t, r.work, "branch", "-q", "--set-upstream-to=origin/main")
		}, errs.ReleaseWrongBranch},
		{"detached", "v0.1.0", func(t *testing.T, r *relRepo) { ptGit(t, r.work, "checkout", "-q", "--detach") }, errs.ReleaseWrongBranch},
		{"no upstream", "v0.1.0", func(t *testing.T, r *relRepo) { ptGit(t, r.work, "branch", "--unset-upstream") }, errs.NoUpstream},
		{"upstream other", "v0.1.0", func(t *testing.T, r *relRepo) { ptGit(t, r.work, "branch", "-q", "--set-upstream-to=origin/other") }, errs.NoUpstream},
		{"dirty tree", "v0.1.0", func(t *testing.T, r *relRepo) { rtWrite(t, filepath.Join(r.work, "a.txt"), "changed\n") }, errs.RepoDirty},
		{"untracked", "v0.1.0", func(t *testing.T, r *relRepo) { rtWrite(t, filepath.Join(r.work, "new.txt"), "x\n") }, errs.RepoDirty},
		{"staged change", "v0.1.0", func(t *testing.T, r *relRepo) {
			rtWrite(t, filepath.Join(r.work, "a.txt"), "changed\n")
			ptGit(t, r.work, "add", "a.txt")
		}, errs.RepoStagedChanges},
		{"version mismatch", "v0.2.0", func(t *testing.T, r *relRepo) {}, errs.VersionMismatch},
		{"beta vs release", "v0.1.0-beta.1", func(t *testing.T, r *relRepo) {}, errs.VersionMismatch},
		{"unapproved fetch URL", "v0.1.0", func(t *testing.T, r *relRepo) {
			a := r.wp.Actions["rel"]
			a.FetchURLs = []string{"https://github.com/acme/widget.git"}
			r.wp.Actions["rel"] = a
		}, errs.RemoteNotApproved},
		{"unapproved push URL", "v0.1.0", func(t *testing.T, r *relRepo) {
			other := filepath.Join(r.base, "other.git")
			ptGit(t, r.base, "clone", "-q", "--bare", r.remote, other)
			ptGit(t, r.work, "remote", "set-url", "--push", "origin", "file://"+other)
		}, errs.RemoteNotApproved},
		{"remote ahead (stale tracking ref)", "v0.1.0", func(t *testing.T, r *relRepo) {
			// Another clone moves origin's main; this clone's
			// origin/main still says HEAD.
			o := filepath.Join(r.base, "o")
			ptGit(t, r.base, "clone", "-q", r.remote, o)
			ptGit(t, o, "-c", "user.name=O", "-c", "user.email=o@example.com", "commit", "-q", "--allow-empty", "-m", "elsewhere")
			ptGit(t, o, "push", "-q", "origin", "main")
		}, errs.RemoteNotAtHead},
		{"remote behind", "v0.1.0", func(t *testing.T, r *relRepo) {
			ptGit(t, r.work, "-c", "core.hooksPath=/dev/null", "commit", "-q", "--allow-empty", "-m", "unpushed")
		}, errs.RemoteNotAtHead},
		{"pin mismatch", "v0.1.0", func(t *testing.T, r *relRepo) {
			a := r.wp.Actions["rel"]
			a.Integrity = map[string]string{"package.json": rtSHA("{}")}
			r.wp.Actions["rel"] = a
		}, errs.IntegrityMismatch},
		{"repository filter", "v0.1.0", func(t *testing.T, r *relRepo) {
			ptGit(t, r.work, "config", "filter.x.clean", "touch "+filepath.Join(r.base, "PWNED"))
		}, errs.RepoUnsupported},
	}
	for _, bad := range []string{"v1.2", "1.2.3", "v01.2.3", "v1.02.3", "v1.2.03", "v1.2.3-rc.1", "v1.2.3-beta.01", "v1.2.3\n", "--tags", "", "v1.2.3 ", "refs/tags/v1.2.3", "v1.2.3-beta", "v" + strings.Repeat("1", 70) + ".0.0"} {
		cases = append(cases, struct {
			name  string
			tag   string
			setup func(t *testing.T, r *relRepo)
			code  errs.Code
		}{"tag " + bad, bad, func(t *testing.T, r *relRepo) {}, errs.InvalidArgument})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := relSetup(t, KindPublishNPM)
			c.setup(t, r)
			remoteBefore := ptGit(t, r.remote, "for-each-ref")
			res, err := r.release(t, c.tag)
			fe := rtCode(t, err, c.code)
			if res != nil {
				t.Errorf("a result with the error: %+v", res)
			}
			ptNoHostPath(t, r.ptRepo, "message", fe.Error())
			if got := tags(t, r.work); got != "" {
				t.Errorf("local tags %q", got)
			}
			if got := tags(t, r.remote); got != "" {
				t.Errorf("remote tags %q", got)
			}
			if after := ptGit(t, r.remote, "for-each-ref"); after != remoteBefore && c.name != "remote ahead (stale tracking ref)" {
				t.Errorf("remote refs changed:\n%s\n%s", remoteBefore, after)
			}
			if r.ghRan() {
				t.Error("gh ran")
			}
			if rtExists(filepath.Join(r.base, "PWNED")) {
				t.Error("the repository's filter ran")
			}
			if rtExists(filepath.Join(r.work, ".git", "index.lock")) {
				t.Error("an index.lock was left")
			}
		})
	}
}

func TestReleaseTagConflicts(t *testing.T) {
	t.Run("remote tag elsewhere", func(t *testing.T) {
		r := relSetup(t, KindPublishNPM)
		old := ptGit(t, r.work, "rev-parse", "HEAD~1")
		ptGit(t, r.work, "tag", "v0.1.0", old)
		ptGit(t, r.work, "push", "-q", "origin", "refs/tags/v0.1.0")
		ptGit(t, r.work, "tag", "-d", "v0.1.0")
		_, err := r.release(t, "v0.1.0")
		rtCode(t, err, errs.TagConflict)
		if got := tags(t, r.remote); got != "refs/tags/v0.1.0 "+old {
			t.Errorf("remote tags %q", got)
		}
		if got := tags(t, r.work); got != "" {
			t.Errorf("local tags %q", got)
		}
		if r.ghRan() {
			t.Error("gh ran")
		}
	})
	t.Run("annotated remote tag elsewhere", func(t *testing.T) {
		r := relSetup(t, KindReleaseTag)
		ptGit(t, r.work, "tag", "-a", "-m", "old", "v0.1.0", "HEAD~1")
		ptGit(t, r.work, "push", "-q", "origin", "refs/tags/v0.1.0")
		want := tags(t, r.remote)
		ptGit(t, r.work, "tag", "-d", "v0.1.0")
		_, err := r.release(t, "v0.1.0")
		rtCode(t, err, errs.TagConflict)
		if got := tags(t, r.remote); got != want {
			t.Errorf("remote tags %q, want %q", got, want)
		}
	})
	t.Run("local tag elsewhere", func(t *testing.T) {
		r := relSetup(t, KindPublishNPM)
		old := ptGit(t, r.work, "rev-parse", "HEAD~1")
		ptGit(t, r.work, "tag", "v0.1.0", old)
		_, err := r.release(t, "v0.1.0")
		rtCode(t, err, errs.TagConflict)
		if got := tags(t, r.work); got != "refs/tags/v0.1.0 "+old {
			t.Errorf("local tags %q", got)
		}
		if got := tags(t, r.remote); got != "" {
			t.Errorf("remote tags %q", got)
		}
		if r.ghRan() {
			t.Error("gh ran")
		}
	})
	t.Run("annotated tag at HEAD on origin", func(t *testing.T) {
		r := relSetup(t, KindPublishNPM)
		ptGit(t, r.work, "tag", "-a", "-m", "release", "v0.1.0")
		ptGit(t, r.work, "push", "-q", "origin", "refs/tags/v0.1.0")
		want := tags(t, r.remote)
		res, err := r.release(t, "v0.1.0")
		if err != nil || res.Status != "already_at_head" || res.Dispatch == nil {
			t.Fatalf("Release = %+v, %v", res, err)
		}
		if got := tags(t, r.remote); got != want {
			t.Errorf("remote tags %q, want %q", got, want)
		}
	})
	t.Run("local tag at HEAD pushed", func(t *testing.T) {
		r := relSetup(t, KindReleaseTag)
		ptGit(t, r.work, "tag", "v0.1.0")
		res, err := r.release(t, "v0.1.0")
		if err != nil || res.Status != "created" {
			t.Fatalf("Release = %+v, %v", res, err)
		}
		if got := tags(t, r.remote); got != tags(t, r.work) {
			t.Errorf("remote tags %q", got)
		}
	})
	t.Run("rejected push removes the tag it made", func(t *testing.T) {
		r := relSetup(t, KindReleaseTag)
		// origin cannot create the ref: refs/tags/v0.1.0/x exists there
		// (a directory/file conflict), which ls-remote does not match.
		ptGit(t, r.remote, "update-ref", "refs/tags/v0.1.0/x", "main")
		_, err := r.release(t, "v0.1.0")
		rtCode(t, err, errs.PushRejected)
		if got := tags(t, r.work); got != "" {
			t.Errorf("local tags after a failed push %q", got)
		}
	})
}

// TestReleaseHoldsLease: while gh runs (blocked on a FIFO) the workdir's
// writer lease is taken; after the call it is free again.
func TestReleaseHoldsLease(t *testing.T) {
	r := relSetup(t, KindPublishNPM)
	fifo := filepath.Join(r.base, "gate")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	rtWrite(t, r.gh, "#!/bin/sh\ncat "+fifo+"\n")
	c, _ := startBridge(t, &Policy{Workdirs: map[string]WorkdirPolicy{"w": r.wp}})
	done := make(chan error, 1)
	go func() {
		_, err := c.RunRelease(context.Background(), "w", "rel", "v0.1.0")
		done <- err
	}()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // returns once gh reads it
	if err != nil {
		t.Fatal(err)
	}
	err = c.Call(context.Background(), wire.MethodLeaseAcquire, wire.LeaseParams{Workdir: "w", Purpose: "test"}, nil)
	rtCode(t, err, errs.LeaseBusy)
	w.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := c.Call(context.Background(), wire.MethodLeaseAcquire, wire.LeaseParams{Workdir: "w", Purpose: "test"}, nil); err != nil {
		t.Fatalf("lease after the release: %v", err)
	}
}

// TestReleaseServerArguments: the bridge's own checks of what it is sent.
func TestReleaseServerArguments(t *testing.T) {
	r := relSetup(t, KindReleaseTag)
	r.wp.Actions["lint"] = Action{Argv: []string{"/bin/true"}, Argument: ArgumentNone}
	c, _ := startBridge(t, &Policy{Workdirs: map[string]WorkdirPolicy{"w": r.wp}})
	ctx := context.Background()
	_, err := c.RunAction(ctx, "w", "rel", "")
	rtCode(t, err, errs.InvalidArgument)
	_, err = c.RunRelease(ctx, "w", "lint", "v0.1.0")
	rtCode(t, err, errs.InvalidArgument)
	err = c.Call(ctx, wire.MethodActionsRelease, wire.ActionParams{Workdir: "w", Action: "rel", ReleaseTag: "v0.1.0", Path: "package.json"}, nil)
	rtCode(t, err, errs.InvalidArgument)
	err = c.Call(ctx, wire.MethodActionsRun, wire.ActionParams{Workdir: "w", Action: "lint", ReleaseTag: "v0.1.0"}, nil)
	rtCode(t, err, errs.InvalidArgument)
	acts, err := c.Actions(ctx, "w")
	if err != nil || len(acts) != 2 || acts[1] != (wire.ActionInfo{Name: "rel", Kind: KindReleaseTag, Argument: ArgumentReleaseTag, Mutates: true}) {
		t.Fatalf("actions %+v, %v", acts, err)
	}
	if got := tags(t, r.remote); got != "" {
		t.Fatalf("remote tags %q", got)
	}
}
