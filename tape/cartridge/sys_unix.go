//go:build unix

package cartridge

import (
	"os"

	"golang.org/x/sys/unix"
)

var (
	errWouldBlock = unix.EWOULDBLOCK
	errReadOnlyFS = unix.EROFS
)

// lockFile takes a non-blocking flock on f: exclusive for a drive, shared
// for inspection. flock locks belong to the open file description, so two
// opens of one image conflict even inside one process. The lock goes away
// with the descriptor (Close, or the death of the process).
func lockFile(f *os.File, exclusive bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	return control(f, func(fd int) error { return unix.Flock(fd, how|unix.LOCK_NB) })
}

// control runs fn on f's descriptor without putting it in blocking mode
// (as Fd would).
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
