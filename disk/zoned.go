package disk

import (
	"encoding/binary"
	"fmt"

	"github.com/vscsid/vscsid/scsi"
)

// Zoned block devices (ZBC, as scsi_debug's zbc=): the zones, the write
// pointer rules the data commands obey, REPORT ZONES, the zone management
// commands (OPEN, CLOSE, FINISH ZONE, RESET WRITE POINTER) and the Zoned
// Block Device Characteristics VPD page. Conventional zones come first;
// the others are sequential write required (host-managed) or sequential
// write preferred (host-aware). Reads are unrestricted (URSWRZ=1: Linux
// refuses a host-managed disk without it), so a read past a write pointer
// returns what is there: zeros after a reset.

// ZBC zone types and conditions (ZBC-2 table "ZONE TYPE", "ZONE CONDITION").
const (
	zoneConventional = 0x1
	zoneSeqRequired  = 0x2
	zoneSeqPreferred = 0x3
	zoneGap          = 0x5

	condNotWP   = 0x0
	condEmpty   = 0x1
	condImpOpen = 0x2
	condExpOpen = 0x3
	condClosed  = 0x4
	condFull    = 0xe
)

// ZBC OUT service actions, and ZBC IN's REPORT ZONES.
const (
	saCloseZone         = 0x01
	saFinishZone        = 0x02
	saOpenZone          = 0x03
	saResetWritePointer = 0x04
	saReportZones       = 0x00
)

// zoneDescLen is the size of a zone descriptor and of the REPORT ZONES
// header.
const zoneDescLen = 64

// maxZones bounds the zone table (32 bytes a zone).
const maxZones = 1 << 20

// Senses of the zone rules.
var (
	errUnalignedWrite = scsi.NewError(scsi.IllegalRequest, scsi.UnalignedWriteCommand)
	errWriteBoundary  = scsi.NewError(scsi.IllegalRequest, scsi.WriteBoundaryViolation)
	errReadInvalid    = scsi.NewError(scsi.IllegalRequest, scsi.AttemptToReadInvalidData)
	errZoneResources  = scsi.NewError(scsi.DataProtect, scsi.InsufficientZoneResources)
	errZoneFull       = scsi.NewError(scsi.IllegalRequest, scsi.InvalidFieldInCDB) // a write to a FULL zone, as scsi_debug answers
	errNotZoneStart   = scsi.InvalidField(2, -1)
	errGapZone        = scsi.NewError(scsi.IllegalRequest, scsi.AttemptToAccessGapZone)
)

// zone is one zone's state. wp is meaningless in a conventional zone.
type zone struct {
	start, size, wp uint64
	typ, cond       uint8
	nonSeq          bool // host-aware: written other than at the write pointer
}

func (z *zone) end() uint64 { return z.start + z.size }

// seq reports whether z has a write pointer: sequential write required
// or preferred (not conventional, not a gap).
func (z *zone) seq() bool { return z.typ == zoneSeqRequired || z.typ == zoneSeqPreferred }

// zones is a disk's zone table and the counts of the open-zone limit.
// Like the rest of the disk's state it belongs to the command goroutine.
type zones struct {
	z                      []zone
	shift                  uint // log2 of the zone size in blocks
	nConv                  int  // conventional zones, at the start
	gaps                   bool // each sequential zone is followed by a gap zone (zone_cap)
	managed                bool
	maxOpen                int // 0: no limit
	impOpen, expOpen, nClo int
}

// zoneBlocks is the zone size of cfg in blocks for a capacity of blocks:
// zone_size, or the largest power of two up to 128 MiB that gives at
// least four zones (scsi_debug's "auto").
func zoneBlocks(cfg Config, blocks uint64) uint64 {
	lbs := uint64(cfg.LBS)
	if cfg.ZoneSize != 0 {
		return cfg.ZoneSize / lbs
	}
	zb := uint64(DefaultZoneSize) / lbs
	for zb > 1 && blocks/zb < 4 {
		zb /= 2
	}
	return zb
}

