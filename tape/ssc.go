package tape

import "github.com/vscsid/vscsid/scsi"

// This file decodes the SSC command descriptor blocks. Decoders read the CDB
// through the bounds-checked scsi.CDB accessors, so a short CDB reads as
// zeros and nothing here can panic; HandleCommand has already refused a CDB
// shorter than the command's length. Section numbers are those of SSC-5
// (T10/BSR INCITS 503); SPC-5 for the shared commands.

// The operation codes are scsi's (scsi.Rewind, scsi.Space16, ...): SSC
// reuses bytes that mean other commands in SBC (0x01, 0x04, 0x1b, 0x2b,
// 0x34, 0x91, 0x92), and scsi.SSC names them.

// xfer is the decoded READ(6), WRITE(6), READ(16) or WRITE(16) CDB
// (SSC-5 6.3, 6.9; the 16-byte forms in clause 7): byte 1 bit 0 FIXED,
// bit 1 SILI (READ only); the 16-byte forms add the position the transfer
// starts at.
type xfer struct {
	fixed  bool // FIXED: TRANSFER LENGTH counts blocks
	sili   bool // READ: SUPPRESS INCORRECT LENGTH INDICATOR
	length int  // TRANSFER LENGTH, bytes (FIXED=0) or blocks (FIXED=1)
	start  start
}

// start is the PARTITION (byte 3) and LOGICAL OBJECT IDENTIFIER (bytes
// 4-11) of READ(16), WRITE(16) and WRITE FILEMARKS(16); set is false for
// the 6-byte forms, which start at the current position.
type start struct {
	set       bool
	partition int
	object    uint64
}

// Field offsets of the 16-byte READ, WRITE and WRITE FILEMARKS CDBs.
const (
	cdb16Partition = 3
	cdb16Object    = 4
	cdb16Length    = 12
)

func decodeStart(c scsi.CDB) start {
	return start{set: true, partition: int(c.Byte(cdb16Partition)), object: c.Uint64(cdb16Object)}
}

// decodeXfer decodes READ(6)/WRITE(6) (TRANSFER LENGTH in bytes 2-4).
func decodeXfer(c scsi.CDB) xfer {
	b1 := c.Byte(1)
	return xfer{fixed: b1&0x01 != 0, sili: b1&0x02 != 0, length: int(c.Uint24(2))}
}

// decodeXfer16 decodes READ(16)/WRITE(16) (TRANSFER LENGTH in bytes 12-14).
func decodeXfer16(c scsi.CDB) xfer {
	b1 := c.Byte(1)
	return xfer{fixed: b1&0x01 != 0, sili: b1&0x02 != 0, length: int(c.Uint24(cdb16Length)), start: decodeStart(c)}
}

// SPACE codes (SSC-5 6.7, table "Code field definition").
const (
	spaceBlocks        = 0
	spaceFilemarks     = 1
	spaceSeqFilemarks  = 2
	spaceEndOfData     = 3
	spaceSetmarks      = 4 // SSC-2; obsolete in SSC-3+, still sent by st (MTFSS)
	spaceSeqSetmarks   = 5
	spaceCodeByte      = 1
	space6CountByte    = 2
	space16CountByte   = 4
	space16ParamLength = 12
)

// space is the decoded SPACE(6) or SPACE(16) CDB.
type space struct {
	code  uint8 // byte 1 bits 3..0
	count int64 // signed count, negative = towards BOP
}

// decodeSpace6: COUNT is bytes 2-4, a 24-bit two's complement number
// (SSC-5 6.7).
func decodeSpace6(c scsi.CDB) space {
	n := int64(c.Uint24(2))
	if n&0x800000 != 0 {
		n -= 1 << 24
	}
	return space{code: c.Byte(1) & 0x0f, count: n}
}

// decodeSpace16: COUNT is bytes 4-11, a 64-bit two's complement number;
// PARAMETER LENGTH (bytes 12-13) must be zero (SSC-5 7.10).
func decodeSpace16(c scsi.CDB) space {
	return space{code: c.Byte(1) & 0x0f, count: int64(c.Uint64(4))}
}

// LOCATE(16) DEST_TYPE values (SSC-5 7.5).
const (
	destObject = 0
	destFile   = 1
	destEOD    = 3
)

