package metrics

import (
	"time"

	"github.com/vscsid/vscsid/internal/stat"
)

// This file is the contract between the collector and whatever produces the
// numbers (target, disk and tape, through a small adapter in cmd/vscsid).
// The types are plain values that mirror the producers' snapshot structs, so
// that package metrics imports none of them: the adapter copies fields.

// A Source returns a snapshot of every device at scrape time. Devices is
// called once per scrape, possibly from several goroutines at once (one per
// concurrent scrape); it must be safe for that and must not block for long.
// The collector does not retain the returned slice.
type Source interface {
	Devices() []Device
}

// SourceFunc adapts a function to the Source interface.
type SourceFunc func() []Device

// Devices returns f().
func (f SourceFunc) Devices() []Device { return f() }

// Device types: the values of the `type` label.
const (
	TypeDisk    = "disk"
	TypeTape    = "tape"
	TypeChanger = "changer"
)

// Export is how many LUNs of one LIO fabric export a device.
type Export struct {
	Fabric string // configfs fabric directory: loopback (tcm_loop), iscsi, ...
	LUNs   int
}

// Device is a point-in-time view of one device.
type Device struct {
	// Name is the `device` label: unique among the devices of one
	// snapshot (the collector reports a duplicate as a scrape error and
	// drops it). The configfs storage object name, e.g. "disk0".
	Name string
	// Type is TypeDisk, TypeTape or TypeChanger (the SCSI peripheral type).
	Type string
	// Subtype is the TCMU handler subtype of the dev_config ("vdisk").
	Subtype string
	// HBA is N of target/core/user_N.
	HBA int
	// UIO is the uio device name ("uio0"), "" if unknown.
	UIO string
	// Vendor, Product and Revision are the standard INQUIRY identification
	// (T10 vendor, product, revision), "" if unknown.
	Vendor, Product, Revision string

	// Failed reports that the device stopped serving on a fault.
	Failed bool
	// Exports are the LUNs that export the device, by fabric.
	Exports []Export

	Transport Transport
	Ring      Ring

	// Disk is set for disks, Tape for tape drives, Changer for media
	// changers (libraries).
	Disk    *Disk
	Tape    *Tape
	Changer *Changer

	// Fault is set for devices served through a fault injector
	// (target/fault); nil exports no vscsi_fault_* series.
	Fault *Fault
}

// Command is the statistics of one operation code (target.CommandStats).
type Command struct {
	// Name is the handler's name for the opcode (target.CommandNamer),
	// "" if it has none: such commands are reported as command="other".
	// Entries with the same name are added up.
	Name            string
	Count           uint64
	CheckConditions uint64
	Duration        stat.Histogram // seconds
}

// Transfer is the statistics of one data direction (target.TransferStats).
type Transfer struct {
	Commands uint64
	Bytes    uint64
	Size     stat.Histogram // bytes per command
}

// SenseCode counts CHECK CONDITIONs by additional sense code. Code is
// ASC<<8 | ASCQ; a producer that counts by ASC only passes ASCQ 0.
type SenseCode struct {
	Code  uint16
	Count uint64
}

// TMR counts task management requests of one type (target.TMRCount).
type TMR struct {
	// Type is the TMR type name as target.TMRType.String() gives it
	// ("abort_task", "lun_reset", ...).
	Type  string
	Count uint64
}

// Transport is what the TCMU transport measured (target.DeviceStats).
type Transport struct {
	Commands        []Command
	CheckConditions [16]uint64 // by sense key
	// SenseCodes, when not nil, break CHECK CONDITIONs down by ASC/ASCQ.
	SenseCodes     []SenseCode
	UnitAttentions uint64
	Read, Write    Transfer       // Transfers[DirRead], Transfers[DirWrite]
	Segments       stat.Histogram // data segments (iovecs) per command
	Batch          stat.Histogram // commands found per wakeup
	Wakeups        uint64
	Kicks          uint64
	InFlight       int64
	RingHighWater  uint32 // most command ring bytes ever found queued
	// RingFull, when not nil, counts the times the ring was found too full
	// for another command (the kernel then holds commands in its qfull
	// queue).
	RingFull *uint64
	TMRs     []TMR
	Aborted  uint64
	// AbortedRunning counts commands aborted while their handler ran
	// and given up early by it (a held fault rule).
	AbortedRunning  uint64
	UnknownEntries  uint64
	Pads            uint64
	ZeroFilledBytes uint64
	// Handler zero fills: bytes written, and bytes skipped because their
	// data-area pages were known to be zero.
	ZeroFillWritten, ZeroFillSkipped uint64
	BadSense                         uint64
	BidiRejected                     uint64
}

