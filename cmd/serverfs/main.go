// Command serverfs is the ServerFS MCP server and its operator tools.
//
//	serverfs serve [--workdir ...] [--description ...] [--stdio]  serve MCP (streamable HTTP at /mcp, or stdio)
//	serverfs healthcheck                  exit 0 if the local listen port accepts a connection within 2 s
//	serverfs check-config [--workdir ...] run serve's validation and print the workdirs
//	serverfs selfcheck [--workdir ...]    report the process's confinement; exit 1 on a hardening failure
//	serverfs bridge --policy F --socket S --token-file T   run the host bridge (named actions, push, leases)
//	serverfs bridge render-policy --out F  write the bridge's private policy from the .env fields
//	serverfs grant keygen|sign|revoke|log  operator-signed one-time grants (keys, tokens, revocation, audit)
//	serverfs version                      print the version
//
// Configuration comes from the environment (WORKDIR_NN_* slots and
// SERVERFS_* limits, see docs/configuration.md) or, on a bare-metal host, from repeatable
// --workdir ALIAS=/abs/path[:ro|:rw][:repo], --description ALIAS=TEXT and
// --url-template ALIAS=URL flags, and --search-fetch.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/serverfs/serverfs/bridge"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/mcp"
)

// version is stamped at build time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}

func run(args, environ []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "serverfs", versionString())
		return 0
	case "check-config":
		return checkConfig(args[1:], environ, stdout, stderr)
	case "selfcheck":
		return selfcheck(args[1:], environ, stdout, stderr)
	case "serve":
		return serve(args[1:], environ, os.Stdin, stdout, stderr)
	case "healthcheck":
		fset := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
		fset.SetOutput(stderr)
		fset.Usage = func() {
			fmt.Fprintln(fset.Output(), "usage: serverfs healthcheck (exit 0 if the listen port or unix: socket accepts a connection within 2 s, else 1)")
		}
		if code, ok := parseFlags(fset, args[1:], stdout); !ok {
			return code
		}
		return healthcheck(environ, stderr)
	case "bridge":
		return bridgeCmd(args[1:], environ, stdout, stderr)
	case "grant":
		return grantCmd(args[1:], stdout, stderr)
	case "help", "--help", "-h":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "serverfs: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
}

// parseFlags parses a subcommand's flags. It returns ok, or the exit
// status: 0 after -h/--help (the usage on stdout), 2 for bad flags (the
// flag package has said why on stderr).
func parseFlags(fset *flag.FlagSet, args []string, stdout io.Writer) (code int, ok bool) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			fset.SetOutput(stdout)
			fset.Usage()
			return 0, false
		}
	}
	if err := fset.Parse(args); err != nil {
		return 2, false
	}
	return 0, true
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: serverfs <command> [flags]

commands:
  serve          serve MCP over streamable HTTP at http://$SERVERFS_LISTEN/mcp
                 flags: --workdir `+sfs.WorkdirSyntax+`
                          (repeatable; bare-metal mode instead of the slots;
                          :ro is the default, :rw allows writes, :repo adds
                          the repository tools)
                        --description ALIAS=TEXT (repeatable; what agents
                          are told about that --workdir)
                        --search-fetch[=ALIAS,...] (serve ChatGPT's search
                          and fetch tools over every workdir, or those;
                          SERVERFS_SEARCH_FETCH=true does the same)
                        --url-template ALIAS=URL (repeatable; where their
                          citations of that --workdir's files point, e.g.
                          https://git.example.com/r/blob/main/{path}#L{line})
                        --state-dir /abs/path (server-owned, outside every
                          workdir: where workspaces are stored; without it, or
                          SERVERFS_STATE_DIR, create_workspace is not served)
                        --stdio (serve one client on stdin/stdout instead)
  healthcheck    exit 0 if the listen port accepts a connection within 2 s, else 1
  check-config   run serve's validation (workdirs, limits, HTTP and bridge
                 settings) without serving, and print each workdir's alias, mode,
                 repo ops and description (no host paths); exit 1 if invalid
                 flags: --workdir, --description, --search-fetch,
                        --url-template, --state-dir as for serve
  selfcheck      report uid/gid, capabilities, whether / and each workdir are
                 writable, and whether openat2 is available (no host paths);
                 exit 1 on a hardening failure (root, writable /, writable ro workdir)
                 flags: --workdir, --description, --search-fetch,
                        --url-template, --state-dir as for serve
  bridge         run the host bridge (named actions, git push, the shared writer
                 lease) on a Unix socket, as the operator's user on the host
                 (never root: it refuses uid 0 unless --allow-root)
                 flags: --policy FILE --socket PATH --token-file FILE
                        [--allow-uid N]... [--state-dir DIR] [--allow-root]
                 "bridge render-policy --out FILE" writes the policy from the
                 .env fields (WORKDIR_NN_PATH, _REPO_ACTIONS_JSON, ...)
  grant          operator-signed one-time grants for a command nobody configured
                 "grant keygen --out FILE": a new Ed25519 key (FILE 0600, FILE.pub)
                 "grant sign --key FILE --workdir ALIAS [--host ID] [--ttl 10m]
                   [--max-uses 1] [--mutates] [--network] [--unix-sockets]
                   [--cwd DIR] -- ARGV...":
                   prints the argv (stderr) and the token (stdout)
                 "grant revoke --state-dir DIR|--policy FILE GRANT_ID"
                 "grant log --state-dir DIR|--policy FILE": the audit ledger
  version        print the version
  help           print this text
