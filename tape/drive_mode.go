package tape

import (
	"encoding/binary"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
)

// This file is the drive's configuration surface: mode pages and MODE
// SELECT, READ BLOCK LIMITS, REPORT DENSITY SUPPORT, FORMAT MEDIUM, READ
// BUFFER, and the SPC commands the drive hands to scsi.SPC.

// Mode page codes (SSC-5 8.3, SPC-5 7.5).
const (
	pageControl       = 0x0a // SPC-5 7.5.8
	pageCompression   = 0x0f // SSC-5 8.3.2 data compression
	pageDeviceConfig  = 0x10 // SSC-5 8.3.3 device configuration (subpage 01h: extension, 8.3.4)
	pagePartition     = 0x11 // SSC-5 8.3.5 medium partition
	pageInfoExcept    = 0x1c // SPC-5 7.5.12 informational exceptions control
	pageMediumConfig  = 0x1d // SSC-5 8.3.7 medium configuration (WORM mode)
	devConfigLen      = 0x0e // page length of the device configuration page
	devConfigExtLen   = 0x1c // page length of its extension subpage
	partitionFixedLen = 8    // medium partition page without size descriptors
)

func (d *Drive) modePages() scsi.ModePages {
	return scsi.ModePages{
		Pages: []scsi.ModePage{
			{Code: pageControl, Append: d.appendControlPage, Select: d.selectControlPage},
			{Code: pageCompression, Append: d.appendCompressionPage, Select: d.selectCompressionPage},
			{Code: pageDeviceConfig, Append: d.appendDeviceConfigPage, Select: d.selectDeviceConfigPage},
			{Code: pageDeviceConfig, Subpage: 0x01, Append: d.appendDeviceConfigExtPage, Select: d.selectDeviceConfigExtPage},
			{Code: pagePartition, Append: d.appendPartitionPage, Select: d.selectPartitionPage},
			{Code: pageInfoExcept, Append: d.appendInfoExceptPage, Select: d.selectInfoExceptPage},
			{Code: pageMediumConfig, Append: d.appendMediumConfigPage},
		},
		DeviceSpecific:        d.deviceSpecific,
		BlockDescriptor:       d.blockDescriptor,
		SelectBlockDescriptor: d.selectBlockDescriptor,
	}
}

// deviceSpecific is the mode parameter header's device-specific byte (SSC-5
// 8.3.1): WP (bit 7) when the cartridge cannot be written, BUFFERED MODE 1
// (bits 6..4; st shows it as drive buffering), SPEED 0.
func (d *Drive) deviceSpecific() uint8 {
	v := uint8(0x10)
	if d.state != stateEmpty && !d.writable() {
		v |= 0x80
	}
	return v
}

// blockDescriptor appends the block descriptor (SSC-5 8.3.1): density
// code, NUMBER OF BLOCKS 0, block length (0 = variable). The long form
// (MODE SENSE(10) with LLBAA) carries no density code.
func (d *Drive) blockDescriptor(b []byte, long bool) []byte {
	density := d.mode.density
	if d.state != stateEmpty {
		density = d.mediumDensity()
	}
	if long {
		b = extendZero(b, 16)
		binary.BigEndian.PutUint32(b[len(b)-4:], d.mode.blockSize)
		return b
	}
	b = extendZero(b, 8)
	desc := b[len(b)-8:]
	desc[0] = density
	put24(desc[5:8], d.mode.blockSize)
	return b
}

// selectBlockDescriptor applies a block descriptor from MODE SELECT: the
// block length (0 = variable, else within the READ BLOCK LIMITS; `mt
// setblk`) and the density code (00h and 7Fh: no change; else one the
// drive knows; `mt setdensity`).
func (d *Drive) selectBlockDescriptor(desc []byte, long bool) error {
	var bl uint32
	density := uint8(0)
	blOff := 5
	if long {
		bl, blOff = binary.BigEndian.Uint32(desc[12:16]), 12
	} else {
		density = desc[0]
		bl = uint32(desc[5])<<16 | uint32(desc[6])<<8 | uint32(desc[7])
	}
	if bl != 0 && (bl < d.cfg.MinBlock || bl > d.cfg.MaxBlock) {
		return &scsi.Error{Sense: scsi.InvalidParameterSense(blOff, -1)}
	}
	if density != 0 && density != 0x7f && d.pers.density(density) == nil {
		return &scsi.Error{Sense: scsi.InvalidParameterSense(0, -1)}
	}
	d.mode.blockSize = bl
	if density != 0 && density != 0x7f {
		d.mode.density = density
	}
	return nil
}

