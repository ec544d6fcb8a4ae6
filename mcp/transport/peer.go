package transport

import (
	"encoding/binary"
	"net"
	"strconv"

	"golang.org/x/sys/unix"
)

// peerOf names who is at the other end of an accepted connection, for the
// pre-authentication budget's per-peer accounting (connlimit.go): a local
// user by uid (SO_PEERCRED on a Unix socket; on TCP the owner of the
// client's socket when it is on this host, from sock_diag), otherwise the
// remote IP (an IPv6 one by its /64, which one host is usually given
// whole). "" when none is known: such connections count as one peer.
// A local user is counted by uid and not by address because every local
// process connects from 127.0.0.1: by address, any local user's stalled
// connections would count as the tunnel's.
func peerOf(c net.Conn) string {
	switch c := c.(type) {
	case *net.UnixConn:
		if uid, ok := unixPeerUID(c); ok {
			return "uid " + strconv.FormatUint(uint64(uid), 10)
		}
	case *net.TCPConn:
		remote, ok1 := c.RemoteAddr().(*net.TCPAddr)
		local, ok2 := c.LocalAddr().(*net.TCPAddr)
		if !ok1 || !ok2 {
			return ""
		}
		if uid, ok := localTCPOwner(remote, local); ok {
			return "uid " + strconv.FormatUint(uint64(uid), 10)
		}
		if ip4 := remote.IP.To4(); ip4 != nil {
			return ip4.String()
		}
		return remote.IP.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return ""
}

// unixPeerUID is the uid of the process that connected c (SO_PEERCRED:
// fixed at connect, so the client cannot change it afterwards).
func unixPeerUID(c *net.UnixConn) (uint32, bool) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, false
	}
	var cred *unix.Ucred
	if err := raw.Control(func(fd uintptr) {
		cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || cred == nil {
		return 0, false
	}
	return cred.Uid, true
}

// localTCPOwner asks the kernel (NETLINK_SOCK_DIAG, one request and one
// answer) for the owner of the socket whose own address is remote and
// whose peer is local: the client's end of the connection, which exists in
// this network namespace only when the client runs on this host. A remote
// client, or any failure, is false.
func localTCPOwner(remote, local *net.TCPAddr) (uint32, bool) {
	family, size := byte(unix.AF_INET), net.IPv4len
	if remote.IP.To4() == nil || local.IP.To4() == nil {
		family, size = unix.AF_INET6, net.IPv6len
	}
	ip := func(a net.IP) net.IP {
		if size == net.IPv4len {
			return a.To4()
		}
		return a.To16()
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, false
	}
	defer unix.Close(fd)
	// The bound on the answer's wait: the kernel answers at once, and a
	// wedged one must not stall Accept.
	tv := unix.Timeval{Usec: 100_000}
	if unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv) != nil {
		return 0, false
	}
	// struct nlmsghdr (16 bytes), then struct inet_diag_req_v2 (56):
	// family, protocol, ext, pad, states, then inet_diag_sockid: sport
	// and dport (big-endian), src and dst (16 bytes each), interface,
	// cookie (INET_DIAG_NOCOOKIE: any).
	ne := binary.NativeEndian
	req := make([]byte, 16+56)
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST)
	q := req[16:]
	q[0], q[1] = family, unix.IPPROTO_TCP
	ne.PutUint32(q[4:], 0xffffffff) // every TCP state
	id := q[8:]
	binary.BigEndian.PutUint16(id[0:], uint16(remote.Port))
	binary.BigEndian.PutUint16(id[2:], uint16(local.Port))
	copy(id[4:4+size], ip(remote.IP))
	copy(id[20:20+size], ip(local.IP))
	ne.PutUint32(id[40:], 0xffffffff)
	ne.PutUint32(id[44:], 0xffffffff)
	if unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}) != nil {
		return 0, false
	}
	// The answer: struct nlmsghdr, then struct inet_diag_msg, whose
	// idiag_uid is at 64 (after family, state, timer, retrans, the
	// 48-byte inet_diag_sockid, expires, rqueue and wqueue). NLMSG_ERROR
	// (ENOENT) when no such socket is here.
	buf := make([]byte, 512)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil || n < 16+68 || ne.Uint16(buf[4:]) != unix.SOCK_DIAG_BY_FAMILY {
		return 0, false
	}
	return ne.Uint32(buf[16+64:]), true
}
