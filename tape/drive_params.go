package tape

import (
	"encoding/binary"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
)

// This file is the drive's other parameter commands: READ BLOCK LIMITS and
// REPORT DENSITY SUPPORT (what the drive records), FORMAT MEDIUM
// (partitioning as the medium partition page set it up), SET CAPACITY,
// SEND DIAGNOSTIC's IBM page and READ BUFFER.

// readBlockLimits is READ BLOCK LIMITS (SSC-5 6.4): GRANULARITY 0 (any
// length), MAXIMUM BLOCK LENGTH LIMIT (bytes 1-3) = max_block, MINIMUM
// (bytes 4-5) = min_block. st rejects variable-mode writes outside them.
// MLOI=1 (the 20-byte maximum logical object identifier form) is refused.
func (d *Drive) readBlockLimits(cmd *scsi.Command) scsi.Response {
	if cmd.CDB.Byte(1)&0x01 != 0 {
		return check(scsi.InvalidFieldSense(1, 0))
	}
	var b [6]byte
	put24(b[1:4], d.cfg.MaxBlock)
	binary.BigEndian.PutUint16(b[4:], uint16(min(d.cfg.MinBlock, 0xffff)))
	scsi.WriteParameterData(cmd.Data, b[:], len(b))
	return scsi.Good
}

// reportDensity is REPORT DENSITY SUPPORT (SSC-5 7.7): byte 1 MEDIUM TYPE
// (bit 1) selects medium type descriptors instead of density descriptors,
// MEDIA (bit 0) only what the loaded cartridge supports (NOT READY without
// one); ALLOCATION LENGTH bytes 7-8.
func (d *Drive) reportDensity(cmd *scsi.Command) scsi.Response {
	b1 := cmd.CDB.Byte(1)
	media, mediumType := b1&0x01 != 0, b1&0x02 != 0
	if media && d.state != stateReady {
		return check(d.notReadySense())
	}
	b := extendZero(d.buf[:0], 4)
	for i := range d.pers.Densities {
		den := &d.pers.Densities[i]
		if media && den.Code != d.mediumDensity() {
			continue
		}
		if mediumType {
			b = d.appendMediumType(b, den, false)
			if d.pers.WORM && (!media || d.info.WORM) && den.Code != densityGeneric.Code {
				b = d.appendMediumType(b, den, true)
			}
			continue
		}
		b = d.appendDensity(b, den, media)
	}
	binary.BigEndian.PutUint16(b[0:], uint16(len(b)-2))
	d.buf = b
	scsi.WriteParameterData(cmd.Data, b, int(cmd.CDB.Uint16(7)))
	return scsi.Good
}

// appendDensity appends a 52-byte density support data block descriptor.
// With MEDIA=1 the capacity is the loaded cartridge's and WRTOK says
// whether this cartridge can be written.
func (d *Drive) appendDensity(b []byte, den *Density, media bool) []byte {
	b = extendZero(b, 52)
	p := b[len(b)-52:]
	p[0], p[1] = den.Code, den.Code
	wrtok, capMB := den.Writable, den.CapacityMB
	if media {
		wrtok = wrtok && !d.info.WriteProtected
		capMB = uint32(min(d.totalCapacity()/1e6, 0xffffffff))
	}
	if wrtok {
		p[2] |= 0x80
	}
	if den.Code == d.pers.DefaultDensity().Code || media {
		p[2] |= 0x20 // DEFLT
	}
	put24(p[5:8], den.BitsPerMM)
	binary.BigEndian.PutUint16(p[8:], den.Width)
	binary.BigEndian.PutUint16(p[10:], den.Tracks)
	binary.BigEndian.PutUint32(p[12:], capMB)
	putASCII(p[16:24], den.Organization)
	putASCII(p[24:32], den.Name)
	putASCII(p[32:52], den.Description)
	return b
}

