package bridge

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const (
	hashA = "059c75aed32ea6af02def2554473c143368e2d8ab428bb3a11f1a5490b2ff9be"
	hashB = "d000277a4df531e25f4247ac10c8c979cfb31bd3b9d6b20c1f67c73fd755ac21"
)

// seedActions is a typical policy's actions (two pins).
const seedActions = `{"wiki_lint":{"argv":["uv","run","--frozen","--no-sync","python","-I","tools/wiki-lint.py"],"mutates":false,"argument":"none","integrity":{"tools/wiki-lint.py":"` + hashA + `","pyproject.toml":"` + hashB + `"}}}`

// policyDirs makes two workdir roots under a fresh temp dir.
func policyDirs(t *testing.T) (base, docs, wiki string) {
	t.Helper()
	base = t.TempDir()
	docs, wiki = filepath.Join(base, "docs"), filepath.Join(base, "wiki")
	for _, d := range []string{docs, wiki} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return base, docs, wiki
}

// action builds a one-action REPO_ACTIONS_JSON from the JSON of the action.
func action(body string) string { return `{"act":` + body + `}` }

func TestPolicyRenderValid(t *testing.T) {
	_, docs, wiki := policyDirs(t)
	env := []string{
		"WORKDIR_01_ALIAS=docs", "WORKDIR_01_PATH=" + docs,
		"WORKDIR_03_ALIAS=wiki", "WORKDIR_03_PATH=" + wiki + "/", "WORKDIR_03_READ_ONLY=FALSE",
		"WORKDIR_03_REPO_OPS_ENABLED=true",
		"WORKDIR_03_REPO_ACTIONS_JSON=" + seedActions[:len(seedActions)-1] +
			`,"fmt_file":{"argv":["tools/fmt"],"mutates":true,"argument":"path","argument_allow":{"chars":"+@ ","directories":true},"timeout_seconds":1800,"integrity":{"tools/fmt":"` + hashA + `"}}}`,
		"WORKDIR_05_READ_ONLY=false", // an unused slot may keep compose defaults
		"UNRELATED=x",
	}
	p, err := RenderPolicy(env)
	if err != nil {
		t.Fatalf("RenderPolicy: %v", err)
	}
	want := &Policy{Workdirs: map[string]WorkdirPolicy{
		"docs": {Root: docs},
		"wiki": {Root: wiki, ReadWrite: true, RepoOps: true, Actions: map[string]Action{
			"wiki_lint": {
				Argv:      []string{"uv", "run", "--frozen", "--no-sync", "python", "-I", "tools/wiki-lint.py"},
				Argument:  ArgumentNone,
				Integrity: map[string]string{"tools/wiki-lint.py": hashA, "pyproject.toml": hashB},
			},
			"fmt_file": {Argv: []string{"tools/fmt"}, Mutates: true, Argument: ArgumentPath, ArgumentAllow: &ArgumentAllow{Chars: "+@ ", Directories: true},
				TimeoutSeconds: 1800, Integrity: map[string]string{"tools/fmt": hashA}},
		}},
	}}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("RenderPolicy =\n%+v\nwant\n%+v", p, want)
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("Validate of a rendered policy: %v", err)
	}
}

