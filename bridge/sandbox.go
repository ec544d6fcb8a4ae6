package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	sfs "github.com/serverfs/serverfs/fs"
)

// Sandbox levels, as every action result reports them.
const (
	// SandboxEnforced: every control that applies to the process holds
	// on this kernel (ProcessResult.SandboxControls names them):
	// Landlock ABI 6 or later (filesystem rules, TCP bind/connect rules,
	// scoping: no signal to, no abstract Unix socket of, a process
	// outside the sandbox), no pathname Unix socket, no capability and,
	// for a mutating process, a read-only .git.
	SandboxEnforced = "enforced"
	// SandboxPartial: Landlock enforces the filesystem rules, but not
	// every other control (TCP rules need ABI 4, scoping ABI 6; the
	// Unix-socket control needs ABI 9 or the seccomp filter, which this
	// package has for amd64 and arm64).
	SandboxPartial = "partial"
	// SandboxUnavailable: the kernel has no Landlock (or it is disabled);
	// the action runs unsandboxed unless the policy requires the sandbox.
	SandboxUnavailable = "unavailable"
)

// Sandbox controls, as ProcessResult.SandboxControls names those in
// force.
const (
	// ControlLandlockFS: Landlock's filesystem rules (read paths, the
	// writable set).
	ControlLandlockFS = "landlock-fs"
	// ControlLandlockTCP: no TCP bind or connect (actions without
	// network).
	ControlLandlockTCP = "landlock-tcp"
	// ControlLandlockScope: no signal to, no abstract Unix socket of, a
	// process outside the sandbox.
	ControlLandlockScope = "landlock-scope"
	// ControlUnixLandlock and ControlUnixSeccomp: no pathname Unix socket
	// (actions without unix_sockets), by Landlock's resolve_unix right
	// (ABI 9) or by a seccomp filter that refuses socket(AF_UNIX).
	ControlUnixLandlock = "unix-sockets:landlock"
	ControlUnixSeccomp  = "unix-sockets:seccomp"
	// ControlGitMount and ControlGitLandlock: a mutating process cannot
	// change the work tree's .git, bound read-only over itself in a
	// private mount namespace, or left out of Landlock's writable set
	// (which then holds each top-level entry but not the root itself).
	ControlGitMount    = "git-readonly:mount"
	ControlGitLandlock = "git-readonly:landlock"
	// ControlNoCapabilities: the process holds no capability (none
	// effective, permitted, inheritable or ambient, an empty bounding
	// set where the helper may empty it) and runs with no_new_privs.
	ControlNoCapabilities = "no-capabilities"
	// ControlMaskMount and ControlMaskLandlock: the work tree's
	// deny-listed and hidden paths (those the server refuses, less the
	// action's reveal list) are unreadable, mounted over in the private
	// mount namespace or left out of Landlock's rules. A run whose paths
	// cannot be masked is refused.
	ControlMaskMount    = "masks:mount"
	ControlMaskLandlock = "masks:landlock"
	// ControlPIDNamespace: the action is PID 1 of a PID namespace of its
	// own with a fresh /proc: it sees only its own processes, and every
	// process it started dies with it.
	ControlPIDNamespace = "pid-namespace"
	// ControlProcessLimit: its processes (threads included) are bounded
	// (RLIMIT_NPROC in its user namespace; not for a root bridge, which
	// the kernel exempts); ControlMemoryLimit: each process's data
	// (RLIMIT_DATA).
	ControlProcessLimit = "process-limit"
	ControlMemoryLimit  = "memory-limit"
)

// sandboxFullABI is the Landlock ABI from which the Landlock controls
// hold; sandboxUnixABI the one from which Landlock refuses pathname
// Unix sockets itself; sandboxMaxABI the highest whose rights the
// helper asks for (ABI 10's UDP rules would restrict more than the
// policy says).
const (
	sandboxFullABI = 6
	sandboxUnixABI = 9
	sandboxMaxABI  = 9
)

