package tape

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/vscsid/vscsid/scsi"
)

// This file is positioning: REWIND, SPACE(6/16), LOCATE(10/16), READ
// POSITION, LOAD UNLOAD and PREVENT ALLOW MEDIUM REMOVAL.
//
// The residues follow what st computes its file and block numbers from
// (st_int_ioctl): after SPACE, INFORMATION is the count not spaced, as an
// absolute value also for backward spaces; SPACE stops after a filemark
// when going forward and before it when going backward (SSC-5 6.7), so
// `mt status` shows the right file and block after fsf, bsf, fsr, bsr, eod.

// seek locates to object obj of partition part. Reaching end of data
// exactly is success; asking for an object past it leaves the position at
// EOD and returns ErrEndOfData.
func (d *Drive) seek(part int, obj uint64) error {
	err := d.med.Locate(part, obj)
	if errors.Is(err, ErrEndOfData) {
		if p := d.med.Pos(); p.Partition == part && p.Object == obj {
			return nil
		}
	}
	return err
}

// rewind is REWIND (SSC-5 7.8): the beginning of partition 0 (BOM, as LTO
// drives define it). IMMED (byte 1 bit 0) changes nothing: the rewind is
// instant.
func (d *Drive) rewind(_ *scsi.Command) scsi.Response {
	if err := d.seek(0, 0); err != nil {
		return d.fault(err, dirNone)
	}
	d.notePos()
	return scsi.Good
}

// space6 is SPACE(6) (SSC-5 6.7).
func (d *Drive) space6(cmd *scsi.Command) scsi.Response {
	return d.space(decodeSpace6(cmd.CDB))
}

// space16 is SPACE(16) (SSC-5 7.10); PARAMETER LENGTH must be zero.
func (d *Drive) space16(cmd *scsi.Command) scsi.Response {
	if cmd.CDB.Uint16(space16ParamLength) != 0 {
		return check(scsi.InvalidFieldSense(space16ParamLength, -1))
	}
	return d.space(decodeSpace16(cmd.CDB))
}

func (d *Drive) space(s space) scsi.Response {
	var r scsi.Response
	switch s.code {
	case spaceBlocks:
		r = d.spaceObjects(s.count, KindBlock)
	case spaceFilemarks:
		r = d.spaceObjects(s.count, KindFilemark)
	case spaceSeqFilemarks:
		r = d.spaceSequential(s.count, KindFilemark)
	case spaceEndOfData:
		r = d.spaceEOD()
	case spaceSetmarks, spaceSeqSetmarks:
		if !d.pers.Setmarks {
			return check(scsi.InvalidFieldSense(spaceCodeByte, 3))
		}
		if s.code == spaceSetmarks {
			r = d.spaceObjects(s.count, KindSetmark)
		} else {
			r = d.spaceSequential(s.count, KindSetmark)
		}
	default:
		return check(scsi.InvalidFieldSense(spaceCodeByte, 3))
	}
	d.notePos()
	return r
}

// magnitude returns |n| without overflowing at math.MinInt64.
func magnitude(n int64) int64 {
	if n == math.MinInt64 {
		return math.MaxInt64
	}
	if n < 0 {
		return -n
	}
	return n
}

// stops reports whether crossing an object of kind k ends a space over
// objects of kind unit before the count is done: a filemark stops a space
// over blocks; a setmark stops blocks and filemarks when RSMK is set. A
// space over setmarks crosses everything else.
func (d *Drive) stops(unit, k Kind) bool {
	switch k {
	case KindFilemark:
		return unit == KindBlock
	case KindSetmark:
		return unit != KindSetmark && d.mode.rsmk
	}
	return false
}

// markSense is the condition for crossing mark k with residue left.
func (d *Drive) markSense(k Kind, residue int64) scsi.Response {
	d.st.fmEvents.Add(1)
	if k == KindSetmark {
		return check(setmarkSense(residue))
	}
	return check(filemarkSense(residue))
}

// spaceObjects spaces over count objects of kind unit (blocks, filemarks
// or setmarks); count < 0 goes towards BOP.
func (d *Drive) spaceObjects(count int64, unit Kind) scsi.Response {
	n := magnitude(count)
	if fs, ok := d.med.(FilemarkSpacer); ok && unit == KindFilemark && !d.mode.rsmk && count != 0 {
		// Nothing but the end of data or BOP can stop it early: the
		// medium may skip what it knows lies between.
		done, err := fs.SpaceFilemarks(count)
		switch {
		case err == nil:
			return scsi.Good
		case errors.Is(err, ErrEndOfData):
			d.st.eodEvents.Add(1)
			return check(eodSense(n-magnitude(done), true))
		case errors.Is(err, ErrBeginningOfPart):
			d.st.bopEvents.Add(1)
			return check(bopSense(n-magnitude(done), true))
		}
		return d.fault(err, dirNone)
	}
	var done int64
	if count > 0 {
		for done < n {
			obj, err := d.med.Peek()
			if err != nil {
				return d.fault(err, dirNone)
			}
			if obj.Kind == KindEOD {
				d.st.eodEvents.Add(1)
				return check(eodSense(n-done, true))
			}
			if err := d.med.Next(); err != nil {
				return d.fault(err, dirNone)
			}
			switch {
			case obj.Kind == unit:
				done++
			case d.stops(unit, obj.Kind):
				return d.markSense(obj.Kind, n-done) // position after the mark
			}
		}
		return scsi.Good
	}
	for done < n {
		obj, err := d.med.Prev()
		if errors.Is(err, ErrBeginningOfPart) {
			d.st.bopEvents.Add(1)
			return check(bopSense(n-done, true))
		}
		if err != nil {
			return d.fault(err, dirNone)
		}
		switch {
		case obj.Kind == unit:
			done++
		case d.stops(unit, obj.Kind):
			return d.markSense(obj.Kind, n-done) // position before the mark
		}
	}
	return scsi.Good
}

