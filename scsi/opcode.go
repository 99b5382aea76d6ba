package scsi

// OpCode is a SCSI operation code (SPC-5 annex E, T10's op-num.txt). The
// same byte may mean different commands in different command sets: 0x01 is
// REWIND in SSC and (obsolete) REZERO UNIT in SBC, 0x91 is SPACE(16) and
// SYNCHRONIZE CACHE(16), 0x93 ERASE(16) and WRITE SAME(16), 0x34 READ
// POSITION and PRE-FETCH(10), 0x1b LOAD UNLOAD and START STOP UNIT, 0x04
// FORMAT MEDIUM and FORMAT UNIT.
type OpCode uint8

// Operation codes shared by, or common to, the command sets vscsid emulates.
// Where two constants share a byte, both names are given so that each
// package can write the name of its own command set.
const (
	TestUnitReady         OpCode = 0x00
	Rewind                OpCode = 0x01 // SSC; REZERO UNIT in SBC (obsolete)
	RequestSense          OpCode = 0x03
	FormatUnit            OpCode = 0x04 // SBC; FORMAT MEDIUM in SSC
	FormatMedium          OpCode = 0x04 // SSC; same byte as FORMAT UNIT
	ReadBlockLimits       OpCode = 0x05
	ReassignBlocks        OpCode = 0x07 // SBC; INITIALIZE ELEMENT STATUS in SMC
	InitElementStatus     OpCode = 0x07 // SMC; same byte as REASSIGN BLOCKS
	Read6                 OpCode = 0x08
	Write6                OpCode = 0x0a
	SetCapacity           OpCode = 0x0b // SSC
	ReadReverse6          OpCode = 0x0f // SSC
	WriteFilemarks6       OpCode = 0x10
	Space6                OpCode = 0x11
	Inquiry               OpCode = 0x12
	Verify6               OpCode = 0x13 // SSC
	RecoverBufferedData   OpCode = 0x14 // SSC
	ModeSelect6           OpCode = 0x15
	Reserve6              OpCode = 0x16
	Release6              OpCode = 0x17
	Erase6                OpCode = 0x19
	ModeSense6            OpCode = 0x1a
	StartStopUnit         OpCode = 0x1b // SBC; LOAD UNLOAD in SSC
	LoadUnload            OpCode = 0x1b // SSC; same byte as START STOP UNIT
	ReceiveDiagnostic     OpCode = 0x1c
	SendDiagnostic        OpCode = 0x1d
	PreventAllowMedium    OpCode = 0x1e
	ReadFormatCapacities  OpCode = 0x23 // MMC; sent by some hosts to any disk
	ReadCapacity10        OpCode = 0x25
	Read10                OpCode = 0x28
	Write10               OpCode = 0x2a
	Locate10              OpCode = 0x2b // SSC; SEEK(10) in SBC (obsolete)
	PositionToElement     OpCode = 0x2b // SMC; same byte as LOCATE(10)
	OpenCloseImportExport OpCode = 0x1b // SMC OPEN/CLOSE IMPORT/EXPORT ELEMENT; same byte as START STOP UNIT
	WriteAndVerify10      OpCode = 0x2e
	Verify10              OpCode = 0x2f
	ReadPosition          OpCode = 0x34 // SSC; PRE-FETCH(10) in SBC
	PreFetch10            OpCode = 0x34 // SBC; same byte as READ POSITION
	SynchronizeCache10    OpCode = 0x35
	ReadDefectData10      OpCode = 0x37
	InitElemStatusRange   OpCode = 0x37 // SMC INITIALIZE ELEMENT STATUS WITH RANGE; same byte as READ DEFECT DATA(10)
	WriteBuffer           OpCode = 0x3b
	ReadBuffer            OpCode = 0x3c
	ReadLong10            OpCode = 0x3e
	WriteLong10           OpCode = 0x3f
	WriteSame10           OpCode = 0x41
	Unmap                 OpCode = 0x42
	ReportDensitySupport  OpCode = 0x44
	Sanitize              OpCode = 0x48
	LogSelect             OpCode = 0x4c
	LogSense              OpCode = 0x4d
	ModeSelect10          OpCode = 0x55
	Reserve10             OpCode = 0x56
	Release10             OpCode = 0x57
	ModeSense10           OpCode = 0x5a
	PersistentReserveIn   OpCode = 0x5e
	PersistentReserveOut  OpCode = 0x5f
	VariableLength        OpCode = 0x7f // variable-length CDB (READ(32), WRITE(32), ...)
	WriteFilemarks16      OpCode = 0x80
	ReadReverse16         OpCode = 0x81
	AllowOverwrite        OpCode = 0x82 // SSC
	ExtendedCopy          OpCode = 0x83 // THIRD-PARTY COPY OUT
	ReceiveCopyResults    OpCode = 0x84 // THIRD-PARTY COPY IN
	ATAPassThrough16      OpCode = 0x85
	Read16                OpCode = 0x88
	CompareAndWrite       OpCode = 0x89
	Write16               OpCode = 0x8a
	ReadAttribute         OpCode = 0x8c
	WriteAttribute        OpCode = 0x8d
	WriteAndVerify16      OpCode = 0x8e
	Verify16              OpCode = 0x8f
	PreFetch16            OpCode = 0x90
	WriteAtomic16         OpCode = 0x9c
	SynchronizeCache16    OpCode = 0x91
	Space16               OpCode = 0x91 // SSC only; same byte as SYNCHRONIZE CACHE(16)
	Locate16              OpCode = 0x92 // SSC
	WriteSame16           OpCode = 0x93
	Erase16               OpCode = 0x93 // SSC only; same byte as WRITE SAME(16)
	ZBCOut                OpCode = 0x94
	ZBCIn                 OpCode = 0x95
	ReadBuffer16          OpCode = 0x9b
	ServiceActionIn16     OpCode = 0x9e
	ServiceActionOut16    OpCode = 0x9f
	ReportLUNs            OpCode = 0xa0
	ATAPassThrough12      OpCode = 0xa1
	SecurityProtocolIn    OpCode = 0xa2
	MaintenanceIn         OpCode = 0xa3
	MaintenanceOut        OpCode = 0xa4
	MoveMedium            OpCode = 0xa5 // SMC
	Read12                OpCode = 0xa8
	Write12               OpCode = 0xaa
	ReadMediaSerialNumber OpCode = 0xab
	WriteAndVerify12      OpCode = 0xae
	Verify12              OpCode = 0xaf
	SecurityProtocolOut   OpCode = 0xb5
	ReadDefectData12      OpCode = 0xb7
	ReadElementStatus     OpCode = 0xb8 // SMC
	ExchangeMedium        OpCode = 0xa6 // SMC
)

