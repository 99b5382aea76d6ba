package disk

import (
	"bytes"
	"encoding/binary"

	"github.com/vscsid/vscsid/scsi"
)

// Service actions decoded here.
const (
	saReadCapacity16 = scsi.SAReadCapacity16 // SERVICE ACTION IN(16)
	saReportOpCodes  = scsi.SAReportSupportedOpCodes
)

// sbcCommands is the dispatch table template. Usage is the CDB USAGE DATA
// of REPORT SUPPORTED OPERATION CODES (SPC-5 6.35.3): a bit is one where
// the device server evaluates it, zero where it ignores it or treats it
// as reserved (even when a set reserved bit is refused, like FUA_NV). In
// the CONTROL byte only NACA (bit 2) is evaluated (and refused).
var sbcCommands = [...]command{
	{run: (*Disk).testUnitReady, flags: needReady,
		info: info(scsi.TestUnitReady, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04)},
	{spc: (*Disk).requestSense,
		info: info(scsi.RequestSense, 0x03, 0x01, 0x00, 0x00, 0xff, 0x04)},
	{run: (*Disk).read6, flags: needReady,
		info: info(scsi.Read6, 0x08, 0x1f, 0xff, 0xff, 0xff, 0x04)},
	{run: (*Disk).write6, flags: needReady,
		info: info(scsi.Write6, 0x0a, 0x1f, 0xff, 0xff, 0xff, 0x04)},
	{spc: (*Disk).Inquiry,
		info: info(scsi.Inquiry, 0x12, 0x01, 0xff, 0xff, 0xff, 0x04)},
	{spc: (*Disk).ModeSelect,
		info: info(scsi.ModeSelect6, 0x15, 0x11, 0x00, 0x00, 0xff, 0x04)},
	{spc: (*Disk).ModeSense,
		info: info(scsi.ModeSense6, 0x1a, 0x08, 0xff, 0xff, 0xff, 0x04)},
	{run: (*Disk).startStopUnit,
		info: info(scsi.StartStopUnit, 0x1b, 0x01, 0x00, 0x0f, 0xf7, 0x04)},
	{run: (*Disk).preventAllow,
		info: info(scsi.PreventAllowMedium, 0x1e, 0x00, 0x00, 0x00, 0x03, 0x04)},
	{run: (*Disk).readCapacity10,
		info: info(scsi.ReadCapacity10, 0x25, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04)},
	{run: (*Disk).read10, flags: needReady,
		info: info(scsi.Read10, 0x28, 0xf8, 0xff, 0xff, 0xff, 0xff, 0x00, 0xff, 0xff, 0x04)},
	{run: (*Disk).write10, flags: needReady,
		info: info(scsi.Write10, 0x2a, 0xf8, 0xff, 0xff, 0xff, 0xff, 0x00, 0xff, 0xff, 0x04)},
	{run: (*Disk).verify10, flags: needReady,
		info: info(scsi.Verify10, 0x2f, 0xf6, 0xff, 0xff, 0xff, 0xff, 0x00, 0xff, 0xff, 0x04)},
	{run: (*Disk).synchronizeCache10, flags: needReady,
		info: info(scsi.SynchronizeCache10, 0x35, 0x02, 0xff, 0xff, 0xff, 0xff, 0x00, 0xff, 0xff, 0x04)},
	{run: (*Disk).writeSame10, flags: needReady,
		info: info(scsi.WriteSame10, 0x41, 0xf8, 0xff, 0xff, 0xff, 0xff, 0x00, 0xff, 0xff, 0x04)},
	{run: (*Disk).unmap, flags: needReady,
		info: info(scsi.Unmap, 0x42, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x04)},
	{spc: (*Disk).ModeSelect,
		info: info(scsi.ModeSelect10, 0x55, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x04)},
	{spc: (*Disk).ModeSense,
		info: info(scsi.ModeSense10, 0x5a, 0x18, 0xff, 0xff, 0x00, 0x00, 0x00, 0xff, 0xff, 0x04)},
	{run: (*Disk).read16, flags: needReady,
		info: info(scsi.Read16, 0x88, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04)},
	{run: (*Disk).write16, flags: needReady,
		info: info(scsi.Write16, 0x8a, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04)},
	{run: (*Disk).verify16, flags: needReady,
		info: info(scsi.Verify16, 0x8f, 0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04)},
	{run: (*Disk).synchronizeCache16, flags: needReady,
		info: info(scsi.SynchronizeCache16, 0x91, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04)},
	{run: (*Disk).writeSame16, flags: needReady,
		info: info(scsi.WriteSame16, 0x93, 0xf9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04)},
	{run: (*Disk).serviceActionIn16,
		info: saInfo(scsi.ServiceActionIn16, saReadCapacity16, 0x9e, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04)},
	{spc: (*Disk).maintenanceIn,
		info: saInfo(scsi.MaintenanceIn, saReportOpCodes, 0xa3, 0x0c, 0x87, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04)},
	{run: (*Disk).read12, flags: needReady,
		info: info(scsi.Read12, 0xa8, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04)},
	{run: (*Disk).write12, flags: needReady,
		info: info(scsi.Write12, 0xaa, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04)},
	{run: (*Disk).verify12, flags: needReady,
		info: info(scsi.Verify12, 0xaf, 0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x04)},
}

