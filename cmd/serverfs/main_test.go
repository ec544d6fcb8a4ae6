package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"version"}, nil, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "serverfs ") {
		t.Fatalf("code %d out %q err %q", code, out.String(), errb.String())
	}
}

func TestCheckConfig(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"check-config", "--workdir", "demo=" + dir + ":rw"}, []string{"WORKDIR_99_X=1"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "WORKDIR_99_X") {
		t.Fatalf("bad config: code %d err %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	code = run([]string{"check-config", "--workdir", "demo=" + dir + ":rw"}, nil, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "demo") || !strings.Contains(out.String(), "rw") {
		t.Fatalf("code %d out %q err %q", code, out.String(), errb.String())
	}
	if strings.Contains(out.String()+errb.String(), dir) {
		t.Fatal("check-config printed the host path")
	}
	if code := run([]string{"bogus"}, nil, &out, &errb); code != 2 {
		t.Fatalf("unknown command: %d", code)
	}
}

func TestHealthcheck(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	var errb bytes.Buffer
	if code := healthcheck([]string{"SERVERFS_LISTEN=" + addr}, &errb); code != 0 {
		t.Fatalf("listening port: exit %d, %s", code, errb.String())
	}
	ln.Close()
	if code := healthcheck([]string{"SERVERFS_LISTEN=" + addr}, &errb); code != 1 {
		t.Fatalf("closed port: exit %d", code)
	}
	if code := healthcheck([]string{"SERVERFS_LISTEN=nonsense"}, &errb); code != 1 {
		t.Fatalf("bad config: exit %d", code)
	}
}

func TestServeRefusesBadConfigAllAtOnce(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"serve", "--workdir", "1bad=/nonexistent"}, []string{"SERVERFS_LISTEN=nope", "SERVERFS_LOG_LEVEL=LOUD"}, &out, &errb)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"1bad", "SERVERFS_LISTEN", "SERVERFS_LOG_LEVEL"} {
		if !strings.Contains(errb.String(), want) {
			t.Fatalf("missing %q in:\n%s", want, errb.String())
		}
	}
}

func TestBridgeRenderPolicy(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(t.TempDir(), "policy.json")
	env := []string{
		"WORKDIR_01_ALIAS=proj", "WORKDIR_01_PATH=" + root, "WORKDIR_01_READ_ONLY=false", "WORKDIR_01_REPO_OPS_ENABLED=true",
		`WORKDIR_01_REPO_ACTIONS_JSON={"lint":{"argv":["make","lint"],"mutates":false,"argument":"none"}}`,
	}
	var stdout, stderr strings.Builder
	if code := run([]string{"bridge", "render-policy", "--out", out}, env, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("policy file: %v %v", fi, err)
	}
	if !strings.Contains(stdout.String(), "1 workdirs, 1 actions") {
		t.Fatalf("stdout %q", stdout.String())
	}
	// The root is no git repository: push_repo has no destination, and
	// render-policy says so.
	if !strings.Contains(stdout.String(), "\nnote: slot 01 (proj): no push destination: ") || strings.Contains(stdout.String(), root) {
		t.Fatalf("stdout %q", stdout.String())
	}
	stderr.Reset()
	if code := run([]string{"bridge", "render-policy", "--out", out}, append(env[:4:4], `WORKDIR_01_REPO_ACTIONS_JSON={"lint":{"argv":[]}}`), &stdout, &stderr); code != 1 || strings.Contains(stderr.String(), root) {
		t.Fatalf("bad actions: exit %d, %q", code, stderr.String())
	}
	if code := run([]string{"bridge"}, nil, &stdout, &stderr); code != 2 {
		t.Fatalf("bridge without flags: exit %d", code)
	}
}

// TestServeSweepsTemporaries: serve removes the temporaries of interrupted
// writes from rw workdirs before serving (and logs how many), and leaves
// ro workdirs alone. stdin is empty, so the stdio session ends at once.
func TestServeSweepsTemporaries(t *testing.T) {
	rw, ro := t.TempDir(), t.TempDir()
	junk := ".serverfs-tmp-0123456789abcdef"
	for _, d := range []string{rw, ro} {
		if err := os.WriteFile(filepath.Join(d, junk), []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	var stdout, stderr strings.Builder
	code := serve([]string{"--stdio", "--workdir", "w=" + rw + ":rw", "--workdir", "r=" + ro}, nil, devnull, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("serve: exit %d\n%s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(rw, junk)); !os.IsNotExist(err) {
		t.Error("the rw workdir's temporary survived start-up")
	}
	if _, err := os.Stat(filepath.Join(ro, junk)); err != nil {
		t.Error("an ro workdir was swept")
	}
	if !strings.Contains(stderr.String(), `"swept_temporaries":1`) {
		t.Errorf("the start-up log does not say what was swept:\n%s", stderr.String())
	}
}

// TestSubcommandHelp: every subcommand's --help (and -h) prints its usage
// on stdout and exits 0, before anything else it would check; a flag it
// does not know still exits 2.
func TestSubcommandHelp(t *testing.T) {
	for _, cmd := range [][]string{
		{"check-config"}, {"selfcheck"}, {"healthcheck"}, {"bridge"}, {"bridge", "render-policy"},
		{"grant"}, {"grant", "keygen"}, {"grant", "sign"}, {"grant", "revoke"}, {"grant", "log"},
	} {
		for _, h := range []string{"--help", "-h"} {
			var out, errb strings.Builder
			code := run(append(append([]string(nil), cmd...), h), nil, &out, &errb)
			if code != 0 || !strings.Contains(strings.ToLower(out.String()), "usage") || errb.Len() > 0 {
				t.Errorf("%v %s: exit %d, stdout %q, stderr %q", cmd, h, code, out.String(), errb.String())
			}
		}
		if cmd[0] == "grant" && len(cmd) == 1 {
			continue
		}
		var out, errb strings.Builder
		if code := run(append(append([]string(nil), cmd...), "--no-such-flag"), nil, &out, &errb); code != 2 {
			t.Errorf("%v --no-such-flag: exit %d, want 2", cmd, code)
		}
	}
	var out, errb strings.Builder
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	if code := serve([]string{"--help"}, nil, devnull, &out, &errb); code != 0 || !strings.Contains(out.String(), "Usage") {
		t.Errorf("serve --help: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}
