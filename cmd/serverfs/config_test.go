package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// cliRun runs one serverfs command line and returns its exit code, stdout
// and stderr. serve runs with --stdio on an empty stdin: past the
// validation it serves one session that ends at once.
func cliRun(t *testing.T, args, env []string) (int, string, string) {
	t.Helper()
	var out, errb strings.Builder
	if args[0] == "serve" {
		devnull, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		defer devnull.Close()
		code := serve(append([]string{"--stdio"}, args[1:]...), env, devnull, &out, &errb)
		return code, out.String(), errb.String()
	}
	code := run(args, env, &out, &errb)
	return code, out.String(), errb.String()
}

// cliFixture is a directory for --workdir values, a slot root with slot 01
// mounted, and bridge token files.
type cliFixture struct {
	dir, slots, token, shortToken string
}

func newCLIFixture(t *testing.T) cliFixture {
	t.Helper()
	base := t.TempDir()
	f := cliFixture{dir: filepath.Join(base, "work"), slots: filepath.Join(base, "slots"), token: filepath.Join(base, "token"), shortToken: filepath.Join(base, "short")}
	for _, d := range []string{f.dir, filepath.Join(f.slots, "01")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(f.token, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.shortToken, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// expand replaces {dir}, {slots}, {token} and {short} in each string.
func (f cliFixture) expand(in []string) []string {
	r := strings.NewReplacer("{dir}", f.dir, "{slots}", f.slots, "{token}", f.token, "{short}", f.shortToken)
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = r.Replace(s)
	}
	return out
}

const slotHint = " is set, but --workdir flags are in use: WORKDIR_NN_* variables configure the container slots; unset it (a --workdir takes its description from --description ALIAS=TEXT)"

// TestCLIMessages: each mistake an operator makes on the command line or
// in the environment gets its exact message, from check-config and serve
// alike, and never a host path.
func TestCLIMessages(t *testing.T) {
	f := newCLIFixture(t)
	for _, c := range []struct {
		name string
		args []string
		env  []string
		want string // stderr after "invalid configuration:\n"
	}{
		{"listen without host", []string{"--workdir", "demo={dir}"}, []string{"SERVERFS_LISTEN=8000"},
			`  SERVERFS_LISTEN="8000": must be IP:PORT, e.g. 0.0.0.0:8000 or 127.0.0.1:8000, or unix:/absolute/path.sock`},
		{"log level", []string{"--workdir", "demo={dir}"}, []string{"SERVERFS_LOG_LEVEL=verbose"},
			`  SERVERFS_LOG_LEVEL="verbose": must be DEBUG, INFO, WARN or ERROR`},
		{"mode :wr", []string{"--workdir", "demo={dir}:wr"}, nil,
			`  --workdir demo: unknown suffix ":wr": the accepted suffixes are :ro or :rw, then optionally :repo (ALIAS=/abs/path[:ro|:rw][:repo])`},
		{"mode :RW", []string{"--workdir", "demo={dir}:RW"}, nil,
			`  --workdir demo: unknown suffix ":RW": the accepted suffixes are :ro or :rw, then optionally :repo (ALIAS=/abs/path[:ro|:rw][:repo])`},
		{"mode :repo:rw", []string{"--workdir", "demo={dir}:repo:rw"}, nil,
			`  --workdir demo: suffix ":repo" is out of order: the mode (:ro or :rw) comes first, then optionally :repo (ALIAS=/abs/path[:ro|:rw][:repo])`},
		{"no '='", []string{"--workdir", "{dir}"}, nil,
			`  --workdir #1: expected ALIAS=/abs/path[:ro|:rw][:repo]`},
		{"a missing directory is still that", []string{"--workdir", "demo={dir}/missing"}, nil,
			`  --workdir demo: the path cannot be used: no such file or directory`},
		{"WORKDIR_03_ALIAS with --workdir", []string{"--workdir", "demo={dir}"}, []string{"WORKDIR_03_ALIAS=x"}, "  WORKDIR_03_ALIAS" + slotHint},
		{"WORKDIR_03_MODE with --workdir", []string{"--workdir", "demo={dir}"}, []string{"WORKDIR_03_MODE=rw"}, "  WORKDIR_03_MODE" + slotHint},
		{"WORKDIR_03_READ_ONLY with --workdir", []string{"--workdir", "demo={dir}"}, []string{"WORKDIR_03_READ_ONLY=false"}, "  WORKDIR_03_READ_ONLY" + slotHint},
		{"WORKDIR_03_DESCRIPTION with --workdir", []string{"--workdir", "demo={dir}"}, []string{"WORKDIR_03_DESCRIPTION=Docs"}, "  WORKDIR_03_DESCRIPTION" + slotHint},
		{"WORKDIR_03_PATH with --workdir", []string{"--workdir", "demo={dir}"}, []string{"WORKDIR_03_PATH=/srv/x"}, "  WORKDIR_03_PATH" + slotHint},
		{"WORKDIR_03_REPO_OPS_ENABLED with --workdir", []string{"--workdir", "demo={dir}"}, []string{"WORKDIR_03_REPO_OPS_ENABLED=true"}, "  WORKDIR_03_REPO_OPS_ENABLED" + slotHint},
		{"WORKDIR_03_REPO_ACTIONS_JSON with --workdir", []string{"--workdir", "demo={dir}"}, []string{"WORKDIR_03_REPO_ACTIONS_JSON={}"}, "  WORKDIR_03_REPO_ACTIONS_JSON" + slotHint},
		{"an empty slot variable with --workdir", []string{"--workdir", "demo={dir}"}, []string{"WORKDIR_16_DESCRIPTION="}, "  WORKDIR_16_DESCRIPTION" + slotHint},
		{"two slot variables, sorted", []string{"--workdir", "demo={dir}"}, []string{"WORKDIR_02_MODE=rw", "WORKDIR_01_ALIAS=a"},
			"  WORKDIR_01_ALIAS" + slotHint + "\n  WORKDIR_02_MODE" + slotHint},
		{"--description for no --workdir", []string{"--workdir", "demo={dir}", "--description", "other=Docs"}, nil,
			`  --description other: no --workdir has the alias "other"`},
		{"--description without '='", []string{"--workdir", "demo={dir}", "--description", "Docs"}, nil,
			`  --description #1: expected ALIAS=TEXT`},
		{"--description twice", []string{"--workdir", "demo={dir}", "--description", "demo=A", "--description", "demo=B"}, nil,
			`  --description demo: given twice`},
		{"--description with a newline", []string{"--workdir", "demo={dir}", "--description", "demo=A\nB"}, nil,
			`  --description demo: description contains control characters (newlines, tabs, ...)`},
		{"--description with slots", []string{"--description", "demo=A"}, []string{"SERVERFS_WORKDIRS_ROOT={slots}", "WORKDIR_01_ALIAS=demo"},
			`  --description is for --workdir workdirs; a container slot takes WORKDIR_NN_DESCRIPTION`},
		{"--search-fetch with an unknown alias", []string{"--workdir", "demo={dir}", "--search-fetch=demo,docs"}, nil,
			`  --search-fetch: no workdir has the alias "docs"`},
		{"SERVERFS_SEARCH_FETCH not a boolean or aliases", []string{"--workdir", "demo={dir}"}, []string{"SERVERFS_SEARCH_FETCH=yes please"},
			`  SERVERFS_SEARCH_FETCH="yes please": must be true, false or a comma-separated list of workdir aliases`},
		{"SERVERFS_SEARCH_FETCH and --search-fetch", []string{"--workdir", "demo={dir}", "--search-fetch"}, []string{"SERVERFS_SEARCH_FETCH=true"},
			`  SERVERFS_SEARCH_FETCH and --search-fetch are both set: use one`},
		{"--url-template without {path}", []string{"--workdir", "demo={dir}", "--url-template", "demo=https://git.example.com/r/blob/main/"}, nil,
			`  --url-template demo: the template has no {path} placeholder`},
		{"--url-template with {path} in the host", []string{"--workdir", "demo={dir}", "--url-template", "demo=https://{path}.example.com/"}, nil,
			`  --url-template demo: the template must not have a placeholder in the scheme or host: write the host out, then a '/' before {path}`},
		{"--url-template not http", []string{"--workdir", "demo={dir}", "--url-template", "demo=javascript:alert(1)/{path}"}, nil,
			`  --url-template demo: the template must start with http:// or https://`},
		{"--url-template with credentials", []string{"--workdir", "demo={dir}", "--url-template", "demo=https://bot:hunter2@git.example.com/{path}"}, nil,
			`  --url-template demo: the template must not carry credentials (user@ or user:password@): every answer would show them`},
		{"--url-template unknown placeholder", []string{"--workdir", "demo={dir}", "--url-template", "demo=https://git.example.com/{branch}/{path}"}, nil,
			`  --url-template demo: the template has the unknown placeholder "{branch}"; the placeholders are {path} and {line}`},
		{"--url-template unbalanced", []string{"--workdir", "demo={dir}", "--url-template", "demo=https://git.example.com/{path"}, nil,
			`  --url-template demo: the template has a '{' without '}'; the placeholders are {path} and {line}`},
		{"--url-template with a space", []string{"--workdir", "demo={dir}", "--url-template", "demo=https://git.example.com/a b/{path}"}, nil,
			`  --url-template demo: the template contains spaces or control characters`},
		{"--url-template for no --workdir", []string{"--workdir", "demo={dir}", "--url-template", "other=https://git.example.com/{path}"}, nil,
			`  --url-template other: no --workdir has the alias "other"`},
		{"--url-template twice", []string{"--workdir", "demo={dir}", "--url-template", "demo=https://a.example/{path}", "--url-template", "demo=https://b.example/{path}"}, nil,
			`  --url-template demo: given twice`},
		{"--url-template without '='", []string{"--workdir", "demo={dir}", "--url-template", "https://a.example/{path}"}, nil,
			`  --url-template #1: expected ALIAS=TEMPLATE`},
		{"--url-template with slots", []string{"--url-template", "demo=https://a.example/{path}"}, []string{"SERVERFS_WORKDIRS_ROOT={slots}", "WORKDIR_01_ALIAS=demo"},
			`  --url-template is for --workdir workdirs; a container slot takes WORKDIR_NN_URL_TEMPLATE`},
		{"WORKDIR_01_URL_TEMPLATE bad", nil, []string{"SERVERFS_WORKDIRS_ROOT={slots}", "WORKDIR_01_ALIAS=demo", "WORKDIR_01_URL_TEMPLATE=ftp://x.example/{path}"},
			`  slot 01: WORKDIR_01_URL_TEMPLATE: the template must start with http:// or https://`},
		{"WORKDIR_03_URL_TEMPLATE with --workdir", []string{"--workdir", "demo={dir}"}, []string{"WORKDIR_03_URL_TEMPLATE=https://a.example/{path}"}, "  WORKDIR_03_URL_TEMPLATE" + slotHint},
		{"bridge socket without token", []string{"--workdir", "demo={dir}"}, []string{"SERVERFS_BRIDGE_SOCKET=/run/b.sock"},
			`  SERVERFS_BRIDGE_SOCKET and SERVERFS_BRIDGE_TOKEN_FILE must be set together`},
		{"bridge token missing", []string{"--workdir", "demo={dir}"}, []string{"SERVERFS_BRIDGE_SOCKET=/run/b.sock", "SERVERFS_BRIDGE_TOKEN_FILE={dir}/none"},
			`  SERVERFS_BRIDGE_TOKEN_FILE: bridge token: the file cannot be read: no such file or directory`},
		{"bridge token short", []string{"--workdir", "demo={dir}"}, []string{"SERVERFS_BRIDGE_SOCKET=/run/b.sock", "SERVERFS_BRIDGE_TOKEN_FILE={short}"},
			`  SERVERFS_BRIDGE_TOKEN_FILE: bridge token: shorter than 16 characters`},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, cmd := range []string{"check-config", "serve"} {
				code, _, stderr := cliRun(t, append([]string{cmd}, f.expand(c.args)...), f.expand(c.env))
				if want := "invalid configuration:\n" + c.want + "\n"; code != 1 || stderr != want {
					t.Errorf("%s: exit %d, stderr\n%s\nwant exit 1, stderr\n%s", cmd, code, stderr, want)
				}
				if strings.Contains(stderr, f.dir) || strings.Contains(stderr, f.token) {
					t.Errorf("%s printed a host path: %s", cmd, stderr)
				}
			}
		})
	}
}

