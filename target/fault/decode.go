package fault

import (
	"github.com/vscsid/vscsid/scsi"
)

// Kind is the command set of the wrapped device: it decides how CDBs are
// decoded (READ(6) is an LBA on a disk and a block count on a tape) and
// which filters a rule may use.
type Kind uint8

// Device kinds.
const (
	Disk Kind = iota // SBC: lba= rules
	Tape             // SSC: block=, file=, partition= and early_warning_after= rules
)

// CommandSet is the SCSI command set of the kind, which names its
// opcodes.
func (k Kind) CommandSet() scsi.CommandSet {
	if k == Tape {
		return scsi.SSC
	}
	return scsi.SBC
}

func (k Kind) String() string {
	if k == Tape {
		return "tape"
	}
	return "disk"
}

// Command classes, the values of op= besides names and numbers.
const (
	classRead      uint8 = 1 << iota // disk READ(6/10/12/16); tape READ(6/16), READ REVERSE(6/16)
	classWrite                       // disk WRITE(6/10/12/16), WRITE AND VERIFY(10/12/16), WRITE SAME(10/16); tape WRITE(6/16)
	classVerify                      // disk VERIFY(10/12/16); tape VERIFY(6/16)
	classFilemarks                   // tape WRITE FILEMARKS(6/16)
	classPosition                    // tape LOCATE(10/16), SPACE(6/16)
	classMech                        // tape REWIND, LOAD UNLOAD, ERASE(6)
)

// classNames are the op= classes; "media" is read|write|verify (scsi_debug's
// "media-access commands", opts=0x80).
var classNames = []struct {
	name  string
	class uint8
}{
	{"read", classRead},
	{"write", classWrite},
	{"verify", classVerify},
	{"media", classRead | classWrite | classVerify},
}

// layout says where a CDB keeps what the rules need.
type layout uint8

const (
	layNone    layout = iota
	layDisk6          // LBA bytes 1-3 (21 bits), TRANSFER LENGTH byte 4 (0 = 256)
	layDisk10         // LBA bytes 2-5, length bytes 7-8
	layDisk12         // LBA bytes 2-5, length bytes 6-9
	layDisk16         // LBA bytes 2-9, length bytes 10-13
	layTape6          // FIXED byte 1 bit 0, TRANSFER LENGTH bytes 2-4
	layTape16         // FIXED byte 1 bit 0, TRANSFER LENGTH bytes 12-14
	laySpace6         // SSC SPACE(6): COUNT bytes 2-4, signed
	laySpace16        // SSC SPACE(16): COUNT bytes 4-11, signed
)

// opDesc describes one opcode of a command set.
type opDesc struct {
	class     uint8
	lay       layout
	prefix    bool // disk READ/WRITE: a medium error may transfer the blocks before it
	zeroAll   bool // disk WRITE SAME: NUMBER OF LOGICAL BLOCKS 0 = to the end of the medium
	immedBit  uint8
	immedByte uint8
}

var diskOps, tapeOps [256]opDesc

func init() {
	for op, d := range map[scsi.OpCode]opDesc{
		// SBC-4 5.12-5.15, 5.40-5.43: READ and WRITE.
		scsi.Read6: {class: classRead, lay: layDisk6, prefix: true}, scsi.Read10: {class: classRead, lay: layDisk10, prefix: true},
		scsi.Read12: {class: classRead, lay: layDisk12, prefix: true}, scsi.Read16: {class: classRead, lay: layDisk16, prefix: true},
		scsi.Write6: {class: classWrite, lay: layDisk6, prefix: true}, scsi.Write10: {class: classWrite, lay: layDisk10, prefix: true},
		scsi.Write12: {class: classWrite, lay: layDisk12, prefix: true}, scsi.Write16: {class: classWrite, lay: layDisk16, prefix: true},
		// SBC-4 5.44-5.46 WRITE AND VERIFY, 5.47-5.48 WRITE SAME.
		scsi.WriteAndVerify10: {class: classWrite, lay: layDisk10}, scsi.WriteAndVerify12: {class: classWrite, lay: layDisk12},
		scsi.WriteAndVerify16: {class: classWrite, lay: layDisk16},
		scsi.WriteSame10:      {class: classWrite, lay: layDisk10, zeroAll: true}, scsi.WriteSame16: {class: classWrite, lay: layDisk16, zeroAll: true},
		// SBC-4 5.36-5.38 VERIFY.
		scsi.Verify10: {class: classVerify, lay: layDisk10}, scsi.Verify12: {class: classVerify, lay: layDisk12},
		scsi.Verify16: {class: classVerify, lay: layDisk16},
	} {
		diskOps[op] = d
	}
	for op, d := range map[scsi.OpCode]opDesc{
		// SSC-5 READ(6/16), READ REVERSE(6/16), WRITE(6/16), VERIFY(6/16).
		scsi.Read6: {class: classRead, lay: layTape6}, scsi.Read16: {class: classRead, lay: layTape16},
		scsi.ReadReverse6: {class: classRead, lay: layTape6}, scsi.ReadReverse16: {class: classRead, lay: layTape16},
		scsi.Write6: {class: classWrite, lay: layTape6}, scsi.Write16: {class: classWrite, lay: layTape16},
		scsi.Verify6: {class: classVerify, lay: layTape6}, scsi.Verify16: {class: classVerify, lay: layTape16},
		// WRITE FILEMARKS(6/16): IMMED byte 1 bit 0; count like a transfer length.
		scsi.WriteFilemarks6:  {class: classFilemarks, lay: layTape6, immedBit: 0x01, immedByte: 1},
		scsi.WriteFilemarks16: {class: classFilemarks, lay: layTape16, immedBit: 0x01, immedByte: 1},
		// SPACE(6/16) (no IMMED), LOCATE(10/16) IMMED byte 1 bit 0.
		scsi.Space6: {class: classPosition, lay: laySpace6}, scsi.Space16: {class: classPosition, lay: laySpace16},
		scsi.Locate10: {class: classPosition, immedBit: 0x01, immedByte: 1}, scsi.Locate16: {class: classPosition, immedBit: 0x01, immedByte: 1},
		// REWIND and LOAD UNLOAD: IMMED byte 1 bit 0; ERASE(6): IMMED byte 1 bit 1.
		scsi.Rewind: {class: classMech, immedBit: 0x01, immedByte: 1}, scsi.LoadUnload: {class: classMech, immedBit: 0x01, immedByte: 1},
		scsi.Erase6: {class: classMech, immedBit: 0x02, immedByte: 1},
	} {
		tapeOps[op] = d
	}
}