// newZones builds the zone table of a disk of blocks blocks; the caller
// has validated cfg (ZoneGeometry). With a zone capacity below the zone
// size, each zone-size slot after the conventional zones holds a
// sequential zone of that capacity and a gap zone for the rest, as
// scsi_debug's zone_cap_mb lays them out.
func newZones(cfg Config, blocks uint64) *zones {
	zb := zoneBlocks(cfg, blocks)
	zs := &zones{managed: cfg.Zoned == ZonedHostManaged}
	if zs.managed { // a host-aware disk's open zones are only a preference
		zs.maxOpen = int(cfg.ZoneMaxOpen)
	}
	for zb>>zs.shift > 1 {
		zs.shift++
	}
	capBlocks := zb
	if c := cfg.ZoneCap / uint64(cfg.LBS); c != 0 && c < zb {
		capBlocks, zs.gaps = c, true
	}
	seqType := uint8(zoneSeqPreferred)
	if zs.managed {
		seqType = zoneSeqRequired
	}
	slots := (blocks + zb - 1) / zb
	zs.nConv = int(min(uint64(cfg.ZoneNrConv), slots))
	n := slots
	if zs.gaps {
		n += slots - uint64(zs.nConv)
	}
	zs.z = make([]zone, 0, n)
	for i := uint64(0); i < slots; i++ {
		start := i * zb
		size := min(zb, blocks-start)
		if i < uint64(zs.nConv) {
			zs.z = append(zs.z, zone{start: start, size: size, typ: zoneConventional, cond: condNotWP})
			continue
		}
		seq := min(capBlocks, size)
		zs.z = append(zs.z, zone{start: start, size: seq, wp: start, typ: seqType, cond: condEmpty})
		if zs.gaps && seq < size {
			zs.z = append(zs.z, zone{start: start + seq, size: size - seq, typ: zoneGap, cond: condNotWP})
		}
	}
	return zs
}

// index is the position in the zone table of the zone that holds lba.
func (zs *zones) index(lba uint64) int {
	slot := int(lba >> zs.shift)
	if !zs.gaps || slot < zs.nConv {
		return slot
	}
	i := 2*slot - zs.nConv // the slot's sequential zone; its gap follows
	if lba >= zs.z[i].end() {
		i++
	}
	return i
}

// granularity is the ZONE STARTING LBA GRANULARITY of a disk with gap
// zones (the zone size, in blocks), 0 without.
func (zs *zones) granularity() uint64 {
	if !zs.gaps {
		return 0
	}
	return 1 << zs.shift
}

func (zs *zones) at(lba uint64) *zone { return &zs.z[zs.index(lba)] }

// zoneExtent decodes the zone a ZBC OUT command (OPEN, CLOSE, FINISH
// ZONE, RESET WRITE POINTER) names by its ZONE ID, the zone's first LBA,
// as an extent of that one block: a fault rule's lba= range holding a
// zone's start matches the commands on the zone, and a trace shows it.
// With ALL set the command names no zone.
func zoneExtent(c scsi.CDB) (scsi.Extent, bool) {
	if len(c) < 16 || c.Byte(14)&0x01 != 0 {
		return scsi.Extent{}, false
	}
	return scsi.Extent{LBA: c.Uint64(2), Blocks: 1}, true
}

// restore sets z's condition and write pointer from a hand-over record
// (handover.go), checking that they are ones the zone rules can reach:
// a conventional zone has no write pointer; an empty zone's is at its
// start, a full zone's at its end, an open or closed zone's inside it.
func (z *zone) restore(rec handOverZone) error {
	wpIn := rec.WP >= z.start && rec.WP <= z.end()
	ok := false
	switch rec.Cond {
	case condNotWP:
		ok = !z.seq()
	case condEmpty:
		ok = z.seq() && rec.WP == z.start
	case condFull:
		ok = z.seq() && rec.WP == z.end()
	case condImpOpen, condExpOpen:
		ok = z.seq() && wpIn
	case condClosed:
		ok = z.seq() && wpIn && rec.WP > z.start
	}
	if !ok || rec.NonSeq > 1 || (rec.NonSeq == 1 && z.typ != zoneSeqPreferred) {
		return fmt.Errorf("condition %#x, write pointer %d, non-sequential %d: not a state of zone type %#x at %d+%d",
			rec.Cond, rec.WP, rec.NonSeq, z.typ, z.start, z.size)
	}
	z.cond, z.wp, z.nonSeq = rec.Cond, rec.WP, rec.NonSeq == 1
	if !z.seq() {
		z.wp = 0
	}
	return nil
}

// recount sets the open and closed counts from the zones' conditions.
func (zs *zones) recount() {
	zs.impOpen, zs.expOpen, zs.nClo = 0, 0, 0
	for i := range zs.z {
		switch zs.z[i].cond {
		case condImpOpen:
			zs.impOpen++
		case condExpOpen:
			zs.expOpen++
		case condClosed:
			zs.nClo++
		}
	}
}

