package disk

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
)

// naaCompanyID is the 24-bit company ID of the default NAA-5 designators.
// 0x0A5C51 is in the CID format (low nibble of the first octet 1010b), a
// locally assigned range that never collides with an IEEE-assigned OUI.
const naaCompanyID = 0x0A5C51

// Disk is an emulated SBC disk. See the package documentation for the
// behaviour and the concurrency contract.
type Disk struct {
	scsi.SPC

	name string
	log  *zap.Logger
	cfg  Config

	blocks    uint64 // capacity in logical blocks
	lbs       uint32
	shift     uint   // log2(lbs)
	alignMask uint64 // logical blocks per physical block - 1
	alignAdd  uint64 // (ppb - lowest aligned) & alignMask
	maxBlocks uint32 // 0 = not enforced
	maxWS     uint64 // 0 = not enforced

	fake    bool
	backend Backend
	store   *Store
	flusher Flusher
	zeroer  Zeroer
	wrap    int64  // bytes of backend the capacity wraps over
	wrapBlk uint64 // the same in blocks

	cmds  *scsi.Table[*Disk] // commandsFor the configuration
	zones *zones             // nil unless zoned

	wce     atomic.Bool
	stopped atomic.Bool
	carried bool // LoadHandOver restored the previous daemon's state

	// Live reconfiguration (reconfig.go): Resize, SetWriteCache and
	// Reconfigure publish, the command goroutine applies before its next
	// command. blocks, wrap, wrapBlk and the store's size above belong to
	// the command goroutine.
	reMu     sync.Mutex               // serialises the reconfiguring methods
	live     Config                   // the configuration in force (under reMu)
	geo      atomic.Pointer[geometry] // the capacity last accepted
	pending  atomic.Uint32            // pendCapacity | pendMode: work before the next command
	storeMax int64                    // store mode: the largest store (store_size)

	misalignedReads  atomic.Uint64
	misalignedWrites atomic.Uint64
	faultLogged      atomic.Bool

	block     []byte // one logical block: WRITE SAME pattern
	param     []byte // UNMAP parameter list, allocated with lbpu
	lbaStatus []byte // GET LBA STATUS parameter data, allocated on first use
	cmpA      []byte // VERIFY compare buffers, allocated on first use
	cmpB      []byte
	pageBuf   [64]byte // current mode page for MODE SELECT comparison
}

