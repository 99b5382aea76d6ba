package tape

import "github.com/vscsid/vscsid/scsi"

// Position reports the drive's current logical position: partition, logical
// object number and file number (filemarks before the position), the values
// READ POSITION and st's MTIOCGET agree on. With no cartridge it reports
// zeros. Like HandleCommand it must be called from the goroutine that
// serves the drive (the fault-injection wrapper calls it before each
// command to match position rules).
func (d *Drive) Position() (partition int, object, file uint64) {
	if d.med == nil {
		return 0, 0, 0
	}
	p := d.med.Pos()
	return p.Partition, p.Object, p.File
}

// MediumBytes is the data bytes READ and WRITE have moved from and to
// the medium, after compression (fault.MediumCounter: the timing model's
// rate applies to them).
func (d *Drive) MediumBytes() uint64 { return d.st.mediumRead.Load() + d.st.mediumWritten.Load() }

// CurrentSenseFormat is the sense data format the drive answers in now
// (fixed, or descriptor after dsense=1 or D_SENSE in the control page).
func (d *Drive) CurrentSenseFormat() scsi.SenseFormat { return d.spc.SenseFormat }
