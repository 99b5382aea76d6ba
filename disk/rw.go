package disk

import (
	"bytes"

	"github.com/vscsid/vscsid/scsi"
)

// The data path: READ, WRITE, WRITE AND VERIFY, VERIFY and COMPARE AND
// WRITE, and the cache commands: SYNCHRONIZE CACHE, which flushes what
// WRITE left in the backend's cache, and PRE-FETCH.

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
	if d.zones != nil {
		if err := d.zones.checkRead(lba, uint64(n)); err != nil {
			return err
		}
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

// write stores n blocks at lba from the Data-Out buffer. The Data-Out
// buffer (the transport's expected data transfer length) must hold
// exactly n blocks: a shorter or longer one is refused with 0E/03 INVALID
// FIELD IN COMMAND INFORMATION UNIT before anything is written, as LIO's
// own backstores refuse it. A short one would tear a block, and TCMU
// cannot report a Data-Out residual for a long one.
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
	want := int64(n) << d.shift
	if int64(cmd.Data.Len()) != want {
		return scsi.ErrDataLength
	}
	if n == 0 {
		return nil
	}
	if d.zones != nil {
		if err := d.zones.checkWrite(lba, uint64(n)); err != nil {
			return err
		}
	}
	if d.misaligned(lba, n) {
		d.misalignedWrites.Add(1)
	}
	if err := d.storeFrom(cmd.Data, lba, want); err != nil {
		return err
	}
	if d.zones != nil {
		d.zones.advance(lba, uint64(n))
	}
	if fua {
		return d.flush()
	}
	return nil
}

// storeFrom moves want bytes (whole blocks) of Data-Out to the medium at
// lba, wrapping at the end of the backend; fake_rw discards them.
func (d *Disk) storeFrom(buf *scsi.Buffer, lba uint64, want int64) error {
	if d.fake {
		buf.Discard(int(want))
		return nil
	}
	off := d.storeOff(lba)
	for want > 0 {
		c := min(want, d.wrap-off)
		if _, err := buf.ReadToAt(d.backend, off, int(c)); err != nil {
			return d.fault(err, scsi.WriteError)
		}
		want -= c
		off = 0
	}
	return nil
}

// ---- WRITE ATOMIC(16), SBC-4 5.48 ----

// writeAtomic16 is WRITE(16) within the atomic write limits of the Block
// Limits VPD page: TRANSFER LENGTH (bytes 12..13) at most
// atomic_wr_max_length and a multiple of atomic_wr_gran, LBA a multiple
// of atomic_wr_align, ATOMIC BOUNDARY (bytes 10..11) 0 (no boundaries are
// reported); else 24/00 pointing at the field. The write is atomic as
// every command of the device is: it runs alone, and the RAM store takes
// it whole or, with a refused Data-Out, not at all.
func (d *Disk) writeAtomic16(cmd *scsi.Command) error {
	c := cmd.CDB
	if err := checkWriteByte1(c[1]); err != nil {
		return err
	}
	e, _ := blockExtent(c)
	switch {
	case c.Uint16(10) != 0:
		return scsi.InvalidField(10, -1)
	case e.Blocks > uint64(d.cfg.AtomicMax):
		return scsi.InvalidField(12, -1)
	case d.cfg.AtomicGran > 1 && e.Blocks%uint64(d.cfg.AtomicGran) != 0:
		return scsi.InvalidField(12, -1)
	case d.cfg.AtomicAlign > 1 && e.LBA%uint64(d.cfg.AtomicAlign) != 0:
		return scsi.InvalidField(2, -1)
	}
	return d.write(cmd, e.LBA, uint32(e.Blocks), int(e.LengthAt), c[1]&0x08 != 0)
}

// ---- WRITE AND VERIFY(10/12/16), SBC-4 5.47–5.49 ----