// Service actions (the 5-bit SERVICE ACTION field of byte 1).
const (
	SAReadCapacity16               = 0x10 // SERVICE ACTION IN(16)
	SAReadLong16                   = 0x11 // SERVICE ACTION IN(16)
	SAGetLBAStatus                 = 0x12 // SERVICE ACTION IN(16)
	SAReportSupportedOpCodes       = 0x0c // MAINTENANCE IN
	SAReportSupportedTMFunctions   = 0x0d // MAINTENANCE IN
	SAReportIdentifyingInformation = 0x05 // MAINTENANCE IN
	SAReportTargetPortGroups       = 0x0a // MAINTENANCE IN
	SAReportTimestamp              = 0x0f // MAINTENANCE IN
	SASetTimestamp                 = 0x0f // MAINTENANCE OUT
	SAWriteLong16                  = 0x11 // SERVICE ACTION OUT(16)
)

// String returns a stable snake_case name for op, derived from T10's name
// ("read_10", "mode_sense_6", "synchronize_cache_16"), or "0xNN" for an
// opcode without a name here. Where SBC and SSC share a byte, String gives
// the name of the command that is current in SBC-4 (0x04 format_unit, 0x1b
// start_stop_unit, 0x34 pre_fetch_10, 0x91 synchronize_cache_16, 0x93
// write_same_16), and the SSC name where the SBC command is obsolete (0x01
// rewind, 0x2b locate_10, 0x92 locate_16). A device names its commands
// with CommandSet.CommandName, which starts from this table. String never
// allocates.
func (op OpCode) String() string { return opNames[op] }

