package scsi_test

import (
	"regexp"
	"testing"

	"github.com/vscsid/vscsid/scsi"
)

// Each constant next to the number T10 assigns it (op-num.txt, SPC-5 annex
// E; SAM-5 table 33; SPC-5 table 52; asc-num.txt). The numbers are written
// out here, not derived from the package, so a wrong constant fails.

func TestOpCodeValues(t *testing.T) {
	for _, tt := range []struct {
		got  scsi.OpCode
		want uint8
		name string // String(): the generic (SBC where shared) T10 name
	}{
		{scsi.TestUnitReady, 0x00, "test_unit_ready"},
		{scsi.Rewind, 0x01, "rewind"},
		{scsi.RequestSense, 0x03, "request_sense"},
		{scsi.FormatUnit, 0x04, "format_unit"},
		{scsi.FormatMedium, 0x04, "format_unit"},
		{scsi.ReadBlockLimits, 0x05, "read_block_limits"},
		{scsi.ReassignBlocks, 0x07, "reassign_blocks"},
		{scsi.Read6, 0x08, "read_6"},
		{scsi.Write6, 0x0a, "write_6"},
		{scsi.SetCapacity, 0x0b, "set_capacity"},
		{scsi.ReadReverse6, 0x0f, "read_reverse_6"},
		{scsi.WriteFilemarks6, 0x10, "write_filemarks_6"},
		{scsi.Space6, 0x11, "space_6"},
		{scsi.Inquiry, 0x12, "inquiry"},
		{scsi.Verify6, 0x13, "verify_6"},
		{scsi.RecoverBufferedData, 0x14, "recover_buffered_data"},
		{scsi.ModeSelect6, 0x15, "mode_select_6"},
		{scsi.Reserve6, 0x16, "reserve_6"},
		{scsi.Release6, 0x17, "release_6"},
		{scsi.Erase6, 0x19, "erase_6"},
		{scsi.ModeSense6, 0x1a, "mode_sense_6"},
		{scsi.StartStopUnit, 0x1b, "start_stop_unit"},
		{scsi.LoadUnload, 0x1b, "start_stop_unit"},
		{scsi.ReceiveDiagnostic, 0x1c, "receive_diagnostic_results"},
		{scsi.SendDiagnostic, 0x1d, "send_diagnostic"},
		{scsi.PreventAllowMedium, 0x1e, "prevent_allow_medium_removal"},
		{scsi.ReadFormatCapacities, 0x23, "read_format_capacities"},
		{scsi.ReadCapacity10, 0x25, "read_capacity_10"},
		{scsi.Read10, 0x28, "read_10"},
		{scsi.Write10, 0x2a, "write_10"},
		{scsi.Locate10, 0x2b, "locate_10"},
		{scsi.WriteAndVerify10, 0x2e, "write_and_verify_10"},
		{scsi.Verify10, 0x2f, "verify_10"},
		{scsi.ReadPosition, 0x34, "pre_fetch_10"},
		{scsi.PreFetch10, 0x34, "pre_fetch_10"},
		{scsi.SynchronizeCache10, 0x35, "synchronize_cache_10"},
		{scsi.ReadDefectData10, 0x37, "read_defect_data_10"},
		{scsi.WriteBuffer, 0x3b, "write_buffer"},
		{scsi.ReadBuffer, 0x3c, "read_buffer_10"},
		{scsi.ReadLong10, 0x3e, "read_long_10"},
		{scsi.WriteLong10, 0x3f, "write_long_10"},
		{scsi.WriteSame10, 0x41, "write_same_10"},
		{scsi.Unmap, 0x42, "unmap"},
		{scsi.ReportDensitySupport, 0x44, "report_density_support"},
		{scsi.Sanitize, 0x48, "sanitize"},
		{scsi.LogSelect, 0x4c, "log_select"},
		{scsi.LogSense, 0x4d, "log_sense"},
		{scsi.ModeSelect10, 0x55, "mode_select_10"},
		{scsi.Reserve10, 0x56, "reserve_10"},
		{scsi.Release10, 0x57, "release_10"},
		{scsi.ModeSense10, 0x5a, "mode_sense_10"},
		{scsi.PersistentReserveIn, 0x5e, "persistent_reserve_in"},
		{scsi.PersistentReserveOut, 0x5f, "persistent_reserve_out"},
		{scsi.VariableLength, 0x7f, "variable_length_cdb"},
		{scsi.WriteFilemarks16, 0x80, "write_filemarks_16"},
		{scsi.ReadReverse16, 0x81, "read_reverse_16"},
		{scsi.AllowOverwrite, 0x82, "allow_overwrite"},
		{scsi.ExtendedCopy, 0x83, "extended_copy"},
		{scsi.ReceiveCopyResults, 0x84, "receive_copy_results"},
		{scsi.ATAPassThrough16, 0x85, "ata_pass_through_16"},
		{scsi.Read16, 0x88, "read_16"},
		{scsi.CompareAndWrite, 0x89, "compare_and_write"},
		{scsi.Write16, 0x8a, "write_16"},
		{scsi.ReadAttribute, 0x8c, "read_attribute"},
		{scsi.WriteAttribute, 0x8d, "write_attribute"},
		{scsi.WriteAndVerify16, 0x8e, "write_and_verify_16"},
		{scsi.Verify16, 0x8f, "verify_16"},
		{scsi.PreFetch16, 0x90, "pre_fetch_16"},
		{scsi.WriteAtomic16, 0x9c, "write_atomic_16"},
		{scsi.SynchronizeCache16, 0x91, "synchronize_cache_16"},
		{scsi.Space16, 0x91, "synchronize_cache_16"},
		{scsi.Locate16, 0x92, "locate_16"},
		{scsi.WriteSame16, 0x93, "write_same_16"},
		{scsi.Erase16, 0x93, "write_same_16"},
		{scsi.ZBCOut, 0x94, "zbc_out"},
		{scsi.ZBCIn, 0x95, "zbc_in"},
		{scsi.ReadBuffer16, 0x9b, "read_buffer_16"},
		{scsi.ServiceActionIn16, 0x9e, "service_action_in_16"},
		{scsi.ServiceActionOut16, 0x9f, "service_action_out_16"},
		{scsi.ReportLUNs, 0xa0, "report_luns"},
		{scsi.ATAPassThrough12, 0xa1, "ata_pass_through_12"},
		{scsi.SecurityProtocolIn, 0xa2, "security_protocol_in"},
		{scsi.MaintenanceIn, 0xa3, "maintenance_in"},
		{scsi.MaintenanceOut, 0xa4, "maintenance_out"},
		{scsi.MoveMedium, 0xa5, "move_medium"},
		{scsi.ExchangeMedium, 0xa6, "exchange_medium"},
		{scsi.Read12, 0xa8, "read_12"},
		{scsi.Write12, 0xaa, "write_12"},
		{scsi.ReadMediaSerialNumber, 0xab, "service_action_in_12"},
		{scsi.WriteAndVerify12, 0xae, "write_and_verify_12"},
		{scsi.Verify12, 0xaf, "verify_12"},
		{scsi.SecurityProtocolOut, 0xb5, "security_protocol_out"},
		{scsi.ReadDefectData12, 0xb7, "read_defect_data_12"},
		{scsi.ReadElementStatus, 0xb8, "read_element_status"},
	} {
		if uint8(tt.got) != tt.want {
			t.Errorf("opcode %s = %#02x, T10 says %#02x", tt.name, uint8(tt.got), tt.want)
		}
		if s := tt.got.String(); s != tt.name {
			t.Errorf("OpCode(%#02x).String() = %q, want %q", tt.want, s, tt.name)
		}
	}
}

