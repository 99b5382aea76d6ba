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
	Disk    Kind = iota // SBC: lba= rules
	Tape                // SSC: block=, file=, partition= and early_warning_after= rules
	Changer             // SMC: op= rules only (no command class addresses the medium)
)

// CommandSet is the SCSI command set of the kind, which names its
// opcodes.
func (k Kind) CommandSet() scsi.CommandSet {
	switch k {
	case Tape:
		return scsi.SSC
	case Changer:
		return scsi.SMC
	}
	return scsi.SBC
}

func (k Kind) String() string {
	switch k {
	case Tape:
		return "tape"
	case Changer:
		return "changer"
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
	classMove                        // changer MOVE MEDIUM, EXCHANGE MEDIUM, POSITION TO ELEMENT
	classInventory                   // changer INITIALIZE ELEMENT STATUS (WITH RANGE)
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

// Extenter is implemented by a handler that says what a command's CDB
// addresses (disk.Disk, tape.Drive): lba= rules, the prefix transfer of a
// disk READ or WRITE hit by a medium error, block= rules over fixed-block
// tape transfers, the INFORMATION of injected tape sense and the tape
// timing model need it. The package decodes no CDB fields itself: without
// an Extenter no command has an extent, so lba= rules never match and
// injected tape sense has no residue. Extent must be cheap, must not
// allocate and must accept any CDB bytes.
type Extenter interface {
	Extent(cdb scsi.CDB) (scsi.Extent, bool)
}

// opDesc describes one opcode of a command set: its op= class and where
// its IMMED bit is (the timing models return early for it).
type opDesc struct {
	class     uint8
	immedBit  uint8
	immedByte uint8
}

// changerOps has the robot's commands, which the robot timing model
// (move=, inventory=) delays.
var diskOps, tapeOps, changerOps [256]opDesc

func init() {
	for op, d := range map[scsi.OpCode]opDesc{
		// SBC-4 5.12-5.15, 5.40-5.43: READ and WRITE.
		scsi.Read6: {class: classRead}, scsi.Read10: {class: classRead},
		scsi.Read12: {class: classRead}, scsi.Read16: {class: classRead},
		scsi.Write6: {class: classWrite}, scsi.Write10: {class: classWrite},
		scsi.Write12: {class: classWrite}, scsi.Write16: {class: classWrite},
		// SBC-4 5.44-5.46 WRITE AND VERIFY, 5.47-5.48 WRITE SAME.
		scsi.WriteAndVerify10: {class: classWrite}, scsi.WriteAndVerify12: {class: classWrite},
		scsi.WriteAndVerify16: {class: classWrite},
		scsi.WriteSame10:      {class: classWrite}, scsi.WriteSame16: {class: classWrite},
		// SBC-4 5.36-5.38 VERIFY.
		scsi.Verify10: {class: classVerify}, scsi.Verify12: {class: classVerify},
		scsi.Verify16: {class: classVerify},
	} {
		diskOps[op] = d
	}
	for op, d := range map[scsi.OpCode]opDesc{
		// SSC-5 READ(6/16), READ REVERSE(6/16), WRITE(6/16), VERIFY(6/16).
		scsi.Read6: {class: classRead}, scsi.Read16: {class: classRead},
		scsi.ReadReverse6: {class: classRead}, scsi.ReadReverse16: {class: classRead},
		scsi.Write6: {class: classWrite}, scsi.Write16: {class: classWrite},
		scsi.Verify6: {class: classVerify}, scsi.Verify16: {class: classVerify},
		// WRITE FILEMARKS(6/16): IMMED byte 1 bit 0; count like a transfer length.
		scsi.WriteFilemarks6:  {class: classFilemarks, immedBit: 0x01, immedByte: 1},
		scsi.WriteFilemarks16: {class: classFilemarks, immedBit: 0x01, immedByte: 1},
		// SPACE(6/16) (no IMMED), LOCATE(10/16) IMMED byte 1 bit 0.
		scsi.Space6: {class: classPosition}, scsi.Space16: {class: classPosition},
		scsi.Locate10: {class: classPosition, immedBit: 0x01, immedByte: 1}, scsi.Locate16: {class: classPosition, immedBit: 0x01, immedByte: 1},
		// REWIND and LOAD UNLOAD: IMMED byte 1 bit 0; ERASE(6): IMMED byte 1 bit 1.
		scsi.Rewind: {class: classMech, immedBit: 0x01, immedByte: 1}, scsi.LoadUnload: {class: classMech, immedBit: 0x01, immedByte: 1},
		scsi.Erase6: {class: classMech, immedBit: 0x02, immedByte: 1},
	} {
		tapeOps[op] = d
	}
	// SMC-3 6.2, 6.6, 6.10: the transport moves; 6.3, 6.4: it scans.
	for op, d := range map[scsi.OpCode]opDesc{
		scsi.MoveMedium: {class: classMove}, scsi.ExchangeMedium: {class: classMove},
		scsi.PositionToElement: {class: classMove},
		scsi.InitElementStatus: {class: classInventory}, scsi.InitElemStatusRange: {class: classInventory},
	} {
		changerOps[op] = d
	}
}

// cmdInfo is what the rules and the timing models need from one CDB.
type cmdInfo struct {
	op    uint8
	class uint8
	ext   scsi.Extent
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

// decode fills c from cdb and the handler's extent of it; it never panics
// (a short CDB has no extent, so range filters do not match it and the
// handler rejects it).
func decode(kind Kind, ex Extenter, cdb scsi.CDB, c *cmdInfo) {
	op := uint8(cdb.OpCode())
	c.op = op
	d := &diskOps[op]
	switch kind {
	case Tape:
		d = &tapeOps[op]
	case Changer:
		d = &changerOps[op]
	}
	c.class = d.class
	if d.immedBit != 0 {
		c.immed = cdb.Byte(int(d.immedByte))&d.immedBit != 0
	}
	if kind == Tape && cdb.OpCode() == scsi.LoadUnload {
		c.loadBit = cdb.Byte(4)&0x01 != 0
	}
	if ex == nil || d.class == 0 {
		return
	}
	e, ok := ex.Extent(cdb)
	if !ok {
		return
	}
	c.ext = e
	if kind == Disk {
		c.hasRange, c.lba, c.n, c.toEnd = true, e.LBA, e.Blocks, e.ToEnd
		return
	}
	c.hasLen, c.fixed, c.n, c.count = true, e.Fixed, uint64(e.Count), e.Count
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