// TestCheckConfigPrintsWhatServeServes: the workdirs with mode, repo ops
// and the --description given, the bridge, and the tools served.
func TestCheckConfigPrintsWhatServeServes(t *testing.T) {
	f := newCLIFixture(t)
	other := filepath.Join(filepath.Dir(f.dir), "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := cliRun(t, []string{"check-config", "--workdir", "demo=" + f.dir + ":rw:repo", "--workdir", "docs=" + other + ":ro", "--description", "demo=Demo project (git)"},
		f.expand([]string{"SERVERFS_LISTEN=127.0.0.1:8123", "SERVERFS_BRIDGE_SOCKET=/run/b.sock", "SERVERFS_BRIDGE_TOKEN_FILE={token}"}))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	out = regexp.MustCompile(`resolver \w+`).ReplaceAllString(out, "resolver R")
	want := "configuration OK: 2 workdir(s), resolver R, hidden paths refused, host bridge configured (BRIDGE_UNAVAILABLE now: run_granted_command is not served), listen 127.0.0.1:8123, client token none\n" +
		"  demo                             rw  repo_ops on   Demo project (git)\n" +
		"  docs                             ro  repo_ops off  \n" +
		"search and fetch (ChatGPT): off (SERVERFS_SEARCH_FETCH)\n" +
		"tools served: list_workdirs, list_directory, find_files, search_text, read_text_file, read_text_files, stat_file, write_text_file, edit_text_file, create_directory, move_path, delete_path, inspect_repo, read_repo_history, commit_repo_changes, run_repo_action, push_repo\n"
	if out != want {
		t.Errorf("check-config printed\n%s\nwant\n%s", out, want)
	}

	// With a state directory the workspace tools are served; check-config
	// neither creates nor cleans it.
	state := filepath.Join(filepath.Dir(f.dir), "state")
	code, out, stderr = cliRun(t, []string{"check-config", "--workdir", "demo=" + f.dir + ":rw:repo", "--state-dir", state}, []string{"SERVERFS_WORKSPACE_LIMIT=2"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "workspaces: up to 2 per rw repo-ops workdir, removed at start-up after 168h0m0s\n") ||
		!strings.HasSuffix(out, "commit_repo_changes, create_workspace, list_workspaces, discard_workspace, submit_workspace\n") || strings.Contains(out, state) {
		t.Errorf("check-config with a state directory printed\n%s", out)
	}
	if _, err := os.Lstat(state); !os.IsNotExist(err) {
		t.Errorf("check-config created the state directory: %v", err)
	}
	if code, _, stderr := cliRun(t, []string{"check-config", "--workdir", "demo=" + f.dir + ":rw:repo", "--state-dir", "rel/state"}, nil); code != 1 || !strings.Contains(stderr, "must be an absolute path") {
		t.Errorf("a relative state directory: exit %d %s", code, stderr)
	}

	// search and fetch on one workdir, with its citation template.
	code, out, stderr = cliRun(t, []string{"check-config", "--workdir", "demo=" + f.dir, "--workdir", "docs=" + other, "--search-fetch=docs", "--url-template", "docs=https://git.example.com/docs/blob/main/{path}#L{line}"}, nil)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	out = regexp.MustCompile(`resolver \w+`).ReplaceAllString(out, "resolver R")
	want = "configuration OK: 2 workdir(s), resolver R, hidden paths refused, host bridge none, listen 0.0.0.0:8000, client token none\n" +
		"  demo                             ro  repo_ops off  \n" +
		"  docs                             ro  repo_ops off  \n" +
		"search and fetch (ChatGPT) cover:\n" +
		"  docs                             citations https://git.example.com/docs/blob/main/{path}#L{line}\n" +
		"tools served: list_workdirs, list_directory, find_files, search_text, read_text_file, read_text_files, stat_file, search, fetch\n"
	if out != want {
		t.Errorf("check-config printed\n%s\nwant\n%s", out, want)
	}
}

// TestCheckConfigAgreesWithServe: over good and bad environments,
// check-config passes exactly when serve starts, and refuses with the
// same lines.
func TestCheckConfigAgreesWithServe(t *testing.T) {
	f := newCLIFixture(t)
	wd := []string{"--workdir", "demo={dir}"}
	slot := []string{"SERVERFS_WORKDIRS_ROOT={slots}", "WORKDIR_01_ALIAS=demo"}
	envs := []struct {
		name string
		args []string
		env  []string
		ok   bool
	}{
		{"bare metal", wd, nil, true},
		{"bare metal rw repo", []string{"--workdir", "demo={dir}:rw:repo", "--description", "demo=Demo"}, nil, true},
		{"listen loopback", wd, []string{"SERVERFS_LISTEN=127.0.0.1:8000"}, true},
		{"listen localhost", wd, []string{"SERVERFS_LISTEN=localhost:9000"}, true},
		{"log level debug", wd, []string{"SERVERFS_LOG_LEVEL=debug"}, true},
		{"allowed hosts", wd, []string{"SERVERFS_ALLOWED_HOSTS=serverfs-mcp,example.internal"}, true},
		{"limits", wd, []string{"SERVERFS_MAX_READ_LINES=200", "SERVERFS_SEARCH_TIMEOUT_SECONDS=5"}, true},
		{"bridge", wd, []string{"SERVERFS_BRIDGE_SOCKET=/run/b.sock", "SERVERFS_BRIDGE_TOKEN_FILE={token}"}, true},
		{"client token", wd, []string{"SERVERFS_AUTH_TOKEN_FILE={token}"}, true},
		{"unix socket with group", wd, []string{"SERVERFS_LISTEN=unix:{dir}/mcp.sock", "SERVERFS_LISTEN_GROUP=0"}, true},
		{"slot", nil, slot, true},
		{"slot rw with description", nil, append(slot, "WORKDIR_01_READ_ONLY=false", "WORKDIR_01_DESCRIPTION=Docs", "WORKDIR_01_REPO_OPS_ENABLED=true"), true},
		{"search fetch", wd, []string{"SERVERFS_SEARCH_FETCH=true"}, true},
		{"search fetch flag", append([]string{"--search-fetch"}, wd...), nil, true},
		{"search fetch flag with aliases and a template", []string{"--workdir", "demo={dir}", "--search-fetch=demo", "--url-template", "demo=https://git.example.com/r/blob/main/{path}#L{line}"}, nil, true},
		{"search fetch off", wd, []string{"SERVERFS_SEARCH_FETCH=false"}, true},
		{"slot search fetch with template", nil, append(slot, "SERVERFS_SEARCH_FETCH=demo", "WORKDIR_01_URL_TEMPLATE=https://git.example.com/r/-/blob/main/{path}?plain=1#L{line}"), true},

		{"listen port only", wd, []string{"SERVERFS_LISTEN=8000"}, false},
		{"listen host name", wd, []string{"SERVERFS_LISTEN=example.com:8000"}, false},
		{"log level verbose", wd, []string{"SERVERFS_LOG_LEVEL=verbose"}, false},
		{"allowed host with scheme", wd, []string{"SERVERFS_ALLOWED_HOSTS=http://x"}, false},
		{"limit zero", wd, []string{"SERVERFS_MAX_READ_LINES=0"}, false},
		{"unknown variable", wd, []string{"SERVERFS_MAX_READ_LINE=10"}, false},
		{"bad suffix", []string{"--workdir", "demo={dir}:wr"}, nil, false},
		{"slot variable with --workdir", wd, []string{"WORKDIR_02_MODE=rw"}, false},
		{"description for no workdir", []string{"--workdir", "demo={dir}", "--description", "x=y"}, nil, false},
		{"bridge half set", wd, []string{"SERVERFS_BRIDGE_TOKEN_FILE={token}"}, false},
		{"bridge short token", wd, []string{"SERVERFS_BRIDGE_SOCKET=/run/b.sock", "SERVERFS_BRIDGE_TOKEN_FILE={short}"}, false},
		{"client token too short", wd, []string{"SERVERFS_AUTH_TOKEN_FILE={short}"}, false},
		{"client token file relative", wd, []string{"SERVERFS_AUTH_TOKEN_FILE=token"}, false},
		{"unix socket relative", wd, []string{"SERVERFS_LISTEN=unix:mcp.sock"}, false},
		{"listen group without a socket", wd, []string{"SERVERFS_LISTEN_GROUP=0"}, false},
		{"slot without mount", nil, []string{"SERVERFS_WORKDIRS_ROOT={slots}", "WORKDIR_02_ALIAS=x"}, false},
		{"slot mode wrong", nil, append(slot, "WORKDIR_01_MODE=write"), false},
		{"slot mode and read_only disagree", nil, append(slot, "WORKDIR_01_MODE=rw", "WORKDIR_01_READ_ONLY=true"), false},
		{"no workdir", nil, []string{"SERVERFS_WORKDIRS_ROOT={slots}"}, false},
		{"search fetch unknown alias", wd, []string{"SERVERFS_SEARCH_FETCH=docs"}, false},
		{"search fetch not a boolean", wd, []string{"SERVERFS_SEARCH_FETCH=1"}, false},
		{"search fetch twice", append([]string{"--search-fetch"}, wd...), []string{"SERVERFS_SEARCH_FETCH=true"}, false},
		{"url template in the host", []string{"--workdir", "demo={dir}", "--url-template", "demo=https://{path}/"}, nil, false},
		{"slot url template without path", nil, append(slot, "WORKDIR_01_URL_TEMPLATE=https://git.example.com/"), false},
		{"several problems at once", []string{"--workdir", "demo={dir}:RW"}, []string{"SERVERFS_LISTEN=x", "SERVERFS_LOG_LEVEL=loud", "WORKDIR_05_ALIAS=a"}, false},
	}
	good := 0
	for _, e := range envs {
		t.Run(e.name, func(t *testing.T) {
			args, env := f.expand(e.args), f.expand(e.env)
			cc, _, ccErr := cliRun(t, append([]string{"check-config"}, args...), env)
			sc, _, sErr := cliRun(t, append([]string{"serve"}, args...), env)
			if e.ok {
				if cc != 0 || sc != 0 {
					t.Fatalf("a good environment: check-config exit %d (%s), serve exit %d (%s)", cc, ccErr, sc, sErr)
				}
				if !strings.Contains(sErr, `"msg":"serving over stdio"`) {
					t.Errorf("serve did not start:\n%s", sErr)
				}
				return
			}
			if cc != 1 || sc != 1 || ccErr != sErr || !strings.HasPrefix(ccErr, "invalid configuration:\n  ") {
				t.Fatalf("a bad environment: check-config exit %d\n%s\nserve exit %d\n%s", cc, ccErr, sc, sErr)
			}
		})
		if e.ok {
			good++
		}
	}
	if len(envs) < 20 || good < 8 || len(envs)-good < 12 {
		t.Fatalf("%d environments, %d good: the table is too small", len(envs), good)
	}
}

// TestUsageMatchesParser: every flag the parsers of serve, check-config
// and selfcheck define is in the usage text under its command, and the
// --workdir syntax the usage shows is the one the parser accepts.
func TestUsageMatchesParser(t *testing.T) {
	var u strings.Builder
	usage(&u)
	text := u.String()
	section := func(cmd string) string {
		i := strings.Index(text, "\n  "+cmd+" ")
		if i < 0 {
			t.Fatalf("usage has no %s section", cmd)
		}
		rest := text[i+3:]
		if j := regexp.MustCompile(`\n  [a-z]`).FindStringIndex(rest); j != nil {
			rest = rest[:j[0]]
		}
		return rest
	}
	flagRE := regexp.MustCompile(`(?m)^  -([a-z-]+)`)
	for _, cmd := range []string{"serve", "check-config", "selfcheck"} {
		_, usageText, _ := cliRun(t, []string{cmd, "-h"}, nil)
		if cmd == "serve" {
			// cliRun adds --stdio; -h still lists every flag.
			var out, errb strings.Builder
			serve([]string{"-h"}, nil, strings.NewReader(""), &out, &errb)
			usageText = out.String()
		}
		var names []string
		for _, m := range flagRE.FindAllStringSubmatch(usageText, -1) {
			names = append(names, m[1])
		}
		if !slices.Contains(names, "workdir") || !slices.Contains(names, "description") || !slices.Contains(names, "search-fetch") || !slices.Contains(names, "url-template") {
			t.Fatalf("%s -h lists %v", cmd, names)
		}
		sec := section(cmd)
		for _, n := range names {
			if !strings.Contains(sec, "--"+n) {
				t.Errorf("usage of %s does not mention --%s:\n%s", cmd, n, sec)
			}
		}
	}
	if !strings.Contains(section("serve"), "--workdir ALIAS=/abs/path[:ro|:rw][:repo]") {
		t.Errorf("usage shows another --workdir syntax:\n%s", section("serve"))
	}
	f := newCLIFixture(t)
	for _, suffix := range []string{"", ":ro", ":rw", ":repo", ":ro:repo", ":rw:repo"} {
		if code, _, stderr := cliRun(t, []string{"check-config", "--workdir", "demo=" + f.dir + suffix}, nil); code != 0 {
			t.Errorf("the syntax the usage shows, %q, is refused: %s", suffix, stderr)
		}
	}
}
