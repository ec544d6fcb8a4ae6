package bridge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/serverfs/serverfs/bridge/internal/sandbox"

	"github.com/serverfs/serverfs/bridge/wire"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

// actionTimeout is the timeout of an action run.
func actionTimeout(a Action, lim RunLimits) time.Duration {
	t := DefaultActionTimeout
	switch {
	case a.TimeoutSeconds > 0:
		t = time.Duration(a.TimeoutSeconds) * time.Second
	case lim.Timeout > 0:
		t = lim.Timeout
	}
	return min(t, MaxActionTimeout)
}

func outputLimits(lim RunLimits) (maxOut, tail int) {
	maxOut, tail = MaxOutputBytes, TailBytes
	if lim.MaxOutputBytes > 0 {
		maxOut = lim.MaxOutputBytes
	}
	if lim.TailBytes > 0 {
		tail = lim.TailBytes
	}
	return maxOut, tail
}

// RunAction runs the operator-named action name of workdir alias (whose
// bridge policy is wp) with the caller's argument arg, which must fit
// the action's Argument kind. The workdir must be read-write with
// repository operations enabled. Every integrity pin is verified right
// before the process starts; on any mismatch nothing runs
// (INTEGRITY_MISMATCH). The process runs without a shell, in the
// workdir root, with an allowlisted environment, stdin from /dev/null,
// in its own process group, which is killed with SIGKILL before
// RunAction returns.
//
// A non-zero exit is a result, not an error. On ACTION_TIMEOUT and
// OUTPUT_LIMIT_EXCEEDED (and CANCELED when ctx ends) the partial result
// is returned together with the error. Host paths in the output are
// replaced (newScrubber: every workdir root by "alias:"). The caller
// holds the workdir's writer lease around the call.
func RunAction(ctx context.Context, fsys *sfs.FS, alias string, wp WorkdirPolicy, name string, arg string, lim RunLimits) (*wire.ActionResult, error) {
	w, err := fsys.Workdir(alias)
	if err != nil {
		return nil, err
	}
	if !wp.ReadWrite {
		return nil, errs.At(errs.WorkdirReadOnly, alias, "", "is read-only; named actions need a read-write workdir")
	}
	if !wp.RepoOps {
		return nil, errs.At(errs.RepoOpsDisabled, alias, "", "has no repository operations enabled")
	}
	a, ok := wp.Actions[name]
	if !ok {
		names := make([]string, 0, len(wp.Actions))
		for n := range wp.Actions {
			names = append(names, n)
		}
		sort.Strings(names)
		msg := fmt.Sprintf("has no action %q", sfs.DisplayPath(name))
		if len(names) > 0 {
			msg += "; actions: " + strings.Join(names, ", ")
		}
		return nil, errs.At(errs.ActionNotFound, alias, "", msg)
	}
	if len(a.Argv) == 0 || a.Argv[0] == "" {
		return nil, errs.At(errs.Internal, alias, "", fmt.Sprintf("action %q has no command", name))
	}
	argv := append([]string(nil), a.Argv...)
	extra, err := actionArgument(w, a, name, arg)
	if err != nil {
		return nil, err
	}
	if extra != "" {
		argv = append(argv, extra)
	}
	res, err := runCommand(ctx, w, wp, command{
		what: fmt.Sprintf("action %q", name), argv: argv, dir: wp.Root,
		mutates: a.Mutates, network: a.Network, unixSockets: a.UnixSockets, reveal: a.Reveal, timeout: actionTimeout(a, lim), pins: a.Integrity,
	}, lim)
	if res != nil {
		res.Action = name
	}
	return res, err
}

// command is one process the bridge runs for a named action or a grant:
// everything in it comes from operator policy or an operator-signed
// grant, never from a caller.
type command struct {
	what             string // for messages: `action "lint"`, `the granted command`
	argv             []string
	dir              string   // a host directory: the workdir root or a directory below it
	dirFD            *os.File // when set, dir opened without symlinks: where the process starts
	mutates, network bool
	unixSockets      bool
	reveal           []string // deny-listed or hidden paths it may read
	timeout          time.Duration
	pins             map[string]string
}

