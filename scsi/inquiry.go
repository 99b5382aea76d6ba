package scsi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// INQUIRY: the standard inquiry data and the VPD pages SPC builds itself
// (00h supported pages, 80h unit serial number, 83h device identification),
// from the logical unit's Identity.

// Identity is what standard INQUIRY and VPD 0x80/0x83 report.
type Identity struct {
	PeripheralType uint8    // 0x00 disk, 0x01 tape
	Removable      bool     // RMB
	Vendor         string   // T10 vendor id, padded/truncated to 8
	Product        string   // padded/truncated to 16
	Revision       string   // padded/truncated to 4
	Serial         string   // VPD 0x80 unit serial number
	NAA            uint64   // VPD 0x83 NAA IEEE Registered (type 5) designator, 8 bytes
	Version        uint8    // VERSION byte; 0 → 0x06 (SPC-4)
	Versions       []uint16 // version descriptors (SPC-5 table 146), at most 8
	CmdQue         bool     // CMDQUE bit (disk: true; tape: false)
}

// VPDPage is one extra VPD page served beyond 0x00, 0x80 and 0x83. Append
// appends the page payload (without the 4-byte page header).
type VPDPage struct {
	Code   uint8
	Append func(b []byte) []byte
}

// Version descriptors for Identity.Versions (SPC-5 6.7.2, table 146; the
// "no version claimed" code of each standard).
const (
	VersionSAM5 uint16 = 0x00a0
	VersionSAM6 uint16 = 0x00c0
	VersionSPC3 uint16 = 0x0300
	VersionSPC4 uint16 = 0x0460
	VersionSPC5 uint16 = 0x05c0
	VersionSBC3 uint16 = 0x04c0
	VersionSBC4 uint16 = 0x0600
	VersionSSC3 uint16 = 0x0400
	VersionSSC4 uint16 = 0x0520
	VersionSSC5 uint16 = 0x05a0
	VersionSMC3 uint16 = 0x0480
)

// Standard INQUIRY data length: 36 bytes of SPC-2 data, vendor specific and
// reserved to byte 57, and 8 version descriptors at 58..73 (SPC-5 6.7.2).
const inquiryLen = 74

// Inquiry answers INQUIRY (SPC-5 6.7): standard data, or the VPD page asked
// for (0x00 supported pages, 0x80 unit serial number, 0x83 device
// identification, and the pages in s.VPD).
//
// Errors, all ILLEGAL REQUEST / INVALID FIELD IN CDB: CMDDT set (byte 1 bit
// 1); EVPD=0 with a non-zero page code (byte 2); an unsupported VPD page
// (byte 2).
func (s *SPC) Inquiry(cmd *Command) Response {
	c := cmd.CDB
	alloc := int(c.Uint16(3))
	if c.Byte(1)&0x02 != 0 {
		return s.ResponseFor(InvalidField(1, 1))
	}
	if c.Byte(1)&0x01 == 0 {
		if c.Byte(2) != 0 {
			return s.ResponseFor(InvalidField(2, -1))
		}
		s.buf = s.appendStandardInquiry(s.buf[:0])
		WriteParameterData(cmd.Data, s.buf, alloc)
		return Good
	}
	b, ok := s.appendVPD(s.buf[:0], c.Byte(2))
	s.buf = b
	if !ok {
		return s.ResponseFor(InvalidField(2, -1))
	}
	WriteParameterData(cmd.Data, b, alloc)
	return Good
}

func (s *SPC) appendStandardInquiry(b []byte) []byte {
	id := &s.Identity
	start := len(b)
	b = extend(b, inquiryLen)
	d := b[start:]
	d[0] = id.PeripheralType & 0x1f // PERIPHERAL QUALIFIER 000b: connected
	if id.Removable {
		d[1] = 0x80 // RMB
	}
	d[2] = id.Version
	if d[2] == 0 {
		d[2] = 0x06 // SPC-4
	}
	d[3] = 0x10 | 0x02 // HISUP, RESPONSE DATA FORMAT 2
	d[4] = inquiryLen - 5
	if id.CmdQue {
		d[7] = 0x02 // CMDQUE
	}
	PutASCII(d[8:16], id.Vendor)
	PutASCII(d[16:32], id.Product)
	PutASCII(d[32:36], id.Revision)
	for i, v := range id.Versions {
		if i == 8 {
			break
		}
		binary.BigEndian.PutUint16(d[58+2*i:], v)
	}
	return b
}

// VPD page codes SPC emulates itself.
const (
	vpdSupportedPages = 0x00
	vpdUnitSerial     = 0x80
	vpdDeviceID       = 0x83
)

