//go:build linux

package target

import (
	"errors"

	"golang.org/x/sys/unix"
)

// isModuleMissing reports the errors configfs gives when the backend or
// fabric module behind a mkdir is not loaded (target_core_configfs.c:
// core_alloc_hba fails with EINVAL, a fabric lookup with ENODEV).
func isModuleMissing(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENODEV)
}

// isBusy reports that a configfs directory is still in use.
func isBusy(err error) bool { return errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EBUSY) }
