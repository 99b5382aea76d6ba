package main

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/target"
)

// Operator actions on a tape drive, shared by D-Bus (targetcli's
// changemedium) and the control socket (vscsictl load/unload/eject).
// Errors wrap the unix.Errno that D-Bus reports and that the control
// socket maps to an HTTP status.

// registry is what the daemon asks about devices: the Target, the one
// registry (the tests give a fixed set of real handlers).
type registry interface {
	Devices() []target.DeviceStatus
	Handler(name string) (target.Handler, error)
}

// lookup returns the handler of the device named name, with the errno the
// wire reports: ENODEV when there is none, EINVAL when the name is
// ambiguous.
func lookup(reg registry, name string) (target.Handler, error) {
	h, err := reg.Handler(name)
	switch {
	case errors.Is(err, target.ErrNoDevice):
		return nil, fmt.Errorf("%w: no device %q", unix.ENODEV, name)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", unix.EINVAL, err)
	}
	return h, nil
}

// drive returns the tape drive named name.
func drive(reg registry, name string) (*tape.Drive, error) {
	h, err := lookup(reg, name)
	if err != nil {
		return nil, err
	}
	d, ok := target.As[*tape.Drive](h)
	if !ok {
		return nil, fmt.Errorf("%w: device %q is not a tape drive", unix.ENOTSUP, name)
	}
	return d, nil
}

// changeMedium puts barcode in the drive name, ejecting what is in it
// first; an empty barcode only ejects (tape.Drive.Change). The drive saves
// its new state itself.
func changeMedium(reg registry, name, barcode string) error {
	d, err := drive(reg, name)
	if err != nil {
		return err
	}
	if err := d.Change(barcode); err != nil {
		return mediumErrno(err)
	}
	return nil
}

// unloadMedium ejects the cartridge; ErrNoMedium (wrapped in ENOMEDIUM)
// when the drive is empty.
func unloadMedium(reg registry, name string) error {
	d, err := drive(reg, name)
	if err != nil {
		return err
	}
	if err := d.Unload(); err != nil {
		return mediumErrno(err)
	}
	return nil
}

// mediumErrno wraps err in the errno that says what went wrong.
func mediumErrno(err error) error {
	var errno unix.Errno
	switch {
	case errors.As(err, &errno):
		return err
	case errors.Is(err, tape.ErrNoMedium):
		errno = unix.ENOMEDIUM
	case errors.Is(err, tape.ErrMediumPresent), errors.Is(err, tape.ErrRemovalPrevented):
		errno = unix.EBUSY
	case errors.Is(err, tape.ErrClosed):
		errno = unix.ENODEV
	case errors.Is(err, fs.ErrNotExist):
		errno = unix.ENOENT
	default:
		errno = unix.EINVAL
	}
	return fmt.Errorf("%w: %w", errno, err)
}
