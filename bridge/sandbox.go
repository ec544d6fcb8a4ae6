package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Sandbox levels, as every action result reports them.
const (
	// SandboxEnforced: Landlock ABI 6 or later, so every restriction this
	// package asks for holds: filesystem rules, TCP bind/connect rules and
	// scoping (no signal to, no abstract Unix socket of, a process outside
	// the sandbox).
	SandboxEnforced = "enforced"
	// SandboxPartial: an older Landlock ABI (1..5) enforces the filesystem
	// rules, but not all of the rest (TCP rules need ABI 4, scoping ABI 6,
	// device ioctls ABI 5).
	SandboxPartial = "partial"
	// SandboxUnavailable: the kernel has no Landlock (or it is disabled);
	// the action runs unsandboxed unless the policy requires the sandbox.
	SandboxUnavailable = "unavailable"
)

// sandboxFullABI is the Landlock ABI at which the level is "enforced".
const sandboxFullABI = 6

// sandboxHelperArg is the hidden first argument with which the bridge
// binary re-executes itself (/proc/self/exe) to apply Landlock in a fresh
// process and then exec the action's program. It is handled in this
// package's init, so that every binary linking the bridge (serverfs, and
// the test binaries) can serve as the helper.
const sandboxHelperArg = "__serverfs-sandbox-exec"

// sandboxHelperFailed is the exit status of a helper that could not
// apply the sandbox; it then writes sandboxHelperMarker and the reason
// to stderr and runs nothing.
const (
	sandboxHelperFailed = 125
	sandboxHelperMarker = "serverfs-sandbox: "
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

// SandboxLevel is the level actions get on this kernel.
func SandboxLevel() string { return sandboxLevelFor(kernelABI()) }

// kernelABI is LandlockABI; tests replace it to play older kernels.
var kernelABI = LandlockABI

func sandboxLevelFor(abi int) string {
	switch {
	case abi >= sandboxFullABI:
		return SandboxEnforced
	case abi >= 1:
		return SandboxPartial
	}
	return SandboxUnavailable
}

// sandboxSpec is what the helper applies before it execs the program.
type sandboxSpec struct {
	Path    string   `json:"path"`
	Argv    []string `json:"argv"`
	RO      []string `json:"ro,omitempty"` // read + execute
	RW      []string `json:"rw,omitempty"` // everything
	Devices []string `json:"dev,omitempty"`
	Network bool     `json:"net,omitempty"` // TCP not restricted
}

// sandboxRules is the spec of one action: the read paths, the workdir
// (read-write only when the action mutates), the private home, nothing
// else. protect are host paths no read path may contain (other workdirs,
// the bridge's directories, the operator's HOME).
func sandboxRules(sp *SandboxPolicy, root string, mutates, network bool, home string, protect []string) sandboxSpec {
	s := sandboxSpec{Network: network, Devices: sandboxDevices}
	s.RO = sandboxReadPaths(sp, root, mutates, protect)
	if mutates {
		s.RW = append(s.RW, root)
	} else {
		s.RO = append(s.RO, root)
	}
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
// program's after the exec).
func sandboxedSpec(spec procSpec, s sandboxSpec) (procSpec, error) {
	s.Path, s.Argv = spec.path, spec.argv
	b, err := json.Marshal(s)
	if err != nil {
		return spec, err
	}
	spec.path = "/proc/self/exe"
	spec.argv = []string{"serverfs-sandbox", sandboxHelperArg, string(b)}
	return spec, nil
}

// sandboxHelperError recognises a helper that refused to run the
// program (exit sandboxHelperFailed, stderr starting with the marker).
func sandboxHelperError(pr *procResult) error {
	msg, ok := strings.CutPrefix(string(pr.stderr), sandboxHelperMarker)
	if pr.exitCode != sandboxHelperFailed || !ok {
		return nil
	}
	msg, _, _ = strings.Cut(msg, "\n")
	return errors.New(msg)
}

func init() {
	if len(os.Args) > 2 && os.Args[1] == sandboxHelperArg {
		sandboxHelperMain(os.Args[2])
	}
}

// sandboxHelperMain applies the sandbox described by arg to this
// (single, locked) thread and execs the program; it never returns.
func sandboxHelperMain(arg string) {
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "%s%v\n", sandboxHelperMarker, err)
		os.Exit(sandboxHelperFailed)
	}
	var s sandboxSpec
	if err := json.Unmarshal([]byte(arg), &s); err != nil || s.Path == "" || len(s.Argv) == 0 {
		fail(errors.New("malformed sandbox spec"))
	}
	var rules []landlock.Rule
	for _, p := range s.RO {
		rules = append(rules, pathRule(p, false))
	}
	for _, p := range s.RW {
		rules = append(rules, pathRule(p, true))
	}
	rules = append(rules, landlock.RWFiles(s.Devices...).IgnoreIfMissing())
	cfg := landlock.V6
	if s.Network {
		cfg.HandledAccessNet = 0
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		fail(fmt.Errorf("landlock ruleset: %w", err))
	}
	if fd < 0 {
		fail(errors.New("landlock is not available"))
	}
	// The domain is the calling thread's; execve keeps it. This thread
	// is never unlocked: it is the one that execs.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fail(fmt.Errorf("no_new_privs: %w", err))
	}
	if err := llsyscall.LandlockRestrictSelf(fd, flags); err != nil {
		fail(fmt.Errorf("landlock_restrict_self: %w", err))
	}
	unix.Close(fd)
	err = syscall.Exec(s.Path, s.Argv, os.Environ())
	fail(fmt.Errorf("exec: %w", err))
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
}

// renderSandbox reads the .env fields BRIDGE_SANDBOX_REQUIRED (true or
// false) and BRIDGE_SANDBOX_READ_PATHS (absolute paths separated by ':').
func renderSandbox(env map[string]string, probs *problems) *SandboxPolicy {
	sp := &SandboxPolicy{}
	switch v := strings.ToLower(env["BRIDGE_SANDBOX_REQUIRED"]); v {
	case "", "false":
	case "true":
		sp.Required = true
	default:
		probs.add("BRIDGE_SANDBOX_REQUIRED=%q: must be true or false", showSetting(v))
	}
	for _, p := range strings.Split(env["BRIDGE_SANDBOX_READ_PATHS"], ":") {
		if p != "" {
			sp.ReadPaths = append(sp.ReadPaths, p)
		}
	}
	if !sp.Required && len(sp.ReadPaths) == 0 {
		return nil
	}
	checkSandboxPolicy(sp, probs)
	return sp
}

// sandboxAction decides the sandbox level of an action or granted command and wraps spec in
// the helper when Landlock is there. It fails when the policy requires
// the sandbox and this kernel cannot enforce it fully.
func sandboxAction(spec procSpec, mutates, network bool, root, home string, lim RunLimits) (string, procSpec, error) {
	level := SandboxLevel()
	if lim.Sandbox != nil && lim.Sandbox.Required && level != SandboxEnforced {
		return level, spec, fmt.Errorf("the policy requires the sandbox but this kernel's Landlock (ABI %d) gives only %q", kernelABI(), level)
	}
	if level == SandboxUnavailable {
		return level, spec, nil
	}
	rules := sandboxRules(lim.Sandbox, root, mutates, network, home, sandboxProtect(lim, root))
	wrapped, err := sandboxedSpec(spec, rules)
	if err != nil {
		return level, spec, err
	}
	return level, wrapped, nil
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
