package tape

import (
	"errors"

	"github.com/vscsid/vscsid/scsi"
)

// This file is the data path: READ(6), WRITE(6), WRITE FILEMARKS(6) and
// ERASE(6). READ and WRITE are the hot path: no allocation, no logging
// except Debug behind Check, only atomic stores for the stats.

// read6 is READ(6) (SSC-5 6.3).
//
// Variable mode (FIXED=0) reads one block of up to TRANSFER LENGTH bytes:
//
//   - the block has exactly that length: GOOD;
//   - it is shorter: the block is returned (the transport reports the short
//     Data-In with READ_LEN) and, unless SILI, CHECK CONDITION NO SENSE ILI
//     with INFORMATION = requested − actual;
//   - it is longer: the first TRANSFER LENGTH bytes are returned, the
//     position is after the block and the result is ILI with a negative
//     INFORMATION; SILI suppresses that only in variable-block mode (SSC-5:
//     an overlength condition is reported when the mode block length is
//     non-zero);
//   - a filemark: nothing is returned, the position is after the filemark,
//     NO SENSE FILEMARK DETECTED with FM and INFORMATION = requested length;
//   - end of data: BLANK CHECK END-OF-DATA DETECTED, INFORMATION =
//     requested length, the position stays at EOD.
//
// Fixed mode (FIXED=1) reads TRANSFER LENGTH blocks of the mode block size;
// it stops at a filemark (after it), at EOD, or after a block of another
// length (ILI, position after that block, which is not transferred), with
// INFORMATION = blocks not read. FIXED=1 with SILI=1 is invalid, and so is
// a fixed TRANSFER LENGTH larger than the Data-In buffer (24/00 at byte 2).
// A variable read into a smaller buffer returns what fits.
func (d *Drive) read6(cmd *scsi.Command) scsi.Response { return d.read(cmd, decodeXfer(cmd.CDB)) }

// read16 is READ(16) (SSC-5 clause 7): READ(6) starting at the logical object
// and partition the CDB names, located first when the drive is elsewhere.
func (d *Drive) read16(cmd *scsi.Command) scsi.Response { return d.read(cmd, decodeXfer16(cmd.CDB)) }

func (d *Drive) read(cmd *scsi.Command, x xfer) scsi.Response {
	if x.fixed && x.sili {
		return check(scsi.InvalidFieldSense(1, 1))
	}
	if x.fixed && d.mode.blockSize == 0 {
		return check(scsi.InvalidFieldSense(1, 0))
	}
	if r, ok := d.startAt(x.start); !ok {
		return r
	}
	if x.length == 0 {
		return scsi.Good // SSC-5 6.3: not an error, no movement
	}
	if !d.readable() {
		// A cartridge of a generation the drive does not read.
		return check(scsi.Sense{Key: scsi.MediumError, ASC: scsi.CannotReadMediumIncompatible})
	}
	if x.fixed && int64(x.length)*int64(int(d.mode.blockSize)+d.mode.lbp.extra(false)) > int64(cmd.Data.Len()) {
		// Blocks the initiator has no room for would be consumed and lost.
		return check(scsi.InvalidFieldSense(2, -1))
	}
	var r scsi.Response
	if x.fixed {
		r = d.readFixed(cmd, x.length)
	} else {
		r = d.readVariable(cmd, x.length, x.sili)
	}
	d.notePos()
	return r
}

