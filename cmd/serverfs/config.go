package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/serverfs/serverfs/internal/settings"

	"github.com/serverfs/serverfs/bridge/wire"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/git/workspace"
	"github.com/serverfs/serverfs/internal/errs"
	"github.com/serverfs/serverfs/mcp"
	"github.com/serverfs/serverfs/mcp/transport"
)

// workdirFlags collects the values of a repeatable flag.
type workdirFlags []string

func (w *workdirFlags) String() string     { return strings.Join(*w, ",") }
func (w *workdirFlags) Set(v string) error { *w = append(*w, v); return nil }

// configFlags are the bare-metal configuration flags that serve,
// check-config and selfcheck share, so that one command line works for all
// three.
type configFlags struct {
	workdirs, descriptions, urlTemplates workdirFlags
	searchFetch                          searchFetchFlag
	// stateDir is --state-dir: where workspaces are stored (as
	// SERVERFS_STATE_DIR).
	stateDir string
}

// searchFetchFlag is --search-fetch: alone it means true; it also takes
// =false or =ALIAS,ALIAS, as SERVERFS_SEARCH_FETCH does.
type searchFetchFlag string

func (s *searchFetchFlag) String() string     { return string(*s) }
func (s *searchFetchFlag) Set(v string) error { *s = searchFetchFlag(v); return nil }

// IsBoolFlag lets --search-fetch stand without a value.
func (s *searchFetchFlag) IsBoolFlag() bool { return true }

// register adds --workdir, --description, --url-template and
// --search-fetch to fset.
func (c *configFlags) register(fset *flag.FlagSet) {
	fset.Var(&c.workdirs, "workdir", sfs.WorkdirSyntax+": a workdir (repeatable; bare-metal mode)")
	fset.Var(&c.descriptions, "description", "ALIAS=TEXT: the description agents see for a --workdir (repeatable)")
	fset.Var(&c.urlTemplates, "url-template", "ALIAS=URL: where search and fetch citations of a --workdir's files point, with {path} and optionally {line} (repeatable)")
	fset.StringVar(&c.stateDir, "state-dir", "", "/abs/path: a server-owned directory outside every workdir where workspaces (create_workspace) are stored (as SERVERFS_STATE_DIR); without it workspaces are not served")
	fset.Var(&c.searchFetch, "search-fetch", "serve ChatGPT's search and fetch tools over every workdir, or =ALIAS,ALIAS over those (as SERVERFS_SEARCH_FETCH)")
}

// setup is a validated configuration with its workdirs opened: everything
// serve needs before it listens.
type setup struct {
	cfg *sfs.Config
	// tools and http are the tool layer's and the transport's settings.
	tools mcp.Config
	http  transport.Config
	// bridge is the host bridge's client; nil when none is configured.
	bridge *wire.Client
	fs     *sfs.FS
	// workspaces is the workspace configuration; StateDir "" when
	// workspaces are off.
	workspaces workspace.Config
	// grants: the bridge answered at start-up that it pins grant keys
	// (run_granted_command is served); offerErr: it did not answer.
	grants   bool
	offerErr error
}

// configure is the one validation serve, check-config and selfcheck run:
// the workdirs and limits (environment and flags), the HTTP settings and
// the bridge settings, every problem reported at once; then it opens the
// workdir roots. The caller closes s.fs.
func configure(environ []string, flags configFlags) (*setup, error) {
	cfg, err := sfs.LoadConfigFlags(environ, sfs.Flags{Workdirs: flags.workdirs, Descriptions: flags.descriptions, URLTemplates: flags.urlTemplates, SearchFetch: string(flags.searchFetch)})
	toolsCfg, httpCfg, probs := loadServeConfig(environ)
	var ce *sfs.ConfigError
	if errors.As(err, &ce) {
		probs = append(ce.Problems, probs...)
	} else if err != nil {
		return nil, err
	}
	bc, err := bridgeClient(environ)
	if err != nil {
		probs = append(probs, err.Error())
	}
	wsCfg, wsProbs := workspace.LoadConfig(environ, flags.stateDir)
	probs = append(probs, wsProbs...)
	if len(probs) > 0 {
		return nil, &sfs.ConfigError{Problems: probs}
	}
	opts := sfs.Options{}
	if bc != nil {
		// Writes and commits share the bridge's lease with its actions
		// and pushes.
		opts.Lease = bc
	}
	f, err := sfs.New(cfg, opts)
	if err != nil {
		return nil, &sfs.ConfigError{Problems: []string{err.Error()}}
	}
	su := &setup{cfg: cfg, tools: toolsCfg, http: httpCfg, bridge: bc, fs: f, workspaces: wsCfg}
	if bc != nil {
		// What the bridge offers decides the tool list, once: grants are
		// served only when it pins grant keys now (start the bridge
		// before the server; restart the server after adding the first
		// key).
		ctx, cancel := context.WithTimeout(context.Background(), offerTimeout)
		off, err := bc.Offer(ctx)
		cancel()
		if errs.CodeOf(err) == errs.InvalidArgument {
			// A bridge from before grants: it answered, it has none.
			err = nil
		}
		su.grants, su.offerErr = err == nil && off.Grants, err
	}
	return su, nil
}

// offerTimeout bounds the start-up question to the bridge.
const offerTimeout = 3 * time.Second

// bridgeStatus is check-config's word on the bridge.
func (su *setup) bridgeStatus() string {
	switch {
	case su.bridge == nil:
		return "none"
	case su.offerErr != nil:
		return fmt.Sprintf("configured (%s now: run_granted_command is not served)", errs.CodeOf(su.offerErr))
	case su.grants:
		return "configured (grants on)"
	}
	return "configured (grants off)"
}

// bridgeClient returns the server's bridge client when SERVERFS_BRIDGE_SOCKET
// and SERVERFS_BRIDGE_TOKEN_FILE are set, nil when neither is.
func bridgeClient(environ []string) (*wire.Client, error) {
	env := settings.EnvMap(environ)
	socket, token := env["SERVERFS_BRIDGE_SOCKET"], env["SERVERFS_BRIDGE_TOKEN_FILE"]
	switch {
	case socket == "" && token == "":
		return nil, nil
	case socket == "" || token == "":
		return nil, fmt.Errorf("SERVERFS_BRIDGE_SOCKET and SERVERFS_BRIDGE_TOKEN_FILE must be set together")
	}
	c, err := wire.NewClient(socket, token)
	if err != nil {
		return nil, fmt.Errorf("SERVERFS_BRIDGE_TOKEN_FILE: %v", err)
	}
	return c, nil
}

// loadServeConfig reads the tool layer's and the transport's variables,
// the tools' problems first.
func loadServeConfig(environ []string) (mcp.Config, transport.Config, []string) {
	toolsCfg, probs := mcp.LoadConfig(environ)
	httpCfg, httpProbs := transport.LoadConfig(environ)
	return toolsCfg, httpCfg, append(probs, httpProbs...)
}

// deps are the MCP dependencies the setup decides: the workdirs, the
// bridge and whether it offered grants.
func (su *setup) deps() *mcp.Deps {
	d := &mcp.Deps{FS: su.fs, Grants: su.grants, ParamHeaders: su.tools.ParamHeaders}
	if su.bridge != nil {
		d.Bridge = su.bridge
	}
	return d
}
