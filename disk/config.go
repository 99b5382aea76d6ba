package disk

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Mode selects what the disk does with data.
type Mode uint8

// Data modes.
const (
	// ModeFakeRW discards writes and returns zeros on reads, like
	// scsi_debug's fake_rw=1: only the command path is exercised.
	ModeFakeRW Mode = iota
	// ModeStore keeps written data in a lazily allocated RAM store of
	// StoreSize bytes, wrapped across the capacity like scsi_debug's
	// dev_size_mb with virtual_gb.
	ModeStore
)

func (m Mode) String() string {
	switch m {
	case ModeFakeRW:
		return "fake_rw"
	case ModeStore:
		return "store"
	}
	return "mode(" + strconv.Itoa(int(m)) + ")"
}

// ZonedModel is the zoned block device model of a disk (ZBC).
type ZonedModel uint8

// Zoned models, as scsi_debug's zbc=.
const (
	ZonedNone        ZonedModel = iota // a regular disk
	ZonedHostAware                     // sequential write preferred zones; reports ZONED 01b in VPD B1
	ZonedHostManaged                   // sequential write required zones; peripheral device type 14h
)

var zonedNames = [...]string{"none", "host-aware", "host-managed"}

func (z ZonedModel) String() string {
	if int(z) < len(zonedNames) {
		return zonedNames[z]
	}
	return "zoned(" + strconv.Itoa(int(z)) + ")"
}

// FormFactor is the NOMINAL FORM FACTOR of the Block Device
// Characteristics VPD page (SBC-4 6.6.2, table "NOMINAL FORM FACTOR").
type FormFactor uint8

// Nominal form factors.
const (
	FormFactorNone    FormFactor = 0 // not reported
	FormFactor5_25    FormFactor = 1 // 5.25 inch
	FormFactor3_5     FormFactor = 2 // 3.5 inch
	FormFactor2_5     FormFactor = 3 // 2.5 inch
	FormFactor1_8     FormFactor = 4 // 1.8 inch
	FormFactorLess1_8 FormFactor = 5 // less than 1.8 inch
)

var formFactorNames = [...]string{"none", "5.25", "3.5", "2.5", "1.8", "small"}

func (f FormFactor) String() string {
	if int(f) < len(formFactorNames) {
		return formFactorNames[f]
	}
	return "form_factor(" + strconv.Itoa(int(f)) + ")"
}

// Revision is the default INQUIRY PRODUCT REVISION LEVEL: the version of
// this emulation, bumped when what the initiator sees changes.
const Revision = "0100"

// Defaults.
const (
	DefaultVendor         = "VSCSI"
	DefaultProduct        = "VDISK"
	DefaultLBS            = 512
	DefaultStoreSize      = 64 << 20
	DefaultOptBlocks      = 1024
	DefaultUnmapMaxBlocks = 0xffffffff
	DefaultUnmapMaxDesc   = 256
	DefaultMaxWSBlocks    = 0xffff
	// DefaultAtomicMax is scsi_debug's atomic_wr_max_length: 128 blocks.
	DefaultAtomicMax = 128
	// DefaultZoneSize is the largest automatic zone size (scsi_debug's
	// zone_size_mb default): smaller disks get smaller zones, four at
	// least.
	DefaultZoneSize = 128 << 20
	// DefaultZoneMaxOpen is scsi_debug's zone_max_open default.
	DefaultZoneMaxOpen = 8
	// MaxStoreSize bounds store_size: the chunk table of the RAM store is
	// allocated up front (8 bytes per 64 KiB of store).
	MaxStoreSize = 64 << 30
	// maxUnmapDesc is what fits in a 16-bit UNMAP parameter list length:
	// (65535 - 8) / 16.
	maxUnmapDesc = 4095
)

