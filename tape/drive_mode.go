package tape

import (
	"encoding/binary"

	"github.com/vscsid/vscsid/scsi"
)

// This file is the drive's mode parameters: the page registry it hands to
// scsi.SPC, the header's device-specific byte, the block descriptor, and
// MODE SELECT, which takes the pages SPC cannot validate out of the
// parameter list. The pages themselves are in drive_modepages.go.

// Mode page codes (SSC-5 8.3, SPC-5 7.5).
const (
	pageControl      = 0x0a // SPC-5 7.5.8 (subpage F0h: control data protection, SSC-5 8.3.9)
	subpageDataProt  = 0xf0
	dataProtLen      = 0x1c // page length of the control data protection subpage
	pageCompression  = 0x0f // SSC-5 8.3.2 data compression
	pageDeviceConfig = 0x10 // SSC-5 8.3.3 device configuration (subpage 01h: extension, 8.3.4)
	pagePartition    = 0x11 // SSC-5 8.3.5 medium partition
	pageInfoExcept   = 0x1c // SPC-5 7.5.12 informational exceptions control
	pageMediumConfig = 0x1d // SSC-5 8.3.7 medium configuration (WORM mode)
	// IBM vendor pages: read/write control (encryption state; LTO and
	// 3592), and on 3592 models medium sense (23h) and initiator-specific
	// extensions (24h). Their lengths are those LTFS's buffers assume.
	pageReadWriteControl = 0x25
	readWriteControlLen  = 0x1e
	pageMediumSense      = 0x23
	mediumSenseLen       = 0x3a
	pageInitiatorExt     = 0x24
	initiatorExtLen      = 0x16
	eodControlMask       = 0x0c // byte 8 of page 25h that 3592 models let MODE SELECT change
	devConfigLen         = 0x0e // page length of the device configuration page
	devConfigExtLen      = 0x1c // page length of its extension subpage
	partitionFixedLen    = 8    // medium partition page without size descriptors
)

func (d *Drive) modePages() scsi.ModePages {
	pages := scsi.ModePages{
		Pages: []scsi.ModePage{
			{Code: pageControl, Append: d.appendControlPage, Select: d.selectControlPage},
			{Code: pageControl, Subpage: subpageDataProt, Append: d.appendDataProtPage, Select: d.selectDataProtPage},
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
	if d.pers.IBM {
		rw := scsi.ModePage{Code: pageReadWriteControl, Append: d.appendReadWriteControlPage}
		if d.pers.Enterprise {
			rw.Select = d.selectReadWriteControlPage
			pages.Pages = append(pages.Pages,
				scsi.ModePage{Code: pageMediumSense, Append: d.appendMediumSensePage, Select: d.selectMediumSensePage},
				scsi.ModePage{Code: pageInitiatorExt, Append: d.appendInitiatorExtPage})
		}
		pages.Pages = append(pages.Pages, rw)
	}
	return pages
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