// spaceSequential spaces to the first run of |count| consecutive marks of
// kind k (SPACE code 2 or 5): forward it stops after the last mark of the
// run, backward before the first. INFORMATION is not reported at EOD or BOP
// (there is no meaningful residue).
func (d *Drive) spaceSequential(count int64, k Kind) scsi.Response {
	n := magnitude(count)
	if n == 0 {
		return scsi.Good
	}
	var run int64
	for run < n {
		var obj Object
		var err error
		if count > 0 {
			if obj, err = d.med.Peek(); err == nil {
				if obj.Kind == KindEOD {
					d.st.eodEvents.Add(1)
					return check(eodSense(0, false))
				}
				err = d.med.Next()
			}
		} else {
			obj, err = d.med.Prev()
			if errors.Is(err, ErrBeginningOfPart) {
				d.st.bopEvents.Add(1)
				return check(bopSense(0, false))
			}
		}
		if err != nil {
			return d.fault(err, dirNone)
		}
		if obj.Kind == k {
			run++
		} else {
			run = 0
		}
	}
	return scsi.Good
}

// spaceEOD is SPACE code 3: to end of data in the current partition.
func (d *Drive) spaceEOD() scsi.Response {
	if err := d.seek(d.partition(), math.MaxUint64); err != nil && !errors.Is(err, ErrEndOfData) {
		return d.fault(err, dirNone)
	}
	return scsi.Good
}

// locate10 is LOCATE(10) (SSC-5 7.4), what `mt seek` and st's MTSEEK send.
func (d *Drive) locate10(cmd *scsi.Command) scsi.Response {
	return d.locate(decodeLocate10(cmd.CDB), 8)
}

// locate16 is LOCATE(16) (SSC-5 7.5), LTFS's positioning command.
func (d *Drive) locate16(cmd *scsi.Command) scsi.Response {
	l := decodeLocate16(cmd.CDB)
	switch l.destType {
	case destObject, destFile, destEOD:
	default:
		return check(scsi.InvalidFieldSense(1, 5))
	}
	return d.locate(l, 3)
}

// locate moves to a logical object, to the start of a logical file (just
// after its filemark; file 0 is BOP) or to end of data, in the partition
// given by CP or the current one. Past end of data: BLANK CHECK 00/05 with
// the position at EOD (scsi_debug resp_locate). partByte is where the
// PARTITION field is, for the field pointer.
func (d *Drive) locate(l locate, partByte int) scsi.Response {
	part := d.partition()
	if l.cp {
		if l.partition >= d.info.Partitions {
			return check(scsi.InvalidFieldSense(partByte, -1))
		}
		part = l.partition
	}
	var err error
	switch l.destType {
	case destObject:
		err = d.seek(part, l.id)
	case destEOD:
		err = d.seek(part, math.MaxUint64)
		if errors.Is(err, ErrEndOfData) {
			err = nil
		}
	case destFile:
		if err = d.seek(part, 0); err == nil {
			err = d.toFile(l.id)
		}
	}
	d.notePos()
	switch {
	case err == nil:
		return scsi.Good
	case errors.Is(err, ErrEndOfData):
		d.st.eodEvents.Add(1)
		return check(eodSense(0, false))
	}
	return d.fault(err, dirNone)
}

// toFile moves forward from BOP to just after filemark number file.
func (d *Drive) toFile(file uint64) error {
	for d.med.Pos().File < file {
		obj, err := d.med.Peek()
		if err != nil {
			return err
		}
		if obj.Kind == KindEOD {
			return ErrEndOfData
		}
		if err := d.med.Next(); err != nil {
			return err
		}
	}
	return nil
}

