package bridge

import (
	"reflect"
	"strings"
	"testing"
)

const (
	relPin     = `"integrity":{"package.json":"` + hashA + `"}`
	relURLs    = `"fetch_urls":["https://github.com/acme/widget.git"],"push_urls":["git@github.com:acme/widget.git"]`
	relTag     = `{"kind":"release_tag","repository":"acme/widget",` + relURLs + `,` + relPin + `}`
	relPublish = `{"kind":"publish_npm","repository":"acme/widget",` + relURLs + `,"workflow":"publish.yml","gh":"/usr/bin/gh",` + relPin + `}`
)

func TestPolicyRenderReleaseKinds(t *testing.T) {
	base, docs, wiki := policyDirs(t)
	ok := []string{"WORKDIR_01_ALIAS=docs", "WORKDIR_01_PATH=" + docs}
	rw := func(actions string) []string {
		return append(ok, "WORKDIR_03_ALIAS=wiki", "WORKDIR_03_PATH="+wiki, "WORKDIR_03_READ_ONLY=false",
			"WORKDIR_03_REPO_OPS_ENABLED=true", "WORKDIR_03_REPO_ACTIONS_JSON="+actions)
	}
	p, err := RenderPolicy(rw(`{"tag":` + relTag + `,"publish":` + relPublish + `}`))
	if err != nil {
		t.Fatalf("RenderPolicy: %v", err)
	}
	urls := func(a Action) Action {
		a.Repository, a.FetchURLs, a.PushURLs = "acme/widget", []string{"https://github.com/acme/widget.git"}, []string{"git@github.com:acme/widget.git"}
		a.Integrity = map[string]string{"package.json": hashA}
		return a
	}
	want := map[string]Action{
		"tag":     urls(Action{Kind: KindReleaseTag}),
		"publish": urls(Action{Kind: KindPublishNPM, Workflow: "publish.yml", GH: "/usr/bin/gh"}),
	}
	if got := p.Workdirs["wiki"].Actions; !reflect.DeepEqual(got, want) {
		t.Fatalf("actions\n%+v\nwant\n%+v", got, want)
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}

	tests := []struct {
		name string
		env  []string
		want []string
	}{
		{"unknown field", rw(action(strings.Replace(relTag, `"kind"`, `"npm_token":"x","kind"`, 1))), []string{`unknown field "npm_token" in act`}},
		{"unknown kind", rw(action(`{"kind":"release","argv":["a"],"argument":"none"}`)), []string{`action "act": kind "release" is unknown`}},
		{"relative gh", rw(action(strings.Replace(relPublish, `"/usr/bin/gh"`, `"bin/gh"`, 1))), []string{`action "act": gh must be an absolute, clean path`}},
		{"gh on release_tag", rw(action(strings.Replace(relTag, `"kind"`, `"gh":"/usr/bin/gh","kind"`, 1))), []string{`action "act": gh is for publish_npm actions`}},
		{"no workflow", rw(action(strings.Replace(relPublish, `"workflow":"publish.yml",`, ``, 1))), []string{`action "act": workflow must be the file name of a workflow`}},
		{"workflow path", rw(action(strings.Replace(relPublish, `"publish.yml"`, `"../x.yml"`, 1))), []string{`action "act": workflow must be the file name`}},
		{"argv on a release kind", rw(action(strings.Replace(relTag, `"kind"`, `"argv":["sh"],"kind"`, 1))), []string{`action "act": argv is for command actions`}},
		{"argument on a release kind", rw(action(strings.Replace(relTag, `"kind"`, `"argument":"path","kind"`, 1))), []string{`action "act": argument is for command actions`}},
		{"no repository", rw(action(strings.Replace(relTag, `"repository":"acme/widget",`, ``, 1))), []string{`action "act": repository must be a GitHub owner/name`}},
		{"bad repository", rw(action(strings.Replace(relTag, `"acme/widget"`, `"acme"`, 1))), []string{`action "act": repository must be a GitHub owner/name`}},
		{"no fetch URLs", rw(action(strings.Replace(relTag, `"fetch_urls":["https://github.com/acme/widget.git"],`, ``, 1))), []string{`action "act": fetch_urls is missing`}},
		{"helper URL", rw(action(strings.Replace(relTag, `"git@github.com:acme/widget.git"`, `"ext::sh -c evil"`, 1))), []string{`action "act": push_urls[0] is not an https, ssh or file URL`}},
		{"no package.json pin", rw(action(strings.Replace(relTag, `"package.json"`, `"other.json"`, 1))), []string{`action "act": integrity must pin package.json`}},
		{"release fields on a command", rw(action(`{"argv":["a"],"argument":"none","repository":"acme/widget"}`)), []string{`action "act": repository is for the release kinds`}},
		{"release kind on a read-only workdir", append(ok, "WORKDIR_03_ALIAS=wiki", "WORKDIR_03_PATH="+wiki, "WORKDIR_03_REPO_OPS_ENABLED=true", "WORKDIR_03_REPO_ACTIONS_JSON="+action(relPublish)),
			[]string{`action "act": kind "publish_npm" creates and pushes a tag: it needs a read-write workdir`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := RenderPolicy(tc.env)
			if err == nil {
				t.Fatalf("RenderPolicy accepted it: %+v", p)
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, "slot 03: ") || !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
			if strings.Contains(msg, base) {
				t.Errorf("error shows a host path:\n%s", msg)
			}
		})
	}
}
