package bridge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/serverfs/serverfs/internal/errs"
)

// pdTransport points a push test's origin at its bare remote A over one
// transport and makes a second bare repository B reachable the same way;
// it returns both URLs as git resolves them.
type pdTransport struct {
	name  string
	setup func(t *testing.T, r *ptRepo) (a, b string)
}

var pdTransports = []pdTransport{
	{"file", func(t *testing.T, r *ptRepo) (string, string) {
		b := filepath.Join(r.base, "B.git")
		ptGit(t, r.base, "init", "-q", "--bare", "-b", "main", b)
		return "file://" + r.remote, "file://" + b
	}},
	// A local git http-backend over TLS, its certificate trusted by the
	// operator's global configuration, credentials from the operator's
	// helper.
	{"https", func(t *testing.T, r *ptRepo) (string, string) {
		srv, _ := ptSmartHTTP(t, r.base)
		ptServe(t, r, srv)
		ptTrust(t, r, srv)
		b := filepath.Join(r.base, "B.git")
		ptGit(t, r.base, "init", "-q", "--bare", "-b", "main", b)
		ptGit(t, b, "config", "http.receivepack", "true")
		return srv.URL + "/remote.git", srv.URL + "/B.git"
	}},
}

// pdRefs lists a repository's refs and what they name.
func pdRefs(t *testing.T, dir string) string {
	t.Helper()
	return ptGit(t, dir, "for-each-ref", "--format=%(refname) %(objectname)")
}

// pdSetup is ptSetup over transport tr, the policy approving A and main
// only.
func pdSetup(t *testing.T, tr pdTransport) (r *ptRepo, a, b, bDir string) {
	t.Helper()
	r = ptSetup(t)
	a, b = tr.setup(t, r)
	r.wp.Push = &PushPolicy{URLs: []string{a}, Branches: []string{"main"}}
	return r, a, b, filepath.Join(r.base, "B.git")
}

// TestPushDestinationDenied: with the policy approving remote A and
// branch main, a repository configuration that sends the push elsewhere
// (origin's URL, a pushurl added, a rewrite rule onto B, another upstream
// branch) is PUSH_DESTINATION_DENIED before git push runs: no ref moves
// or appears in either bare repository, and the answer names neither URL
// nor a host path. With the configuration restored the approved push
// goes through. Over file:// and over https.
func TestPushDestinationDenied(t *testing.T) {
	for _, tr := range pdTransports {
		t.Run(tr.name, func(t *testing.T) {
			r, a, b, bDir := pdSetup(t, tr)
			head := r.commit(t, "two")
			configFile := filepath.Join(r.work, ".git", "config")
			saved, err := os.ReadFile(configFile)
			if err != nil {
				t.Fatal(err)
			}
			aBefore, bBefore := pdRefs(t, r.remote), pdRefs(t, bDir)
			hostile := []struct {
				name   string
				config [][]string // git config arguments
			}{
				{"url to B", [][]string{{"remote.origin.url", b}}},
				{"upstream stolen", [][]string{{"branch.main.merge", "refs/heads/stolen"}}},
				{"insteadOf onto B", [][]string{{"url." + b + ".insteadOf", a}}},
				{"pushInsteadOf onto B", [][]string{{"url." + b + ".pushInsteadOf", a}}},
				{"pushurl B added", [][]string{{"--add", "remote.origin.pushurl", b}}},
				{"pushurls A and B", [][]string{{"--add", "remote.origin.pushurl", a}, {"--add", "remote.origin.pushurl", b}}},
				{"all at once", [][]string{{"remote.origin.url", b}, {"branch.main.merge", "refs/heads/stolen"},
					{"url." + b + ".insteadOf", a}, {"--add", "remote.origin.pushurl", b}}},
			}
			for _, h := range hostile {
				for _, args := range h.config {
					ptGit(t, r.work, append([]string{"config"}, args...)...)
				}
				res, err := r.push(t)
				fe := rtCode(t, err, errs.PushDestinationDenied)
				if res != nil {
					t.Errorf("%s: result %+v", h.name, res)
				}
				for _, leak := range []string{a, b, r.base, strings.TrimPrefix(a, "file://"), "127.0.0.1"} {
					if strings.Contains(err.Error(), leak) {
						t.Errorf("%s: the answer shows %q: %v", h.name, leak, err)
					}
				}
				if !strings.Contains(fe.Msg, "operator") || !strings.Contains(fe.Msg, "nothing was pushed") {
					t.Errorf("%s: the message does not say what happened and what to do: %v", h.name, err)
				}
				if got := pdRefs(t, r.remote); got != aBefore {
					t.Fatalf("%s: A's refs changed:\n%s", h.name, got)
				}
				if got := pdRefs(t, bDir); got != bBefore {
					t.Fatalf("%s: B's refs changed:\n%s", h.name, got)
				}
				if err := os.WriteFile(configFile, saved, 0o644); err != nil {
					t.Fatal(err)
				}
			}

			res, err := r.push(t)
			if err != nil || res.Status != "ok" {
				t.Fatalf("the approved push after the configuration was restored = %+v, %v", res, err)
			}
			if got := r.remoteRef(t, "refs/heads/main"); got != head {
				t.Errorf("A's main = %s, want %s", got, head)
			}
			if got := pdRefs(t, bDir); got != bBefore {
				t.Errorf("B's refs changed:\n%s", got)
			}
		})
	}
}

