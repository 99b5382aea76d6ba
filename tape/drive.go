package tape

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/internal/cfgstring"
	"github.com/vscsid/vscsid/scsi"
)

// Drive is an emulated SSC tape drive: one logical unit that satisfies
// target.Handler (HandleCommand) and scsi.CommandNamer (CommandName).
//
// Concurrency: the transport delivers commands one at a time in ring order
// and the drive relies on it (tape positioning is sequential). Load,
// Unload, Reset and Close may be called from any goroutine; a mutex
// serialises them with HandleCommand. Stats and CommandName may be called
// at any time, concurrently with everything else (Stats reads atomics).
//
// Timing: every command, including REWIND, SPACE to end of data, ERASE and
// FORMAT MEDIUM, completes before HandleCommand returns, so nothing runs in
// the background and IMMED bits only affect whether WRITE FILEMARKS syncs.
// Positioning walks the medium's index object by object (SPACE over
// filemarks, LOCATE to a file) or jumps (LOCATE to an object, SPACE to
// EOD), which is far inside TCMU's cmd_time_out (30 s by default) for any
// realistic cartridge.
type Drive struct {
	name string
	cfg  Config
	pers Personality // a copy: the generic density's capacity is set from cfg
	lib  Library
	log  *zap.Logger

	mu          sync.Mutex
	closed      bool
	closedState Snapshot     // what Close found (ClosedState)
	persist     *persistence // nil unless opened with Open over a PersistentLibrary
	spc         scsi.SPC
	mode        modeState

	state   readiness
	med     Medium
	ra      io.ReaderAt // med, converted once at load
	info    MediumInfo  // med.Info(), refreshed after FORMAT MEDIUM
	barcode string
	prevent bool
	faulted bool // a device fault was logged at Error level for this cartridge
	vcrDone bool // VOLUME CHANGE REFERENCE bumped for this mount

	clean           *cleaning // a cleaning in progress (the drive is empty meanwhile)
	alerts          uint64    // TapeAlert flags set, flag n at bit n-1
	loadsSinceClean int       // data cartridge loads since the last cleaning

	buf []byte // parameter data scratch (Data-In built here, reused)

	st driveStats
	// table is the command table of the model: driveCommands, or
	// plainDriveCommands without encryption.
	table *scsi.Table[*Drive]
	crypt cryptState // data encryption parameters (encryption.go)
	// logBase is the byte counters as of the load or the last LOG SELECT
	// reset: the log pages count from there.
	logBase byteCounts
}

// byteCounts are the data byte counters of driveStats at one moment.
type byteCounts struct{ read, written, mediumRead, mediumWritten uint64 }

func (s *driveStats) bytes() byteCounts {
	return byteCounts{s.readBytes.Load(), s.writtenBytes.Load(), s.mediumRead.Load(), s.mediumWritten.Load()}
}

// driveStats are updated by the command path with atomic stores and adds
// and read by Stats from any goroutine.
type driveStats struct {
	loaded                         atomic.Bool
	partition                      atomic.Int64
	object, file                   atomic.Uint64
	used, capacity                 atomic.Int64
	filemarks, earlyWarnings, ili  atomic.Uint64
	fmEvents, eodEvents, bopEvents atomic.Uint64
	// Data bytes of READ and WRITE: to and from the initiator (host), and
	// from and to the medium (after compression): the drive's lifetime
	// counters, which the log pages show since the load (logBase).
	readBytes, writtenBytes   atomic.Uint64
	mediumRead, mediumWritten atomic.Uint64
	decrypted, encrypted      atomic.Uint64 // logical bytes of encrypted blocks read and written
	cleanings                 atomic.Uint64
	cleanNow                  atomic.Bool // TapeAlert flag 20 is set
	mu                        sync.Mutex  // barcode and loadTime change on load/unload only
	barcode                   string
	loadTime                  time.Time
}

