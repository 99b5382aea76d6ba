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

// SelfTestLog keeps the 20 most recent self-tests for the self-test
// results log page (SPC-5 7.3.20), which SEND DIAGNOSTIC fills and the
// handlers' LOG SENSE reports (page 10h).
type SelfTestLog struct {
	// Reported says the unit has the page (in LOG SENSE); without it the
	// background self-tests, which report only there, are refused.
	Reported bool
	n        int       // self-tests recorded, up to 20
	codes    [20]uint8 // SELF-TEST CODE, most recent first
}

// SelfTestResultsPage is the self-test results log page code.
const SelfTestResultsPage = 0x10

func (l *SelfTestLog) record(code uint8) {
	copy(l.codes[1:], l.codes[:len(l.codes)-1])
	l.codes[0] = code
	l.n = min(l.n+1, len(l.codes))
}

// AppendParams appends the page's 20 parameters (0001h, the most recent,
// to 0014h) whose code is at least ptr (LOG SENSE's PARAMETER POINTER):
// control byte 03h, length 10h; SELF-TEST CODE and SELF-TEST RESULTS 0h
// (completed without error; every self-test here passes), SELF-TEST
// NUMBER 0 (no segment failed), ACCUMULATED POWER ON HOURS 0, ADDRESS OF
// FIRST FAILURE all ones (none), sense 00/00/00. A parameter with no self-test behind it is all
// zero after its header.
func (l *SelfTestLog) AppendParams(b []byte, ptr uint16) []byte {
	for i := range len(l.codes) {
		code := uint16(i + 1)
		if code < ptr {
			continue
		}
		b = binary.BigEndian.AppendUint16(b, code)
		b = append(b, 0x03, 0x10)
		v := extend(b, 0x10)
		if i < l.n {
			p := v[len(v)-0x10:]
			p[0] = l.codes[i] << 5
			binary.BigEndian.PutUint64(p[4:12], ^uint64(0))
		}
		b = v
	}
	return b
}

// SendDiagnostic answers SEND DIAGNOSTIC (SPC-5 6.42): byte 1 SELF-TEST
// CODE (bits 7..5), PF (bit 4), SELFTEST (bit 2), DEVOFFL and UNITOFFL
// (bits 1, 0: accepted, nothing goes offline); PARAMETER LIST LENGTH
// bytes 3-4.
//
//   - SELFTEST=1, the default self-test: it passes, GOOD.
//   - The short and extended self-tests, foreground (101b, 110b) and, on
//     a unit that reports the self-test results log page
//     (SelfTests.Reported), background (001b, 010b): they pass at once,
//     GOOD, and are recorded in that page. A background self-test on a
//     unit without the page, ABORT BACKGROUND SELF-TEST (100b: none is
//     ever in progress) and the reserved codes are refused with 24/00.
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
	case code == selfTestForegroundShort || code == selfTestForegroundExtended,
		s.SelfTests.Reported && (code == selfTestBackgroundShort || code == selfTestBackgroundExtended):
		s.SelfTests.record(code)
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