func (d *Drive) readVariable(cmd *scsi.Command, want int, sili bool) scsi.Response {
	for {
		obj, err := d.med.Peek()
		if err != nil {
			return d.fault(err, dirRead)
		}
		switch obj.Kind {
		case KindBlock:
			if s, ok := d.readCheck(obj); !ok {
				return check(s)
			}
			// With LBP_R the block is followed by its protection
			// information, as far as the transfer has room.
			pi := d.mode.lbp.extra(false)
			n := min(obj.Len, want)
			at := cmd.Data.Written()
			if n > 0 {
				w, err := cmd.Data.WriteFromAt(d.ra, 0, n)
				d.st.readBytes.Add(uint64(w))
				if err != nil {
					return d.fault(err, dirRead)
				}
				if obj.Encoding&EncEncrypted != 0 {
					d.st.decrypted.Add(uint64(w))
				}
			}
			d.st.mediumRead.Add(uint64(obj.Stored))
			if pi > 0 && want > obj.Len {
				d.lbpAppend(cmd.Data, at, obj.Len, want-obj.Len)
			}
			if err := d.med.Next(); err != nil {
				return d.fault(err, dirRead)
			}
			wire := obj.Len + pi
			switch {
			case wire == want:
				return scsi.Good
			case wire < want && sili:
				return scsi.Good
			case wire > want && sili && d.mode.blockSize == 0:
				return scsi.Good
			}
			d.st.ili.Add(1)
			return check(iliSense(int64(want) - int64(wire)))
		case KindFilemark:
			if err := d.med.Next(); err != nil {
				return d.fault(err, dirRead)
			}
			d.st.fmEvents.Add(1)
			return check(filemarkSense(int64(want)))
		case KindSetmark:
			if err := d.med.Next(); err != nil {
				return d.fault(err, dirRead)
			}
			if d.mode.rsmk {
				d.st.fmEvents.Add(1)
				return check(setmarkSense(int64(want)))
			}
			// RSMK=0: setmarks are not reported; read on.
		default:
			d.st.eodEvents.Add(1)
			return check(eodSense(int64(want), true))
		}
	}
}

func (d *Drive) readFixed(cmd *scsi.Command, count int) scsi.Response {
	bs := int(d.mode.blockSize)
	for i := 0; i < count; {
		obj, err := d.med.Peek()
		if err != nil {
			return d.fault(err, dirRead)
		}
		switch obj.Kind {
		case KindBlock:
			if s, ok := d.readCheck(obj); !ok {
				return check(s)
			}
			if obj.Len != bs {
				if err := d.med.Next(); err != nil {
					return d.fault(err, dirRead)
				}
				d.st.ili.Add(1)
				return check(iliSense(int64(count - i)))
			}
			at := cmd.Data.Written()
			w, err := cmd.Data.WriteFromAt(d.ra, 0, bs)
			d.st.readBytes.Add(uint64(w))
			if err != nil {
				return d.fault(err, dirRead)
			}
			if obj.Encoding&EncEncrypted != 0 {
				d.st.decrypted.Add(uint64(w))
			}
			d.st.mediumRead.Add(uint64(obj.Stored))
			if pi := d.mode.lbp.extra(false); pi > 0 {
				d.lbpAppend(cmd.Data, at, bs, pi)
			}
			if err := d.med.Next(); err != nil {
				return d.fault(err, dirRead)
			}
			i++
		case KindFilemark:
			if err := d.med.Next(); err != nil {
				return d.fault(err, dirRead)
			}
			d.st.fmEvents.Add(1)
			return check(filemarkSense(int64(count - i)))
		case KindSetmark:
			if err := d.med.Next(); err != nil {
				return d.fault(err, dirRead)
			}
			if d.mode.rsmk {
				d.st.fmEvents.Add(1)
				return check(setmarkSense(int64(count - i)))
			}
		default:
			d.st.eodEvents.Add(1)
			return check(eodSense(int64(count-i), true))
		}
	}
	return scsi.Good
}

// write6 is WRITE(6) (SSC-5 6.9): one block of TRANSFER LENGTH bytes
// (FIXED=0) or TRANSFER LENGTH blocks of the mode block size (FIXED=1),
// written at the current position; anything after it is discarded.
//
//   - a variable block outside the READ BLOCK LIMITS, or more data than the
//     Data-Out buffer holds: ILLEGAL REQUEST 24/00 at the transfer length;
//   - write protected: DATA PROTECT 27/00; a density the drive only reads:
//     DATA PROTECT 30/05; WORM cartridge not at end of data: DATA PROTECT 30/0C;
//   - the block does not fit before the physical end: VOLUME OVERFLOW 00/02
//     EOM, INFORMATION = bytes (variable) or blocks (fixed) not written;
//   - written into the early-warning zone: CHECK CONDITION NO SENSE 00/02
//     EOM with VALID=0 — the data is on tape and st reports success.
func (d *Drive) write6(cmd *scsi.Command) scsi.Response { return d.write(cmd, decodeXfer(cmd.CDB)) }

// write16 is WRITE(16): WRITE(6) starting at the logical object and
// partition the CDB names, located first when the drive is elsewhere.
func (d *Drive) write16(cmd *scsi.Command) scsi.Response {
	return d.write(cmd, decodeXfer16(cmd.CDB))
}

