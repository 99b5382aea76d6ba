package disk

import (
	"encoding/binary"
	"math/bits"

	"github.com/vscsid/vscsid/scsi"
)

// VPD pages (payloads without the 4-byte page header, which scsi.SPC
// writes).

// appendBlockLimits is the Block Limits VPD page (B0h), SBC-4 6.6.4:
// page length 3Ch.
func (d *Disk) appendBlockLimits(b []byte) []byte {
	var p [60]byte // page bytes 4..63
	p[0] = 0x01    // WSNZ: WRITE SAME with NUMBER OF LOGICAL BLOCKS 0 is refused
	p[1] = byte(d.compareAndWriteMax())
	binary.BigEndian.PutUint16(p[2:], d.cfg.OptGran)
	binary.BigEndian.PutUint32(p[4:], d.cfg.MaxBlocks)
	binary.BigEndian.PutUint32(p[8:], d.cfg.OptBlocks)
	// p[12:16] MAXIMUM PREFETCH LENGTH 0.
	if d.cfg.LBPU {
		binary.BigEndian.PutUint32(p[16:], d.cfg.UnmapMaxBlocks)
		binary.BigEndian.PutUint32(p[20:], d.cfg.UnmapMaxDesc)
	}
	if d.cfg.lbp() {
		binary.BigEndian.PutUint32(p[24:], d.cfg.UnmapGran)
		// UGAVALID + UNMAP GRANULARITY ALIGNMENT: the first LBA on an
		// unmap granule boundary, from the lowest aligned LBA.
		binary.BigEndian.PutUint32(p[28:], 1<<31|uint32(d.cfg.LowestAligned)%d.cfg.UnmapGran)
	}
	binary.BigEndian.PutUint64(p[32:], d.cfg.MaxWSBlocks)
	if d.cfg.AtomicWR {
		binary.BigEndian.PutUint32(p[40:], d.cfg.AtomicMax)   // MAXIMUM ATOMIC TRANSFER LENGTH
		binary.BigEndian.PutUint32(p[44:], d.cfg.AtomicAlign) // ATOMIC ALIGNMENT
		binary.BigEndian.PutUint32(p[48:], d.cfg.AtomicGran)  // ATOMIC TRANSFER LENGTH GRANULARITY
		// p[52:60] MAXIMUM ATOMIC TRANSFER LENGTH WITH ATOMIC BOUNDARY
		// and MAXIMUM ATOMIC BOUNDARY SIZE 0: no boundaries, every
		// atomic write is written as one.
	}
	return append(b, p[:]...)
}

// appendBlockCharacteristics is the Block Device Characteristics VPD page
// (B1h), SBC-4 6.6.2: page length 3Ch.
func (d *Disk) appendBlockCharacteristics(b []byte) []byte {
	var p [60]byte
	binary.BigEndian.PutUint16(p[0:], d.cfg.Rotation) // MEDIUM ROTATION RATE
	// p[2] PRODUCT TYPE 0: not indicated.
	p[3] = byte(d.cfg.FormFactor) & 0x0f // WABEREQ 0, WACEREQ 0
	// p[4]: ZONED (bits 5..4) 01b for a host-aware disk, else 00b (a
	// host-managed disk says so by its peripheral device type); FUAB 0,
	// VBULS 0.
	if d.cfg.Zoned == ZonedHostAware {
		p[4] = 0x01 << 4
	}
	return append(b, p[:]...)
}

// appendProvisioning is the Logical Block Provisioning VPD page (B2h),
// SBC-4 6.6.6: page length 4, no provisioning group descriptor.
func (d *Disk) appendProvisioning(b []byte) []byte {
	var p [4]byte
	// p[0] THRESHOLD EXPONENT 0: thresholds not supported.
	if d.cfg.LBPU {
		p[1] |= 0x80
	}
	if d.cfg.LBPWS {
		p[1] |= 0x40
	}
	if d.cfg.LBPWS10 {
		p[1] |= 0x20
	}
	if d.cfg.LBPRZ {
		p[1] |= 0x01 << 2 // LBPRZ 001b: unmapped blocks read as zeros
	}
	// ANC_SUP 0, DP 0. PROVISIONING TYPE 010b: thin (the RAM store
	// allocates on write and frees on unmap).
	p[2] = 0x02
	return append(b, p[:]...)
}

// Mode pages (SBC-4 6.5). Each Append writes the whole page with its
// header for the page control asked; PS is 0 (pages are not saveable, so
// saved values are the defaults).

// appendErrorRecovery is the Read-Write Error Recovery mode page (01h):
// AWRE and ARRE set, no retries reported. Nothing is changeable.
func appendErrorRecovery(b []byte, pc scsi.PageControl) []byte {
	var p [12]byte
	p[0], p[1] = 0x01, 0x0a
	if pc != scsi.PCChangeable {
		p[2] = 0xc0 // AWRE, ARRE
	}
	return append(b, p[:]...)
}

// cachingMask is the changeable mask of the caching page: WCE only.
var cachingMask = [20]byte{2: 0x04}

