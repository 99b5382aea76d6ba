package scsi

import (
	"encoding/binary"
	"math"
	"slices"
)

// REPORT SUPPORTED OPERATION CODES.

// CommandInfo describes one supported command for REPORT SUPPORTED
// OPERATION CODES (SPC-5 6.35).
type CommandInfo struct {
	OpCode        OpCode
	ServiceAction uint16
	HasSA         bool   // SERVACTV
	Usage         []byte // CDB usage data: CDB length = len(Usage); byte 0 = opcode
	Timeout       uint32 // nominal command timeout in seconds (0 = none reported)
}

// CoreCommands are the commands LIO's core answers itself for every TCMU
// backstore, before a handler sees them (target_core_user passes its CDBs
// through passthrough_parse_cdb, which emulates persistent reservations and
// RESERVE/RELEASE unless the device is configured for PR passthrough, and
// target_core_spc answers REPORT LUNS). The device supports them, so its
// REPORT SUPPORTED OPERATION CODES lists them: LTFS, for one, reads the
// timeouts of PERSISTENT RESERVE IN/OUT from it.
func CoreCommands() []CommandInfo {
	const ctl = 0x04 // NACA; LINK and FLAG are obsolete
	return []CommandInfo{
		{OpCode: Reserve6, Usage: []byte{byte(Reserve6), 0, 0, 0, 0, ctl}, Timeout: 60},
		{OpCode: Release6, Usage: []byte{byte(Release6), 0, 0, 0, 0, ctl}, Timeout: 60},
		{OpCode: PersistentReserveIn, Usage: []byte{byte(PersistentReserveIn), 0x1f, 0, 0, 0, 0, 0, 0xff, 0xff, ctl}, Timeout: 60},
		{OpCode: PersistentReserveOut, Usage: []byte{byte(PersistentReserveOut), 0x1f, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, ctl}, Timeout: 60},
		{OpCode: ReportLUNs, Usage: []byte{byte(ReportLUNs), 0, 0xff, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, ctl}, Timeout: 60},
	}
}

// WithCoreCommands returns cmds and the CoreCommands it does not list
// itself, in opcode order.
func WithCoreCommands(cmds []CommandInfo) []CommandInfo {
	out := slices.Clone(cmds)
	for _, c := range CoreCommands() {
		if !slices.ContainsFunc(cmds, func(x CommandInfo) bool { return x.OpCode == c.OpCode }) {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b CommandInfo) int { return int(a.OpCode) - int(b.OpCode) })
	return out
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
