package scsi

import "encoding/binary"

// SEND DIAGNOSTIC.

// A DiagnosticPage is a diagnostic page (SPC-5 7.2) that SEND DIAGNOSTIC
// accepts in its parameter list.
type DiagnosticPage struct {
	Code uint8
	// Send performs the page: the whole page, its 4-byte header
	// included. It returns an *Error (usually InvalidParameter with the
	// offset inside the page) when a field is not acceptable.
	Send func(page []byte) error
}

// SELF-TEST CODE values (SPC-5 6.42, table 220).
const (
	selfTestBackgroundShort    = 0x1
	selfTestBackgroundExtended = 0x2
	selfTestAbortBackground    = 0x4
	selfTestForegroundShort    = 0x5
	selfTestForegroundExtended = 0x6
)

// SendDiagnostic answers SEND DIAGNOSTIC (SPC-5 6.42): byte 1 SELF-TEST
// CODE (bits 7..5), PF (bit 4), SELFTEST (bit 2), DEVOFFL and UNITOFFL
// (bits 1, 0: accepted, nothing goes offline); PARAMETER LIST LENGTH
// bytes 3-4.
//
//   - SELFTEST=1, the default self-test: it passes, GOOD.
//   - The foreground short and extended self-tests (101b, 110b): they
//     pass, GOOD. The unit keeps no self-test results log page, so the
//     background self-tests (001b, 010b), which report only there, are
//     refused with 24/00, as is ABORT BACKGROUND SELF-TEST (100b: none
//     is ever in progress) and the reserved codes.
//   - SELFTEST=0 and code 000b: the diagnostic page of the parameter list
//     is performed by the page of s.Diagnostics with its code; an empty
//     list does nothing.
//
// Errors: a self-test code with SELFTEST=1, or a reserved or background
// one → 24/00 byte 1 bit 7; a parameter list with a self-test → 24/00
// byte 3; a parameter list with PF=0 (vendor-specific format) → 24/00
// byte 1 bit 4; a list shorter than a page header, than its PAGE LENGTH,
// or than the PARAMETER LIST LENGTH of Data-Out → 1A/00; an unknown page
// → 26/00 at byte 0; and what the page's Send returns.
func (s *SPC) SendDiagnostic(cmd *Command) Response {
	c := cmd.CDB
	if c.OpCode() != SendDiagnostic {
		return s.ResponseFor(ErrInvalidOpCode)
	}
	b1 := c.Byte(1)
	code, pf, selftest := b1>>5, b1&0x10 != 0, b1&0x04 != 0
	plen := int(c.Uint16(3))
	switch {
	case selftest && code != 0:
		return s.ResponseFor(InvalidField(1, 7))
	case (selftest || code != 0) && plen != 0:
		return s.ResponseFor(InvalidField(3, -1))
	case selftest:
		return Good
	case code == selfTestForegroundShort || code == selfTestForegroundExtended:
		return Good
	case code != 0:
		return s.ResponseFor(InvalidField(1, 7))
	case plen == 0:
		return Good
	case !pf:
		return s.ResponseFor(InvalidField(1, 4))
	}
	if plen < 4 || cmd.Data.Len() < plen {
		return s.ResponseFor(ErrParameterListLen)
	}
	p := extend(s.buf[:0], plen)
	s.buf = p
	if n, _ := cmd.Data.Read(p); n < plen {
		return s.ResponseFor(ErrParameterListLen)
	}
	n := 4 + int(binary.BigEndian.Uint16(p[2:4]))
	if n > plen {
		return s.ResponseFor(ErrParameterListLen)
	}
	for i := range s.Diagnostics {
		if d := &s.Diagnostics[i]; d.Code == p[0] && d.Send != nil {
			if err := d.Send(p[:n]); err != nil {
				return s.relocate(err, 0)
			}
			return Good
		}
	}
	return s.ResponseFor(InvalidParameter(0, -1))
}
