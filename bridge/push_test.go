package bridge

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/serverfs/serverfs/bridge/wire"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
)

// ptGit runs the system git in dir for test setup, isolated from the
// user's and the system's configuration.
func ptGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

type ptRepo struct {
	base   string // temp dir holding everything
	work   string // the workdir: a clone with main tracking origin/main
	remote string // bare remote
	fsys   *sfs.FS
	wp     WorkdirPolicy
}

// ptSetup makes a bare remote with main and other, and a work clone
// whose main tracks origin/main; HOME is a fresh directory.
func ptSetup(t *testing.T) *ptRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git not found in PATH: .ci/run installs it; push runs the real git")
	}
	base := t.TempDir()
	home := filepath.Join(base, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	r := &ptRepo{base: base, work: filepath.Join(base, "work"), remote: filepath.Join(base, "remote.git")}
	ptGit(t, base, "init", "-q", "--bare", "-b", "main", r.remote)
	ptGit(t, base, "init", "-q", "-b", "main", r.work)
	ptGit(t, r.work, "config", "user.name", "Test")
	ptGit(t, r.work, "config", "user.email", "test@example.com")
	rtWrite(t, filepath.Join(r.work, "a.txt"), "one\n")
	ptGit(t, r.work, "add", "a.txt")
	ptGit(t, r.work, "commit", "-q", "-m", "one")
	ptGit(t, r.work, "branch", "other")
	ptGit(t, r.work, "remote", "add", "origin", "file://"+r.remote)
	ptGit(t, r.work, "push", "-q", "-u", "origin", "main", "other")
	ptGit(t, r.work, "branch", "--set-upstream-to=origin/main", "main")
	r.fsys = rtFS(t, r.work)
	r.wp = WorkdirPolicy{Root: r.work, ReadWrite: true, RepoOps: true,
		Push: &PushPolicy{URLs: []string{"file://" + r.remote}, Branches: []string{"main", "other"}}}
	return r
}

// approve makes urls the policy's approved push URLs.
func (r *ptRepo) approve(urls ...string) {
	r.wp.Push = &PushPolicy{URLs: urls, Branches: r.wp.Push.Branches}
}