// readPosition is READ POSITION (SSC-5 7.6) in its short (service actions
// 00h and 01h, 20 bytes), long (06h, 32 bytes) and extended (08h, 32 bytes)
// forms. Block and object numbers are the same here: logical objects
// (blocks and marks) from BOP of the partition; the object buffer is always
// empty (writes are synchronous).
func (d *Drive) readPosition(cmd *scsi.Command) scsi.Response {
	sa := cmd.CDB.Byte(rpServiceAction) & 0x1f
	pos := d.med.Pos()
	var flags byte
	if pos.Object == 0 {
		flags |= 0x80 // BOP
	}
	if d.inEW() {
		flags |= 0x40 // EOP: between early warning and the end of partition
	}
	b := d.buf[:0]
	switch sa {
	case rpShortBlockID, rpShortVendor:
		b = extendZero(b, rpShortLen)
		if pos.Object > math.MaxUint32 {
			flags |= 0x02 // PERR: the position does not fit
		}
		b[0] = flags
		b[1] = byte(min(pos.Partition, 0xff))
		binary.BigEndian.PutUint32(b[4:], uint32(min(pos.Object, math.MaxUint32)))
		binary.BigEndian.PutUint32(b[8:], uint32(min(pos.Object, math.MaxUint32)))
		// bytes 13-15 objects and 16-19 bytes in the buffer: 0
		scsi.WriteParameterData(cmd.Data, b, rpShortLen)
	case rpLong:
		b = extendZero(b, rpLongLen)
		b[0] = flags & 0xc0
		binary.BigEndian.PutUint32(b[4:], uint32(pos.Partition))
		binary.BigEndian.PutUint64(b[8:], pos.Object)
		binary.BigEndian.PutUint64(b[16:], pos.File)
		binary.BigEndian.PutUint64(b[24:], pos.Set)
		scsi.WriteParameterData(cmd.Data, b, rpLongLen)
	case rpExtended:
		b = extendZero(b, rpExtendedLen)
		b[0] = flags
		b[1] = byte(min(pos.Partition, 0xff))
		binary.BigEndian.PutUint16(b[2:], rpExtendedLen-4)
		binary.BigEndian.PutUint64(b[8:], pos.Object)
		binary.BigEndian.PutUint64(b[16:], pos.Object)
		alloc := int(cmd.CDB.Uint16(rpAllocByte))
		scsi.WriteParameterData(cmd.Data, b, alloc)
	default:
		return check(scsi.InvalidFieldSense(rpServiceAction, 4))
	}
	d.buf = b
	return scsi.Good
}

// extendZero returns b with n zero bytes appended.
func extendZero(b []byte, n int) []byte {
	b = append(b, make([]byte, n)...)
	return b
}

// loadUnload is LOAD UNLOAD (SSC-5 7.3), byte 4: HOLD (bit 3), EOT (bit 2),
// RETEN (bit 1), LOAD (bit 0).
//
//   - LOAD=1 with a ready cartridge rewinds (and retensions, instantly);
//     from the hold position it loads and queues UNIT ATTENTION 28/00, as
//     scsi_debug does so that st's new-medium path is exercised; with no
//     cartridge it is NOT READY 3A/00. LOAD=1 with EOT=1 is invalid.
//   - LOAD=0 unloads: HOLD=1 leaves the cartridge in the drive, not ready
//     (04/02 until the next LOAD); HOLD=0 ejects it (3A/00 afterwards; the
//     operator loads the next one). Refused with ILLEGAL REQUEST 53/02 while
//     medium removal is prevented.
func (d *Drive) loadUnload(cmd *scsi.Command) scsi.Response {
	b4 := cmd.CDB.Byte(4)
	if b4&luLoad != 0 {
		if b4&luEOT != 0 {
			return check(scsi.InvalidFieldSense(4, 2))
		}
		switch d.state {
		case stateEmpty:
			return check(d.notReadySense())
		case stateHeld:
			d.state = stateReady
			d.st.loaded.Store(true)
			d.spc.UA.Add(scsi.NotReadyToReadyChange)
		}
		if err := d.seek(0, 0); err != nil {
			return d.fault(err, dirNone)
		}
		d.notePos()
		return scsi.Good
	}
	if d.state == stateEmpty {
		return check(d.notReadySense())
	}
	if d.prevent {
		return check(illegal(scsi.MediumRemovalPrevented))
	}
	if b4&luHold != 0 {
		if err := d.med.Sync(); err != nil {
			return d.fault(err, dirWrite)
		}
		if err := d.seek(0, 0); err != nil {
			return d.fault(err, dirNone)
		}
		d.state = stateHeld
		d.st.loaded.Store(false)
		d.notePos()
		return scsi.Good
	}
	if err := d.eject(); err != nil {
		return check(scsi.Sense{Key: scsi.HardwareError, ASC: scsi.MediumLoadOrEjectFailed})
	}
	return scsi.Good
}

// preventAllow is PREVENT ALLOW MEDIUM REMOVAL: byte 4 bits 1..0, 00b
// allow, 01b prevent (st's MTLOCK); 10b/11b (medium changer) are refused.
func (d *Drive) preventAllow(cmd *scsi.Command) scsi.Response {
	switch cmd.CDB.Byte(4) & 0x03 {
	case 0:
		d.prevent = false
	case 1:
		d.prevent = true
	default:
		return check(scsi.InvalidFieldSense(4, 1))
	}
	return scsi.Good
}
