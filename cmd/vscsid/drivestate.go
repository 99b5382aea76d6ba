package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/cartridge"
)

// A tape drive's cartridge outlives the daemon: restarting vscsid (an
// upgrade, a crash, systemd's watchdog) must not unload the tape a backup
// job is using. The drive's state is kept next to the cartridges, in
// <media>/.drive-<name>.json, written atomically (temporary file, fsync,
// rename, fsync of the directory) whenever the loaded cartridge changes:
// at once for loads and unloads through vscsid (D-Bus ChangeMedium, the
// control socket) and within a second for those by SCSI (mt load/offline).
//
// At start the saved cartridge is loaded instead of the cfgstring's
// barcode=, unless that barcode= changed since the state was saved (the
// operator edited the config: the config wins).
//
// A clean stop (SIGTERM, systemctl stop or restart) also saves where the
// cartridge was and the block size (tape.Drive.ClosedState, taken after
// the last command), and the next start puts the drive back there
// (tape.Drive.Resume) and forgets it at once, so that a later crash does
// not reuse a stale position. After a crash the drive starts at the
// beginning of the tape in the configured block size, as a real drive
// after a power cycle. Either way it reports UNIT ATTENTION 29/00 (power
// on or reset) to its first command: st marks its position unknown and,
// with position_lost_in_reset (Linux 6.6 and later), refuses I/O until the
// application repositions; an st that does not (6.1) carries on, and
// after a clean restart finds the tape where it left it.

// driveState is the saved state of one drive.
type driveState struct {
	// Barcode is the cartridge in the drive; "" for an empty drive.
	Barcode string `json:"barcode"`
	// ConfigBarcode is the cfgstring's barcode= when this was saved.
	ConfigBarcode string    `json:"config_barcode"`
	Saved         time.Time `json:"saved"`
	// Resume is the position and block size at a clean stop; nil after
	// a crash and once a start has used it.
	Resume *tape.Snapshot `json:"resume,omitempty"`
}

func driveStatePath(media, name string) string {
	return filepath.Join(media, ".drive-"+name+".json")
}

// loadDriveState reads the saved state; ok is false when there is none.
func loadDriveState(media, name string) (s driveState, ok bool, err error) {
	p := driveStatePath(media, name)
	b, err := os.ReadFile(p)
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

// saveDriveState writes s atomically.
func saveDriveState(media, name string, s driveState) error {
	p := driveStatePath(media, name)
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(media, ".drive-"+name+".*.tmp")
	if err != nil {
		return fmt.Errorf("drive state: %w", err)
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
		os.Remove(tmp.Name())
		return fmt.Errorf("drive state %s: %w", p, err)
	}
	if d, err := os.Open(media); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return fmt.Errorf("drive state %s: sync directory: %w", p, err)
		}
	}
	return nil
}

// restoreState returns the barcode to load at start: the saved one when
// the config's barcode= is what it was when the state was saved and the
// cartridge still exists, else the config's; and the state to resume,
// when a clean stop saved one for that cartridge.
func restoreState(c tape.Config, name string, log *zap.Logger) (string, *tape.Snapshot) {
	s, ok, err := loadDriveState(c.Media, name)
	if err != nil {
		log.Warn("ignoring the saved drive state", zap.Error(err))
		return c.Barcode, nil
	}
	if !ok || s.ConfigBarcode != c.Barcode {
		return c.Barcode, nil
	}
	resume := s.Resume
	if resume != nil && resume.Barcode != s.Barcode {
		resume = nil
	}
	if s.Barcode == c.Barcode {
		return c.Barcode, resume
	}
	if s.Barcode != "" {
		if _, err := os.Stat(cartridge.CartridgePath(c.Media, s.Barcode)); err != nil {
			log.Warn("the cartridge of the saved drive state is gone; loading the configured one",
				zap.String("medium", s.Barcode), zap.Error(err))
			return c.Barcode, nil
		}
	}
	log.Info("restoring the cartridge the drive had before the restart", zap.String("medium", s.Barcode),
		zap.String("configured", c.Barcode), zap.Time("saved", s.Saved))
	return s.Barcode, resume
}

// resumeDrive puts a drive that has just loaded its cartridge back where
// a clean stop left it, then saves the state without the position: from
// now on only the next clean stop may set one.
func resumeDrive(d *tape.Drive, snap *tape.Snapshot, c tape.Config, name string, log *zap.Logger) {
	if snap == nil {
		return
	}
	if err := d.Resume(*snap); err != nil {
		log.Warn("cannot resume the position of the clean stop; the drive starts at the beginning of the tape", zap.Error(err))
	} else {
		log.Info("resumed the position of the clean stop", zap.String("medium", snap.Barcode),
			zap.Int("partition", snap.Partition), zap.Uint64("object", snap.Object), zap.Uint32("block_size", snap.BlockSize))
	}
	s := driveState{Barcode: snap.Barcode, ConfigBarcode: c.Barcode, Saved: time.Now().UTC()}
	if err := saveDriveState(c.Media, name, s); err != nil {
		log.Warn("cannot clear the resumed position from the drive state", zap.Error(err))
	}
}

// tapeTracker saves each drive's state when its cartridge changes.
type tapeTracker struct {
	mu   sync.Mutex
	last map[string]string // device → barcode last saved
}

type trackedTape struct {
	name, media, configBarcode string
	drive                      *tape.Drive
}

// note saves the state of t if its cartridge changed since the last save.
func (tr *tapeTracker) note(t trackedTape, log *zap.Logger) {
	barcode := t.drive.Stats().Barcode
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if last, ok := tr.last[t.name]; ok && last == barcode {
		return
	}
	s := driveState{Barcode: barcode, ConfigBarcode: t.configBarcode, Saved: time.Now().UTC()}
	if err := saveDriveState(t.media, t.name, s); err != nil {
		log.Warn("cannot save the drive state: a restart will load the configured cartridge", zap.String("device", t.name), zap.Error(err))
		return
	}
	if tr.last == nil {
		tr.last = map[string]string{}
	}
	tr.last[t.name] = barcode
}

// stopped saves the state of t's drive as its Close found it, with the
// position and block size (a clean stop). A drive closed empty keeps what
// note saved.
func (tr *tapeTracker) stopped(t trackedTape, log *zap.Logger) {
	snap, ok := t.drive.ClosedState()
	if !ok {
		return
	}
	s := driveState{Barcode: snap.Barcode, ConfigBarcode: t.configBarcode, Saved: time.Now().UTC(), Resume: &snap}
	if err := saveDriveState(t.media, t.name, s); err != nil {
		log.Warn("cannot save the drive state: a restart will start at the beginning of the tape", zap.String("device", t.name), zap.Error(err))
		return
	}
	log.Info("saved the drive's position for the next start", zap.String("device", t.name), zap.String("medium", snap.Barcode),
		zap.Int("partition", snap.Partition), zap.Uint64("object", snap.Object), zap.Uint32("block_size", snap.BlockSize))
}
