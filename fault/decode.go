package fault

import (
	"github.com/vscsid/vscsid/scsi"
)

// Kind is the command set of the wrapped device, known from its command
// table (Options.Commands): it decides how CDBs are decoded (READ(6) is
// an LBA on a disk and a block count on a tape) and which filters a rule
// may use.
type Kind uint8

// Device kinds.
const (
	Disk    Kind = iota // SBC: lba= rules
	Tape                // SSC: block=, file=, partition= and early_warning_after= rules
	Changer             // SMC: op= rules only (no command class addresses the medium)
)

// kindOf is the kind of a unit of command set cs.
func kindOf(cs scsi.CommandSet) Kind {
	switch cs {
	case scsi.SSC:
		return Tape
	case scsi.SMC:
		return Changer
	}
	return Disk
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

// Command classes, the values of op= besides names and numbers: the
// classes of the command tables (scsi.Desc.Class).
const (
	classRead      = uint8(scsi.ClassRead)
	classWrite     = uint8(scsi.ClassWrite)
	classVerify    = uint8(scsi.ClassVerify)
	classFilemarks = uint8(scsi.ClassFilemarks)
	classPosition  = uint8(scsi.ClassPosition)
	classMech      = uint8(scsi.ClassMech)
	classMove      = uint8(scsi.ClassMove)
	classInventory = uint8(scsi.ClassInventory)
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

// cmdInfo is what the rules and the timing models need from one CDB.
type cmdInfo struct {
	op    uint8
	id    scsi.CommandID // the command in the device's table: what op= selects
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

// decode fills c from cdb and the command table's entry for its opcode:
// class, IMMED bit and extent (what lba= and block= filters, the prefix
// transfer of a disk READ or WRITE hit by a medium error, the INFORMATION
// of injected tape sense and the tape timing model read); it never panics
// (a short CDB has no extent, so range filters do not match it and the
// handler rejects it).
func decode(kind Kind, cmds scsi.CommandTable, cdb scsi.CDB, c *cmdInfo) {
	c.op = uint8(cdb.OpCode())
	c.id = min(cmds.CommandID(cdb), scsi.MaxCommandIDs-1)
	d := cmds.Describe(cdb)
	if d == nil {
		return
	}
	c.class = uint8(d.Class)
	c.immed = d.Immed.In(cdb)
	if kind == Tape && cdb.OpCode() == scsi.LoadUnload {
		c.loadBit = cdb.Byte(4)&0x01 != 0
	}
	if d.Extent == nil {
		return
	}
	e, ok := d.Extent(cdb)
	if !ok {
		return
	}
	c.ext = e
	if e.Locate { // a destination, not a count: nothing for the rules' filters
		return
	}
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