// Config is a vdisk's configuration, usually parsed from the cfgstring
// (see ConfigDesc). Fields are literal: start from DefaultConfig (which
// ParseConfig does) rather than from the zero value. Exactly one of Size
// and Blocks must be set before New.
type Config struct {
	// Size is the capacity in bytes; the disk has Size/LBS blocks (the
	// remainder is dropped, so odd sizes are allowed). 0 = not set.
	Size uint64
	// Blocks is the capacity in logical blocks, as an alternative to Size.
	Blocks uint64
	// SizeFromDevSize records that Size is the backstore's dev_size
	// (WithDefaultSize), not a size= of the cfgstring: only then does a
	// RECONFIG of dev_size (Disk.Resize) change the capacity. String
	// leaves such a Size out, as the cfgstring does.
	SizeFromDevSize bool
	// LBS is the logical block size: 512, 1024, 2048 or 4096.
	LBS uint32
	// PBExp is the LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT (0..15):
	// physical block = LBS << PBExp.
	PBExp uint8
	// LowestAligned is the LOWEST ALIGNED LOGICAL BLOCK ADDRESS,
	// < 1<<PBExp.
	LowestAligned uint16
	// OptBlocks is the OPTIMAL TRANSFER LENGTH (VPD B0) in blocks; 0 = not
	// reported.
	OptBlocks uint32
	// MaxBlocks is the MAXIMUM TRANSFER LENGTH (VPD B0) in blocks; 0 = not
	// reported and not enforced. Longer READ/WRITE commands get 24/00.
	MaxBlocks uint32
	// OptGran is the OPTIMAL TRANSFER LENGTH GRANULARITY in blocks
	// (ParseConfig: 1<<PBExp unless given).
	OptGran uint16
	// Mode is fake_rw or store.
	Mode Mode
	// StoreSize is the RAM store size in bytes in store mode, clamped to
	// the capacity.
	StoreSize uint64
	// WP sets write protect: WP in the mode parameter header, DATA
	// PROTECT 27/00 for WRITE, WRITE SAME and UNMAP.
	WP bool
	// WCE is the initial WCE bit of the caching mode page (changeable
	// with MODE SELECT).
	WCE bool
	// LBPU, LBPWS and LBPWS10 enable UNMAP, WRITE SAME(16) with UNMAP and
	// WRITE SAME(10) with UNMAP (VPD B2); any of them sets LBPME.
	LBPU, LBPWS, LBPWS10 bool
	// LBPRZ reports that unmapped blocks read as zeros (READ CAPACITY(16)
	// and VPD B2). They always do here; the bit only says so.
	LBPRZ bool
	// UnmapMaxBlocks is the MAXIMUM UNMAP LBA COUNT, enforced.
	UnmapMaxBlocks uint32
	// UnmapMaxDesc is the MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT (1..4095),
	// enforced.
	UnmapMaxDesc uint32
	// UnmapGran is the OPTIMAL UNMAP GRANULARITY in blocks (ParseConfig:
	// 1<<PBExp unless given). The UNMAP GRANULARITY ALIGNMENT reported
	// with it follows from LowestAligned.
	UnmapGran uint32
	// MaxWSBlocks is the MAXIMUM WRITE SAME LENGTH in blocks, enforced; 0
	// = not reported and not enforced.
	MaxWSBlocks uint64
	// Vendor, Product and Revision are the INQUIRY strings; Serial
	// overrides the unit serial number (VPD 80), which is derived from the
	// device name when empty.
	Vendor, Product, Revision, Serial string
	// NAA overrides the NAA IEEE Registered designator (VPD 83), which is
	// derived from the device name when 0. Two LUNs with the same NAA and
	// serial look like two paths to one logical unit (multipath tests).
	NAA uint64
	// Rotation is the MEDIUM ROTATION RATE (VPD B1): 0 not reported, 1
	// non-rotating (SSD), or 1025..65534 rpm. The default is 1, as
	// scsi_debug's: a disk that reports no rate is taken for a spinning
	// one (rotational=1, add_random=1, the block layer's writeback
	// throttling at a rotating disk's 75 ms), which would skew every
	// measurement of a disk that has no latency of its own.
	Rotation uint16
	// FormFactor is the NOMINAL FORM FACTOR (VPD B1).
	FormFactor FormFactor
	// DSense selects descriptor-format sense data by default (D_SENSE of
	// the control mode page, changeable with MODE SELECT).
	DSense bool
	// AtomicWR enables WRITE ATOMIC(16) and reports the atomic write
	// limits below in the Block Limits VPD page (scsi_debug's atomic_wr),
	// from which Linux (6.11 and later) sets the queue's atomic write
	// limits.
	AtomicWR bool
	// AtomicMax is the MAXIMUM ATOMIC TRANSFER LENGTH in blocks:
	// 1..65535 (the 16-bit TRANSFER LENGTH of WRITE ATOMIC(16)), at most
	// MaxBlocks when that is set.
	AtomicMax uint32
	// AtomicAlign is the ATOMIC ALIGNMENT in blocks: the LBA of an
	// atomic write is a multiple of it (0 or 1: any LBA). ParseConfig:
	// 1<<PBExp unless given.
	AtomicAlign uint32
	// AtomicGran is the ATOMIC TRANSFER LENGTH GRANULARITY in blocks: the
	// length of an atomic write is a multiple of it (0 or 1: any).
	// ParseConfig: 1<<PBExp unless given.
	AtomicGran uint32
	// Zoned makes the disk a zoned block device (scsi_debug's zbc=).
	Zoned ZonedModel
	// ZoneSize is the zone size in bytes, a power-of-two number of
	// blocks (Linux requires one); 0: the largest power of two up to
	// DefaultZoneSize that gives four zones.
	ZoneSize uint64
	// ZoneNrConv is the number of conventional zones at the start of a
	// zoned disk (scsi_debug's zone_nr_conv).
	ZoneNrConv uint32
	// ZoneMaxOpen is the most sequential zones open at once (the
	// MAXIMUM NUMBER OF OPEN SEQUENTIAL WRITE REQUIRED ZONES of a
	// host-managed disk); 0: no limit.
	ZoneMaxOpen uint32
	// ZoneCap is the capacity of a sequential zone in bytes, a number
	// of blocks up to the zone size (scsi_debug's zone_cap_mb); 0: the
	// zone size. Below it, each sequential zone is followed by a gap
	// zone (ZBC-2) filling the rest of the zone size, and the zones
	// start at a constant granularity, the zone size.
	ZoneCap uint64
}