// appendControlPage is the control mode page (SPC-5 7.5.8), length 0Ah.
// Only D_SENSE (byte 2 bit 2) is changeable; it selects descriptor-format
// sense data.
func (d *Drive) appendControlPage(b []byte, pc scsi.PageControl) []byte {
	b = append(b, pageControl, 0x0a)
	p := make12(&b)
	switch pc {
	case scsi.PCChangeable:
		p[0] = 0x04
	case scsi.PCDefault:
		if d.cfg.DSense {
			p[0] = 0x04
		}
	default:
		if d.mode.dsense {
			p[0] = 0x04
		}
	}
	return b
}

// make12 appends the 10 parameter bytes of a page of length 0Ah and returns
// them.
func make12(b *[]byte) []byte {
	*b = extendZero(*b, 10)
	return (*b)[len(*b)-10:]
}

func (d *Drive) selectControlPage(page []byte) error {
	d.mode.dsense = page[2]&0x04 != 0
	d.applySenseFormat()
	return nil
}

// appendCompressionPage is the data compression page (SSC-5 8.3.2), length
// 0Eh: DCE (byte 2 bit 7, changeable; st's MTCOMPRESSION), DCC (bit 6:
// compression is supported), DDE (byte 3 bit 7), compression and
// decompression algorithm 1 (the drive's default).
func (d *Drive) appendCompressionPage(b []byte, pc scsi.PageControl) []byte {
	b = append(b, pageCompression, 0x0e)
	b = extendZero(b, 14)
	p := b[len(b)-14:]
	if pc == scsi.PCChangeable {
		p[0] = 0x80 // DCE
		for i := 2; i < 10; i++ {
			p[i] = 0xff // the algorithms: accepted, the drive keeps its own
		}
		return b
	}
	dce := d.mode.compression
	if pc == scsi.PCDefault {
		dce = true
	}
	p[0] = 0x40 // DCC
	if dce {
		p[0] |= 0x80
	}
	p[1] = 0x80 // DDE
	binary.BigEndian.PutUint32(p[2:], 1)
	binary.BigEndian.PutUint32(p[6:], 1)
	return b
}

func (d *Drive) selectCompressionPage(page []byte) error {
	d.mode.compression = page[2]&0x80 != 0
	return nil
}

// appendDeviceConfigPage is the device configuration page (SSC-5 8.3.3),
// length 0Eh: ACTIVE PARTITION (byte 3), RSMK (byte 8 bit 5), EOD DEFINED
// 000b and SEW (byte 10 bit 3), SELECT DATA COMPRESSION ALGORITHM (byte 14)
// follows DCE. Changeable: CAP (byte 2 bit 6) with ACTIVE PARTITION, RSMK,
// SEW, and byte 14.
func (d *Drive) appendDeviceConfigPage(b []byte, pc scsi.PageControl) []byte {
	b = append(b, pageDeviceConfig, devConfigLen)
	b = extendZero(b, devConfigLen)
	p := b[len(b)-devConfigLen-2:]
	if pc == scsi.PCChangeable {
		p[2], p[3], p[8], p[10], p[14] = 0x40, 0xff, 0x20, 0x08, 0xff
		return b
	}
	m := d.mode
	if pc == scsi.PCDefault {
		m = defaultModes(&d.pers, d.cfg)
	}
	if d.state == stateReady && pc != scsi.PCDefault {
		p[3] = byte(d.partition())
	}
	if m.rsmk {
		p[8] |= 0x20
	}
	p[10] = 0x08 // SEW: the drive writes everything before early warning is reported
	if m.compression {
		p[14] = 1
	}
	return b
}