// CommandSet is the command standard a logical unit implements on top of
// SPC. It decides the name of the bytes that SBC and SSC assign to
// different commands.
type CommandSet uint8

// Command sets.
const (
	SBC CommandSet = iota // direct-access block device (disk)
	SSC                   // sequential-access device (tape drive)
	SMC                   // medium changer (tape library)
)

func (cs CommandSet) String() string {
	switch cs {
	case SSC:
		return "ssc"
	case SMC:
		return "smc"
	}
	return "sbc"
}

// sscNames are the bytes SSC assigns to a command of its own where String
// gives the SBC command.
var sscNames = [...]opName{
	{FormatMedium, "format_medium"},
	{LoadUnload, "load_unload"},
	{ReadPosition, "read_position"},
	{Space16, "space_16"},
	{Erase16, "erase_16"},
}

// opName is a command set's own name of an opcode.
type opName struct {
	op   OpCode
	name string
}

// ownNames are the names each command set gives its own bytes.
var ownNames = [...][]opName{SSC: sscNames[:], SMC: smcNames[:]}

// smcNames are the bytes SMC-3 assigns to a command of its own where
// String gives another command set's.
var smcNames = [...]opName{
	{InitElementStatus, "initialize_element_status"},
	{OpenCloseImportExport, "open_close_import_export_element"},
	{PositionToElement, "position_to_element"},
	{InitElemStatusRange, "initialize_element_status_with_range"},
}

// saNames name the service actions a device serves as commands of their
// own (SPC-5 annex E.3).
var saNames = [...]struct {
	op   OpCode
	sa   uint16
	name string
}{
	{ServiceActionIn16, SAReadCapacity16, "read_capacity_16"},
	{ServiceActionIn16, SAReadLong16, "read_long_16"},
	{ServiceActionIn16, SAGetLBAStatus, "get_lba_status"},
	{ServiceActionOut16, SAWriteLong16, "write_long_16"},
	{ZBCIn, 0x00, "report_zones"},
	{ZBCOut, 0x01, "close_zone"},
	{ZBCOut, 0x02, "finish_zone"},
	{ZBCOut, 0x03, "open_zone"},
	{ZBCOut, 0x04, "reset_write_pointer"},
	{MaintenanceIn, SAReportIdentifyingInformation, "report_identifying_information"},
	{MaintenanceIn, SAReportTargetPortGroups, "report_target_port_groups"},
	{MaintenanceIn, SAReportSupportedOpCodes, "report_supported_opcodes"},
	{MaintenanceIn, SAReportSupportedTMFunctions, "report_supported_tmfs"},
	{MaintenanceIn, SAReportTimestamp, "report_timestamp"},
	{MaintenanceOut, SASetTimestamp, "set_timestamp"},
}

// Name returns the snake_case name of op in cs: op.String(), except for
// the bytes where SSC defines its own command (0x04 format_medium, 0x1b
// load_unload, 0x34 read_position, 0x91 space_16, 0x93 erase_16) and
// those where SMC does (0x07 initialize_element_status, 0x1b
// open_close_import_export_element, 0x2b position_to_element, 0x37 initialize_element_status_with_range).
func (cs CommandSet) Name(op OpCode) string {
	if int(cs) < len(ownNames) {
		for _, n := range ownNames[cs] {
			if n.op == op {
				return n.name
			}
		}
	}
	return op.String()
}

// CommandName is the name of a command as the `command` metric label and
// the op= of fault rules spell it: the name of service action sa of op
// when hasSA is set and the service action has one (0x9e/0x10
// read_capacity_16, 0xa3/0x0c report_supported_opcodes), else cs.Name(op).
// A device that serves one service action of an opcode names the opcode
// after it; it never allocates.
func (cs CommandSet) CommandName(op OpCode, sa uint16, hasSA bool) string {
	if hasSA {
		for i := range saNames {
			if saNames[i].op == op && saNames[i].sa == sa {
				return saNames[i].name
			}
		}
	}
	return cs.Name(op)
}