func TestPolicyRenderRefusals(t *testing.T) {
	base, docs, wiki := policyDirs(t)
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	placeholder := filepath.Join(base, "empty")
	if err := os.Mkdir(placeholder, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(placeholder, ".serverfs-disabled"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ok := []string{"WORKDIR_01_ALIAS=docs", "WORKDIR_01_PATH=" + docs}
	// rw returns slot 03 as a read-write repo-ops workdir with the given actions JSON.
	rw := func(actions string) []string {
		return append(ok, "WORKDIR_03_ALIAS=wiki", "WORKDIR_03_PATH="+wiki, "WORKDIR_03_READ_ONLY=false",
			"WORKDIR_03_REPO_OPS_ENABLED=true", "WORKDIR_03_REPO_ACTIONS_JSON="+actions)
	}
	slot3 := func(extra ...string) []string {
		return append(append(ok, "WORKDIR_03_ALIAS=wiki"), extra...)
	}
	tests := []struct {
		name string
		env  []string
		want []string // substrings of the error, each required
	}{
		{"nothing configured", nil, []string{"no workdir is configured"}},
		{"relative path", slot3("WORKDIR_03_PATH=rel/dir"), []string{"slot 03: WORKDIR_03_PATH: the path must be absolute"}},
		{"root", slot3("WORKDIR_03_PATH=/"), []string{"slot 03: WORKDIR_03_PATH: refusing the filesystem root"}},
		{"unclean path", slot3("WORKDIR_03_PATH=" + wiki + "/../docs"), []string{"slot 03: WORKDIR_03_PATH: the path must be clean"}},
		{"missing dir", slot3("WORKDIR_03_PATH=" + filepath.Join(base, "nope")), []string{"slot 03: WORKDIR_03_PATH: the path cannot be used: it does not exist"}},
		{"not a dir", slot3("WORKDIR_03_PATH=" + file), []string{"slot 03: WORKDIR_03_PATH: the path is not a directory"}},
		{"placeholder dir", slot3("WORKDIR_03_PATH=" + placeholder), []string{"slot 03: WORKDIR_03_PATH: the directory contains .serverfs-disabled"}},
		{"alias without path", slot3(), []string{"slot 03: WORKDIR_03_ALIAS is set but WORKDIR_03_PATH is empty"}},
		{"path without alias", append(ok, "WORKDIR_04_PATH="+wiki), []string{"slot 04: WORKDIR_04_PATH is set but WORKDIR_04_ALIAS is empty"}},
		{"bad alias", append(ok, "WORKDIR_03_ALIAS=9wiki", "WORKDIR_03_PATH="+wiki), []string{`slot 03: WORKDIR_03_ALIAS="9wiki" is invalid`}},
		{"alias holding a path", append(ok, "WORKDIR_03_ALIAS="+wiki, "WORKDIR_03_PATH="+wiki), []string{"slot 03: WORKDIR_03_ALIAS=", "not shown"}},
		{"duplicate alias", append(ok, "WORKDIR_03_ALIAS=docs", "WORKDIR_03_PATH="+wiki), []string{`slot 03: alias "docs" is already used by slot 01`}},
		{"bad read only", slot3("WORKDIR_03_PATH="+wiki, "WORKDIR_03_READ_ONLY=yes"), []string{`slot 03: WORKDIR_03_READ_ONLY="yes": must be true or false`}},
		{"mode disagrees", slot3("WORKDIR_03_PATH="+wiki, "WORKDIR_03_MODE=rw"), []string{"slot 03: WORKDIR_03_MODE=rw disagrees with WORKDIR_03_READ_ONLY"}},
		{"bad repo ops", slot3("WORKDIR_03_PATH="+wiki, "WORKDIR_03_REPO_OPS_ENABLED=on"), []string{`slot 03: WORKDIR_03_REPO_OPS_ENABLED="on": must be true or false`}},
		{"repo ops on unused slot", append(ok, "WORKDIR_07_REPO_OPS_ENABLED=true"), []string{"slot 07: WORKDIR_07_REPO_OPS_ENABLED is true but the slot is not in use"}},
		{"actions on unused slot", append(ok, "WORKDIR_07_REPO_ACTIONS_JSON="+seedActions), []string{"slot 07: WORKDIR_07_REPO_ACTIONS_JSON is set but the slot is not in use"}},
		{"actions without repo ops", slot3("WORKDIR_03_PATH="+wiki, "WORKDIR_03_READ_ONLY=false", "WORKDIR_03_REPO_ACTIONS_JSON={}"),
			[]string{"slot 03: WORKDIR_03_REPO_ACTIONS_JSON is set but WORKDIR_03_REPO_OPS_ENABLED is not true"}},
		{"actions with repo ops false", slot3("WORKDIR_03_PATH="+wiki, "WORKDIR_03_READ_ONLY=false", "WORKDIR_03_REPO_OPS_ENABLED=false", "WORKDIR_03_REPO_ACTIONS_JSON="+seedActions),
			[]string{"slot 03: WORKDIR_03_REPO_ACTIONS_JSON is set but WORKDIR_03_REPO_OPS_ENABLED is not true"}},
		{"actions on read-only workdir", slot3("WORKDIR_03_PATH="+wiki, "WORKDIR_03_REPO_OPS_ENABLED=true", "WORKDIR_03_REPO_ACTIONS_JSON="+seedActions),
			[]string{"slot 03: actions are configured on a read-only workdir"}},
		{"malformed JSON", rw(`{"act":`), []string{"slot 03: WORKDIR_03_REPO_ACTIONS_JSON: malformed JSON"}},
		{"malformed JSON 2", rw(`{"act":{"argv":["x"],}}`), []string{"slot 03: WORKDIR_03_REPO_ACTIONS_JSON: malformed JSON"}},
		{"not an object", rw(`["x"]`), []string{"slot 03: WORKDIR_03_REPO_ACTIONS_JSON: must be a JSON object"}},
		{"null", rw(`null`), []string{"slot 03: WORKDIR_03_REPO_ACTIONS_JSON: must be a JSON object"}},
		{"trailing data", rw(seedActions + ` {}`), []string{"slot 03: WORKDIR_03_REPO_ACTIONS_JSON: unexpected data after the JSON object"}},
		{"invalid UTF-8", rw("{\"act\":{\"argv\":[\"\xff\"],\"argument\":\"none\"}}"), []string{"slot 03: WORKDIR_03_REPO_ACTIONS_JSON: the JSON is not valid UTF-8"}},
		{"unknown action field", rw(action(`{"argv":["x"],"argument":"none","shell":true}`)), []string{`slot 03: WORKDIR_03_REPO_ACTIONS_JSON: unknown field "shell" in act`}},
		{"field in another case", rw(action(`{"ARGV":["x"],"argument":"none"}`)), []string{`slot 03: WORKDIR_03_REPO_ACTIONS_JSON: unknown field "ARGV" in act`}},
		{"unknown widening field", rw(action(`{"argv":["x"],"argument":"path","argument_allow":{"chars":"=","all":true}}`)), []string{`slot 03: WORKDIR_03_REPO_ACTIONS_JSON: unknown field "all" in act.argument_allow`}},
		{"unknown field holding a path", rw(action(`{"argv":["x"],"argument":"none","` + wiki + `":1}`)), []string{"slot 03: WORKDIR_03_REPO_ACTIONS_JSON: unknown field", "not shown"}},
		{"wrong type", rw(action(`{"argv":"x","argument":"none"}`)), []string{"slot 03: WORKDIR_03_REPO_ACTIONS_JSON: field", "cannot be used here"}},
		{"unpinned program in the workdir", rw(action(`{"argv":["./scripts/test.sh"],"argument":"none"}`)), []string{"slot 03", "argv[0] is a program inside the workdir; it must have an integrity pin"}},
		{"duplicate action", rw(`{"act":{"argv":["a"],"argument":"none"},"act":{"argv":["b"],"argument":"none"}}`),
			[]string{`slot 03: WORKDIR_03_REPO_ACTIONS_JSON: duplicate key "act"`}},
		{"duplicate field", rw(action(`{"argv":["a"],"argument":"none","argv":["b"]}`)),
			[]string{`slot 03: WORKDIR_03_REPO_ACTIONS_JSON: duplicate key "argv" in act`}},
		{"duplicate integrity key", rw(action(`{"argv":["a"],"argument":"none","integrity":{"a.py":"` + hashA + `","a.py":"` + hashB + `"}}`)),
			[]string{`slot 03: WORKDIR_03_REPO_ACTIONS_JSON: duplicate key "a.py" in act.integrity`}},
		{"bad action name", rw(`{"Lint":{"argv":["a"],"argument":"none"}}`), []string{`slot 03: action name "Lint" is invalid`}},
		{"action name too long", rw(`{"a` + strings.Repeat("b", 64) + `":{"argv":["a"],"argument":"none"}}`), []string{"slot 03: action name", "is invalid"}},
		{"empty argv", rw(action(`{"argv":[],"argument":"none"}`)), []string{`slot 03: action "act": argv is empty`}},
		{"missing argv", rw(action(`{"argument":"none"}`)), []string{`slot 03: action "act": argv is empty`}},
		{"empty program", rw(action(`{"argv":["","x"],"argument":"none"}`)), []string{`slot 03: action "act": argv[0] (the program) is empty`}},
		{"NUL in argv", rw(action(`{"argv":["a","b\u0000c"],"argument":"none"}`)), []string{`slot 03: action "act": argv[1] contains a NUL byte`}},
		{"missing argument", rw(action(`{"argv":["a"]}`)), []string{`slot 03: action "act": argument is missing`}},
		{"unknown argument", rw(action(`{"argv":["a"],"argument":"file"}`)), []string{`slot 03: action "act": argument "file" is unknown`}},
		{"absolute pin", rw(action(`{"argv":["a"],"argument":"none","integrity":{"` + wiki + `/a.py":"` + hashA + `"}}`)), []string{`slot 03: action "act": an integrity path is absolute`}},
		{"dotdot pin", rw(action(`{"argv":["a"],"argument":"none","integrity":{"../a.py":"` + hashA + `"}}`)), []string{`slot 03: action "act": an integrity path has a '.' or '..' component`}},
		{"dot pin", rw(action(`{"argv":["a"],"argument":"none","integrity":{"./a.py":"` + hashA + `"}}`)), []string{`an integrity path has a '.' or '..' component`}},
		{"empty component pin", rw(action(`{"argv":["a"],"argument":"none","integrity":{"tools//a.py":"` + hashA + `"}}`)), []string{`slot 03: action "act": an integrity path has an empty component`}},
		{"trailing slash pin", rw(action(`{"argv":["a"],"argument":"none","integrity":{"tools/":"` + hashA + `"}}`)), []string{`an integrity path has an empty component`}},
		{"empty pin", rw(action(`{"argv":["a"],"argument":"none","integrity":{"":"` + hashA + `"}}`)), []string{`slot 03: action "act": an integrity path is empty`}},
		{"backslash pin", rw(action(`{"argv":["a"],"argument":"none","integrity":{"tools\\a.py":"` + hashA + `"}}`)), []string{`slot 03: action "act": an integrity path contains a backslash`}},
		{"NUL pin", rw(action(`{"argv":["a"],"argument":"none","integrity":{"a\u0000.py":"` + hashA + `"}}`)), []string{`slot 03: action "act": an integrity path contains a NUL byte`}},
		{"upper-case hash", rw(action(`{"argv":["a"],"argument":"none","integrity":{"a.py":"` + strings.ToUpper(hashA) + `"}}`)), []string{`slot 03: action "act": integrity pin for "a.py" is not 64 lower-case hex digits`}},
		{"short hash", rw(action(`{"argv":["a"],"argument":"none","integrity":{"a.py":"` + hashA[:63] + `"}}`)), []string{`integrity pin for "a.py" is not 64 lower-case hex digits`}},
		{"negative timeout", rw(action(`{"argv":["a"],"argument":"none","timeout_seconds":-1}`)), []string{`slot 03: action "act": timeout_seconds -1 is outside 0..1800`}},
		{"long timeout", rw(action(`{"argv":["a"],"argument":"none","timeout_seconds":1801}`)), []string{`slot 03: action "act": timeout_seconds 1801 is outside 0..1800`}},
		{"several problems at once", append(rw(action(`{"argv":[],"argument":""}`)), "WORKDIR_04_ALIAS=x", "WORKDIR_09_REPO_OPS_ENABLED=TRUE"),
			[]string{`slot 03: action "act": argv is empty`, `slot 03: action "act": argument is missing`, "slot 04: WORKDIR_04_ALIAS is set", "slot 09: WORKDIR_09_REPO_OPS_ENABLED is true"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := RenderPolicy(tc.env)
			if err == nil {
				t.Fatalf("RenderPolicy accepted it: %+v", p)
			}
			if p != nil {
				t.Errorf("RenderPolicy returned a policy with its error")
			}
			var pe *PolicyError
			if !errors.As(err, &pe) {
				t.Errorf("error is %T, want *PolicyError", err)
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
			if strings.Contains(msg, base) {
				t.Errorf("error shows a host path:\n%s", msg)
			}
			if strings.Contains(msg, "slot 01") && !strings.Contains(tc.name, "duplicate alias") {
				t.Errorf("the valid slot 01 is blamed:\n%s", msg)
			}
		})
	}
}

// validPolicy is a policy that passes Validate, rooted at real temp dirs.
func validPolicy(t *testing.T) (*Policy, string) {
	t.Helper()
	base, docs, wiki := policyDirs(t)
	return &Policy{Workdirs: map[string]WorkdirPolicy{
		"docs": {Root: docs},
		"wiki": {Root: wiki, ReadWrite: true, RepoOps: true, Actions: map[string]Action{
			"wiki_lint": {Argv: []string{"uv", "run", "tools/wiki-lint.py"}, Argument: ArgumentNone,
				Integrity: map[string]string{"tools/wiki-lint.py": hashA}, TimeoutSeconds: 60},
			"fmt": {Argv: []string{"tools/fmt"}, Mutates: true, Argument: ArgumentBasename, Integrity: map[string]string{"tools/fmt": hashA}},
		}},
	}}, base
}

func TestPolicyValidateRefusals(t *testing.T) {
	tests := []struct {
		name   string
		modify func(p *Policy)
		want   string
	}{
		{"no workdirs", func(p *Policy) { p.Workdirs = nil }, "the policy has no workdirs"},
		{"bad alias", func(p *Policy) { p.Workdirs["-x"] = p.Workdirs["docs"] }, `workdir "-x": the alias is invalid`},
		{"relative root", func(p *Policy) { w := p.Workdirs["docs"]; w.Root = "docs"; p.Workdirs["docs"] = w }, `workdir "docs": the root must be an absolute path`},
		{"unclean root", func(p *Policy) { w := p.Workdirs["docs"]; w.Root += "/../x"; p.Workdirs["docs"] = w }, `workdir "docs": the root must be a clean path`},
		{"trailing slash root", func(p *Policy) { w := p.Workdirs["docs"]; w.Root += "/"; p.Workdirs["docs"] = w }, `workdir "docs": the root must be a clean path`},
		{"filesystem root", func(p *Policy) { w := p.Workdirs["docs"]; w.Root = "/"; p.Workdirs["docs"] = w }, `workdir "docs": refusing the filesystem root`},
		{"empty root", func(p *Policy) { w := p.Workdirs["docs"]; w.Root = ""; p.Workdirs["docs"] = w }, `workdir "docs": the root is empty`},
		{"actions without repo ops", func(p *Policy) { w := p.Workdirs["wiki"]; w.RepoOps = false; p.Workdirs["wiki"] = w }, `workdir "wiki": actions are configured but repo ops are disabled`},
		{"actions on read-only", func(p *Policy) { w := p.Workdirs["wiki"]; w.ReadWrite = false; p.Workdirs["wiki"] = w }, `workdir "wiki": actions are configured on a read-only workdir`},
		{"bad action", func(p *Policy) { p.Workdirs["wiki"].Actions["fmt"] = Action{Argv: []string{"x"}, Argument: "all"} }, `workdir "wiki": action "fmt": argument "all" is unknown`},
		{"widening without an argument", func(p *Policy) {
			p.Workdirs["wiki"].Actions["fmt"] = Action{Argv: []string{"x"}, Argument: ArgumentNone, ArgumentAllow: &ArgumentAllow{Chars: "="}}
		}, `workdir "wiki": action "fmt": argument_allow is set but argument is not "path" or "basename"`},
		{"control character widening", func(p *Policy) {
			p.Workdirs["wiki"].Actions["fmt"] = Action{Argv: []string{"x"}, Argument: ArgumentPath, ArgumentAllow: &ArgumentAllow{Chars: "=\n"}}
		}, `workdir "wiki": action "fmt": argument_allow.chars may hold printable characters only`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, base := validPolicy(t)
			if err := p.Validate(); err != nil {
				t.Fatalf("the base policy is invalid: %v", err)
			}
			tc.modify(p)
			err := p.Validate()
			if err == nil {
				t.Fatal("Validate accepted it")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error lacks %q:\n%v", tc.want, err)
			}
			if strings.Contains(err.Error(), base) {
				t.Errorf("error shows a host path:\n%v", err)
			}
		})
	}
	var nilPolicy *Policy
	if err := nilPolicy.Validate(); err == nil {
		t.Error("Validate accepted a nil policy")
	}
}

func TestPolicyLoadAndWrite(t *testing.T) {
	p, base := validPolicy(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.json")
	if err := WritePolicy(path, p); err != nil {
		t.Fatalf("WritePolicy: %v", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("written with mode %04o, want 0600", st.Mode().Perm())
	}
	if names, _ := filepath.Glob(filepath.Join(dir, ".bridge-policy-*")); len(names) != 0 {
		t.Errorf("temporary files left behind: %v", names)
	}
	got, err := LoadPolicy(path)
	if err != nil {
		t.Fatalf("LoadPolicy: %v", err)
	}
	if !reflect.DeepEqual(got, p) {
		t.Fatalf("round trip:\n%+v\nwant\n%+v", got, p)
	}
	// Overwriting replaces the file atomically.
	delete(p.Workdirs, "docs")
	if err := WritePolicy(path, p); err != nil {
		t.Fatalf("WritePolicy over an existing file: %v", err)
	}
	if got, err := LoadPolicy(path); err != nil || len(got.Workdirs) != 1 {
		t.Fatalf("after overwrite: %v, %v", got, err)
	}
	// An invalid policy is not written.
	bad := &Policy{Workdirs: map[string]WorkdirPolicy{"x": {Root: "relative"}}}
	if err := WritePolicy(filepath.Join(dir, "bad.json"), bad); err == nil {
		t.Error("WritePolicy wrote an invalid policy")
	}
	if _, err := os.Lstat(filepath.Join(dir, "bad.json")); err == nil {
		t.Error("an invalid policy file exists")
	}

	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, data string, mode os.FileMode) string {
		t.Helper()
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(f, mode); err != nil {
			t.Fatal(err)
		}
		return f
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	wiki := p.Workdirs["wiki"].Root
	tests := []struct {
		name, path, want string
	}{
		{"mode 0644", write("open.json", string(good), 0o644), "has mode 0644: group or others may access it"},
		{"mode 0660", write("group.json", string(good), 0o660), "has mode 0660"},
		{"mode 0602", write("other.json", string(good), 0o602), "has mode 0602"},
		{"symlink", link, "is a symbolic link"},
		{"directory", sub, "is not a regular file"},
		{"missing", filepath.Join(dir, "nope.json"), "the policy file cannot be used: it does not exist"},
		{"oversize", write("big.json", string(good)+strings.Repeat(" ", MaxPolicyFileBytes), 0o600), "is larger than 1048576 bytes"},
		{"unknown field", write("unknown.json", `{"workdirs":{"wiki":{"root":"`+wiki+`","read_write":true,"secret":1}}}`, 0o600), `unknown field "secret" in workdirs.wiki`},
		{"unknown top-level field", write("top.json", `{"workdirs":{"wiki":{"root":"`+wiki+`"}},"version":1}`, 0o600), `unknown field "version"`},
		{"duplicate workdir", write("dup.json", `{"workdirs":{"wiki":{"root":"`+wiki+`"},"wiki":{"root":"`+wiki+`"}}}`, 0o600), `duplicate key "wiki" in workdirs`},
		{"malformed", write("bad.json", `{"workdirs":`, 0o600), "malformed JSON"},
		{"trailing data", write("trail.json", `{"workdirs":{"wiki":{"root":"`+wiki+`"}}}x`, 0o600), "unexpected data after the JSON object"},
		{"invalid policy", write("ro.json", `{"workdirs":{"wiki":{"root":"`+wiki+`","repo_ops":true,"actions":{"a":{"argv":["a"],"argument":"none"}}}}}`, 0o600),
			`workdir "wiki": actions are configured on a read-only workdir`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LoadPolicy(tc.path)
			if err == nil {
				t.Fatalf("LoadPolicy accepted it: %+v", got)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error lacks %q:\n%v", tc.want, err)
			}
			if strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), base) {
				t.Errorf("error shows a host path:\n%v", err)
			}
		})
	}
}

func TestPolicyPublic(t *testing.T) {
	p, _ := validPolicy(t)
	want := map[string][]string{"docs": {}, "wiki": {"fmt", "wiki_lint"}}
	if got := p.Public(); !reflect.DeepEqual(got, want) {
		t.Errorf("Public = %v, want %v", got, want)
	}
	var nilPolicy *Policy
	if got := nilPolicy.Public(); len(got) != 0 {
		t.Errorf("Public of nil = %v", got)
	}
}
