package bridge

import (
	"fmt"
	"path"
	"strings"

	"github.com/serverfs/serverfs/internal/settings"
)

// Per-directory build files. A pinned root Makefile does not pin what
// `make -C sub` runs: sub/Makefile, which the agent can write. The check
// is a warning, never a refusal, and deliberately narrow: argv[0] is a
// known build program (its base name), the action hands it a directory
// (one of its directory options in argv, with a fixed value or the
// caller's path as its value when argument_allow.directories lets it be
// one, or such a path alone), and the action's integrity pins name
// files at the root only (at least one: an action with no pin trusts the
// repository's build files as a whole, a choice this does not second-guess).

// buildProgram is what one build program reads from the directory it is
// given, and the options that give it one.
type buildProgram struct {
	files    []string // its build files, the first the one named in warnings
	dirFlags []string // options whose value is that directory (cargo's and mvn's may name the file)
	// attached: a one-letter option may hold its value ("-Csub"); only
	// for make, whose other options cannot be mistaken for it.
	attached bool
}

var (
	makeProgram   = buildProgram{files: []string{"Makefile", "makefile", "GNUmakefile"}, dirFlags: []string{"-C", "--directory"}, attached: true}
	gradleProgram = buildProgram{files: []string{"build.gradle", "build.gradle.kts", "settings.gradle"}, dirFlags: []string{"-p", "--project-dir"}}
	mvnProgram    = buildProgram{files: []string{"pom.xml"}, dirFlags: []string{"-f", "--file"}}
)

var buildPrograms = map[string]buildProgram{
	"make": makeProgram, "gmake": makeProgram,
	"npm":    {files: []string{"package.json"}, dirFlags: []string{"--prefix", "-C"}},
	"npx":    {files: []string{"package.json"}, dirFlags: []string{"--prefix"}},
	"yarn":   {files: []string{"package.json"}, dirFlags: []string{"--cwd"}},
	"pnpm":   {files: []string{"package.json"}, dirFlags: []string{"-C", "--dir", "--prefix"}},
	"go":     {files: []string{"go.mod"}, dirFlags: []string{"-C"}},
	"cargo":  {files: []string{"Cargo.toml"}, dirFlags: []string{"--manifest-path", "-C"}},
	"gradle": gradleProgram, "gradlew": gradleProgram,
	"mvn": mvnProgram, "mvnw": mvnProgram,
}

// callerDir stands for the caller's path in warnings.
const callerDir = "<dir>"

// buildFileWarning says when action a runs a build program in a
// directory whose build file no pin covers, or "".
func buildFileWarning(a Action) string {
	if a.IsRelease() || len(a.Argv) == 0 || len(a.Integrity) == 0 {
		return ""
	}
	for rel := range a.Integrity {
		if strings.Contains(rel, "/") {
			return "" // the operator pins files below the root
		}
	}
	prog := path.Base(a.Argv[0])
	bp, ok := buildPrograms[prog]
	if !ok {
		return ""
	}
	takesPath := a.Argument == ArgumentPath || a.Argument == ArgumentBasename
	dirs := takesPath && a.ArgumentAllow != nil && a.ArgumentAllow.Directories
	dir, via := "", ""
	for i := 1; i < len(a.Argv) && dir == ""; i++ {
		arg := a.Argv[i]
		for _, f := range bp.dirFlags {
			var v string
			switch {
			case arg == f && i+1 < len(a.Argv):
				v = a.Argv[i+1]
			case arg == f && dirs && f != "--manifest-path":
				// The caller's path, appended last, may be a directory
				// (cargo's --manifest-path takes a file: which file a
				// path argument names is the caller's anyway).
				v = callerDir
			case strings.HasPrefix(arg, f+"="):
				v = arg[len(f)+1:]
			case bp.attached && len(f) == 2 && len(arg) > 2 && strings.HasPrefix(arg, f):
				v = arg[2:]
			default:
				continue
			}
			if v != callerDir {
				// A fixed value: only a directory below the root is
				// agent-writable and unpinned here.
				v = path.Clean(v)
				if path.IsAbs(v) || v == "." || v == ".." || strings.HasPrefix(v, "../") {
					continue
				}
			}
			dir, via = v, f+" "+showValue(v)
			break
		}
	}
	if dir == "" && dirs {
		dir, via = callerDir, callerDir
	}
	if dir == "" {
		return ""
	}
	file := dir + "/" + bp.files[0]
	for _, f := range bp.files {
		if path.Base(dir) == f {
			file = dir // cargo --manifest-path, mvn -f: the file itself
		}
	}
	if !strings.Contains(file, "/") {
		return "" // a file at the root, which the pins may cover
	}
	every := ""
	if dir == callerDir {
		via += " (the caller's path, which may be a directory)"
		every = " in every directory the caller may name"
	}
	return fmt.Sprintf("%s %s: %s is agent-writable and unpinned (the action pins only files at the root); pin it (integrity)%s, or drop the directory argument",
		prog, via, showValue(file), every)
}

// ActionWarnings are the warnings (nothing is refused) about the command
// actions of the slots' WORKDIR_NN_REPO_ACTIONS_JSON in environ, one line
// each naming the slot and action; render-policy and check-config print
// them. A value that does not parse is RenderPolicy's to report.
func ActionWarnings(environ []string) []string {
	env := settings.EnvMap(environ)
	var out []string
	for n := 1; n <= settings.Slots; n++ {
		raw := strings.TrimSpace(env[fmt.Sprintf("WORKDIR_%02d_REPO_ACTIONS_JSON", n)])
		if raw == "" {
			continue
		}
		actions, errs := parseActions([]byte(raw))
		if len(errs) > 0 {
			continue
		}
		for _, name := range sortedKeys(actions) {
			a := actions[name]
			if w := buildFileWarning(a); w != "" {
				out = append(out, fmt.Sprintf("slot %02d: action %q: %s", n, showSetting(name), w))
			}
			if len(a.Reveal) > 0 {
				out = append(out, fmt.Sprintf("slot %02d: action %q reads what the agent's tools refuse where it matches reveal %q; its output goes to the agent", n, showSetting(name), showSetting(strings.Join(a.Reveal, " "))))
			}
		}
	}
	return out
}

// ActionMaskNote says what the command actions of the .env in environ
// cannot read, or "" when it configures none.
func ActionMaskNote(environ []string) string {
	env := settings.EnvMap(environ)
	for n := 1; n <= settings.Slots; n++ {
		actions, errs := parseActions([]byte(strings.TrimSpace(env[fmt.Sprintf("WORKDIR_%02d_REPO_ACTIONS_JSON", n)])))
		if len(errs) > 0 {
			continue
		}
		for _, a := range actions {
			if a.Kind == "" || a.Kind == KindCommand {
				if strings.EqualFold(env["SERVERFS_ALLOW_HIDDEN"], "true") {
					return "actions cannot read deny-listed paths (the server's deny list, SERVERFS_EXTRA_DENY_GLOBS included): an action that needs one names it in \"reveal\""
				}
				return "actions cannot read hidden paths (SERVERFS_ALLOW_HIDDEN is not true), .git included, nor deny-listed ones: an action that needs one names it in \"reveal\""
			}
		}
	}
	return ""
}
