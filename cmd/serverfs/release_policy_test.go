package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/serverfs/serverfs/bridge"
)

// TestBridgeRenderReleasePolicy: the release kinds render from
// WORKDIR_NN_REPO_ACTIONS_JSON into the private policy and load back
// unchanged; a relative gh is refused naming the field.
func TestBridgeRenderReleasePolicy(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(t.TempDir(), "policy.json")
	pin := strings.Repeat("ab", 32)
	publish := `{"kind":"publish_npm","repository":"acme/widget","fetch_urls":["https://github.com/acme/widget.git"],"push_urls":["https://github.com/acme/widget.git"],"workflow":"publish.yml","gh":"/usr/bin/gh","integrity":{"package.json":"` + pin + `"}}`
	env := []string{
		"WORKDIR_01_ALIAS=proj", "WORKDIR_01_PATH=" + root, "WORKDIR_01_READ_ONLY=false", "WORKDIR_01_REPO_OPS_ENABLED=true",
		`WORKDIR_01_REPO_ACTIONS_JSON={"publish":` + publish + `}`,
	}
	var stdout, stderr strings.Builder
	if code := run([]string{"bridge", "render-policy", "--out", out}, env, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	p, err := bridge.LoadPolicy(out)
	if err != nil {
		t.Fatal(err)
	}
	want := bridge.Action{Kind: bridge.KindPublishNPM, Repository: "acme/widget", FetchURLs: []string{"https://github.com/acme/widget.git"},
		PushURLs: []string{"https://github.com/acme/widget.git"}, Workflow: "publish.yml", GH: "/usr/bin/gh", Integrity: map[string]string{"package.json": pin}}
	if got := p.Workdirs["proj"].Actions["publish"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded %+v, want %+v", got, want)
	}
	os.Remove(out)
	stderr.Reset()
	env[4] = `WORKDIR_01_REPO_ACTIONS_JSON={"publish":` + strings.Replace(publish, `"/usr/bin/gh"`, `"gh"`, 1) + `}`
	if code := run([]string{"bridge", "render-policy", "--out", out}, env, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), `action "publish": gh must be an absolute`) {
		t.Fatalf("relative gh: exit %d, %q", code, stderr.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("a refused policy was written")
	}
}