// Name is the command's name in cs (CommandSet.CommandName).
func (ci *CommandInfo) Name(cs CommandSet) string {
	return cs.CommandName(ci.OpCode, ci.ServiceAction, ci.HasSA)
}

var opNames = func() (t [256]string) {
	const hex = "0123456789abcdef"
	for i := range t {
		t[i] = "0x" + string(hex[i>>4]) + string(hex[i&0xf])
	}
	for op, name := range map[OpCode]string{
		0x00: "test_unit_ready",
		0x01: "rewind",
		0x03: "request_sense",
		0x04: "format_unit",
		0x05: "read_block_limits",
		0x07: "reassign_blocks",
		0x08: "read_6",
		0x0a: "write_6",
		0x0b: "set_capacity",
		0x0f: "read_reverse_6",
		0x10: "write_filemarks_6",
		0x11: "space_6",
		0x12: "inquiry",
		0x13: "verify_6",
		0x14: "recover_buffered_data",
		0x15: "mode_select_6",
		0x16: "reserve_6",
		0x17: "release_6",
		0x18: "copy",
		0x19: "erase_6",
		0x1a: "mode_sense_6",
		0x1b: "start_stop_unit",
		0x1c: "receive_diagnostic_results",
		0x1d: "send_diagnostic",
		0x1e: "prevent_allow_medium_removal",
		0x23: "read_format_capacities",
		0x25: "read_capacity_10",
		0x28: "read_10",
		0x2a: "write_10",
		0x2b: "locate_10",
		0x2e: "write_and_verify_10",
		0x2f: "verify_10",
		0x34: "pre_fetch_10",
		0x35: "synchronize_cache_10",
		0x36: "lock_unlock_cache_10",
		0x37: "read_defect_data_10",
		0x3b: "write_buffer",
		0x3c: "read_buffer_10",
		0x3e: "read_long_10",
		0x3f: "write_long_10",
		0x41: "write_same_10",
		0x42: "unmap",
		0x44: "report_density_support",
		0x48: "sanitize",
		0x4c: "log_select",
		0x4d: "log_sense",
		0x55: "mode_select_10",
		0x56: "reserve_10",
		0x57: "release_10",
		0x5a: "mode_sense_10",
		0x5e: "persistent_reserve_in",
		0x5f: "persistent_reserve_out",
		0x7e: "extended_cdb",
		0x7f: "variable_length_cdb",
		0x80: "write_filemarks_16",
		0x81: "read_reverse_16",
		0x82: "allow_overwrite",
		0x83: "extended_copy",
		0x84: "receive_copy_results",
		0x85: "ata_pass_through_16",
		0x86: "access_control_in",
		0x87: "access_control_out",
		0x88: "read_16",
		0x89: "compare_and_write",
		0x8a: "write_16",
		0x8b: "orwrite_16",
		0x8c: "read_attribute",
		0x8d: "write_attribute",
		0x8e: "write_and_verify_16",
		0x8f: "verify_16",
		0x90: "pre_fetch_16",
		0x91: "synchronize_cache_16",
		0x92: "locate_16",
		0x93: "write_same_16",
		0x94: "zbc_out",
		0x95: "zbc_in",
		0x9a: "write_stream_16",
		0x9b: "read_buffer_16",
		0x9c: "write_atomic_16",
		0x9d: "service_action_bidirectional",
		0x9e: "service_action_in_16",
		0x9f: "service_action_out_16",
		0xa0: "report_luns",
		0xa1: "ata_pass_through_12",
		0xa2: "security_protocol_in",
		0xa3: "maintenance_in",
		0xa4: "maintenance_out",
		0xa5: "move_medium",
		0xa6: "exchange_medium",
		0xa8: "read_12",
		0xaa: "write_12",
		0xab: "service_action_in_12",
		0xae: "write_and_verify_12",
		0xaf: "verify_12",
		0xb5: "security_protocol_out",
		0xb7: "read_defect_data_12",
		0xb8: "read_element_status",
	} {
		t[op] = name
	}
	return t
}()
