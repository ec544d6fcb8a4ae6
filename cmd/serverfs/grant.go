package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/serverfs/serverfs/bridge"
)

// grantCmd is `serverfs grant`: the operator's side of grants.
//
//	serverfs grant keygen --out FILE
//	serverfs grant sign --key FILE --workdir ALIAS [--host ID] [--ttl 10m] [--max-uses 1] [--mutates] [--network] [--unix-sockets] [--cwd DIR] [--issued-by NAME] -- ARGV...
//	serverfs grant revoke (--state-dir DIR | --policy FILE) GRANT_ID
//	serverfs grant log (--state-dir DIR | --policy FILE)
func grantCmd(args []string, stdout, stderr io.Writer) int {
	const grantUsage = "usage: serverfs grant keygen|sign|revoke|log [flags] (serverfs grant COMMAND --help for each)"
	if len(args) == 0 {
		fmt.Fprintln(stderr, grantUsage)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, grantUsage)
		return 0
	case "keygen":
		return grantKeygen(args[1:], stdout, stderr)
	case "sign":
		return grantSign(args[1:], stdout, stderr)
	case "revoke":
		return grantRevoke(args[1:], stdout, stderr)
	case "log":
		return grantLog(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "serverfs grant: unknown command %q (keygen, sign, revoke, log)\n", args[0])
	return 2
}

// grantKeygen writes a new Ed25519 signing key (PEM, mode 0600, never
// over an existing file) and FILE.pub (the policy's public key text),
// and prints the key id and public key.
func grantKeygen(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("grant keygen", flag.ContinueOnError)
	fset.SetOutput(stderr)
	out := fset.String("out", "", "the private key file to create (mode 0600)")
	if code, ok := parseFlags(fset, args, stdout); !ok {
		return code
	}
	if *out == "" || fset.NArg() > 0 {
		fmt.Fprintln(stderr, "serverfs grant keygen: --out FILE is required (and nothing else)")
		return 2
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		fmt.Fprintln(stderr, "serverfs grant keygen:", err)
		return 1
	}
	pemText, err := bridge.MarshalPrivateKey(priv)
	if err != nil {
		fmt.Fprintln(stderr, "serverfs grant keygen:", err)
		return 1
	}
	if err := writeNew(*out, pemText, 0o600); err != nil {
		fmt.Fprintln(stderr, "serverfs grant keygen: the key file:", err)
		return 1
	}
	pubText := bridge.PublicKeyText(pub)
	if err := writeNew(*out+".pub", []byte(pubText+"\n"), 0o644); err != nil {
		fmt.Fprintln(stderr, "serverfs grant keygen: the public key file:", err)
		return 1
	}
	fmt.Fprintf(stdout, "key id: %s\npublic key: %s\n", bridge.KeyID(pub), pubText)
	fmt.Fprintf(stdout, "pin it in the bridge policy: BRIDGE_GRANT_PUBLIC_KEYS=%s (render-policy), or \"grants\": {\"public_keys\": [\"%s\"]}; restart the bridge\n", pubText, pubText)
	return 0
}