func info(op scsi.OpCode, usage ...byte) scsi.CommandInfo {
	return scsi.CommandInfo{OpCode: op, Usage: usage}
}

func saInfo(op scsi.OpCode, sa uint16, usage ...byte) scsi.CommandInfo {
	return scsi.CommandInfo{OpCode: op, ServiceAction: sa, HasSA: true, Usage: usage}
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

// Extent implements fault.Extenter: the LBA range of a READ, WRITE,
// VERIFY or WRITE SAME as the disk decodes it (blockExtent).
func (d *Disk) Extent(cdb scsi.CDB) (scsi.Extent, bool) { return blockExtent(cdb) }

// blockExtent decodes the LBA and NUMBER OF LOGICAL BLOCKS (TRANSFER
// LENGTH, VERIFICATION LENGTH) of the block commands (and of WRITE AND
// VERIFY, which the disk refuses, so that lba= rules see it as a write);
// ok is false for another opcode or a CDB shorter than the command.
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
	case scsi.Read10, scsi.Write10, scsi.Verify10, scsi.WriteSame10, scsi.WriteAndVerify10:
		e = scsi.Extent{LBA: uint64(c.Uint32(2)), Blocks: uint64(c.Uint16(7)), LengthAt: 7, LengthSize: 2}
		n = 10
	case scsi.Read12, scsi.Write12, scsi.Verify12, scsi.WriteAndVerify12:
		e = scsi.Extent{LBA: uint64(c.Uint32(2)), Blocks: uint64(c.Uint32(6)), LengthAt: 6, LengthSize: 4}
		n = 12
	case scsi.Read16, scsi.Write16, scsi.Verify16, scsi.WriteSame16, scsi.WriteAndVerify16:
		e = scsi.Extent{LBA: c.Uint64(2), Blocks: uint64(c.Uint32(10)), LengthAt: 10, LengthSize: 4}
		n = 16
	default:
		return scsi.Extent{}, false
	}
	switch op := c.OpCode(); op {
	case scsi.Read10, scsi.Read12, scsi.Read16, scsi.Write10, scsi.Write12, scsi.Write16:
		e.Partial = true
	case scsi.WriteSame10, scsi.WriteSame16:
		e.ToEnd = e.Blocks == 0 // SBC-4 5.48: 0 = to the last LBA
	}
	return e, len(c) >= n
}

// ---- READ(6/10/12/16), SBC-4 5.12–5.15 ----

func (d *Disk) read6(cmd *scsi.Command) error {
	c := cmd.CDB
	if c[1]&0xe0 != 0 { // reserved (the SCSI-2 LUN field)
		return scsi.InvalidField(1, 7)
	}
	e, _ := blockExtent(c)
	return d.read(cmd, e.LBA, uint32(e.Blocks), int(e.LengthAt))
}

func (d *Disk) read10(cmd *scsi.Command) error {
	c := cmd.CDB
	if err := checkReadByte1(c[1]); err != nil {
		return err
	}
	e, _ := blockExtent(c)
	return d.read(cmd, e.LBA, uint32(e.Blocks), int(e.LengthAt))
}

func (d *Disk) read12(cmd *scsi.Command) error {
	c := cmd.CDB
	if err := checkReadByte1(c[1]); err != nil {
		return err
	}
	e, _ := blockExtent(c)
	return d.read(cmd, e.LBA, uint32(e.Blocks), int(e.LengthAt))
}

