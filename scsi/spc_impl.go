package scsi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// SPC is the common SPC-5 emulation a logical unit embeds. The owning
// handler fills the exported fields at construction and serialises all
// calls (one command at a time), like the rest of its state.
//
// Every method accepts any CDB bytes (a short CDB reads as zeros past its
// end) and any Data buffer: parameter data is truncated to the allocation
// length and to the buffer, and nothing panics. Parameter data is built in a
// scratch buffer that SPC keeps between calls, so after the first few
// commands the methods do not allocate (unless a page's Append does).
type SPC struct {
	Identity    Identity
	VPD         []VPDPage     // extra VPD pages (disk: 0xB0, 0xB1, ...)
	Modes       ModePages     // MODE SENSE/SELECT registry
	Commands    []CommandInfo // REPORT SUPPORTED OPERATION CODES
	UA          UnitAttentions
	SenseFormat SenseFormat // D_SENSE of the control mode page

	buf  []byte // parameter data scratch
	cur  []byte // MODE SELECT: current page or block descriptor
	mask []byte // MODE SELECT: changeable mask of the page
}

// ResponseFor is scsi.ResponseFor with the sense data in the unit's
// current format (D_SENSE). Handlers that embed SPC use it for every error
// they turn into a CHECK CONDITION.
func (s *SPC) ResponseFor(err error) Response {
	return ResponseFor(err).WithFormat(s.SenseFormat)
}

// CheckCondition returns CHECK CONDITION with sense in the unit's current
// format.
func (s *SPC) CheckCondition(sense Sense) Response {
	return CheckCondition(sense).WithFormat(s.SenseFormat)
}

// WriteParameterData writes p as Data-In, truncated to the allocation length
// alloc and to the size of data (SPC-5 4.2.5.6: the device server transfers
// at most the allocation length and this is not an error). It returns the
// number of bytes written; a nil data or a negative alloc writes nothing.
func WriteParameterData(data *Buffer, p []byte, alloc int) int {
	if data == nil || alloc <= 0 {
		return 0
	}
	if alloc < len(p) {
		p = p[:alloc]
	}
	n, _ := data.Write(p) // ErrShortBuffer is the normal truncation
	return n
}

// extend appends n zero bytes to b.
func extend(b []byte, n int) []byte {
	b = slices.Grow(b, n)
	b = b[:len(b)+n]
	clear(b[len(b)-n:])
	return b
}