// runCommand is the one runner of named actions and granted commands:
// no shell, the allowlisted environment with a private HOME and TMPDIR,
// stdin from /dev/null, the sandbox (sandbox.go, when there), the pins
// verified last, its own process group killed before it returns, the
// timeout and output cap, host paths scrubbed from the output tails.
func runCommand(ctx context.Context, w *sfs.Workdir, wp WorkdirPolicy, c command, lim RunLimits) (*wire.ActionResult, error) {
	alias := w.Alias()
	// Actions get a private, empty HOME and TMPDIR (removed afterwards):
	// never the operator's home with its credentials (~/.ssh, ~/.aws, ...);
	// only git push gets that.
	home, err := os.MkdirTemp("", "serverfs-action-")
	if err != nil {
		return nil, errs.At(errs.Internal, alias, "", "no temporary directory for the "+c.what).Wrap(err)
	}
	defer os.RemoveAll(home)
	tools, err := lim.hostTools(wp.Root)
	if err != nil {
		return nil, errs.At(errs.Internal, alias, "", fmt.Sprintf("%s: the bridge has no usable PATH", c.what)).Wrap(err)
	}
	env := withPrivateHome(childEnv(tools.path, nil), home)
	exe, err := lookPath(c.argv[0], tools.path, c.dir)
	if err != nil {
		return nil, errs.At(errs.Internal, alias, "", fmt.Sprintf("%s: its executable cannot be found on the bridge's PATH", c.what)).Wrap(err)
	}
	maxOut, tail := outputLimits(lim)
	timeout := c.timeout

	spec := procSpec{
		path: exe, argv: c.argv, dir: c.dir, dirFD: c.dirFD, env: env,
		timeout: timeout, maxOutput: maxOut, tail: tail,
	}
	// run starts the process in the sandbox, in namespaces of its own
	// when ns, the pins verified last.
	run := func(ns bool) (level string, controls []string, pr *procResult, err error) {
		level, controls, sb, err := sandboxAction(spec, c, wp.Root, home, lim, ns)
		if err != nil {
			return "", nil, nil, errs.At(errs.SandboxUnavailable, alias, "", fmt.Sprintf("%s: %v; nothing was run", c.what, err))
		}
		if err := verifyPins(w, alias, c.pins); err != nil {
			return "", nil, nil, err
		}
		pr, err = runProcess(ctx, sb)
		return level, controls, pr, err
	}
	ns := !namespacesDisabled.Load()
	level, controls, pr, err := run(ns)
	if ns && (err != nil && mountNamespaceRefused(err) || err == nil && sandbox.MountFailed(pr.exitCode, pr.stderr)) {
		// The kernel refused the namespaces (or a mount in them):
		// nothing ran; Landlock alone keeps .git read-only and the
		// masks unreadable instead.
		level, controls, pr, err = run(false)
	}
	if err != nil {
		var fe *errs.Error
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, errs.At(errs.Internal, alias, "", fmt.Sprintf("%s could not be started", c.what)).Wrap(err)
	}
	sc := newScrubber(wp.Root, alias, lim)
	sc.add(home, scrubActionHome)
	if err := sandbox.HelperError(pr.exitCode, pr.stderr); err != nil {
		// Its reason may name a path (a read path Landlock refused).
		return nil, errs.At(errs.SandboxUnavailable, alias, "", fmt.Sprintf("%s: the sandbox could not be applied (%s); nothing was run", c.what, sc.replace([]byte(err.Error()))))
	}
	res := &wire.ActionResult{ProcessResult: wire.ProcessResult{ExitCode: pr.exitCode, DurationMs: pr.duration.Milliseconds(), Sandbox: level, SandboxControls: controls}}
	res.Stdout, res.StdoutTruncated = sc.tail(pr.stdout, pr.stdoutTruncated, tail)
	res.Stderr, res.StderrTruncated = sc.tail(pr.stderr, pr.stderrTruncated, tail)
	last := res.Stderr
	if strings.TrimSpace(last) == "" {
		last = res.Stdout
	}
	detail := ""
	if t := shortTail(last); t != "" {
		detail = "; output ends: " + t
	}
	switch {
	case pr.canceled:
		return res, errs.At(errs.Canceled, alias, "", fmt.Sprintf("%s was cancelled and killed", c.what)).Wrap(ctx.Err())
	case pr.timedOut:
		return res, errs.At(errs.ActionTimeout, alias, "", fmt.Sprintf("%s ran longer than %s and was killed (exit %d)%s", c.what, timeout, pr.exitCode, detail))
	case pr.overflowed:
		return res, errs.At(errs.OutputLimitExceeded, alias, "", fmt.Sprintf("%s wrote more than %d bytes and was killed (exit %d)%s", c.what, maxOut, pr.exitCode, detail))
	}
	return res, nil
}

