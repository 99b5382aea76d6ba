package scsi

import "encoding/binary"

// LOG SENSE (SPC-5 6.9) and log pages (SPC-5 7.3): the CDB decoding and
// the parameter writer every unit with log pages uses.

// Log parameter control bytes (SPC-5 7.3.2.2.2): FORMAT AND LINKING 00b
// bounded data counter, 01b ASCII list, 11b binary list.
const (
	LogCounter = 0x00
	LogASCII   = 0x01
	LogBinary  = 0x03
)

// Log page codes every unit type may have.
const (
	LogSupportedPages = 0x00 // subpage FFh: supported pages and subpages
	LogTapeAlert      = 0x2e // SSC-5 8.2.5, SMC-3 7.2.2: 64 one-byte flags
)

// A LogSenseCDB is a decoded LOG SENSE CDB.
type LogSenseCDB struct {
	Page, Subpage uint8
	Ptr           uint16 // PARAMETER POINTER: the first parameter code reported
	Alloc         int
}

// DecodeLogSense decodes LOG SENSE: byte 1 PPC (bit 1) and SP (bit 0) are
// refused (no parameter-pointer control, nothing is saved); byte 2 PC
// (bits 7..6: every page control reports the current values) and PAGE
// CODE; byte 3 SUBPAGE CODE; PARAMETER POINTER bytes 5-6; ALLOCATION
// LENGTH bytes 7-8.
func DecodeLogSense(c CDB) (LogSenseCDB, error) {
	switch b := c.Byte(1); {
	case b&0x02 != 0:
		return LogSenseCDB{}, InvalidField(1, 1)
	case b&0x01 != 0:
		return LogSenseCDB{}, InvalidField(1, 0)
	}
	return LogSenseCDB{Page: c.Byte(2) & 0x3f, Subpage: c.Byte(3), Ptr: c.Uint16(5), Alloc: int(c.Uint16(7))}, nil
}

// LogPage builds one log page in B: the 4-byte header (SPF set for a
// subpage), then parameters whose code is at least Ptr; Finish sets the
// PAGE LENGTH.
type LogPage struct {
	B   []byte
	Ptr uint16
}

// NewLogPage starts page (page, sub) in buf (reused from its start).
func NewLogPage(buf []byte, ls LogSenseCDB) LogPage {
	b := append(buf[:0], ls.Page, ls.Subpage, 0, 0)
	if ls.Subpage != 0 {
		b[0] |= 0x40 // SPF
	}
	return LogPage{B: b, Ptr: ls.Ptr}
}

// Param appends one parameter unless its code is below the pointer.
func (w *LogPage) Param(code uint16, ctl byte, val ...byte) {
	if code < w.Ptr {
		return
	}
	w.B = binary.BigEndian.AppendUint16(w.B, code)
	w.B = append(w.B, ctl, byte(len(val)))
	w.B = append(w.B, val...)
}

// U8 appends a one-byte parameter.
func (w *LogPage) U8(code uint16, ctl byte, v uint8) { w.Param(code, ctl, v) }

// U32 appends a four-byte parameter, big-endian.
func (w *LogPage) U32(code uint16, ctl byte, v uint64) {
	w.Param(code, ctl, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// U64 appends an eight-byte parameter, big-endian.
func (w *LogPage) U64(code uint16, ctl byte, v uint64) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	w.Param(code, ctl, b[:]...)
}

// TapeAlert appends the 64 TapeAlert flags (parameters 0001h-0040h, one
// byte each), flag n set when bit n-1 of flags is.
func (w *LogPage) TapeAlert(flags uint64) {
	for f := uint16(1); f <= 64; f++ {
		w.U8(f, LogCounter, uint8(flags>>(f-1)&1))
	}
}

// Finish sets the PAGE LENGTH and returns the page.
func (w *LogPage) Finish() []byte {
	binary.BigEndian.PutUint16(w.B[2:], uint16(len(w.B)-4))
	return w.B
}
