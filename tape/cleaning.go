package tape

import (
	"encoding/binary"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Cleaning. A cartridge whose barcode starts with CLN (the label of every
// LTO cleaning cartridge, and what libraries and backup software look
// for) is a cleaning cartridge. Loading one cleans the drive:
//
//   - the drive is NOT READY, 30/03 CLEANING CARTRIDGE INSTALLED, for
//     Config.CleanTime; the cartridge shows in Stats (the library sees its
//     drive element full);
//   - then the drive has been cleaned: TapeAlert flags 20 (Clean Now) and
//     21 (Clean Periodic) clear, the count of loads since the last
//     cleaning restarts, and the drive unloads the cartridge itself: it
//     waits in the drive, unloaded, for the robot or the operator (3A/00);
//   - a cleaning cartridge used Config.CleaningLife times (its load count,
//     which the cartridge keeps) is expired: the drive does not clean,
//     raises TapeAlert flag 22 (Expired Cleaning Media) and unloads it at
//     once. Flag 22 clears at the next load.
//
// With Config.CleanAfter set, the drive asks to be cleaned (flag 20) once
// that many data cartridges were loaded since its last cleaning; the flag
// stays set until a cleaning clears it, whoever reads the TapeAlert page.

// TapeAlert flags the drive raises (SSC-5 annex: TapeAlert flags).
const (
	alertCleanNow        = 20
	alertCleanPeriodic   = 21
	alertExpiredCleaning = 22
)

func alertBit(flag int) uint64 { return 1 << (flag - 1) }

// IsCleaningCartridge reports whether barcode names a cleaning cartridge.
func IsCleaningCartridge(barcode string) bool { return strings.HasPrefix(barcode, "CLN") }

// cleaning is a cleaning in progress.
type cleaning struct {
	barcode string
	uses    uint64
	timer   *time.Timer
}

// loadCleaning cleans the drive with cleaning cartridge m (Load, with d.mu
// held and the drive empty). m is closed before it returns: a cleaning
// reads nothing.
func (d *Drive) loadCleaning(barcode string, m Medium) {
	uses := uint64(0)
	if v, ok := m.Attribute(attrLoadCount); ok && len(v) == 8 {
		uses = binary.BigEndian.Uint64(v)
	}
	if err := m.Close(); err != nil {
		d.log.Warn("cleaning cartridge did not close", zap.String("medium", barcode), zap.Error(err))
	}
	d.alerts &^= alertBit(alertExpiredCleaning)
	life := d.cleaningLife()
	if uses > life {
		d.alerts |= alertBit(alertExpiredCleaning)
		d.log.Warn("cleaning cartridge expired: not cleaned, unloaded", zap.String("medium", barcode),
			zap.Uint64("uses", uses-1), zap.Uint64("life", life))
		return
	}
	d.clean = &cleaning{barcode: barcode, uses: uses}
	d.st.mu.Lock()
	d.st.barcode, d.st.loadTime = barcode, time.Now()
	d.st.mu.Unlock()
	d.log.Info("cleaning", zap.String("medium", barcode), zap.Uint64("use", uses), zap.Uint64("life", life),
		zap.Duration("time", d.cfg.CleanTime))
	if d.cfg.CleanTime <= 0 {
		d.cleaned(d.clean)
		return
	}
	c := d.clean
	c.timer = time.AfterFunc(d.cfg.CleanTime, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.cleaned(c)
	})
}

// cleaningLife is the uses of a cleaning cartridge (Config.CleaningLife,
// 0 meaning the default).
func (d *Drive) cleaningLife() uint64 {
	if d.cfg.CleaningLife == 0 {
		return DefaultCleaningLife
	}
	return uint64(d.cfg.CleaningLife)
}

// cleaned ends cleaning c (d.mu held), if it is still the drive's.
func (d *Drive) cleaned(c *cleaning) {
	if d.clean != c || d.closed {
		return
	}
	d.endCleaning()
	d.alerts &^= alertBit(alertCleanNow) | alertBit(alertCleanPeriodic)
	d.st.cleanNow.Store(false)
	d.loadsSinceClean = 0
	d.st.cleanings.Add(1)
	life := d.cleaningLife()
	d.log.Info("drive cleaned; cleaning cartridge unloaded", zap.String("medium", c.barcode),
		zap.Uint64("uses_left", life-c.uses))
}

// endCleaning stops the cleaning in progress (d.mu held): the cartridge
// is unloaded, the drive empty.
func (d *Drive) endCleaning() {
	if d.clean.timer != nil {
		d.clean.timer.Stop()
	}
	d.clean = nil
	d.st.mu.Lock()
	d.st.barcode, d.st.loadTime = "", time.Time{}
	d.st.mu.Unlock()
}

// countDataLoad counts a data cartridge load towards the next cleaning
// (Load, d.mu held).
func (d *Drive) countDataLoad() {
	d.alerts &^= alertBit(alertExpiredCleaning)
	d.loadsSinceClean++
	if d.cfg.CleanAfter > 0 && d.loadsSinceClean >= d.cfg.CleanAfter && d.alerts&alertBit(alertCleanNow) == 0 {
		d.alerts |= alertBit(alertCleanNow)
		d.st.cleanNow.Store(true)
		d.log.Warn("drive needs cleaning (TapeAlert 20, Clean Now)", zap.Int("loads_since_cleaning", d.loadsSinceClean))
	}
}
