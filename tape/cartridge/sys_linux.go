package cartridge

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync flushes f's data and the metadata needed to read it back
// (fdatasync(2)): enough for appended records, cheaper than fsync.
func datasync(f *os.File) error {
	return control(f, func(fd int) error {
		for {
			err := unix.Fdatasync(fd)
			if err != unix.EINTR {
				return err
			}
		}
	})
}

// punchHole deallocates [off, off+n) of f, keeping its size. It is only
// about disk space: errors (e.g. EOPNOTSUPP) are ignored.
func punchHole(f *os.File, off, n int64) {
	_ = control(f, func(fd int) error {
		return unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
	})
}
