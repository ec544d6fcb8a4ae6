package sandbox

import "golang.org/x/sys/unix"

// seccompArches on amd64: x86-64 (and x32, its numbers with bit 30
// set), then the i386 compat ABI, whose numbers are its own.
var seccompArches = []seccompArch{
	{audit: unix.AUDIT_ARCH_X86_64, nrMask: 0x40000000, socket: unix.SYS_SOCKET, socketpair: unix.SYS_SOCKETPAIR, ioUringSetup: unix.SYS_IO_URING_SETUP},
	{audit: unix.AUDIT_ARCH_I386, socket: 359, socketpair: 360, socketcall: 102, ioUringSetup: 425},
}