func TestServiceActionValues(t *testing.T) {
	for _, tt := range []struct {
		name      string
		got, want int
	}{
		{"READ CAPACITY(16)", scsi.SAReadCapacity16, 0x10},
		{"READ LONG(16)", scsi.SAReadLong16, 0x11},
		{"GET LBA STATUS", scsi.SAGetLBAStatus, 0x12},
		{"REPORT IDENTIFYING INFORMATION", scsi.SAReportIdentifyingInformation, 0x05},
		{"REPORT TARGET PORT GROUPS", scsi.SAReportTargetPortGroups, 0x0a},
		{"REPORT SUPPORTED OPERATION CODES", scsi.SAReportSupportedOpCodes, 0x0c},
		{"REPORT SUPPORTED TASK MANAGEMENT FUNCTIONS", scsi.SAReportSupportedTMFunctions, 0x0d},
		{"REPORT TIMESTAMP", scsi.SAReportTimestamp, 0x0f},
		{"SET TIMESTAMP", scsi.SASetTimestamp, 0x0f},
		{"WRITE LONG(16)", scsi.SAWriteLong16, 0x11},
	} {
		if tt.got != tt.want {
			t.Errorf("service action %s = %#02x, T10 says %#02x", tt.name, tt.got, tt.want)
		}
	}
}