// selectDeviceConfigPage applies the device configuration page: CAP with
// ACTIVE PARTITION, RSMK, SEW and SELECT DATA COMPRESSION ALGORITHM; the
// other fields are accepted and ignored. MODE SELECT passes every page 10h
// here directly, longer ones (LTFS sends them, mhvtl 7b2a6c8) trimmed to
// 0Eh.
func (d *Drive) selectDeviceConfigPage(page []byte) error {
	if len(page) < 2+devConfigLen {
		return &scsi.Error{Sense: scsi.InvalidParameterSense(1, -1)}
	}
	if page[2]&0x40 != 0 { // CAP: change active partition (to its BOP)
		part := int(page[3])
		if d.state != stateReady || part >= d.info.Partitions {
			return &scsi.Error{Sense: scsi.InvalidParameterSense(3, -1)}
		}
		if err := d.seek(part, 0); err != nil {
			return err
		}
		d.notePos()
	}
	d.mode.rsmk = page[8]&0x20 != 0
	d.mode.sew = page[10]&0x08 != 0
	d.mode.compression = page[14] != 0
	return nil
}

// appendDeviceConfigExtPage is the device configuration extension subpage
// (10h/01h, SSC-5 8.3.4), page length 1Ch: only PROGRAMMABLE EARLY WARNING
// SIZE (bytes 6-7, MB) is changeable. It is stored and reported; the drive
// signals only the medium's own early warning.
func (d *Drive) appendDeviceConfigExtPage(b []byte, pc scsi.PageControl) []byte {
	b = append(b, 0x40|pageDeviceConfig, 0x01, 0, devConfigExtLen)
	b = extendZero(b, devConfigExtLen)
	p := b[len(b)-devConfigExtLen-4:]
	switch pc {
	case scsi.PCChangeable:
		p[6], p[7] = 0xff, 0xff
	case scsi.PCCurrent:
		binary.BigEndian.PutUint16(p[6:], d.mode.pews)
	}
	return b
}

func (d *Drive) selectDeviceConfigExtPage(page []byte) error {
	d.mode.pews = binary.BigEndian.Uint16(page[6:8])
	return nil
}

// appendPartitionPage is the medium partition page (SSC-5 8.3.5) of the
// loaded cartridge (or of the layout MODE SELECT asked for, until FORMAT
// MEDIUM): MAXIMUM ADDITIONAL PARTITIONS, ADDITIONAL PARTITIONS DEFINED,
// IDP with PSUM 11b and PARTITION UNITS chosen so the sizes fit 16 bits,
// POFM=1 (partitioning happens on FORMAT MEDIUM, as on LTO-5 and later; st
// then formats after MODE SELECT), MEDIUM FORMAT RECOGNITION 03h, and one
// size descriptor per possible partition.
func (d *Drive) appendPartitionPage(b []byte, pc scsi.PageControl) []byte {
	maxParts := d.pers.MaxPartitions
	n := 6 + 2*maxParts
	b = append(b, pagePartition, byte(n))
	b = extendZero(b, n)
	p := b[len(b)-n-2:]
	p[2] = byte(maxParts - 1)
	if pc == scsi.PCChangeable {
		p[3] = 0xff
		p[4] = 0xe0 | 0x18 // FDP SDP IDP, PSUM
		p[6] = 0x0f
		for i := 8; i < len(p); i++ {
			p[i] = 0xff
		}
		return b
	}
	p[4] = 0x20 | psumUnits<<3 | 0x04 // IDP, PSUM 11b, POFM
	p[5] = 0x03                       // format and partition recognition
	var sizes []int64
	switch {
	case pc == scsi.PCDefault || d.state == stateEmpty:
	case d.mode.pending != nil:
		sizes = d.mode.pending
	default:
		sizes = d.info.Capacity[:min(d.info.Partitions, len(d.info.Capacity))]
	}
	if len(sizes) == 0 {
		p[4] &^= 0x20 // no IDP: one partition
		return b
	}
	p[3] = byte(len(sizes) - 1)
	units, scale := byte(0), int64(1)
	for _, s := range sizes {
		for s/scale > 0xfffe {
			scale *= 10
			units++
		}
	}
	p[6] = units
	for i, s := range sizes {
		if i < maxParts {
			binary.BigEndian.PutUint16(p[8+2*i:], uint16(s/scale))
		}
	}
	return b
}

// selectPartitionPage validates a medium partition page and keeps the
// layout for FORMAT MEDIUM.
func (d *Drive) selectPartitionPage(page []byte) error {
	if d.state != stateReady {
		return &scsi.Error{Sense: notReady(d.notReadySense().ASC)}
	}
	sizes, off, err := partitionSizes(page, d.totalCapacity(), d.pers.MaxPartitions)
	if err != nil {
		return &scsi.Error{Sense: scsi.InvalidParameterSense(off, -1)}
	}
	d.mode.pending = sizes
	return nil
}

