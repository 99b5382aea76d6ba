package metrics

import "github.com/prometheus/client_golang/prometheus"

// Namespace is the first component of every metric name: the daemon.
const Namespace = "vscsi"

// Subsystems.
const (
	subDevice = "device"
	subSCSI   = "scsi"
	subRing   = "ring"
	subDisk   = "disk"
	subTape   = "tape"
	subChgr   = "changer"
	subFault  = "fault"
)

// Label names. Every label value is bounded: device by the configured LUNs,
// command by the handlers' command tables (scsi.Table), sense_key by SPC (16), asc by
// ascNames, direction, capability, tmr, event, from, to and outcome by
// fixed lists here and in tape/changer, rule
// by fault.MaxRules per device (IDs of removed rules vanish with them) and
// action by the fault rule grammar.
const (
	lDevice     = "device"
	lType       = "type"
	lSubtype    = "subtype"
	lHBA        = "hba"
	lUIO        = "uio"
	lVendor     = "vendor"
	lProduct    = "product"
	lRevision   = "revision"
	lCommand    = "command"
	lSenseKey   = "sense_key"
	lASC        = "asc"
	lDirection  = "direction"
	lCapability = "capability"
	lTMR        = "tmr"
	lMode       = "mode"
	lBarcode    = "barcode"
	lEvent      = "event"
	lRule       = "rule"
	lAction     = "action"
	lFrom       = "from"
	lFabric     = "fabric"
	lTo         = "to"
	lOutcome    = "outcome"
)

// otherCommand is the command label of commands the handler does not name.
const otherCommand = "other"

// Directions: the values of the direction label.
const (
	dirRead  = "read"
	dirWrite = "write"
)

func desc(sub, name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(Namespace, sub, name), help, labels, nil)
}