// sandboxHelperArg is the hidden first argument with which the bridge
// binary re-executes itself (/proc/self/exe) to apply the sandbox in a
// fresh process and then exec the action's program. It is handled in
// this package's init, so that every binary linking the bridge
// (serverfs, and the test binaries) can serve as the helper.
const sandboxHelperArg = "__serverfs-sandbox-exec"

// sandboxHelperFailed is the exit status of a helper that could not
// apply the sandbox; it then writes sandboxHelperMarker (or, when only
// the mount namespace failed, sandboxMountMarker) and the reason to
// stderr and runs nothing.
const (
	sandboxHelperFailed = 125
	sandboxHelperMarker = "serverfs-sandbox: "
	sandboxMountMarker  = "serverfs-sandbox-mount: "
)

// DefaultSandboxReadPaths are the system paths every sandboxed action may
// read and execute (those missing on the host are skipped): enough for
// go, node, python and uv installed system-wide. Toolchains elsewhere (a
// user's ~/.nvm, ~/.local/share/uv, ~/go/pkg/mod) must be named in the
// policy's sandbox.read_paths.
var DefaultSandboxReadPaths = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
	"/proc", "/sys/devices/system/cpu", "/sys/fs/cgroup",
}

// sandboxDevices are the device files an action may read and write.
var sandboxDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// SandboxPolicy is the policy's sandbox section.
type SandboxPolicy struct {
	// Required refuses to run any action unless the sandbox is
	// "enforced" (SANDBOX_UNAVAILABLE; nothing runs).
	Required bool `json:"required,omitempty"`
	// ReadPaths are more host paths (absolute, clean) actions may read
	// and execute, besides DefaultSandboxReadPaths: toolchains and
	// caches. A path that contains a workdir root, the operator's HOME or
	// a bridge directory is left out when an action runs.
	ReadPaths []string `json:"read_paths,omitempty"`
	// AllowHidden and Deny are the server's SERVERFS_ALLOW_HIDDEN and
	// SERVERFS_EXTRA_DENY_GLOBS: actions cannot read what the server
	// refuses (the built-in deny list, Deny and, unless AllowHidden,
	// hidden paths) unless an action reveals it.
	AllowHidden bool     `json:"allow_hidden,omitempty"`
	Deny        []string `json:"deny,omitempty"`
	// MaxProcesses bounds an action's processes and threads, MaxMemoryMB
	// the data of each of its processes (0: the defaults).
	MaxProcesses int `json:"max_processes,omitempty"`
	MaxMemoryMB  int `json:"max_memory_mb,omitempty"`
}

var (
	abiOnce sync.Once
	abiVer  int
)

// LandlockABI is the kernel's Landlock ABI version (landlock_create_ruleset
// with LANDLOCK_CREATE_RULESET_VERSION), 0 when Landlock is unavailable.
func LandlockABI() int {
	abiOnce.Do(func() {
		v, err := llsyscall.LandlockGetABIVersion()
		if err == nil && v > 0 {
			abiVer = v
		}
	})
	return abiVer
}

// SandboxLevel is the level an action gets on this kernel (every
// control applies to an action without network and unix_sockets; a
// mutating one adds a git-readonly control, which holds wherever
// Landlock does).
func SandboxLevel() string {
	level, _ := sandboxControls(kernelABI(), sandboxOpts{}, "")
	return level
}

// kernelABI is LandlockABI; tests replace it to play older kernels.
var kernelABI = LandlockABI

// sandboxOpts are what an action or a grant allows its process
// besides writes (whose control is the git argument of
// sandboxControls).
type sandboxOpts struct {
	network, unixSockets bool
}

// Ways the helper keeps a mutating process from changing .git, and
// from reaching pathname Unix sockets.
const (
	gitByMount     = "mount"
	gitByLandlock  = "landlock"
	unixByLandlock = "landlock"
	unixBySeccomp  = "seccomp"
)

