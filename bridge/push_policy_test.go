package bridge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// ppEnv is slot 01 as a read-write repo-ops workdir at root, plus extra.
func ppEnv(root string, extra ...string) []string {
	return append([]string{"WORKDIR_01_ALIAS=w", "WORKDIR_01_PATH=" + root, "WORKDIR_01_READ_ONLY=false", "WORKDIR_01_REPO_OPS_ENABLED=true"}, extra...)
}

// TestPolicyRenderPushDefault: without WORKDIR_NN_PUSH_* fields, a
// read-write repo-ops workdir gets the push destination its repository
// names when the policy is rendered — the current branch's upstream and
// its remote's push URLs as git resolves them (here through the
// operator's pushInsteadOf) —, render-policy's notes say so, the policy
// survives the file, and push_repo pushes with it.
func TestPolicyRenderPushDefault(t *testing.T) {
	r := ptSetup(t)
	p, notes, err := RenderPolicyNotes(ppEnv(r.work))
	if err != nil {
		t.Fatal(err)
	}
	want := &PushPolicy{URLs: []string{"file://" + r.remote}, Branches: []string{"main"}}
	if got := p.Workdirs["w"].Push; !reflect.DeepEqual(got, want) {
		t.Fatalf("push = %+v, want %+v", got, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "slot 01 (w)") || !strings.Contains(notes[0], "branch main at file://"+r.remote) ||
		!strings.Contains(notes[0], "WORKDIR_01_PUSH_URLS and WORKDIR_01_PUSH_BRANCHES read from the repository") {
		t.Errorf("notes %q", notes)
	}
	path := filepath.Join(t.TempDir(), "policy.json")
	if err := WritePolicy(path, p); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadPolicy(path)
	if err != nil || !reflect.DeepEqual(loaded, p) {
		t.Fatalf("LoadPolicy = %+v, %v", loaded, err)
	}
	head := r.commit(t, "two")
	if res, err := Push(context.Background(), r.fsys, "w", loaded.Workdirs["w"], RunLimits{Timeout: 30 * time.Second}); err != nil || res.Status != "ok" || r.remoteRef(t, "refs/heads/main") != head {
		t.Fatalf("Push with the rendered policy = %+v, %v", res, err)
	}

	// As git resolves it: the operator's rewrite applies; the branch's
	// upstream of another name is the one approved.
	ptGit(t, r.work, "config", "--global", "url.file://"+r.remote+".pushInsteadOf", "https://git.example.invalid/r.git")
	ptGit(t, r.work, "remote", "set-url", "origin", "https://git.example.invalid/r.git")
	ptGit(t, r.work, "checkout", "-q", "-b", "feature")
	ptGit(t, r.work, "branch", "-q", "--set-upstream-to=origin/other")
	p, _, err = RenderPolicyNotes(ppEnv(r.work))
	if err != nil {
		t.Fatal(err)
	}
	want = &PushPolicy{URLs: []string{"file://" + r.remote}, Branches: []string{"other"}}
	if got := p.Workdirs["w"].Push; !reflect.DeepEqual(got, want) {
		t.Fatalf("push = %+v, want %+v", got, want)
	}
}

// TestPolicyRenderPushExplicit: WORKDIR_NN_PUSH_URLS and _PUSH_BRANCHES
// (lists separated by spaces or tabs) are taken as they are, without a
// repository; one of them alone completes the other from the
// repository.
func TestPolicyRenderPushExplicit(t *testing.T) {
	dir := t.TempDir()
	p, notes, err := RenderPolicyNotes(ppEnv(dir,
		"WORKDIR_01_PUSH_URLS= https://git.example.invalid/a.git \tgit@example.invalid:o/b.git ",
		"WORKDIR_01_PUSH_BRANCHES=main  release/1.x"))
	if err != nil {
		t.Fatal(err)
	}
	want := &PushPolicy{URLs: []string{"https://git.example.invalid/a.git", "git@example.invalid:o/b.git"}, Branches: []string{"main", "release/1.x"}}
	if got := p.Workdirs["w"].Push; !reflect.DeepEqual(got, want) || len(notes) != 0 {
		t.Fatalf("push = %+v (notes %q), want %+v", got, notes, want)
	}

	r := ptSetup(t)
	p, notes, err = RenderPolicyNotes(ppEnv(r.work, "WORKDIR_01_PUSH_BRANCHES=main other"))
	if err != nil {
		t.Fatal(err)
	}
	want = &PushPolicy{URLs: []string{"file://" + r.remote}, Branches: []string{"main", "other"}}
	if got := p.Workdirs["w"].Push; !reflect.DeepEqual(got, want) {
		t.Fatalf("push = %+v, want %+v", got, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "(WORKDIR_01_PUSH_URLS read from the repository") {
		t.Errorf("notes %q", notes)
	}
}

// TestPolicyRenderPushNoDefault: where the repository names no usable
// push destination, the workdir gets none and a note says why and what
// to set; a read-only workdir gets neither.
func TestPolicyRenderPushNoDefault(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, r *ptRepo)
		want  string
	}{
		{"not a repository", func(t *testing.T, r *ptRepo) {
			if err := os.RemoveAll(filepath.Join(r.work, ".git")); err != nil {
				t.Fatal(err)
			}
		}, "not the top of a git work tree"},
		{"detached HEAD", func(t *testing.T, r *ptRepo) { ptGit(t, r.work, "checkout", "-q", "--detach") }, "HEAD is detached"},
		{"no upstream", func(t *testing.T, r *ptRepo) { ptGit(t, r.work, "checkout", "-q", "-b", "topic") }, `branch "topic" has no upstream`},
		{"foreign transport", func(t *testing.T, r *ptRepo) {
			ptGit(t, r.work, "remote", "set-url", "origin", "git://git.example.invalid/r.git")
		}, `uses the "git" transport`},
		{"repository rewrite rule", func(t *testing.T, r *ptRepo) {
			ptGit(t, r.work, "config", "url.file:///elsewhere.git.insteadOf", "file://"+r.remote)
		}, "rewrites the URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ptSetup(t)
			tc.setup(t, r)
			p, notes, err := RenderPolicyNotes(ppEnv(r.work))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Workdirs["w"].Push; got != nil {
				t.Errorf("push = %+v", got)
			}
			if len(notes) != 1 || !strings.Contains(notes[0], "slot 01 (w): no push destination") || !strings.Contains(notes[0], tc.want) ||
				!strings.Contains(notes[0], "WORKDIR_01_PUSH_URLS and WORKDIR_01_PUSH_BRANCHES are set") {
				t.Errorf("notes %q, want %q", notes, tc.want)
			}
			if strings.Contains(strings.Join(notes, "\n"), r.base) {
				t.Errorf("a note shows a host path: %q", notes)
			}
		})
	}
	r := ptSetup(t)
	p, notes, err := RenderPolicyNotes([]string{"WORKDIR_01_ALIAS=w", "WORKDIR_01_PATH=" + r.work, "WORKDIR_01_REPO_OPS_ENABLED=true"})
	if err != nil || p.Workdirs["w"].Push != nil || len(notes) != 0 {
		t.Fatalf("a read-only workdir: %+v, %q, %v", p, notes, err)
	}
}