// The metric table: the single source of truth for names, types (by the
// constructor the collector uses), help and labels. metrics/README.md
// documents the same list; TestREADME keeps them in step.
var (
	// Devices.
	descDevices = prometheus.NewDesc(Namespace+"_devices",
		"Number of devices served, by SCSI peripheral type.", []string{lType}, nil)
	descDeviceInfo = desc(subDevice, "info",
		"Constant 1, labelled with a device's identity: peripheral type, TCMU handler subtype, HBA, uio device and INQUIRY identification.",
		lDevice, lType, lSubtype, lHBA, lUIO, lVendor, lProduct, lRevision)
	descDeviceFailed = desc(subDevice, "failed",
		"1 if the device stopped serving on a fault (ring corruption, handler panic, uio error); its commands then time out in the kernel.", lDevice)
	descExportedLUNs = desc(subDevice, "exported_luns",
		"LUNs that export the device, by LIO fabric (its configfs directory: loopback for tcm_loop, iscsi, ...); fabrics without one are not reported.", lDevice, lFabric)
	descBlockSize = desc(subDevice, "block_size_bytes",
		"TCMU attrib/hw_block_size of the device.", lDevice)
	descCmdTimeOut = desc(subDevice, "command_timeout_seconds",
		"TCMU attrib/cmd_time_out: how long the kernel waits for a command before failing it with NOT READY 08/00 (0: never).", lDevice)

	// SCSI commands, as the transport saw them.
	descCommands = desc(subSCSI, "commands_total",
		"SCSI commands completed, by command (the handler's name for it, after its service action where it has one; \"other\" for unsupported ones).", lDevice, lCommand)
	descCommandDuration = desc(subSCSI, "command_duration_seconds",
		"Time the handler spent on a command, from pickup from the ring to completion.", lDevice, lCommand)
	descCommandCheckConditions = desc(subSCSI, "command_check_conditions_total",
		"Commands completed with CHECK CONDITION, by command.", lDevice, lCommand)
	descCheckConditions = desc(subSCSI, "check_conditions_total",
		"Commands completed with CHECK CONDITION, by sense key.", lDevice, lSenseKey)
	descSenseCodes = desc(subSCSI, "sense_codes_total",
		"Commands completed with CHECK CONDITION, by additional sense code (a fixed set of names; others are \"other\").", lDevice, lASC)
	descUnitAttentions = desc(subSCSI, "unit_attentions_total",
		"CHECK CONDITIONs with sense key UNIT ATTENTION (reset, medium change, mode parameters changed).", lDevice)
	descTransferSize = desc(subSCSI, "transfer_bytes",
		"Data bytes moved per command, by direction (read: Data-In to the initiator; write: Data-Out from it). Commands without data are not observed.", lDevice, lDirection)
	descReadBytes = desc(subSCSI, "read_bytes_total",
		"Data-In bytes returned to the initiator.", lDevice)
	descWrittenBytes = desc(subSCSI, "written_bytes_total",
		"Data-Out bytes taken from the initiator.", lDevice)
	descSegments = desc(subSCSI, "data_segments",
		"Data segments (iovecs of the TCMU data area) per command, as the kernel delivered them.", lDevice)

	// TCMU ring.
	descInFlight = desc(subRing, "inflight_commands",
		"Commands taken from the ring and not yet completed.", lDevice)
	descBatch = desc(subRing, "batch_commands",
		"Commands found queued in the ring at each wakeup; large batches mean the kernel queued faster than the device served.", lDevice)
	descWakeups = desc(subRing, "wakeups_total",
		"Wakeups by the kernel's uio notification.", lDevice)
	descPolls = desc(subRing, "polls_total",
		"Polls of the empty ring after serving (ring_poll), by outcome: found (the kernel queued a command within the window: a wake-up saved) or expired (the device then blocked).", lDevice, lOutcome)
	descPollSeconds = desc(subRing, "poll_seconds_total",
		"Time spent polling the empty ring (ring_poll): CPU time the device's thread spent spinning.", lDevice)
	descKicks = desc(subRing, "kicks_total",
		"Completion notifications written to the uio device.", lDevice)
	descHighWater = desc(subRing, "high_water_bytes",
		"Most command ring bytes ever found queued at once; near vscsi_ring_command_area_bytes, the kernel probably held commands back.", lDevice)
	descCommandArea = desc(subRing, "command_area_bytes",
		"Size of the TCMU command ring (mailbox cmdr_size).", lDevice)
	descDataArea = desc(subRing, "data_area_bytes",
		"Size of the TCMU data area (max_data_area_mb): the largest data transfer one command can have.", lDevice)
	descCapability = desc(subRing, "capability",
		"1 if the kernel offers the ring capability (TCMU_MAILBOX_FLAG_CAP_*), else 0.", lDevice, lCapability)
	descWorkers = desc(subRing, "workers",
		"Commands served concurrently (1: one at a time in ring order).", lDevice)
	descTMRs = desc(subRing, "task_management_requests_total",
		"Task management requests (ABORT TASK, LUN RESET, ...) the kernel put in the ring, by type.", lDevice, lTMR)
	descAborted = desc(subRing, "aborted_commands_total",
		"Commands completed as aborted without running because a task management request listed them.", lDevice)
	descAbortedRunning = desc(subRing, "aborted_running_commands_total",
		"Commands a task management request aborted while their handler ran, given up early by the handler (a held fault rule).", lDevice)
	descUnknownEntries = desc(subRing, "unknown_entries_total",
		"Ring entries with an unknown opcode, skipped and flagged UNKNOWN_OP.", lDevice)
	descPads = desc(subRing, "pad_entries_total",
		"PAD entries (ring wrap-arounds).", lDevice)
	descZeroFilled = desc(subRing, "zero_filled_bytes_total",
		"Data-In bytes zeroed because the handler left them unwritten and the kernel cannot take a short read length.", lDevice)
	descZeroFill = desc(subRing, "zero_fill_bytes_total",
		"Data-In zero fills of the handler (fake_rw READs): bytes written, and bytes skipped because their data-area pages were known to hold zeros already.", lDevice, "outcome")
	descBadSense = desc(subRing, "sense_replaced_total",
		"CHECK CONDITIONs without sense data from the handler, replaced by HARDWARE ERROR 44/00 (a handler bug).", lDevice)
	descBidi = desc(subRing, "bidi_rejected_commands_total",
		"Bidirectional commands refused.", lDevice)
	descTraceLost = desc(subRing, "trace_lost_records_total",
		"Trace records dropped because a reader (vscsictl trace) fell behind; the device was not slowed.", lDevice)

	// Disks.
	descDiskInfo = desc(subDisk, "info",
		"Constant 1, labelled with the disk's data mode (fake_rw: reads return zeros, writes are discarded; store: RAM).", lDevice, lMode)
	descDiskCapacity = desc(subDisk, "capacity_bytes",
		"Capacity reported by READ CAPACITY.", lDevice)
	descLogicalBlock = desc(subDisk, "logical_block_size_bytes",
		"Logical block size.", lDevice)
	descPhysicalBlock = desc(subDisk, "physical_block_size_bytes",
		"Physical block size (logical block size times 2^LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT).", lDevice)
	descMisaligned = desc(subDisk, "misaligned_commands_total",
		"READ and WRITE commands whose start or length is not a multiple of the physical block.", lDevice, lDirection)
	descStoreSize = desc(subDisk, "store_size_bytes",
		"Size of the RAM store (0 in fake_rw mode).", lDevice)
	descStoreAllocated = desc(subDisk, "store_allocated_bytes",
		"RAM store bytes allocated by writes.", lDevice)
	descWriteProtected = desc(subDisk, "write_protected",
		"1 if the disk is write protected.", lDevice)
	descWriteCache = desc(subDisk, "write_cache_enabled",
		"1 if the caching mode page has WCE set.", lDevice)
	descStopped = desc(subDisk, "stopped",
		"1 if START STOP UNIT stopped the disk.", lDevice)

	// Tape drives.
	descLoaded = desc(subTape, "medium_loaded",
		"1 if a cartridge is loaded and ready, else 0.", lDevice)
	descMediumInfo = desc(subTape, "medium_info",
		"Constant 1 while a cartridge is loaded, labelled with its barcode.", lDevice, lBarcode)
	descLoadTime = desc(subTape, "medium_load_timestamp_seconds",
		"Unix time the loaded cartridge was loaded.", lDevice)
	descUsed = desc(subTape, "medium_used_bytes",
		"Bytes on the loaded cartridge, all partitions.", lDevice)
	descCapacity = desc(subTape, "medium_capacity_bytes",
		"Native capacity of the loaded cartridge, all partitions.", lDevice)
	descPartition = desc(subTape, "position_partition",
		"Current partition of the loaded cartridge.", lDevice)
	descFile = desc(subTape, "position_file",
		"Filemarks between the beginning of the partition and the current position.", lDevice)
	descObject = desc(subTape, "position_object",
		"Logical object number (blocks and marks from the beginning of the partition) of the current position.", lDevice)
	descFilemarksWritten = desc(subTape, "filemarks_written_total",
		"Filemarks written by WRITE FILEMARKS.", lDevice)
	descEarlyWarnings = desc(subTape, "early_warnings_total",
		"Writes answered with the early-warning end-of-medium indication.", lDevice)
	descTapeData = desc(subTape, "data_bytes_total",
		"Data bytes of READ and WRITE commands, by direction (read: to the initiator; write: from it): the logical blocks.", lDevice, lDirection)
	descTapeMedium = desc(subTape, "medium_bytes_total",
		"Data bytes READ took from the medium and WRITE put on it, by direction, after compression: vscsi_tape_data_bytes_total over this is the compression ratio.", lDevice, lDirection)
	descTapeEncrypted = desc(subTape, "encrypted_bytes_total",
		"Data bytes of READ and WRITE commands, by direction, that were encrypted on the medium (read: decrypted for the initiator; write: encrypted with the key the host set).", lDevice, lDirection)
	descCleanings = desc(subTape, "cleanings_total",
		"Cleanings done by a cleaning cartridge (barcode CLN...).", lDevice)
	descCleanNow = desc(subTape, "cleaning_requested",
		"1 while the drive asks to be cleaned (TapeAlert flag 20, Clean Now), else 0.", lDevice)
	descTapeEvents = desc(subTape, "events_total",
		"Reads and positioning commands stopped by a condition (ili: incorrect length; filemark; end_of_data: blank check; beginning_of_partition).", lDevice, lEvent)

	// Media changers (libraries).
	descChangerMoves = desc(subChgr, "moves_total",
		"Cartridge moves (MOVE MEDIUM and the operator's), by source and destination element type (storage, mail, drive) and outcome (ok; refused: ILLEGAL REQUEST such as source empty or destination full; failed: HARDWARE ERROR).", lDevice, lFrom, lTo, lOutcome)
	descChangerMoveSeconds = desc(subChgr, "move_seconds_total",
		"Time spent in the moves of vscsi_changer_moves_total (drive load or unload and the inventory's crash-safe save), same labels.", lDevice, lFrom, lTo, lOutcome)
	descChangerElements = desc(subChgr, "elements",
		"Elements of the library by type (transport, storage, mail, drive).", lDevice, lType)
	descChangerFull = desc(subChgr, "elements_full",
		"Elements that hold a cartridge, by type.", lDevice, lType)
	descChangerImports = desc(subChgr, "imports_total",
		"Cartridges the operator put into a mail slot (vscsictl library import).", lDevice)
	descChangerExports = desc(subChgr, "exports_total",
		"Cartridges the operator took out of a mail slot (vscsictl library export).", lDevice)

	// Fault injection (fault).
	descFaultMatched = desc(subFault, "matched_total",
		"Commands that passed an installed fault rule's filter, by rule ID and action.", lDevice, lRule, lAction)
	descFaultInjected = desc(subFault, "injected_total",
		"Times an installed fault rule applied its action, by rule ID and action.", lDevice, lRule, lAction)
	descFaultDelay = desc(subFault, "delay_seconds",
		"Delay added to each delayed command by delay rules and timing models, as slept (after the cmd_time_out cap).", lDevice)
	descFaultClamped = desc(subFault, "delay_clamped_total",
		"Injected delays cut to the kernel's cmd_time_out so that the kernel does not abort the command.", lDevice)
	descFaultHeld = desc(subFault, "held_total",
		"Commands a timeout rule held without completing them (the kernel times them out).", lDevice)
	descFaultInterrupted = desc(subFault, "delay_interrupted_total",
		"Injected delays cut short because the device stopped.", lDevice)
)

