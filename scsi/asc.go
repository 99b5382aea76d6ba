package scsi

import "sort"

// ASC is an additional sense code and qualifier, ASC<<8 | ASCQ (SPC-5 annex
// D, T10's asc-num.txt).
type ASC uint16

// Additional sense codes used by vscsid. Each value is pinned to T10's
// asc-num.txt by TestASCValues.
const (
	NoAdditionalSense                ASC = 0x0000
	FilemarkDetected                 ASC = 0x0001
	EndOfPartitionMediumDetected     ASC = 0x0002
	SetmarkDetected                  ASC = 0x0003
	BeginningOfPartitionDetected     ASC = 0x0004
	EndOfDataDetected                ASC = 0x0005
	IOProcessTerminated              ASC = 0x0006
	ProgrammableEarlyWarningDetected ASC = 0x0007
	OperationInProgress              ASC = 0x0016
	CleaningRequested                ASC = 0x0017
	EraseOperationInProgress         ASC = 0x0018
	LocateOperationInProgress        ASC = 0x0019
	RewindOperationInProgress        ASC = 0x001a
	LogicalUnitNotReadyCause         ASC = 0x0400
	LogicalUnitBecomingReady         ASC = 0x0401
	LogicalUnitNotReadyInitCmd       ASC = 0x0402
	LogicalUnitNotReadyManual        ASC = 0x0403
	LogicalUnitNotReadyFormat        ASC = 0x0404
	LogicalUnitNotReadyOperation     ASC = 0x0407
	LogicalUnitNotReadyOffline       ASC = 0x0412
	LogicalUnitCommunicationFailure  ASC = 0x0800
	LogicalUnitCommunicationTimeout  ASC = 0x0801
	WriteError                       ASC = 0x0c00
	WriteErrorAutoReallocationFailed ASC = 0x0c02
	InvalidFieldInCommandIU          ASC = 0x0e03
	LogicalBlockGuardCheckFailed     ASC = 0x1001
	LogicalBlockAppTagCheckFailed    ASC = 0x1002
	LogicalBlockRefTagCheckFailed    ASC = 0x1003
	UnrecoveredReadError             ASC = 0x1100
	ReadRetriesExhausted             ASC = 0x1101
	RecordedEntityNotFound           ASC = 0x1400
	RecordNotFound                   ASC = 0x1401
	FilemarkOrSetmarkNotFound        ASC = 0x1402
	EndOfDataNotFound                ASC = 0x1403
	LocateOperationFailure           ASC = 0x1407
	RandomPositioningError           ASC = 0x1500
	RecoveredDataWithRetries         ASC = 0x1701
	RecoveredDataWithECC             ASC = 0x1800
	ParameterListLengthError         ASC = 0x1a00
	MiscompareDuringVerify           ASC = 0x1d00
	InvalidCommandOperationCode      ASC = 0x2000
	LBAOutOfRange                    ASC = 0x2100
	InvalidElementAddress            ASC = 0x2101
	UnalignedWriteCommand            ASC = 0x2104
	WriteBoundaryViolation           ASC = 0x2105
	AttemptToReadInvalidData         ASC = 0x2106
	AttemptToAccessGapZone           ASC = 0x2109
	InvalidFieldInCDB                ASC = 0x2400
	LogicalUnitNotSupported          ASC = 0x2500
	InvalidFieldInParameterList      ASC = 0x2600
	ParameterNotSupported            ASC = 0x2601
	ParameterValueInvalid            ASC = 0x2602
	WriteProtected                   ASC = 0x2700
	HardwareWriteProtected           ASC = 0x2701
	SoftwareWriteProtected           ASC = 0x2702
	NotReadyToReadyChange            ASC = 0x2800
	ImportOrExportElementAccessed    ASC = 0x2801
	PowerOnResetOrBusDeviceReset     ASC = 0x2900
	PowerOnOccurred                  ASC = 0x2901
	BusResetOccurred                 ASC = 0x2902
	BusDeviceResetFunctionOccurred   ASC = 0x2903
	DeviceInternalReset              ASC = 0x2904
	ITNexusLossOccurred              ASC = 0x2907
	ParametersChanged                ASC = 0x2a00
	ModeParametersChanged            ASC = 0x2a01
	LogParametersChanged             ASC = 0x2a02
	CapacityDataHasChanged           ASC = 0x2a09
	TimestampChanged                 ASC = 0x2a10
	// EncryptionChangedByVendorEvent is DATA ENCRYPTION PARAMETERS
	// CHANGED BY VENDOR SPECIFIC EVENT (SPC-5, sg3_utils sg_lib_data.c).
	EncryptionChangedByVendorEvent     ASC = 0x2a12
	CommandSequenceError               ASC = 0x2c00
	CommandsClearedByAnotherInitiator  ASC = 0x2f00
	IncompatibleMediumInstalled        ASC = 0x3000
	CannotReadMediumUnknownFormat      ASC = 0x3001
	CannotReadMediumIncompatible       ASC = 0x3002
	CleaningCartridgeInstalled         ASC = 0x3003
	CannotWriteMediumUnknownFormat     ASC = 0x3004
	CannotWriteMediumIncompatible      ASC = 0x3005
	CannotFormatMediumIncompatible     ASC = 0x3006
	WORMMediumOverwriteAttempted       ASC = 0x300c
	MediumNotFormatted                 ASC = 0x3010
	MediumFormatCorrupted              ASC = 0x3100
	FormatCommandFailed                ASC = 0x3101
	TapeLengthError                    ASC = 0x3300
	SavingParametersNotSupported       ASC = 0x3900
	MediumNotPresent                   ASC = 0x3a00
	MediumNotPresentTrayClosed         ASC = 0x3a01
	MediumNotPresentTrayOpen           ASC = 0x3a02
	MediumNotPresentLoadable           ASC = 0x3a03
	SequentialPositioningError         ASC = 0x3b00
	TapePositionErrorAtBOM             ASC = 0x3b01
	TapePositionErrorAtEOM             ASC = 0x3b02
	ReadPastEndOfMedium                ASC = 0x3b09
	ReadPastBeginningOfMedium          ASC = 0x3b0a
	PositionPastEndOfMedium            ASC = 0x3b0b
	PositionPastBeginningOfMedium      ASC = 0x3b0c
	MediumDestinationElementFull       ASC = 0x3b0d
	MediumSourceElementEmpty           ASC = 0x3b0e
	EndOfMediumReached                 ASC = 0x3b0f
	MediumMagazineRemoved              ASC = 0x3b12
	MediumMagazineInserted             ASC = 0x3b13
	LogicalUnitFailure                 ASC = 0x3e01
	TimeoutOnLogicalUnit               ASC = 0x3e02
	TargetOperatingConditionsChanged   ASC = 0x3f00
	MicrocodeHasBeenChanged            ASC = 0x3f01
	InquiryDataHasChanged              ASC = 0x3f03
	ReportedLUNsDataHasChanged         ASC = 0x3f0e
	MediumLoadable                     ASC = 0x3f10
	InternalTargetFailure              ASC = 0x4400
	InvalidMessageError                ASC = 0x4900
	CommandPhaseError                  ASC = 0x4a00
	DataPhaseError                     ASC = 0x4b00
	TooMuchWriteData                   ASC = 0x4b02
	OverlappedCommandsAttempted        ASC = 0x4e00
	WriteAppendError                   ASC = 0x5000
	WriteAppendPositionError           ASC = 0x5001
	PositionErrorRelatedToTiming       ASC = 0x5002
	EraseFailure                       ASC = 0x5100
	CartridgeFault                     ASC = 0x5200
	MediumLoadOrEjectFailed            ASC = 0x5300
	UnloadTapeFailure                  ASC = 0x5301
	MediumRemovalPrevented             ASC = 0x5302
	MediumRemovalPreventedByDTE        ASC = 0x5303
	SystemResourceFailure              ASC = 0x5500
	InsufficientResources              ASC = 0x5503
	InsufficientZoneResources          ASC = 0x550e
	OperatorMediumRemovalRequest       ASC = 0x5a01
	OperatorSelectedWriteProtect       ASC = 0x5a02
	OperatorSelectedWritePermit        ASC = 0x5a03
	LogException                       ASC = 0x5b00
	ThresholdConditionMet              ASC = 0x5b01
	LogCounterAtMaximum                ASC = 0x5b02
	FailurePredictionThresholdExceeded ASC = 0x5d00
	FailurePredictionFalse             ASC = 0x5dff
	LowPowerConditionOn                ASC = 0x5e00
	DecompressionExceptionLongAlgID    ASC = 0x7100
	SecurityError                      ASC = 0x7400
	UnableToDecryptData                ASC = 0x7401
	UnencryptedDataWhileDecrypting     ASC = 0x7402
	IncorrectDataEncryptionKey         ASC = 0x7403
)