func (r *ptRepo) commit(t *testing.T, msg string) string {
	t.Helper()
	rtWrite(t, filepath.Join(r.work, "a.txt"), msg+"\n")
	ptGit(t, r.work, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-am", msg)
	return ptGit(t, r.work, "rev-parse", "HEAD")
}

// remoteRef is the commit ref names on the remote, "" when it is absent.
func (r *ptRepo) remoteRef(t *testing.T, ref string) string {
	t.Helper()
	out, _ := exec.Command("git", "-C", r.remote, "rev-parse", "--verify", "-q", ref+"^{commit}").Output()
	return strings.TrimSpace(string(out))
}

func (r *ptRepo) push(t *testing.T) (*wire.PushResult, error) {
	t.Helper()
	return Push(context.Background(), r.fsys, "w", r.wp, RunLimits{Timeout: 30 * time.Second})
}

func ptNoHostPath(t *testing.T, r *ptRepo, what, s string) {
	t.Helper()
	if strings.Contains(s, r.base) {
		t.Errorf("%s shows a host path: %q", what, s)
	}
}

func TestPushSuccessAndUpToDate(t *testing.T) {
	r := ptSetup(t)
	head := r.commit(t, "two")
	res, err := r.push(t)
	if err != nil {
		t.Fatalf("Push = %+v, %v", res, err)
	}
	if res.Status != "ok" || res.Branch != "main" || res.Remote != "origin" || res.Upstream != "main" {
		t.Errorf("result %+v", res)
	}
	if got := r.remoteRef(t, "refs/heads/main"); got != head {
		t.Errorf("remote main = %s, want %s", got, head)
	}
	ptNoHostPath(t, r, "output", res.Output)

	res, err = r.push(t)
	if err != nil || res.Status != "up_to_date" {
		t.Errorf("second Push = %+v, %v", res, err)
	}

	// A branch whose upstream has another name: HEAD goes there.
	ptGit(t, r.work, "checkout", "-q", "-b", "feature")
	ptGit(t, r.work, "config", "branch.feature.remote", "origin")
	ptGit(t, r.work, "config", "branch.feature.merge", "refs/heads/other")
	head = r.commit(t, "three")
	res, err = r.push(t)
	if err != nil || res.Status != "ok" || res.Branch != "feature" || res.Upstream != "other" {
		t.Fatalf("Push = %+v, %v", res, err)
	}
	if got := r.remoteRef(t, "refs/heads/other"); got != head {
		t.Errorf("remote other = %s, want %s", got, head)
	}
	if r.remoteRef(t, "refs/heads/feature") != "" {
		t.Error("a remote branch feature was created")
	}
}

func TestPushRejectedNonFastForward(t *testing.T) {
	r := ptSetup(t)
	// Someone else pushes first.
	other := filepath.Join(r.base, "other")
	ptGit(t, r.base, "clone", "-q", r.remote, other)
	rtWrite(t, filepath.Join(other, "b.txt"), "theirs\n")
	ptGit(t, other, "add", "b.txt")
	ptGit(t, other, "-c", "user.name=O", "-c", "user.email=o@example.com", "commit", "-q", "-m", "theirs")
	ptGit(t, other, "push", "-q", "origin", "main")
	theirs := r.remoteRef(t, "refs/heads/main")

	r.commit(t, "mine")
	res, err := r.push(t)
	fe := rtCode(t, err, errs.PushRejected)
	if res == nil || res.Status != "rejected" {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(fe.Msg, "non-fast-forward") && !strings.Contains(fe.Msg, "fetch first") {
		t.Errorf("error %v does not say why", err)
	}
	ptNoHostPath(t, r, "error", err.Error())
	ptNoHostPath(t, r, "output", res.Output)
	if got := r.remoteRef(t, "refs/heads/main"); got != theirs {
		t.Errorf("remote main moved to %s", got)
	}
}

func TestPushExactlyOneRef(t *testing.T) {
	r := ptSetup(t)
	otherBefore := r.remoteRef(t, "refs/heads/other")
	// Configuration that would widen a plain `git push`.
	ptGit(t, r.work, "config", "push.default", "matching")
	ptGit(t, r.work, "config", "--add", "remote.origin.push", "+refs/heads/*:refs/heads/*")
	ptGit(t, r.work, "config", "--add", "remote.origin.push", "refs/tags/*:refs/tags/*")
	ptGit(t, r.work, "config", "push.followTags", "true")
	ptGit(t, r.work, "config", "push.recurseSubmodules", "on-demand")
	ptGit(t, r.work, "config", "remote.origin.mirror", "false")
	ptGit(t, r.work, "checkout", "-q", "other")
	r.commit(t, "other moves locally")
	ptGit(t, r.work, "checkout", "-q", "-b", "extra")
	ptGit(t, r.work, "checkout", "-q", "main")
	head := r.commit(t, "two")
	ptGit(t, r.work, "tag", "-a", "-m", "v1", "v1")

	res, err := r.push(t)
	if err != nil || res.Status != "ok" {
		t.Fatalf("Push = %+v, %v", res, err)
	}
	if got := r.remoteRef(t, "refs/heads/main"); got != head {
		t.Errorf("remote main = %s, want %s", got, head)
	}
	if got := r.remoteRef(t, "refs/heads/other"); got != otherBefore {
		t.Errorf("remote other moved to %s", got)
	}
	if refs := ptGit(t, r.remote, "for-each-ref", "--format=%(refname)"); refs != "refs/heads/main\nrefs/heads/other" {
		t.Errorf("remote refs:\n%s", refs)
	}
}

func TestPushRefusesUnapprovedTransports(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, r *ptRepo, canary string)
	}{
		{"ext url", func(t *testing.T, r *ptRepo, canary string) {
			ptGit(t, r.work, "config", "protocol.ext.allow", "always")
			ptGit(t, r.work, "remote", "set-url", "origin", "ext::sh -c touch% "+canary)
		}},
		{"ext pushurl", func(t *testing.T, r *ptRepo, canary string) {
			ptGit(t, r.work, "config", "protocol.ext.allow", "always")
			ptGit(t, r.work, "config", "remote.origin.pushurl", "ext::sh -c touch% "+canary)
		}},
		{"ext via pushInsteadOf", func(t *testing.T, r *ptRepo, canary string) {
			ptGit(t, r.work, "config", "protocol.ext.allow", "always")
			ptGit(t, r.work, "config", "url.ext::sh -c touch% "+canary+"% #.pushInsteadOf", "file://")
		}},
		{"foreign vcs", func(t *testing.T, r *ptRepo, canary string) {
			ptGit(t, r.work, "config", "remote.origin.vcs", "ext")
		}},
		{"http", func(t *testing.T, r *ptRepo, canary string) {
			ptGit(t, r.work, "remote", "set-url", "origin", "http://127.0.0.1:9/repo.git")
		}},
		{"git protocol", func(t *testing.T, r *ptRepo, canary string) {
			ptGit(t, r.work, "remote", "set-url", "origin", "git://127.0.0.1:9/repo.git")
		}},
		{"ssh option host", func(t *testing.T, r *ptRepo, canary string) {
			ptGit(t, r.work, "config", "remote.origin.url", "-oProxyCommand=touch "+canary+":x")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ptSetup(t)
			before := r.remoteRef(t, "refs/heads/main")
			canary := filepath.Join(r.base, "canary")
			tc.setup(t, r, canary)
			r.commit(t, "two")
			res, err := r.push(t)
			rtCode(t, err, errs.NoUpstream)
			if res != nil {
				t.Errorf("result %+v", res)
			}
			ptNoHostPath(t, r, "error", err.Error())
			if rtExists(canary) {
				t.Fatal("the remote helper ran")
			}
			if got := r.remoteRef(t, "refs/heads/main"); got != before {
				t.Errorf("remote main moved to %s", got)
			}
		})
	}
}