// allDescs is what Describe sends.
var allDescs = []*prometheus.Desc{
	descDevices, descDeviceInfo, descDeviceFailed, descExportedLUNs, descBlockSize, descCmdTimeOut,
	descCommands, descCommandDuration, descCommandCheckConditions, descCheckConditions,
	descSenseCodes, descUnitAttentions, descTransferSize, descReadBytes, descWrittenBytes,
	descSegments,
	descInFlight, descBatch, descWakeups, descPolls, descPollSeconds, descKicks, descHighWater,
	descCommandArea, descDataArea, descCapability, descWorkers, descTMRs, descAborted, descAbortedRunning,
	descUnknownEntries, descPads, descZeroFilled, descZeroFill, descBadSense, descBidi, descTraceLost,
	descDiskInfo, descDiskCapacity, descLogicalBlock, descPhysicalBlock, descMisaligned,
	descStoreSize, descStoreAllocated, descWriteProtected, descWriteCache, descStopped,
	descLoaded, descMediumInfo, descLoadTime, descUsed, descCapacity, descPartition,
	descFile, descObject, descFilemarksWritten, descEarlyWarnings, descTapeData, descTapeMedium, descTapeEncrypted, descCleanings, descCleanNow, descTapeEvents,
	descChangerMoves, descChangerMoveSeconds, descChangerElements, descChangerFull, descChangerImports, descChangerExports,
	descFaultMatched, descFaultInjected, descFaultDelay, descFaultClamped, descFaultHeld,
	descFaultInterrupted,
}