// appendCaching is the Caching mode page (08h): WCE (changeable),
// RCD 0, no prefetch or segment parameters.
func (d *Disk) appendCaching(b []byte, pc scsi.PageControl) []byte {
	var p [20]byte
	p[0], p[1] = 0x08, 0x12
	switch pc {
	case scsi.PCChangeable:
		p[2] = cachingMask[2]
	case scsi.PCDefault, scsi.PCSaved:
		if d.cfg.WCE {
			p[2] |= 0x04
		}
	default:
		if d.wce.Load() {
			p[2] |= 0x04
		}
	}
	return append(b, p[:]...)
}

func (d *Disk) selectCaching(page []byte) error {
	cur := d.appendCaching(d.pageBuf[:0], scsi.PCCurrent)
	if err := checkSelect(page, cur, cachingMask[:]); err != nil {
		return err
	}
	d.wce.Store(page[2]&0x04 != 0)
	return nil
}

// controlMask is the changeable mask of the control page: D_SENSE only.
var controlMask = [12]byte{2: 0x04}

// appendControl is the Control mode page (0Ah), SPC-5 7.5.10: GLTSD=1 (no
// implicit log parameter saving), D_SENSE (changeable), everything else 0:
// QUEUE ALGORITHM MODIFIER 0 (restricted reordering: commands run in ring
// order), QERR 0, TAS 0, no busy timeout.
func (d *Disk) appendControl(b []byte, pc scsi.PageControl) []byte {
	var p [12]byte
	p[0], p[1] = 0x0a, 0x0a
	switch pc {
	case scsi.PCChangeable:
		p[2] = controlMask[2]
	case scsi.PCDefault, scsi.PCSaved:
		p[2] = 0x02
		if d.cfg.DSense {
			p[2] |= 0x04
		}
	default:
		p[2] = 0x02
		if d.SenseFormat == scsi.DescriptorFormat {
			p[2] |= 0x04
		}
	}
	return append(b, p[:]...)
}

func (d *Disk) selectControl(page []byte) error {
	cur := d.appendControl(d.pageBuf[:0], scsi.PCCurrent)
	if err := checkSelect(page, cur, controlMask[:]); err != nil {
		return err
	}
	if page[2]&0x04 != 0 {
		d.SenseFormat = scsi.DescriptorFormat
	} else {
		d.SenseFormat = scsi.FixedFormat
	}
	return nil
}

// checkSelect validates a page sent by MODE SELECT against the current
// page: same PAGE LENGTH, and no bit outside the changeable mask differs
// (SPC-5 6.12: INVALID FIELD IN PARAMETER LIST). Byte 0 (PS, SPF, page
// code) is the framework's. Offsets are relative to the page.
func checkSelect(page, cur, mask []byte) error {
	if len(page) < 2 || page[1] != cur[1] || len(page) != len(cur) {
		return scsi.InvalidParameter(1, -1)
	}
	for i := 2; i < len(cur); i++ {
		if diff := (page[i] ^ cur[i]) &^ mask[i]; diff != 0 {
			return scsi.InvalidParameter(i, bits.Len8(diff)-1)
		}
	}
	return nil
}

// deviceSpecific is the DEVICE-SPECIFIC PARAMETER of the mode parameter
// header (SBC-4 6.5.1): WP (bit 7) and DPOFUA (bit 4: DPO and FUA are
// accepted in READ/WRITE).
func (d *Disk) deviceSpecific() uint8 {
	v := uint8(0x10)
	if d.cfg.WP {
		v |= 0x80
	}
	return v
}

// appendBlockDescriptor appends the short (8-byte) or long LBA (16-byte)
// mode parameter block descriptor (SBC-4 6.5.2): NUMBER OF LOGICAL BLOCKS
// (FFFFFFFFh in the short form when it does not fit) and LOGICAL BLOCK
// LENGTH.
func (d *Disk) appendBlockDescriptor(b []byte, long bool) []byte {
	if long {
		var p [16]byte
		binary.BigEndian.PutUint64(p[0:], d.blocks)
		binary.BigEndian.PutUint32(p[12:], d.lbs)
		return append(b, p[:]...)
	}
	var p [8]byte
	binary.BigEndian.PutUint32(p[0:], uint32(min(d.blocks, 0xffffffff)))
	binary.BigEndian.PutUint32(p[4:], d.lbs) // byte 4 reserved: lbs < 2^24
	return append(b, p[:]...)
}

// selectBlockDescriptor accepts a block descriptor that keeps the geometry:
// NUMBER OF LOGICAL BLOCKS 0 or the current value, and the current block
// length. Offsets in errors are relative to the descriptor.
func (d *Disk) selectBlockDescriptor(desc []byte, long bool) error {
	var n uint64
	var lbs uint32
	var lenOff int
	switch {
	case long && len(desc) >= 16:
		n, lbs, lenOff = binary.BigEndian.Uint64(desc), binary.BigEndian.Uint32(desc[12:]), 12
		if n != 0 && n != d.blocks {
			return scsi.InvalidParameter(0, -1)
		}
	case !long && len(desc) >= 8:
		n, lbs, lenOff = uint64(binary.BigEndian.Uint32(desc)), binary.BigEndian.Uint32(desc[4:])&0xffffff, 5
		if n != 0 && n != min(d.blocks, 0xffffffff) {
			return scsi.InvalidParameter(0, -1)
		}
	default:
		return scsi.InvalidParameter(0, -1)
	}
	if lbs != d.lbs {
		return scsi.InvalidParameter(lenOff, -1)
	}
	return nil
}