// DefaultConfig returns the defaults. It has no capacity: set Size or
// Blocks.
func DefaultConfig() Config {
	return Config{
		LBS:            DefaultLBS,
		OptBlocks:      DefaultOptBlocks,
		OptGran:        1,
		Mode:           ModeFakeRW,
		StoreSize:      DefaultStoreSize,
		LBPRZ:          true,
		UnmapMaxBlocks: DefaultUnmapMaxBlocks,
		UnmapMaxDesc:   DefaultUnmapMaxDesc,
		UnmapGran:      1,
		MaxWSBlocks:    DefaultMaxWSBlocks,
		AtomicMax:      DefaultAtomicMax,
		ZoneNrConv:     1,
		ZoneMaxOpen:    DefaultZoneMaxOpen,
		AtomicAlign:    1,
		AtomicGran:     1,
		Vendor:         DefaultVendor,
		Product:        DefaultProduct,
		Revision:       Revision,
		Rotation:       1,
	}
}

// HasSize reports whether the capacity is set (Size or Blocks). The
// daemon fills Size from the backstore's dev_size when it is not.
func (c Config) HasSize() bool { return c.Size != 0 || c.Blocks != 0 }

// WithDefaultSize returns c with Size set to bytes when c has no capacity
// of its own: a targetcli backstore created with size=N and a cfgstring
// without size= or blocks= gets its capacity from dev_size. The
// cfgstring's capacity, when given, wins (dev_size is only bookkeeping for
// a TCMU passthrough device: the initiator sees READ CAPACITY).
func (c Config) WithDefaultSize(bytes uint64) Config {
	if !c.HasSize() {
		c.Size, c.SizeFromDevSize = bytes, true
	}
	return c
}

// Capacity returns the number of logical blocks (0 if not set).
func (c Config) Capacity() uint64 {
	if c.Blocks != 0 {
		return c.Blocks
	}
	if c.LBS == 0 {
		return 0
	}
	return c.Size / uint64(c.LBS)
}