func (d *Drive) write(cmd *scsi.Command, x xfer) scsi.Response {
	if x.fixed && d.mode.blockSize == 0 {
		return check(scsi.InvalidFieldSense(1, 0))
	}
	if r, ok := d.checkWritable(); !ok {
		return r
	}
	if r, ok := d.startAt(x.start); !ok {
		return r
	}
	if x.length == 0 {
		return scsi.Good
	}
	// With LBP_W every block is followed by its protection information.
	pi := d.mode.lbp.extra(true)
	enc := Encoding{Compress: d.mode.compression, Key: d.crypt.writeKey()}
	size, count := x.length-pi, 1
	if x.fixed {
		size, count = int(d.mode.blockSize), x.length
	} else if size < int(d.cfg.MinBlock) || size > int(d.cfg.MaxBlock) || size <= 0 {
		return check(scsi.InvalidFieldSense(2, -1))
	}
	if int64(size+pi)*int64(count) > int64(cmd.Data.Len()) {
		return check(scsi.InvalidFieldSense(2, -1))
	}
	d.bumpVCR()
	for i := range count {
		if pi > 0 && !d.lbpCheck(cmd.Data, size) {
			residue := int64(size + pi)
			if x.fixed {
				residue = int64(count - i)
			}
			return check(lbpWriteSense(residue))
		}
		stored, err := d.med.WriteBlock(cmd.Data, size, enc)
		if err != nil {
			d.notePos()
			d.noteUsed()
			if isEndOfMedium(err) {
				residue := int64(size)
				if x.fixed {
					residue = int64(count - i)
				}
				return check(overflowSense(residue))
			}
			return d.fault(err, dirWrite)
		}
		d.st.writtenBytes.Add(uint64(size))
		d.st.mediumWritten.Add(uint64(stored))
		if enc.Key != nil {
			d.st.encrypted.Add(uint64(size))
		}
		cmd.Data.Discard(pi)
	}
	d.notePos()
	d.noteUsed()
	if d.inEW() {
		d.st.earlyWarnings.Add(1)
		return check(earlyWarningSense())
	}
	return scsi.Good
}

// writeFilemarks6 is WRITE FILEMARKS(6) (SSC-5 6.10): byte 1 WSMK (bit 1)
// writes setmarks instead (DDS only; else 24/00), IMMED (bit 0) returns
// without synchronising; bytes 2-4 the count. With IMMED=0 it is the sync
// point st relies on at close: the medium is synced even for a count of 0.
// Overflow and early warning are reported as for WRITE (INFORMATION = marks
// not written).
func (d *Drive) writeFilemarks6(cmd *scsi.Command) scsi.Response {
	b1 := cmd.CDB.Byte(1)
	immed, wsmk := b1&0x01 != 0, b1&0x02 != 0
	if wsmk && !d.pers.Setmarks {
		return check(scsi.InvalidFieldSense(1, 1))
	}
	return d.writeFilemarks(int(cmd.CDB.Uint24(2)), immed, wsmk, start{})
}

// writeFilemarks16 is WRITE FILEMARKS(16): byte 1 FCS, LCS (accepted),
// IMMED (bit 0); PARTITION and LOGICAL OBJECT IDENTIFIER where the marks
// start (located first when the drive is elsewhere); FILEMARK COUNT bytes
// 12-14. It has no setmarks.
func (d *Drive) writeFilemarks16(cmd *scsi.Command) scsi.Response {
	if cmd.CDB.Byte(1)&0x02 != 0 {
		return check(scsi.InvalidFieldSense(1, 1))
	}
	return d.writeFilemarks(int(cmd.CDB.Uint24(cdb16Length)), cmd.CDB.Byte(1)&0x01 != 0, false, decodeStart(cmd.CDB))
}

