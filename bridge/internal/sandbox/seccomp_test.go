package sandbox

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// TestUnixSocketFilterProgram runs the seccomp program on every ABI it
// knows (the kernel runs it for the native ABI in the tests above; the
// compat ABIs and amd64's x32 numbers are checked here): AF_UNIX
// sockets refused with EACCES, other families and socketpair allowed,
// io_uring_setup refused, an unknown ABI killed.
func TestUnixSocketFilterProgram(t *testing.T) {
	if seccompArches == nil {
		t.Fatal("no seccomp filter for this architecture")
	}
	prog, err := unixSocketFilter(seccompArches)
	if err != nil {
		t.Fatal(err)
	}
	eval := func(arch, nr uint32, args ...uint64) uint32 {
		data := make([]byte, 64)
		binary.LittleEndian.PutUint32(data[0:], nr)
		binary.LittleEndian.PutUint32(data[4:], arch)
		for i, a := range args {
			binary.LittleEndian.PutUint64(data[16+8*i:], a)
		}
		var acc uint32
		for pc := 0; pc < len(prog); pc++ {
			in := prog[pc]
			switch in.Code {
			case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
				acc = binary.LittleEndian.Uint32(data[in.K:])
			case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
				acc &= in.K
			case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
				if acc == in.K {
					pc += int(in.Jt)
				} else {
					pc += int(in.Jf)
				}
			case unix.BPF_RET | unix.BPF_K:
				return in.K
			default:
				t.Fatalf("unexpected instruction %+v", in)
			}
		}
		t.Fatal("the program ran off its end")
		return 0
	}
	const (
		allow  = unix.SECCOMP_RET_ALLOW
		eacces = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		eperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	)
	for _, a := range seccompArches {
		for _, tc := range []struct {
			nr   uint32
			args []uint64
			want uint32
		}{
			{a.socket, []uint64{unix.AF_UNIX}, eacces},
			{a.socket, []uint64{1<<32 | unix.AF_UNIX}, eacces}, // the kernel reads an int
			{a.socket, []uint64{unix.AF_INET}, allow},
			{a.socket, []uint64{unix.AF_INET6}, allow},
			{a.socketpair, []uint64{unix.AF_UNIX, unix.SOCK_DGRAM}, eacces},
			{a.socketpair, []uint64{unix.AF_UNIX, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC | unix.SOCK_NONBLOCK}, eacces},
			{a.socketpair, []uint64{unix.AF_UNIX, unix.SOCK_STREAM}, allow},
			{a.socketpair, []uint64{unix.AF_UNIX, unix.SOCK_SEQPACKET | unix.SOCK_CLOEXEC}, allow},
			{a.ioUringSetup, nil, eperm},
			{a.ioUringSetup + 1, []uint64{unix.AF_UNIX}, allow},
		} {
			if got := eval(a.audit, tc.nr, tc.args...); got != tc.want {
				t.Errorf("arch %#x nr %d args %#x: %#x, want %#x", a.audit, tc.nr, tc.args, got, tc.want)
			}
			if a.nrMask != 0 {
				if got := eval(a.audit, tc.nr|a.nrMask, tc.args...); got != tc.want {
					t.Errorf("arch %#x nr %#x (masked) args %#x: %#x, want %#x", a.audit, tc.nr|a.nrMask, tc.args, got, tc.want)
				}
			}
		}
		if a.socketcall != 0 {
			for call, want := range map[uint64]uint32{sysSocketcallSocket: eacces, sysSocketcallSocketpair: eacces, 3 /* SYS_CONNECT */ : allow} {
				if got := eval(a.audit, a.socketcall, call); got != want {
					t.Errorf("arch %#x socketcall(%d): %#x, want %#x", a.audit, call, got, want)
				}
			}
		}
	}
	if got := eval(unix.AUDIT_ARCH_PPC64LE, 0, 0); got != unix.SECCOMP_RET_KILL_PROCESS {
		t.Errorf("an unknown ABI: %#x", got)
	}
}

// TestLandlockConfig: the rights the ruleset handles follow the ABI and
// the spec.
func TestLandlockConfig(t *testing.T) {
	const resolveUnix = 1 << 16
	if landlockConfig(9, false, true).HandledAccessFS&resolveUnix == 0 || landlockConfig(9, false, false).HandledAccessFS&resolveUnix != 0 {
		t.Error("ABI 9: resolve_unix handled exactly when Landlock refuses Unix sockets")
	}
	if landlockConfig(7, true, false).HandledAccessNet != 0 || landlockConfig(7, false, false).HandledAccessNet == 0 {
		t.Error("TCP rights handled exactly without network")
	}
}