// appendVPD appends VPD page code (4-byte header + payload). ok is false for
// an unsupported page. Extra pages in s.VPD with code 0x80 or 0x83 replace
// the built-in ones; 0x00 is always built here.
func (s *SPC) appendVPD(b []byte, code uint8) (_ []byte, ok bool) {
	start := len(b)
	b = append(b, s.Identity.PeripheralType&0x1f, code, 0, 0)
	switch extra := s.extraVPD(code); {
	case code == vpdSupportedPages:
		var have [256]bool
		have[vpdSupportedPages], have[vpdUnitSerial], have[vpdDeviceID] = true, true, true
		for _, p := range s.VPD {
			if p.Append != nil {
				have[p.Code] = true
			}
		}
		for i, h := range have {
			if h {
				b = append(b, byte(i))
			}
		}
	case extra != nil:
		b = extra.Append(b)
	case code == vpdUnitSerial:
		b = appendASCII(b, s.Identity.Serial)
	case code == vpdDeviceID:
		b = s.appendDeviceID(b)
	default:
		return b[:start], false
	}
	n := min(len(b)-start-4, math.MaxUint16)
	binary.BigEndian.PutUint16(b[start+2:], uint16(n))
	return b[:start+4+n], true
}

func (s *SPC) extraVPD(code uint8) *VPDPage {
	for i := range s.VPD {
		if s.VPD[i].Code == code && s.VPD[i].Append != nil {
			return &s.VPD[i]
		}
	}
	return nil
}

// Designation descriptor fields (SPC-5 7.7.6.1).
const (
	codeSetBinary = 0x1
	codeSetASCII  = 0x2
	desigT10      = 0x1 // T10 vendor ID based
	desigNAA      = 0x3
	assocLU       = 0x0 << 4
)

// appendDeviceID appends the payload of VPD page 0x83: an NAA IEEE
// Registered designator (when Identity.NAA is set) and a T10 vendor ID
// designator (vendor, then serial), both associated with the logical unit.
func (s *SPC) appendDeviceID(b []byte) []byte {
	id := &s.Identity
	if id.NAA != 0 {
		naa := id.NAA&(1<<60-1) | 5<<60 // NAA 5h: IEEE Registered
		b = append(b, codeSetBinary, assocLU|desigNAA, 0, 8)
		b = binary.BigEndian.AppendUint64(b, naa)
	}
	serial := id.Serial
	if len(serial) > 255-8 {
		serial = serial[:255-8]
	}
	b = append(b, codeSetASCII, assocLU|desigT10, 0, byte(8+len(serial)))
	b = extend(b, 8)
	PutASCII(b[len(b)-8:], id.Vendor)
	return appendASCII(b, serial)
}

// NAARegistered builds an NAA IEEE Registered designator (NAA 5h, SPC-5
// 7.7.6.6.3): the 24-bit IEEE company ID (OUI) and a 36-bit vendor specific
// identifier.
func NAARegistered(oui uint32, vendorSpecific uint64) uint64 {
	return 5<<60 | uint64(oui&0xffffff)<<36 | vendorSpecific&(1<<36-1)
}

// Validate reports the first Identity field that cannot be sent as it is:
// vendor, product, revision and serial must be printable ASCII of at most
// 8, 16, 4 and 247 bytes, NAA must be 0 or an NAA 5h designator, at most 8
// version descriptors, and the peripheral type must fit 5 bits. Handlers call
// it from ParseConfig or their Factory; INQUIRY itself never fails on a bad
// Identity (it replaces unprintable bytes with '?' and truncates).
func (id Identity) Validate() error {
	for _, f := range [...]struct {
		name, v string
		max     int
	}{
		{"vendor", id.Vendor, 8},
		{"product", id.Product, 16},
		{"revision", id.Revision, 4},
		{"serial", id.Serial, 247},
	} {
		if len(f.v) > f.max {
			return fmt.Errorf("identity %s %q is longer than %d bytes", f.name, f.v, f.max)
		}
		for i := 0; i < len(f.v); i++ {
			if f.v[i] < 0x20 || f.v[i] > 0x7e {
				return fmt.Errorf("identity %s %q is not printable ASCII", f.name, f.v)
			}
		}
	}
	if id.NAA != 0 && id.NAA>>60 != 5 {
		return errors.New("identity naa: not an NAA 5h (IEEE Registered) designator")
	}
	if len(id.Versions) > 8 {
		return errors.New("identity versions: more than 8 version descriptors")
	}
	if id.PeripheralType > 0x1f {
		return errors.New("identity peripheral type: more than 5 bits")
	}
	return nil
}

// PutASCII copies v into dst, replacing anything but printable ASCII with
// '?' and padding with spaces (SPC-5 4.3.1: left-aligned, space-filled).
func PutASCII(dst []byte, v string) {
	for i := range dst {
		c := byte(' ')
		if i < len(v) {
			c = v[i]
			if c < 0x20 || c > 0x7e {
				c = '?'
			}
		}
		dst[i] = c
	}
}

// appendASCII appends v with non-printable bytes replaced by '?'.
func appendASCII(b []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x20 || c > 0x7e {
			c = '?'
		}
		b = append(b, c)
	}
	return b
}