// Stats is a snapshot of a drive's state and counters for metrics.
type Stats struct {
	Loaded        bool      // a cartridge is loaded and ready
	Barcode       string    // of the cartridge in the drive, "" if none
	LoadTime      time.Time // when it was loaded
	Partition     int       // current position
	Object        uint64    // logical object number (blocks and marks from BOP)
	File          uint64    // filemarks before the position
	UsedBytes     int64     // bytes on the cartridge (all partitions)
	CapacityBytes int64     // native capacity of the cartridge (all partitions)

	FilemarksWritten uint64 // by WRITE FILEMARKS
	EarlyWarnings    uint64 // writes answered with early-warning EOM
	ILIEvents        uint64 // reads answered with ILI (incorrect length)
	FilemarkEvents   uint64 // reads and spaces stopped by a filemark or setmark
	EODEvents        uint64 // reads, spaces and locates stopped by end of data (BLANK CHECK)
	BOPEvents        uint64 // backward spaces stopped by beginning of partition
	Cleanings        uint64 // cleanings completed
	CleanNow         bool   // the drive asks for cleaning (TapeAlert flag 20)

	// Data bytes of READ and WRITE commands: to and from the initiator,
	// and from and to the medium (after compression; their ratio is the
	// compression ratio).
	ReadBytes, WrittenBytes             uint64
	MediumReadBytes, MediumWrittenBytes uint64
	// DecryptedBytes and EncryptedBytes are the part of ReadBytes and
	// WrittenBytes that was encrypted on the medium.
	DecryptedBytes, EncryptedBytes uint64
}