func TestPushURLProtocol(t *testing.T) {
	for u, want := range map[string]bool{
		"https://github.com/o/r.git":      true,
		"ssh://git@github.com/o/r.git":    true,
		"git@github.com:o/r.git":          true,
		"file:///srv/r.git":               true,
		"/srv/r.git":                      true,
		"../r.git":                        true,
		"[::1]:r.git":                     true,
		"ext::sh -c x":                    false,
		"fd::3":                           false,
		"http://h/r":                      false,
		"git://h/r":                       false,
		"ftp://h/r":                       false,
		"-oProxyCommand=x:r":              false,
		"user@-oProxyCommand=x:r":         false,
		"ssh://-oProxyCommand=x/r":        false,
		"":                                false,
		"https://h/r\nurl=ext::sh -c x":   false,
		"persistent-https://h/r.git":      false,
		"remote-helper+custom::whatever/": false,
	} {
		if _, ok := urlProtocol(u); ok != want {
			t.Errorf("urlProtocol(%q) ok = %v, want %v", u, ok, want)
		}
	}
}

func TestPushHooksNeverRun(t *testing.T) {
	r := ptSetup(t)
	canary := filepath.Join(r.base, "canary")
	hook := "#!/bin/sh\necho \"$0\" >> " + canary + "\nexit 0\n"
	hooksDir := filepath.Join(r.work, ".git", "hooks")
	custom := filepath.Join(r.base, "custom-hooks")
	for _, dir := range []string{hooksDir, custom} {
		for _, name := range []string{"pre-push", "reference-transaction"} {
			p := filepath.Join(dir, name)
			rtWrite(t, p, hook)
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Control: the system git does run the hook.
	ptGit(t, r.work, "hook", "run", "pre-push", "--", "origin", "x")
	if !rtExists(canary) {
		t.Fatal("the system git did not run the hook: the canary proves nothing")
	}
	if err := os.Remove(canary); err != nil {
		t.Fatal(err)
	}

	for _, hooksPath := range []string{"", custom} {
		if hooksPath != "" {
			ptGit(t, r.work, "config", "core.hooksPath", hooksPath)
		}
		head := r.commit(t, "two"+hooksPath)
		res, err := r.push(t)
		if err != nil || res.Status != "ok" {
			t.Fatalf("Push = %+v, %v", res, err)
		}
		if got := r.remoteRef(t, "refs/heads/main"); got != head {
			t.Errorf("remote main = %s, want %s", got, head)
		}
		if b, err := os.ReadFile(canary); err == nil {
			t.Fatalf("hooks ran (core.hooksPath %q):\n%s", hooksPath, b)
		}
	}
}

// TestPushLocalRemoteHooksNeverRun: a local (file) remote's receive-pack
// runs on this host as the operator, so the remote repository's own hooks
// (which an agent could arm if the bare repository lies in a writable
// workdir) must not run either.
func TestPushLocalRemoteHooksNeverRun(t *testing.T) {
	r := ptSetup(t)
	canary := filepath.Join(r.base, "remote-canary")
	for _, name := range []string{"pre-receive", "update", "post-receive", "post-update", "reference-transaction"} {
		p := filepath.Join(r.remote, "hooks", name)
		rtWrite(t, p, "#!/bin/sh\necho "+name+" >> "+canary+"\nexit 0\n")
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Control: a plain git push does run them.
	r.commit(t, "plain")
	ptGit(t, r.work, "push", "-q", "origin", "HEAD:refs/heads/main")
	if !rtExists(canary) {
		t.Fatal("a plain push did not run the remote's hooks: the canary proves nothing")
	}
	os.Remove(canary)
	head := r.commit(t, "through the bridge")
	res, err := r.push(t)
	if err != nil || res.Status != "ok" || r.remoteRef(t, "refs/heads/main") != head {
		t.Fatalf("Push = %+v, %v", res, err)
	}
	if b, err := os.ReadFile(canary); err == nil {
		t.Fatalf("the local remote's hooks ran:\n%s", b)
	}
}

// ptFakeSSH installs an executable that records it ran (in record) and
// fails.
func ptFakeSSH(t *testing.T, path, record string) {
	t.Helper()
	rtWrite(t, path, "#!/bin/sh\necho \"$@\" >> "+record+"\necho 'fake ssh: no connection' >&2\nexit 255\n")
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestPushIgnoresRepositorySSHCommand(t *testing.T) {
	r := ptSetup(t)
	canary := filepath.Join(r.base, "repo-ssh-ran")
	ptFakeSSH(t, filepath.Join(r.base, "repo-ssh"), canary)
	ptGit(t, r.work, "config", "core.sshCommand", filepath.Join(r.base, "repo-ssh"))
	ptGit(t, r.work, "config", "core.askPass", filepath.Join(r.base, "repo-ssh"))
	ptGit(t, r.work, "remote", "set-url", "origin", "git@push.example.invalid:o/r.git")
	r.approve("git@push.example.invalid:o/r.git")
	r.commit(t, "two")

	// Plain ssh from the allowlisted PATH (a fake one here).
	bin := filepath.Join(r.base, "bin")
	plain := filepath.Join(r.base, "plain-ssh-ran")
	ptFakeSSH(t, filepath.Join(bin, "ssh"), plain)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("TMPDIR", t.TempDir()) // not above bin: the bridge drops PATH entries under it
	t.Setenv("GIT_SSH_COMMAND", "")
	t.Setenv("GIT_SSH", filepath.Join(r.base, "repo-ssh"))
	res, err := r.push(t)
	rtCode(t, err, errs.PushRejected)
	if res == nil || res.Status != "rejected" {
		t.Errorf("result %+v", res)
	}
	if rtExists(canary) {
		t.Fatal("the repository's core.sshCommand ran")
	}
	b, rerr := os.ReadFile(plain)
	if rerr != nil || !strings.Contains(string(b), "push.example.invalid") || !strings.Contains(string(b), "git-receive-pack") {
		t.Fatalf("plain ssh did not run: %q, %v", b, rerr)
	}

	// The operator's own GIT_SSH_COMMAND wins over the repository's.
	operator := filepath.Join(r.base, "operator-ssh-ran")
	ptFakeSSH(t, filepath.Join(r.base, "operator-ssh"), operator)
	t.Setenv("GIT_SSH_COMMAND", filepath.Join(r.base, "operator-ssh"))
	_, err = r.push(t)
	rtCode(t, err, errs.PushRejected)
	if rtExists(canary) {
		t.Fatal("the repository's core.sshCommand ran")
	}
	if !rtExists(operator) {
		t.Fatal("the operator's GIT_SSH_COMMAND did not run")
	}
}

func TestPushNoUpstream(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, r *ptRepo)
		code  errs.Code
	}{
		{"detached HEAD", func(t *testing.T, r *ptRepo) { ptGit(t, r.work, "checkout", "-q", "--detach") }, errs.NoUpstream},
		{"no upstream", func(t *testing.T, r *ptRepo) { ptGit(t, r.work, "checkout", "-q", "-b", "topic") }, errs.NoUpstream},
		{"local upstream", func(t *testing.T, r *ptRepo) {
			ptGit(t, r.work, "checkout", "-q", "-b", "topic")
			ptGit(t, r.work, "branch", "--set-upstream-to=main")
		}, errs.NoUpstream},
		{"upstream not a branch", func(t *testing.T, r *ptRepo) {
			ptGit(t, r.work, "config", "branch.main.merge", "refs/tags/v1")
		}, errs.NoUpstream},
		{"upstream with a refspec", func(t *testing.T, r *ptRepo) {
			ptGit(t, r.work, "config", "branch.main.merge", "refs/heads/main:refs/heads/x")
		}, errs.NoUpstream},
		{"remote not configured", func(t *testing.T, r *ptRepo) {
			ptGit(t, r.work, "config", "branch.main.remote", "gone")
		}, errs.NoUpstream},
		{"remote is a URL", func(t *testing.T, r *ptRepo) {
			ptGit(t, r.work, "config", "branch.main.remote", "file://"+r.remote)
		}, errs.NoUpstream},
		{"not a repository", func(t *testing.T, r *ptRepo) {
			if err := os.RemoveAll(filepath.Join(r.work, ".git")); err != nil {
				t.Fatal(err)
			}
		}, errs.RepoNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ptSetup(t)
			before := r.remoteRef(t, "refs/heads/main")
			r.commit(t, "two")
			tc.setup(t, r)
			res, err := r.push(t)
			rtCode(t, err, tc.code)
			if res != nil {
				t.Errorf("result %+v", res)
			}
			ptNoHostPath(t, r, "error", err.Error())
			if got := r.remoteRef(t, "refs/heads/main"); got != before {
				t.Errorf("remote main moved to %s", got)
			}
		})
	}

	t.Run("workdir below a repository", func(t *testing.T) {
		r := ptSetup(t)
		sub := filepath.Join(r.work, "sub")
		rtWrite(t, filepath.Join(sub, "f"), "x")
		_, err := Push(context.Background(), rtFS(t, sub), "w", WorkdirPolicy{Root: sub, ReadWrite: true, RepoOps: true}, RunLimits{})
		rtCode(t, err, errs.RepoNotFound)
	})
	t.Run("policy", func(t *testing.T) {
		r := ptSetup(t)
		wp := r.wp
		wp.ReadWrite = false
		_, err := Push(context.Background(), r.fsys, "w", wp, RunLimits{})
		rtCode(t, err, errs.WorkdirReadOnly)
		wp = r.wp
		wp.RepoOps = false
		_, err = Push(context.Background(), r.fsys, "w", wp, RunLimits{})
		rtCode(t, err, errs.RepoOpsDisabled)
	})
}

func TestPushParsePorcelain(t *testing.T) {
	const dst = "refs/heads/main"
	for out, want := range map[string]string{
		"To x\n=\tHEAD:refs/heads/main\t[up to date]\nDone\n":                      "up_to_date",
		"To x\n \tHEAD:refs/heads/main\tabc..def\nDone\n":                          "ok",
		"To x\n*\tHEAD:refs/heads/main\t[new branch]\nDone\n":                      "ok",
		"To x\n!\tHEAD:refs/heads/main\t[rejected] (non-fast-forward)\nDone\n":     "rejected",
		"To x\n!\tHEAD:refs/heads/main\t[remote rejected] (hook declined)\nDone\n": "rejected",
		"To x\n \tHEAD:refs/heads/other\tabc..def\nDone\n":                         "",
		"fatal: no connection\n":                                                   "",
	} {
		if got, _ := parsePorcelain(out, dst); got != want {
			t.Errorf("parsePorcelain(%q) = %q, want %q", out, got, want)
		}
	}
}

func TestPushIgnoresRepositoryAskPass(t *testing.T) {
	r := ptSetup(t)
	// An https remote that wants credentials: git asks its credential
	// helpers (none here), then askpass, then the terminal.
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		http.Error(w, "authentication required", http.StatusUnauthorized)
	}))
	defer srv.Close()
	canary := filepath.Join(r.base, "askpass-ran")
	ptFakeSSH(t, filepath.Join(r.base, "askpass"), canary)
	ptGit(t, r.work, "config", "core.askPass", filepath.Join(r.base, "askpass"))
	ptTrustCert(t, r, srv)
	ptGit(t, r.work, "remote", "set-url", "origin", srv.URL+"/repo.git")
	r.approve(srv.URL + "/repo.git")
	t.Setenv("GIT_ASKPASS", filepath.Join(r.base, "askpass"))
	t.Setenv("SSH_ASKPASS", filepath.Join(r.base, "askpass"))
	r.commit(t, "two")

	start := time.Now()
	res, err := r.push(t)
	rtCode(t, err, errs.PushRejected)
	if hits.Load() == 0 {
		t.Fatalf("git never reached the https remote: %+v, %v", res, err)
	}
	if rtExists(canary) {
		t.Fatal("the repository's core.askPass ran")
	}
	if !strings.Contains(err.Error(), "terminal prompts disabled") {
		t.Errorf("error %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("push took %v", d)
	}
}

