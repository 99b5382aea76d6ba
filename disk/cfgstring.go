package disk

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vscsid/vscsid/internal/cfgstring"
)

// The vdisk cfgstring: its grammar (ConfigDesc), ParseConfig and
// Config.String, which writes it back. Keep the three in step.

// ConfigDesc documents the cfgstring grammar (shown by targetcli help).
const ConfigDesc = `vdisk: an SBC disk like scsi_debug. cfgstring = key=value pairs separated by ';' (no ',' or ':'),
spaces around keys and values and empty pairs ignored. N: decimal or 0x hex (a leading 0 is decimal).
SIZE: bytes, optional fraction and unit K/M/G/T = KiB/MiB/GiB/TiB (1024-based) or KB/MB/GB/TB (1000-based), e.g. 1G, 1.5GiB, 500MB.
BOOL: 0|1, true|false, yes|no, on|off.
  size=SIZE                capacity in bytes (odd sizes allowed: blocks = size/lbs)
  blocks=N                 capacity in logical blocks (instead of size). Without either, the backstore's dev_size is used.
  lbs=512|1024|2048|4096   logical block size (512)
  pbexp=0..15              physical block = lbs << pbexp (0)
  lowest_aligned=N         lowest aligned LBA, < 2^pbexp (0)
  opt_blks=N               optimal transfer length, blocks; 0 = not reported (1024)
  max_blks=N               maximum transfer length, blocks, enforced; 0 = not reported (0)
  opt_gran=N               optimal transfer length granularity, blocks (2^pbexp)
  mode=fake_rw|store       fake_rw: writes discarded, reads zeros; store: RAM store (fake_rw)
  store_size=SIZE          store mode RAM, allocated as written, wrapped across the capacity (64M, max 64G)
  wp=BOOL                  write protect (0)
  wce=BOOL                 write cache enabled, caching page (0)
  lbpu=BOOL lbpws=BOOL lbpws10=BOOL  thin provisioning: UNMAP, WRITE SAME(16)/(10) with UNMAP (0)
  lbprz=BOOL               unmapped blocks read zeros (1)
  unmap_max_blocks=N unmap_max_desc=N unmap_gran=N  unmap limits (4294967295, 256, 2^pbexp)
  max_ws_blks=N            maximum WRITE SAME length, blocks; 0 = not reported (65535)
  vendor=S product=S rev=S serial=S  INQUIRY strings, printable ASCII, <= 8/16/4/64 chars
  naa=5XXXXXXXXXXXXXXX     NAA-5 designator, 16 hex digits (derived from the device name)
  rotation=0|1|1025..65534 medium rotation rate: 0 not reported, 1 non-rotating, else rpm (1)
  form_factor=none|5.25|3.5|2.5|1.8|small  nominal form factor (none)
  dsense=BOOL              descriptor-format sense by default (0)
  atomic_wr=BOOL           WRITE ATOMIC(16) and the atomic write limits of VPD B0 (0)
  atomic_wr_max_length=N atomic_wr_align=N atomic_wr_gran=N  atomic write limits, blocks (128, 2^pbexp, 2^pbexp)
  zoned=none|host-aware|host-managed  a zoned block device, ZBC (none)
  zone_size=SIZE zone_nr_conv=N zone_max_open=N  zone size, a power of two (128M or less for 4 zones), conventional zones (1), open zone limit, 0 = none (8)
  zone_cap=SIZE            sequential zone capacity, up to zone_size; below it each sequential zone is followed by a gap zone (zone_size)
Live changes: dev_size resizes a disk sized by it (not by size=/blocks=); a dev_config that changes only size= or blocks= resizes; emulate_write_cache sets WCE. Other keys need a new backstore.
Example: size=1G;lbs=4096;pbexp=0;mode=store;lbpu=1`