// PhysicalBlockSize is LBS << PBExp.
func (c Config) PhysicalBlockSize() uint32 { return c.LBS << (c.PBExp & 15) }

// Validate reports the first inconsistency in c, naming the key. It does
// not require the capacity to be set (see HasSize); New does.
func (c Config) Validate() error {
	switch c.LBS {
	case 512, 1024, 2048, 4096:
	default:
		return fmt.Errorf("lbs: %d is not 512, 1024, 2048 or 4096", c.LBS)
	}
	if c.Size != 0 && c.Blocks != 0 {
		return errors.New("size and blocks: give one, not both")
	}
	if c.HasSize() {
		n := c.Capacity()
		if n == 0 {
			return fmt.Errorf("size: %d bytes is less than one %d-byte block", c.Size, c.LBS)
		}
		if n > math.MaxInt64/uint64(c.LBS) {
			return fmt.Errorf("blocks: %d blocks of %d bytes exceed 8 EiB", n, c.LBS)
		}
	}
	if c.PBExp > 15 {
		return fmt.Errorf("pbexp: %d is out of range 0..15", c.PBExp)
	}
	if uint32(c.LowestAligned) >= uint32(1)<<c.PBExp {
		return fmt.Errorf("lowest_aligned: %d must be less than 2^pbexp = %d", c.LowestAligned, 1<<c.PBExp)
	}
	if c.MaxBlocks != 0 && c.OptBlocks > c.MaxBlocks {
		return fmt.Errorf("opt_blks: %d exceeds max_blks %d", c.OptBlocks, c.MaxBlocks)
	}
	switch c.Mode {
	case ModeFakeRW:
	case ModeStore:
		if c.StoreSize < uint64(c.LBS) {
			return fmt.Errorf("store_size: %d bytes is less than one %d-byte block", c.StoreSize, c.LBS)
		}
		if c.StoreSize > MaxStoreSize {
			return fmt.Errorf("store_size: %d bytes exceeds the 64 GiB limit", c.StoreSize)
		}
	default:
		return fmt.Errorf("mode: %d is not fake_rw or store", c.Mode)
	}
	if c.LBPU {
		if c.UnmapMaxBlocks == 0 {
			return errors.New("unmap_max_blocks: must be at least 1 with lbpu")
		}
		if c.UnmapMaxDesc == 0 {
			return errors.New("unmap_max_desc: must be at least 1 with lbpu")
		}
	}
	if c.UnmapMaxDesc > maxUnmapDesc {
		return fmt.Errorf("unmap_max_desc: %d exceeds %d (a 64 KiB parameter list)", c.UnmapMaxDesc, maxUnmapDesc)
	}
	if c.lbp() && c.UnmapGran == 0 {
		return errors.New("unmap_gran: must be at least 1")
	}
	if c.UnmapGran > math.MaxInt32 {
		return fmt.Errorf("unmap_gran: %d exceeds 2^31-1", c.UnmapGran)
	}
	if c.AtomicWR {
		switch {
		case c.AtomicMax == 0 || c.AtomicMax > math.MaxUint16:
			return fmt.Errorf("atomic_wr_max_length: %d is out of range 1..65535 (the TRANSFER LENGTH of WRITE ATOMIC(16))", c.AtomicMax)
		case c.MaxBlocks != 0 && c.AtomicMax > c.MaxBlocks:
			return fmt.Errorf("atomic_wr_max_length: %d exceeds max_blks %d", c.AtomicMax, c.MaxBlocks)
		case c.AtomicGran > c.AtomicMax:
			return fmt.Errorf("atomic_wr_gran: %d exceeds atomic_wr_max_length %d", c.AtomicGran, c.AtomicMax)
		case c.AtomicAlign > c.AtomicMax:
			return fmt.Errorf("atomic_wr_align: %d exceeds atomic_wr_max_length %d", c.AtomicAlign, c.AtomicMax)
		}
	}
	if err := c.checkZoned(); err != nil {
		return err
	}
	if c.MaxWSBlocks > math.MaxUint32 {
		return fmt.Errorf("max_ws_blks: %d exceeds the 32-bit NUMBER OF LOGICAL BLOCKS field", c.MaxWSBlocks)
	}
	if err := checkASCII("vendor", c.Vendor, 8); err != nil {
		return err
	}
	if err := checkASCII("product", c.Product, 16); err != nil {
		return err
	}
	if err := checkASCII("rev", c.Revision, 4); err != nil {
		return err
	}
	if c.Serial != "" {
		if err := checkASCII("serial", c.Serial, 64); err != nil {
			return err
		}
	}
	if c.NAA != 0 && c.NAA>>60 != 5 {
		return fmt.Errorf("naa: %016x is not an NAA-5 (IEEE Registered) designator", c.NAA)
	}
	if c.Rotation > 1 && (c.Rotation < 0x401 || c.Rotation == 0xffff) {
		return fmt.Errorf("rotation: %d is not 0, 1 or 1025..65534 rpm", c.Rotation)
	}
	if int(c.FormFactor) >= len(formFactorNames) {
		return fmt.Errorf("form_factor: %d is out of range", c.FormFactor)
	}
	return nil
}

