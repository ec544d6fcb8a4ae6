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
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/serverfs/serverfs/bridge/wire"
	sfs "github.com/serverfs/serverfs/fs"
	"github.com/serverfs/serverfs/internal/errs"
	"golang.org/x/sys/unix"
)

// DefaultPath is the PATH the bridge cleans and uses when it has none.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin"

// childEnvNames are the only variables of the bridge's own environment a
// child process sees (besides PATH, which always gets a value). Provider
// keys, tokens and every other variable are dropped.
var childEnvNames = []string{"HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "LOGNAME"}

// childEnv is the allowlisted environment of every process the bridge
// starts, with pathVar (hostTools.path) as its PATH, plus extra
// (additional allowlisted names for git, then fixed NAME=value settings).
func childEnv(pathVar string, extraNames []string, fixed ...string) []string {
	env := []string{"PATH=" + pathVar}
	for _, names := range [][]string{childEnvNames, extraNames} {
		for _, k := range names {
			if v, ok := os.LookupEnv(k); ok && v != "" {
				env = append(env, k+"="+v)
			}
		}
	}
	return append(env, fixed...)
}

// withPrivateHome replaces HOME and TMPDIR in env by dir.
func withPrivateHome(env []string, dir string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "TMPDIR=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "HOME="+dir, "TMPDIR="+dir)
}

// lookPath finds file like exec.LookPath, but in the given (allowlisted)
// PATH rather than the bridge's, and never in a relative PATH entry. A
// name with a slash is taken as is: absolute, or relative to dir.
func lookPath(file, pathVar, dir string) (string, error) {
	if file == "" {
		return "", errors.New("empty executable name")
	}
	if strings.Contains(file, "/") {
		p := file
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return p, checkExecutable(p)
	}
	for _, d := range filepath.SplitList(pathVar) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, file)
		if checkExecutable(p) == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func checkExecutable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return errNotExecutable
	}
	return nil
}

var errNotExecutable = errors.New("not an executable regular file")

// procSpec is one process to run. Everything in it comes from operator
// policy or from this package, never from a caller.
type procSpec struct {
	path string // resolved executable
	argv []string
	dir  string
	// dirFD, when set, is an open descriptor of dir: the process starts
	// in that directory object (chdir through its /proc/self/fd magic
	// link, which the kernel follows to the open file itself, not by
	// name), so a component of dir swapped for a symlink after it was
	// opened changes nothing.
	dirFD     *os.File
	env       []string
	timeout   time.Duration
	maxOutput int // stdout+stderr together
	tail      int // bytes kept of each stream
	// namespaces starts the process (the sandbox helper) in user, mount
	// and PID namespaces of its own, its uid and gid mapped to
	// themselves, with CAP_SYS_ADMIN and CAP_SETPCAP there
	// (sandbox_git.go).
	namespaces bool
}

// procResult is what runProcess observed.
type procResult struct {
	pgid            int
	exitCode        int
	stdout, stderr  []byte
	stdoutTruncated bool
	stderrTruncated bool
	duration        time.Duration
	timedOut        bool // killed: ran past the timeout
	overflowed      bool // killed: wrote more than maxOutput
	canceled        bool // killed: ctx ended
}

// tailBuffer keeps the last n bytes written to it.
type tailBuffer struct {
	n     int
	buf   []byte
	total int64
}

func (t *tailBuffer) add(p []byte) {
	t.total += int64(len(p))
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.n+4096 {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.n:]...)
	}
}

// bytes returns at most keep bytes of the end, and whether anything was
// dropped.
func (t *tailBuffer) bytes(keep int) ([]byte, bool) {
	if len(t.buf) > keep {
		return t.buf[len(t.buf)-keep:], true
	}
	return t.buf, t.total > int64(len(t.buf))
}