`)
}

func versionString() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		v += " " + bi.GoVersion
	}
	return v
}

func checkConfig(args, environ []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("check-config", flag.ContinueOnError)
	fset.SetOutput(stderr)
	var flags configFlags
	flags.register(fset)
	if code, ok := parseFlags(fset, args, stdout); !ok {
		return code
	}
	su, err := configure(environ, flags)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer su.fs.Close()
	bridged := su.bridgeStatus()
	clientToken := "none"
	if su.http.AuthToken.Set() {
		clientToken = "required"
	}
	fmt.Fprintf(stdout, "configuration OK: %d workdir(s), resolver %s, hidden paths %s, host bridge %s, listen %s, client token %s\n",
		len(su.cfg.Workdirs), su.fs.Resolver(), map[bool]string{true: "allowed", false: "refused"}[su.cfg.AllowHidden], bridged, listenName(su.http, nil), clientToken)
	for _, w := range su.http.Warnings {
		fmt.Fprintln(stdout, "warning: "+w)
	}
	// The bridge's actions, when the .env holding them is in the
	// environment (check-config run on the host), and the PATH entries a
	// bridge started with this PATH drops, as render-policy warns.
	for _, w := range append(bridge.ActionWarnings(environ), bridge.PathWarnings(environ)...) {
		fmt.Fprintln(stdout, "warning: "+w)
	}
	if n := bridge.ActionMaskNote(environ); n != "" {
		fmt.Fprintln(stdout, "note: "+n)
	}
	for _, w := range su.fs.Workdirs() {
		ops := "repo_ops off"
		if w.RepoOps {
			ops = "repo_ops on "
		}
		fmt.Fprintf(stdout, "  %-32s %s  %s  %s\n", w.Alias, w.Mode, ops, w.Description)
	}
	if sf := su.fs.SearchFetchWorkdirs(); len(sf) > 0 {
		fmt.Fprintln(stdout, "search and fetch (ChatGPT) cover:")
		for _, w := range sf {
			url := "serverfs://" + w.Alias() + "/{path}"
			if t := w.URLTemplate(); t != nil {
				url = t.String()
			}
			fmt.Fprintf(stdout, "  %-32s citations %s\n", w.Alias(), url)
		}
	} else {
		fmt.Fprintln(stdout, "search and fetch (ChatGPT): off (SERVERFS_SEARCH_FETCH)")
	}
	if su.workspaces.StateDir != "" {
		// What serve would serve; the storage itself is opened (and
		// cleaned) by serve only.
		su.fs.EnableWorkspaces(su.workspaces.Limits())
		fmt.Fprintf(stdout, "workspaces: up to %d per rw repo-ops workdir, removed at start-up after %s\n", su.workspaces.Limit, su.workspaces.MaxAge)
	}
	fmt.Fprintf(stdout, "tools served: %s\n", strings.Join(mcp.ToolNamesFor(su.deps()), ", "))
	return 0
}