func (c Config) lbp() bool { return c.LBPU || c.LBPWS || c.LBPWS10 }

// checkZoned validates the zoned settings, and with a capacity the zone
// layout it gives.
func (c Config) checkZoned() error {
	if c.Zoned == ZonedNone {
		return nil
	}
	switch {
	case c.Zoned > ZonedHostManaged:
		return fmt.Errorf("zoned: %d is not none, host-aware or host-managed", c.Zoned)
	case c.lbp():
		return errors.New("zoned: a zoned disk has no thin provisioning (lbpu, lbpws, lbpws10)")
	case c.AtomicWR:
		return errors.New("zoned: a zoned disk has no atomic writes (atomic_wr)")
	}
	if c.ZoneSize != 0 {
		zb := c.ZoneSize / uint64(c.LBS)
		if c.ZoneSize%uint64(c.LBS) != 0 || zb&(zb-1) != 0 {
			return fmt.Errorf("zone_size: %d bytes is not a power-of-two number of %d-byte blocks (Linux requires one)", c.ZoneSize, c.LBS)
		}
	}
	if c.ZoneCap%uint64(c.LBS) != 0 {
		return fmt.Errorf("zone_cap: %d bytes is not a whole number of %d-byte blocks", c.ZoneCap, c.LBS)
	}
	if !c.HasSize() {
		return nil
	}
	blocks := c.Capacity()
	zb := zoneBlocks(c, blocks)
	if c.ZoneCap/uint64(c.LBS) > zb {
		return fmt.Errorf("zone_cap: %d bytes exceeds the zone size, %d bytes", c.ZoneCap, zb*uint64(c.LBS))
	}
	slots := (blocks + zb - 1) / zb
	if uint64(c.ZoneNrConv) >= slots {
		return fmt.Errorf("zone_nr_conv: %d conventional zones leave no sequential zone of the %d", c.ZoneNrConv, slots)
	}
	n, gaps := slots, ""
	if cb := c.ZoneCap / uint64(c.LBS); cb != 0 && cb < zb {
		n += slots - uint64(c.ZoneNrConv) // a gap zone after each sequential one
		gaps = " (with the gap zones zone_cap adds)"
	}
	if n > maxZones {
		return fmt.Errorf("zone_size: %d zones of %d blocks%s exceed %d (give a larger zone_size)", n, zb, gaps, maxZones)
	}
	return nil
}

func checkASCII(key, s string, maxLen int) error {
	if s == "" {
		return fmt.Errorf("%s: empty", key)
	}
	if len(s) > maxLen {
		return fmt.Errorf("%s: %q is longer than %d characters", key, s, maxLen)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return fmt.Errorf("%s: %q has a non-printable or non-ASCII byte at %d", key, s, i)
		}
		if s[i] == ';' || s[i] == ',' || s[i] == ':' {
			return fmt.Errorf("%s: %q contains %q, which a cfgstring cannot carry", key, s, s[i])
		}
	}
	return nil
}