// senseKeyNames are the sense_key label values (SPC-5 table 48), indexed
// by sense key. All 16 are exported from the start, at 0.
var senseKeyNames = [16]string{
	"no_sense", "recovered_error", "not_ready", "medium_error",
	"hardware_error", "illegal_request", "unit_attention", "data_protect",
	"blank_check", "vendor_specific", "copy_aborted", "aborted_command",
	"equal", // 0Ch: obsolete (EQUAL in SPC-2)
	"volume_overflow", "miscompare", "completed",
}

// ascNames are the asc label values. A code (ASC<<8 | ASCQ) is looked up
// exactly first, then as ASC<<8 | 0xff (any qualifier of that ASC); codes
// in neither are "other". Names follow the T10 ASC/ASCQ list (SPC-5 annex
// F), shortened to snake_case. Tape indications (ASC 00h) are kept apart,
// the rest grouped by ASC.
var ascNames = map[uint16]string{
	0x0000: "no_additional_sense_information",
	0x0001: "filemark_detected",
	0x0002: "end_of_partition_medium_detected",
	0x0003: "setmark_detected",
	0x0004: "beginning_of_partition_medium_detected",
	0x0005: "end_of_data_detected",
	0x04ff: "logical_unit_not_ready",
	0x08ff: "logical_unit_communication_failure",
	0x0cff: "write_error",
	0x10ff: "logical_block_guard_check_failed",
	0x11ff: "unrecovered_read_error",
	0x14ff: "recorded_entity_not_found",
	0x1aff: "parameter_list_length_error",
	0x20ff: "invalid_command_operation_code",
	0x21ff: "logical_block_address_out_of_range",
	0x24ff: "invalid_field_in_cdb",
	0x25ff: "logical_unit_not_supported",
	0x26ff: "invalid_field_in_parameter_list",
	0x27ff: "write_protected",
	0x28ff: "not_ready_to_ready_change",
	0x29ff: "power_on_reset_or_bus_device_reset",
	0x2aff: "parameters_changed",
	0x30ff: "incompatible_medium_installed",
	0x3aff: "medium_not_present",
	0x3bff: "sequential_positioning_error",
	0x44ff: "internal_target_failure",
	0x53ff: "media_load_or_eject_failed",
	0x55ff: "system_resource_failure",
}

const otherASC = "other"

func ascName(code uint16) string {
	if n, ok := ascNames[code]; ok {
		return n
	}
	if n, ok := ascNames[code|0xff]; ok {
		return n
	}
	return otherASC
}

// tmrTypes are the TMR types exported from the start, at 0 (the names of
// tcmu.TMRType.String()).
var tmrTypes = []string{
	"abort_task", "abort_task_set", "clear_aca", "clear_task_set", "lun_reset",
	"target_warm_reset", "target_cold_reset", "lun_reset_pro", "unknown",
}

// Tape events: the values of the event label.
const (
	eventILI      = "ili"
	eventFilemark = "filemark"
	eventEOD      = "end_of_data"
	eventBOP      = "beginning_of_partition"
)