// totalCapacity is the native capacity of the cartridge over all its
// partitions.
func (d *Drive) totalCapacity() int64 {
	var t int64
	for _, c := range d.info.Capacity {
		t += c
	}
	return t
}

// appendInfoExceptPage is the informational exceptions control page
// (SPC-5 7.5.12), length 0Ah; TapeAlert never raises an exception here, but
// the settings are kept.
func (d *Drive) appendInfoExceptPage(b []byte, pc scsi.PageControl) []byte {
	b = append(b, pageInfoExcept, 0x0a)
	p := make12(&b)
	switch pc {
	case scsi.PCChangeable:
		p[0] = 0x8d | 0x10 // PERF EWASC DEXCPT TEST LOGERR
		p[1] = 0x0f        // MRIE
		for i := 2; i < 10; i++ {
			p[i] = 0xff // INTERVAL TIMER, REPORT COUNT
		}
	case scsi.PCDefault:
		m := defaultModes(&d.pers, d.cfg)
		copy(p, m.iec[:])
	default:
		copy(p, d.mode.iec[:])
	}
	return b
}

func (d *Drive) selectInfoExceptPage(page []byte) error {
	if page[2]&0x04 != 0 {
		return &scsi.Error{Sense: scsi.InvalidParameterSense(2, 2)} // TEST: no test exceptions
	}
	copy(d.mode.iec[:], page[2:12])
	return nil
}

// appendMediumConfigPage is the medium configuration page (SSC-5 8.3.7),
// length 1Eh: WORMM (byte 2 bit 0) is set for a WORM cartridge (LTFS reads
// it). Not changeable.
func (d *Drive) appendMediumConfigPage(b []byte, pc scsi.PageControl) []byte {
	b = append(b, pageMediumConfig, 0x1e)
	b = extendZero(b, 0x1e)
	if pc == scsi.PCCurrent && d.state != stateEmpty && d.info.WORM {
		b[len(b)-0x1e] = 0x01
	}
	return b
}

// modeSelect is MODE SELECT(6)/(10). The medium partition page and the
// device configuration page may have other lengths than MODE SENSE reports
// (st sends two partition size descriptors, LTFS a longer device
// configuration page), which scsi.SPC rightly refuses for other pages; and
// applications send the device configuration page with fields this drive
// does not model (write delay, buffer ratios, rewind on reset), which the
// drive ignores rather than refuses. So the drive takes those two pages out
// of the parameter list, validates them, lets SPC apply the rest (header,
// block descriptor, other pages) and applies them only when SPC succeeded.
// Field pointers SPC reports are mapped back to the original parameter
// list.
func (d *Drive) modeSelect(cmd *scsi.Command) scsi.Response {
	c := cmd.CDB
	ten := c.OpCode() == scsi.ModeSelect10
	plen, hlen := int(c.Byte(4)), 4
	if ten {
		plen, hlen = int(c.Uint16(7)), 8
	}
	if c.Byte(1)&0x01 != 0 || plen < hlen || cmd.Data.Len() < plen {
		return d.spc.ModeSelect(cmd) // SPC reports these
	}
	list := make([]byte, plen)
	if n, _ := cmd.Data.Read(list); n < plen {
		return check(scsi.ErrParameterListLen.Sense)
	}
	bdlen := int(list[3])
	if ten {
		bdlen = int(binary.BigEndian.Uint16(list[6:8]))
	}
	type span struct{ orig, filtered, n int }
	var spans []span
	var tape [][]byte // the pages the drive applies itself, in order
	filtered := make([]byte, 0, plen)
	pagesOff := hlen + bdlen
	if pagesOff > plen {
		pagesOff = plen
	}
	filtered = append(filtered, list[:pagesOff]...)
	spans = append(spans, span{0, 0, pagesOff})
	for off := pagesOff; off < plen; {
		if off+2 > plen {
			return d.passThrough(c, list) // truncated: let SPC say so
		}
		spf := list[off]&0x40 != 0
		code := list[off] & 0x3f
		n := 2 + int(list[off+1])
		if spf {
			if off+4 > plen {
				return d.passThrough(c, list)
			}
			n = 4 + int(binary.BigEndian.Uint16(list[off+2:]))
		}
		if off+n > plen {
			return d.passThrough(c, list)
		}
		pg := list[off : off+n]
		switch {
		case !spf && code == pagePartition:
			if n < 2+partitionFixedLen-2 || (n-partitionFixedLen)%2 != 0 {
				return check(scsi.InvalidParameterSense(off+1, -1))
			}
			tape = append(tape, pg)
		case !spf && code == pageDeviceConfig:
			if n < 2+devConfigLen {
				return check(scsi.InvalidParameterSense(off+1, -1))
			}
			pg = pg[:2+devConfigLen] // the drive knows the first 0Eh bytes
			tape = append(tape, pg)
		default:
			spans = append(spans, span{off, len(filtered), n})
			filtered = append(filtered, pg...)
		}
		off += n
	}
	if len(tape) == 0 {
		return d.passThrough(c, list)
	}
	// Validate the drive's pages before anything changes.
	for _, pg := range tape {
		if pg[0]&0x3f == pagePartition {
			if d.state != stateReady {
				return check(d.notReadySense())
			}
			if _, off, err := partitionSizes(pg, d.totalCapacity(), d.pers.MaxPartitions); err != nil {
				return check(scsi.InvalidParameterSense(pageOffset(list, pg)+off, -1))
			}
		} else if pg[2]&0x40 != 0 && (d.state != stateReady || int(pg[3]) >= d.info.Partitions) {
			return check(scsi.InvalidParameterSense(pageOffset(list, pg)+3, -1))
		}
	}
	r := d.passThrough(c, filtered)
	if r.Status != scsi.StatusGood {
		if r.Sense.Pointer.Valid && !r.Sense.Pointer.CDB {
			f := int(r.Sense.Pointer.Field)
			for _, s := range spans {
				if f >= s.filtered && f < s.filtered+s.n {
					r.Sense.Pointer.Field = uint16(s.orig + f - s.filtered)
				}
			}
		}
		return r
	}
	for _, pg := range tape {
		var err error
		if pg[0]&0x3f == pagePartition {
			err = d.selectPartitionPage(pg)
		} else {
			err = d.selectDeviceConfigPage(pg)
		}
		if err != nil {
			return d.errResponse(err)
		}
	}
	return scsi.Good
}