// New returns a disk named name (the configfs storage object name; the
// default serial number and NAA designator are derived from it, so they
// are stable across restarts). cfg must be valid and have a capacity (see
// Config.WithDefaultSize for the backstore's dev_size).
func New(name string, cfg Config, log *zap.Logger) (*Disk, error) {
	if log == nil {
		log = zap.NewNop()
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("disk %s: %w", name, err)
	}
	if !cfg.HasSize() {
		return nil, fmt.Errorf("disk %s: size: not set (give size= or blocks= in the cfgstring, or a backstore size)", name)
	}
	d := &Disk{
		name:      name,
		log:       log,
		cfg:       cfg,
		blocks:    cfg.Capacity(),
		lbs:       cfg.LBS,
		maxBlocks: cfg.MaxBlocks,
		maxWS:     cfg.MaxWSBlocks,
		fake:      cfg.Mode == ModeFakeRW,
		block:     make([]byte, cfg.LBS),
	}
	for d.lbs>>d.shift != 1 {
		d.shift++
	}
	if cfg.PBExp > 0 {
		ppb := uint64(1) << cfg.PBExp
		d.alignMask = ppb - 1
		d.alignAdd = (ppb - uint64(cfg.LowestAligned)) & d.alignMask
	}
	capBytes := int64(d.blocks) << d.shift
	if d.fake {
		d.backend = FakeRW{}
		d.wrap, d.wrapBlk = capBytes, d.blocks
	} else {
		// The store covers the capacity up to store_size, beyond which
		// the capacity wraps across it; its chunk table has room for
		// store_size, so that Resize can grow it without allocating.
		d.storeMax = int64(cfg.StoreSize) >> d.shift << d.shift
		size := min(d.storeMax, capBytes)
		s, err := newStore(size, d.storeMax)
		if err != nil {
			return nil, fmt.Errorf("disk %s: %w", name, err)
		}
		d.store, d.backend = s, s
		d.wrap, d.wrapBlk = size, uint64(size>>d.shift)
	}
	d.live = cfg
	d.geo.Store(&geometry{blocks: d.blocks, wrap: d.wrap})
	d.flusher, _ = d.backend.(Flusher)
	d.zeroer, _ = d.backend.(Zeroer)
	d.wce.Store(cfg.WCE)
	if cfg.LBPU {
		d.param = make([]byte, 8+16*int(cfg.UnmapMaxDesc))
	}

	if cfg.Zoned != ZonedNone {
		d.zones = newZones(cfg, d.blocks)
	}
	d.cmds = commandsFor(cfg)
	d.Commands = d.cmds.Commands()
	d.Identity = identity(name, cfg)
	d.VPD = []scsi.VPDPage{
		{Code: 0xb0, Append: d.appendBlockLimits},
		{Code: 0xb1, Append: d.appendBlockCharacteristics},
	}
	if cfg.lbp() {
		d.VPD = append(d.VPD, scsi.VPDPage{Code: 0xb2, Append: d.appendProvisioning})
	}
	if d.zones != nil {
		d.VPD = append(d.VPD, scsi.VPDPage{Code: 0xb6, Append: d.appendZonedCharacteristics})
	}
	d.Modes = scsi.ModePages{
		Pages: []scsi.ModePage{
			{Code: 0x01, Append: appendErrorRecovery},
			{Code: 0x08, Append: d.appendCaching, Select: d.selectCaching},
			{Code: 0x0a, Append: d.appendControl, Select: d.selectControl},
		},
		DeviceSpecific:        d.deviceSpecific,
		BlockDescriptor:       d.appendBlockDescriptor,
		SelectBlockDescriptor: d.selectBlockDescriptor,
	}
	if cfg.DSense {
		d.SenseFormat = scsi.DescriptorFormat
	}
	// SAM-5 5.14: a logical unit reports its power-on once.
	d.UA.Add(scsi.PowerOnResetOrBusDeviceReset)

	storeBytes := int64(0)
	if d.store != nil {
		storeBytes = d.store.Size()
	}
	// The logger carries the device name already (target adds it).
	log.Info("vdisk configured",
		zap.Uint64("blocks", d.blocks),
		zap.Uint32("lbs", d.lbs),
		zap.Uint32("pbs", cfg.PhysicalBlockSize()),
		zap.Stringer("mode", cfg.Mode),
		zap.Int64("store_bytes", storeBytes),
		zap.String("config", cfg.String()))
	return d, nil
}

// identity derives the INQUIRY identity from the name and the overrides.
func identity(name string, cfg Config) scsi.Identity {
	h := fnv.New64a()
	h.Write([]byte(name))
	sum := h.Sum64()
	naa := cfg.NAA
	if naa == 0 {
		naa = scsi.NAARegistered(naaCompanyID, sum)
	}
	serial := cfg.Serial
	if serial == "" {
		serial = defaultSerial(name, sum)
	}
	pdt := uint8(0x00) // direct access block device
	if cfg.Zoned == ZonedHostManaged {
		pdt = 0x14 // host managed zoned block device
	}
	return scsi.Identity{
		PeripheralType: pdt,
		Vendor:         cfg.Vendor,
		Product:        cfg.Product,
		Revision:       cfg.Revision,
		Serial:         serial,
		NAA:            naa,
		// SBC-3 beside SBC-4: SBC-4 revises SBC-3, so a disk that
		// implements it implements SBC-3 too, and initiators that look
		// for an SBC-3 code (04C0h-04DFh; libiscsi's block-limits test)
		// find one, as on LIO's own backstores (04C0h) and the kernel's
		// scsi_debug (04C5h).
		Versions: []uint16{scsi.VersionSAM5, scsi.VersionSPC4, scsi.VersionSBC4, scsi.VersionSBC3},
		CmdQue:   true,
	}
}

// UnitSerial is the unit serial number of VPD page 80h (the transport
// gives the backstore the same one).
func (d *Disk) UnitSerial() string { return d.Identity.Serial }

// UnitIdentity is the standard INQUIRY identification.
func (d *Disk) UnitIdentity() scsi.Identity { return d.Identity }

// defaultSerial is the device name when it is a usable serial number
// (printable ASCII without spaces, at most 64 bytes), so that
// /dev/disk/by-id names are readable; otherwise a hash of it.
func defaultSerial(name string, sum uint64) string {
	ok := name != "" && len(name) <= 64
	for i := 0; ok && i < len(name); i++ {
		ok = name[i] > 0x20 && name[i] < 0x7f
	}
	if ok {
		return name
	}
	return fmt.Sprintf("%016x", sum)
}