// sandboxControls is the level and the controls in force for a process
// with opts on a kernel with Landlock ABI abi, its .git kept read-only
// by git ("" when there is none to keep).
func sandboxControls(abi int, opts sandboxOpts, git string) (string, []string) {
	if abi < 1 {
		return SandboxUnavailable, nil
	}
	full := true
	controls := []string{ControlLandlockFS}
	if !opts.network {
		if abi >= 4 {
			controls = append(controls, ControlLandlockTCP)
		} else {
			full = false
		}
	}
	if abi >= sandboxFullABI {
		controls = append(controls, ControlLandlockScope)
	} else {
		full = false
	}
	if !opts.unixSockets {
		if u := unixControl(abi); u != "" {
			controls = append(controls, u)
		} else {
			full = false
		}
	}
	switch git {
	case gitByMount:
		controls = append(controls, ControlGitMount)
	case gitByLandlock:
		controls = append(controls, ControlGitLandlock)
	}
	controls = append(controls, ControlNoCapabilities)
	if !full {
		return SandboxPartial, controls
	}
	return SandboxEnforced, controls
}

// unixControl is how pathname Unix sockets are refused on a kernel
// with Landlock ABI abi: Landlock's own right from ABI 9 (decided here
// from the ABI, since a best-effort ruleset would drop it silently),
// else the seccomp filter where this package has one for the
// architecture, else "" (not refused).
func unixControl(abi int) string {
	switch {
	case abi >= sandboxUnixABI:
		return ControlUnixLandlock
	case seccompArches != nil:
		return ControlUnixSeccomp
	}
	return ""
}

// sandboxSpec is what the helper applies before it execs the program.
type sandboxSpec struct {
	Path string   `json:"path"`
	Argv []string `json:"argv"`
	// ABI is the Landlock ABI whose rights the helper handles (0: no
	// Landlock; the namespaces, masks and limits still apply).
	ABI     int      `json:"abi"`
	RO      []string `json:"ro,omitempty"` // read + execute
	RW      []string `json:"rw,omitempty"` // everything
	Devices []string `json:"dev,omitempty"`
	Network bool     `json:"net,omitempty"` // TCP not restricted
	// Unix is "landlock" or "seccomp": how pathname Unix sockets are
	// refused; "": they are not.
	Unix string `json:"unix,omitempty"`
	// NS: the helper runs in user, mount and PID namespaces of its own
	// (a fresh /proc, the masks and .git mounted there); without it
	// Landlock grants Root entry by entry around what it must not reach.
	NS bool `json:"ns,omitempty"`
	// Root is the work tree, Cwd the directory the process starts in,
	// relative to Root (in a mount namespace the helper enters it again
	// there). Write: Root is writable.
	Root  string `json:"root"`
	Cwd   string `json:"cwd,omitempty"`
	Write bool   `json:"write,omitempty"`
	// Git is gitByMount or gitByLandlock: how Root's .git is kept
	// read-only ("": Root is not written, or has no .git to keep).
	Git string `json:"git,omitempty"`
	// Masks says which paths of Root the process must not read.
	Masks maskSpec `json:"masks"`
	// Procs bounds the processes (threads included) of the action
	// (RLIMIT_NPROC, counted in its own user namespace: NS only);
	// DataBytes each process's data (RLIMIT_DATA).
	Procs     uint64 `json:"procs,omitempty"`
	DataBytes uint64 `json:"data,omitempty"`
}

// sandboxRules is the spec of one action: the read paths, the private
// home, the devices (the helper adds the work tree itself, read-write
// only when the action mutates). protect are host paths no read path may
// contain (other workdirs, the bridge's directories, the operator's
// HOME).
func sandboxRules(sp *SandboxPolicy, root string, mutates, network bool, home string, protect []string) sandboxSpec {
	s := sandboxSpec{Network: network, Devices: sandboxDevices, Root: root, Write: mutates}
	s.RO = sandboxReadPaths(sp, root, mutates, protect)
	s.RW = append(s.RW, home)
	return s
}

// sandboxReadPaths are the read paths an action in root gets:
// DefaultSandboxReadPaths and the policy's, less those that contain one
// of protect (or, for an action that mutates, its root, which it gets
// read-write instead).
func sandboxReadPaths(sp *SandboxPolicy, root string, mutates bool, protect []string) []string {
	var reads, kept []string
	reads = append(reads, DefaultSandboxReadPaths...)
	if sp != nil {
		reads = append(reads, sp.ReadPaths...)
	}
	for _, r := range reads {
		if r == "" || !filepath.IsAbs(r) || filepath.Clean(r) == "/" {
			continue
		}
		if coversAny(r, protect) || coversAny(r, []string{root}) && mutates {
			continue
		}
		kept = append(kept, filepath.Clean(r))
	}
	return kept
}

