package tape

import (
	"encoding/binary"

	"github.com/vscsid/vscsid/scsi"
)

// The drive's mode pages (SSC-5 8.3, SPC-5 7.5): for each an append for
// MODE SENSE and, when it is changeable, a select for MODE SELECT.

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

// appendDataProtPage is the control data protection subpage (0Ah/F0h,
// SSC-5 8.3.9), page length 1Ch: LBP METHOD (byte 4), LBP INFORMATION
// LENGTH (byte 5), LBP_W, LBP_R and RBDP (byte 6 bits 7..5), changeable
// on the models with logical block protection.
func (d *Drive) appendDataProtPage(b []byte, pc scsi.PageControl) []byte {
	b = append(b, 0x40|pageControl, subpageDataProt, 0, dataProtLen)
	b = extendZero(b, dataProtLen)
	p := b[len(b)-dataProtLen:]
	switch pc {
	case scsi.PCChangeable:
		if d.pers.LBP != 0 {
			p[0], p[1], p[2] = 0xff, 0xff, 0xe0
		}
	case scsi.PCCurrent, scsi.PCSaved:
		l := d.mode.lbp
		if l.method != lbpNone {
			p[0], p[1] = l.method, lbpLen
		}
		p[2] = b2u8(l.write)<<7 | b2u8(l.read)<<6 | b2u8(l.rbdp)<<5
	}
	return b
}

// selectDataProtPage sets logical block protection: LBP METHOD 00h (off)
// or one the model implements (else 26/00 at byte 4), whose LBP
// INFORMATION LENGTH must be 4 (else 26/00 at byte 5); LBP_W, LBP_R and
// RBDP as sent.
func (d *Drive) selectDataProtPage(page []byte) error {
	l := lbpState{method: page[4], write: page[6]&0x80 != 0, read: page[6]&0x40 != 0, rbdp: page[6]&0x20 != 0}
	switch {
	case l.method == lbpNone:
	case l.method > 7 || d.pers.LBP&(1<<l.method) == 0:
		return scsi.InvalidParameter(4, -1)
	case page[5] != lbpLen:
		return scsi.InvalidParameter(5, -1)
	}
	if d.pers.LBP == 0 && page[6]&0xe0 != 0 {
		return scsi.InvalidParameter(6, 7)
	}
	d.mode.lbp = l
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

// appendReadWriteControlPage is IBM's read/write control page (25h, page
// length 1Eh; IBM models only). LTFS reads it at every mount for the
// encryption state of the drive and the cartridge: byte 20 bits 1..0 the
// drive's encryption state (1: on), byte 24 bit 0 the cartridge holds
// encrypted data, byte 27 the key management method (50h: application
// managed, the only one this drive has, which LTFS's IBM backends require
// before they set a key). On 3592 models byte 8's bits 3..2 are
// changeable (LTFS turns off reading across end of data there at every
// load: d.mode.eodControl); on LTO models nothing is.
func (d *Drive) appendReadWriteControlPage(b []byte, pc scsi.PageControl) []byte {
	b = append(b, pageReadWriteControl, readWriteControlLen)
	b = extendZero(b, readWriteControlLen)
	p := b[len(b)-readWriteControlLen-2:]
	switch pc {
	case scsi.PCChangeable:
		if d.pers.Enterprise {
			p[8] = eodControlMask
		}
		return b
	case scsi.PCCurrent, scsi.PCSaved:
		p[8] = d.mode.eodControl
	}
	if pc != scsi.PCCurrent && pc != scsi.PCDefault || !d.pers.Encryption {
		return b
	}
	p[27] = 0x50
	if pc == scsi.PCCurrent {
		if d.crypt.encMode == encEncrypt {
			p[20] = 0x01
		}
		if d.state != stateEmpty && d.med.Info().Encrypted {
			p[24] = 0x01
		}
	}
	return b
}

func (d *Drive) selectReadWriteControlPage(page []byte) error {
	d.mode.eodControl = page[8] & eodControlMask
	return nil
}

// appendMediumSensePage is IBM's medium sense page (23h, 3592 models), of
// which this drive fills what LTFS reads and writes: byte 10 bit 7, the
// cartridge's write-protect switch (LTFS's physical write protection;
// bits 4 and 0, persistent and permanent write protection, are never
// set), and the capacity scaling fields mkltfs sets before it formats
// (byte 11 bit 0 and byte 12, changeable; see selectMediumSensePage).
// Page length 3Ah as LTFS's 76-byte buffer takes it.
func (d *Drive) appendMediumSensePage(b []byte, pc scsi.PageControl) []byte {
	b = append(b, pageMediumSense, mediumSenseLen)
	b = extendZero(b, mediumSenseLen)
	p := b[len(b)-mediumSenseLen-2:]
	switch {
	case pc == scsi.PCChangeable:
		p[11], p[12] = 0x01, 0xff
	case pc == scsi.PCCurrent && d.state != stateEmpty && d.info.WriteProtected:
		p[10] = 0x80
	}
	return b
}

// selectMediumSensePage takes the capacity scaling of page 23h. The
// cartridges here always have their full capacity, which is what mkltfs
// asks for (byte 11 bit 0 set, scaling value 0 in byte 12, before every
// format); a scaled capacity is refused (26/00 at byte 12).
func (d *Drive) selectMediumSensePage(page []byte) error {
	if page[11]&0x01 != 0 && page[12] != 0 {
		return &scsi.Error{Sense: scsi.InvalidParameterSense(12, -1)}
	}
	return nil
}

// appendInitiatorExtPage is IBM's initiator-specific extensions page (24h,
// 3592 models): byte 2 says which logical block protection methods the
// drive has, 40h Reed-Solomon CRC and 20h CRC32C, from which LTFS picks
// the method it selects in page 0Ah/F0h. Page length 16h as LTFS's
// 40-byte buffer takes it. Not changeable.
func (d *Drive) appendInitiatorExtPage(b []byte, pc scsi.PageControl) []byte {
	b = append(b, pageInitiatorExt, initiatorExtLen)
	b = extendZero(b, initiatorExtLen)
	if pc == scsi.PCChangeable {
		return b
	}
	var f byte
	if d.pers.LBP&lbpMaskRS != 0 {
		f |= 0x40
	}
	if d.pers.LBP&lbpMaskCRC32C != 0 {
		f |= 0x20
	}
	b[len(b)-initiatorExtLen-2+2] = f
	return b
}
