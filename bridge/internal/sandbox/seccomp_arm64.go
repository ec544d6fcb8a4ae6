package sandbox

import "golang.org/x/sys/unix"

// seccompArches on arm64: aarch64, then the 32-bit ARM (EABI) compat
// ABI, which has no socketcall.
var seccompArches = []seccompArch{
	{audit: unix.AUDIT_ARCH_AARCH64, socket: unix.SYS_SOCKET, socketpair: unix.SYS_SOCKETPAIR, ioUringSetup: unix.SYS_IO_URING_SETUP},
	{audit: unix.AUDIT_ARCH_ARM, socket: 281, socketpair: 288, ioUringSetup: 425},
}
