package bridge

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBridgeNeverRunsPlantedGit: a PATH with the workdir's bin/ before
// the real git's directory, where bin/git and bin/gh are programs an
// agent could have written. push_repo, a release with gh from the PATH
// and an action naming git run the real programs; the planted ones
// never run; the bridge logs the entry it dropped.
func TestBridgeNeverRunsPlantedGit(t *testing.T) {
	r := relSetup(t, KindPublishNPM)
	a := r.wp.Actions["rel"]
	a.GH = "" // gh from the PATH
	r.wp.Actions["rel"] = a
	r.wp.Actions["version"] = Action{Argv: []string{"git", "--version"}, Argument: ArgumentNone}
	r.wp.Actions["path"] = Action{Argv: []string{"sh", "-c", `echo "PATH=$PATH"`}, Argument: ArgumentNone}
	head := r.commit(t, "two")
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	// The test's own git by its absolute path: the PATH below plants one.
	git := func(dir string, args ...string) string {
		out, err := exec.Command(realGit, append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}

	marker := filepath.Join(r.base, "planted-ran")
	planted := filepath.Join(r.work, "bin")
	for _, name := range []string{"git", "gh"} {
		rtWrite(t, filepath.Join(planted, name), "#!/bin/sh\necho "+name+" >> "+marker+"\necho planted\n")
		if err := os.Chmod(filepath.Join(planted, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rtWrite(t, filepath.Join(r.work, ".git", "info", "exclude"), "/bin/\n") // the release needs a clean tree
	// The honest gh (relSetup's recording one) in a directory of its own.
	ghDir := filepath.Join(r.base, "ghbin")
	if err := os.Mkdir(ghDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(r.gh, filepath.Join(ghDir, "gh")); err != nil {
		t.Fatal(err)
	}
	// Actions' private HOMEs elsewhere than r.base: the bridge drops PATH
	// entries under the temporary directory too.
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("PATH", planted+string(os.PathListSeparator)+ghDir+string(os.PathListSeparator)+filepath.Dir(realGit)+string(os.PathListSeparator)+os.Getenv("PATH"))

	var logBuf bytes.Buffer
	srv, err := NewServer(&Policy{Workdirs: map[string]WorkdirPolicy{"w": r.wp}}, []byte(testToken), []uint32{uint32(os.Getuid())}, t.TempDir(), slog.New(slog.NewJSONHandler(&logBuf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	startLog := logBuf.String() // read before serving: the server writes to it after
	if !strings.Contains(startLog, `"entry":"`+planted+`"`) || !strings.Contains(startLog, `lies under the root of workdir \"w\"`) || !strings.Contains(startLog, `"level":"WARN"`) {
		t.Errorf("the bridge did not log the dropped entry:\n%s", startLog)
	}
	c, _ := serveBridge(t, srv, t.TempDir())
	ctx := context.Background()

	if res, err := c.Push(ctx, "w"); err != nil || res.Status != "ok" {
		t.Errorf("Push = %+v, %v", res, err)
	}
	if got := git(r.remote, "rev-parse", "refs/heads/main"); got != head {
		t.Errorf("remote main %s, want %s", got, head)
	}
	res, err := c.RunAction(ctx, "w", "version", "")
	if err != nil || !strings.HasPrefix(res.Stdout, "git version") {
		t.Errorf("action git --version = %+v, %v", res, err)
	}
	res, err = c.RunAction(ctx, "w", "path", "")
	if err != nil || !strings.Contains(res.Stdout, "PATH=") || strings.Contains(res.Stdout, "w:/bin") || strings.Contains(res.Stdout, planted) {
		t.Errorf("the action's PATH holds the workdir's bin: %+v, %v", res, err)
	}
	rel, err := c.RunRelease(ctx, "w", "rel", "v0.1.0")
	if b, err := os.ReadFile(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a planted program ran: %q", b)
	}
	if err != nil || rel.Status != "created" || rel.Dispatch == nil || !r.ghRan() {
		t.Fatalf("RunRelease = %+v, %v (honest gh ran: %v)", rel, err, r.ghRan())
	}
	if got := git(r.remote, "rev-parse", "refs/tags/v0.1.0"); got != head {
		t.Errorf("remote tag %s, want %s", got, head)
	}
}

// TestCleanPath: empty, relative and dotted entries go, and so does every
// entry under a guard — nested, not existing yet, through a symlink, or
// under a guard named through a symlink; a sibling sharing a guard's
// name as a prefix stays.
func TestCleanPath(t *testing.T) {
	base := t.TempDir()
	work, spaces, tmp, other := filepath.Join(base, "work"), filepath.Join(base, "state"), filepath.Join(base, "tmp"), filepath.Join(base, "tools")
	real2 := filepath.Join(base, "real2")
	for _, d := range []string{filepath.Join(work, "bin"), spaces, tmp, filepath.Join(other, "bin"), filepath.Join(base, "work-other", "bin"), real2} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"to-bin":   filepath.Join(work, "bin"),    // a symlink to a workdir's bin
		"to-work":  work,                          // a symlink to a workdir
		"dangling": filepath.Join(base, "absent"), // a symlink leading nowhere yet
		"work2":    real2,                         // a workdir named through a symlink
	} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	guards := []pathGuard{{work, "W"}, {spaces, "S"}, {filepath.Join(base, "work2"), "W2"}, tempGuard(tmp)}
	entries := []struct {
		entry string
		why   string // "" when kept
	}{
		{"/usr/bin", ""},
		{"", "empty"},
		{"bin", "relative"},
		{"./bin", "relative"},
		{filepath.Join(work, "bin"), "under W"},
		{work, "under W"},
		{work + "/", "under W"},
		{filepath.Join(work, "deep", "not", "yet"), "under W"},
		{filepath.Join(base, "to-bin"), "under W"},
		{filepath.Join(base, "to-work", "bin"), "under W"},
		{filepath.Join(base, "to-work", "absent", "bin"), "under W"},
		{filepath.Join(spaces, "workspaces", "id", "tree", "node_modules", ".bin"), "under S"},
		{filepath.Join(real2, "bin"), "under W2"},
		{filepath.Join(tmp, "serverfs-action-1", "bin"), "under the temporary directory"},
		{filepath.Join(base, "dangling"), "cannot be resolved"},
		{filepath.Join(other, "..", "work", "bin"), `"." or ".."`},
		{filepath.Join(base, "work-other", "bin"), ""},
		{filepath.Join(other, "bin"), ""},
		{filepath.Join(base, "absent", "bin"), ""},
	}
	var in, want []string
	for _, e := range entries {
		in = append(in, e.entry)
		if e.why == "" {
			want = append(want, e.entry)
		}
	}
	// filepath.Join cleans: write the dotted entry by hand.
	in[15] = other + "/../work/bin"
	kept, dropped := cleanPath(strings.Join(in, ":"), guards)
	if kept != strings.Join(want, ":") {
		t.Errorf("kept %q\nwant %q", kept, strings.Join(want, ":"))
	}
	next := 0
	for i, e := range entries {
		if e.why == "" {
			continue
		}
		if next >= len(dropped) || dropped[next].pos != i+1 || dropped[next].entry != in[i] || !strings.Contains(dropped[next].why, e.why) {
			t.Errorf("entry %d (%q): dropped %+v, want the reason %q", i+1, in[i], dropped[min(next, len(dropped)-1)], e.why)
		}
		next++
	}
	if next != len(dropped) {
		t.Errorf("dropped %d entries, want %d: %+v", len(dropped), next, dropped)
	}

	// git is resolved on what is left, never in a dropped entry.
	planted := filepath.Join(work, "bin", "git")
	rtWrite(t, planted, "#!/bin/sh\n")
	if err := os.Chmod(planted, 0o755); err != nil {
		t.Fatal(err)
	}
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git not found in PATH: .ci/run installs it; the bridge's host tools include it")
	}
	tools, _, err := resolveHostTools(filepath.Join(work, "bin")+":"+filepath.Dir(realGit), guards)
	if err != nil || tools.git != realGit || tools.path != filepath.Dir(realGit) {
		t.Errorf("resolveHostTools = %+v, %v; want git %s", tools, err, realGit)
	}
	// Nothing left: refused, never an empty PATH (the current directory).
	if _, _, err := resolveHostTools(filepath.Join(work, "bin")+"::.", guards); !errors.Is(err, errNoPath) {
		t.Errorf("nothing left: %v", err)
	}
	// No PATH at all: DefaultPath, cleaned like any.
	if tools, _, err := resolveHostTools("", guards); err != nil || tools.path != DefaultPath {
		t.Errorf("no PATH: %+v, %v", tools, err)
	}
}

// TestRenderPolicyNeverRunsPlantedGit: the git render-policy runs to read
// a push default comes from the PATH as the bridge cleans it, never from
// the workdir's bin/; PathWarnings names that entry by its position.
func TestRenderPolicyNeverRunsPlantedGit(t *testing.T) {
	r := ptSetup(t)
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(r.base, "planted-ran")
	planted := filepath.Join(r.work, "bin")
	rtWrite(t, filepath.Join(planted, "git"), "#!/bin/sh\necho git >> "+marker+"\n")
	if err := os.Chmod(filepath.Join(planted, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	pathVar := planted + string(os.PathListSeparator) + filepath.Dir(realGit)
	t.Setenv("PATH", pathVar)
	env := ppEnv(r.work, "PATH="+pathVar)
	p, notes, err := RenderPolicyNotes(env)
	if err != nil || p.Workdirs["w"].Push == nil {
		t.Fatalf("RenderPolicyNotes = %+v, %q, %v", p, notes, err)
	}
	if b, err := os.ReadFile(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the planted git ran: %q", b)
	}
	if w := PathWarnings(env); len(w) != 1 || !strings.HasPrefix(w[0], "PATH entry 1: it lies under the workdir of slot 01, so the bridge drops it") || strings.Contains(w[0], r.base) {
		t.Errorf("PathWarnings = %q", w)
	}
}
