package bridge

import (
	"encoding/pem"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/serverfs/serverfs/internal/errs"
)

const (
	ptUser     = "pusher"
	ptPassword = "s3cret-pw"
)

// ptSmartHTTP serves the bare repositories below projectRoot over git's
// smart HTTP protocol (git http-backend as CGI) on a TLS server with the
// httptest certificate, asking for basic authentication (ptUser,
// ptPassword). It counts the requests that reached the handler.
func ptSmartHTTP(t *testing.T, projectRoot string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + projectRoot, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1"},
	}
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hits.Add(1)
		if u, p, ok := req.BasicAuth(); !ok || u != ptUser || p != ptPassword {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// ptTrust makes the operator's global configuration trust srv's
// certificate (http.sslCAInfo) and give the test credentials through an
// operator credential helper.
func ptTrust(t *testing.T, r *ptRepo, srv *httptest.Server) {
	t.Helper()
	ptTrustCert(t, r, srv)
	ptOperatorHelper(t, r)
}

// ptTrustCert makes the operator's global configuration trust srv's
// certificate.
func ptTrustCert(t *testing.T, r *ptRepo, srv *httptest.Server) {
	t.Helper()
	ca := filepath.Join(r.base, "home", "test-ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	ptGit(t, r.work, "config", "--global", "http.sslCAInfo", ca)
}

func ptOperatorHelper(t *testing.T, r *ptRepo) {
	t.Helper()
	ptGit(t, r.work, "config", "--global", "credential.helper",
		`!f() { test "$1" = get && echo username=`+ptUser+` && echo password=`+ptPassword+`; true; }; f`)
}

// ptServe makes r.remote pushable over srv and points origin at it.
func ptServe(t *testing.T, r *ptRepo, srv *httptest.Server) {
	t.Helper()
	ptGit(t, r.remote, "config", "http.receivepack", "true")
	ptGit(t, r.work, "remote", "set-url", "origin", srv.URL+"/remote.git")
	r.approve(srv.URL + "/remote.git")
}

// ptHostileHelpers gives the repository credential helpers that leave a
// canary when git runs them (generic and URL-specific), and turns TLS
// verification off for the server (generic and URL-specific).
func ptHostileHelpers(t *testing.T, r *ptRepo, srv *httptest.Server) []string {
	t.Helper()
	canaries := []string{filepath.Join(r.base, "helper-ran"), filepath.Join(r.base, "url-helper-ran")}
	ptGit(t, r.work, "config", "--add", "credential.helper", "!touch "+canaries[0]+"; true")
	ptGit(t, r.work, "config", "--add", "credential."+srv.URL+".helper", "!touch "+canaries[1]+"; true")
	ptGit(t, r.work, "config", "http.sslVerify", "false")
	ptGit(t, r.work, "config", "http."+srv.URL+"/remote.git.sslVerify", "false")
	return canaries
}

// TestPushRunsOnlyOperatorCredentialHelpers: a push over https to a
// local smart-HTTP server that wants a password gets it from the
// operator's global helper; the repository's own helpers (which git would
// ask, and tell the credential to store afterwards) never run.
func TestPushRunsOnlyOperatorCredentialHelpers(t *testing.T) {
	r := ptSetup(t)
	srv, hits := ptSmartHTTP(t, r.base)
	ptServe(t, r, srv)
	ptTrust(t, r, srv)
	canaries := ptHostileHelpers(t, r, srv)
	head := r.commit(t, "two")

	res, err := r.push(t)
	if err != nil || res.Status != "ok" {
		t.Fatalf("Push = %+v, %v", res, err)
	}
	if got := r.remoteRef(t, "refs/heads/main"); got != head {
		t.Errorf("remote main = %s, want %s", got, head)
	}
	if hits.Load() == 0 {
		t.Error("the server saw no request")
	}
	for _, c := range canaries {
		if rtExists(c) {
			t.Errorf("a repository credential helper ran (%s)", filepath.Base(c))
		}
	}
	ptNoHostPath(t, r, "output", res.Output)
}

// TestPushVerifiesTLS: with the operator trusting nothing but the system
// authorities, a push to the test server's self-signed certificate fails
// though the repository turns http.sslVerify off (generically and for the
// URL); once the operator trusts the certificate, the same push passes.
func TestPushVerifiesTLS(t *testing.T) {
	r := ptSetup(t)
	srv, hits := ptSmartHTTP(t, r.base)
	ptServe(t, r, srv)
	ptOperatorHelper(t, r)
	ptHostileHelpers(t, r, srv)
	before := r.remoteRef(t, "refs/heads/main")
	head := r.commit(t, "two")

	res, err := r.push(t)
	fe := rtCode(t, err, errs.PushRejected)
	if !strings.Contains(strings.ToLower(fe.Msg), "certificate") && !strings.Contains(fe.Msg, "SSL") {
		t.Errorf("the failure does not say why: %v", err)
	}
	if got := r.remoteRef(t, "refs/heads/main"); got != before {
		t.Fatalf("pushed through an unverified TLS connection: remote main = %s (result %+v)", got, res)
	}
	if hits.Load() != 0 {
		t.Errorf("%d requests reached the untrusted server", hits.Load())
	}

	ptTrust(t, r, srv)
	if res, err := r.push(t); err != nil || res.Status != "ok" || r.remoteRef(t, "refs/heads/main") != head {
		t.Fatalf("Push to the trusted server = %+v, %v", res, err)
	}
}

// TestPushRepositoryCannotRedirect: the repository's url.*.insteadOf and
// pushInsteadOf cannot send the push to another server (nothing arrives
// there), nor can it choose the certificate authorities; the operator's
// own rewrite rules still apply.
func TestPushRepositoryCannotRedirect(t *testing.T) {
	r := ptSetup(t)
	srv, _ := ptSmartHTTP(t, r.base)
	ptServe(t, r, srv)
	ptTrust(t, r, srv)
	// A second server, trusted as well (httptest servers share their
	// certificate), with a repository of its own.
	otherRoot := t.TempDir()
	other := filepath.Join(otherRoot, "remote.git")
	ptGit(t, otherRoot, "clone", "-q", "--bare", r.remote, other)
	ptGit(t, other, "config", "http.receivepack", "true")
	evil, evilHits := ptSmartHTTP(t, otherRoot)
	otherBefore := strings.TrimSpace(ptGit(t, other, "rev-parse", "refs/heads/main"))
	r.commit(t, "two")

	for _, key := range []string{"insteadOf", "pushInsteadOf"} {
		ptGit(t, r.work, "config", "url."+evil.URL+"/."+key, srv.URL+"/")
		_, err := r.push(t)
		rtCode(t, err, errs.PushDestinationDenied)
		if evilHits.Load() != 0 || strings.TrimSpace(ptGit(t, other, "rev-parse", "refs/heads/main")) != otherBefore {
			t.Fatalf("%s: the push went to the other server", key)
		}
		ptGit(t, r.work, "config", "--unset", "url."+evil.URL+"/."+key)
	}
	// A repository rule that rewrites the remote's URL into the approved
	// one is refused all the same: rewrite rules are the operator's.
	ptGit(t, r.work, "remote", "set-url", "origin", "https://git.example.invalid/remote.git")
	ptGit(t, r.work, "config", "url."+srv.URL+"/.insteadOf", "https://git.example.invalid/")
	_, err := r.push(t)
	rtCode(t, err, errs.NoUpstream)
	ptGit(t, r.work, "config", "--unset", "url."+srv.URL+"/.insteadOf")
	ptGit(t, r.work, "remote", "set-url", "origin", srv.URL+"/remote.git")

	// The repository's own certificate authority, client key or cookie
	// file: refused.
	for _, key := range []string{"http." + srv.URL + "/.sslCAInfo", "http.sslCAPath", "http.sslKey", "http.cookieFile"} {
		ptGit(t, r.work, "config", key, filepath.Join(r.work, "agent-file"))
		_, err := r.push(t)
		rtCode(t, err, errs.RepoUnsupported)
		ptGit(t, r.work, "config", "--unset", key)
	}

	// The operator's rewrite rule is the operator's business.
	ptGit(t, r.work, "config", "--global", "url."+srv.URL+"/.insteadOf", "https://git.example.invalid/")
	ptGit(t, r.work, "remote", "set-url", "origin", "https://git.example.invalid/remote.git")
	if res, err := r.push(t); err != nil || res.Status != "ok" {
		t.Fatalf("Push through the operator's insteadOf = %+v, %v", res, err)
	}
	if evilHits.Load() != 0 {
		t.Error("the other server was contacted")
	}
}
