package disk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/vscsid/vscsid/scsi"
)

// A planned restart hands the disk over to the next daemon
// (target.HandOver). A fake_rw disk needs nothing carried: it reads
// zeros before and after. What else the initiator saw lives only in this
// daemon's memory: the RAM store's data, a zoned disk's zone conditions
// and write pointers, and what MODE SELECT and START STOP UNIT changed
// (write cache, descriptor sense, stopped). SaveHandOver writes it,
// LoadHandOver reads it back into the next daemon's disk of the same
// configuration (target.HandOverCarrier), and ResumeHandOver then
// drops the power-on unit attention.
//
// The format, little-endian, read only by the next build of vscsid on
// the same machine (so no promise beyond the version check):
//
//	header   magic "vscsidHO", version u32, block size u32, blocks u64,
//	         store bytes u64 (0 for fake_rw), zones u32, flags u32
//	zones    per zone: write pointer u64, condition u8, non-sequential u8
//	chunks   per written 64 KiB store chunk: its index u64, its bytes
//	end      index ^0
//
// A device whose state is not carried (none kept, a refused record)
// starts from power-on, with the unit attention that says so.

const (
	handOverMagic   = "vscsidHO"
	handOverVersion = 1
	handOverEnd     = ^uint64(0)

	hoWCE     = 1 << 0
	hoDSense  = 1 << 1
	hoStopped = 1 << 2
)

type handOverHeader struct {
	Magic   [8]byte
	Version uint32
	LBS     uint32
	Blocks  uint64
	Store   uint64
	Zones   uint32
	Flags   uint32
}

type handOverZone struct {
	WP     uint64
	Cond   uint8
	NonSeq uint8
}

// header is the hand-over header of d as it is now.
func (d *Disk) header() handOverHeader {
	h := handOverHeader{Version: handOverVersion, LBS: d.lbs, Blocks: d.blocks}
	copy(h.Magic[:], handOverMagic)
	if d.store != nil {
		h.Store = uint64(d.store.Size())
	}
	if d.zones != nil {
		h.Zones = uint32(len(d.zones.z))
	}
	if d.wce.Load() {
		h.Flags |= hoWCE
	}
	if d.SenseFormat == scsi.DescriptorFormat {
		h.Flags |= hoDSense
	}
	if d.stopped.Load() {
		h.Flags |= hoStopped
	}
	return h
}

// SaveHandOver writes the disk's in-memory state to w (see above), once
// it serves no more commands.
func (d *Disk) SaveHandOver(w io.Writer) error {
	d.applyPending() // a reconfiguration published but not yet applied
	h := d.header()
	le := binary.LittleEndian
	if err := binary.Write(w, le, &h); err != nil {
		return err
	}
	if d.zones != nil {
		for _, z := range d.zones.z {
			rec := handOverZone{WP: z.wp, Cond: z.cond}
			if z.nonSeq {
				rec.NonSeq = 1
			}
			if err := binary.Write(w, le, &rec); err != nil {
				return err
			}
		}
	}
	if d.store != nil {
		var idx [8]byte
		for i, c := range d.store.chunks {
			if c == nil {
				continue
			}
			le.PutUint64(idx[:], uint64(i))
			if _, err := w.Write(idx[:]); err != nil {
				return err
			}
			if _, err := w.Write(c[:]); err != nil {
				return err
			}
		}
	}
	return binary.Write(w, le, handOverEnd)
}

// LoadHandOver reads what SaveHandOver wrote into this disk, built from
// the same configuration and not yet serving. It refuses state of another
// geometry; on any error the disk is left as built.
func (d *Disk) LoadHandOver(r io.Reader) (err error) {
	le := binary.LittleEndian
	var h handOverHeader
	if err := binary.Read(r, le, &h); err != nil {
		return fmt.Errorf("disk hand-over state: header: %w", err)
	}
	want := d.header()
	switch {
	case string(h.Magic[:]) != handOverMagic:
		return errors.New("disk hand-over state: not one (bad magic)")
	case h.Version != handOverVersion:
		return fmt.Errorf("disk hand-over state: version %d, this build reads %d", h.Version, handOverVersion)
	case h.LBS != want.LBS || h.Blocks != want.Blocks || h.Store != want.Store || h.Zones != want.Zones:
		return fmt.Errorf("disk hand-over state: of a disk of %d blocks of %d bytes, store %d, %d zones; this one has %d, %d, %d, %d",
			h.Blocks, h.LBS, h.Store, h.Zones, want.Blocks, want.LBS, want.Store, want.Zones)
	}
	defer func() {
		if err != nil {
			d.powerOnState()
		}
	}()
	if d.zones != nil {
		var rec handOverZone
		for i := range d.zones.z {
			if err := binary.Read(r, le, &rec); err != nil {
				return fmt.Errorf("disk hand-over state: zone %d: %w", i, err)
			}
			z := &d.zones.z[i]
			if err := z.restore(rec); err != nil {
				return fmt.Errorf("disk hand-over state: zone %d: %w", i, err)
			}
		}
		d.zones.recount()
	}
	var idx [8]byte
	for {
		if _, err := io.ReadFull(r, idx[:]); err != nil {
			return fmt.Errorf("disk hand-over state: chunk index: %w", err)
		}
		i := le.Uint64(idx[:])
		if i == handOverEnd {
			break
		}
		if d.store == nil || i >= uint64(len(d.store.chunks)) || d.store.chunks[i] != nil {
			return fmt.Errorf("disk hand-over state: chunk %d out of place", i)
		}
		c := new(storeChunk)
		if _, err := io.ReadFull(r, c[:]); err != nil {
			return fmt.Errorf("disk hand-over state: chunk %d: %w", i, err)
		}
		d.store.chunks[i] = c
		d.store.allocated.Add(storeChunkSize)
	}
	d.wce.Store(h.Flags&hoWCE != 0)
	d.SenseFormat = scsi.FixedFormat
	if h.Flags&hoDSense != 0 {
		d.SenseFormat = scsi.DescriptorFormat
	}
	d.stopped.Store(h.Flags&hoStopped != 0)
	d.carried = true
	return nil
}

// powerOnState undoes a partial LoadHandOver: an empty store and zones
// as built.
func (d *Disk) powerOnState() {
	if d.store != nil {
		_ = d.store.Zero(0, d.store.Size()) // the whole store: in range
	}
	if d.zones != nil {
		d.zones = newZones(d.cfg, d.blocks)
	}
}

// ResumeHandOver is called before the disk serves its first command when
// it takes over from the same disk of a daemon that stopped for a planned
// restart (target.HandOverResumer). The disk is the one the initiator
// used when its state was carried over (LoadHandOver), or when it has
// none (fake_rw, not zoned): the power-on unit attention is dropped.
// Otherwise (a RAM store or zones that were not carried) the disk starts
// empty, and the initiator must know: it keeps it.
func (d *Disk) ResumeHandOver() bool {
	if d.carried || (d.fake && d.zones == nil) {
		d.UA.Clear()
		return true
	}
	return false
}
