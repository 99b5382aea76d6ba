package disk

import (
	"github.com/vscsid/vscsid/scsi"
)

// The SBC command table, and the CDB decoding the block command families
// share (range and alignment checks, blockExtent). The commands are in
// rw.go (READ, WRITE, VERIFY, SYNCHRONIZE CACHE), unmap.go (WRITE SAME,
// UNMAP) and unit.go (READ CAPACITY, START STOP UNIT and the other
// commands about the unit rather than its blocks).

// Service actions decoded here.
const (
	saReadCapacity16 = scsi.SAReadCapacity16 // SERVICE ACTION IN(16)
	saGetLBAStatus   = scsi.SAGetLBAStatus   // SERVICE ACTION IN(16)
	saReportOpCodes  = scsi.SAReportSupportedOpCodes
)

// sbcCommands is the disk's command table. The usage bitmaps are the CDB
// USAGE DATA of REPORT SUPPORTED OPERATION CODES (SPC-5 6.35.3): a bit is
// one where the device server evaluates it, zero where it ignores it or
// treats it as reserved (even when a set reserved bit is refused, like
// FUA_NV). In the CONTROL byte only NACA (bit 2) is evaluated (and
// refused, by scsi.Table.Serve). Medium commands are NOT READY while the
// unit is stopped.
var sbcCommands = scsi.NewTable(scsi.SBC, scsi.Readiness[*Disk]{NotReady: (*Disk).notReady}, withTimeout(commandTimeout, []scsi.Op[*Disk]{
	{Run: (*Disk).testUnitReady,
		Desc: scsi.Usage(0x00, 0x00, 0x00, 0x00, 0x00, 0x04).WithMedium()},
	{Respond: (*Disk).requestSense,
		Desc: scsi.Usage(0x03, 0x01, 0x00, 0x00, 0xff, 0x04)},
	{Run: (*Disk).read6,
		Desc: scsi.Usage(0x08, 0x1f, 0xff, 0xff, 0xff, 0x04).WithMedium().WithClass(scsi.ClassRead).WithExtent(blockExtent)},
	{Run: (*Disk).write6,
		Desc: scsi.Usage(0x0a, 0x1f, 0xff, 0xff, 0xff, 0x04).WithMedium().WithClass(scsi.ClassWrite).WithExtent(blockExtent)},
	{Respond: (*Disk).Inquiry,
		Desc: scsi.Usage(0x12, 0x01, 0xff, 0xff, 0xff, 0x04)},
	{Respond: (*Disk).ModeSelect,
		Desc: scsi.Usage(0x15, 0x11, 0x00, 0x00, 0xff, 0x04)},
	{Respond: (*Disk).ModeSense,
		Desc: scsi.Usage(0x1a, 0x08, 0xff, 0xff, 0xff, 0x04)},
	{Run: (*Disk).startStopUnit,
		Desc: scsi.Usage(0x1b, 0x01, 0x00, 0x0f, 0xf7, 0x04)},
	{Respond: (*Disk).SendDiagnostic,
		Desc: scsi.Usage(0x1d, 0xf7, 0x00, 0xff, 0xff, 0x04)},
	{Run: (*Disk).preventAllow,
		Desc: scsi.Usage(0x1e, 0x00, 0x00, 0x00, 0x03, 0x04)},
	{Run: (*Disk).readCapacity10,
		Desc: scsi.Usage(0x25, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04)},
	{Run: (*Disk).read10,
		Desc: scsi.Usage(0x28, 0xf8, 0xff, 0xff, 0xff, 0xff, 0x00, 0xff, 0xff, 0x04).WithMedium().WithClass(scsi.ClassRead).WithExtent(blockExtent)},
	{Run: (*Disk).write10,
		Desc: scsi.Usage(0x2a, 0xf8, 0xff, 0xff, 0xff, 0xff, 0x00, 0xff, 0xff, 0x04).WithMedium().WithClass(scsi.ClassWrite).WithExtent(blockExtent)},
	{Run: (*Disk).writeAndVerify,
		Desc: scsi.Usage(0x2e, 0xf6, 0xff, 0xff, 0xff, 0xff, 0x00, 0xff, 0xff, 0x04).WithMedium().WithClass(scsi.ClassWrite).WithExtent(blockExtent)},
	{Run: (*Disk).verify10,
		Desc: scsi.Usage(0x2f, 0xf6, 0xff, 0xff, 0xff, 0xff, 0x00, 0xff, 0xff, 0x04).WithMedium().WithClass(scsi.ClassVerify).WithExtent(blockExtent)},
	{Respond: (*Disk).preFetch,
		Desc: scsi.Usage(0x34, 0x02, 0xff, 0xff, 0xff, 0xff, 0x00, 0xff, 0xff, 0x04).WithMedium().WithImmed(1, 0x02).WithExtent(blockExtent)},
	{Run: (*Disk).synchronizeCache10,
		Desc: scsi.Usage(0x35, 0x02, 0xff, 0xff, 0xff, 0xff, 0x00, 0xff, 0xff, 0x04).WithMedium()},
	{Run: (*Disk).writeSame10,
		Desc: scsi.Usage(0x41, 0xf8, 0xff, 0xff, 0xff, 0xff, 0x00, 0xff, 0xff, 0x04).WithMedium().WithClass(scsi.ClassWrite).WithExtent(blockExtent)},
	{Run: (*Disk).unmap,
		Desc: scsi.Usage(0x42, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x04).WithMedium()},
	{Respond: (*Disk).ModeSelect,
		Desc: scsi.Usage(0x55, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x04)},
	{Respond: (*Disk).ModeSense,
		Desc: scsi.Usage(0x5a, 0x18, 0xff, 0xff, 0x00, 0x00, 0x00, 0xff, 0xff, 0x04)},
	{Run: (*Disk).read16,
		Desc: scsi.Usage(0x88, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04).WithMedium().WithClass(scsi.ClassRead).WithExtent(blockExtent)},
	{Run: (*Disk).compareAndWrite,
		Desc: scsi.Usage(0x89, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0xff, 0x00, 0x04).WithMedium().WithClass(scsi.ClassWrite).WithExtent(blockExtent)},
	{Run: (*Disk).write16,
		Desc: scsi.Usage(0x8a, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04).WithMedium().WithClass(scsi.ClassWrite).WithExtent(blockExtent)},
	{Run: (*Disk).writeAndVerify,
		Desc: scsi.Usage(0x8e, 0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04).WithMedium().WithClass(scsi.ClassWrite).WithExtent(blockExtent)},
	{Run: (*Disk).verify16,
		Desc: scsi.Usage(0x8f, 0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04).WithMedium().WithClass(scsi.ClassVerify).WithExtent(blockExtent)},
	{Respond: (*Disk).preFetch,
		Desc: scsi.Usage(0x90, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04).WithMedium().WithImmed(1, 0x02).WithExtent(blockExtent)},
	{Run: (*Disk).synchronizeCache16,
		Desc: scsi.Usage(0x91, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04).WithMedium()},
	{Run: (*Disk).writeSame16,
		Desc: scsi.Usage(0x93, 0xf9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04).WithMedium().WithClass(scsi.ClassWrite).WithExtent(blockExtent)},
	{Run: (*Disk).closeZone,
		Desc: scsi.Usage(0x94, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x01, 0x04).WithSA(saCloseZone).WithMedium().WithExtent(zoneExtent)},
	{Run: (*Disk).finishZone,
		Desc: scsi.Usage(0x94, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x01, 0x04).WithSA(saFinishZone).WithMedium().WithExtent(zoneExtent)},
	{Run: (*Disk).openZone,
		Desc: scsi.Usage(0x94, 0x03, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x01, 0x04).WithSA(saOpenZone).WithMedium().WithExtent(zoneExtent)},
	{Run: (*Disk).resetWritePointer,
		Desc: scsi.Usage(0x94, 0x04, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x01, 0x04).WithSA(saResetWritePointer).WithMedium().WithClass(scsi.ClassWrite).WithExtent(zoneExtent)},
	{Run: (*Disk).reportZones,
		Desc: scsi.Usage(0x95, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xbf, 0x04).WithSA(saReportZones).WithMedium()},
	{Run: (*Disk).writeAtomic16,
		Desc: scsi.Usage(0x9c, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04).WithMedium().WithClass(scsi.ClassWrite).WithExtent(blockExtent)},
	{Run: (*Disk).readCapacity16,
		Desc: scsi.Usage(0x9e, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04).WithSA(saReadCapacity16)},
	{Run: (*Disk).getLBAStatus,
		Desc: scsi.Usage(0x9e, 0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x04).WithSA(saGetLBAStatus).WithMedium()},
	{Respond: (*Disk).ReportSupportedOpCodes,
		Desc: scsi.Usage(0xa3, 0x0c, 0x87, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04).WithSA(saReportOpCodes)},
	{Run: (*Disk).read12,
		Desc: scsi.Usage(0xa8, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04).WithMedium().WithClass(scsi.ClassRead).WithExtent(blockExtent)},
	{Run: (*Disk).write12,
		Desc: scsi.Usage(0xaa, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04).WithMedium().WithClass(scsi.ClassWrite).WithExtent(blockExtent)},
	{Run: (*Disk).writeAndVerify,
		Desc: scsi.Usage(0xae, 0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04).WithMedium().WithClass(scsi.ClassWrite).WithExtent(blockExtent)},
	{Run: (*Disk).verify12,
		Desc: scsi.Usage(0xaf, 0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04).WithMedium().WithClass(scsi.ClassVerify).WithExtent(blockExtent)},
})...)