// TestPolicyRenderPushRefusals: invalid push fields are problems naming
// the slot and the field, never showing the URL.
func TestPolicyRenderPushRefusals(t *testing.T) {
	dir := t.TempDir()
	both := func(urls, branches string) []string {
		return ppEnv(dir, "WORKDIR_01_PUSH_URLS="+urls, "WORKDIR_01_PUSH_BRANCHES="+branches)
	}
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"unused slot", append(ppEnv(dir), "WORKDIR_07_PUSH_URLS=https://git.example.invalid/a.git"), "slot 07: WORKDIR_07_PUSH_URLS is set but the slot is not in use"},
		{"read-only workdir", []string{"WORKDIR_01_ALIAS=w", "WORKDIR_01_PATH=" + dir, "WORKDIR_01_REPO_OPS_ENABLED=true", "WORKDIR_01_PUSH_BRANCHES=main"},
			"slot 01: WORKDIR_01_PUSH_BRANCHES is set but push_repo needs a read-write workdir with repo ops"},
		{"no repo ops", []string{"WORKDIR_01_ALIAS=w", "WORKDIR_01_PATH=" + dir, "WORKDIR_01_READ_ONLY=false", "WORKDIR_01_PUSH_URLS=https://git.example.invalid/a.git"},
			"slot 01: WORKDIR_01_PUSH_URLS is set but push_repo needs a read-write workdir with repo ops"},
		{"remote helper", both("ext::sh", "main"), "slot 01: push URL 1 is not an https, ssh or file URL git could use"},
		{"http", both("https://git.example.invalid/a.git http://git.example.invalid/b.git", "main"), "slot 01: push URL 2 is not an https, ssh or file URL"},
		{"option as host", both("-oProxyCommand=x:r", "main"), "slot 01: push URL 1 is not an https, ssh or file URL"},
		{"equals sign", both("https://git.example.invalid/a.git?x=y", "main"), "slot 01: push URL 1 contains '='"},
		{"bad branch", both("https://git.example.invalid/a.git", "main a..b"), "slot 01: push branch 2 is not a valid branch name"},
		{"option as branch", both("https://git.example.invalid/a.git", "-f"), "slot 01: push branch 1 is not a valid branch name"},
		{"full ref as branch", both("https://git.example.invalid/a.git", "refs/heads/main:refs/heads/x"), "slot 01: push branch 1 is not a valid branch name"},
		{"too many URLs", both(strings.Repeat("https://git.example.invalid/a.git ", MaxPushURLs+1), "main"), "more than 16 URLs"},
		{"one field, no repository", ppEnv(dir, "WORKDIR_01_PUSH_BRANCHES=main"),
			"slot 01: WORKDIR_01_PUSH_URLS and WORKDIR_01_PUSH_BRANCHES must both be set, or the missing one read from the repository, which cannot be"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := RenderPolicy(tc.env)
			var pe *PolicyError
			if !errors.As(err, &pe) || p != nil {
				t.Fatalf("RenderPolicy = %+v, %v", p, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error lacks %q:\n%v", tc.want, err)
			}
			for _, leak := range []string{dir, "git.example.invalid", "ProxyCommand"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error shows %q:\n%v", leak, err)
				}
			}
		})
	}
}