// New returns a drive named name (the device name, used for the default
// serial number and in logs). lib opens cartridges by barcode; it may be
// nil when cfg.Memory is set, and the drive then keeps cartridges in RAM.
// If cfg.Barcode is set, that cartridge is loaded before New returns.
func New(name string, cfg Config, lib Library, log *zap.Logger) (*Drive, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("vtape %s: %w", name, err)
	}
	if log == nil {
		log = zap.NewNop()
	}
	p, _ := LookupPersonality(cfg.Personality)
	d := &Drive{name: name, cfg: cfg, pers: *p, log: log}
	d.pers.Densities = slices.Clone(p.Densities)
	if cfg.Memory && d.pers.Name == "generic" {
		d.pers.Densities[len(d.pers.Densities)-1].CapacityMB = uint32(cfg.Capacity / 1e6)
	}
	if lib == nil {
		if !cfg.Memory {
			return nil, fmt.Errorf("vtape %s: no cartridge library for media %q", name, cfg.Media)
		}
		ml, err := NewMemoryLibrary(d.memoryTemplate())
		if err != nil {
			return nil, fmt.Errorf("vtape %s: %w", name, err)
		}
		lib = ml
	}
	d.lib = lib
	d.mode = defaultModes(&d.pers, cfg)
	d.initSPC()
	d.spc.UA.Add(scsi.PowerOnResetOrBusDeviceReset) // power on
	d.buf = make([]byte, 0, 4096)
	if cfg.Barcode != "" {
		if err := d.Load(cfg.Barcode); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// memoryTemplate describes the cartridges a memory=1 drive creates.
func (d *Drive) memoryTemplate() MediumInfo {
	return MediumInfo{
		Density:        d.pers.DefaultDensity().Code,
		WriteProtected: d.cfg.WriteProtect,
		WORM:           d.cfg.WORM,
		Partitions:     1,
		Capacity:       []int64{d.cfg.Capacity},
		EarlyWarning:   []int64{d.cfg.EarlyWarning},
	}
}

// UnitSerial is the unit serial number of VPD page 80h (the transport
// gives the backstore the same one).
func (d *Drive) UnitSerial() string { return d.serial() }

// UnitIdentity is the standard INQUIRY identification (set at New, read
// only after).
func (d *Drive) UnitIdentity() scsi.Identity { return d.spc.Identity }

// serial returns the configured or derived unit serial number.
func (d *Drive) serial() string {
	if d.cfg.Serial != "" {
		return d.cfg.Serial
	}
	h := fnv.New64a()
	h.Write([]byte(d.name))
	return fmt.Sprintf("%010d", h.Sum64()%1e10)
}

// naa returns the NAA 5h designator: the OUI 00-14-05 LIO uses for its
// backstores and 36 bits derived from the serial number.
func (d *Drive) naa() uint64 {
	h := fnv.New64a()
	h.Write([]byte("vtape/" + d.serial()))
	return 5<<60 | uint64(0x001405)<<36 | h.Sum64()&(1<<36-1)
}

func (d *Drive) initSPC() {
	d.spc.Identity = scsi.Identity{
		PeripheralType: 0x01, // sequential-access device
		Removable:      true,
		Vendor:         d.pers.Vendor,
		Product:        d.pers.Product,
		Revision:       d.pers.Revision,
		Serial:         d.serial(),
		NAA:            d.naa(),
		Version:        0x06, // SPC-4
		// SAM-5, SPC-4, SSC-3 (no version claimed).
		Versions: []uint16{0x00a0, 0x0460, 0x0400},
	}
	d.spc.VPD = []scsi.VPDPage{{Code: 0xb0, Append: d.appendVPDB0}}
	d.spc.Modes = d.modePages()
	d.table = driveCommands
	if !d.pers.Encryption {
		d.table = plainDriveCommands
	}
	d.spc.Commands = d.table.Commands()
	d.spc.SelfTests.Reported = true // LOG SENSE page 10h
	if d.pers.IBM {
		d.spc.Diagnostics = []scsi.DiagnosticPage{{Code: diagIBM, Send: d.sendIBMDiagnostic}}
	}
	d.applySenseFormat()
}

// appendVPDB0 appends the Sequential-Access Device Capabilities VPD page
// (SSC-5 8.4.2): WORM (byte 4 bit 0) when the model supports WORM media.
func (d *Drive) appendVPDB0(b []byte) []byte {
	var f byte
	if d.pers.WORM {
		f |= 0x01
	}
	return append(b, f, 0)
}

func (d *Drive) applySenseFormat() {
	d.spc.SenseFormat = scsi.FixedFormat
	if d.mode.dsense {
		d.spc.SenseFormat = scsi.DescriptorFormat
	}
}

// Personality returns the drive model.
func (d *Drive) Personality() Personality { return d.pers }

// CommandID and CommandName implement scsi.CommandNamer: the snake_case
// name of a command in SSC (scsi.Table.CommandName: 0xa3 is
// report_supported_opcodes), or "" for one the drive does not support.
// It is the bounded `command` metric label and the op= of fault rules.
func (d *Drive) CommandID(cdb scsi.CDB) scsi.CommandID { return driveCommands.CommandID(cdb) }

// CommandName is the name of command id (scsi.CommandNamer).
func (d *Drive) CommandName(id scsi.CommandID) string { return driveCommands.CommandName(id) }

// Commands is the drive's command table, the same for every drive: the
// names, classes and IMMED bits fault rules read, known before a drive is
// built (a model without encryption serves it without SECURITY PROTOCOL
// IN and OUT).
func Commands() *scsi.Table[*Drive] { return driveCommands }

// HandleCommand implements target.Handler: the command through the
// drive's command table, serialised with the operator methods.
func (d *Drive) HandleCommand(_ context.Context, cmd *scsi.Command) scsi.Response {
	d.mu.Lock()
	r := d.table.Serve(d, &d.spc, cmd)
	d.mu.Unlock()
	return r
}

// isClosed and notReady are the drive's scsi.Readiness, called by Serve
// under d.mu.
func (d *Drive) isClosed() bool { return d.closed }

func (d *Drive) notReady() (scsi.Sense, bool) {
	return d.notReadySense(), d.state != stateReady
}

// notReadySense is the NOT READY condition for the current state.
func (d *Drive) notReadySense() scsi.Sense {
	switch d.state {
	case stateHeld:
		return notReady(scsi.LogicalUnitNotReadyInitCmd)
	case stateReady:
		return scsi.Sense{}
	}
	if d.clean != nil {
		return notReady(scsi.CleaningCartridgeInstalled)
	}
	return notReady(scsi.MediumNotPresent)
}

// check returns CHECK CONDITION with s.
func check(s scsi.Sense) scsi.Response { return scsi.CheckCondition(s) }

// fault turns a Medium error (or a *scsi.Error) into a response with
// scsi.ResponseFor; an error without sense of its own is reported as the
// MEDIUM ERROR of dir. Device faults are logged at Error level once per
// cartridge (then at Debug), never per SCSI outcome.
func (d *Drive) fault(err error, dir ioDir) scsi.Response {
	if isFault(err) {
		lvl := zap.ErrorLevel
		if d.faulted {
			lvl = zap.DebugLevel
		}
		d.faulted = true
		if ce := d.log.Check(lvl, "cartridge i/o failed"); ce != nil {
			ce.Write(zap.String("medium", d.barcode), zap.Error(err))
		}
		if _, ok := scsi.SenseOf(err); !ok {
			err = faultErrs[dir]
		}
	}
	return d.spc.ResponseFor(err)
}

// Reset is the LUN RESET task management function (and what power-on
// does): it queues UNIT ATTENTION 29/00, restores the mode parameters to
// their defaults (block size, compression, D_SENSE, pending partitioning)
// and clears PREVENT MEDIUM REMOVAL. The cartridge does not move: the
// logical position is kept. The initiator cannot know that, so st marks the
// position lost on the 29/xx unit attention ("position_lost_in_reset") and
// refuses I/O until REWIND, LOCATE, SPACE to EOD, ERASE or LOAD.
func (d *Drive) Reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.spc.UA.Add(scsi.PowerOnResetOrBusDeviceReset)
	d.mode = defaultModes(&d.pers, d.cfg)
	d.clearKey() // a reset loses the data encryption parameters
	d.applySenseFormat()
	d.prevent = false
	d.log.Info("logical unit reset")
}

