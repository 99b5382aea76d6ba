package scsi

// SPC is the common SPC-5 emulation a logical unit embeds. The owning
// handler fills the fields at construction and serialises all calls (one
// command at a time), like the rest of its state.
type SPC struct {
	Identity    Identity
	VPD         []VPDPage     // extra VPD pages (disk: 0xB0, 0xB1, ...)
	Modes       ModePages     // MODE SENSE/SELECT registry
	Commands    []CommandInfo // REPORT SUPPORTED OPERATION CODES
	UA          UnitAttentions
	SenseFormat SenseFormat // D_SENSE of the control mode page
}

// TODO(scsi agent): real implementations replace these stubs.

// Inquiry answers INQUIRY: standard data, or the VPD page asked for.
func (s *SPC) Inquiry(cmd *Command) Response { return ResponseFor(ErrInvalidOpCode) }

// RequestSense answers REQUEST SENSE with the unit's current condition
// (NO SENSE when cur.Key == NoSense and ASC == 0).
func (s *SPC) RequestSense(cmd *Command, cur Sense) Response { return ResponseFor(ErrInvalidOpCode) }

// ModeSense answers MODE SENSE(6) and MODE SENSE(10).
func (s *SPC) ModeSense(cmd *Command) Response { return ResponseFor(ErrInvalidOpCode) }

// ModeSelect answers MODE SELECT(6) and MODE SELECT(10).
func (s *SPC) ModeSelect(cmd *Command) Response { return ResponseFor(ErrInvalidOpCode) }

// ReportSupportedOpCodes answers MAINTENANCE IN / REPORT SUPPORTED
// OPERATION CODES, all-commands and single-command forms.
func (s *SPC) ReportSupportedOpCodes(cmd *Command) Response { return ResponseFor(ErrInvalidOpCode) }

// TakeUnitAttention reports a pending unit attention for cmd, removing it
// from the queue. INQUIRY, REPORT LUNS and REQUEST SENSE never take one
// (SAM-5 5.14 / SPC-5 5.14).
func (s *SPC) TakeUnitAttention(cmd *Command) (Response, bool) { return Good, false }
