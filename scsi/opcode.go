package scsi

// OpCode is a SCSI operation code (SPC-5 annex E; the same byte value may
// mean different commands in different command sets, e.g. 0x01 is REWIND
// for SSC and REZERO UNIT for SBC).
type OpCode uint8

// Operation codes shared by, or common to, the command sets vscsid emulates.
const (
	TestUnitReady         OpCode = 0x00
	Rewind                OpCode = 0x01 // SSC; REZERO UNIT in SBC
	RequestSense          OpCode = 0x03
	FormatUnit            OpCode = 0x04 // SBC; FORMAT MEDIUM in SSC
	ReadBlockLimits       OpCode = 0x05
	Read6                 OpCode = 0x08
	Write6                OpCode = 0x0a
	SetCapacity           OpCode = 0x0b
	WriteFilemarks6       OpCode = 0x10
	Space6                OpCode = 0x11
	Inquiry               OpCode = 0x12
	Verify6               OpCode = 0x13
	ModeSelect6           OpCode = 0x15
	Reserve6              OpCode = 0x16
	Release6              OpCode = 0x17
	Erase6                OpCode = 0x19
	ModeSense6            OpCode = 0x1a
	StartStopUnit         OpCode = 0x1b // SBC; LOAD UNLOAD in SSC
	ReceiveDiagnostic     OpCode = 0x1c
	SendDiagnostic        OpCode = 0x1d
	PreventAllowMedium    OpCode = 0x1e
	ReadFormatCapacities  OpCode = 0x23
	ReadCapacity10        OpCode = 0x25
	Read10                OpCode = 0x28
	Write10               OpCode = 0x2a
	Locate10              OpCode = 0x2b // SSC; SEEK(10) in SBC
	Verify10              OpCode = 0x2f
	ReadPosition          OpCode = 0x34
	SynchronizeCache10    OpCode = 0x35
	WriteBuffer           OpCode = 0x3b
	ReadBuffer            OpCode = 0x3c
	WriteSame10           OpCode = 0x41
	Unmap                 OpCode = 0x42
	ReportDensitySupport  OpCode = 0x44
	LogSelect             OpCode = 0x4c
	LogSense              OpCode = 0x4d
	ModeSelect10          OpCode = 0x55
	Reserve10             OpCode = 0x56
	Release10             OpCode = 0x57
	ModeSense10           OpCode = 0x5a
	PersistentReserveIn   OpCode = 0x5e
	PersistentReserveOut  OpCode = 0x5f
	Read16                OpCode = 0x88
	WriteFilemarks16      OpCode = 0x80
	ReadReverse16         OpCode = 0x81
	ReadAttribute         OpCode = 0x8c
	WriteAttribute        OpCode = 0x8d
	Write16               OpCode = 0x8a
	Verify16              OpCode = 0x8f
	SynchronizeCache16    OpCode = 0x91
	Locate16              OpCode = 0x92 // SSC; WRITE SAME(16) is 0x93
	WriteSame16           OpCode = 0x93
	Erase16               OpCode = 0x93 // SSC only; same byte as WRITE SAME(16)
	Space16               OpCode = 0x91 // SSC only; same byte as SYNCHRONIZE CACHE(16)
	ServiceActionIn16     OpCode = 0x9e
	ReportLUNs            OpCode = 0xa0
	SecurityProtocolIn    OpCode = 0xa2
	MaintenanceIn         OpCode = 0xa3
	MaintenanceOut        OpCode = 0xa4
	Read12                OpCode = 0xa8
	Write12               OpCode = 0xaa
	ReadMediaSerialNumber OpCode = 0xab
	Verify12              OpCode = 0xaf
	SecurityProtocolOut   OpCode = 0xb5
)

// Service actions.
const (
	SAReadCapacity16               = 0x10 // SERVICE ACTION IN(16)
	SAReportSupportedOpCodes       = 0x0c // MAINTENANCE IN
	SAReportSupportedTMFunctions   = 0x0d // MAINTENANCE IN
	SAReportIdentifyingInformation = 0x05 // MAINTENANCE IN
)