// writeAndVerify writes like WRITE with FUA: the data is on the medium
// (the backend flushed) before GOOD, which is what the verify after the
// write asserts. BYTCHK 01b (compare the Data-Out with what was written)
// needs no second pass: the RAM store returns what it was given, and a
// backend that fails to write fails the write itself. BYTCHK 1xb is
// reserved: the Data-Out is always the n blocks to write. DPO is accepted
// and WRPROTECT must be 0 (no protection information).
func (d *Disk) writeAndVerify(cmd *scsi.Command) error {
	c := cmd.CDB
	switch b := c[1]; {
	case b&0xe0 != 0:
		return scsi.InvalidField(1, 7)
	case b&0x04 != 0:
		return scsi.InvalidField(1, 2)
	}
	e, _ := blockExtent(c)
	return d.write(cmd, e.LBA, uint32(e.Blocks), int(e.LengthAt), true)
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
	lbs := int64(d.lbs)
	if bytchk == 1 {
		return d.compareMedium(cmd.Data, lba, want)
	}
	d.compareBuffers()
	pat := d.cmpB[:lbs]
	_, _ = cmd.Data.Read(pat) // cannot be short: Len was checked against want
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

// compareBuffers allocates the compare buffers on first use.
func (d *Disk) compareBuffers() {
	if d.cmpA == nil {
		d.cmpA = make([]byte, 64<<10)
		d.cmpB = make([]byte, 64<<10)
	}
}

// compareMedium compares the next want bytes (whole blocks) of Data-Out
// with the medium from lba. A difference is MISCOMPARE, 1D/00, with
// INFORMATION = the offset of the first differing byte in those bytes.
// buf must hold want bytes.
func (d *Disk) compareMedium(buf *scsi.Buffer, lba uint64, want int64) error {
	d.compareBuffers()
	lbs := int64(d.lbs)
	for done := int64(0); done < want; {
		c := min(want-done, int64(len(d.cmpA)))
		if err := d.load(d.cmpA[:c], lba+uint64(done/lbs)); err != nil {
			return err
		}
		_, _ = buf.Read(d.cmpB[:c]) // cannot be short: the caller checked Len
		if i := mismatch(d.cmpA[:c], d.cmpB[:c]); i >= 0 {
			return miscompare(done + int64(i))
		}
		done += c
	}
	return nil
}

// ---- COMPARE AND WRITE, SBC-4 5.3 ----

// compareAndWriteMax is the MAXIMUM COMPARE AND WRITE LENGTH of the Block
// Limits VPD page, in blocks: 255, the most the one-byte NUMBER OF
// LOGICAL BLOCKS holds (LIO's own backstores allow 1, VMware's ATS sends
// 1), or max_blks when that is smaller.
func (d *Disk) compareAndWriteMax() uint64 {
	if d.maxBlocks != 0 {
		return min(0xff, uint64(d.maxBlocks))
	}
	return 0xff
}

// compareAndWrite compares the first n blocks of the Data-Out buffer with
// the medium at lba and, if they are equal, writes the second n blocks
// there. Commands of one device run one at a time, so nothing can come
// between the compare and the write: the command is atomic against every
// other command, from any initiator or path. A difference is MISCOMPARE,
// 1D/00, with INFORMATION = the offset of the first differing byte in the
// Data-Out buffer, and nothing is written. The Data-Out must be exactly
// 2n blocks (else 0E/03, as for WRITE). In fake_rw mode nothing is
// compared, as VERIFY does not compare there.
func (d *Disk) compareAndWrite(cmd *scsi.Command) error {
	c := cmd.CDB
	if err := checkWriteByte1(c[1]); err != nil {
		return err
	}
	e, _ := blockExtent(c)
	if e.Blocks > d.compareAndWriteMax() {
		return scsi.InvalidField(int(e.LengthAt), -1)
	}
	if err := d.checkRange(e.LBA, e.Blocks); err != nil {
		return err
	}
	if d.cfg.WP {
		return scsi.ErrWriteProtected
	}
	want := int64(e.Blocks) << d.shift
	if int64(cmd.Data.Len()) != 2*want {
		return scsi.ErrDataLength
	}
	if want == 0 {
		return nil
	}
	if d.zones != nil {
		if err := d.zones.checkWrite(e.LBA, e.Blocks); err != nil {
			return err
		}
	}
	if d.fake {
		cmd.Data.Discard(int(2 * want))
	} else {
		if err := d.compareMedium(cmd.Data, e.LBA, want); err != nil {
			return err
		}
		if err := d.storeFrom(cmd.Data, e.LBA, want); err != nil {
			return err
		}
	}
	if d.zones != nil {
		d.zones.advance(e.LBA, e.Blocks)
	}
	if c[1]&0x08 != 0 { // FUA
		return d.flush()
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

// ---- PRE-FETCH(10/16), SBC-4 5.10–5.11 ----

// conditionMet is PRE-FETCH's answer: every block is already where a
// cache would hold it (RAM, or nothing at all in fake_rw mode), so the
// whole range "fits in the cache", as on scsi_debug.
var conditionMet = scsi.Response{Status: scsi.StatusConditionMet}

// preFetch range-checks (PREFETCH LENGTH 0 = to the last LBA) and answers
// CONDITION MET, with or without IMMED.
func (d *Disk) preFetch(cmd *scsi.Command) scsi.Response {
	e, _ := blockExtent(cmd.CDB)
	err := d.checkRange(e.LBA, e.Blocks)
	if e.Blocks == 0 && e.LBA >= d.blocks {
		err = scsi.ErrLBAOutOfRange
	}
	if err != nil {
		return scsi.ResponseFor(err)
	}
	return conditionMet
}