// TestPushDestinationChangedAfterCheck: the repository's configuration
// rewritten between push_repo's checks and its git push (as a process an
// action left behind could) does not move the push: it lands on A, the
// URL checked, and nothing reaches B; the repository's credential
// helper, added then, does not run either.
func TestPushDestinationChangedAfterCheck(t *testing.T) {
	for _, tr := range pdTransports {
		t.Run(tr.name, func(t *testing.T) {
			r, a, b, bDir := pdSetup(t, tr)
			head := r.commit(t, "two")
			bBefore := pdRefs(t, bDir)
			canary := filepath.Join(r.base, "helper-ran")
			testHookPushChecked = func() {
				for _, args := range [][]string{
					{"remote.origin.url", b}, {"--add", "remote.origin.pushurl", b},
					{"url." + b + ".insteadOf", a}, {"url." + b + ".pushInsteadOf", a},
					{"remote." + a + ".url", b}, {"remote." + a + ".pushurl", b},
					{"branch.main.merge", "refs/heads/stolen"},
					{"--add", "credential.helper", "!touch " + canary + "; true"},
				} {
					ptGit(t, r.work, append([]string{"config"}, args...)...)
				}
			}
			t.Cleanup(func() { testHookPushChecked = nil })
			res, err := r.push(t)
			if err != nil || res.Status != "ok" || res.Upstream != "main" {
				t.Fatalf("Push = %+v, %v", res, err)
			}
			if got := r.remoteRef(t, "refs/heads/main"); got != head {
				t.Errorf("A's main = %s, want %s", got, head)
			}
			if got := pdRefs(t, bDir); got != bBefore {
				t.Errorf("the push reached B:\n%s", got)
			}
			if rtExists(canary) {
				t.Error("the repository's credential helper ran")
			}
			// git's own push would have moved the tracking ref; so does
			// push_repo's.
			if got := ptGit(t, r.work, "rev-parse", "refs/remotes/origin/main"); got != head {
				t.Errorf("origin/main = %s, want %s", got, head)
			}
			ptNoHostPath(t, r, "output", res.Output)
		})
	}
}

// TestPushWithoutPushPolicy: a workdir whose policy has no push section
// (rendered before push destinations existed) pushes nothing and says to
// re-render the policy.
func TestPushWithoutPushPolicy(t *testing.T) {
	r := ptSetup(t)
	before := pdRefs(t, r.remote)
	r.commit(t, "two")
	r.wp.Push = nil
	_, err := r.push(t)
	fe := rtCode(t, err, errs.PushDestinationDenied)
	if !strings.Contains(fe.Msg, "render-policy") {
		t.Errorf("the message does not say to re-render the policy: %v", err)
	}
	if got := pdRefs(t, r.remote); got != before {
		t.Errorf("the remote's refs changed:\n%s", got)
	}
}