// coversAny says whether dir is one of paths or an ancestor of one (both
// as given and with symlinks resolved).
func coversAny(dir string, paths []string) bool {
	cands := []string{filepath.Clean(dir)}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		cands = append(cands, r)
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		ps := []string{filepath.Clean(p)}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			ps = append(ps, r)
		}
		for _, c := range cands {
			for _, q := range ps {
				if q == c || strings.HasPrefix(q, strings.TrimSuffix(c, "/")+"/") {
					return true
				}
			}
		}
	}
	return false
}

// sandboxedSpec wraps spec so that the helper applies s first: the
// process is this binary again (its pid, process group and pipes are the
// program's after the exec). An NS spec starts the helper in user, mount
// and PID namespaces of its own.
func sandboxedSpec(spec procSpec, s sandboxSpec) (procSpec, error) {
	s.Path, s.Argv = spec.path, spec.argv
	b, err := json.Marshal(s)
	if err != nil {
		return spec, err
	}
	spec.path = "/proc/self/exe"
	spec.argv = []string{"serverfs-sandbox", sandboxHelperArg, string(b)}
	spec.namespaces = s.NS
	return spec, nil
}

// sandboxHelperError recognises a helper that refused to run the
// program (exit sandboxHelperFailed, stderr starting with a marker).
func sandboxHelperError(pr *procResult) error {
	if pr.exitCode != sandboxHelperFailed {
		return nil
	}
	for _, marker := range []string{sandboxHelperMarker, sandboxMountMarker} {
		if msg, ok := strings.CutPrefix(string(pr.stderr), marker); ok {
			msg, _, _ = strings.Cut(msg, "\n")
			return errors.New(msg)
		}
	}
	return nil
}

// helperMountFailed says whether the helper failed in its namespaces,
// before anything else: nothing ran.
func helperMountFailed(pr *procResult) bool {
	return pr.exitCode == sandboxHelperFailed && strings.HasPrefix(string(pr.stderr), sandboxMountMarker)
}

func init() {
	if len(os.Args) > 2 && os.Args[1] == sandboxHelperArg {
		sandboxHelperMain(os.Args[2])
	}
}

// sandboxHelperMain applies the sandbox described by arg to this
// (single, locked) thread and execs the program; it never returns. The
// order matters: the masks are found before anything is mounted, mounts
// need the namespace's capabilities, which are dropped next; Landlock
// and seccomp come last (both need no_new_privs, and the seccomp filter
// would refuse the helper's own work).
func sandboxHelperMain(arg string) {
	// The credentials, the Landlock domain and the seccomp filter are
	// the calling thread's; execve keeps them. This thread is never
	// unlocked: it is the one that execs.
	runtime.LockOSThread()
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "%s%v\n", sandboxHelperMarker, err)
		os.Exit(sandboxHelperFailed)
	}
	var s sandboxSpec
	if err := json.Unmarshal([]byte(arg), &s); err != nil || s.Path == "" || len(s.Argv) == 0 || s.Root == "" {
		fail(errors.New("malformed sandbox spec"))
	}
	masks, err := findMasks(s.Root, s.Masks)
	if err != nil {
		fail(fmt.Errorf("the deny-listed and hidden paths cannot be masked: %w", err))
	}
	if s.NS {
		if err := namespaceView(s, masks); err != nil {
			fmt.Fprintf(os.Stderr, "%s%v\n", sandboxMountMarker, err)
			os.Exit(sandboxHelperFailed)
		}
	} else if len(masks) > 0 && s.ABI < 1 {
		fail(errors.New("the deny-listed and hidden paths cannot be masked: this kernel grants neither user namespaces nor Landlock"))
	}
	fd, flags := -1, uint32(0)
	if s.ABI >= 1 {
		if fd, flags, err = landlockRuleset(s, masks); err != nil {
			fail(err)
		}
	}
	if err := dropCapabilities(); err != nil {
		fail(err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fail(fmt.Errorf("no_new_privs: %w", err))
	}
	if fd >= 0 {
		if err := llsyscall.LandlockRestrictSelf(fd, flags); err != nil {
			fail(fmt.Errorf("landlock_restrict_self: %w", err))
		}
		unix.Close(fd)
	}
	if s.Unix == unixBySeccomp {
		if err := refuseUnixSockets(); err != nil {
			fail(err)
		}
	}
	// Last: a limit below what the helper's runtime holds would stop it
	// from making a thread.
	if err := setLimits(s); err != nil {
		fail(err)
	}
	err = syscall.Exec(s.Path, s.Argv, os.Environ())
	fail(fmt.Errorf("exec: %w", err))
}

