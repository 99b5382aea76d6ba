package tape

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"
)

// A tape drive's cartridge outlives the daemon: restarting it (an upgrade,
// a crash, systemd's watchdog) must not unload the tape a backup job is
// using. A drive opened with Open over a PersistentLibrary saves its state
// in that library whenever the loaded cartridge changes (LOAD UNLOAD,
// ChangeMedium, Unload) and, at a clean stop (Close), where the cartridge
// was, the block size and the rest of the mode parameters st had set
// (Snapshot).
//
// At the next Open the saved cartridge is loaded instead of the
// configuration's barcode=, unless that barcode= changed since the state
// was saved (the operator edited the configuration: it wins). A clean
// stop's state is resumed and forgotten at once, so that a later crash
// does not reuse it. After a clean stop the drive reports nothing (see
// Resume): to st a restart of the daemon under an open tape is a pause. After
// a crash the drive starts at the beginning of the tape in the configured
// block size, as a real drive after a power cycle, and reports UNIT
// ATTENTION 29/00 (power on or reset) to its first command: st marks its
// position unknown and, with position_lost_in_reset (Linux 6.6 and later),
// refuses I/O until the application repositions.

// DriveState is the saved state of one drive.
type DriveState struct {
	// Barcode is the cartridge in the drive; "" for an empty drive.
	Barcode string `json:"barcode"`
	// ConfigBarcode is the configuration's barcode= when this was saved.
	ConfigBarcode string    `json:"config_barcode"`
	Saved         time.Time `json:"saved"`
	// Resume is the position and mode parameters at a clean stop; nil after
	// a crash and once a start has used it.
	Resume *Snapshot `json:"resume,omitempty"`
}

// A PersistentLibrary is a Library whose cartridges and drive states
// outlive the process (the file-backed media directory).
type PersistentLibrary interface {
	Library
	// Check returns nil if the cartridge barcode exists, else an error
	// that wraps fs.ErrNotExist (or says the barcode is invalid).
	Check(barcode string) error
	// Ensure creates the cartridge barcode with default settings if it
	// does not exist; created reports whether it did. An existing
	// cartridge is never touched.
	Ensure(barcode string) (created bool, err error)
	// LoadDriveState returns the state saved for the drive named drive;
	// ok is false when there is none.
	LoadDriveState(drive string) (s DriveState, ok bool, err error)
	// SaveDriveState replaces the drive's state atomically and durably.
	SaveDriveState(drive string, s DriveState) error
}

// A RestoreDecision is what a starting drive loads and where it resumes.
type RestoreDecision struct {
	Barcode string    // the cartridge to load; "" for none
	Resume  *Snapshot // the clean stop's state to resume, or nil
	// Note says why the saved state was not used as it was; "" when it
	// was, or when there was none.
	Note string
}

// Restore is the restore policy, a pure function: given the saved state
// (ok false when there is none), the configuration's barcode= and whether
// a cartridge exists (nil error: it does), it says what the drive loads
// at start. The saved cartridge wins over the configured one only while
// the configured one is what it was when the state was saved, and only if
// it still exists; a resume state counts only for the cartridge it was
// taken of.
func Restore(saved DriveState, ok bool, configured string, check func(barcode string) error) RestoreDecision {
	if !ok {
		return RestoreDecision{Barcode: configured}
	}
	if saved.ConfigBarcode != configured {
		return RestoreDecision{Barcode: configured, Note: "the configured cartridge changed since the state was saved; loading it"}
	}
	resume := saved.Resume
	if resume != nil && resume.Barcode != saved.Barcode {
		resume = nil
	}
	if saved.Barcode == configured {
		return RestoreDecision{Barcode: configured, Resume: resume}
	}
	if saved.Barcode != "" {
		if err := check(saved.Barcode); err != nil {
			return RestoreDecision{Barcode: configured, Note: fmt.Sprintf("the cartridge of the saved state is gone (%v); loading the configured one", err)}
		}
	}
	return RestoreDecision{Barcode: saved.Barcode, Resume: resume}
}

// persistence is a drive's link to its PersistentLibrary.
type persistence struct {
	lib           PersistentLibrary
	configBarcode string
	saved         string // the barcode last saved
	hasSaved      bool
}

