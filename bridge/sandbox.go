package bridge

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/serverfs/serverfs/bridge/internal/sandbox"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"

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
	case sandbox.GitByMount:
		controls = append(controls, ControlGitMount)
	case sandbox.GitByLandlock:
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
	case sandbox.SeccompFilters():
		return ControlUnixSeccomp
	}
	return ""
}

// sandboxRules is the spec of one action: the read paths, the private
// home, the devices (the helper adds the work tree itself, read-write
// only when the action mutates). protect are host paths no read path may
// contain (other workdirs, the bridge's directories, the operator's
// HOME).
func sandboxRules(sp *SandboxPolicy, root string, mutates, network bool, home string, protect []string) sandbox.Spec {
	s := sandbox.Spec{Network: network, Devices: sandboxDevices, Root: root, Write: mutates}
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
	rules.Masks = sandbox.MaskSpec{Reveal: c.reveal}
	if sp := lim.Sandbox; sp != nil {
		rules.Masks.Hidden, rules.Masks.Deny = sp.AllowHidden, sp.Deny
	}
	rules.Procs, rules.DataBytes = sandboxLimits(lim.Sandbox)
	if !c.unixSockets {
		switch unixControl(abi) {
		case ControlUnixLandlock:
			rules.Unix = sandbox.UnixByLandlock
		case ControlUnixSeccomp:
			rules.Unix = sandbox.UnixBySeccomp
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

// sandboxedSpec wraps spec so that the helper applies s first (package
// sandbox); an NS spec starts the helper in namespaces of its own.
func sandboxedSpec(spec procSpec, s sandbox.Spec) (procSpec, error) {
	path, argv, err := sandbox.Command(spec.path, spec.argv, s)
	if err != nil {
		return spec, err
	}
	spec.path, spec.argv, spec.namespaces = path, argv, s.NS
	return spec, nil
}
