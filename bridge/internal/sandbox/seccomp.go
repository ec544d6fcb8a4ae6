package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter refuses pathname Unix sockets where Landlock
// cannot (ABI < 9): socket(AF_UNIX, ...) fails with EACCES, so no such
// socket can connect, bind or send, and so does a datagram
// socketpair(AF_UNIX, SOCK_DGRAM, ...), whose ends could still sendto
// or connect to a named datagram socket (a stream or seqpacket pair
// stays allowed: its ends are connected for good). io_uring_setup
// fails with EPERM, since a ring creates sockets without the socket
// system call. A system call of an ABI the filter does not know kills
// the process.

// seccompArch is one system-call ABI the filter knows: its audit
// architecture and the numbers it filters.
type seccompArch struct {
	audit uint32
	// nrMask is cleared from the number first: amd64's x32 bit, so that
	// an x32 socket is a socket.
	nrMask     uint32
	socket     uint32
	socketpair uint32
	// socketcall (0: the ABI has none) multiplexes every socket call; its
	// SYS_SOCKET and SYS_SOCKETPAIR are refused whatever the family,
	// which the filter cannot read (it is in memory).
	socketcall   uint32
	ioUringSetup uint32
}

// seccomp_data offsets: the number, the audit architecture, the low 32
// bits of the first and second arguments (every ABI filtered here is
// little-endian).
const (
	seccompDataNr   = 0
	seccompDataArch = 4
	seccompDataArg0 = 16
	seccompDataArg1 = 24
)

// socketcall's call numbers of socket() and socketpair().
const (
	sysSocketcallSocket     = 1
	sysSocketcallSocketpair = 8
)

// sockTypeMask leaves a socket type without SOCK_NONBLOCK/SOCK_CLOEXEC.
const sockTypeMask = 0xf

// unixSocketFilter is the filter program for arches (the native ABI
// first).
func unixSocketFilter(arches []seccompArch) ([]unix.SockFilter, error) {
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		and = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	a := &bpfAsm{labels: map[string]int{}}
	a.stmt(ld, seccompDataArch)
	for i, arch := range arches {
		a.jeq(arch.audit, fmt.Sprint("arch", i), "")
	}
	a.stmt(ret, unix.SECCOMP_RET_KILL_PROCESS)
	for i, arch := range arches {
		a.label(fmt.Sprint("arch", i))
		a.stmt(ld, seccompDataNr)
		if arch.nrMask != 0 {
			a.stmt(and, ^arch.nrMask)
		}
		a.jeq(arch.socket, "family", "")
		a.jeq(arch.socketpair, "pair", "")
		if arch.socketcall != 0 {
			a.jeq(arch.socketcall, "socketcall", "")
		}
		a.jeq(arch.ioUringSetup, "eperm", "")
		a.stmt(ret, unix.SECCOMP_RET_ALLOW)
	}
	a.label("family")
	a.stmt(ld, seccompDataArg0)
	a.jeq(unix.AF_UNIX, "eacces", "")
	a.stmt(ret, unix.SECCOMP_RET_ALLOW)
	a.label("pair")
	a.stmt(ld, seccompDataArg0)
	a.jeq(unix.AF_UNIX, "", "allow")
	a.stmt(ld, seccompDataArg1)
	a.stmt(and, sockTypeMask)
	a.jeq(unix.SOCK_DGRAM, "eacces", "")
	a.label("allow")
	a.stmt(ret, unix.SECCOMP_RET_ALLOW)
	a.label("socketcall")
	a.stmt(ld, seccompDataArg0)
	a.jeq(sysSocketcallSocket, "eacces", "")
	a.jeq(sysSocketcallSocketpair, "eacces", "")
	a.stmt(ret, unix.SECCOMP_RET_ALLOW)
	a.label("eacces")
	a.stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.EACCES))
	a.label("eperm")
	a.stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	return a.assemble()
}

// refuseUnixSockets installs the filter on this thread (after
// no_new_privs; exec keeps it).
func refuseUnixSockets() error {
	if seccompArches == nil {
		return fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
	}
	f, err := unixSocketFilter(seccompArches)
	if err != nil {
		return err
	}
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if _, _, e := unix.Syscall(unix.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog))); e != 0 {
		return fmt.Errorf("seccomp filter: %w", e)
	}
	runtime.KeepAlive(f)
	return nil
}

// bpfAsm assembles a classic BPF program with forward jumps to labels.
type bpfAsm struct {
	ins    []unix.SockFilter
	labels map[string]int
	jumps  []bpfJump
}

type bpfJump struct {
	at     int
	jt, jf string // "": the next instruction
}

func (a *bpfAsm) stmt(code uint16, k uint32) {
	a.ins = append(a.ins, unix.SockFilter{Code: code, K: k})
}

// jeq jumps to jt when the accumulator equals k, else to jf.
func (a *bpfAsm) jeq(k uint32, jt, jf string) {
	a.jumps = append(a.jumps, bpfJump{len(a.ins), jt, jf})
	a.stmt(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, k)
}

func (a *bpfAsm) label(name string) { a.labels[name] = len(a.ins) }

func (a *bpfAsm) assemble() ([]unix.SockFilter, error) {
	for _, j := range a.jumps {
		for _, t := range []struct {
			label string
			off   *uint8
		}{{j.jt, &a.ins[j.at].Jt}, {j.jf, &a.ins[j.at].Jf}} {
			if t.label == "" {
				continue
			}
			to, ok := a.labels[t.label]
			off := to - j.at - 1
			if !ok || off < 0 || off > 255 {
				return nil, fmt.Errorf("seccomp filter: bad jump to %q", t.label)
			}
			*t.off = uint8(off)
		}
	}
	if len(a.ins) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp filter: %d instructions", len(a.ins))
	}
	return a.ins, nil
}

// SeccompFilters reports whether this architecture has the Unix-socket
// seccomp filter (UnixBySeccomp).
func SeccompFilters() bool { return seccompArches != nil }