func TestPushTimeoutKillsProcessGroup(t *testing.T) {
	r := ptSetup(t)
	// A plain ssh that hangs, ignoring SIGTERM, and records its pid.
	bin := filepath.Join(r.base, "bin")
	pidFile := filepath.Join(r.base, "ssh-pid")
	rtWrite(t, filepath.Join(bin, "ssh"), "#!/bin/sh\ntrap '' TERM\necho $$ > "+pidFile+"\nsleep 1000\n")
	if err := os.Chmod(filepath.Join(bin, "ssh"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("TMPDIR", t.TempDir()) // not above bin: the bridge drops PATH entries under it
	t.Setenv("GIT_SSH_COMMAND", "")
	ptGit(t, r.work, "remote", "set-url", "origin", "git@push.example.invalid:o/r.git")
	r.approve("git@push.example.invalid:o/r.git")
	r.commit(t, "two")

	start := time.Now()
	_, err := Push(context.Background(), r.fsys, "w", r.wp, RunLimits{Timeout: 2 * time.Second})
	rtCode(t, err, errs.ActionTimeout)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the timeout took %v", d)
	}
	b, rerr := os.ReadFile(pidFile)
	if rerr != nil {
		t.Fatalf("ssh never started: %v", rerr)
	}
	pid := rtInts(t, string(b))[0]
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) != syscall.ESRCH {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("ssh (pid %d) outlived the push", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestPushProtocolAllowlistEnforcedByGit(t *testing.T) {
	r := ptSetup(t)
	canary := filepath.Join(r.base, "canary")
	// Even if the configuration allows ext::, git refuses it.
	ptGit(t, r.work, "config", "protocol.allow", "always")
	ptGit(t, r.work, "config", "protocol.ext.allow", "always")
	g, err := newGitRunner("w", r.work, RunLimits{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := g.run(context.Background(), "ls-remote", "ls-remote", "ext::sh -c touch% "+canary)
	if err != nil {
		t.Fatal(err)
	}
	if pr.exitCode == 0 || !strings.Contains(string(pr.stderr), "not allowed") {
		t.Errorf("git ls-remote ext:: = %d, %q", pr.exitCode, pr.stderr)
	}
	if rtExists(canary) {
		t.Fatal("the ext:: helper ran")
	}
}
