// Package sandbox confines one process on Linux: Landlock, a seccomp
// filter on pathname Unix sockets, user, mount and PID namespaces with
// the deny-listed and hidden paths masked and .git read-only, and rlimits.
// Its one entry point is Command: a Spec in, the command that runs the
// program confined out (this binary again, as a helper that applies the
// spec to itself and execs the program). What a spec holds is the
// bridge's policy to decide.
package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// helperArg is the hidden first argument with which the bridge
// binary re-executes itself (/proc/self/exe) to apply the sandbox in a
// fresh process and then exec the action's program. It is handled in
// this package's init, so that every binary linking the bridge
// (serverfs, and the test binaries) can serve as the helper.
const helperArg = "__serverfs-sandbox-exec"

// Spec is what the helper applies before it execs the program.
type Spec struct {
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
	// Git is GitByMount or GitByLandlock: how Root's .git is kept
	// read-only ("": Root is not written, or has no .git to keep).
	Git string `json:"git,omitempty"`
	// Masks says which paths of Root the process must not read.
	Masks MaskSpec `json:"masks"`
	// Procs bounds the processes (threads included) of the action
	// (RLIMIT_NPROC, counted in its own user namespace: NS only);
	// DataBytes each process's data (RLIMIT_DATA).
	Procs     uint64 `json:"procs,omitempty"`
	DataBytes uint64 `json:"data,omitempty"`
}

// Command is how to run the program at path with argv confined by s:
// this binary again (the helper), which applies s and execs the program
// (its pid, process group and pipes are the program's after the exec).
// A spec with NS must be started in user, mount and PID namespaces of its
// own.
func Command(path string, argv []string, s Spec) (string, []string, error) {
	s.Path, s.Argv = path, argv
	b, err := json.Marshal(s)
	if err != nil {
		return "", nil, err
	}
	return "/proc/self/exe", []string{"serverfs-sandbox", helperArg, string(b)}, nil
}

// HelperError recognises a helper that refused to run the program (exit
// status helperFailed, stderr starting with a marker) and says why.
func HelperError(exit int, stderr []byte) error {
	if exit != helperFailed {
		return nil
	}
	for _, marker := range []string{helperMarker, mountMarker} {
		if msg, ok := strings.CutPrefix(string(stderr), marker); ok {
			msg, _, _ = strings.Cut(msg, "\n")
			return errors.New(msg)
		}
	}
	return nil
}

// MountFailed says whether the helper failed in its namespaces, before
// anything else: nothing ran.
func MountFailed(exit int, stderr []byte) bool {
	return exit == helperFailed && strings.HasPrefix(string(stderr), mountMarker)
}

func init() {
	if len(os.Args) > 2 && os.Args[1] == helperArg {
		helperMain(os.Args[2])
	}
}

// helperMain applies the sandbox described by arg to this
// (single, locked) thread and execs the program; it never returns. The
// order matters: the masks are found before anything is mounted, mounts
// need the namespace's capabilities, which are dropped next; Landlock
// and seccomp come last (both need no_new_privs, and the seccomp filter
// would refuse the helper's own work).
func helperMain(arg string) {
	// The credentials, the Landlock domain and the seccomp filter are
	// the calling thread's; execve keeps them. This thread is never
	// unlocked: it is the one that execs.
	runtime.LockOSThread()
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "%s%v\n", helperMarker, err)
		os.Exit(helperFailed)
	}
	var s Spec
	if err := json.Unmarshal([]byte(arg), &s); err != nil || s.Path == "" || len(s.Argv) == 0 || s.Root == "" {
		fail(errors.New("malformed sandbox spec"))
	}
	masks, err := findMasks(s.Root, s.Masks)
	if err != nil {
		fail(fmt.Errorf("the deny-listed and hidden paths cannot be masked: %w", err))
	}
	if s.NS {
		if err := namespaceView(s, masks); err != nil {
			fmt.Fprintf(os.Stderr, "%s%v\n", mountMarker, err)
			os.Exit(helperFailed)
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
	if s.Unix == UnixBySeccomp {
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
func landlockRuleset(s Spec, masks []maskedPath) (int, uint32, error) {
	cfg := landlockConfig(s.ABI, s.Network, s.Unix == UnixByLandlock)
	var rules []landlock.Rule
	for _, p := range s.RO {
		rules = append(rules, pathRule(p, false))
	}
	for _, p := range s.RW {
		rules = append(rules, pathRule(p, true))
	}
	rules = append(rules, landlock.RWFiles(s.Devices...).IgnoreIfMissing())
	byEntry := s.Git == GitByLandlock || !s.NS && len(masks) > 0
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
// is allowed and without resolve_unix unless UnixByLandlock.
func landlockConfig(abi int, network, UnixByLandlock bool) landlock.Config {
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
	if !UnixByLandlock {
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

// helperFailed is the exit status of a helper that could not
// apply the sandbox; it then writes helperMarker (or, when only
// the mount namespace failed, mountMarker) and the reason to
// stderr and runs nothing.
const (
	helperFailed = 125
	helperMarker = "serverfs-sandbox: "
	mountMarker  = "serverfs-sandbox-mount: "
)

// Ways the helper keeps a mutating process from changing .git, and
// from reaching pathname Unix sockets.
const (
	GitByMount     = "mount"
	GitByLandlock  = "landlock"
	UnixByLandlock = "landlock"
	UnixBySeccomp  = "seccomp"
)
