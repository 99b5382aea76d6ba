package scsi

// This file is the contract of the common SPC emulation shared by disk and
// tape: the exported shapes the disk and tape packages code against. The
// SPC type and its methods are in spc_impl.go, the standard mode pages in
// modepages.go.

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

// CommandInfo describes one supported command for REPORT SUPPORTED
// OPERATION CODES (SPC-5 6.35).
type CommandInfo struct {
	OpCode        OpCode
	ServiceAction uint16
	HasSA         bool   // SERVACTV
	Usage         []byte // CDB usage data: CDB length = len(Usage); byte 0 = opcode
	Timeout       uint32 // nominal command timeout in seconds (0 = none reported)
}

// UnitAttentions is a small queue of pending unit attention conditions
// (SPC-5 5.14). The zero value is empty. Not safe for concurrent use: the
// owning handler serialises it like the rest of its state.
type UnitAttentions struct {
	q [8]ASC
	n int
}

// Add queues a unit attention; duplicates are dropped, and when full the
// oldest is replaced by the newest.
func (u *UnitAttentions) Add(asc ASC) {
	for i := 0; i < u.n; i++ {
		if u.q[i] == asc {
			return
		}
	}
	if u.n == len(u.q) {
		copy(u.q[:], u.q[1:])
		u.n--
	}
	u.q[u.n] = asc
	u.n++
}

// Pending reports whether any unit attention is queued.
func (u *UnitAttentions) Pending() bool { return u.n > 0 }

// Pop removes and returns the oldest unit attention.
func (u *UnitAttentions) Pop() (ASC, bool) {
	if u.n == 0 {
		return 0, false
	}
	a := u.q[0]
	copy(u.q[:], u.q[1:u.n])
	u.n--
	return a, true
}

// Clear drops every pending unit attention.
func (u *UnitAttentions) Clear() { u.n = 0 }
