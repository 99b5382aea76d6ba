package scsi

import "strconv"

// ASC is an additional sense code and qualifier, ASC<<8 | ASCQ (SPC-5 annex
// D, T10's asc-num.txt).
type ASC uint16

// Additional sense codes used by vscsid.
const (
	NoAdditionalSense                 ASC = 0x0000
	FilemarkDetected                  ASC = 0x0001
	EndOfPartitionMediumDetected      ASC = 0x0002
	SetmarkDetected                   ASC = 0x0003
	BeginningOfPartitionDetected      ASC = 0x0004
	EndOfDataDetected                 ASC = 0x0005
	LogicalUnitNotReadyCause          ASC = 0x0400
	LogicalUnitBecomingReady          ASC = 0x0401
	LogicalUnitNotReadyInitCmd        ASC = 0x0402
	LogicalUnitNotReadyManual         ASC = 0x0403
	LogicalUnitNotReadyFormat         ASC = 0x0404
	LogicalUnitCommunicationFailure   ASC = 0x0800
	WriteError                        ASC = 0x0c00
	UnrecoveredReadError              ASC = 0x1100
	ParameterListLengthError          ASC = 0x1a00
	MiscompareDuringVerify            ASC = 0x1d00
	InvalidCommandOperationCode       ASC = 0x2000
	LBAOutOfRange                     ASC = 0x2100
	InvalidFieldInCDB                 ASC = 0x2400
	LogicalUnitNotSupported           ASC = 0x2500
	InvalidFieldInParameterList       ASC = 0x2600
	WriteProtected                    ASC = 0x2700
	NotReadyToReadyChange             ASC = 0x2800
	ImportOrExportElementAccessed     ASC = 0x2801
	PowerOnResetOrBusDeviceReset      ASC = 0x2900
	PowerOnOccurred                   ASC = 0x2901
	BusResetOccurred                  ASC = 0x2902
	BusDeviceResetFunctionOccurred    ASC = 0x2903
	ParametersChanged                 ASC = 0x2a00
	ModeParametersChanged             ASC = 0x2a01
	CapacityDataHasChanged            ASC = 0x2a09
	CommandsClearedByAnotherInitiator ASC = 0x2f00
	IncompatibleMediumInstalled       ASC = 0x3000
	CannotReadMediumUnknownFormat     ASC = 0x3001
	MediumFormatCorrupted             ASC = 0x3100
	SequentialPositioningError        ASC = 0x3b00
	MediumNotPresent                  ASC = 0x3a00
	MediumRemovalPrevented            ASC = 0x5302
	InternalTargetFailure             ASC = 0x4400
	InvalidMessageError               ASC = 0x4900
	CommandPhaseError                 ASC = 0x4a00
	LogicalUnitFailure                ASC = 0x3e01
	ReportedLUNsDataHasChanged        ASC = 0x3f0e
	InquiryDataHasChanged             ASC = 0x3f03
	MediumLoadOrEjectFailed           ASC = 0x5300
	WriteAppendPositionError          ASC = 0x5000
	PositionPastBeginningOfMedium     ASC = 0x3b0c
	MediumDestinationElementFull      ASC = 0x3b0d
	ReadPastEndOfMedium               ASC = 0x3b02
	PositionErrorRelatedToTiming      ASC = 0x3b1b
	EndOfMediumReached                ASC = 0x3b0f
	LogicalBlockGuardCheckFailed      ASC = 0x1001
	DataPhaseError                    ASC = 0x4b00
	WORMMediumOverwriteAttempted      ASC = 0x300c
	CleaningRequested                 ASC = 0x0017
)

// Code is the additional sense code byte.
func (a ASC) Code() uint8 { return uint8(a >> 8) }

// Qualifier is the ASCQ byte.
func (a ASC) Qualifier() uint8 { return uint8(a) }

// String returns the hex form "0x24/0x00".
func (a ASC) String() string {
	return "0x" + strconv.FormatUint(uint64(a>>8), 16) + "/0x" + strconv.FormatUint(uint64(a&0xff), 16)
}
