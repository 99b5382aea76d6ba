package disk

import (
	"encoding/binary"

	"github.com/vscsid/vscsid/scsi"
)

// The provisioning commands: WRITE SAME (zeroing or unmapping a range, or
// writing one block over it) and UNMAP.

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