// writeNew creates name with data, refusing an existing file, and
// fsyncs it.
func writeNew(name string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return describeErr(err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func describeErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// grantSign signs one argv. The full argv goes to stderr for the
// operator to read, element by element; the token alone to stdout
// (TOKEN=$(serverfs grant sign ...)).
func grantSign(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("grant sign", flag.ContinueOnError)
	fset.SetOutput(stderr)
	keyFile := fset.String("key", "", "the private key file (from grant keygen; mode 0600)")
	workdir := fset.String("workdir", "", "the workdir alias the command runs in")
	host := fset.String("host", bridge.DefaultHostID(), "the bridge's host id (its policy's grants.host_id)")
	ttl := fset.Duration("ttl", bridge.MaxGrantTTL, "how long the grant is valid (at most 10m)")
	maxUses := fset.Int("max-uses", 1, "how many times it may run")
	mutates := fset.Bool("mutates", false, "let the command write in its workdir (the policy must allow it)")
	network := fset.Bool("network", false, "let the command use TCP (the policy must allow it)")
	unixSockets := fset.Bool("unix-sockets", false, "let the command reach pathname Unix sockets (the policy must allow it)")
	cwd := fset.String("cwd", ".", "the directory it runs in, relative to the workdir root")
	issuedBy := fset.String("issued-by", os.Getenv("USER"), "who signs (for the audit ledger)")
	if code, ok := parseFlags(fset, args, stdout); !ok {
		return code
	}
	argv := fset.Args()
	if *keyFile == "" || *workdir == "" || len(argv) == 0 {
		fmt.Fprintln(stderr, "serverfs grant sign: --key and --workdir are required, and the argv after --")
		return 2
	}
	priv, err := readSigningKey(*keyFile)
	if err != nil {
		fmt.Fprintln(stderr, "serverfs grant sign:", err)
		return 1
	}
	g, tok, err := bridge.SignGrant(priv, bridge.GrantRequest{Host: *host, Workdir: *workdir, IssuedBy: *issuedBy, Argv: argv,
		TTL: *ttl, MaxUses: *maxUses, Constraints: bridge.GrantConstraints{Mutates: *mutates, Network: *network, UnixSockets: *unixSockets, Cwd: *cwd}})
	if err != nil {
		fmt.Fprintln(stderr, "serverfs grant sign:", err)
		return 1
	}
	fmt.Fprintf(stderr, "grant %s: host %s, workdir %s, cwd %s, until %s, max uses %d, mutates %v, network %v, unix sockets %v, key %s\n",
		g.GrantID, g.Host, g.Workdir, g.Constraints.Cwd, g.ExpiresAt, g.MaxUses, g.Constraints.Mutates, g.Constraints.Network, g.Constraints.UnixSockets, g.Signature.KeyID)
	fmt.Fprintf(stderr, "argv (%d elements, run exactly as given: no shell, no expansion):\n", len(argv))
	for i, a := range argv {
		fmt.Fprintf(stderr, "  [%d] %s\n", i, strconv.Quote(a))
	}
	if w := workdirProgramWarning(argv); w != "" {
		fmt.Fprintln(stderr, "warning: "+w)
	}
	fmt.Fprintln(stdout, tok)
	return 0
}

// Programs whose behaviour comes from files in the directory they run
// in (Makefile, package.json, .git/config, ...), and interpreters that
// run a script file unless given code inline.
var (
	workdirDrivenTools = map[string]bool{"make": true, "gmake": true, "cmake": true, "ninja": true, "just": true,
		"npm": true, "npx": true, "yarn": true, "pnpm": true, "bun": true, "deno": true, "cargo": true, "go": true,
		"gradle": true, "mvn": true, "rake": true, "bundle": true, "pytest": true, "tox": true, "nox": true,
		"task": true, "git": true, "docker": true, "podman": true, "composer": true, "mix": true, "dotnet": true}
	scriptInterpreters = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true,
		"python": true, "python2": true, "python3": true, "node": true, "perl": true, "ruby": true, "php": true, "lua": true, "tclsh": true}
	inlineCodeFlags = map[string]bool{"-c": true, "-e": true, "-E": true, "--eval": true, "-r": true}
)

// workdirProgramWarning says when a signature does not pin what runs:
// the grant binds the argv, so a program inside the workdir (a relative
// argv[0]), a tool configured by workdir files, or a script an
// interpreter reads from the workdir can be changed by the agent after
// signing. Best effort: an absolute program may read the workdir too.
func workdirProgramWarning(argv []string) string {
	prog := argv[0]
	if !strings.HasPrefix(prog, "/") && strings.Contains(prog, "/") {
		return fmt.Sprintf("%s is a file inside the workdir; the grant binds the argv, not the file, which the agent can edit after you sign", strconv.Quote(prog))
	}
	base := strings.TrimRight(path.Base(prog), "0123456789.")
	if base == "" {
		base = path.Base(prog)
	}
	if workdirDrivenTools[base] || workdirDrivenTools[path.Base(prog)] {
		return fmt.Sprintf("%s takes what it does from files in the workdir (build files, configuration, hooks); the grant binds the argv, not those files, which the agent can edit after you sign", strconv.Quote(prog))
	}
	if scriptInterpreters[base] || scriptInterpreters[path.Base(prog)] {
		for _, a := range argv[1:] {
			if inlineCodeFlags[a] {
				return ""
			}
			if !strings.HasPrefix(a, "-") {
				return fmt.Sprintf("%s runs the script %s, which the agent can edit after you sign (the grant binds the argv, not the file); prefer inline code (-c)", strconv.Quote(prog), strconv.Quote(a))
			}
		}
	}
	return ""
}

// readSigningKey reads a private key file that only its owner can read.
func readSigningKey(name string) (ed25519.PrivateKey, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("the key file: %v", describeErr(err))
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("the key file has mode %04o: group or others may read it; chmod 600 it", st.Mode().Perm())
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("the key file: %v", describeErr(err))
	}
	priv, err := bridge.ParsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("the key file: %v", err)
	}
	return priv, nil
}

// grantStateFlags are --state-dir and --policy (the bridge's default
// state directory is the policy's).
func grantStateFlags(fset *flag.FlagSet) func() (string, error) {
	state := fset.String("state-dir", "", "the bridge's --state-dir")
	policy := fset.String("policy", "", "the bridge's --policy (its state directory is beside it unless --state-dir)")
	return func() (string, error) {
		switch {
		case *state != "":
			return *state, nil
		case *policy != "":
			return policyDir(*policy), nil
		}
		return "", errors.New("--state-dir or --policy is required")
	}
}

func grantRevoke(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("grant revoke", flag.ContinueOnError)
	fset.SetOutput(stderr)
	dir := grantStateFlags(fset)
	if code, ok := parseFlags(fset, args, stdout); !ok {
		return code
	}
	d, err := dir()
	if err != nil || fset.NArg() != 1 {
		fmt.Fprintln(stderr, "serverfs grant revoke: --state-dir DIR (or --policy FILE) and one grant id are required")
		return 2
	}
	s, err := bridge.ExistingGrantStore(d)
	if err == nil {
		err = s.Revoke(fset.Arg(0), time.Now())
	}
	if err != nil {
		fmt.Fprintln(stderr, "serverfs grant revoke:", err)
		return 1
	}
	fmt.Fprintf(stdout, "grant %s revoked\n", fset.Arg(0))
	return 0
}

// grantLog prints the audit ledger, one JSON object a line, oldest first.
func grantLog(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("grant log", flag.ContinueOnError)
	fset.SetOutput(stderr)
	dir := grantStateFlags(fset)
	if code, ok := parseFlags(fset, args, stdout); !ok {
		return code
	}
	d, err := dir()
	if err != nil || fset.NArg() != 0 {
		fmt.Fprintln(stderr, "serverfs grant log: --state-dir DIR (or --policy FILE) is required")
		return 2
	}
	s, err := bridge.ExistingGrantStore(d)
	var entries []bridge.LedgerEntry
	if err == nil {
		entries, err = s.Ledger()
	}
	if err != nil {
		fmt.Fprintln(stderr, "serverfs grant log:", err)
		return 1
	}
	enc := json.NewEncoder(stdout)
	for _, e := range entries {
		enc.Encode(e)
	}
	return 0
}