// open makes z implicitly or explicitly open, first closing an implicitly
// open zone when the open-zone limit is reached.
func (zs *zones) open(z *zone, explicit bool) {
	if !z.seq() || (explicit && z.cond == condExpOpen) || (!explicit && z.cond == condImpOpen) {
		return
	}
	if explicit && z.cond == condImpOpen {
		zs.close(z)
	} else if zs.maxOpen != 0 && zs.impOpen+zs.expOpen >= zs.maxOpen {
		zs.closeOneImplicit()
	}
	if z.cond == condClosed {
		zs.nClo--
	}
	if explicit {
		z.cond = condExpOpen
		zs.expOpen++
	} else {
		z.cond = condImpOpen
		zs.impOpen++
	}
}

// leaveOpen drops z from the open counts (it is no longer open).
func (zs *zones) leaveOpen(z *zone) {
	switch z.cond {
	case condImpOpen:
		zs.impOpen--
	case condExpOpen:
		zs.expOpen--
	case condClosed:
		zs.nClo--
	}
}

// close makes an open zone closed, or empty if nothing was written.
func (zs *zones) close(z *zone) {
	if z.cond != condImpOpen && z.cond != condExpOpen {
		return
	}
	zs.leaveOpen(z)
	if z.wp == z.start {
		z.cond = condEmpty
		return
	}
	z.cond = condClosed
	zs.nClo++
}

func (zs *zones) closeOneImplicit() {
	for i := range zs.z {
		if zs.z[i].cond == condImpOpen {
			zs.close(&zs.z[i])
			return
		}
	}
}

// finish makes a sequential zone full.
func (zs *zones) finish(z *zone) {
	if !z.seq() || z.cond == condFull {
		return
	}
	zs.leaveOpen(z)
	z.cond, z.wp = condFull, z.end()
}

// reset empties a sequential zone; the caller zeroes its blocks.
func (zs *zones) reset(z *zone) {
	if !z.seq() {
		return
	}
	zs.leaveOpen(z)
	z.cond, z.wp, z.nonSeq = condEmpty, z.start, false
}

// checkRead applies the read rule of a host-managed disk to n > 0 blocks
// at lba: a read may not run from one zone type into another.
func (zs *zones) checkRead(lba, n uint64) error {
	if zs.managed && zs.at(lba).typ != zs.at(lba+n-1).typ {
		return errReadInvalid
	}
	return nil
}

// checkWrite applies the write rules to n > 0 blocks at lba and, when
// the write may go ahead, opens its zone implicitly (ZBC-2 4.5.3): a
// write stays within conventional zones or within one sequential write
// required zone, starts at that zone's write pointer, and finds an open
// zone resource (DATA PROTECT, INSUFFICIENT ZONE RESOURCES when every
// open zone was opened explicitly).
func (zs *zones) checkWrite(lba, n uint64) error {
	z, last := zs.at(lba), zs.at(lba+n-1)
	switch {
	case z.typ == zoneGap:
		return errGapZone
	case z.typ == zoneConventional:
		if last.typ != zoneConventional {
			return errWriteBoundary
		}
		return nil
	case z.typ == zoneSeqPreferred && zs.gaps && last != z && zs.crossesGap(lba, n):
		return errGapZone // a host-aware write may run on, but not into a gap
	}
	if z.typ == zoneSeqRequired {
		switch {
		case last != z:
			return errWriteBoundary
		case z.cond == condFull:
			return errZoneFull
		case lba != z.wp:
			return errUnalignedWrite
		}
	}
	if z.cond == condEmpty || z.cond == condClosed {
		if zs.maxOpen != 0 && zs.expOpen >= zs.maxOpen {
			return errZoneResources
		}
		zs.open(z, false)
	}
	return nil
}

// crossesGap reports whether n blocks at lba reach into a gap zone.
func (zs *zones) crossesGap(lba, n uint64) bool {
	for i, end := zs.index(lba), lba+n; i < len(zs.z) && zs.z[i].start < end; i++ {
		if zs.z[i].typ == zoneGap {
			return true
		}
	}
	return false
}