// Open returns the drive name over lib with the state the library saved
// for it: it creates the configured cartridge if it does not exist, loads
// the cartridge Restore picks, resumes a clean stop's position, and from
// then on saves the drive's state in lib. With a lib that is not a
// PersistentLibrary (or nil, for cfg.Memory) it is New.
func Open(name string, cfg Config, lib Library, log *zap.Logger) (*Drive, error) {
	pl, ok := lib.(PersistentLibrary)
	if !ok {
		return New(name, cfg, lib, log)
	}
	if log == nil {
		log = zap.NewNop()
	}
	configured := cfg.Barcode
	if configured != "" {
		created, err := pl.Ensure(configured)
		if err != nil {
			return nil, fmt.Errorf("vtape %s: cartridge %s: %w", name, configured, err)
		}
		if created {
			log.Info("created cartridge", zap.String("medium", configured))
		}
	}
	saved, found, err := pl.LoadDriveState(name)
	if err != nil {
		log.Warn("ignoring the saved drive state", zap.Error(err))
		found = false
	}
	dec := Restore(saved, found, configured, pl.Check)
	switch {
	case dec.Note != "":
		log.Warn(dec.Note, zap.String("saved", saved.Barcode), zap.String("configured", configured))
	case dec.Barcode != configured:
		log.Info("restoring the cartridge the drive had before the restart", zap.String("medium", dec.Barcode),
			zap.String("configured", configured), zap.Time("saved", saved.Saved))
	}
	cfg.Barcode = dec.Barcode
	d, err := New(name, cfg, lib, log)
	degraded := false
	if err != nil && cfg.Barcode != "" {
		// The cartridge, not the drive: a damaged or unreadable image
		// must not keep the drive, and with it the daemon's other
		// devices, down. The drive starts empty and says why.
		bad := cfg.Barcode
		cfg.Barcode = ""
		var err2 error
		if d, err2 = New(name, cfg, lib, log); err2 == nil {
			log.Warn("the cartridge cannot be loaded; the drive starts empty (fix or replace the image, then load it or restart)",
				zap.String("medium", bad), zap.Error(err))
			degraded, err, dec.Resume = true, nil, nil
		}
	}
	if err != nil {
		return nil, err
	}
	if s := dec.Resume; s != nil {
		if err := d.Resume(*s); err != nil {
			log.Warn("cannot resume the position of the clean stop; the drive starts at the beginning of the tape", zap.Error(err))
		} else {
			log.Info("resumed the position of the clean stop", zap.String("medium", s.Barcode),
				zap.Int("partition", s.Partition), zap.Uint64("object", s.Object), zap.Uint32("block_size", s.BlockSize))
		}
	}
	d.mu.Lock()
	d.persist = &persistence{lib: pl, configBarcode: configured}
	if !degraded { // an empty state saved now would keep the drive empty after the image is fixed
		d.save() // without the resumed position: only the next clean stop sets one
	}
	d.mu.Unlock()
	return d, nil
}

// save records the cartridge in the drive if it changed since the last
// save; called with d.mu held after every load and unload. A failure is
// logged, not returned: the command that changed the cartridge succeeded,
// only the next restart will load the configured cartridge.
func (d *Drive) save() {
	p := d.persist
	if p == nil || d.closed || (p.hasSaved && p.saved == d.barcode) {
		return
	}
	s := DriveState{Barcode: d.barcode, ConfigBarcode: p.configBarcode, Saved: time.Now().UTC()}
	if err := p.lib.SaveDriveState(d.name, s); err != nil {
		d.log.Warn("cannot save the drive state: a restart will load the configured cartridge", zap.Error(err))
		return
	}
	p.saved, p.hasSaved = d.barcode, true
}

// saveClosed records the clean stop's state (ClosedState) with its
// position; called with d.mu held by Close after it unloaded.
func (d *Drive) saveClosed() {
	p := d.persist
	if p == nil || d.closedState.Barcode == "" {
		return
	}
	snap := d.closedState
	s := DriveState{Barcode: snap.Barcode, ConfigBarcode: p.configBarcode, Saved: time.Now().UTC(), Resume: &snap}
	if err := p.lib.SaveDriveState(d.name, s); err != nil {
		d.log.Warn("cannot save the drive state: a restart will start at the beginning of the tape", zap.Error(err))
		return
	}
	d.log.Info("saved the drive's position for the next start", zap.String("medium", snap.Barcode),
		zap.Int("partition", snap.Partition), zap.Uint64("object", snap.Object), zap.Uint32("block_size", snap.BlockSize))
}

// Change puts the cartridge barcode in the drive, the operator's way
// (targetcli's changemedium, vscsictl load): whatever is in the drive is
// ejected first; an empty barcode only ejects. A cartridge the library
// does not have is refused before anything is ejected. A drive whose
// initiator prevents medium removal refuses with ErrRemovalPrevented.
func (d *Drive) Change(barcode string) error {
	if barcode != "" {
		if pl, ok := d.lib.(PersistentLibrary); ok {
			if err := pl.Check(barcode); err != nil {
				return fmt.Errorf("vtape %s: load %s: %w", d.name, barcode, err)
			}
		}
	}
	if err := d.Unload(); err != nil && !errors.Is(err, ErrNoMedium) {
		return err
	}
	if barcode == "" {
		return nil
	}
	return d.Load(barcode)
}

// ChangeMediumBarcode extracts the barcode from targetcli's changemedium
// cfgstring: either a whole vtape cfgstring (its barcode=, none = eject)
// or just "barcode=<b>" (or "" to eject). Anything else is an error that
// names the problem.
func ChangeMediumBarcode(cfg string) (string, error) {
	if c, err := ParseConfig(cfg); err == nil {
		return c.Barcode, nil
	}
	if cfg == "" {
		return "", nil
	}
	k, v, ok := strings.Cut(cfg, "=")
	if !ok || k != "barcode" || strings.ContainsAny(v, ";=") {
		_, err := ParseConfig(cfg)
		return "", fmt.Errorf("changemedium wants barcode=<barcode> or a vtape cfgstring: %w", err)
	}
	return v, nil
}