// Load inserts and loads the cartridge with the given barcode (the
// operator, or ChangeMedium): the drive becomes ready at the beginning of
// partition 0 and queues UNIT ATTENTION 28/00 (not ready to ready change,
// medium may have changed).
func (d *Drive) Load(barcode string) error {
	if err := cfgstring.Barcode(barcode); err != nil {
		return fmt.Errorf("vtape %s: load %q: barcode: %w", d.name, barcode, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	if d.clean != nil {
		return fmt.Errorf("vtape %s: load %s: %w (%s, cleaning)", d.name, barcode, ErrMediumPresent, d.clean.barcode)
	}
	if d.state != stateEmpty {
		return fmt.Errorf("vtape %s: load %s: %w (%s)", d.name, barcode, ErrMediumPresent, d.barcode)
	}
	m, err := d.lib.Open(barcode)
	if err != nil {
		return fmt.Errorf("vtape %s: load %s: %w", d.name, barcode, err)
	}
	if IsCleaningCartridge(barcode) {
		d.loadCleaning(barcode, m)
		return nil
	}
	info := d.mediumInfo(m, barcode)
	if info.Partitions < 1 || info.Partitions > 4 {
		_ = m.Close() // best effort: the error below is the one to report
		return fmt.Errorf("vtape %s: load %s: cartridge reports %d partitions", d.name, barcode, info.Partitions)
	}
	if err := m.Locate(0, 0); err != nil && !errors.Is(err, ErrEndOfData) {
		_ = m.Close() // best effort: the error below is the one to report
		return fmt.Errorf("vtape %s: load %s: rewind: %w", d.name, barcode, err)
	}
	d.med, d.ra, d.info, d.barcode = m, m, info, barcode
	m.SetKey(d.crypt.readKey())
	d.state = stateReady
	d.faulted, d.vcrDone = false, false
	d.mode.pending = nil
	d.spc.UA.Add(scsi.NotReadyToReadyChange)
	d.spc.Modes.MediumType = d.mediumType()
	d.st.mu.Lock()
	d.st.barcode, d.st.loadTime = barcode, time.Now()
	d.st.mu.Unlock()
	d.logBase = d.st.bytes()
	d.notePos()
	d.noteUsed()
	d.st.loaded.Store(true)
	d.save()
	d.countDataLoad()
	d.log.Info("cartridge loaded", zap.String("medium", barcode),
		zap.Int("partitions", info.Partitions), zap.Bool("write_protected", info.WriteProtected), zap.Bool("worm", info.WORM))
	return nil
}

// Unload ejects the cartridge (the operator's eject button): it syncs and
// closes the medium. It fails with ErrRemovalPrevented while an initiator
// prevents medium removal, and with ErrNoMedium if the drive is empty.
func (d *Drive) Unload() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.clean != nil {
		d.log.Info("cleaning cartridge taken out before the cleaning ended", zap.String("medium", d.clean.barcode))
		d.endCleaning()
		return nil
	}
	if d.state == stateEmpty {
		return ErrNoMedium
	}
	if d.prevent {
		return ErrRemovalPrevented
	}
	return d.eject()
}

// eject closes the medium and empties the drive; with CKOD set the key
// goes too.
func (d *Drive) eject() error {
	if d.crypt.ckod {
		d.clearKey()
	}
	m, barcode := d.med, d.barcode
	d.med, d.ra, d.info, d.barcode = nil, nil, MediumInfo{}, ""
	d.state = stateEmpty
	d.mode.pending = nil
	d.spc.Modes.MediumType = 0
	d.st.loaded.Store(false)
	d.st.mu.Lock()
	d.st.barcode, d.st.loadTime = "", time.Time{}
	d.st.mu.Unlock()
	d.st.used.Store(0)
	d.st.capacity.Store(0)
	d.st.partition.Store(0)
	d.st.object.Store(0)
	d.st.file.Store(0)
	err := m.Sync()
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	d.save()
	if err != nil {
		d.log.Error("cartridge unload failed", zap.String("medium", barcode), zap.Error(err))
		return fmt.Errorf("vtape %s: unload %s: %w", d.name, barcode, err)
	}
	d.log.Info("cartridge unloaded", zap.String("medium", barcode))
	return nil
}

// Close unloads the cartridge (ignoring PREVENT MEDIUM REMOVAL: the drive
// is going away) and makes the drive refuse further commands with NOT
// READY. What it unloaded, and where, is kept for ClosedState. It implements io.Closer for the transport.
func (d *Drive) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if d.clean != nil {
		d.endCleaning()
	}
	if d.state != stateEmpty {
		d.snapshot()
		err := d.eject()
		d.saveClosed()
		return err
	}
	return nil
}

