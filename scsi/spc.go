package scsi

import "slices"

// The SPC type, its state and the helpers its command families share. The
// commands are by family: INQUIRY and VPD (inquiry.go), REQUEST SENSE and
// unit attentions (reqsense.go), MODE SENSE/SELECT (mode.go, standard pages
// in modepages.go), REPORT SUPPORTED OPERATION CODES (rsoc.go) and SEND
// DIAGNOSTIC (diag.go).

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
	VPD         []VPDPage        // extra VPD pages (disk: 0xB0, 0xB1, ...)
	Modes       ModePages        // MODE SENSE/SELECT registry
	Commands    []CommandInfo    // REPORT SUPPORTED OPERATION CODES
	Diagnostics []DiagnosticPage // SEND DIAGNOSTIC pages (diag.go)
	SelfTests   SelfTestLog      // the self-tests SEND DIAGNOSTIC ran (diag.go)
	UA          UnitAttentions
	SenseFormat SenseFormat // D_SENSE of the control mode page

	buf   []byte // parameter data scratch
	empty Buffer // Serve: the Data of a command that has none
	cur   []byte // MODE SELECT: current page or block descriptor
	mask  []byte // MODE SELECT: changeable mask of the page
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
