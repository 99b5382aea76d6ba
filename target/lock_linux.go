//go:build linux

package target

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive flock on path (created if needed), so a
// second daemon refuses to start instead of fighting over configfs and
// the uio devices. The lock dies with the process.
func lockFile(path string) (io.Closer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock file %s: %w", path, err)
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) { lerr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB) }); err != nil {
		lerr = err
	}
	if lerr != nil {
		_ = f.Close()
		if errors.Is(lerr, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is locked by another process", ErrAlreadyRunning, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, lerr)
	}
	return f, nil
}