// Stats returns a snapshot; safe for concurrent use with everything else.
func (d *Drive) Stats() Stats {
	s := &d.st
	out := Stats{
		Loaded:           s.loaded.Load(),
		Partition:        int(s.partition.Load()),
		Object:           s.object.Load(),
		File:             s.file.Load(),
		UsedBytes:        s.used.Load(),
		CapacityBytes:    s.capacity.Load(),
		FilemarksWritten: s.filemarks.Load(),
		EarlyWarnings:    s.earlyWarnings.Load(),
		ILIEvents:        s.ili.Load(),
		FilemarkEvents:   s.fmEvents.Load(),
		EODEvents:        s.eodEvents.Load(),
		BOPEvents:        s.bopEvents.Load(),
		Cleanings:        s.cleanings.Load(),
		CleanNow:         s.cleanNow.Load(),

		ReadBytes:          s.readBytes.Load(),
		WrittenBytes:       s.writtenBytes.Load(),
		MediumReadBytes:    s.mediumRead.Load(),
		MediumWrittenBytes: s.mediumWritten.Load(),
		DecryptedBytes:     s.decrypted.Load(),
		EncryptedBytes:     s.encrypted.Load(),
	}
	s.mu.Lock()
	out.Barcode, out.LoadTime = s.barcode, s.loadTime
	s.mu.Unlock()
	return out
}

// LoadedBarcode returns the barcode of the cartridge in the drive, "" if
// none (scsi.MediumHolder); safe for concurrent use.
func (d *Drive) LoadedBarcode() string {
	d.st.mu.Lock()
	defer d.st.mu.Unlock()
	return d.st.barcode
}

// notePos publishes the current position to the stats.
func (d *Drive) notePos() {
	p := d.med.Pos()
	d.st.partition.Store(int64(p.Partition))
	d.st.object.Store(p.Object)
	d.st.file.Store(p.File)
}

// noteUsed publishes the fill level of the cartridge to the stats.
func (d *Drive) noteUsed() {
	var used, capacity int64
	for i := range d.info.Partitions {
		used += d.med.Used(i)
		if i < len(d.info.Capacity) {
			capacity += d.info.Capacity[i]
		}
	}
	d.st.used.Store(used)
	d.st.capacity.Store(capacity)
}

// partition is the current partition.
func (d *Drive) partition() int { return d.med.Pos().Partition }