func TestOpCodeStringAllBytes(t *testing.T) {
	name := regexp.MustCompile(`^([a-z][a-z0-9_]*|0x[0-9a-f]{2})$`)
	seen := map[string]uint8{}
	for i := range 256 {
		s := scsi.OpCode(i).String()
		if !name.MatchString(s) {
			t.Errorf("OpCode(%#02x).String() = %q: not snake_case or 0xNN", i, s)
		}
		if j, dup := seen[s]; dup {
			t.Errorf("OpCode %#02x and %#02x both named %q", j, i, s)
		}
		seen[s] = uint8(i)
	}
	if got := scsi.OpCode(0xc5).String(); got != "0xc5" {
		t.Errorf("unnamed opcode: %q, want 0xc5", got)
	}
	if n := testing.AllocsPerRun(100, func() { _ = scsi.OpCode(0x28).String() }); n != 0 {
		t.Errorf("OpCode.String allocates %v times", n)
	}
}

func TestStatusValues(t *testing.T) {
	for _, tt := range []struct {
		got  scsi.Status
		want uint8
		name string
	}{
		{scsi.StatusGood, 0x00, "good"},
		{scsi.StatusCheckCondition, 0x02, "check_condition"},
		{scsi.StatusConditionMet, 0x04, "condition_met"},
		{scsi.StatusBusy, 0x08, "busy"},
		{scsi.StatusReservationConflict, 0x18, "reservation_conflict"},
		{scsi.StatusTaskSetFull, 0x28, "task_set_full"},
		{scsi.StatusACAActive, 0x30, "aca_active"},
		{scsi.StatusTaskAborted, 0x40, "task_aborted"},
	} {
		if uint8(tt.got) != tt.want {
			t.Errorf("status %s = %#02x, SAM-5 says %#02x", tt.name, uint8(tt.got), tt.want)
		}
		if tt.got.String() != tt.name {
			t.Errorf("Status(%#02x).String() = %q, want %q", tt.want, tt.got.String(), tt.name)
		}
	}
	if got := scsi.Status(0x22).String(); got != "unknown" {
		t.Errorf("Status(0x22).String() = %q", got)
	}
	if scsi.Good.Status != scsi.StatusGood || scsi.Good != (scsi.Response{}) {
		t.Errorf("Good is not the zero Response")
	}
}

func TestSenseKeyValues(t *testing.T) {
	for _, tt := range []struct {
		got  scsi.SenseKey
		want uint8
		name string
	}{
		{scsi.NoSense, 0x0, "no_sense"},
		{scsi.RecoveredError, 0x1, "recovered_error"},
		{scsi.NotReady, 0x2, "not_ready"},
		{scsi.MediumError, 0x3, "medium_error"},
		{scsi.HardwareError, 0x4, "hardware_error"},
		{scsi.IllegalRequest, 0x5, "illegal_request"},
		{scsi.UnitAttention, 0x6, "unit_attention"},
		{scsi.DataProtect, 0x7, "data_protect"},
		{scsi.BlankCheck, 0x8, "blank_check"},
		{scsi.VendorSpecific, 0x9, "vendor_specific"},
		{scsi.CopyAborted, 0xa, "copy_aborted"},
		{scsi.AbortedCommand, 0xb, "aborted_command"},
		{scsi.VolumeOverflow, 0xd, "volume_overflow"},
		{scsi.Miscompare, 0xe, "miscompare"},
		{scsi.Completed, 0xf, "completed"},
	} {
		if uint8(tt.got) != tt.want {
			t.Errorf("sense key %s = %#x, SPC-5 says %#x", tt.name, uint8(tt.got), tt.want)
		}
		if tt.got.String() != tt.name {
			t.Errorf("SenseKey(%#x).String() = %q, want %q", tt.want, tt.got.String(), tt.name)
		}
	}
	if got := scsi.SenseKey(0x15).String(); got != "illegal_request" {
		t.Errorf("SenseKey(0x15) = %q: String must mask to 4 bits", got)
	}
}