// landlockRuleset is the ruleset of s: the read paths, the writable
// ones, the devices and the work tree, granted whole (its masks are
// mounts, or there are none) or, without the namespace or when a tree
// without .git keeps its root read-only, entry by entry around what the
// process must not reach (treeRules).
func landlockRuleset(s sandboxSpec, masks []maskedPath) (int, uint32, error) {
	cfg := landlockConfig(s.ABI, s.Network, s.Unix == unixByLandlock)
	var rules []landlock.Rule
	for _, p := range s.RO {
		rules = append(rules, pathRule(p, false))
	}
	for _, p := range s.RW {
		rules = append(rules, pathRule(p, true))
	}
	rules = append(rules, landlock.RWFiles(s.Devices...).IgnoreIfMissing())
	byEntry := s.Git == gitByLandlock || !s.NS && len(masks) > 0
	if !byEntry {
		rules = append(rules, pathRule(s.Root, s.Write))
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return -1, 0, fmt.Errorf("landlock ruleset: %w", err)
	}
	if fd < 0 {
		return -1, 0, errors.New("landlock is not available")
	}
	if byEntry {
		if s.NS {
			masks = nil // mounted over already
		}
		if err := treeRules(fd, cfg.HandledAccessFS, s.Root, masks, s.Write, s.Git != ""); err != nil {
			unix.Close(fd)
			return -1, 0, err
		}
	}
	return fd, flags, nil
}

// landlockConfig is the ruleset the helper builds: every right of ABI
// abi (at most sandboxMaxABI), exactly (no best effort: the bridge
// decided the level from this ABI), without the TCP rights when network
// is allowed and without resolve_unix unless unixByLandlock.
func landlockConfig(abi int, network, unixByLandlock bool) landlock.Config {
	var cfg landlock.Config
	switch {
	case abi >= 9:
		cfg = landlock.V9
	case abi >= 6:
		cfg = landlock.V6
	case abi == 5:
		cfg = landlock.V5
	case abi == 4:
		cfg = landlock.V4
	case abi == 3:
		cfg = landlock.V3
	case abi == 2:
		cfg = landlock.V2
	default:
		cfg = landlock.V1
	}
	if network {
		cfg.HandledAccessNet = 0
	}
	if !unixByLandlock {
		cfg.HandledAccessFS &^= llsyscall.AccessFSResolveUnix
	}
	return cfg
}

// pathRule is the rule for one path: directories get the directory
// rights, other files the file rights; missing paths are skipped.
func pathRule(p string, write bool) landlock.Rule {
	dir := true
	if st, err := os.Stat(p); err == nil && !st.IsDir() {
		dir = false
	}
	switch {
	case dir && write:
		return landlock.RWDirs(p).IgnoreIfMissing()
	case dir:
		return landlock.RODirs(p).IgnoreIfMissing()
	case write:
		return landlock.RWFiles(p).IgnoreIfMissing()
	}
	return landlock.ROFiles(p).IgnoreIfMissing()
}