// TestPolicyValidatePush: a policy file's push sections are validated as
// rendered ones are, and decoded strictly.
func TestPolicyValidatePush(t *testing.T) {
	push := func(urls, branches []string) func(p *Policy) {
		return func(p *Policy) {
			w := p.Workdirs["wiki"]
			w.Push = &PushPolicy{URLs: urls, Branches: branches}
			p.Workdirs["wiki"] = w
		}
	}
	okURLs, okBranches := []string{"https://git.example.invalid/a.git"}, []string{"main"}
	tests := []struct {
		name   string
		modify func(p *Policy)
		want   string
	}{
		{"read-only", func(p *Policy) {
			w := p.Workdirs["docs"]
			w.Push = &PushPolicy{URLs: okURLs, Branches: okBranches}
			p.Workdirs["docs"] = w
		}, `workdir "docs": a push destination is set but push_repo needs a read-write workdir with repo ops`},
		{"no URL", push(nil, okBranches), `workdir "wiki": the push destination lists no URL`},
		{"no branch", push(okURLs, []string{}), `workdir "wiki": the push destination lists no branch`},
		{"bad URL", push([]string{"fd::3"}, okBranches), `workdir "wiki": push URL 1 is not an https, ssh or file URL`},
		{"newline in URL", push([]string{"https://h/r\nurl=ext::sh"}, okBranches), `workdir "wiki": push URL 1 is not an https, ssh or file URL`},
		{"bad branch", push(okURLs, []string{"main.lock"}), `workdir "wiki": push branch 1 is not a valid branch name`},
		{"too many branches", push(okURLs, make([]string, MaxPushBranches+1)), "more than 64 branches"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, base := validPolicy(t)
			tc.modify(p)
			err := p.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), base) || strings.Contains(err.Error(), "git.example.invalid") {
				t.Errorf("error shows a value:\n%v", err)
			}
		})
	}

	p, _ := validPolicy(t)
	push(okURLs, []string{"main", "release/1.x"})(p)
	if err := p.Validate(); err != nil {
		t.Fatalf("a valid push section: %v", err)
	}
	dir := t.TempDir()
	wiki := p.Workdirs["wiki"].Root
	for name, body := range map[string]string{
		`unknown field "url" in workdirs.wiki.push`:  `{"urls":["https://git.example.invalid/a.git"],"branches":["main"],"url":"x"}`,
		`duplicate key "urls" in workdirs.wiki.push`: `{"urls":["https://git.example.invalid/a.git"],"branches":["main"],"urls":[]}`,
		`unknown field "URLS" in workdirs.wiki.push`: `{"URLS":["https://git.example.invalid/a.git"],"branches":["main"]}`,
		`workdir "wiki": the push destination lists`: `{}`,
	} {
		f := filepath.Join(dir, "policy.json")
		data := `{"workdirs":{"wiki":{"root":"` + wiki + `","read_write":true,"repo_ops":true,"push":` + body + `}}}`
		if err := os.WriteFile(f, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadPolicy(f); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("LoadPolicy(%s) = %v, want %q", body, err, name)
		}
	}
}