func (d *Disk) read16(cmd *scsi.Command) error {
	c := cmd.CDB
	if err := checkReadByte1(c[1]); err != nil {
		return err
	}
	e, _ := blockExtent(c)
	return d.read(cmd, e.LBA, uint32(e.Blocks), int(e.LengthAt))
}

// checkReadByte1 checks byte 1 of READ(10/12/16): RDPROTECT must be 0 (no
// protection information) and the obsolete FUA_NV bit clear. DPO and FUA
// are accepted (DPOFUA=1); RARC and bit 0 (DLD2 in READ(16)) are ignored.
func checkReadByte1(b byte) error {
	switch {
	case b&0xe0 != 0:
		return scsi.InvalidField(1, 7)
	case b&0x02 != 0:
		return scsi.InvalidField(1, 1)
	}
	return nil
}

// checkWriteByte1 is checkReadByte1 for WRITE(10/12/16), whose bit 2 is
// reserved.
func checkWriteByte1(b byte) error {
	switch {
	case b&0xe0 != 0:
		return scsi.InvalidField(1, 7)
	case b&0x04 != 0:
		return scsi.InvalidField(1, 2)
	case b&0x02 != 0:
		return scsi.InvalidField(1, 1)
	}
	return nil
}

// read transfers n blocks from lba into the Data-In buffer. If the buffer
// is shorter than n blocks it gets what fits; if longer, the rest is left
// alone. Either way Written() is what was transferred, and the transport
// reports it (TCMU READ_LEN), so the initiator sees the residual.
func (d *Disk) read(cmd *scsi.Command, lba uint64, n uint32, lenOff int) error {
	if d.maxBlocks != 0 && n > d.maxBlocks {
		return scsi.InvalidField(lenOff, -1)
	}
	if err := d.checkRange(lba, uint64(n)); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if d.misaligned(lba, n) {
		d.misalignedReads.Add(1)
	}
	want := min(int64(n)<<d.shift, int64(cmd.Data.Len()))
	if d.fake {
		cmd.Data.WriteZeros(int(want))
		return nil
	}
	return d.readInto(cmd.Data, lba, want)
}

// readInto copies want bytes starting at lba into the Data-In buffer,
// wrapping at the end of the backend.
func (d *Disk) readInto(buf *scsi.Buffer, lba uint64, want int64) error {
	off := d.storeOff(lba)
	for want > 0 {
		c := min(want, d.wrap-off)
		if _, err := buf.WriteFromAt(d.backend, off, int(c)); err != nil {
			return d.fault(err, scsi.UnrecoveredReadError)
		}
		want -= c
		off = 0
	}
	return nil
}

// ---- WRITE(6/10/12/16), SBC-4 5.40–5.43 ----

func (d *Disk) write6(cmd *scsi.Command) error {
	c := cmd.CDB
	if c[1]&0xe0 != 0 {
		return scsi.InvalidField(1, 7)
	}
	e, _ := blockExtent(c)
	return d.write(cmd, e.LBA, uint32(e.Blocks), int(e.LengthAt), false)
}

func (d *Disk) write10(cmd *scsi.Command) error {
	c := cmd.CDB
	if err := checkWriteByte1(c[1]); err != nil {
		return err
	}
	e, _ := blockExtent(c)
	return d.write(cmd, e.LBA, uint32(e.Blocks), int(e.LengthAt), c[1]&0x08 != 0)
}

func (d *Disk) write12(cmd *scsi.Command) error {
	c := cmd.CDB
	if err := checkWriteByte1(c[1]); err != nil {
		return err
	}
	e, _ := blockExtent(c)
	return d.write(cmd, e.LBA, uint32(e.Blocks), int(e.LengthAt), c[1]&0x08 != 0)
}

func (d *Disk) write16(cmd *scsi.Command) error {
	c := cmd.CDB
	if err := checkWriteByte1(c[1]); err != nil {
		return err
	}
	e, _ := blockExtent(c)
	return d.write(cmd, e.LBA, uint32(e.Blocks), int(e.LengthAt), c[1]&0x08 != 0)
}