// appendMediumType appends a 56-byte medium type descriptor: MEDIUM TYPE
// (00h data, 01h WORM), DESCRIPTOR LENGTH 52, one primary density code,
// MEDIA WIDTH, MEDIUM LENGTH, assigning organization, name, description.
func (d *Drive) appendMediumType(b []byte, den *Density, worm bool) []byte {
	b = extendZero(b, 56)
	p := b[len(b)-56:]
	name, desc := den.MediumName, den.MediumDesc
	if worm {
		p[0] = 0x01
		if len(name) > 4 {
			name = name[:4] + "WORM"
		}
		desc = replaceWord(desc, "Data", "WORM")
	}
	binary.BigEndian.PutUint16(p[2:], 52)
	p[4] = 1
	p[5] = den.Code
	binary.BigEndian.PutUint16(p[14:], den.Width)
	binary.BigEndian.PutUint16(p[16:], den.MediumLength)
	putASCII(p[20:28], den.Organization)
	putASCII(p[28:36], name)
	putASCII(p[36:56], desc)
	return b
}

func replaceWord(s, old, repl string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + repl + s[i+len(old):]
		}
	}
	return s
}

// putASCII copies v into dst, space-padded (SPC-5 4.3.1).
func putASCII(dst []byte, v string) {
	for i := range dst {
		if i < len(v) && v[i] >= 0x20 && v[i] < 0x7f {
			dst[i] = v[i]
		} else {
			dst[i] = ' '
		}
	}
}

// formatMedium is FORMAT MEDIUM (SSC-5 7.2): byte 1 VERIFY (bit 1), IMMED
// (bit 0); FORMAT (byte 2 bits 3..0): 0h one partition, 1h partition as the
// medium partition page says, 2h both; TRANSFER LENGTH (bytes 3-4) must be
// 0 (no format parameters). Only at the beginning of partition 0 (else
// ILLEGAL REQUEST 3B/0C); write protected → 27/00; WORM with data → 30/0C.
// All data is lost.
func (d *Drive) formatMedium(cmd *scsi.Command) scsi.Response {
	c := cmd.CDB
	format := c.Byte(2) & 0x0f
	if format > formatBoth {
		return check(scsi.InvalidFieldSense(2, 3))
	}
	if c.Uint16(3) != 0 {
		return check(scsi.InvalidFieldSense(3, -1))
	}
	if d.info.WriteProtected {
		return check(dataProtect(scsi.WriteProtected))
	}
	if p := d.med.Pos(); p.Partition != 0 || p.Object != 0 {
		return check(illegal(scsi.PositionPastBeginningOfMedium))
	}
	sizes := []int64{0}
	if format != formatDefault {
		switch {
		case d.mode.pending != nil:
			sizes = d.mode.pending
		default:
			sizes = d.info.Capacity[:min(d.info.Partitions, len(d.info.Capacity))]
			if len(sizes) == 1 {
				sizes = []int64{0}
			}
		}
	}
	if err := d.med.Format(sizes); err != nil {
		return d.fault(err, dirWrite)
	}
	if r, ok := d.reformatted(); !ok {
		return r
	}
	d.log.Info("cartridge formatted", zap.String("medium", d.barcode), zap.Int("partitions", d.info.Partitions))
	return scsi.Good
}

// READ BUFFER sizes: the data buffer (what LTFS dumps on errors) and the
// echo buffer.
const (
	readBufferSize = 1 << 20
	echoBufferSize = 4096
)

// setCapacity is SET CAPACITY (SSC-5 7.11): byte 1 IMMED (bit 0; the
// command completes before it returns anyway), CAPACITY PROPORTION VALUE
// bytes 3-4. The medium is formatted as one partition of value/65535 of
// its native capacity (FFFFh, what LTFS sends before it formats: all of
// it), which READ POSITION, LOG SENSE 17h/31h and REPORT DENSITY SUPPORT
// with MEDIA=1 then report. As for FORMAT MEDIUM, only at the beginning
// of partition 0 (else ILLEGAL REQUEST 3B/0C), write protected → 27/00,
// WORM with data → 30/0C, and all data is lost. A later FORMAT MEDIUM
// lays its partitions out in the native capacity again. A proportion too
// small for a partition → 24/00 at byte 3, the medium left formatted at
// its full capacity.
func (d *Drive) setCapacity(cmd *scsi.Command) scsi.Response {
	v := int64(cmd.CDB.Uint16(3))
	if d.info.WriteProtected {
		return check(dataProtect(scsi.WriteProtected))
	}
	if p := d.med.Pos(); p.Partition != 0 || p.Object != 0 {
		return check(illegal(scsi.PositionPastBeginningOfMedium))
	}
	if err := d.med.Format([]int64{0}); err != nil {
		return d.fault(err, dirWrite)
	}
	var refused error
	if v != 0xffff {
		var native int64
		for _, c := range d.med.Info().Capacity {
			native += c
		}
		if err := d.med.Format([]int64{max(native*v/0xffff, 1)}); err != nil {
			refused = err
			if _, ok := scsi.SenseOf(err); !ok {
				refused = scsi.InvalidField(3, -1) // the medium's minimum partition size
			}
		}
	}
	if r, ok := d.reformatted(); !ok {
		return r
	}
	if refused != nil {
		return d.fault(refused, dirWrite)
	}
	d.log.Info("cartridge capacity set", zap.String("medium", d.barcode), zap.Int64("proportion", v), zap.Int64("bytes", d.totalCapacity()))
	return scsi.Good
}