// Ring capabilities (TCMU_MAILBOX_FLAG_CAP_*), the values of the
// `capability` label.
const (
	CapOOOC    = "oooc"
	CapReadLen = "read_len"
	CapTMR     = "tmr"
	CapKeepBuf = "keep_buf"
)

// Ring is the TCMU limits in force for a device (target.RingInfo plus the
// configfs attributes).
type Ring struct {
	CommandRingBytes uint64 // cmdr_size
	DataAreaBytes    uint64 // max_data_area_mb, in bytes: the largest transfer
	// OOOC, ReadLen, TMR and KeepBuf are the mailbox capabilities.
	OOOC, ReadLen, TMR, KeepBuf bool
	Workers                     int // commands served concurrently (1 = in ring order)
	// BlockSize is attrib/hw_block_size, in bytes (0: unknown, not exported).
	BlockSize uint32
	// CmdTimeOut is attrib/cmd_time_out (0: the kernel never times out a
	// command); nil: unknown, not exported.
	CmdTimeOut *time.Duration
}

// Disk is a disk's geometry and counters (disk.Stats).
type Disk struct {
	Mode              string // disk.Mode.String(): "fake_rw" or "store"
	Blocks            uint64 // capacity in logical blocks
	LogicalBlockSize  uint32
	PhysicalBlockSize uint32
	StoreSize         int64 // RAM store bytes (0 in fake_rw mode)
	StoreAllocated    int64
	WriteProtect      bool
	WriteCache        bool
	Stopped           bool
	MisalignedReads   uint64
	MisalignedWrites  uint64
}

// Tape is a tape drive's state and counters (tape.Stats).
type Tape struct {
	Loaded   bool
	Barcode  string
	LoadTime time.Time
	// Position, meaningful when Loaded.
	Partition int
	Object    uint64
	File      uint64
	// Cartridge fill, all partitions, meaningful when Loaded.
	UsedBytes     int64
	CapacityBytes int64

	FilemarksWritten uint64
	EarlyWarnings    uint64
	Cleanings        uint64 // cleanings done by a cleaning cartridge
	CleanNow         bool   // the drive asks for cleaning (TapeAlert flag 20)
	ILIEvents        uint64
	FilemarkEvents   uint64
	EODEvents        uint64
	BOPEvents        uint64
}

// Changer is a media changer's moves and occupancy (changer.Stats).
type Changer struct {
	// Moves has one entry per source type, destination type and outcome.
	Moves []ChangerMove
	// Elements are the element counts and the full elements by type
	// (transport, storage, mail, drive: changer.ElementType's names).
	Elements []ChangerElements
	Imports  uint64
	Exports  uint64
}

// ChangerMove counts the moves from one element type to another with one
// outcome (ok, refused, failed) and the seconds they took.
type ChangerMove struct {
	From, To, Outcome string
	Count             uint64
	Seconds           float64
}

// ChangerElements is how many elements of a type a changer has and how
// many hold a cartridge.
type ChangerElements struct {
	Type        string
	Count, Full int
}

// Fault is a device's fault injection: its installed rules and what the
// injector did (fault.Device.Injected and fault.Device.Stats).
type Fault struct {
	// Rules are the installed rules, in evaluation order. A removed rule
	// disappears with its series; IDs are never reused, so its counters
	// never restart under the same labels.
	Rules []FaultRule
	// Delays is the delay added to each delayed command (delay= rules and
	// timing models), in seconds, as slept.
	Delays stat.Histogram
	// Clamped counts delays cut to the kernel's cmd_time_out.
	Clamped uint64
	// Held counts commands a timeout rule held (never completed until the
	// kernel aborted them).
	Held uint64
	// Interrupted counts delays cut short because the device stopped.
	Interrupted uint64
}

// FaultRule is one installed rule (fault.RuleStats).
type FaultRule struct {
	// ID is the rule's identifier on its device, unique and never
	// reused: the `rule` label, as a decimal number.
	ID uint64
	// Action is the rule's action name (fault.Rule.Action()): the
	// `action` label.
	Action   string
	Matched  uint64 // commands that passed the rule's filter
	Injected uint64 // times the action was applied
	Spent    bool   // a count= rule has used up its count
}