// write stores n blocks at lba from the Data-Out buffer. A Data-Out
// buffer shorter than n blocks is refused with 24/00 pointing at the
// TRANSFER LENGTH field before anything is written (TCMU cannot report a
// Data-Out residual, and a partial write would tear a block); excess
// Data-Out is ignored.
func (d *Disk) write(cmd *scsi.Command, lba uint64, n uint32, lenOff int, fua bool) error {
	if d.maxBlocks != 0 && n > d.maxBlocks {
		return scsi.InvalidField(lenOff, -1)
	}
	if err := d.checkRange(lba, uint64(n)); err != nil {
		return err
	}
	if d.cfg.WP {
		return scsi.ErrWriteProtected
	}
	if n == 0 {
		return nil
	}
	want := int64(n) << d.shift
	if int64(cmd.Data.Len()) < want {
		return scsi.InvalidField(lenOff, -1)
	}
	if d.misaligned(lba, n) {
		d.misalignedWrites.Add(1)
	}
	if d.fake {
		cmd.Data.Discard(int(want))
		return nil
	}
	off := d.storeOff(lba)
	for want > 0 {
		c := min(want, d.wrap-off)
		if _, err := cmd.Data.ReadToAt(d.backend, off, int(c)); err != nil {
			return d.fault(err, scsi.WriteError)
		}
		want -= c
		off = 0
	}
	if fua {
		return d.flush()
	}
	return nil
}

func (d *Disk) flush() error {
	if d.flusher == nil {
		return nil
	}
	if err := d.flusher.Flush(); err != nil {
		return d.fault(err, scsi.WriteError)
	}
	return nil
}

// ---- VERIFY(10/12/16), SBC-4 5.36–5.38 ----

func (d *Disk) verify10(cmd *scsi.Command) error {
	c := cmd.CDB
	e, _ := blockExtent(c)
	return d.verify(cmd, e.LBA, e.Blocks, int(e.LengthAt))
}

func (d *Disk) verify12(cmd *scsi.Command) error {
	c := cmd.CDB
	e, _ := blockExtent(c)
	return d.verify(cmd, e.LBA, e.Blocks, int(e.LengthAt))
}

func (d *Disk) verify16(cmd *scsi.Command) error {
	c := cmd.CDB
	e, _ := blockExtent(c)
	return d.verify(cmd, e.LBA, e.Blocks, int(e.LengthAt))
}

// verify checks the range and, with BYTCHK (byte 1 bits 2..1), compares
// Data-Out with the medium: 01b = n blocks, 11b = one block against each
// of the n. A difference is MISCOMPARE, 1D/00, with INFORMATION = the
// offset of the first differing byte in the Data-Out buffer (for 11b, in
// the one block). In fake_rw mode nothing is compared (like scsi_debug).
func (d *Disk) verify(cmd *scsi.Command, lba, n uint64, lenOff int) error {
	b1 := cmd.CDB[1]
	if b1&0xe0 != 0 { // VRPROTECT: no protection information
		return scsi.InvalidField(1, 7)
	}
	bytchk := (b1 >> 1) & 3
	if bytchk == 2 { // reserved
		return scsi.InvalidField(1, 2)
	}
	if err := d.checkRange(lba, n); err != nil {
		return err
	}
	if n == 0 || bytchk == 0 {
		return nil
	}
	want := int64(d.lbs)
	if bytchk == 1 {
		want = int64(n) << d.shift
	}
	if int64(cmd.Data.Len()) < want {
		return scsi.InvalidField(lenOff, -1)
	}
	if d.fake {
		cmd.Data.Discard(int(want))
		return nil
	}
	if d.cmpA == nil {
		d.cmpA = make([]byte, 64<<10)
		d.cmpB = make([]byte, 64<<10)
	}
	lbs := int64(d.lbs)
	if bytchk == 1 {
		done := int64(0)
		for done < want {
			c := min(want-done, int64(len(d.cmpA)))
			if err := d.load(d.cmpA[:c], lba+uint64(done/lbs)); err != nil {
				return err
			}
			cmd.Data.Read(d.cmpB[:c])
			if i := mismatch(d.cmpA[:c], d.cmpB[:c]); i >= 0 {
				return miscompare(done + int64(i))
			}
			done += c
		}
		return nil
	}
	pat := d.cmpB[:lbs]
	cmd.Data.Read(pat)
	// Each distinct backend block needs comparing once.
	total := min(n, d.wrapBlk)
	per := uint64(int64(len(d.cmpA)) / lbs)
	for i := uint64(0); i < total; i += per {
		k := min(per, total-i)
		buf := d.cmpA[:int64(k)*lbs]
		if err := d.load(buf, lba+i); err != nil {
			return err
		}
		for j := int64(0); j < int64(len(buf)); j += lbs {
			if x := mismatch(buf[j:j+lbs], pat); x >= 0 {
				return miscompare(int64(x))
			}
		}
	}
	return nil
}