// ascTable is every ASC constant, its asc-num.txt value and description.
var ascTable = []struct {
	got  scsi.ASC
	want uint16
	name string
}{
	{scsi.NoAdditionalSense, 0x0000, "NO ADDITIONAL SENSE INFORMATION"},
	{scsi.FilemarkDetected, 0x0001, "FILEMARK DETECTED"},
	{scsi.EndOfPartitionMediumDetected, 0x0002, "END-OF-PARTITION/MEDIUM DETECTED"},
	{scsi.SetmarkDetected, 0x0003, "SETMARK DETECTED"},
	{scsi.BeginningOfPartitionDetected, 0x0004, "BEGINNING-OF-PARTITION/MEDIUM DETECTED"},
	{scsi.EndOfDataDetected, 0x0005, "END-OF-DATA DETECTED"},
	{scsi.IOProcessTerminated, 0x0006, "I/O PROCESS TERMINATED"},
	{scsi.ProgrammableEarlyWarningDetected, 0x0007, "PROGRAMMABLE EARLY WARNING DETECTED"},
	{scsi.OperationInProgress, 0x0016, "OPERATION IN PROGRESS"},
	{scsi.CleaningRequested, 0x0017, "CLEANING REQUESTED"},
	{scsi.EraseOperationInProgress, 0x0018, "ERASE OPERATION IN PROGRESS"},
	{scsi.LocateOperationInProgress, 0x0019, "LOCATE OPERATION IN PROGRESS"},
	{scsi.RewindOperationInProgress, 0x001a, "REWIND OPERATION IN PROGRESS"},
	{scsi.LogicalUnitNotReadyCause, 0x0400, "LOGICAL UNIT NOT READY, CAUSE NOT REPORTABLE"},
	{scsi.LogicalUnitBecomingReady, 0x0401, "LOGICAL UNIT IS IN PROCESS OF BECOMING READY"},
	{scsi.LogicalUnitNotReadyInitCmd, 0x0402, "LOGICAL UNIT NOT READY, INITIALIZING COMMAND REQUIRED"},
	{scsi.LogicalUnitNotReadyManual, 0x0403, "LOGICAL UNIT NOT READY, MANUAL INTERVENTION REQUIRED"},
	{scsi.LogicalUnitNotReadyFormat, 0x0404, "LOGICAL UNIT NOT READY, FORMAT IN PROGRESS"},
	{scsi.LogicalUnitNotReadyOperation, 0x0407, "LOGICAL UNIT NOT READY, OPERATION IN PROGRESS"},
	{scsi.LogicalUnitNotReadyOffline, 0x0412, "LOGICAL UNIT NOT READY, OFFLINE"},
	{scsi.LogicalUnitCommunicationFailure, 0x0800, "LOGICAL UNIT COMMUNICATION FAILURE"},
	{scsi.LogicalUnitCommunicationTimeout, 0x0801, "LOGICAL UNIT COMMUNICATION TIME-OUT"},
	{scsi.WriteError, 0x0c00, "WRITE ERROR"},
	{scsi.WriteErrorAutoReallocationFailed, 0x0c02, "WRITE ERROR - AUTO REALLOCATION FAILED"},
	{scsi.InvalidFieldInCommandIU, 0x0e03, "INVALID FIELD IN COMMAND INFORMATION UNIT"},
	{scsi.LogicalBlockGuardCheckFailed, 0x1001, "LOGICAL BLOCK GUARD CHECK FAILED"},
	{scsi.LogicalBlockAppTagCheckFailed, 0x1002, "LOGICAL BLOCK APPLICATION TAG CHECK FAILED"},
	{scsi.LogicalBlockRefTagCheckFailed, 0x1003, "LOGICAL BLOCK REFERENCE TAG CHECK FAILED"},
	{scsi.UnrecoveredReadError, 0x1100, "UNRECOVERED READ ERROR"},
	{scsi.ReadRetriesExhausted, 0x1101, "READ RETRIES EXHAUSTED"},
	{scsi.RecordedEntityNotFound, 0x1400, "RECORDED ENTITY NOT FOUND"},
	{scsi.RecordNotFound, 0x1401, "RECORD NOT FOUND"},
	{scsi.FilemarkOrSetmarkNotFound, 0x1402, "FILEMARK OR SETMARK NOT FOUND"},
	{scsi.EndOfDataNotFound, 0x1403, "END-OF-DATA NOT FOUND"},
	{scsi.LocateOperationFailure, 0x1407, "LOCATE OPERATION FAILURE"},
	{scsi.RandomPositioningError, 0x1500, "RANDOM POSITIONING ERROR"},
	{scsi.RecoveredDataWithRetries, 0x1701, "RECOVERED DATA WITH RETRIES"},
	{scsi.RecoveredDataWithECC, 0x1800, "RECOVERED DATA WITH ERROR CORRECTION APPLIED"},
	{scsi.ParameterListLengthError, 0x1a00, "PARAMETER LIST LENGTH ERROR"},
	{scsi.MiscompareDuringVerify, 0x1d00, "MISCOMPARE DURING VERIFY OPERATION"},
	{scsi.InvalidCommandOperationCode, 0x2000, "INVALID COMMAND OPERATION CODE"},
	{scsi.LBAOutOfRange, 0x2100, "LOGICAL BLOCK ADDRESS OUT OF RANGE"},
	{scsi.InvalidElementAddress, 0x2101, "INVALID ELEMENT ADDRESS"},
	{scsi.UnalignedWriteCommand, 0x2104, "UNALIGNED WRITE COMMAND"},
	{scsi.WriteBoundaryViolation, 0x2105, "WRITE BOUNDARY VIOLATION"},
	{scsi.AttemptToReadInvalidData, 0x2106, "ATTEMPT TO READ INVALID DATA"},
	{scsi.AttemptToAccessGapZone, 0x2109, "ATTEMPT TO ACCESS GAP ZONE"},
	{scsi.InvalidFieldInCDB, 0x2400, "INVALID FIELD IN CDB"},
	{scsi.LogicalUnitNotSupported, 0x2500, "LOGICAL UNIT NOT SUPPORTED"},
	{scsi.InvalidFieldInParameterList, 0x2600, "INVALID FIELD IN PARAMETER LIST"},
	{scsi.ParameterNotSupported, 0x2601, "PARAMETER NOT SUPPORTED"},
	{scsi.ParameterValueInvalid, 0x2602, "PARAMETER VALUE INVALID"},
	{scsi.WriteProtected, 0x2700, "WRITE PROTECTED"},
	{scsi.HardwareWriteProtected, 0x2701, "HARDWARE WRITE PROTECTED"},
	{scsi.SoftwareWriteProtected, 0x2702, "LOGICAL UNIT SOFTWARE WRITE PROTECTED"},
	{scsi.NotReadyToReadyChange, 0x2800, "NOT READY TO READY CHANGE, MEDIUM MAY HAVE CHANGED"},
	{scsi.ImportOrExportElementAccessed, 0x2801, "IMPORT OR EXPORT ELEMENT ACCESSED"},
	{scsi.PowerOnResetOrBusDeviceReset, 0x2900, "POWER ON, RESET, OR BUS DEVICE RESET OCCURRED"},
	{scsi.PowerOnOccurred, 0x2901, "POWER ON OCCURRED"},
	{scsi.BusResetOccurred, 0x2902, "SCSI BUS RESET OCCURRED"},
	{scsi.BusDeviceResetFunctionOccurred, 0x2903, "BUS DEVICE RESET FUNCTION OCCURRED"},
	{scsi.DeviceInternalReset, 0x2904, "DEVICE INTERNAL RESET"},
	{scsi.ITNexusLossOccurred, 0x2907, "I_T NEXUS LOSS OCCURRED"},
	{scsi.ParametersChanged, 0x2a00, "PARAMETERS CHANGED"},
	{scsi.ModeParametersChanged, 0x2a01, "MODE PARAMETERS CHANGED"},
	{scsi.LogParametersChanged, 0x2a02, "LOG PARAMETERS CHANGED"},
	{scsi.CapacityDataHasChanged, 0x2a09, "CAPACITY DATA HAS CHANGED"},
	{scsi.TimestampChanged, 0x2a10, "TIMESTAMP CHANGED"},
	{scsi.EncryptionChangedByVendorEvent, 0x2a12, "DATA ENCRYPTION PARAMETERS CHANGED BY VENDOR SPECIFIC EVENT"},
	{scsi.CommandSequenceError, 0x2c00, "COMMAND SEQUENCE ERROR"},
	{scsi.CommandsClearedByAnotherInitiator, 0x2f00, "COMMANDS CLEARED BY ANOTHER INITIATOR"},
	{scsi.IncompatibleMediumInstalled, 0x3000, "INCOMPATIBLE MEDIUM INSTALLED"},
	{scsi.CannotReadMediumUnknownFormat, 0x3001, "CANNOT READ MEDIUM - UNKNOWN FORMAT"},
	{scsi.CannotReadMediumIncompatible, 0x3002, "CANNOT READ MEDIUM - INCOMPATIBLE FORMAT"},
	{scsi.CleaningCartridgeInstalled, 0x3003, "CLEANING CARTRIDGE INSTALLED"},
	{scsi.CannotWriteMediumUnknownFormat, 0x3004, "CANNOT WRITE MEDIUM - UNKNOWN FORMAT"},
	{scsi.CannotWriteMediumIncompatible, 0x3005, "CANNOT WRITE MEDIUM - INCOMPATIBLE FORMAT"},
	{scsi.CannotFormatMediumIncompatible, 0x3006, "CANNOT FORMAT MEDIUM - INCOMPATIBLE MEDIUM"},
	{scsi.WORMMediumOverwriteAttempted, 0x300c, "WORM MEDIUM - OVERWRITE ATTEMPTED"},
	{scsi.MediumNotFormatted, 0x3010, "MEDIUM NOT FORMATTED"},
	{scsi.MediumFormatCorrupted, 0x3100, "MEDIUM FORMAT CORRUPTED"},
	{scsi.FormatCommandFailed, 0x3101, "FORMAT COMMAND FAILED"},
	{scsi.TapeLengthError, 0x3300, "TAPE LENGTH ERROR"},
	{scsi.SavingParametersNotSupported, 0x3900, "SAVING PARAMETERS NOT SUPPORTED"},
	{scsi.MediumNotPresent, 0x3a00, "MEDIUM NOT PRESENT"},
	{scsi.MediumNotPresentTrayClosed, 0x3a01, "MEDIUM NOT PRESENT - TRAY CLOSED"},
	{scsi.MediumNotPresentTrayOpen, 0x3a02, "MEDIUM NOT PRESENT - TRAY OPEN"},
	{scsi.MediumNotPresentLoadable, 0x3a03, "MEDIUM NOT PRESENT - LOADABLE"},
	{scsi.SequentialPositioningError, 0x3b00, "SEQUENTIAL POSITIONING ERROR"},
	{scsi.TapePositionErrorAtBOM, 0x3b01, "TAPE POSITION ERROR AT BEGINNING-OF-MEDIUM"},
	{scsi.TapePositionErrorAtEOM, 0x3b02, "TAPE POSITION ERROR AT END-OF-MEDIUM"},
	{scsi.ReadPastEndOfMedium, 0x3b09, "READ PAST END OF MEDIUM"},
	{scsi.ReadPastBeginningOfMedium, 0x3b0a, "READ PAST BEGINNING OF MEDIUM"},
	{scsi.PositionPastEndOfMedium, 0x3b0b, "POSITION PAST END OF MEDIUM"},
	{scsi.PositionPastBeginningOfMedium, 0x3b0c, "POSITION PAST BEGINNING OF MEDIUM"},
	{scsi.MediumDestinationElementFull, 0x3b0d, "MEDIUM DESTINATION ELEMENT FULL"},
	{scsi.MediumSourceElementEmpty, 0x3b0e, "MEDIUM SOURCE ELEMENT EMPTY"},
	{scsi.EndOfMediumReached, 0x3b0f, "END OF MEDIUM REACHED"},
	{scsi.MediumMagazineRemoved, 0x3b12, "MEDIUM MAGAZINE REMOVED"},
	{scsi.MediumMagazineInserted, 0x3b13, "MEDIUM MAGAZINE INSERTED"},
	{scsi.LogicalUnitFailure, 0x3e01, "LOGICAL UNIT FAILURE"},
	{scsi.TimeoutOnLogicalUnit, 0x3e02, "TIMEOUT ON LOGICAL UNIT"},
	{scsi.TargetOperatingConditionsChanged, 0x3f00, "TARGET OPERATING CONDITIONS HAVE CHANGED"},
	{scsi.MicrocodeHasBeenChanged, 0x3f01, "MICROCODE HAS BEEN CHANGED"},
	{scsi.InquiryDataHasChanged, 0x3f03, "INQUIRY DATA HAS CHANGED"},
	{scsi.ReportedLUNsDataHasChanged, 0x3f0e, "REPORTED LUNS DATA HAS CHANGED"},
	{scsi.MediumLoadable, 0x3f10, "MEDIUM LOADABLE"},
	{scsi.InternalTargetFailure, 0x4400, "INTERNAL TARGET FAILURE"},
	{scsi.InvalidMessageError, 0x4900, "INVALID MESSAGE ERROR"},
	{scsi.CommandPhaseError, 0x4a00, "COMMAND PHASE ERROR"},
	{scsi.DataPhaseError, 0x4b00, "DATA PHASE ERROR"},
	{scsi.TooMuchWriteData, 0x4b02, "TOO MUCH WRITE DATA"},
	{scsi.OverlappedCommandsAttempted, 0x4e00, "OVERLAPPED COMMANDS ATTEMPTED"},
	{scsi.WriteAppendError, 0x5000, "WRITE APPEND ERROR"},
	{scsi.WriteAppendPositionError, 0x5001, "WRITE APPEND POSITION ERROR"},
	{scsi.PositionErrorRelatedToTiming, 0x5002, "POSITION ERROR RELATED TO TIMING"},
	{scsi.EraseFailure, 0x5100, "ERASE FAILURE"},
	{scsi.CartridgeFault, 0x5200, "CARTRIDGE FAULT"},
	{scsi.MediumLoadOrEjectFailed, 0x5300, "MEDIA LOAD OR EJECT FAILED"},
	{scsi.UnloadTapeFailure, 0x5301, "UNLOAD TAPE FAILURE"},
	{scsi.MediumRemovalPrevented, 0x5302, "MEDIUM REMOVAL PREVENTED"},
	{scsi.MediumRemovalPreventedByDTE, 0x5303, "MEDIUM REMOVAL PREVENTED BY DATA TRANSFER ELEMENT"},
	{scsi.SystemResourceFailure, 0x5500, "SYSTEM RESOURCE FAILURE"},
	{scsi.InsufficientResources, 0x5503, "INSUFFICIENT RESOURCES"},
	{scsi.InsufficientZoneResources, 0x550e, "INSUFFICIENT ZONE RESOURCES"},
	{scsi.OperatorMediumRemovalRequest, 0x5a01, "OPERATOR MEDIUM REMOVAL REQUEST"},
	{scsi.OperatorSelectedWriteProtect, 0x5a02, "OPERATOR SELECTED WRITE PROTECT"},
	{scsi.OperatorSelectedWritePermit, 0x5a03, "OPERATOR SELECTED WRITE PERMIT"},
	{scsi.LogException, 0x5b00, "LOG EXCEPTION"},
	{scsi.ThresholdConditionMet, 0x5b01, "THRESHOLD CONDITION MET"},
	{scsi.LogCounterAtMaximum, 0x5b02, "LOG COUNTER AT MAXIMUM"},
	{scsi.FailurePredictionThresholdExceeded, 0x5d00, "FAILURE PREDICTION THRESHOLD EXCEEDED"},
	{scsi.FailurePredictionFalse, 0x5dff, "FAILURE PREDICTION THRESHOLD EXCEEDED (FALSE)"},
	{scsi.LowPowerConditionOn, 0x5e00, "LOW POWER CONDITION ON"},
	{scsi.DecompressionExceptionLongAlgID, 0x7100, "DECOMPRESSION EXCEPTION LONG ALGORITHM ID"},
	{scsi.SecurityError, 0x7400, "SECURITY ERROR"},
	{scsi.UnableToDecryptData, 0x7401, "UNABLE TO DECRYPT DATA"},
	{scsi.UnencryptedDataWhileDecrypting, 0x7402, "UNENCRYPTED DATA ENCOUNTERED WHILE DECRYPTING"},
	{scsi.IncorrectDataEncryptionKey, 0x7403, "INCORRECT DATA ENCRYPTION KEY"},
}