// pageOffset is the offset of page (a subslice of list) in list.
func pageOffset(list, page []byte) int {
	return cap(list) - cap(page)
}

// passThrough runs SPC's MODE SELECT over the parameter list p, with the
// CDB's PARAMETER LIST LENGTH set to len(p).
func (d *Drive) passThrough(c scsi.CDB, p []byte) scsi.Response {
	cdb := make(scsi.CDB, len(c))
	copy(cdb, c)
	if cdb.OpCode() == scsi.ModeSelect10 {
		binary.BigEndian.PutUint16(cdb[7:9], uint16(len(p)))
	} else {
		cdb[4] = byte(len(p))
	}
	return d.spc.ModeSelect(&scsi.Command{CDB: cdb, Data: scsi.NewBuffer(p)})
}

// errResponse converts an error from a drive helper to a response.
func (d *Drive) errResponse(err error) scsi.Response { return d.fault(err, dirNone) }

// readBlockLimits is READ BLOCK LIMITS (SSC-5 6.4): GRANULARITY 0 (any
// length), MAXIMUM BLOCK LENGTH LIMIT (bytes 1-3) = max_block, MINIMUM
// (bytes 4-5) = min_block. st rejects variable-mode writes outside them.
// MLOI=1 (the 20-byte maximum logical object identifier form) is refused.
func (d *Drive) readBlockLimits(cmd *scsi.Command) scsi.Response {
	if cmd.CDB.Byte(1)&0x01 != 0 {
		return check(scsi.InvalidFieldSense(1, 0))
	}
	var b [6]byte
	put24(b[1:4], d.cfg.MaxBlock)
	binary.BigEndian.PutUint16(b[4:], uint16(min(d.cfg.MinBlock, 0xffff)))
	scsi.WriteParameterData(cmd.Data, b[:], len(b))
	return scsi.Good
}