func (d *Drive) writeFilemarks(count int, immed, wsmk bool, at start) scsi.Response {
	if r, ok := d.startAt(at); !ok {
		return r
	}
	kind := KindFilemark
	if wsmk {
		kind = KindSetmark
	}
	if count > 0 {
		if r, ok := d.checkWritable(); !ok {
			return r
		}
		d.bumpVCR()
	}
	n, err := d.writeMarks(kind, count)
	if kind == KindFilemark {
		d.st.filemarks.Add(uint64(n))
	}
	if err != nil {
		d.notePos()
		d.noteUsed()
		if isEndOfMedium(err) {
			return check(overflowSense(int64(count - n)))
		}
		return d.fault(err, dirWrite)
	}
	d.notePos()
	d.noteUsed()
	if !immed {
		if err := d.med.Sync(); err != nil {
			return d.fault(err, dirWrite)
		}
	}
	if count > 0 && d.inEW() {
		d.st.earlyWarnings.Add(1)
		return check(earlyWarningSense())
	}
	return scsi.Good
}

// writeMarks writes count marks of kind, all at once where the medium can
// (MarkWriter), and returns how many it wrote.
func (d *Drive) writeMarks(kind Kind, count int) (int, error) {
	if mw, ok := d.med.(MarkWriter); ok {
		return mw.WriteMarks(kind, count)
	}
	for i := range count {
		if err := d.med.WriteMark(kind); err != nil {
			return i, err
		}
	}
	return count, nil
}

// erase6 is ERASE(6) (SSC-5 6.2): byte 1 LONG (bit 0), IMMED (bit 1). Both
// forms end the data at the current position: the short form writes end of
// data there, the long one erases to the end of the partition, which for an
// image is the same thing. The position does not move.
func (d *Drive) erase6(_ *scsi.Command) scsi.Response {
	if r, ok := d.checkWritable(); !ok {
		return r
	}
	d.bumpVCR()
	if err := d.med.Erase(); err != nil {
		return d.fault(err, dirWrite)
	}
	d.notePos()
	d.noteUsed()
	return scsi.Good
}

// lbpCheck reports whether the size bytes of Data-Out at its cursor are
// followed by their protection information, as the selected method
// computes it. Nothing is consumed.
func (d *Drive) lbpCheck(data *scsi.Buffer, size int) bool {
	sum := newLBPSum(d.mode.lbp.method)
	data.Scan(data.Consumed(), size, sum.update)
	var want, got [lbpLen]byte
	sum.put(want[:])
	n := 0
	data.Scan(data.Consumed()+size, lbpLen, func(p []byte) { n += copy(got[n:], p) })
	return n == lbpLen && want == got
}

// lbpAppend writes the protection information of the size bytes of
// Data-In at off (the block just read) after them, at most room bytes of
// it.
func (d *Drive) lbpAppend(data *scsi.Buffer, off, size, room int) {
	sum := newLBPSum(d.mode.lbp.method)
	data.Scan(off, size, sum.update)
	var pi [lbpLen]byte
	sum.put(pi[:])
	_, _ = data.Write(pi[:min(room, lbpLen)])
}

// startAt positions the drive where a 16-byte READ, WRITE or WRITE
// FILEMARKS starts, as LOCATE(16) would (a partition that does not exist
// is 24/00 at byte 3, past end of data BLANK CHECK 00/05); ok is false
// with the response to return when the locate failed. The 6-byte forms,
// and a 16-byte one naming the current position, do not move.
func (d *Drive) startAt(s start) (scsi.Response, bool) {
	if !s.set {
		return scsi.Good, true
	}
	if p := d.med.Pos(); p.Partition == s.partition && p.Object == s.object {
		return scsi.Good, true
	}
	r := d.locate(locate{destType: destObject, cp: true, partition: s.partition, id: s.object}, cdb16Partition)
	return r, r.Status == scsi.StatusGood
}

func isEndOfMedium(err error) bool { return errors.Is(err, ErrEndOfMedium) }

// ascCannotWriteIncompatible is CANNOT WRITE MEDIUM - INCOMPATIBLE FORMAT.
const ascCannotWriteIncompatible scsi.ASC = 0x3005

// checkWritable refuses a write to a write-protected cartridge (DATA
// PROTECT 27/00) or to one in a density the drive only reads (DATA PROTECT
// 30/05; the MODE SENSE WP bit is set for both, so st's open for writing
// fails with EROFS first).
func (d *Drive) checkWritable() (scsi.Response, bool) {
	if d.info.WriteProtected {
		return check(dataProtect(scsi.WriteProtected)), false
	}
	if !d.writable() {
		return check(dataProtect(ascCannotWriteIncompatible)), false
	}
	return scsi.Good, true
}