// load reads len(p) bytes (whole blocks) starting at lba, wrapping.
func (d *Disk) load(p []byte, lba uint64) error {
	off := d.storeOff(lba)
	for len(p) > 0 {
		c := min(int64(len(p)), d.wrap-off)
		if _, err := d.backend.ReadAt(p[:c], off); err != nil {
			return d.fault(err, scsi.UnrecoveredReadError)
		}
		p = p[c:]
		off = 0
	}
	return nil
}

func mismatch(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

func miscompare(off int64) error {
	return &scsi.Error{Sense: scsi.Sense{Key: scsi.Miscompare, ASC: scsi.MiscompareDuringVerify, Info: off, Valid: true}}
}

// ---- WRITE SAME(10/16), SBC-4 5.44–5.45 ----

func (d *Disk) writeSame10(cmd *scsi.Command) error {
	c := cmd.CDB
	b1 := c[1]
	if err := checkWriteSameByte1(b1, d.cfg.LBPWS10); err != nil {
		return err
	}
	e, _ := blockExtent(c)
	return d.writeSame(cmd, e.LBA, e.Blocks, int(e.LengthAt), false)
}

func (d *Disk) writeSame16(cmd *scsi.Command) error {
	c := cmd.CDB
	b1 := c[1]
	if err := checkWriteSameByte1(b1, d.cfg.LBPWS); err != nil {
		return err
	}
	e, _ := blockExtent(c)
	return d.writeSame(cmd, e.LBA, e.Blocks, int(e.LengthAt), b1&0x01 != 0)
}

// checkWriteSameByte1: WRPROTECT must be 0, ANCHOR is not supported
// (ANC_SUP=0), and UNMAP needs lbpws/lbpws10.
func checkWriteSameByte1(b byte, unmapOK bool) error {
	switch {
	case b&0xe0 != 0:
		return scsi.InvalidField(1, 7)
	case b&0x10 != 0:
		return scsi.InvalidField(1, 4)
	case b&0x08 != 0 && !unmapOK:
		return scsi.InvalidField(1, 3)
	}
	return nil
}

// writeSame writes the one Data-Out block (or zeros, with NDOB) to n
// blocks from lba. The UNMAP bit (checked by the caller) does not change
// the outcome: an all-zero block or NDOB deallocates the range in store
// mode, which then reads zeros (LBPRZ=1), with or without UNMAP; a
// non-zero block is written even with UNMAP, as SBC-4 5.44 permits.
func (d *Disk) writeSame(cmd *scsi.Command, lba, n uint64, lenOff int, ndob bool) error {
	if n == 0 { // WSNZ=1 in the Block Limits VPD page
		return scsi.InvalidField(lenOff, -1)
	}
	if d.maxWS != 0 && n > d.maxWS {
		return scsi.InvalidField(lenOff, -1)
	}
	if err := d.checkRange(lba, n); err != nil {
		return err
	}
	if d.cfg.WP {
		return scsi.ErrWriteProtected
	}
	zero := true
	if !ndob {
		if cmd.Data.Len() < int(d.lbs) {
			return errShortDataOut
		}
		if d.fake {
			cmd.Data.Discard(int(d.lbs))
			return nil
		}
		cmd.Data.Read(d.block)
		zero = mismatch(d.block, zeroBlock[:d.lbs]) < 0
	}
	if d.fake {
		return nil
	}
	if zero {
		return d.zero(lba, n)
	}
	off := d.storeOff(lba)
	for i := uint64(0); i < min(n, d.wrapBlk); i++ {
		if _, err := d.backend.WriteAt(d.block, off); err != nil {
			return d.fault(err, scsi.WriteError)
		}
		off += int64(d.lbs)
		if off == d.wrap {
			off = 0
		}
	}
	return nil
}

var zeroBlock [4096]byte

// zero deallocates (or zero-fills) n blocks from lba, wrapping.
func (d *Disk) zero(lba, n uint64) error {
	if n == 0 {
		return nil
	}
	if n >= d.wrapBlk {
		return d.zeroBytes(0, d.wrap)
	}
	off := d.storeOff(lba)
	size := int64(n) << d.shift
	if first := d.wrap - off; size > first {
		if err := d.zeroBytes(off, first); err != nil {
			return err
		}
		off, size = 0, size-first
	}
	return d.zeroBytes(off, size)
}

func (d *Disk) zeroBytes(off, n int64) error {
	var err error
	if d.zeroer != nil {
		err = d.zeroer.Zero(off, n)
	} else {
		for done := int64(0); done < n && err == nil; {
			c := min(n-done, int64(len(zeroBlock)))
			_, err = d.backend.WriteAt(zeroBlock[:c], off+done)
			done += c
		}
	}
	if err != nil {
		return d.fault(err, scsi.WriteError)
	}
	return nil
}

// ---- UNMAP, SBC-4 5.32 ----

// unmap parses the parameter list (8-byte header, 16-byte descriptors),
// validates every descriptor before deallocating any, and then zeroes the
// ranges. The descriptors used are min(UNMAP BLOCK DESCRIPTOR DATA
// LENGTH, PARAMETER LIST LENGTH - 8, Data-Out - 8) / 16; an incomplete
// last descriptor is ignored (SBC-4 5.32.2).
func (d *Disk) unmap(cmd *scsi.Command) error {
	c := cmd.CDB
	if c[1]&0x01 != 0 { // ANCHOR; ANC_SUP=0
		return scsi.InvalidField(1, 0)
	}
	if d.cfg.WP {
		return scsi.ErrWriteProtected
	}
	plen := int(c.Uint16(7))
	if plen == 0 {
		return nil
	}
	if plen < 8 {
		return errParameterList
	}
	got, _ := cmd.Data.Read(d.param[:min(plen, len(d.param))])
	if got < 8 {
		return errParameterList
	}
	p := d.param[:got]
	ndesc := min(int(binary.BigEndian.Uint16(p[2:])), plen-8) / 16
	if ndesc > int(d.cfg.UnmapMaxDesc) {
		return scsi.InvalidParameter(2, -1)
	}
	ndesc = min(ndesc, (got-8)/16)
	var total uint64
	for i := range ndesc {
		off := 8 + 16*i
		lba := binary.BigEndian.Uint64(p[off:])
		n := uint64(binary.BigEndian.Uint32(p[off+8:]))
		if err := d.checkRange(lba, n); err != nil {
			return err
		}
		total += n
		if total > uint64(d.cfg.UnmapMaxBlocks) {
			return scsi.InvalidParameter(off+8, -1)
		}
	}
	if d.fake {
		return nil
	}
	for i := range ndesc {
		off := 8 + 16*i
		lba := binary.BigEndian.Uint64(p[off:])
		n := uint64(binary.BigEndian.Uint32(p[off+8:]))
		if err := d.zero(lba, n); err != nil {
			return err
		}
	}
	return nil
}

// ---- SYNCHRONIZE CACHE(10/16), SBC-4 5.26–5.27 ----

func (d *Disk) synchronizeCache10(cmd *scsi.Command) error {
	c := cmd.CDB
	return d.synchronizeCache(uint64(c.Uint32(2)), uint64(c.Uint16(7)))
}

func (d *Disk) synchronizeCache16(cmd *scsi.Command) error {
	c := cmd.CDB
	return d.synchronizeCache(c.Uint64(2), uint64(c.Uint32(10)))
}

// synchronizeCache range-checks (NUMBER OF LOGICAL BLOCKS 0 = to the end)
// and flushes the backend. IMMED is accepted; the flush is synchronous.
func (d *Disk) synchronizeCache(lba, n uint64) error {
	if err := d.checkRange(lba, n); err != nil {
		return err
	}
	return d.flush()
}

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

func (d *Disk) serviceActionIn16(cmd *scsi.Command) error {
	if cmd.CDB.ServiceAction() != saReadCapacity16 {
		return scsi.InvalidField(1, 4)
	}
	return d.readCapacity16(cmd)
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

// maintenanceIn serves REPORT SUPPORTED OPERATION CODES; other service
// actions are INVALID FIELD IN CDB.
func (d *Disk) maintenanceIn(cmd *scsi.Command) scsi.Response {
	if cmd.CDB.ServiceAction() != saReportOpCodes {
		return scsi.ResponseFor(scsi.InvalidField(1, 4))
	}
	return d.ReportSupportedOpCodes(cmd)
}
