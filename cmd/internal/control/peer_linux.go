package control

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerCred reads SO_PEERCRED of c.
func peerCred(c *net.UnixConn) (uid uint32, pid int32, ok bool) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, 0, false
	}
	var cred *unix.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil || cerr != nil {
		return 0, 0, false
	}
	return cred.Uid, cred.Pid, true
}