// Name is the device name given to New.
func (d *Disk) Name() string { return d.name }

// Config returns the configuration in force: the one the disk was built
// with, with the capacity of the last Resize or Reconfigure.
func (d *Disk) Config() Config {
	d.reMu.Lock()
	defer d.reMu.Unlock()
	return d.live
}

// CommandID and CommandName implement scsi.CommandNamer through the
// disk's table: the snake_case name of a command for the `command` metric
// label and fault rules, "" for one the disk does not support.
func (d *Disk) CommandID(cdb scsi.CDB) scsi.CommandID { return d.cmds.CommandID(cdb) }

// CommandName is the name of command id (scsi.CommandNamer).
func (d *Disk) CommandName(id scsi.CommandID) string { return d.cmds.CommandName(id) }

// Commands is the disk's command table, UNMAP and WRITE ATOMIC(16)
// included (a disk without lbpu or atomic_wr leaves them out): the names,
// classes and extents fault rules read, known before a disk is built.
func Commands() *scsi.Table[*Disk] { return sbcCommands }

// senseNotReady is the condition of a stopped disk (START STOP UNIT with
// START=0): LOGICAL UNIT NOT READY, INITIALIZING COMMAND REQUIRED.
var senseNotReady = scsi.Sense{Key: scsi.NotReady, ASC: scsi.LogicalUnitNotReadyInitCmd}

// HandleCommand executes one command through the disk's command table. It
// never panics on any CDB or buffer, and never allocates on the
// READ/WRITE path.
func (d *Disk) HandleCommand(_ context.Context, cmd *scsi.Command) scsi.Response {
	if d.pending.Load() != 0 {
		d.applyPending()
	}
	return d.cmds.Serve(d, &d.SPC, cmd)
}

// notReady is the disk's scsi.Readiness: a stopped disk is NOT READY 04/02.
func (d *Disk) notReady() (scsi.Sense, bool) { return senseNotReady, d.stopped.Load() }

// fault turns a backend error into MEDIUM ERROR with asc (a device fault:
// logged at Error once per disk, then only counted by the target).
func (d *Disk) fault(err error, asc scsi.ASC) error {
	if _, ok := scsi.SenseOf(err); ok {
		return err
	}
	if d.faultLogged.CompareAndSwap(false, true) {
		d.log.Error("vdisk backend failed; further failures are not logged", zap.Error(err))
	}
	return scsi.NewError(scsi.MediumError, asc)
}

// Stats is a snapshot of a disk's geometry, state and counters, for
// metrics.
type Stats struct {
	Mode              Mode
	Blocks            uint64 // capacity in logical blocks
	LogicalBlockSize  uint32
	PhysicalBlockSize uint32
	LowestAlignedLBA  uint16
	StoreSize         int64 // RAM store size in bytes in use (0 in fake_rw mode)
	StoreAllocated    int64 // RAM store bytes allocated by writes
	WriteProtect      bool
	WriteCache        bool // WCE of the caching mode page
	Stopped           bool // START STOP UNIT with START=0
	// MisalignedReads and MisalignedWrites count READ and WRITE commands
	// whose start LBA or length is not a multiple of the physical block
	// (taking the lowest aligned LBA into account). Always 0 when the
	// physical block is the logical block.
	MisalignedReads  uint64
	MisalignedWrites uint64
}

// Stats returns a snapshot; it is safe to call from any goroutine.
func (d *Disk) Stats() Stats {
	g := d.geo.Load()
	s := Stats{
		Mode:              d.cfg.Mode,
		Blocks:            g.blocks,
		LogicalBlockSize:  d.lbs,
		PhysicalBlockSize: d.cfg.PhysicalBlockSize(),
		LowestAlignedLBA:  d.cfg.LowestAligned,
		WriteProtect:      d.cfg.WP,
		WriteCache:        d.wce.Load(),
		Stopped:           d.stopped.Load(),
		MisalignedReads:   d.misalignedReads.Load(),
		MisalignedWrites:  d.misalignedWrites.Load(),
	}
	if d.store != nil {
		s.StoreSize = g.wrap
		s.StoreAllocated = d.store.Allocated()
	}
	return s
}