// runProcess starts spec in its own process group and waits for it,
// bounded by spec.timeout, spec.maxOutput and ctx. Whatever happens, the
// whole process group is sent SIGKILL before runProcess returns, while
// the group leader is still unreaped (so the group id cannot have been
// reused): no child or grandchild that stayed in the group outlives the
// call. The error is only about starting the process.
func runProcess(ctx context.Context, spec procSpec) (*procResult, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd := processCmd(spec, outW, errW)
	if err := ctx.Err(); err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return &procResult{canceled: true, exitCode: -1}, nil
	}
	start := time.Now()
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, err
	}
	pid := cmd.Process.Pid
	res := &procResult{pgid: pid}
	out := readOutput(outR, errR, spec.tail, spec.maxOutput)
	exited := watchExit(pid)

	timer := time.NewTimer(spec.timeout)
	defer timer.Stop()
	killGroup := func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }
	select {
	case <-exited:
	case <-timer.C:
		res.timedOut = true
	case <-out.overflow:
		res.overflowed = true
	case <-ctx.Done():
		res.canceled = true
	}
	killGroup()
	<-exited
	// The leader is a zombie now; its group id is still ours. Kill what
	// it left behind in the group, then reap it.
	killGroup()
	werr := cmd.Wait()
	res.duration = time.Since(start)
	if !res.timedOut && !res.canceled {
		select {
		case <-out.overflow:
			res.overflowed = true
		default:
		}
	}
	out.finish()

	res.exitCode = exitCodeOf(cmd.ProcessState)
	_ = werr // a non-zero exit is in ProcessState
	res.stdout, res.stdoutTruncated = out.stdout.bytes(out.tailN)
	res.stderr, res.stderrTruncated = out.stderr.bytes(out.tailN)
	return res, nil
}

// processCmd is the command spec describes, in its own process group (in
// new user, mount and PID namespaces when spec.namespaces), writing to outW and
// errW.
func processCmd(spec procSpec, outW, errW *os.File) *exec.Cmd {
	dir := spec.dir
	if spec.dirFD != nil {
		// The forked child chdirs before it closes or moves any
		// descriptor and before exec: the number is the parent's.
		dir = fmt.Sprintf("/proc/self/fd/%d", spec.dirFD.Fd())
	}
	cmd := &exec.Cmd{
		Path:        spec.path,
		Args:        spec.argv,
		Dir:         dir,
		Env:         spec.env,
		Stdin:       nil, // /dev/null
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if spec.namespaces {
		a := cmd.SysProcAttr
		a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}}
		a.GidMappingsEnableSetgroups = false
		a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
	}
	return cmd
}

// processOutput reads a process's two pipes: it keeps their tails,
// counts the total and closes overflow once it passes the bound.
type processOutput struct {
	outR, errR     *os.File
	tailN          int
	stdout, stderr *tailBuffer
	total          atomic.Int64
	maxOutput      int64
	overflow       chan struct{}
	overflowOnce   sync.Once
	readers        sync.WaitGroup
}

// readOutput starts reading outR and errR.
func readOutput(outR, errR *os.File, tail, maxOutput int) *processOutput {
	tailN := tail + 4096 // slack for host-path replacement at the cut
	o := &processOutput{
		outR: outR, errR: errR, tailN: tailN,
		stdout: &tailBuffer{n: tailN}, stderr: &tailBuffer{n: tailN},
		maxOutput: int64(maxOutput), overflow: make(chan struct{}),
	}
	o.readers.Add(2)
	go o.read(outR, o.stdout)
	go o.read(errR, o.stderr)
	return o
}

func (o *processOutput) read(r *os.File, t *tailBuffer) {
	defer o.readers.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			t.add(buf[:n])
			if o.total.Add(int64(n)) > o.maxOutput {
				o.overflowOnce.Do(func() { close(o.overflow) })
			}
		}
		if err != nil {
			return
		}
	}
}

// finish waits for the readers and closes the pipes. Every process of
// the group is dead by then, so the pipes reach EOF unless a process that
// left the group still holds them: the wait is bounded.
func (o *processOutput) finish() {
	done := make(chan struct{})
	go func() { o.readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		o.outR.Close()
		o.errR.Close()
		<-done
	}
	o.outR.Close()
	o.errR.Close()
}

// watchExit learns that the leader pid exited without reaping it (so its
// process group id stays reserved): the channel closes then.
func watchExit(pid int) <-chan struct{} {
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				return
			}
		}
	}()
	return exited
}