// reportDensity is REPORT DENSITY SUPPORT (SSC-5 7.7): byte 1 MEDIUM TYPE
// (bit 1) selects medium type descriptors instead of density descriptors,
// MEDIA (bit 0) only what the loaded cartridge supports (NOT READY without
// one); ALLOCATION LENGTH bytes 7-8.
func (d *Drive) reportDensity(cmd *scsi.Command) scsi.Response {
	b1 := cmd.CDB.Byte(1)
	media, mediumType := b1&0x01 != 0, b1&0x02 != 0
	if media && d.state != stateReady {
		return check(d.notReadySense())
	}
	b := extendZero(d.buf[:0], 4)
	for i := range d.pers.Densities {
		den := &d.pers.Densities[i]
		if media && den.Code != d.mediumDensity() {
			continue
		}
		if mediumType {
			b = d.appendMediumType(b, den, false)
			if d.pers.WORM && (!media || d.info.WORM) && den.Code != densityGeneric.Code {
				b = d.appendMediumType(b, den, true)
			}
			continue
		}
		b = d.appendDensity(b, den, media)
	}
	binary.BigEndian.PutUint16(b[0:], uint16(len(b)-2))
	d.buf = b
	scsi.WriteParameterData(cmd.Data, b, int(cmd.CDB.Uint16(7)))
	return scsi.Good
}

// appendDensity appends a 52-byte density support data block descriptor.
// With MEDIA=1 the capacity is the loaded cartridge's and WRTOK says
// whether this cartridge can be written.
func (d *Drive) appendDensity(b []byte, den *Density, media bool) []byte {
	b = extendZero(b, 52)
	p := b[len(b)-52:]
	p[0], p[1] = den.Code, den.Code
	wrtok, capMB := den.Writable, den.CapacityMB
	if media {
		wrtok = wrtok && !d.info.WriteProtected
		capMB = uint32(min(d.totalCapacity()/1e6, 0xffffffff))
	}
	if wrtok {
		p[2] |= 0x80
	}
	if den.Code == d.pers.DefaultDensity().Code || media {
		p[2] |= 0x20 // DEFLT
	}
	put24(p[5:8], den.BitsPerMM)
	binary.BigEndian.PutUint16(p[8:], den.Width)
	binary.BigEndian.PutUint16(p[10:], den.Tracks)
	binary.BigEndian.PutUint32(p[12:], capMB)
	putASCII(p[16:24], den.Organization)
	putASCII(p[24:32], den.Name)
	putASCII(p[32:52], den.Description)
	return b
}

// appendMediumType appends a 56-byte medium type descriptor: MEDIUM TYPE
// (00h data, 01h WORM), DESCRIPTOR LENGTH 52, one primary density code,
// MEDIA WIDTH, MEDIUM LENGTH, assigning organization, name, description.
func (d *Drive) appendMediumType(b []byte, den *Density, worm bool) []byte {
	b = extendZero(b, 56)
	p := b[len(b)-56:]
	name, desc := den.MediumName, den.MediumDesc
	if worm {
		p[0] = 0x01
		if len(name) > 4 {
			name = name[:4] + "WORM"
		}
		desc = replaceWord(desc, "Data", "WORM")
	}
	binary.BigEndian.PutUint16(p[2:], 52)
	p[4] = 1
	p[5] = den.Code
	binary.BigEndian.PutUint16(p[14:], den.Width)
	binary.BigEndian.PutUint16(p[16:], den.MediumLength)
	putASCII(p[20:28], den.Organization)
	putASCII(p[28:36], name)
	putASCII(p[36:56], desc)
	return b
}

func replaceWord(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	return s
}

// putASCII copies v into dst, space-padded (SPC-5 4.3.1).
func putASCII(dst []byte, v string) {
	for i := range dst {
		if i < len(v) && v[i] >= 0x20 && v[i] < 0x7f {
			dst[i] = v[i]
		} else {
			dst[i] = ' '
		}
	}
}

