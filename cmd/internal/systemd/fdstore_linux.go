package systemd

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// memFile returns a new, empty memory file (memfd_create(2)) named
// vscsid-NAME in /proc/PID/fd listings.
func memFile(name string) (*os.File, error) {
	fd, err := unix.MemfdCreate("vscsid-"+name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("memfd_create", err)
	}
	return os.NewFile(uintptr(fd), "memfd:vscsid-"+name), nil
}

// sendFiles sends state with files attached (SCM_RIGHTS) to the notify
// socket addr, a path or, with a leading '@', an abstract name. go-systemd
// sends no files, and Go's net package writes no control messages on a
// connected datagram socket: a plain sendmsg(2) does both.
func sendFiles(addr, state string, files ...*os.File) error {
	if !strings.HasPrefix(addr, "/") && !strings.HasPrefix(addr, "@") {
		return fmt.Errorf("sd_notify: unsupported NOTIFY_SOCKET %q", addr)
	}
	s, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sd_notify: %w", os.NewSyscallError("socket", err))
	}
	defer func() { _ = unix.Close(s) }() // one datagram sent: nothing buffered to lose
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	// SockaddrUnix takes a leading '@' for an abstract address.
	err = unix.Sendmsg(s, []byte(state), unix.UnixRights(fds...), &unix.SockaddrUnix{Name: addr}, 0)
	runtime.KeepAlive(files)
	if err != nil {
		return fmt.Errorf("sd_notify: %w", os.NewSyscallError("sendmsg", err))
	}
	return nil
}