// capacity returns the capacity and early-warning size of partition p.
func (d *Drive) capacity(p int) (capacity, ew int64) {
	if p >= 0 && p < len(d.info.Capacity) {
		capacity = d.info.Capacity[p]
	}
	if p >= 0 && p < len(d.info.EarlyWarning) {
		ew = d.info.EarlyWarning[p]
	}
	return capacity, ew
}

// totalCapacity is the native capacity of the cartridge over all its
// partitions.
func (d *Drive) totalCapacity() int64 {
	var t int64
	for _, c := range d.info.Capacity {
		t += c
	}
	return t
}

// inEW reports whether the current partition is filled into its
// early-warning zone.
func (d *Drive) inEW() bool {
	p := d.partition()
	c, ew := d.capacity(p)
	return inEarlyWarning(d.med.Used(p), c, ew)
}

// mediumType is the MODE SENSE header medium type. IBM models report the
// cartridge type code of the loaded cartridge's density (58h LTO-5 data
// ... 98h LTO-9 data, 4h more for WORM; 93h 3592 JC ... 96h JF), as
// LTFS's IBM backend reads it;
// the other LTO models 00h data and 01h WORM (LTFS's HP backend derives
// the cartridge type from the density code and reads WORM here); the
// generic and DDS models 00h.
func (d *Drive) mediumType() uint8 {
	worm := d.info.WORM && d.pers.WORM
	if d.pers.IBM {
		den := d.pers.density(d.mediumDensity())
		if den == nil || den.CartridgeType == 0 {
			return 0x00
		}
		if worm && den.WORMCartridgeType != 0 {
			return den.WORMCartridgeType
		}
		return den.CartridgeType
	}
	if worm {
		return 0x01
	}
	return 0x00
}

// mediumInfo is m's description as the drive takes it: a cartridge whose
// image records no density has the one its label names (labelDensity).
func (d *Drive) mediumInfo(m Medium, barcode string) MediumInfo {
	info := m.Info()
	if info.Density == 0 {
		info.Density = d.pers.labelDensity(barcode)
	}
	return info
}

// RefusesLoaded reports whether the drive holds a data cartridge of a
// format it does not read. A library asks it after moving a cartridge in:
// a real drive reads the cartridge memory and refuses a generation it
// cannot read, and the library reports the move as failed.
func (d *Drive) RefusesLoaded() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.state != stateEmpty && d.clean == nil && !d.readable()
}

// mediumDensity is the density code of the loaded cartridge (the drive's
// default if the cartridge does not say).
func (d *Drive) mediumDensity() uint8 {
	if d.info.Density != 0 {
		return d.info.Density
	}
	return d.pers.DefaultDensity().Code
}

// writable reports whether the drive may write the loaded cartridge: not
// write protected, and a density the drive writes (one it does not list
// at all, such as an LTO-9 cartridge in an LTO-10 drive, it neither
// writes nor reads).
func (d *Drive) writable() bool {
	if d.info.WriteProtected {
		return false
	}
	den := d.pers.density(d.mediumDensity())
	return den != nil && den.Writable
}

// readable reports whether the loaded cartridge's density is one the
// drive reads.
func (d *Drive) readable() bool { return d.pers.density(d.mediumDensity()) != nil }

// bumpVCR increments the VOLUME CHANGE REFERENCE attribute (0009h) the
// first time the cartridge is changed after a load, as LTFS expects.
func (d *Drive) bumpVCR() {
	if d.vcrDone {
		return
	}
	d.vcrDone = true
	var v uint32
	if b, ok := d.med.Attribute(attrVolumeChangeReference); ok && len(b) == 4 {
		v = uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	}
	v++
	if err := d.med.SetAttribute(attrVolumeChangeReference, []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}); err != nil {
		if ce := d.log.Check(zap.DebugLevel, "volume change reference not stored"); ce != nil {
			ce.Write(zap.String("medium", d.barcode), zap.Error(err))
		}
	}
}

// String describes the drive for logs.
func (d *Drive) String() string {
	return "vtape " + d.name + " (" + d.pers.Name + ", serial " + d.serial() + ", max block " + strconv.Itoa(int(d.cfg.MaxBlock)) + ")"
}