// formatMedium is FORMAT MEDIUM (SSC-5 7.2): byte 1 VERIFY (bit 1), IMMED
// (bit 0); FORMAT (byte 2 bits 3..0): 0h one partition, 1h partition as the
// medium partition page says, 2h both; TRANSFER LENGTH (bytes 3-4) must be
// 0 (no format parameters). Only at the beginning of partition 0 (else
// ILLEGAL REQUEST 3B/0C); write protected → 27/00; WORM with data → 30/0C.
// All data is lost.
func (d *Drive) formatMedium(cmd *scsi.Command) scsi.Response {
	c := cmd.CDB
	format := c.Byte(2) & 0x0f
	if format > formatBoth {
		return check(scsi.InvalidFieldSense(2, 3))
	}
	if c.Uint16(3) != 0 {
		return check(scsi.InvalidFieldSense(3, -1))
	}
	if d.info.WriteProtected {
		return check(dataProtect(scsi.WriteProtected))
	}
	if p := d.med.Pos(); p.Partition != 0 || p.Object != 0 {
		return check(illegal(scsi.PositionPastBeginningOfMedium))
	}
	sizes := []int64{0}
	if format != formatDefault {
		switch {
		case d.mode.pending != nil:
			sizes = d.mode.pending
		default:
			sizes = d.info.Capacity[:min(d.info.Partitions, len(d.info.Capacity))]
			if len(sizes) == 1 {
				sizes = []int64{0}
			}
		}
	}
	if err := d.med.Format(sizes); err != nil {
		return d.fault(err, dirWrite)
	}
	d.mode.pending = nil
	d.info = d.med.Info()
	d.vcrDone = false
	d.bumpVCR()
	if err := d.seek(0, 0); err != nil {
		return d.fault(err, dirNone)
	}
	d.notePos()
	d.noteUsed()
	d.log.Info("cartridge formatted", zap.String("medium", d.barcode), zap.Int("partitions", d.info.Partitions))
	return scsi.Good
}

// READ BUFFER sizes: the data buffer (what LTFS dumps on errors) and the
// echo buffer.
const (
	readBufferSize = 1 << 20
	echoBufferSize = 4096
)

// readBuffer is READ BUFFER (SPC-5 6.23). It must not fail for what LTFS
// sends, or LTFS's error-dump path loops until it is OOM-killed (mhvtl
// 7f33c60). Modes: 00h header + data, 02h data, 03h descriptor, 0Ah echo
// buffer, 0Bh echo buffer descriptor; the buffer reads as zeros. BUFFER
// OFFSET bytes 3-5, ALLOCATION LENGTH bytes 6-8.
func (d *Drive) readBuffer(cmd *scsi.Command) scsi.Response {
	c := cmd.CDB
	mode := c.Byte(1) & 0x1f
	off := int(c.Uint24(3))
	alloc := int(c.Uint24(6))
	switch mode {
	case 0x00:
		var h [4]byte
		put24(h[1:], readBufferSize)
		n := scsi.WriteParameterData(cmd.Data, h[:], alloc)
		if alloc > n {
			cmd.Data.WriteZeros(min(alloc-n, readBufferSize))
		}
	case 0x02:
		if off > readBufferSize {
			return check(scsi.InvalidFieldSense(3, -1))
		}
		cmd.Data.WriteZeros(min(alloc, readBufferSize-off))
	case 0x03:
		var h [4]byte // OFFSET BOUNDARY 0 (byte), BUFFER CAPACITY
		put24(h[1:], readBufferSize)
		scsi.WriteParameterData(cmd.Data, h[:], alloc)
	case 0x0a:
		if off > echoBufferSize {
			return check(scsi.InvalidFieldSense(3, -1))
		}
		cmd.Data.WriteZeros(min(alloc, echoBufferSize-off))
	case 0x0b:
		var h [4]byte
		binary.BigEndian.PutUint16(h[2:], echoBufferSize)
		scsi.WriteParameterData(cmd.Data, h[:], alloc)
	default:
		return check(scsi.InvalidFieldSense(1, 4))
	}
	return scsi.Good
}

// testUnitReady is TEST UNIT READY (SPC-5 6.47): the NOT READY conditions
// are applied by the dispatcher (medium flag).
func (d *Drive) testUnitReady(*scsi.Command) scsi.Response { return scsi.Good }

// requestSense is REQUEST SENSE (SPC-5 6.39): the current condition (NOT
// READY when there is no usable cartridge), else a pending unit attention,
// else NO SENSE.
func (d *Drive) requestSense(cmd *scsi.Command) scsi.Response {
	return d.spc.RequestSense(cmd, d.notReadySense())
}

func (d *Drive) inquiry(cmd *scsi.Command) scsi.Response   { return d.spc.Inquiry(cmd) }
func (d *Drive) modeSense(cmd *scsi.Command) scsi.Response { return d.spc.ModeSense(cmd) }
func (d *Drive) maintenanceIn(cmd *scsi.Command) scsi.Response {
	if cmd.CDB.ServiceAction() != scsi.SAReportSupportedOpCodes {
		return check(scsi.InvalidFieldSense(1, 4))
	}
	return d.spc.ReportSupportedOpCodes(cmd)
}