// commandTimeout is the timeout REPORT SUPPORTED OPERATION CODES reports
// for every disk command (the command timeouts descriptor with RCTD), in
// seconds: the TCMU ring's default cmd_time_out, the time after which the
// kernel itself gives up on a command. A disk command takes microseconds
// unless a timing model or a fault rule delays it.
const commandTimeout = 30

// withTimeout gives every op the timeout seconds.
func withTimeout(seconds uint32, ops []scsi.Op[*Disk]) []scsi.Op[*Disk] {
	for i := range ops {
		ops[i].Desc = ops[i].WithTimeout(seconds)
	}
	return ops
}

// commandsFor is the table of a disk configured as cfg: without logical
// block provisioning (lbpu=0) UNMAP, without atomic writes WRITE
// ATOMIC(16), and on a disk that is not zoned ZBC IN and ZBC OUT, are
// INVALID COMMAND OPERATION CODE.
func commandsFor(cfg Config) *scsi.Table[*Disk] {
	zoned := cfg.Zoned != ZonedNone
	return sbcCommands.Select(func(c *scsi.Desc) bool {
		switch c.OpCode {
		case scsi.Unmap:
			return cfg.LBPU
		case scsi.WriteAtomic16:
			return cfg.AtomicWR
		case scsi.ZBCIn, scsi.ZBCOut:
			return zoned
		}
		return true
	})
}