// TestPushEveryApprovedPushURL: a remote with two push URLs, both
// approved, gets the push on both, as git pushes to every push URL.
func TestPushEveryApprovedPushURL(t *testing.T) {
	r := ptSetup(t)
	c := filepath.Join(r.base, "C.git")
	ptGit(t, r.base, "clone", "-q", "--bare", r.remote, c)
	ptGit(t, r.work, "config", "--add", "remote.origin.pushurl", "file://"+r.remote)
	ptGit(t, r.work, "config", "--add", "remote.origin.pushurl", "file://"+c)
	r.approve("file://"+r.remote, "file://"+c)
	head := r.commit(t, "two")
	res, err := r.push(t)
	if err != nil || res.Status != "ok" {
		t.Fatalf("Push = %+v, %v", res, err)
	}
	for _, dir := range []string{r.remote, c} {
		if got := ptGit(t, dir, "rev-parse", "refs/heads/main"); got != head {
			t.Errorf("%s: main = %s, want %s", filepath.Base(dir), got, head)
		}
	}
	ptNoHostPath(t, r, "output", res.Output)
}

// TestPushOperatorRewriteAppliesOnce: the operator's own rewrite rule made
// the approved URL; push_repo pushes to that URL, and the rule is not
// applied a second time to it (this rule would: its replacement starts
// with what it replaces).
func TestPushOperatorRewriteAppliesOnce(t *testing.T) {
	r := ptSetup(t)
	mirror := filepath.Join(r.base, "m", "remote.git")
	ptGit(t, r.base, "clone", "-q", "--bare", r.remote, mirror)
	ptGit(t, r.work, "config", "--global", "url.file://"+r.base+"/m/.insteadOf", "file://"+r.base+"/")
	if got := ptGit(t, r.work, "remote", "get-url", "--push", "origin"); got != "file://"+mirror {
		t.Fatalf("git resolves origin to %s", got)
	}
	r.approve("file://" + mirror)
	head := r.commit(t, "two")
	res, err := r.push(t)
	if err != nil || res.Status != "ok" {
		t.Fatalf("Push = %+v, %v", res, err)
	}
	if got := ptGit(t, mirror, "rev-parse", "refs/heads/main"); got != head {
		t.Errorf("the mirror's main = %s, want %s", got, head)
	}
}

// TestPushFromShallowClone: the private git directory the push runs in
// has the repository's shallow list, so a shallow clone pushes.
func TestPushFromShallowClone(t *testing.T) {
	r := ptSetup(t)
	for _, m := range []string{"two", "three"} {
		r.commit(t, m)
	}
	ptGit(t, r.work, "push", "-q", "origin", "main")
	shallow := filepath.Join(r.base, "shallow")
	ptGit(t, r.base, "clone", "-q", "--depth", "1", "file://"+r.remote, shallow)
	if !rtExists(filepath.Join(shallow, ".git", "shallow")) {
		t.Fatal("the clone is not shallow")
	}
	rtWrite(t, filepath.Join(shallow, "b.txt"), "b\n")
	ptGit(t, shallow, "add", "b.txt")
	ptGit(t, shallow, "-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "four")
	head := ptGit(t, shallow, "rev-parse", "HEAD")
	wp := WorkdirPolicy{Root: shallow, ReadWrite: true, RepoOps: true, Push: r.wp.Push}
	res, err := Push(context.Background(), rtFS(t, shallow), "w", wp, RunLimits{Timeout: 30 * time.Second})
	if err != nil || res.Status != "ok" {
		t.Fatalf("Push = %+v, %v", res, err)
	}
	if got := r.remoteRef(t, "refs/heads/main"); got != head {
		t.Errorf("remote main = %s, want %s", got, head)
	}
}