// locate is the decoded LOCATE(10) or LOCATE(16) CDB.
type locate struct {
	destType  uint8
	cp        bool   // CHANGE PARTITION
	partition int    // valid if cp
	id        uint64 // logical object (or file) identifier
}

// decodeLocate10: byte 1 BT (bit 2, block address type: same numbering
// here), CP (bit 1), IMMED (bit 0); LOGICAL OBJECT IDENTIFIER bytes 3-6;
// PARTITION byte 8 (SSC-5 7.4).
func decodeLocate10(c scsi.CDB) locate {
	return locate{destType: destObject, cp: c.Byte(1)&0x02 != 0,
		partition: int(c.Byte(8)), id: uint64(c.Uint32(3))}
}

// decodeLocate16: byte 1 DEST_TYPE (bits 5..3), CP (bit 1), IMMED (bit 0);
// byte 2 BAM (bit 0); PARTITION byte 3; LOGICAL IDENTIFIER bytes 4-11
// (SSC-5 7.5).
func decodeLocate16(c scsi.CDB) locate {
	return locate{destType: c.Byte(1) >> 3 & 0x07, cp: c.Byte(1)&0x02 != 0,
		partition: int(c.Byte(3)), id: c.Uint64(4)}
}

// READ POSITION service actions (SSC-5 7.6).
const (
	rpShortBlockID  = 0x00
	rpShortVendor   = 0x01 // BT=1 in SCSI-2 terms; what st sends ("34 01")
	rpLong          = 0x06
	rpExtended      = 0x08
	rpShortLen      = 20
	rpLongLen       = 32
	rpExtendedLen   = 32
	rpAllocByte     = 7
	rpServiceAction = 1
)

// LOAD UNLOAD byte 4 bits (SSC-5 7.3).
const (
	luLoad  = 0x01
	luReten = 0x02
	luEOT   = 0x04
	luHold  = 0x08
)

// FORMAT MEDIUM FORMAT field values (SSC-5 7.2, byte 2 bits 3..0).
const (
	formatDefault   = 0 // one partition
	formatPartition = 1 // partition as the medium partition page says
	formatBoth      = 2 // default format, then partition
)

// put24 stores v big-endian in three bytes.
func put24(b []byte, v uint32) { b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v) }

// sscExtent is the extent of the READ, WRITE, WRITE FILEMARKS and SPACE
// entries of the command table: the TRANSFER LENGTH (blocks when FIXED,
// else bytes), the filemark count, or the signed SPACE count, and where
// the length field sits. ok is false for another opcode or a CDB shorter
// than the command.
func sscExtent(c scsi.CDB) (e scsi.Extent, ok bool) {
	switch c.OpCode() {
	case scsi.Read6, scsi.Write6:
		x := decodeXfer(c)
		return scsi.Extent{Count: int64(x.length), Fixed: x.fixed, LengthAt: 2, LengthSize: 3}, len(c) >= 6
	case scsi.Read16, scsi.Write16:
		x := decodeXfer16(c)
		return scsi.Extent{Count: int64(x.length), Fixed: x.fixed, LengthAt: cdb16Length, LengthSize: 3}, len(c) >= 16
	case scsi.WriteFilemarks6:
		return scsi.Extent{Count: int64(c.Uint24(2)), LengthAt: 2, LengthSize: 3}, len(c) >= 6
	case scsi.WriteFilemarks16:
		return scsi.Extent{Count: int64(c.Uint24(cdb16Length)), LengthAt: cdb16Length, LengthSize: 3}, len(c) >= 16
	case scsi.Space6:
		return scsi.Extent{Count: decodeSpace6(c).count}, len(c) >= 6
	case scsi.Space16:
		return scsi.Extent{Count: decodeSpace16(c).count}, len(c) >= 16
	case scsi.Locate10:
		return locateExtent(decodeLocate10(c)), len(c) >= 10
	case scsi.Locate16:
		return locateExtent(decodeLocate16(c)), len(c) >= 16
	}
	return scsi.Extent{}, false
}

func locateExtent(l locate) scsi.Extent {
	return scsi.Extent{Locate: true, DestType: l.destType, Object: l.id, Partition: uint8(l.partition), HasPartition: l.cp}
}