// cmdInfo is what the rules and the timing models need from one CDB.
type cmdInfo struct {
	op    uint8
	desc  *opDesc
	class uint8
	// Disk: hasRange, lba and n (blocks; n = 0 is an empty range unless
	// toEnd). Tape: hasLen and n (TRANSFER LENGTH: blocks if fixed, else
	// bytes; for WRITE FILEMARKS the count), or count for SPACE.
	hasRange bool
	toEnd    bool
	lba      uint64
	hasLen   bool
	fixed    bool
	n        uint64
	count    int64
	immed    bool
	loadBit  bool // tape LOAD UNLOAD: LOAD (byte 4 bit 0)
}

// decode fills c from cdb; it never panics (short CDBs decode to no range
// and no length, so range filters do not match them and the handler
// rejects them).
func decode(kind Kind, cdb scsi.CDB, c *cmdInfo) {
	op := uint8(cdb.OpCode())
	c.op = op
	if kind == Tape {
		c.desc = &tapeOps[op]
	} else {
		c.desc = &diskOps[op]
	}
	d := c.desc
	c.class = d.class
	if d.immedBit != 0 {
		c.immed = cdb.Byte(int(d.immedByte))&d.immedBit != 0
	}
	switch d.lay {
	case layDisk6:
		if len(cdb) >= 6 {
			c.hasRange = true
			c.lba = uint64(cdb.Uint24(1) & 0x1fffff)
			c.n = uint64(cdb[4])
			if c.n == 0 {
				c.n = 256 // SBC-4 5.13: TRANSFER LENGTH 0 means 256 blocks
			}
		}
	case layDisk10:
		if len(cdb) >= 10 {
			c.hasRange, c.lba, c.n = true, uint64(cdb.Uint32(2)), uint64(cdb.Uint16(7))
		}
	case layDisk12:
		if len(cdb) >= 12 {
			c.hasRange, c.lba, c.n = true, uint64(cdb.Uint32(2)), uint64(cdb.Uint32(6))
		}
	case layDisk16:
		if len(cdb) >= 16 {
			c.hasRange, c.lba, c.n = true, cdb.Uint64(2), uint64(cdb.Uint32(10))
		}
	case layTape6:
		if len(cdb) >= 6 {
			c.hasLen, c.fixed, c.n = true, cdb[1]&0x01 != 0, uint64(cdb.Uint24(2))
		}
	case layTape16:
		if len(cdb) >= 16 {
			c.hasLen, c.fixed, c.n = true, cdb[1]&0x01 != 0, uint64(cdb.Uint24(12))
		}
	case laySpace6:
		if len(cdb) >= 6 {
			c.hasLen = true
			c.count = int64(int32(cdb.Uint24(2)<<8) >> 8) // 24-bit two's complement
		}
	case laySpace16:
		if len(cdb) >= 16 {
			c.hasLen, c.count = true, int64(cdb.Uint64(4))
		}
	}
	if kind == Tape && cdb.OpCode() == scsi.LoadUnload {
		c.loadBit = cdb.Byte(4)&0x01 != 0
	}
	if c.hasRange && c.n == 0 && d.zeroAll {
		c.toEnd = true
	}
}

// objects is how many logical objects a tape command spans from the
// current position, for block= filters: the block count of a fixed-mode
// transfer, else one (the object at the position).
func (c *cmdInfo) objects() uint64 {
	if c.hasLen && c.fixed && c.n > 0 && c.class&(classRead|classWrite|classVerify) != 0 {
		return c.n
	}
	return 1
}

// intersect reports whether [s1, s1+n1) and [s2, s2+n2) overlap, with
// n1 == maxUint64 meaning "to the end"; it never overflows.
func intersect(s1, n1, s2, n2 uint64) bool {
	if n1 == 0 || n2 == 0 {
		return false
	}
	// s1 < s2+n2 and s2 < s1+n1, without computing the sums.
	return (s1 < s2 || s1-s2 < n2) && (s2 < s1 || s2-s1 < n1)
}

// setLength returns cdb with its transfer length replaced by n, written
// into dst (the prefix of a disk READ/WRITE hit by a medium error). n is
// less than the original length, so it fits the field.
func setLength(dst []byte, cdb scsi.CDB, lay layout, n uint64) scsi.CDB {
	out := dst[:copy(dst, cdb)]
	switch lay {
	case layDisk6:
		out[4] = byte(n) // n < 256 here: the original length was at most 256
	case layDisk10:
		out[7], out[8] = byte(n>>8), byte(n)
	case layDisk12:
		out[6], out[7], out[8], out[9] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	case layDisk16:
		out[10], out[11], out[12], out[13] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	}
	return scsi.CDB(out)
}