// Code is the additional sense code byte.
func (a ASC) Code() uint8 { return uint8(a >> 8) }

// Qualifier is the ASCQ byte.
func (a ASC) Qualifier() uint8 { return uint8(a) }

// String returns the hex form "0x24/0x00".
func (a ASC) String() string {
	const hex = "0123456789abcdef"
	b := [9]byte{'0', 'x', hex[a>>12], hex[a>>8&0xf], '/', '0', 'x', hex[a>>4&0xf], hex[a&0xf]}
	return string(b[:])
}

// Name returns T10's description of a (asc-num.txt wording, e.g. "INVALID
// FIELD IN CDB"), or "" for a code that has no constant in this package.
// It does not allocate.
func (a ASC) Name() string {
	i := sort.Search(len(ascNames), func(i int) bool { return ascNames[i].asc >= a })
	if i < len(ascNames) && ascNames[i].asc == a {
		return ascNames[i].name
	}
	return ""
}

// ascNames is sorted by code; TestASCNamesSorted keeps it so.
var ascNames = [...]struct {
	asc  ASC
	name string
}{
	{0x0000, "NO ADDITIONAL SENSE INFORMATION"},
	{0x0001, "FILEMARK DETECTED"},
	{0x0002, "END-OF-PARTITION/MEDIUM DETECTED"},
	{0x0003, "SETMARK DETECTED"},
	{0x0004, "BEGINNING-OF-PARTITION/MEDIUM DETECTED"},
	{0x0005, "END-OF-DATA DETECTED"},
	{0x0006, "I/O PROCESS TERMINATED"},
	{0x0007, "PROGRAMMABLE EARLY WARNING DETECTED"},
	{0x0016, "OPERATION IN PROGRESS"},
	{0x0017, "CLEANING REQUESTED"},
	{0x0018, "ERASE OPERATION IN PROGRESS"},
	{0x0019, "LOCATE OPERATION IN PROGRESS"},
	{0x001a, "REWIND OPERATION IN PROGRESS"},
	{0x0400, "LOGICAL UNIT NOT READY, CAUSE NOT REPORTABLE"},
	{0x0401, "LOGICAL UNIT IS IN PROCESS OF BECOMING READY"},
	{0x0402, "LOGICAL UNIT NOT READY, INITIALIZING COMMAND REQUIRED"},
	{0x0403, "LOGICAL UNIT NOT READY, MANUAL INTERVENTION REQUIRED"},
	{0x0404, "LOGICAL UNIT NOT READY, FORMAT IN PROGRESS"},
	{0x0407, "LOGICAL UNIT NOT READY, OPERATION IN PROGRESS"},
	{0x0412, "LOGICAL UNIT NOT READY, OFFLINE"},
	{0x0800, "LOGICAL UNIT COMMUNICATION FAILURE"},
	{0x0801, "LOGICAL UNIT COMMUNICATION TIME-OUT"},
	{0x0c00, "WRITE ERROR"},
	{0x0c02, "WRITE ERROR - AUTO REALLOCATION FAILED"},
	{0x0e03, "INVALID FIELD IN COMMAND INFORMATION UNIT"},
	{0x1001, "LOGICAL BLOCK GUARD CHECK FAILED"},
	{0x1002, "LOGICAL BLOCK APPLICATION TAG CHECK FAILED"},
	{0x1003, "LOGICAL BLOCK REFERENCE TAG CHECK FAILED"},
	{0x1100, "UNRECOVERED READ ERROR"},
	{0x1101, "READ RETRIES EXHAUSTED"},
	{0x1400, "RECORDED ENTITY NOT FOUND"},
	{0x1401, "RECORD NOT FOUND"},
	{0x1402, "FILEMARK OR SETMARK NOT FOUND"},
	{0x1403, "END-OF-DATA NOT FOUND"},
	{0x1407, "LOCATE OPERATION FAILURE"},
	{0x1500, "RANDOM POSITIONING ERROR"},
	{0x1701, "RECOVERED DATA WITH RETRIES"},
	{0x1800, "RECOVERED DATA WITH ERROR CORRECTION APPLIED"},
	{0x1a00, "PARAMETER LIST LENGTH ERROR"},
	{0x1d00, "MISCOMPARE DURING VERIFY OPERATION"},
	{0x2000, "INVALID COMMAND OPERATION CODE"},
	{0x2100, "LOGICAL BLOCK ADDRESS OUT OF RANGE"},
	{0x2101, "INVALID ELEMENT ADDRESS"},
	{0x2104, "UNALIGNED WRITE COMMAND"},
	{0x2105, "WRITE BOUNDARY VIOLATION"},
	{0x2106, "ATTEMPT TO READ INVALID DATA"},
	{0x2109, "ATTEMPT TO ACCESS GAP ZONE"},
	{0x2400, "INVALID FIELD IN CDB"},
	{0x2500, "LOGICAL UNIT NOT SUPPORTED"},
	{0x2600, "INVALID FIELD IN PARAMETER LIST"},
	{0x2601, "PARAMETER NOT SUPPORTED"},
	{0x2602, "PARAMETER VALUE INVALID"},
	{0x2700, "WRITE PROTECTED"},
	{0x2701, "HARDWARE WRITE PROTECTED"},
	{0x2702, "LOGICAL UNIT SOFTWARE WRITE PROTECTED"},
	{0x2800, "NOT READY TO READY CHANGE, MEDIUM MAY HAVE CHANGED"},
	{0x2801, "IMPORT OR EXPORT ELEMENT ACCESSED"},
	{0x2900, "POWER ON, RESET, OR BUS DEVICE RESET OCCURRED"},
	{0x2901, "POWER ON OCCURRED"},
	{0x2902, "SCSI BUS RESET OCCURRED"},
	{0x2903, "BUS DEVICE RESET FUNCTION OCCURRED"},
	{0x2904, "DEVICE INTERNAL RESET"},
	{0x2907, "I_T NEXUS LOSS OCCURRED"},
	{0x2a00, "PARAMETERS CHANGED"},
	{0x2a01, "MODE PARAMETERS CHANGED"},
	{0x2a02, "LOG PARAMETERS CHANGED"},
	{0x2a09, "CAPACITY DATA HAS CHANGED"},
	{0x2a10, "TIMESTAMP CHANGED"},
	{0x2a12, "DATA ENCRYPTION PARAMETERS CHANGED BY VENDOR SPECIFIC EVENT"},
	{0x2c00, "COMMAND SEQUENCE ERROR"},
	{0x2f00, "COMMANDS CLEARED BY ANOTHER INITIATOR"},
	{0x3000, "INCOMPATIBLE MEDIUM INSTALLED"},
	{0x3001, "CANNOT READ MEDIUM - UNKNOWN FORMAT"},
	{0x3002, "CANNOT READ MEDIUM - INCOMPATIBLE FORMAT"},
	{0x3003, "CLEANING CARTRIDGE INSTALLED"},
	{0x3004, "CANNOT WRITE MEDIUM - UNKNOWN FORMAT"},
	{0x3005, "CANNOT WRITE MEDIUM - INCOMPATIBLE FORMAT"},
	{0x3006, "CANNOT FORMAT MEDIUM - INCOMPATIBLE MEDIUM"},
	{0x300c, "WORM MEDIUM - OVERWRITE ATTEMPTED"},
	{0x3010, "MEDIUM NOT FORMATTED"},
	{0x3100, "MEDIUM FORMAT CORRUPTED"},
	{0x3101, "FORMAT COMMAND FAILED"},
	{0x3300, "TAPE LENGTH ERROR"},
	{0x3900, "SAVING PARAMETERS NOT SUPPORTED"},
	{0x3a00, "MEDIUM NOT PRESENT"},
	{0x3a01, "MEDIUM NOT PRESENT - TRAY CLOSED"},
	{0x3a02, "MEDIUM NOT PRESENT - TRAY OPEN"},
	{0x3a03, "MEDIUM NOT PRESENT - LOADABLE"},
	{0x3b00, "SEQUENTIAL POSITIONING ERROR"},
	{0x3b01, "TAPE POSITION ERROR AT BEGINNING-OF-MEDIUM"},
	{0x3b02, "TAPE POSITION ERROR AT END-OF-MEDIUM"},
	{0x3b09, "READ PAST END OF MEDIUM"},
	{0x3b0a, "READ PAST BEGINNING OF MEDIUM"},
	{0x3b0b, "POSITION PAST END OF MEDIUM"},
	{0x3b0c, "POSITION PAST BEGINNING OF MEDIUM"},
	{0x3b0d, "MEDIUM DESTINATION ELEMENT FULL"},
	{0x3b0e, "MEDIUM SOURCE ELEMENT EMPTY"},
	{0x3b0f, "END OF MEDIUM REACHED"},
	{0x3b12, "MEDIUM MAGAZINE REMOVED"},
	{0x3b13, "MEDIUM MAGAZINE INSERTED"},
	{0x3e01, "LOGICAL UNIT FAILURE"},
	{0x3e02, "TIMEOUT ON LOGICAL UNIT"},
	{0x3f00, "TARGET OPERATING CONDITIONS HAVE CHANGED"},
	{0x3f01, "MICROCODE HAS BEEN CHANGED"},
	{0x3f03, "INQUIRY DATA HAS CHANGED"},
	{0x3f0e, "REPORTED LUNS DATA HAS CHANGED"},
	{0x3f10, "MEDIUM LOADABLE"},
	{0x4400, "INTERNAL TARGET FAILURE"},
	{0x4900, "INVALID MESSAGE ERROR"},
	{0x4a00, "COMMAND PHASE ERROR"},
	{0x4b00, "DATA PHASE ERROR"},
	{0x4b02, "TOO MUCH WRITE DATA"},
	{0x4e00, "OVERLAPPED COMMANDS ATTEMPTED"},
	{0x5000, "WRITE APPEND ERROR"},
	{0x5001, "WRITE APPEND POSITION ERROR"},
	{0x5002, "POSITION ERROR RELATED TO TIMING"},
	{0x5100, "ERASE FAILURE"},
	{0x5200, "CARTRIDGE FAULT"},
	{0x5300, "MEDIA LOAD OR EJECT FAILED"},
	{0x5301, "UNLOAD TAPE FAILURE"},
	{0x5302, "MEDIUM REMOVAL PREVENTED"},
	{0x5303, "MEDIUM REMOVAL PREVENTED BY DATA TRANSFER ELEMENT"},
	{0x5500, "SYSTEM RESOURCE FAILURE"},
	{0x5503, "INSUFFICIENT RESOURCES"},
	{0x550e, "INSUFFICIENT ZONE RESOURCES"},
	{0x5a01, "OPERATOR MEDIUM REMOVAL REQUEST"},
	{0x5a02, "OPERATOR SELECTED WRITE PROTECT"},
	{0x5a03, "OPERATOR SELECTED WRITE PERMIT"},
	{0x5b00, "LOG EXCEPTION"},
	{0x5b01, "THRESHOLD CONDITION MET"},
	{0x5b02, "LOG COUNTER AT MAXIMUM"},
	{0x5d00, "FAILURE PREDICTION THRESHOLD EXCEEDED"},
	{0x5dff, "FAILURE PREDICTION THRESHOLD EXCEEDED (FALSE)"},
	{0x5e00, "LOW POWER CONDITION ON"},
	{0x7100, "DECOMPRESSION EXCEPTION LONG ALGORITHM ID"},
	{0x7400, "SECURITY ERROR"},
	{0x7401, "UNABLE TO DECRYPT DATA"},
	{0x7402, "UNENCRYPTED DATA ENCOUNTERED WHILE DECRYPTING"},
	{0x7403, "INCORRECT DATA ENCRYPTION KEY"},
}