func TestASCValues(t *testing.T) {
	for _, tt := range ascTable {
		if uint16(tt.got) != tt.want {
			t.Errorf("%s = %04x, asc-num.txt says %04x", tt.name, uint16(tt.got), tt.want)
		}
		if got := tt.got.Name(); got != tt.name {
			t.Errorf("ASC(%04x).Name() = %q, want %q", tt.want, got, tt.name)
		}
		if tt.got.Code() != uint8(tt.want>>8) || tt.got.Qualifier() != uint8(tt.want) {
			t.Errorf("ASC(%04x): Code/Qualifier = %02x/%02x", tt.want, tt.got.Code(), tt.got.Qualifier())
		}
	}
}

func TestASCNameUnknown(t *testing.T) {
	for _, a := range []scsi.ASC{0x0008, 0x2480, 0xffff, 0x3b1b} {
		if n := a.Name(); n != "" {
			t.Errorf("ASC(%04x).Name() = %q, want \"\" for a code without a constant", uint16(a), n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = scsi.InvalidFieldInCDB.Name() }); n != 0 {
		t.Errorf("ASC.Name allocates %v times", n)
	}
}

func TestASCString(t *testing.T) {
	for a, want := range map[scsi.ASC]string{
		0x0000: "0x00/0x00",
		0x2400: "0x24/0x00",
		0x3b0f: "0x3b/0x0f",
		0x5dff: "0x5d/0xff",
	} {
		if got := a.String(); got != want {
			t.Errorf("ASC(%04x).String() = %q, want %q", uint16(a), got, want)
		}
	}
}

func TestASCNameTable(t *testing.T) {
	if !scsi.ASCNamesSorted() {
		t.Fatal("ascNames is not strictly ascending: ASC.Name's binary search breaks")
	}
	// Every named code has a constant pinned above, and vice versa.
	if scsi.NumASCNames != len(ascTable) {
		t.Errorf("ascNames has %d entries, the pinned table %d", scsi.NumASCNames, len(ascTable))
	}
}

// The names of the commands a device serves come from one table: SSC's
// own bytes, service actions served as commands, and the generic name
// everywhere else.
func TestCommandSetNames(t *testing.T) {
	for _, tt := range []struct {
		cs    scsi.CommandSet
		op    scsi.OpCode
		sa    uint16
		hasSA bool
		want  string
	}{
		{scsi.SBC, scsi.StartStopUnit, 0, false, "start_stop_unit"},
		{scsi.SSC, scsi.LoadUnload, 0, false, "load_unload"},
		{scsi.SBC, scsi.FormatUnit, 0, false, "format_unit"},
		{scsi.SSC, scsi.FormatMedium, 0, false, "format_medium"},
		{scsi.SSC, scsi.ReadPosition, 0, false, "read_position"},
		{scsi.SBC, scsi.PreFetch10, 0, false, "pre_fetch_10"},
		{scsi.SSC, scsi.Space16, 0, false, "space_16"},
		{scsi.SSC, scsi.Erase16, 0, false, "erase_16"},
		{scsi.SSC, scsi.Rewind, 0, false, "rewind"},
		{scsi.SSC, scsi.Read6, 0, false, "read_6"},
		{scsi.SSC, scsi.ReadBuffer, 0, false, "read_buffer_10"},
		{scsi.SBC, scsi.ServiceActionIn16, scsi.SAReadCapacity16, true, "read_capacity_16"},
		{scsi.SBC, scsi.ServiceActionIn16, 0x1f, true, "service_action_in_16"},
		{scsi.SBC, scsi.MaintenanceIn, scsi.SAReportSupportedOpCodes, true, "report_supported_opcodes"},
		{scsi.SSC, scsi.MaintenanceIn, scsi.SAReportSupportedOpCodes, true, "report_supported_opcodes"},
		{scsi.SSC, scsi.MaintenanceIn, scsi.SAReportSupportedOpCodes, false, "maintenance_in"},
		{scsi.SSC, scsi.MaintenanceOut, scsi.SASetTimestamp, true, "set_timestamp"},
		{scsi.SMC, scsi.InitElementStatus, 0, false, "initialize_element_status"},
		{scsi.SMC, scsi.OpenCloseImportExport, 0, false, "open_close_import_export_element"},
		{scsi.SBC, scsi.ReassignBlocks, 0, false, "reassign_blocks"},
		{scsi.SMC, scsi.PositionToElement, 0, false, "position_to_element"},
		{scsi.SSC, scsi.Locate10, 0, false, "locate_10"},
		{scsi.SMC, scsi.InitElemStatusRange, 0, false, "initialize_element_status_with_range"},
		{scsi.SMC, scsi.MoveMedium, 0, false, "move_medium"},
		{scsi.SMC, scsi.ReadElementStatus, 0, false, "read_element_status"},
	} {
		if got := tt.cs.CommandName(tt.op, tt.sa, tt.hasSA); got != tt.want {
			t.Errorf("%s.CommandName(%#02x, %#02x, %v) = %q, want %q", tt.cs, uint8(tt.op), tt.sa, tt.hasSA, got, tt.want)
		}
	}
	// Outside SSC's own bytes, both sets use the generic name.
	for op := range 256 {
		o := scsi.OpCode(op)
		if scsi.SBC.Name(o) != o.String() {
			t.Errorf("SBC name of %#02x is %q, generic %q", op, scsi.SBC.Name(o), o.String())
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = scsi.SSC.CommandName(scsi.MaintenanceIn, scsi.SAReportSupportedOpCodes, true) }); n != 0 {
		t.Errorf("CommandName allocates %v times", n)
	}
}
