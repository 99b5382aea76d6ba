package disk

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vscsid/vscsid/internal/cfgstring"
	"github.com/vscsid/vscsid/scsi"
)

// Live reconfiguration: the transport (target's RECONFIG_DEVICE handling)
// calls Resize, SetWriteCache and Reconfigure from its event goroutine
// while commands run. They validate under reMu and publish what changes;
// the command goroutine applies it before its next command (one atomic
// load per command when nothing is pending), so the command path stays
// lock-free and the geometry of a command never changes under it.

// Bits of Disk.pending.
const (
	pendCapacity uint32 = 1 << iota // geo holds a new capacity
	pendMode                        // a mode parameter changed: UA 2A/01
)

// geometry is a capacity accepted by Resize or Reconfigure.
type geometry struct {
	blocks uint64 // capacity in logical blocks
	wrap   int64  // bytes of backend the capacity maps onto (store in use)
}

// Resize sets the capacity to size bytes: the backstore's attrib/dev_size
// was written (scsi.Resizer). Only a disk whose capacity is dev_size
// (a cfgstring without size= or blocks=, as targetcli creates it; see
// Config.SizeFromDevSize) follows it; size must be a non-zero multiple of
// the logical block size. The next command gets UNIT ATTENTION, CAPACITY
// DATA HAS CHANGED (SBC-4 4.11; sd re-reads the capacity on a rescan).
//
// In store mode the store grows with the capacity up to store_size, past
// which the capacity wraps across it as at creation; shrinking discards
// the data past the new end, and blocks added later read zeros (except
// where the capacity wraps). In fake_rw mode only the capacity changes.
func (d *Disk) Resize(size uint64) error {
	d.reMu.Lock()
	defer d.reMu.Unlock()
	c := d.live
	if !c.SizeFromDevSize {
		return fmt.Errorf("dev_size: the capacity is set by the cfgstring's %s, not by dev_size: change it in dev_config", capacityKey(c))
	}
	if c.Zoned != ZonedNone {
		return errors.New("dev_size: a zoned disk keeps its capacity (its zones are laid out at creation): create a new backstore")
	}
	if size < uint64(c.LBS) || size%uint64(c.LBS) != 0 {
		return fmt.Errorf("dev_size: %d is not a non-zero multiple of the %d-byte logical block", size, c.LBS)
	}
	c.Size = size
	if err := c.Validate(); err != nil {
		return fmt.Errorf("dev_size: %w", err)
	}
	d.setCapacity(c)
	return nil
}

// SetWriteCache sets the WCE bit of the caching mode page, as
// attrib/emulate_write_cache was written (scsi.WriteCacher). MODE
// SELECT changes the same bit; a change made here raises UNIT ATTENTION,
// MODE PARAMETERS CHANGED (SPC-5 5.14: the parameters changed through
// another channel than this I_T nexus). The default and saved values stay
// the cfgstring's wce=.
func (d *Disk) SetWriteCache(enabled bool) error {
	d.reMu.Lock()
	defer d.reMu.Unlock()
	if d.wce.Swap(enabled) != enabled {
		d.pending.Or(pendMode)
	}
	return nil
}

// Reconfigure takes a new cfgstring for the live disk: attrib/dev_config
// was written (scsi.Reconfigurer). It is parsed as strictly as at
// creation, and only the capacity may change (size= or blocks=, resized
// as by Resize): every other key fixes the geometry or identity the
// kernel and the initiator have already read, so changing it needs a new
// backstore, and the error says which keys differ. A cfgstring without
// size= and blocks= keeps a capacity that came from dev_size; it cannot
// drop a size= the disk was made with.
func (d *Disk) Reconfigure(cfgstring string) error {
	c, err := ParseConfig(cfgstring)
	if err != nil {
		return err
	}
	d.reMu.Lock()
	defer d.reMu.Unlock()
	cur := d.live
	if !c.HasSize() {
		if !cur.SizeFromDevSize {
			return fmt.Errorf("size: the capacity is the cfgstring's %s; a live disk cannot switch to dev_size (give size= or blocks=)", capacityKey(cur))
		}
		c = c.WithDefaultSize(cur.Size)
	}
	if cur.Zoned != ZonedNone && c.Capacity() != cur.Capacity() {
		return errors.New("size: a zoned disk keeps its capacity (its zones are laid out at creation): create a new backstore")
	}
	if ks := changedKeys(cur, c); len(ks) > 0 {
		return fmt.Errorf("%s: cannot change on a live disk (only size= and blocks= can): create a new backstore", strings.Join(ks, ", "))
	}
	d.setCapacity(c)
	return nil
}

// setCapacity makes c (valid, same geometry but for the capacity) the
// configuration in force and publishes its capacity. Under reMu.
func (d *Disk) setCapacity(c Config) {
	d.live = c
	blocks := c.Capacity()
	if blocks == d.geo.Load().blocks {
		return
	}
	g := &geometry{blocks: blocks, wrap: int64(blocks) << d.shift}
	if d.store != nil {
		g.wrap = min(d.storeMax, g.wrap)
	}
	d.geo.Store(g)
	d.pending.Or(pendCapacity)
}

// applyPending runs on the command goroutine: it takes the capacity last
// accepted and queues the unit attentions of the changes.
func (d *Disk) applyPending() {
	p := d.pending.Swap(0)
	if p&pendCapacity != 0 {
		if g := d.geo.Load(); g.blocks != d.blocks {
			d.blocks = g.blocks
			if d.store != nil {
				d.store.resize(g.wrap)
			}
			d.wrap, d.wrapBlk = g.wrap, uint64(g.wrap>>d.shift)
			d.UA.Add(scsi.CapacityDataHasChanged)
		}
	}
	if p&pendMode != 0 {
		d.UA.Add(scsi.ModeParametersChanged)
	}
}

// capacityKey is how c's cfgstring gives the capacity, for messages.
func capacityKey(c Config) string {
	if c.Blocks != 0 {
		return fmt.Sprintf("blocks=%d", c.Blocks)
	}
	return "size=" + cfgstring.FormatSize(c.Size)
}

// changedKeys lists the cfgstring keys other than the capacity in which a
// and b differ, in canonical order.
func changedKeys(a, b Config) []string {
	a.Size, a.Blocks, a.SizeFromDevSize = 0, 0, false
	b.Size, b.Blocks, b.SizeFromDevSize = 0, 0, false
	if a == b {
		return nil
	}
	pairs := func(c Config) map[string]string {
		m := map[string]string{}
		pairs, _ := cfgstring.Split(c.String()) // canonical: splits
		for _, p := range pairs {
			m[p.Key] = p.Value
		}
		return m
	}
	pa, pb := pairs(a), pairs(b)
	var ks []string
	for _, k := range keys {
		if pa[k] != pb[k] {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		// A difference String does not show (a setting without effect).
		return []string{"cfgstring"}
	}
	return ks
}