// putASCII copies v into dst, replacing anything but printable ASCII with
// '?' and padding with spaces (SPC-5 4.3.1: left-aligned, space-filled).
func putASCII(dst []byte, v string) {
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
	putASCII(d[8:16], id.Vendor)
	putASCII(d[16:32], id.Product)
	putASCII(d[32:36], id.Revision)
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
	putASCII(b[len(b)-8:], id.Vendor)
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

// RequestSense answers REQUEST SENSE (SPC-5 6.39) with the unit's current
// sense cur as parameter data, in descriptor format when DESC (byte 1 bit 0)
// is set and fixed format otherwise, with GOOD status. When cur is empty (NO
// SENSE, no ASC, no flags) and a unit attention is pending, the unit
// attention is reported and cleared instead (SAM-5 5.14, UA_INTLCK_CTRL
// 00b); otherwise the result is NO SENSE / NO ADDITIONAL SENSE INFORMATION.
func (s *SPC) RequestSense(cmd *Command, cur Sense) Response {
	c := cmd.CDB
	alloc := int(c.Byte(4))
	if cur.Key == NoSense && cur.ASC == 0 && !cur.Valid && !cur.Filemark && !cur.EOM && !cur.ILI {
		if asc, ok := s.UA.Pop(); ok {
			cur = Sense{Key: UnitAttention, ASC: asc}
		}
	}
	cur.Format = FixedFormat
	if c.Byte(1)&0x01 != 0 {
		cur.Format = DescriptorFormat
	}
	s.buf = cur.Append(s.buf[:0])
	WriteParameterData(cmd.Data, s.buf, alloc)
	return Good
}

// TakeUnitAttention reports a pending unit attention for cmd, removing it
// from the queue. INQUIRY, REPORT LUNS and REQUEST SENSE never take one
// (SAM-5 5.14 / SPC-5 5.14).
func (s *SPC) TakeUnitAttention(cmd *Command) (Response, bool) {
	switch cmd.CDB.OpCode() {
	case Inquiry, ReportLUNs, RequestSense:
		return Good, false
	}
	asc, ok := s.UA.Pop()
	if !ok {
		return Good, false
	}
	return s.CheckCondition(Sense{Key: UnitAttention, ASC: asc}), true
}

// Mode parameter list limits: MODE SENSE(6) has a one-byte MODE DATA LENGTH
// (at most 256 bytes of data), MODE SENSE(10) a two-byte one.
const (
	modeSense6Max  = 256
	modeSense10Max = 65535 + 2
)

// ModeSense answers MODE SENSE(6) and MODE SENSE(10) (SPC-5 6.13, 6.14).
//
// The header carries Modes.MediumType, Modes.DeviceSpecific() and, unless
// DBD is set, one block descriptor from Modes.BlockDescriptor (the long,
// 16-byte form is asked for only by MODE SENSE(10) with LLBAA; LONGLBA is
// set when the callback returned 16 bytes). The PC field selects which
// values the pages report; the header and block descriptor always report
// current values (SPC-5 7.5.5). Page code 3Fh returns every page in
// ascending page order with page 00h last (subpage 00h: page_0 pages only;
// subpage FFh: all subpages); a page code with subpage FFh returns all its
// subpages. Page 00h, when no page 00h is registered, returns the header and
// block descriptor alone, as the Linux st driver expects of a tape drive.
// MODE SENSE(6) omits pages that would not fit its 256 bytes.
//
// Errors: PC=11b (saved) → 39/00 SAVING PARAMETERS NOT SUPPORTED; an
// unsupported page → 24/00 pointing at byte 2 bit 5; a supported page with
// an unsupported subpage → 24/00 pointing at byte 3.
func (s *SPC) ModeSense(cmd *Command) Response {
	c := cmd.CDB
	var ten bool
	switch c.OpCode() {
	case ModeSense6:
	case ModeSense10:
		ten = true
	default:
		return s.ResponseFor(ErrInvalidOpCode)
	}
	dbd := c.Byte(1)&0x08 != 0
	llbaa := ten && c.Byte(1)&0x10 != 0
	pc := PageControl(c.Byte(2) >> 6)
	page, sub := c.Byte(2)&0x3f, c.Byte(3)
	alloc, hlen, limit := int(c.Byte(4)), 4, modeSense6Max
	if ten {
		alloc, hlen, limit = int(c.Uint16(7)), 8, modeSense10Max
	}
	if pc == PCSaved {
		return s.ResponseFor(ErrSavingParametersNotSupported)
	}
	if page == 0x3f && sub != 0x00 && sub != 0xff {
		return s.ResponseFor(InvalidField(3, -1))
	}
	if page != 0x3f && !s.hasPage(page, sub) {
		switch {
		case page == 0 && sub == 0:
			// vendor-specific page 0: header and block descriptor only
		case s.hasPageCode(page):
			return s.ResponseFor(InvalidField(3, -1))
		default:
			return s.ResponseFor(InvalidField(2, 5))
		}
	}

	b := extend(s.buf[:0], hlen)
	var devSpecific uint8
	if s.Modes.DeviceSpecific != nil {
		devSpecific = s.Modes.DeviceSpecific()
	}
	bdlen := 0
	if !dbd && s.Modes.BlockDescriptor != nil {
		b = s.Modes.BlockDescriptor(b, llbaa)
		bdlen = len(b) - hlen
		if len(b) > limit || (!ten && bdlen > 255) {
			b, bdlen = b[:hlen], 0 // a broken callback: send no descriptor
		}
	}
	if ten {
		b[2] = s.Modes.MediumType
		b[3] = devSpecific
		if bdlen == 16 {
			b[4] = 0x01 // LONGLBA
		}
		binary.BigEndian.PutUint16(b[6:8], uint16(bdlen))
	} else {
		b[1] = s.Modes.MediumType
		b[2] = devSpecific
		b[3] = byte(bdlen)
	}

	// Pages in ascending (code, subpage) order, page 0 last.
	key := func(p *ModePage) int {
		k := int(p.Code&0x3f)<<8 | int(p.Subpage)
		if p.Code&0x3f == 0 {
			k += 0x40 << 8
		}
		return k
	}
	for prev := -1; ; {
		var next *ModePage
		for i := range s.Modes.Pages {
			p := &s.Modes.Pages[i]
			if p.Append == nil || key(p) <= prev || (next != nil && key(p) >= key(next)) {
				continue
			}
			if !pageSelected(p, page, sub) {
				continue
			}
			next = p
		}
		if next == nil {
			break
		}
		prev = key(next)
		n := len(b)
		b = next.Append(b, pc)
		if len(b) > limit {
			b = b[:n] // does not fit MODE SENSE(6): leave it out
		}
	}
	if ten {
		binary.BigEndian.PutUint16(b[0:2], uint16(len(b)-2))
	} else {
		b[0] = byte(len(b) - 1)
	}
	s.buf = b
	WriteParameterData(cmd.Data, b, alloc)
	return Good
}

// pageSelected reports whether MODE SENSE page/subpage asks for p.
func pageSelected(p *ModePage, page, sub uint8) bool {
	if page != 0x3f && p.Code&0x3f != page {
		return false
	}
	return sub == 0xff || p.Subpage == sub
}

func (s *SPC) hasPage(code, sub uint8) bool {
	for i := range s.Modes.Pages {
		if p := &s.Modes.Pages[i]; p.Append != nil && pageSelected(p, code, sub) {
			return true
		}
	}
	return false
}

func (s *SPC) hasPageCode(code uint8) bool {
	for i := range s.Modes.Pages {
		if p := &s.Modes.Pages[i]; p.Append != nil && p.Code&0x3f == code {
			return true
		}
	}
	return false
}

func (s *SPC) findPage(code, sub uint8) *ModePage {
	for i := range s.Modes.Pages {
		if p := &s.Modes.Pages[i]; p.Append != nil && p.Code&0x3f == code && p.Subpage == sub {
			return p
		}
	}
	return nil
}

// ModeSelect answers MODE SELECT(6) and MODE SELECT(10) (SPC-5 6.11, 6.12).
//
// The whole parameter list is validated before anything is changed: the
// header, each block descriptor (SelectBlockDescriptor, or when that is nil
// equality with the current descriptor) and each page (known code, page
// length equal to the current page's, no change to a bit that the
// changeable mask does not allow, and with a nil Select no change at all).
// Then the device-specific byte (SelectDeviceSpecific), the descriptors and
// the pages are applied in order; a Select that refuses a value stops there,
// leaving earlier pages applied. Pointers in errors returned by the
// callbacks are relative to the page or descriptor and are turned into
// offsets in the parameter list. With one I_T nexus (tcm_loop) no MODE
// PARAMETERS CHANGED unit attention is queued: SPC-5 sends it only to other
// initiators.
//
// Errors: SP set → 24/00 byte 1 bit 0; a parameter list shorter than the
// header, a truncated descriptor or page, or less Data-Out than the
// parameter list length → 1A/00 PARAMETER LIST LENGTH ERROR; pages with
// PF=0, a block descriptor length not a multiple of the descriptor size, an
// unknown page, a wrong page length or a change the page does not allow →
// 26/00 INVALID FIELD IN PARAMETER LIST with a pointer into the list.
func (s *SPC) ModeSelect(cmd *Command) Response {
	c := cmd.CDB
	var ten bool
	switch c.OpCode() {
	case ModeSelect6:
	case ModeSelect10:
		ten = true
	default:
		return s.ResponseFor(ErrInvalidOpCode)
	}
	if c.Byte(1)&0x01 != 0 {
		return s.ResponseFor(InvalidField(1, 0)) // SP: no saved pages
	}
	pf := c.Byte(1)&0x10 != 0
	plen, hlen := int(c.Byte(4)), 4
	if ten {
		plen, hlen = int(c.Uint16(7)), 8
	}
	if plen == 0 {
		return Good // SPC-5 6.11: not an error, nothing changes
	}
	if plen < hlen || cmd.Data.Len() < plen {
		return s.ResponseFor(ErrParameterListLen)
	}
	p := extend(s.buf[:0], plen)
	s.buf = p
	if n, _ := cmd.Data.Read(p); n < plen {
		return s.ResponseFor(ErrParameterListLen)
	}

	var bdlen, bdlenOff, devOff int
	var long bool
	if ten {
		bdlenOff, devOff = 6, 3
		bdlen = int(binary.BigEndian.Uint16(p[6:8]))
		long = p[4]&0x01 != 0
	} else {
		bdlenOff, devOff = 3, 2
		bdlen = int(p[3])
	}
	descSize := 8
	if long {
		descSize = 16
	}
	if hlen+bdlen > plen {
		return s.ResponseFor(ErrParameterListLen)
	}
	if bdlen%descSize != 0 {
		return s.ResponseFor(InvalidParameter(bdlenOff, -1))
	}

	// Pass 1: validate everything.
	for off := hlen; off < hlen+bdlen; off += descSize {
		if s.Modes.SelectBlockDescriptor != nil {
			continue
		}
		if s.Modes.BlockDescriptor == nil {
			return s.ResponseFor(InvalidParameter(bdlenOff, -1))
		}
		s.cur = s.Modes.BlockDescriptor(s.cur[:0], long)
		if len(s.cur) != descSize {
			return s.ResponseFor(InvalidParameter(bdlenOff, -1)) // no such descriptor form here
		}
		if r, bad := s.compare(p[off:off+descSize], s.cur, nil, 0, off); bad {
			return r
		}
	}
	pagesOff := hlen + bdlen
	if pagesOff < plen && !pf {
		return s.ResponseFor(InvalidParameter(pagesOff, -1))
	}
	for off := pagesOff; off < plen; {
		n, r, bad := s.checkPage(p, off)
		if bad {
			return r
		}
		off += n
	}

	// Pass 2: apply.
	if s.Modes.SelectDeviceSpecific != nil {
		if err := s.Modes.SelectDeviceSpecific(p[devOff]); err != nil {
			return s.relocate(err, devOff)
		}
	}
	if s.Modes.SelectBlockDescriptor != nil {
		for off := hlen; off < hlen+bdlen; off += descSize {
			if err := s.Modes.SelectBlockDescriptor(p[off:off+descSize], long); err != nil {
				return s.relocate(err, off)
			}
		}
	}
	for off := pagesOff; off < plen; {
		code, sub, _, n := pageAt(p, off) // validated in pass 1
		if pg := s.findPage(code, sub); pg.Select != nil {
			if err := pg.Select(p[off : off+n]); err != nil {
				return s.relocate(err, off)
			}
		}
		off += n
	}
	return Good
}

// pageAt decodes the mode page header at p[off:]: page code, subpage,
// header size (2 for page_0, 4 for sub_page format) and whole page length.
// n is 0 when the header itself is truncated.
func pageAt(p []byte, off int) (code, sub uint8, hdr, n int) {
	code, hdr = p[off]&0x3f, 2
	if p[off]&0x40 != 0 { // SPF
		hdr = 4
	}
	if off+hdr > len(p) {
		return code, 0, hdr, 0
	}
	if hdr == 4 {
		return code, p[off+1], hdr, 4 + int(binary.BigEndian.Uint16(p[off+2:]))
	}
	return code, 0, hdr, 2 + int(p[off+1])
}

// checkPage validates the mode page at p[off:] against the registry and
// returns its length, or the error response.
func (s *SPC) checkPage(p []byte, off int) (n int, r Response, bad bool) {
	code, sub, hdr, n := pageAt(p, off)
	if n == 0 || off+n > len(p) {
		return 0, s.ResponseFor(ErrParameterListLen), true
	}
	pg := s.findPage(code, sub)
	if pg == nil {
		if hdr == 4 && s.hasPageCode(code) {
			return 0, s.ResponseFor(InvalidParameter(off+1, -1)), true // SUBPAGE CODE
		}
		return 0, s.ResponseFor(InvalidParameter(off, 5)), true // PAGE CODE
	}
	s.cur = pg.Append(s.cur[:0], PCCurrent)
	if len(s.cur) < hdr || (s.cur[0]&0x40 != 0) != (hdr == 4) {
		return 0, s.ResponseFor(InvalidParameter(off, 6)), true // SPF
	}
	if len(s.cur) != n {
		return 0, s.ResponseFor(InvalidParameter(off+hdr-1, -1)), true // PAGE LENGTH
	}
	var mask []byte
	if pg.Select != nil {
		s.mask = pg.Append(s.mask[:0], PCChangeable)
		if len(s.mask) == n {
			mask = s.mask
		}
	}
	r, bad = s.compare(p[off+hdr:off+n], s.cur[hdr:], mask, hdr, off+hdr)
	return n, r, bad
}

// compare checks that sent differs from cur only where mask (from byte
// maskOff on; nil: nowhere) has bits set, and returns 26/00 pointing at the
// first offending bit (base is the offset of sent in the parameter list).
func (s *SPC) compare(sent, cur, mask []byte, maskOff, base int) (Response, bool) {
	for i := range sent {
		diff := sent[i] ^ cur[i]
		if mask != nil {
			diff &^= mask[maskOff+i]
		}
		if diff != 0 {
			bit := 7
			for diff&0x80 == 0 {
				diff <<= 1
				bit--
			}
			return s.ResponseFor(InvalidParameter(base+i, bit)), true
		}
	}
	return Good, false
}

// relocate turns an error from a MODE SELECT callback into a response,
// moving a parameter-list field pointer by base.
func (s *SPC) relocate(err error, base int) Response {
	if sense, ok := SenseOf(err); ok {
		if sense.Pointer.Valid && !sense.Pointer.CDB {
			sense.Pointer.Field += uint16(base)
		}
		return s.CheckCondition(sense)
	}
	return s.ResponseFor(err)
}

// RSOC support values (SPC-5 6.35.3, table 253).
const (
	rsocNotSupported = 0x1
	rsocSupported    = 0x3
)

// ReportSupportedOpCodes answers MAINTENANCE IN / REPORT SUPPORTED
// OPERATION CODES (SPC-5 6.35) from s.Commands, in the all-commands form
// (REPORTING OPTIONS 000b, with command timeouts descriptors when RCTD is
// set) and the one-command forms 001b (opcode), 010b (opcode and service
// action) and 011b (opcode, and service action if it has one). A command
// that is not in s.Commands is reported with SUPPORT 001b (not supported).
//
// Errors, 24/00 INVALID FIELD IN CDB: a service action other than 0Ch (byte
// 1 bit 4); a reserved reporting option, option 001b for an opcode with
// service actions, or option 010b for one without (byte 2 bit 2).
func (s *SPC) ReportSupportedOpCodes(cmd *Command) Response {
	c := cmd.CDB
	if c.OpCode() != MaintenanceIn || c.ServiceAction() != SAReportSupportedOpCodes {
		return s.ResponseFor(InvalidField(1, 4))
	}
	rctd := c.Byte(2)&0x80 != 0
	opts := c.Byte(2) & 0x07
	op, sa := OpCode(c.Byte(3)), c.Uint16(4)
	alloc := int(min(c.Uint32(6), math.MaxInt32))

	b := s.buf[:0]
	switch opts {
	case 0:
		b = extend(b, 4)
		for i := range s.Commands {
			ci := &s.Commands[i]
			b = append(b, byte(ci.OpCode), 0)
			if ci.HasSA {
				b = binary.BigEndian.AppendUint16(b, ci.ServiceAction)
			} else {
				b = append(b, 0, 0)
			}
			var flags byte
			if rctd {
				flags |= 0x02 // CTDP
			}
			if ci.HasSA {
				flags |= 0x01 // SERVACTV
			}
			b = append(b, 0, flags)
			b = binary.BigEndian.AppendUint16(b, uint16(len(ci.Usage)))
			if rctd {
				b = appendTimeouts(b, ci)
			}
		}
		binary.BigEndian.PutUint32(b[0:4], uint32(len(b)-4))
	case 1, 2, 3:
		hasSA := false
		for i := range s.Commands {
			if s.Commands[i].OpCode == op && s.Commands[i].HasSA {
				hasSA = true
			}
		}
		if (opts == 1 && hasSA) || (opts == 2 && !hasSA && s.supports(op)) {
			return s.ResponseFor(InvalidField(2, 2))
		}
		var found *CommandInfo
		for i := range s.Commands {
			ci := &s.Commands[i]
			if ci.OpCode == op && ci.HasSA == hasSA && (!hasSA || ci.ServiceAction == sa) {
				found = ci
				break
			}
		}
		if found == nil {
			b = append(b, 0, rsocNotSupported, 0, 0)
			break
		}
		flags := byte(rsocSupported)
		if rctd {
			flags |= 0x80 // CTDP
		}
		b = append(b, 0, flags)
		b = binary.BigEndian.AppendUint16(b, uint16(len(found.Usage)))
		b = append(b, found.Usage...)
		if rctd {
			b = appendTimeouts(b, found)
		}
	default:
		return s.ResponseFor(InvalidField(2, 2))
	}
	s.buf = b
	WriteParameterData(cmd.Data, b, alloc)
	return Good
}

// supports reports whether op is in s.Commands.
func (s *SPC) supports(op OpCode) bool {
	for i := range s.Commands {
		if s.Commands[i].OpCode == op {
			return true
		}
	}
	return false
}

// appendTimeouts appends a command timeouts descriptor (SPC-5 6.35.4):
// the nominal and the recommended timeout are both ci.Timeout.
func appendTimeouts(b []byte, ci *CommandInfo) []byte {
	b = append(b, 0, 0x0a, 0, 0)
	b = binary.BigEndian.AppendUint32(b, ci.Timeout)
	return binary.BigEndian.AppendUint32(b, ci.Timeout)
}
