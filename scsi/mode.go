package scsi

import "encoding/binary"

// MODE SENSE and MODE SELECT over a ModePages registry. The standard pages
// (Control, Informational Exceptions) are in modepages.go.

// PageControl is the PC field of MODE SENSE (SPC-5 6.14.1).
type PageControl uint8

// Page control values.
const (
	PCCurrent    PageControl = 0
	PCChangeable PageControl = 1
	PCDefault    PageControl = 2
	PCSaved      PageControl = 3
)

// ModePage is one mode page in a ModePages registry.
type ModePage struct {
	Code    uint8 // page code (6 bits)
	Subpage uint8 // 0 for page_0 format
	// Append appends the whole page (including its 2- or 4-byte header) for
	// the given page control.
	Append func(b []byte, pc PageControl) []byte
	// Select applies a page sent by MODE SELECT (the whole page including
	// its header). It returns an *Error (usually InvalidParameter with the
	// offset inside the page) when a field is not acceptable. nil Select
	// means the page is not changeable: MODE SELECT of it is refused unless
	// it equals the current value.
	Select func(page []byte) error
}

// ModePages is the registry MODE SENSE/SELECT(6/10) work over.
type ModePages struct {
	Pages []ModePage
	// DeviceSpecific returns the device-specific byte of the mode parameter
	// header (disk: WP bit 7, DPOFUA bit 4; tape: WP bit 7, buffered mode
	// bits 6..4, speed bits 3..0).
	DeviceSpecific func() uint8
	// BlockDescriptor appends one block descriptor (8 bytes short form, 16
	// bytes long form when long is true and LLBAA was set); nil → none.
	BlockDescriptor func(b []byte, long bool) []byte
	// SelectBlockDescriptor applies a block descriptor from MODE SELECT.
	// nil → a descriptor is accepted only if it equals the current one.
	SelectBlockDescriptor func(desc []byte, long bool) error
	// SelectDeviceSpecific applies the device-specific byte of a MODE
	// SELECT header (tape: BUFFERED MODE and SPEED; WP is ignored by SSC).
	// nil → the byte is ignored (SBC: reserved in MODE SELECT).
	SelectDeviceSpecific func(v uint8) error
	// MediumType is byte 1 (MODE SENSE(6)) of the header.
	MediumType uint8
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
