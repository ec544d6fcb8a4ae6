package bridge

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// landlockABIEnv, set by scripts/test-matrix, plays a kernel whose
// Landlock ABI is that number (capped at this kernel's; 0: none) for
// the whole test binary and the children it re-executes. Read here
// only: the product binary has no such switch.
const landlockABIEnv = "SERVERFS_TEST_LANDLOCK_ABI"

func TestMain(m *testing.M) {
	if s, ok := os.LookupEnv(landlockABIEnv); ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "%s=%q: want a Landlock ABI version (0: none)\n", landlockABIEnv, s)
			os.Exit(2)
		}
		real := LandlockABI()
		kernelABI = func() int { return min(n, real) }
	}
	os.Exit(m.Run())
}

var (
	usernsOnce    sync.Once
	usernsRefused error
)

// userNamespacesRefused is why this kernel refuses this process a user
// namespace (disabled, restricted, user.max_user_namespaces 0), nil
// when it grants one: probed by starting /bin/true in one, apart from
// the bridge's own detection, so that a bridge that wrongly falls back
// still fails the tests that want the namespace.
func userNamespacesRefused() error {
	usernsOnce.Do(func() {
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
		usernsRefused = cmd.Run()
	})
	return usernsRefused
}

// gitControl is the control that keeps a mutating action's .git
// read-only on this kernel: the read-only bind where it grants user
// namespaces, else Landlock's rules (which refuse new top-level
// entries too).
func gitControl() string {
	if userNamespacesRefused() != nil {
		return ControlGitLandlock
	}
	return ControlGitMount
}

// needUserNamespaces skips a test of the walls the bridge builds in a
// user namespace where the kernel refuses one: those walls do not exist
// there, and fallback names the test that proves, on this kernel too,
// what the bridge does instead.
func needUserNamespaces(t *testing.T, fallback string) {
	t.Helper()
	if err := userNamespacesRefused(); err != nil {
		t.Skipf("this kernel refuses user namespaces (%v): the namespace's walls cannot exist here; %s proves the bridge's fallback", err, fallback)
	}
}
