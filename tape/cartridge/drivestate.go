package cartridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/vscsid/vscsid/tape"
)

// A Library is a tape.PersistentLibrary: each drive's state is kept next
// to the cartridges, in <dir>/.drive-<name>.json, written atomically
// (temporary file, fsync, rename, fsync of the directory).
var _ tape.PersistentLibrary = (*Library)(nil)

// MakeLibrary returns the library of the media directory dir, creating
// the directory (mode 0750) if it does not exist, as a daemon does on its
// first start.
func MakeLibrary(dir string) (*Library, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("cartridge: media directory: %w", err)
	}
	return NewLibrary(dir)
}

// Check returns nil if the cartridge barcode exists in the library.
func (l *Library) Check(barcode string) error {
	if err := ValidateBarcode(barcode); err != nil {
		return err
	}
	if _, err := os.Stat(Path(l.dir, barcode)); err != nil {
		return fmt.Errorf("cartridge %s in %s: %w", barcode, l.dir, err)
	}
	return nil
}

// Ensure creates the cartridge barcode with default options if it does
// not exist.
func (l *Library) Ensure(barcode string) (created bool, err error) {
	err = l.Check(barcode)
	switch {
	case err == nil:
		return false, nil
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	if err := l.Create(barcode, Options{}); err != nil && !errors.Is(err, ErrExists) {
		return false, err
	}
	return true, nil
}

// driveStatePath is where drive's state lives; a drive name that is not
// one path element is refused, so nothing is written outside the
// directory.
func (l *Library) driveStatePath(drive string) (string, error) {
	if drive == "" || drive != filepath.Base(drive) || drive == ".." {
		return "", fmt.Errorf("drive state: bad drive name %q", drive)
	}
	return filepath.Join(l.dir, ".drive-"+drive+".json"), nil
}

// driveStateTempPrefix starts the names of a drive's state saves in
// progress (os.CreateTemp's pattern is it, "*", ".tmp").
func driveStateTempPrefix(drive string) string { return ".drive-" + drive + "." }

// maxDriveState bounds a drive's state file: a few hundred bytes of JSON.
const maxDriveState = 1 << 20

// LoadDriveState reads the state saved for drive.
func (l *Library) LoadDriveState(drive string) (s tape.DriveState, ok bool, err error) {
	p, err := l.driveStatePath(drive)
	if err != nil {
		return s, false, err
	}
	// A save cut by a crash leaves its temporary file; the drive is
	// opening, so no save of its own runs.
	if err := RemoveTemps(l.dir, driveStateTempPrefix(drive), ".tmp"); err != nil {
		return s, false, fmt.Errorf("drive state: stale temporary file: %w", err)
	}
	if err := RemoveStaleCreates(l.dir); err != nil {
		return s, false, fmt.Errorf("cartridge creation cut by a crash: %w", err)
	}
	b, err := ReadStateFile(p, maxDriveState)
	if errors.Is(err, fs.ErrNotExist) {
		return s, false, nil
	}
	if err != nil {
		return s, false, fmt.Errorf("drive state: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, false, fmt.Errorf("drive state %s: %w", p, err)
	}
	return s, true, nil
}

// SaveDriveState replaces the state saved for drive atomically.
func (l *Library) SaveDriveState(drive string, s tape.DriveState) error {
	p, err := l.driveStatePath(drive)
	if err != nil {
		return err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(l.dir, driveStateTempPrefix(drive)+"*.tmp")
	if err != nil {
		return fmt.Errorf("drive state %s: %w", p, StripPath(err))
	}
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		_ = os.Remove(tmp.Name()) // best effort: err is the one to report
		return fmt.Errorf("drive state %s: %w", p, StripPath(err))
	}
	return SyncDir(l.dir)
}