// advance moves the write pointers past a write of n blocks at lba that
// checkWrite allowed: a sequential write required zone's by n, a
// sequential write preferred zone's to the highest block written (a
// write elsewhere than at it marks the zone non-sequential). A zone
// written to its end is full.
func (zs *zones) advance(lba, n uint64) {
	for n > 0 {
		z := zs.at(lba)
		k := min(n, z.end()-lba)
		if z.seq() {
			if z.cond == condEmpty || z.cond == condClosed {
				zs.open(z, false) // a host-aware write that ran on into it
			}
			if lba != z.wp {
				z.nonSeq = true
			}
			z.wp = max(z.wp, lba+k)
			if z.wp >= z.end() && z.cond != condFull {
				zs.leaveOpen(z)
				z.cond, z.wp = condFull, z.end()
			}
		}
		lba, n = lba+k, n-k
	}
}

// ---- REPORT ZONES (ZBC IN), ZBC-2 5.4 ----

// reportZones returns the zones from ZONE START LBA (bytes 2..9; the zone
// that holds it) that REPORTING OPTIONS (byte 14 bits 5..0) selects. The
// ZONE LIST LENGTH counts every selected zone to the end of the medium,
// or with PARTIAL (byte 14 bit 7) only those the ALLOCATION LENGTH
// (bytes 10..13) holds. Descriptors go straight to the Data-In buffer, so
// a report of a million zones allocates nothing.
func (d *Disk) reportZones(cmd *scsi.Command) error {
	c := cmd.CDB
	start, alloc := c.Uint64(2), uint64(c.Uint32(10))
	partial, opts := c.Byte(14)&0x80 != 0, c.Byte(14)&0x3f
	if !validReportingOption(opts) {
		return scsi.InvalidField(14, 5)
	}
	if start >= d.blocks {
		return scsi.ErrLBAOutOfRange
	}
	zs := d.zones
	first := zs.index(start)
	fits := uint64(0)
	if alloc > zoneDescLen {
		fits = (alloc - zoneDescLen) / zoneDescLen
	}
	var listed uint64
	for i := first; i < len(zs.z); i++ {
		if zoneReported(&zs.z[i], opts) {
			listed++
		}
	}
	if partial {
		listed = min(listed, fits)
	}
	var h [zoneDescLen]byte
	binary.BigEndian.PutUint32(h[0:], uint32(min(listed*zoneDescLen, 0xffffffff))) // ZONE LIST LENGTH
	// h[4] SAME 0: the zones may differ (the conventional ones, the last).
	binary.BigEndian.PutUint64(h[8:], d.blocks-1)        // MAXIMUM LBA
	binary.BigEndian.PutUint64(h[16:], zs.granularity()) // ZONE STARTING LBA GRANULARITY
	scsi.WriteParameterData(cmd.Data, h[:], int(min(alloc, zoneDescLen)))
	written := uint64(0)
	for i := first; i < len(zs.z) && written < fits; i++ {
		z := &zs.z[i]
		if !zoneReported(z, opts) {
			continue
		}
		var p [zoneDescLen]byte
		p[0] = z.typ
		p[1] = z.cond << 4
		if z.nonSeq {
			p[1] |= 0x02 // NON_SEQ
		}
		binary.BigEndian.PutUint64(p[8:], z.size)
		binary.BigEndian.PutUint64(p[16:], z.start)
		wp := ^uint64(0) // invalid in a conventional zone
		if z.seq() {
			wp = z.wp
		}
		binary.BigEndian.PutUint64(p[24:], wp)
		_, _ = cmd.Data.Write(p[:]) // fits counted what the buffer holds
		written++
	}
	return nil
}

// validReportingOption reports whether the REPORTING OPTIONS value is one
// ZBC-2 defines.
func validReportingOption(o byte) bool {
	return o <= 0x07 || o == 0x10 || o == 0x11 || o == 0x3e || o == 0x3f
}

// zoneReported applies REPORTING OPTIONS o to z.
func zoneReported(z *zone, o byte) bool {
	switch o {
	case 0x00:
		return true
	case 0x01:
		return z.cond == condEmpty
	case 0x02:
		return z.cond == condImpOpen
	case 0x03:
		return z.cond == condExpOpen
	case 0x04:
		return z.cond == condClosed
	case 0x05:
		return z.cond == condFull
	case 0x11:
		return z.nonSeq
	case 0x3e:
		return z.typ != zoneGap
	case 0x3f:
		return !z.seq()
	}
	return false // read only, offline, reset recommended: never
}

// ---- OPEN, CLOSE, FINISH ZONE and RESET WRITE POINTER (ZBC OUT) ----