// reformatted brings the drive in step with a medium that FORMAT MEDIUM or
// SET CAPACITY formatted: no pending partitioning, the new layout, a new
// VOLUME CHANGE REFERENCE, the position at BOP of partition 0.
func (d *Drive) reformatted() (scsi.Response, bool) {
	d.mode.pending = nil
	d.info = d.mediumInfo(d.med, d.barcode)
	d.vcrDone = false
	d.bumpVCR()
	if err := d.seek(0, 0); err != nil {
		return d.fault(err, dirNone), false
	}
	d.notePos()
	d.noteUsed()
	return scsi.Good, true
}

// IBM LTO vendor diagnostics: SEND DIAGNOSTIC page 80h, whose bytes 4-5
// are a diagnostic ID; 0160h forces a drive dump (what LTFS's IBM backend
// sends before it reads the dump with READ BUFFER).
const (
	diagIBM       = 0x80
	diagForceDump = 0x0160
)

// sendIBMDiagnostic performs diagnostic page 80h: the forced dump is
// accepted (the dump READ BUFFER returns is always there); another
// diagnostic ID is refused with 26/00 at byte 4.
func (d *Drive) sendIBMDiagnostic(page []byte) error {
	if len(page) < 6 || binary.BigEndian.Uint16(page[4:]) != diagForceDump {
		return scsi.InvalidParameter(4, -1)
	}
	return nil
}

// readBuffer is READ BUFFER (SPC-5 6.23). It must not fail for what LTFS
// sends, or LTFS's error-dump path (SEND DIAGNOSTIC forced dump, then
// READ BUFFER mode 03h and 02h of buffer 01h) loops until it is OOM-killed
// (mhvtl 7f33c60). Modes: 00h header + data, 02h data, 03h descriptor, 0Ah echo
// buffer, 0Bh echo buffer descriptor; the buffer reads as zeros. BUFFER
// OFFSET bytes 3-5, ALLOCATION LENGTH bytes 6-8.
func (d *Drive) readBuffer(cmd *scsi.Command) scsi.Response {
	c := cmd.CDB
	mode := c.Byte(1) & 0x1f
	off := int(c.Uint24(3))
	alloc := int(c.Uint24(6))
	switch mode {
	case 0x00:
		var h [4]byte
		put24(h[1:], readBufferSize)
		n := scsi.WriteParameterData(cmd.Data, h[:], alloc)
		if alloc > n {
			cmd.Data.WriteZeros(min(alloc-n, readBufferSize))
		}
	case 0x02:
		if off > readBufferSize {
			return check(scsi.InvalidFieldSense(3, -1))
		}
		cmd.Data.WriteZeros(min(alloc, readBufferSize-off))
	case 0x03:
		var h [4]byte // OFFSET BOUNDARY 0 (byte), BUFFER CAPACITY
		put24(h[1:], readBufferSize)
		scsi.WriteParameterData(cmd.Data, h[:], alloc)
	case 0x0a:
		if off > echoBufferSize {
			return check(scsi.InvalidFieldSense(3, -1))
		}
		cmd.Data.WriteZeros(min(alloc, echoBufferSize-off))
	case 0x0b:
		var h [4]byte
		binary.BigEndian.PutUint16(h[2:], echoBufferSize)
		scsi.WriteParameterData(cmd.Data, h[:], alloc)
	default:
		return check(scsi.InvalidFieldSense(1, 4))
	}
	return scsi.Good
}

// testUnitReady is TEST UNIT READY (SPC-5 6.47): the NOT READY conditions
