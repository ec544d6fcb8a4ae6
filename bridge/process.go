package bridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Running one process: its environment (childEnv), its executable
// (lookPath), bounded output with a kept tail, and its exit.

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