// zoneAction decodes ZONE ID (bytes 2..9) and ALL (byte 14 bit 0). With
// ALL the ZONE ID is ignored; without it, it must be the first LBA of a
// sequential zone.
func (d *Disk) zoneAction(cmd *scsi.Command) (z *zone, all bool, err error) {
	c := cmd.CDB
	if c.Byte(14)&0x01 != 0 {
		return nil, true, nil
	}
	id := c.Uint64(2)
	if id >= d.blocks {
		return nil, false, scsi.ErrLBAOutOfRange
	}
	z = d.zones.at(id)
	if z.start != id || !z.seq() {
		return nil, false, errNotZoneStart
	}
	return z, false, nil
}

// openZone opens a zone explicitly, or with ALL every closed zone; it
// needs a free open-zone resource for each (none is taken from an
// explicitly opened zone). An open or full zone is left as it is.
func (d *Disk) openZone(cmd *scsi.Command) error {
	z, all, err := d.zoneAction(cmd)
	if err != nil {
		return err
	}
	zs := d.zones
	if all {
		if zs.maxOpen != 0 && zs.expOpen+zs.nClo > zs.maxOpen {
			return errZoneResources
		}
		for i := range zs.z {
			if zs.z[i].cond == condClosed {
				zs.open(&zs.z[i], true)
			}
		}
		return nil
	}
	if z.cond == condExpOpen || z.cond == condFull {
		return nil
	}
	if zs.maxOpen != 0 && zs.expOpen >= zs.maxOpen {
		return errZoneResources
	}
	zs.open(z, true)
	return nil
}

// closeZone closes an open zone, or with ALL every open zone.
func (d *Disk) closeZone(cmd *scsi.Command) error {
	z, all, err := d.zoneAction(cmd)
	if err != nil {
		return err
	}
	if all {
		for i := range d.zones.z {
			d.zones.close(&d.zones.z[i])
		}
		return nil
	}
	d.zones.close(z)
	return nil
}

// finishZone makes a zone full, or with ALL every open or closed zone.
func (d *Disk) finishZone(cmd *scsi.Command) error {
	z, all, err := d.zoneAction(cmd)
	if err != nil {
		return err
	}
	if all {
		for i := range d.zones.z {
			switch d.zones.z[i].cond {
			case condImpOpen, condExpOpen, condClosed:
				d.zones.finish(&d.zones.z[i])
			}
		}
		return nil
	}
	d.zones.finish(z)
	return nil
}

// resetWritePointer empties a zone, or with ALL every sequential zone
// that is not, and zeroes what was written in it.
func (d *Disk) resetWritePointer(cmd *scsi.Command) error {
	z, all, err := d.zoneAction(cmd)
	if err != nil {
		return err
	}
	if d.cfg.WP {
		return scsi.ErrWriteProtected
	}
	if !all {
		return d.resetZone(z)
	}
	for i := range d.zones.z {
		if z := &d.zones.z[i]; z.seq() && z.cond != condEmpty {
			if err := d.resetZone(z); err != nil {
				return err
			}
		}
	}
	return nil
}

func (d *Disk) resetZone(z *zone) error {
	written := z.wp - z.start
	d.zones.reset(z)
	if d.fake || written == 0 {
		return nil
	}
	return d.zero(z.start, written)
}

// appendZonedCharacteristics is the Zoned Block Device Characteristics
// VPD page (B6h), ZBC-2 6.5.2: page length 3Ch. URSWRZ is set; the
// optimal counts of a host-aware disk are not reported; a host-managed
// disk reports its open-zone limit (FFFFFFFFh: none).
func (d *Disk) appendZonedCharacteristics(b []byte) []byte {
	var p [60]byte
	p[0] = 0x01 // URSWRZ
	binary.BigEndian.PutUint32(p[4:], 0xffffffff)
	binary.BigEndian.PutUint32(p[8:], 0xffffffff)
	maxOpen := uint32(0xffffffff)
	if d.zones.managed && d.zones.maxOpen != 0 {
		maxOpen = uint32(d.zones.maxOpen)
	}
	binary.BigEndian.PutUint32(p[12:], maxOpen)
	if g := d.zones.granularity(); g != 0 {
		p[19] = 0x08 // ZONE ALIGNMENT METHOD: constant zone starting LBA granularity
		binary.BigEndian.PutUint64(p[20:], g)
	}
	return append(b, p[:]...)
}