// exitCodeOf is the exit status, or 128+signal for a killed process (as
// shells report it).
func exitCodeOf(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// scrubber replaces host paths in outputs: every workdir root (as
// configured and as resolved) by "alias:", the paths the bridge made or
// uses itself (an action's private HOME and TMPDIR, its state and socket
// directories, its policy and token files, the workspaces) by a
// placeholder, and then the user's home directory by "~".
type scrubber struct {
	olds []scrubPath // longest first
	home string
}

// scrubPath is one host path and what replaces it.
type scrubPath struct{ old, new string }

// Placeholders for the bridge's own paths in outputs.
const (
	scrubActionHome = "$HOME"
	scrubBridgePath = "<bridge>"
)

// newScrubber is the scrubber of a process run under lim in root, the
// root of workdir alias: lim.Replace first (every workdir, and a
// workspace's own name for its tree), then root as "alias:" and the
// bridge's directories as "<bridge>".
func newScrubber(root, alias string, lim RunLimits) *scrubber {
	s := &scrubber{}
	for _, r := range lim.Replace {
		s.add(r.Path, r.Name)
	}
	s.add(root, alias+":")
	for _, p := range lim.BridgePaths {
		s.add(p, scrubBridgePath)
	}
	if h := filepath.Clean(os.Getenv("HOME")); filepath.IsAbs(h) && h != "/" {
		s.home = h
	}
	return s
}

// add replaces p (as given and with its symlinks resolved) by repl.
func (s *scrubber) add(p, repl string) {
	if p == "" {
		return
	}
	clean := filepath.Clean(p)
	cands := []string{clean}
	if real, err := filepath.EvalSymlinks(clean); err == nil {
		cands = append(cands, real)
	}
next:
	for _, c := range cands {
		if c == "/" || c == "." || !filepath.IsAbs(c) {
			continue
		}
		for _, o := range s.olds {
			if o.old == c {
				continue next
			}
		}
		s.olds = append(s.olds, scrubPath{c, repl})
	}
	sort.SliceStable(s.olds, func(i, j int) bool { return len(s.olds[i].old) > len(s.olds[j].old) })
}

// replace scrubs b; more are further host strings (e.g. a remote's
// path) with their replacements, applied first.
func (s *scrubber) replace(b []byte, more ...[2]string) string {
	out := string(b)
	for _, m := range more {
		if m[0] != "" {
			out = strings.ReplaceAll(out, m[0], m[1])
		}
	}
	for _, o := range s.olds {
		out = strings.ReplaceAll(out, o.old, o.new)
	}
	if s.home != "" {
		out = strings.ReplaceAll(out, s.home+"/", "~/")
		out = strings.ReplaceAll(out, s.home, "~")
	}
	return out
}

// tail scrubs raw (the end of a stream, cut at an arbitrary byte when
// truncated) and returns at most keep bytes of its end as valid UTF-8.
// A host path cut at the start of raw is removed rather than shown in
// part.
func (s *scrubber) tail(raw []byte, truncated bool, keep int) (string, bool) {
	out := s.replace(raw)
	if len(out) > keep {
		out, truncated = out[len(out)-keep:], true
	}
	if truncated {
		out = s.dropCutPath(out)
		// Drop a rune cut in half at the start.
		for i := 0; i < utf8.UTFMax && i < len(out); i++ {
			if utf8.RuneStart(out[i]) {
				out = out[i:]
				break
			}
		}
	}
	return strings.ToValidUTF8(out, "\uFFFD"), truncated
}

// dropCutPath removes a proper suffix of a host path at the start of s.
func (s *scrubber) dropCutPath(out string) string {
	for _, p := range s.olds {
		o := p.old
		for k := len(o) - 1; k > 0; k-- {
			if strings.HasPrefix(out, o[len(o)-k:]) {
				return out[k:]
			}
		}
	}
	return out
}

// shortTail is the last line or so of out for an error message.
func shortTail(out string) string {
	out = strings.TrimSpace(out)
	const max = 300
	if len(out) > max {
		out = out[len(out)-max:]
		for i := 0; i < utf8.UTFMax && i < len(out); i++ {
			if utf8.RuneStart(out[i]) {
				out = out[i:]
				break
			}
		}
		out = "…" + out
	}
	return strings.ToValidUTF8(out, "\uFFFD")
}

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
	if ns && (err != nil && mountNamespaceRefused(err) || err == nil && helperMountFailed(pr)) {
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
	if err := sandboxHelperError(pr); err != nil {
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
