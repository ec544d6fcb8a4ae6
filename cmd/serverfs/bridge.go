package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/serverfs/serverfs/bridge"
)

// uidFlags collects repeatable --allow-uid values.
type uidFlags []uint32

func (u *uidFlags) String() string { return fmt.Sprint(*u) }
func (u *uidFlags) Set(v string) error {
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return fmt.Errorf("not a uid: %q", v)
	}
	*u = append(*u, uint32(n))
	return nil
}

// bridgeCmd is `serverfs bridge`: the host-side runner of named actions
// and pushes, and the owner of the writer leases, on a Unix socket.
//
//	serverfs bridge --policy FILE --socket PATH --token-file FILE [--allow-uid N]... [--state-dir DIR] [--allow-root]
//	serverfs bridge render-policy --out FILE   (from the .env fields in the environment)
func bridgeCmd(args, environ []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "render-policy" {
		return renderPolicy(args[1:], environ, stdout, stderr)
	}
	fset := flag.NewFlagSet("bridge", flag.ContinueOnError)
	fset.SetOutput(stderr)
	policyFile := fset.String("policy", "", "the private policy file (from render-policy)")
	socket := fset.String("socket", "", "the Unix socket to serve (its directory is shared with the server container)")
	tokenFile := fset.String("token-file", "", "the shared token (the server gets the same one as a secret)")
	stateDir := fset.String("state-dir", "", "a private directory for recovery-guard snapshots and the grant state and ledger (default: beside the policy)")
	allowRoot := fset.Bool("allow-root", false, "run as root anyway (test machines only; every action's sandbox helper then drops every capability)")
	var uids uidFlags
	fset.Var(&uids, "allow-uid", "a peer uid that may connect (repeatable; default: this process's uid)")
	if code, ok := parseFlags(fset, args, stdout); !ok {
		return code
	}
	if *policyFile == "" || *socket == "" || *tokenFile == "" {
		fmt.Fprintln(stderr, "serverfs bridge: --policy, --socket and --token-file are required")
		return 2
	}
	if bridgeEUID() == 0 && !*allowRoot {
		fmt.Fprintln(stderr, "serverfs bridge: "+bridgeRootRefusal)
		return 1
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	policy, err := bridge.LoadPolicy(*policyFile)
	if err != nil {
		fmt.Fprintln(stderr, "serverfs bridge:", err)
		return 1
	}
	dir := *stateDir
	if dir == "" {
		dir = policyDir(*policyFile)
	}
	// Absolute, so that the sandbox check and the output scrubbing match
	// the paths actions see.
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	polPath, tokPath, dir := abs(*policyFile), abs(*tokenFile), abs(dir)
	if msg := secretFileProblem(policy, []string{dir, filepath.Dir(abs(*socket))}, polPath, tokPath); msg != "" {
		fmt.Fprintln(stderr, "serverfs bridge: "+msg)
		return 1
	}
	tok, err := os.ReadFile(tokPath)
	if err != nil {
		fmt.Fprintln(stderr, "serverfs bridge: the token file cannot be read")
		return 1
	}
	if len(uids) == 0 {
		uids = append(uids, uint32(os.Getuid()))
	}
	srv, err := bridge.NewServer(policy, []byte(strings.TrimSpace(string(tok))), uids, dir, log)
	if err != nil {
		fmt.Fprintln(stderr, "serverfs bridge:", err)
		return 1
	}
	defer srv.Close()
	srv.HideFiles(polPath, tokPath)
	if bridgeEUID() == 0 {
		log.Warn("bridge running as root (--allow-root): actions, granted commands and pushes run as root", "event", "startup")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// Listening before the start-up line: once it is logged, the socket
	// accepts.
	ln, err := bridge.ListenSocket(*socket)
	if err != nil {
		log.Error("bridge cannot listen", "event", "startup", "error", err.Error())
		return 1
	}
	attrs := []any{"event", "startup", "version", version, "workdirs", len(policy.Workdirs)}
	if g := policy.Grants; g != nil {
		attrs = append(attrs, "grant_keys", len(g.PublicKeys), "grant_host_id", g.HostID)
	}
	log.Info("bridge serving", attrs...)
	if err := srv.Serve(ctx, ln); err != nil {
		log.Error("bridge stopped", "event", "shutdown", "error", err.Error())
		return 1
	}
	return 0
}

// bridgeEUID is the bridge's effective uid; tests replace it to play
// root and non-root.
var bridgeEUID = os.Geteuid

// bridgeRootRefusal is why the bridge does not start as root, in
// the words selfcheck uses for serve.
const bridgeRootRefusal = "running as root (uid 0): every named action, granted command and push would run as root; " +
	"run the bridge as a dedicated user (deploy/serverfs-bridge.service runs it as the operator's own user). " +
	"--allow-root starts it as root anyway, for test machines, never in production: every action's sandbox helper then drops every capability before the program starts"

// secretFileProblem says why the policy or token file is somewhere an
// action could read it (and print it, or use the token on the socket),
// or "". bridgeDirs are the bridge's state and socket directories.
func secretFileProblem(policy *bridge.Policy, bridgeDirs []string, policyFile, tokenFile string) string {
	for _, f := range []struct{ flag, name, path string }{{"--policy", "policy", policyFile}, {"--token-file", "token", tokenFile}} {
		granted, what := bridge.ActionReadPath(policy, bridgeDirs, f.path)
		if granted == "" {
			continue
		}
		return fmt.Sprintf("the %s file (%s %s) lies under %s, %s, which the action sandbox lets actions read: an action could print it. "+
			"Keep it where the sandbox grants nothing: under the bridge user's HOME, such as ~/.config/serverfs/ (no read path may contain HOME), "+
			"or in the bridge's state directory (--state-dir)", f.name, f.flag, f.path, granted, what)
	}
	return ""
}

func policyDir(file string) string {
	if i := strings.LastIndexByte(file, '/'); i > 0 {
		return file[:i]
	}
	return "."
}

// renderPolicy writes the private policy file from the environment (the
// operator's .env): host paths and actions go to the bridge only.
func renderPolicy(args, environ []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("render-policy", flag.ContinueOnError)
	fset.SetOutput(stderr)
	out := fset.String("out", "", "the policy file to write (mode 0600)")
	if code, ok := parseFlags(fset, args, stdout); !ok {
		return code
	}
	if *out == "" {
		fmt.Fprintln(stderr, "serverfs bridge render-policy: --out is required")
		return 2
	}
	p, notes, err := bridge.RenderPolicyNotes(environ)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if err := bridge.WritePolicy(*out, p); err != nil {
		fmt.Fprintln(stderr, "serverfs bridge render-policy:", err)
		return 1
	}
	n := 0
	for _, w := range p.Workdirs {
		n += len(w.Actions)
	}
	fmt.Fprintf(stdout, "policy written: %d workdirs, %d actions", len(p.Workdirs), n)
	if g := p.Grants; g != nil {
		fmt.Fprintf(stdout, ", grants: %d keys for host %s", len(g.PublicKeys), g.HostID)
	}
	fmt.Fprintln(stdout)
	if n := bridge.ActionMaskNote(environ); n != "" {
		notes = append(notes, n)
	}
	for _, n := range notes {
		fmt.Fprintln(stdout, "note:", n)
	}
	for _, w := range append(bridge.ActionWarnings(environ), bridge.PathWarnings(environ)...) {
		fmt.Fprintln(stdout, "warning: "+w)
	}
	return 0
}
