package disk

import (
	"encoding/binary"

	"github.com/vscsid/vscsid/scsi"
)

// The commands about the logical unit rather than its blocks: READ
// CAPACITY, TEST UNIT READY, START STOP UNIT, PREVENT ALLOW MEDIUM REMOVAL,
// and the SPC ones that need the disk's state (REQUEST SENSE, MAINTENANCE
// IN).

// ---- READ CAPACITY(10/16), SBC-4 5.20–5.21 ----

// readCapacity10 reports the last LBA, or FFFFFFFFh when it does not fit
// (the initiator then uses READ CAPACITY(16)). PMI and the LBA field are
// obsolete in SBC-4 and ignored.
func (d *Disk) readCapacity10(cmd *scsi.Command) error {
	var b [8]byte
	binary.BigEndian.PutUint32(b[0:], uint32(min(d.blocks-1, 0xffffffff)))
	binary.BigEndian.PutUint32(b[4:], d.lbs)
	cmd.Data.Write(b[:]) //nolint:errcheck // allocation-length truncation
	return nil
}

// readCapacity16 returns the 32-byte parameter data, truncated to the
// ALLOCATION LENGTH (bytes 10..13).
func (d *Disk) readCapacity16(cmd *scsi.Command) error {
	var b [32]byte
	binary.BigEndian.PutUint64(b[0:], d.blocks-1)
	binary.BigEndian.PutUint32(b[8:], d.lbs)
	// Byte 12: RC BASIS 01b (the returned LBA is the last LBA of the
	// logical unit); P_TYPE 0, PROT_EN 0.
	b[12] = 0x01 << 4
	b[13] = d.cfg.PBExp // P_I_EXPONENT 0
	if d.cfg.lbp() {
		b[14] |= 0x80 // LBPME
		if d.cfg.LBPRZ {
			b[14] |= 0x40
		}
	}
	b[14] |= byte(d.cfg.LowestAligned>>8) & 0x3f
	b[15] = byte(d.cfg.LowestAligned)
	alloc := cmd.CDB.Uint32(10)
	cmd.Data.Write(b[:min(alloc, uint32(len(b)))]) //nolint:errcheck // truncation
	return nil
}

// ---- TEST UNIT READY, START STOP UNIT, PREVENT ALLOW, REQUEST SENSE ----

// testUnitReady is GOOD; the dispatcher answers NOT READY when stopped.
func (d *Disk) testUnitReady(*scsi.Command) error { return nil }

// startStopUnit (SBC-4 5.25): POWER CONDITION 0 with START=0 stops the
// unit (flushing unless NO_FLUSH) and START=1 starts it. LOEJ is refused:
// the medium is not removable. The power conditions ACTIVE, IDLE, STANDBY,
// LU_CONTROL and FORCE_IDLE_0/FORCE_STANDBY_0 are accepted without a
// model of power states.
func (d *Disk) startStopUnit(cmd *scsi.Command) error {
	b := cmd.CDB[4]
	switch b >> 4 {
	case 0x0:
		if b&0x02 != 0 {
			return scsi.InvalidField(4, 1)
		}
		start := b&0x01 != 0
		if !start && b&0x04 == 0 {
			if err := d.flush(); err != nil {
				return err
			}
		}
		d.stopped.Store(!start)
		return nil
	case 0x1, 0x2, 0x3, 0x7, 0xa, 0xb:
		return nil
	}
	return scsi.InvalidField(4, 7)
}

// preventAllow accepts any PREVENT value (byte 4 bits 1..0): the medium
// is not removable, so there is nothing to lock (SBC-4 5.14).
func (d *Disk) preventAllow(*scsi.Command) error { return nil }

// requestSense reports NOT READY 04/02 while stopped, else NO SENSE.
func (d *Disk) requestSense(cmd *scsi.Command) scsi.Response {
	var cur scsi.Sense
	if d.stopped.Load() {
		cur = senseNotReady
	}
	return d.RequestSense(cmd, cur)
}
