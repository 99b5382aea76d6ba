package disk

import (
	"encoding/binary"

	"github.com/vscsid/vscsid/scsi"
)

// The provisioning commands: WRITE SAME (zeroing or unmapping a range, or
// writing one block over it), UNMAP, and GET LBA STATUS, which reports
// what they deallocated.

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
	if d.zones != nil {
		if err := d.zones.checkWrite(lba, n); err != nil {
			return err
		}
		defer d.zones.advance(lba, n)
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
		_, _ = cmd.Data.Read(d.block) // cannot be short: Len was checked above
		zero = mismatch(d.block, zeroChunk[:d.lbs]) < 0
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
			c := min(n-done, int64(len(zeroChunk)))
			_, err = d.backend.WriteAt(zeroChunk[:c], off+done)
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

// ---- GET LBA STATUS(16), SBC-4 5.8 ----

// lbaStatusMaxDesc bounds the LBA status descriptors of one GET LBA
// STATUS: SBC-4 lets the device server return fewer than would fit, and
// the initiator asks again from the LBA after the last one returned.
const lbaStatusMaxDesc = 128

// PROVISIONING STATUS values of an LBA status descriptor.
const (
	lbaMapped      = 0
	lbaDeallocated = 1
)

// getLBAStatus returns LBA status descriptors from STARTING LBA (bytes
// 2..9), each a run of LBAs with one provisioning status, until the
// capacity ends, lbaStatusMaxDesc descriptors, or the ALLOCATION LENGTH
// (bytes 10..13) is full. REPORT TYPE (byte 14) selects the descriptors:
// 0 all, 1 those with a non-zero status, 2 mapped, 3 deallocated, 4
// anchored (never: ANC_SUP is 0); other types are 24/00. A selective type
// looks at no more than lbaStatusMaxScan runs, so a long alternation of
// the other status ends the list early, as SBC-4 allows.
//
// What is mapped: on a disk without logical block provisioning, every
// LBA; in fake_rw mode (nothing is ever stored, reads are zeros) none;
// in store mode the LBAs whose 64 KiB store chunk holds data. A write
// maps its chunks; UNMAP and WRITE SAME with zeros deallocate every chunk
// they leave all zero, so an unmapped range is deallocated to the chunk.
func (d *Disk) getLBAStatus(cmd *scsi.Command) error {
	c := cmd.CDB
	lba, alloc, rt := c.Uint64(2), int64(c.Uint32(10)), c.Byte(14)
	if rt > 4 {
		return scsi.InvalidField(14, -1)
	}
	if lba >= d.blocks {
		return scsi.ErrLBAOutOfRange
	}
	if d.lbaStatus == nil {
		d.lbaStatus = make([]byte, 8, 8+16*lbaStatusMaxDesc)
	}
	b := d.lbaStatus[:8]
	// Whole descriptors that fit the allocation length (sg3-utils warns
	// of a truncated one), and at least one, so that PARAMETER DATA
	// LENGTH tells an initiator whose allocation length held only the
	// header that there is one.
	for runs := 0; lba < d.blocks && len(b) < cap(b) && (len(b) == 8 || int64(len(b))+16 <= alloc) && runs < lbaStatusMaxScan; runs++ {
		st, n := d.provisioning(lba)
		if reported(rt, st) {
			b = binary.BigEndian.AppendUint64(b, lba)
			b = binary.BigEndian.AppendUint32(b, uint32(n))
			b = append(b, st, 0, 0, 0)
		}
		lba += n
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4)) // PARAMETER DATA LENGTH
	scsi.WriteParameterData(cmd.Data, b, int(min(alloc, int64(len(b)))))
	return nil
}

// lbaStatusMaxScan bounds the runs one GET LBA STATUS looks at.
const lbaStatusMaxScan = 4 * lbaStatusMaxDesc

// reported says whether REPORT TYPE rt reports a run of status st.
func reported(rt, st byte) bool {
	switch rt {
	case 0:
		return true
	case 1:
		return st != lbaMapped
	case 2:
		return st == lbaMapped
	case 3:
		return st == lbaDeallocated
	}
	return false // 4: anchored
}

// provisioning returns the status of lba and the number of LBAs from it
// that share it (at most 2^32-1, one descriptor's worth).
func (d *Disk) provisioning(lba uint64) (status byte, n uint64) {
	limit := min(d.blocks-lba, 0xffffffff)
	switch {
	case !d.cfg.lbp():
		return lbaMapped, limit
	case d.fake:
		return lbaDeallocated, limit
	}
	status = lbaDeallocated
	if d.store.Mapped(d.storeOff(lba)) {
		status = lbaMapped
	}
	// Chunk by chunk, at most once round the store: a run that goes all
	// the way round it without a change covers every LBA to the end.
	chunks := d.wrap>>storeChunkShift + 1
	for i := int64(0); n < limit; i++ {
		if i > chunks {
			return status, limit
		}
		off := d.storeOff(lba + n)
		if d.store.Mapped(off) != (status == lbaMapped) {
			break
		}
		end := min((off>>storeChunkShift+1)<<storeChunkShift, d.wrap)
		n += uint64(end-off) >> d.shift
	}
	return status, min(n, limit)
}