// dropCapabilities leaves this thread no capability: the bounding set
// emptied (where it holds CAP_SETPCAP: as root, or in its own user
// namespace; elsewhere it holds no capability to lose, and
// no_new_privs keeps exec from granting any), the ambient set cleared,
// and the effective, permitted and inheritable sets zero.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if data[unix.CAP_SETPCAP/32].Effective&(1<<(unix.CAP_SETPCAP%32)) != 0 {
		for c := 0; c < 64; c++ {
			if _, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err != nil {
				break // past the kernel's last capability
			}
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
				return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clearing the ambient capabilities: %w", err)
	}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if data != [2]unix.CapUserData{} {
		return errors.New("capabilities remain after capset")
	}
	return nil
}

// checkSandboxPolicy validates the policy's sandbox section.
func checkSandboxPolicy(sp *SandboxPolicy, probs *problems) {
	if sp == nil {
		return
	}
	for i, p := range sp.ReadPaths {
		switch {
		case p == "" || strings.IndexByte(p, 0) >= 0:
			probs.add("sandbox: read_paths[%d] is empty or contains a NUL byte", i)
		case !filepath.IsAbs(p) || filepath.Clean(p) != p:
			probs.add("sandbox: read_paths[%d] must be an absolute, clean path", i)
		case p == "/":
			probs.add("sandbox: read_paths[%d] is the filesystem root; name narrower directories", i)
		}
	}
	for i, g := range sp.Deny {
		if _, err := sfs.NewPatterns([]string{g}); err != nil {
			probs.add("sandbox: deny[%d] is not a valid pattern (%v)", i, err)
		}
	}
	if n := sp.MaxProcesses; n != 0 && (n < minMaxProcesses || n > maxMaxProcesses) {
		probs.add("sandbox: max_processes must be between %d and %d (0: %d)", minMaxProcesses, maxMaxProcesses, DefaultMaxProcesses)
	}
	if n := sp.MaxMemoryMB; n != 0 && (n < minMaxMemoryMB || n > maxMaxMemoryMB) {
		probs.add("sandbox: max_memory_mb must be between %d and %d (0: %d)", minMaxMemoryMB, maxMaxMemoryMB, DefaultMaxMemoryMB)
	}
}

// Bounds of the policy's limits: below the minimums the helper's own
// runtime, or any interpreter, could not start.
const (
	minMaxProcesses = 64
	maxMaxProcesses = 1 << 22
	minMaxMemoryMB  = 64
	maxMaxMemoryMB  = 1 << 30
)

// renderSandbox reads the .env fields BRIDGE_SANDBOX_REQUIRED (true or
// false), BRIDGE_SANDBOX_READ_PATHS (absolute paths separated by ':'),
// BRIDGE_SANDBOX_MAX_PROCESSES and BRIDGE_SANDBOX_MAX_MEMORY_MB, and the
// server's SERVERFS_ALLOW_HIDDEN and SERVERFS_EXTRA_DENY_GLOBS (what the
// server refuses, actions cannot read).
func renderSandbox(env map[string]string, probs *problems) *SandboxPolicy {
	sp := &SandboxPolicy{}
	flag := func(name string, dst *bool) {
		switch v := strings.ToLower(env[name]); v {
		case "", "false":
		case "true":
			*dst = true
		default:
			probs.add("%s=%q: must be true or false", name, showSetting(v))
		}
	}
	flag("BRIDGE_SANDBOX_REQUIRED", &sp.Required)
	flag("SERVERFS_ALLOW_HIDDEN", &sp.AllowHidden)
	for _, p := range strings.Split(env["BRIDGE_SANDBOX_READ_PATHS"], ":") {
		if p != "" {
			sp.ReadPaths = append(sp.ReadPaths, p)
		}
	}
	for _, g := range strings.Split(env["SERVERFS_EXTRA_DENY_GLOBS"], ",") {
		if g = strings.TrimSpace(g); g != "" {
			sp.Deny = append(sp.Deny, g)
		}
	}
	for _, f := range []struct {
		name string
		dst  *int
	}{{"BRIDGE_SANDBOX_MAX_PROCESSES", &sp.MaxProcesses}, {"BRIDGE_SANDBOX_MAX_MEMORY_MB", &sp.MaxMemoryMB}} {
		if v := env[f.name]; v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				probs.add("%s=%q: must be a whole number", f.name, showSetting(v))
			}
			*f.dst = n
		}
	}
	if reflect.ValueOf(*sp).IsZero() {
		return nil
	}
	checkSandboxPolicy(sp, probs)
	return sp
}