// Errors without a field pointer.
var (
	errShortDataOut  = scsi.NewError(scsi.IllegalRequest, scsi.InvalidFieldInCDB)
	errParameterList = scsi.ErrParameterListLen
)

// checkRange is SBC-4 4.5: LBA + number of blocks must not exceed the
// capacity (a zero-length transfer at the capacity is allowed).
func (d *Disk) checkRange(lba, n uint64) error {
	if lba > d.blocks || n > d.blocks-lba {
		return scsi.ErrLBAOutOfRange
	}
	return nil
}

// misaligned reports whether a transfer does not start and end on
// physical block boundaries (SBC-4 4.6.2, with the lowest aligned LBA).
func (d *Disk) misaligned(lba uint64, n uint32) bool {
	return ((lba+d.alignAdd)|uint64(n))&d.alignMask != 0
}

// storeOff maps an LBA to its backend byte offset (wrapping in store mode,
// like scsi_debug's virtual_gb over dev_size_mb).
func (d *Disk) storeOff(lba uint64) int64 {
	return int64(lba%d.wrapBlk) << d.shift
}

// blockExtent decodes the LBA and NUMBER OF LOGICAL BLOCKS (TRANSFER
// LENGTH, VERIFICATION LENGTH) of the block commands: the extent of the
// READ, WRITE, VERIFY and WRITE SAME entries of the command table (fault
// rules' lba=, the prefix transfer of a partial medium error), and what
// the commands themselves decode. ok is false for another opcode or a CDB
// shorter than the command.
func blockExtent(c scsi.CDB) (e scsi.Extent, ok bool) {
	var n int
	switch op := c.OpCode(); op {
	case scsi.Read6, scsi.Write6:
		// SBC-4 5.13: TRANSFER LENGTH 0 means 256 blocks.
		e = scsi.Extent{LBA: uint64(c.Uint24(1) & 0x1fffff), Blocks: uint64(c.Byte(4)), LengthAt: 4, LengthSize: 1, Partial: true}
		if e.Blocks == 0 {
			e.Blocks = 256
		}
		n = 6
	case scsi.Read10, scsi.Write10, scsi.Verify10, scsi.WriteSame10, scsi.WriteAndVerify10, scsi.PreFetch10:
		e = scsi.Extent{LBA: uint64(c.Uint32(2)), Blocks: uint64(c.Uint16(7)), LengthAt: 7, LengthSize: 2}
		n = 10
	case scsi.Read12, scsi.Write12, scsi.Verify12, scsi.WriteAndVerify12:
		e = scsi.Extent{LBA: uint64(c.Uint32(2)), Blocks: uint64(c.Uint32(6)), LengthAt: 6, LengthSize: 4}
		n = 12
	case scsi.Read16, scsi.Write16, scsi.Verify16, scsi.WriteSame16, scsi.WriteAndVerify16, scsi.PreFetch16:
		e = scsi.Extent{LBA: c.Uint64(2), Blocks: uint64(c.Uint32(10)), LengthAt: 10, LengthSize: 4}
		n = 16
	case scsi.CompareAndWrite:
		e = scsi.Extent{LBA: c.Uint64(2), Blocks: uint64(c.Byte(13)), LengthAt: 13, LengthSize: 1}
		n = 16
	case scsi.WriteAtomic16:
		e = scsi.Extent{LBA: c.Uint64(2), Blocks: uint64(c.Uint16(12)), LengthAt: 12, LengthSize: 2}
		n = 16
	default:
		return scsi.Extent{}, false
	}
	switch op := c.OpCode(); op {
	case scsi.Read10, scsi.Read12, scsi.Read16, scsi.Write10, scsi.Write12, scsi.Write16:
		e.Partial = true
	case scsi.WriteSame10, scsi.WriteSame16, scsi.PreFetch10, scsi.PreFetch16:
		e.ToEnd = e.Blocks == 0 // SBC-4 5.48, 5.10: 0 = to the last LBA
	}
	return e, len(c) >= n
}