// actionArgument validates arg against the action's Argument kind and
// returns the argv element to append ("" for none).
func actionArgument(w *sfs.Workdir, a Action, name, arg string) (string, error) {
	alias := w.Alias()
	kind := a.Argument
	if kind == "" {
		kind = ArgumentNone
	}
	switch kind {
	case ArgumentNone:
		if arg != "" {
			return "", errs.At(errs.InvalidArgument, alias, "", fmt.Sprintf("action %q takes no path", name))
		}
		return "", nil
	case ArgumentPath, ArgumentBasename:
	default:
		return "", errs.At(errs.Internal, alias, "", fmt.Sprintf("action %q has an unsupported argument kind", name))
	}
	if arg == "" {
		return "", errs.At(errs.InvalidArgument, alias, "", fmt.Sprintf("action %q needs a workdir-relative path", name))
	}
	clean, err := w.CleanPath(arg)
	if err != nil {
		return "", err
	}
	if clean == "" {
		return "", errs.At(errs.InvalidArgument, alias, "", fmt.Sprintf("action %q needs a path below the workdir root", name))
	}
	if why := badArgumentChars(clean, a.ArgumentAllow); why != "" {
		// Not shown: it is what a program would have misread.
		return "", errs.At(errs.InvalidArgument, alias, "", fmt.Sprintf("action %q: the path %s", name, why))
	}
	// It exists, and nothing on the way to it (nor it) is a symlink.
	fi, err := w.Stat(clean)
	if err != nil {
		return "", err
	}
	switch {
	case fi.Type == sfs.TypeSymlink:
		return "", errs.At(errs.SymlinkNotAllowed, alias, clean, "is a symlink; symlinks are never followed")
	case fi.Type == sfs.TypeDirectory:
		if a.ArgumentAllow == nil || !a.ArgumentAllow.Directories {
			return "", errs.At(errs.NotAFile, alias, clean, fmt.Sprintf("is a directory; action %q takes a regular file", name))
		}
	case fi.Type != sfs.TypeFile:
		return "", errs.At(errs.UnsupportedFileType, alias, clean, fmt.Sprintf("is not a regular file; action %q takes a regular file", name))
	}
	if kind == ArgumentPath {
		return clean, nil
	}
	// basename: only the file's name is passed on.
	return path.Base(clean), nil
}

// badArgumentChars says why a (clean) path argument could be read as
// something else than a file name, or "": every character must be in
// ArgumentChars or the operator's allow.Chars, and the path and its final
// component must not start with '-', '@' or '+' (options, response files
// such as gcc's @file, +cmd forms). Without an explicit widening that
// also refuses '=' (make's and env's VAR=value), ':' (tar's and scp's
// host:path), whitespace, and shell and glob characters.
func badArgumentChars(clean string, allow *ArgumentAllow) string {
	extra := ""
	if allow != nil {
		extra = allow.Chars
	}
	for _, r := range clean {
		if r < utf8.RuneSelf && strings.IndexByte(ArgumentChars, byte(r)) >= 0 {
			continue
		}
		if r != utf8.RuneError && strings.ContainsRune(extra, r) {
			continue
		}
		return "may hold only letters, digits and . _ / - (a program could read other characters as an option, a NAME=value assignment or a remote host name)"
	}
	base := path.Base(clean)
	if strings.ContainsAny(clean[:1], "-@+") || strings.ContainsAny(base[:1], "-@+") {
		return "and its file name must not start with '-', '@' or '+'"
	}
	return ""
}

// verifyPins checks every integrity pin of an action: a regular file
// beneath the root, reached without following any symlink, at most
// MaxPinnedFileBytes, whose SHA-256 is the pinned one.
func verifyPins(w *sfs.Workdir, alias string, pins map[string]string) error {
	rels := make([]string, 0, len(pins))
	for rel := range pins {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		if err := verifyPin(w, rel, pins[rel]); err != nil {
			why := err.Error()
			var fe *errs.Error
			if errors.As(err, &fe) {
				// Its Msg never holds a host path; its Error() repeats
				// the location.
				why = string(fe.Code)
				if fe.Msg != "" {
					why += ": " + fe.Msg
				}
			}
			return errs.At(errs.IntegrityMismatch, alias, rel, "fails its integrity pin ("+why+"); nothing was run").Wrap(err)
		}
	}
	return nil
}

type pinError string

func (e pinError) Error() string { return string(e) }

func verifyPin(w *sfs.Workdir, rel, want string) error {
	want = strings.ToLower(strings.TrimSpace(want))
	if b, err := hex.DecodeString(want); err != nil || len(b) != sha256.Size {
		return pinError("the pinned digest is not a SHA-256 hex string")
	}
	f, err := w.Control().Open(rel)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Fstat()
	if err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return pinError("not a regular file")
	}
	if st.Size > MaxPinnedFileBytes {
		return pinError(fmt.Sprintf("larger than %d bytes", MaxPinnedFileBytes))
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, MaxPinnedFileBytes+1))
	if err != nil {
		return err
	}
	if n > MaxPinnedFileBytes {
		return pinError(fmt.Sprintf("larger than %d bytes", MaxPinnedFileBytes))
	}
	if !bytes.Equal([]byte(hex.EncodeToString(h.Sum(nil))), []byte(want)) {
		return pinError("the SHA-256 differs")
	}
	return nil
}