// sandboxAction decides the sandbox of an action or granted command
// and wraps spec in the helper. It fails when the policy requires the
// sandbox and this kernel cannot enforce every control that applies. ns
// starts the helper in namespaces of its own (false: the kernel refused
// them, Landlock alone keeps .git read-only and the masks unreadable).
func sandboxAction(spec procSpec, c command, root, home string, lim RunLimits, ns bool) (string, []string, procSpec, error) {
	abi := kernelABI()
	opts := sandboxOpts{network: c.network, unixSockets: c.unixSockets}
	git := ""
	if c.mutates && abi >= 1 {
		git = gitProtection(root, lim.workspace, ns)
	}
	level, controls := sandboxControls(abi, opts, git)
	if lim.Sandbox != nil && lim.Sandbox.Required && level != SandboxEnforced {
		held := strings.Join(controls, ", ")
		if held == "" {
			held = "no control"
		}
		return level, nil, spec, fmt.Errorf("the policy requires the sandbox but this kernel (Landlock ABI %d, %s) gives only %q (%s)", abi, runtime.GOARCH, level, held)
	}
	rules := sandboxRules(lim.Sandbox, root, c.mutates, c.network, home, sandboxProtect(lim, root))
	rules.ABI = min(abi, sandboxMaxABI)
	rules.NS, rules.Git = ns, git
	rules.Masks = maskSpec{Reveal: c.reveal}
	if sp := lim.Sandbox; sp != nil {
		rules.Masks.Hidden, rules.Masks.Deny = sp.AllowHidden, sp.Deny
	}
	rules.Procs, rules.DataBytes = sandboxLimits(lim.Sandbox)
	if !c.unixSockets {
		switch unixControl(abi) {
		case ControlUnixLandlock:
			rules.Unix = unixByLandlock
		case ControlUnixSeccomp:
			rules.Unix = unixBySeccomp
		}
	}
	rel, err := filepath.Rel(root, c.dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return level, nil, spec, errors.New("its directory is not in the work tree")
	}
	rules.Cwd = rel
	// What holds besides Landlock: the masks always (or nothing runs),
	// the namespaces and the limits as set up.
	if ns {
		controls = append(controls, ControlMaskMount, ControlPIDNamespace)
		if os.Geteuid() != 0 {
			controls = append(controls, ControlProcessLimit)
		}
	} else if abi >= 1 {
		controls = append(controls, ControlMaskLandlock)
	}
	controls = append(controls, ControlMemoryLimit)
	wrapped, err := sandboxedSpec(spec, rules)
	if err != nil {
		return level, nil, spec, err
	}
	return level, controls, wrapped, nil
}

// Default per-action limits (the policy's sandbox section may lower or
// raise them).
const (
	DefaultMaxProcesses = 4096
	DefaultMaxMemoryMB  = 8192
)

// sandboxLimits are the process-count and per-process memory limits of
// an action under sp.
func sandboxLimits(sp *SandboxPolicy) (procs, data uint64) {
	procs, mb := uint64(DefaultMaxProcesses), uint64(DefaultMaxMemoryMB)
	if sp != nil && sp.MaxProcesses > 0 {
		procs = uint64(sp.MaxProcesses)
	}
	if sp != nil && sp.MaxMemoryMB > 0 {
		mb = uint64(sp.MaxMemoryMB)
	}
	return procs, mb << 20
}

// sandboxProtect are the host paths no read path of an action in root may
// contain: lim.Protect but root (the other workdirs, the workspaces),
// the bridge's own directories and the operator's HOME.
func sandboxProtect(lim RunLimits, root string) []string {
	var protect []string
	for _, p := range lim.Protect {
		if p != root {
			protect = append(protect, p)
		}
	}
	protect = append(protect, lim.BridgePaths...)
	if h := os.Getenv("HOME"); filepath.IsAbs(h) && filepath.Clean(h) != "/" {
		protect = append(protect, h)
	}
	return protect
}
