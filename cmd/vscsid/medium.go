package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/cartridge"
)

// Operator actions on a tape drive, shared by D-Bus (targetcli's
// changemedium) and the control socket (vscsictl load/unload/eject).
// Errors wrap the unix.Errno that D-Bus reports and that the control
// socket maps to an HTTP status.

// drive returns the tape drive named name.
func (h *handlers) drive(name string) (*tape.Drive, error) {
	switch hd := h.get(name).(type) {
	case *tape.Drive:
		return hd, nil
	case nil:
		return nil, fmt.Errorf("%w: no device %q", unix.ENODEV, name)
	}
	return nil, fmt.Errorf("%w: device %q is not a tape drive", unix.ENOTSUP, name)
}

// loadMedium puts barcode in the drive, ejecting what is in it first; an
// empty barcode only ejects. The new state is saved at once.
func (h *handlers) loadMedium(tr *tapeTracker, name, barcode string, lg logger) error {
	d, err := h.drive(name)
	if err != nil {
		return err
	}
	// Refuse a cartridge that does not exist before ejecting the one in
	// the drive.
	h.mu.Lock()
	t, tracked := h.tapes[name]
	h.mu.Unlock()
	if tracked && barcode != "" {
		if err := cartridge.ValidateBarcode(barcode); err != nil {
			return fmt.Errorf("%w: %w", unix.EINVAL, err)
		}
		if _, err := os.Stat(cartridge.CartridgePath(t.media, barcode)); err != nil {
			return mediumErrno(fmt.Errorf("cartridge %s in %s: %w", barcode, t.media, err))
		}
	}
	if err := d.Unload(); err != nil && !errors.Is(err, tape.ErrNoMedium) {
		return mediumErrno(err)
	}
	if barcode != "" {
		if err := d.Load(barcode); err != nil {
			err = mediumErrno(err)
			h.save(tr, name, lg)
			return err
		}
	}
	h.save(tr, name, lg)
	return nil
}

// unloadMedium ejects the cartridge; ErrNoMedium (wrapped in ENOMEDIUM)
// when the drive is empty.
func (h *handlers) unloadMedium(tr *tapeTracker, name string, lg logger) error {
	d, err := h.drive(name)
	if err != nil {
		return err
	}
	if err := d.Unload(); err != nil {
		return mediumErrno(err)
	}
	h.save(tr, name, lg)
	return nil
}

func (h *handlers) save(tr *tapeTracker, name string, lg logger) {
	h.mu.Lock()
	t, ok := h.tapes[name]
	h.mu.Unlock()
	if ok && tr != nil {
		tr.note(t, lg)
	}
}

// mediumErrno wraps err in the errno that says what went wrong.
func mediumErrno(err error) error {
	var errno unix.Errno
	switch {
	case errors.As(err, &errno):
		return err
	case errors.Is(err, tape.ErrNoMedium):
		errno = enomedium
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

// mediumBarcode extracts the barcode from targetcli's changemedium
// cfgstring: either a whole vtape cfgstring (its barcode=, none = eject)
// or just "barcode=<b>" (or "" to eject). Anything else is an error that
// names the problem.
func mediumBarcode(cfg string) (string, error) {
	if c, err := tape.ParseConfig(cfg); err == nil {
		return c.Barcode, nil
	}
	if cfg == "" {
		return "", nil
	}
	k, v, ok := strings.Cut(cfg, "=")
	if !ok || k != "barcode" || strings.ContainsAny(v, ";=") {
		_, err := tape.ParseConfig(cfg)
		return "", fmt.Errorf("changemedium wants barcode=<barcode> or a vtape cfgstring: %w", err)
	}
	return v, nil
}