// ParseConfig parses a vdisk cfgstring (the part after "vdisk/"), e.g.
// "size=1G;lbs=4096;mode=store", in the shared grammar of
// internal/cfgstring (split rule, sizes, numbers, booleans). It is strict: an unknown or repeated
// key, a malformed or out-of-range value, or an inconsistent combination
// is an error that names the key. Keys not given keep DefaultConfig's
// values, except opt_gran and unmap_gran, which follow pbexp. An empty
// string gives DefaultConfig (no capacity; see HasSize).
func ParseConfig(s string) (Config, error) {
	c := DefaultConfig()
	pairs, err := cfgstring.Split(s)
	if err != nil {
		return Config{}, fmt.Errorf("cfgstring: %w", err)
	}
	var seen [len(keys)]bool
	for _, p := range pairs {
		k, v := p.Key, p.Value
		if !p.HasValue {
			return Config{}, fmt.Errorf("cfgstring: %q is not key=value", k)
		}
		i := keyIndex(k)
		if i < 0 {
			return Config{}, fmt.Errorf("%s: unknown key (known: %s)", k, strings.Join(keys[:], ", "))
		}
		seen[i] = true
		if v == "" {
			return Config{}, fmt.Errorf("%s: empty value", k)
		}
		if err := c.set(k, v); err != nil {
			return Config{}, fmt.Errorf("%s: %w", k, err)
		}
	}
	given := func(k string) bool { return seen[keyIndex(k)] }
	if given("store_size") && c.Mode != ModeStore {
		return Config{}, errors.New("store_size: only meaningful with mode=store")
	}
	if !c.lbp() {
		for _, k := range [...]string{"unmap_max_blocks", "unmap_max_desc", "unmap_gran", "lbprz"} {
			if given(k) {
				return Config{}, fmt.Errorf("%s: only meaningful with lbpu, lbpws or lbpws10", k)
			}
		}
	}
	if c.Zoned == ZonedNone {
		for _, k := range [...]string{"zone_size", "zone_nr_conv", "zone_max_open", "zone_cap"} {
			if given(k) {
				return Config{}, fmt.Errorf("%s: only meaningful with zoned=host-aware or zoned=host-managed", k)
			}
		}
	}
	if !c.AtomicWR {
		for _, k := range [...]string{"atomic_wr_max_length", "atomic_wr_align", "atomic_wr_gran"} {
			if given(k) {
				return Config{}, fmt.Errorf("%s: only meaningful with atomic_wr=1", k)
			}
		}
	}
	if c.PBExp <= 15 {
		if !given("opt_gran") {
			c.OptGran = uint16(1) << c.PBExp
		}
		if !given("unmap_gran") {
			c.UnmapGran = uint32(1) << c.PBExp
		}
		if !given("atomic_wr_align") {
			c.AtomicAlign = uint32(1) << c.PBExp
		}
		if !given("atomic_wr_gran") {
			c.AtomicGran = uint32(1) << c.PBExp
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// keys lists the cfgstring keys in canonical order.
var keys = [...]string{
	"size", "blocks", "lbs", "pbexp", "lowest_aligned", "opt_blks", "max_blks", "opt_gran",
	"mode", "store_size", "wp", "wce", "lbpu", "lbpws", "lbpws10", "lbprz",
	"unmap_max_blocks", "unmap_max_desc", "unmap_gran", "max_ws_blks",
	"vendor", "product", "rev", "serial", "naa", "rotation", "form_factor", "dsense",
	"atomic_wr", "atomic_wr_max_length", "atomic_wr_align", "atomic_wr_gran",
	"zoned", "zone_size", "zone_nr_conv", "zone_max_open", "zone_cap",
}

func keyIndex(k string) int {
	for i, s := range keys {
		if s == k {
			return i
		}
	}
	return -1
}

func (c *Config) set(k, v string) error {
	var err error
	switch k {
	case "size":
		c.Size, err = cfgstring.Size(v)
		if err == nil && c.Size == 0 {
			err = errors.New("must be at least one block")
		}
	case "blocks":
		c.Blocks, err = parseUint(v, 64)
		if err == nil && c.Blocks == 0 {
			err = errors.New("must be at least 1")
		}
	case "lbs":
		err = setUint(&c.LBS, v, 32, false)
		if n := c.LBS; err == nil && n != 512 && n != 1024 && n != 2048 && n != 4096 {
			err = fmt.Errorf("%d is not 512, 1024, 2048 or 4096", n)
		}
	case "pbexp":
		err = setUint(&c.PBExp, v, 8, false)
	case "lowest_aligned":
		err = setUint(&c.LowestAligned, v, 16, false)
	case "opt_blks":
		err = setUint(&c.OptBlocks, v, 32, false)
	case "max_blks":
		err = setUint(&c.MaxBlocks, v, 32, false)
	case "opt_gran":
		err = setUint(&c.OptGran, v, 16, true)
	case "mode":
		switch v {
		case "fake_rw":
			c.Mode = ModeFakeRW
		case "store":
			c.Mode = ModeStore
		default:
			err = fmt.Errorf("%q is not fake_rw or store", v)
		}
	case "store_size":
		c.StoreSize, err = cfgstring.Size(v)
		if err == nil && c.StoreSize == 0 {
			err = errors.New("must be at least one block")
		}
	case "wp":
		c.WP, err = cfgstring.Bool(v)
	case "wce":
		c.WCE, err = cfgstring.Bool(v)
	case "lbpu":
		c.LBPU, err = cfgstring.Bool(v)
	case "lbpws":
		c.LBPWS, err = cfgstring.Bool(v)
	case "lbpws10":
		c.LBPWS10, err = cfgstring.Bool(v)
	case "lbprz":
		c.LBPRZ, err = cfgstring.Bool(v)
	case "unmap_max_blocks":
		err = setUint(&c.UnmapMaxBlocks, v, 32, true)
	case "unmap_max_desc":
		err = setUint(&c.UnmapMaxDesc, v, 32, true)
	case "unmap_gran":
		err = setUint(&c.UnmapGran, v, 32, true)
	case "max_ws_blks":
		c.MaxWSBlocks, err = parseUint(v, 32)
	case "vendor":
		c.Vendor = v
	case "product":
		c.Product = v
	case "rev":
		c.Revision = v
	case "serial":
		c.Serial = v
	case "naa":
		h := strings.TrimPrefix(strings.TrimPrefix(v, "0x"), "0X")
		if len(h) != 16 {
			return fmt.Errorf("%q is not 16 hex digits", v)
		}
		c.NAA, err = strconv.ParseUint(h, 16, 64)
		if err != nil {
			return fmt.Errorf("%q is not 16 hex digits", v)
		}
		if c.NAA>>60 != 5 {
			return fmt.Errorf("%q does not start with 5 (NAA IEEE Registered)", v)
		}
	case "rotation":
		err = setUint(&c.Rotation, v, 16, false)
	case "form_factor":
		ok := false
		for i, name := range formFactorNames {
			if v == name {
				c.FormFactor, ok = FormFactor(i), true
			}
		}
		if !ok {
			err = fmt.Errorf("%q is not one of %s", v, strings.Join(formFactorNames[:], ", "))
		}
	case "dsense":
		c.DSense, err = cfgstring.Bool(v)
	case "zoned":
		ok := false
		for i, name := range zonedNames {
			if v == name {
				c.Zoned, ok = ZonedModel(i), true
			}
		}
		if !ok {
			err = fmt.Errorf("%q is not one of %s", v, strings.Join(zonedNames[:], ", "))
		}
	case "zone_size":
		c.ZoneSize, err = cfgstring.Size(v)
		if err == nil && c.ZoneSize == 0 {
			err = errors.New("must be at least one block")
		}
	case "zone_nr_conv":
		err = setUint(&c.ZoneNrConv, v, 32, false)
	case "zone_max_open":
		err = setUint(&c.ZoneMaxOpen, v, 32, false)
	case "zone_cap":
		c.ZoneCap, err = cfgstring.Size(v)
		if err == nil && c.ZoneCap == 0 {
			err = errors.New("must be at least one block")
		}
	case "atomic_wr":
		c.AtomicWR, err = cfgstring.Bool(v)
	case "atomic_wr_max_length":
		err = setUint(&c.AtomicMax, v, 16, true)
	case "atomic_wr_align":
		err = setUint(&c.AtomicAlign, v, 32, false)
	case "atomic_wr_gran":
		err = setUint(&c.AtomicGran, v, 32, false)
	}
	return err
}

// setUint parses v into *dst, an unsigned field of bits bits; with
// positive, 0 is refused.
func setUint[T ~uint8 | ~uint16 | ~uint32 | ~uint64](dst *T, v string, bits int, positive bool) error {
	n, err := parseUint(v, bits)
	if err != nil {
		return err
	}
	if positive && n == 0 {
		return errors.New("must be at least 1")
	}
	*dst = T(n)
	return nil
}

// parseUint parses an unsigned integer of bitSize bits (the shared
// grammar: decimal or 0x hex).
func parseUint(v string, bitSize int) (uint64, error) {
	return cfgstring.Uint(v, 0, math.MaxUint64>>(64-bitSize))
}

// String returns the canonical cfgstring: the keys that differ from what
// ParseConfig would derive, in a fixed order. ParseConfig(c.String())
// gives c back for any valid c, except for settings that have no effect
// and are not written: store_size outside store mode, and lbprz and the
// unmap limits without lbpu/lbpws/lbpws10; a Size from dev_size
// (SizeFromDevSize) is not written either. It stays short, since
// dev_config is limited to 255 bytes.
func (c Config) String() string {
	d := DefaultConfig()
	var b cfgstring.Builder
	add := b.Add
	u := func(n uint64) string { return strconv.FormatUint(n, 10) }
	pb := uint64(1) << (c.PBExp & 31)
	if c.Size != 0 && !c.SizeFromDevSize {
		b.Size("size", c.Size)
	}
	if c.Blocks != 0 {
		add("blocks", u(c.Blocks))
	}
	if c.LBS != d.LBS {
		add("lbs", u(uint64(c.LBS)))
	}
	if c.PBExp != 0 {
		add("pbexp", u(uint64(c.PBExp)))
	}
	if c.LowestAligned != 0 {
		add("lowest_aligned", u(uint64(c.LowestAligned)))
	}
	if c.OptBlocks != d.OptBlocks {
		add("opt_blks", u(uint64(c.OptBlocks)))
	}
	if c.MaxBlocks != 0 {
		add("max_blks", u(uint64(c.MaxBlocks)))
	}
	if uint64(c.OptGran) != pb {
		add("opt_gran", u(uint64(c.OptGran)))
	}
	if c.Mode != d.Mode {
		add("mode", c.Mode.String())
	}
	if c.Mode == ModeStore && c.StoreSize != d.StoreSize {
		b.Size("store_size", c.StoreSize)
	}
	for _, f := range [...]struct {
		k      string
		v, def bool
	}{{"wp", c.WP, d.WP}, {"wce", c.WCE, d.WCE}, {"lbpu", c.LBPU, d.LBPU}, {"lbpws", c.LBPWS, d.LBPWS},
		{"lbpws10", c.LBPWS10, d.LBPWS10}} {
		if f.v != f.def {
			b.Bool(f.k, f.v)
		}
	}
	if c.lbp() {
		if c.LBPRZ != d.LBPRZ {
			b.Bool("lbprz", c.LBPRZ)
		}
		if c.UnmapMaxBlocks != d.UnmapMaxBlocks {
			add("unmap_max_blocks", u(uint64(c.UnmapMaxBlocks)))
		}
		if c.UnmapMaxDesc != d.UnmapMaxDesc {
			add("unmap_max_desc", u(uint64(c.UnmapMaxDesc)))
		}
		if uint64(c.UnmapGran) != pb {
			add("unmap_gran", u(uint64(c.UnmapGran)))
		}
	}
	if c.MaxWSBlocks != d.MaxWSBlocks {
		add("max_ws_blks", u(c.MaxWSBlocks))
	}
	if c.Vendor != d.Vendor {
		add("vendor", c.Vendor)
	}
	if c.Product != d.Product {
		add("product", c.Product)
	}
	if c.Revision != d.Revision {
		add("rev", c.Revision)
	}
	if c.Serial != "" {
		add("serial", c.Serial)
	}
	if c.NAA != 0 {
		add("naa", strconv.FormatUint(c.NAA, 16))
	}
	if c.Rotation != d.Rotation {
		add("rotation", u(uint64(c.Rotation)))
	}
	if c.FormFactor != FormFactorNone {
		add("form_factor", c.FormFactor.String())
	}
	if c.DSense {
		b.Bool("dsense", true)
	}
	if c.Zoned != ZonedNone {
		add("zoned", c.Zoned.String())
		if c.ZoneSize != 0 {
			b.Size("zone_size", c.ZoneSize)
		}
		if c.ZoneNrConv != d.ZoneNrConv {
			add("zone_nr_conv", u(uint64(c.ZoneNrConv)))
		}
		if c.ZoneMaxOpen != d.ZoneMaxOpen {
			add("zone_max_open", u(uint64(c.ZoneMaxOpen)))
		}
		if c.ZoneCap != 0 {
			b.Size("zone_cap", c.ZoneCap)
		}
	}
	if c.AtomicWR {
		b.Bool("atomic_wr", true)
		if c.AtomicMax != d.AtomicMax {
			add("atomic_wr_max_length", u(uint64(c.AtomicMax)))
		}
		if uint64(c.AtomicAlign) != pb {
			add("atomic_wr_align", u(uint64(c.AtomicAlign)))
		}
		if uint64(c.AtomicGran) != pb {
			add("atomic_wr_gran", u(uint64(c.AtomicGran)))
		}
	}
	return b.String()
}
