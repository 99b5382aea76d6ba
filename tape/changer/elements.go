package changer

import (
	"encoding/binary"
	"slices"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
)

// Element addresses: each type's elements are numbered from the
// personality's first address of that type, in index order.

// base is the first element address of type t.
func (c *Changer) base(t ElementType) uint16 {
	switch t {
	case Transport:
		return c.pers.Transport
	case Storage:
		return c.pers.Storage
	case ImportExport:
		return c.pers.Mail
	case DataTransfer:
		return c.pers.Drive
	}
	return 0
}

// count is the number of elements of type t.
func (c *Changer) count(t ElementType) int {
	switch t {
	case Transport:
		return 1
	case Storage:
		return c.cfg.Slots
	case ImportExport:
		return c.cfg.MailSlots
	case DataTransfer:
		return len(c.cfg.Drives)
	}
	return 0
}

// lookup returns the element at address addr.
func (c *Changer) lookup(addr uint16) (Loc, bool) {
	for _, t := range c.order {
		if b := c.base(t); addr >= b && int(addr-b) < c.count(t) {
			return Loc{t, int(addr - b)}, true
		}
	}
	return Loc{}, false
}

// Address returns the SCSI element address of l in this personality.
func (c *Changer) Address(l Loc) uint16 { return c.addr(l) }

// An Element is one element of the library as its operator sees it: where
// it is, its SCSI address, what it holds and, for a data transfer element,
// the drive device behind it (Config.Drives).
type Element struct {
	Loc
	Address uint16
	Slot
	Device string
}

// Elements lists the library's elements that hold cartridges, drives
// first, then storage slots, then mail slots, each in index order (the
// transport holds none between moves).
func (c *Changer) Elements() []Element {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Element
	for _, t := range [...]ElementType{DataTransfer, Storage, ImportExport} {
		for i, s := range c.inv.slots(t) {
			e := Element{Loc: Loc{Type: t, Index: i}, Slot: s}
			e.Address = c.addr(e.Loc)
			if t == DataTransfer {
				e.Device = c.cfg.Drives[i]
			}
			out = append(out, e)
		}
	}
	return out
}

// addr is the element address of l.
func (c *Changer) addr(l Loc) uint16 { return c.base(l.Type) + uint16(l.Index) }

// slot returns what element l holds (nil for the transport, always empty).
func (c *Changer) slot(l Loc) *Slot {
	if s := c.inv.slots(l.Type); l.Index < len(s) {
		return &s[l.Index]
	}
	return nil
}

// Element status descriptor fields (SMC-3 6.11.4).
const (
	flagFull     = 0x01
	flagImpExp   = 0x02 // import/export: placed by the operator
	flagAccess   = 0x08
	flagExEnab   = 0x10 // import/export: export supported
	flagInEnab   = 0x20 // import/export: import supported
	notBus       = 0x80 // byte 6, data transfer: the drive is not on the changer's bus
	sValid       = 0x80 // byte 9
	typeCleaning = 0x02 // byte 9 MEDIUM TYPE (bits 2-0): cleaning medium
	pVolTag      = 0x80 // element status page byte 1
	volTagLen    = 36
	codeSetASCII = 0x2
)

// descLen is the ELEMENT DESCRIPTOR LENGTH of a page of type t: 12 bytes,
// the primary volume tag if asked for, and the 4-byte device identifier
// header (reserved but for data transfer elements with DVCID), then the
// identifier itself.
func (c *Changer) descLen(t ElementType, voltag, dvcid bool) int {
	n := 12 + 4
	if voltag {
		n += volTagLen
	}
	if dvcid && t == DataTransfer {
		n += c.pers.dvcidLen()
	}
	return n
}

// appendDescriptor appends the element descriptor of l.
func (c *Changer) appendDescriptor(b []byte, l Loc, voltag, dvcid bool) []byte {
	var s Slot
	if p := c.slot(l); p != nil {
		s = *p
	}
	var d Drive
	if l.Type == DataTransfer {
		d, _ = c.drive(l.Index)
	}
	var h [12]byte
	binary.BigEndian.PutUint16(h[0:], c.addr(l))
	switch l.Type {
	case Storage:
		h[2] = flagAccess
	case ImportExport:
		h[2] = flagInEnab | flagExEnab
		if !c.mailOpen {
			h[2] |= flagAccess
		}
		if s.ImpExp {
			h[2] |= flagImpExp
		}
	case DataTransfer:
		// In strict mode the transport cannot take a loaded cartridge.
		if c.cfg.AutoUnload || d == nil || d.Stats().Barcode == "" {
			h[2] = flagAccess
		}
		// Each drive is its own LIO device, on a SCSI host of its own
		// (tcm_loop) or on another iSCSI target: never on the changer's
		// bus. Saying so (rather than ID and LUN unknown) is what a
		// fabric-attached library reports; ch then binds no drive, as
		// with unknown, and its probe says "not this SCSI bus".
		h[6] = notBus
	}
	if s.Barcode != "" {
		h[2] |= flagFull
		if tape.IsCleaningCartridge(s.Barcode) {
			h[9] = typeCleaning
		}
		if s.Source != nil {
			h[9] |= sValid
			binary.BigEndian.PutUint16(h[10:], c.addr(*s.Source))
		}
	}
	b = append(b, h[:]...)
	if voltag {
		b = appendVolTag(b, s.Barcode)
	}
	if !dvcid || l.Type != DataTransfer {
		return append(b, 0, 0, 0, 0)
	}
	typ := byte(0) // serial number only
	if c.pers.DVCID == DVCIDVendorSerial {
		typ = 1 // T10 vendor ID based
	}
	b = append(b, codeSetASCII, typ, 0, byte(c.pers.dvcidLen()))
	var vendor, product, serial string
	if d != nil {
		p := d.Personality()
		vendor, product, serial = p.Vendor, p.Product, d.UnitSerial()
	}
	if c.pers.DVCID == DVCIDVendorSerial {
		b = appendPadded(b, vendor, 8)
		b = appendPadded(b, product, 16)
	}
	return appendPadded(b, serial, c.pers.SerialLen)
}

// appendVolTag appends the 36-byte primary volume tag information (SMC-3
// 6.11.5): the barcode space-padded to 32 bytes, 2 reserved bytes and a
// volume sequence number of 0; all zeros for an empty element.
func appendVolTag(b []byte, barcode string) []byte {
	if barcode == "" {
		for range volTagLen {
			b = append(b, 0)
		}
		return b
	}
	b = appendPadded(b, barcode, 32)
	return append(b, 0, 0, 0, 0)
}

// appendPadded appends v truncated or space-padded to n bytes, with
// anything but printable ASCII replaced by '?' (scsi.PutASCII).
func appendPadded(b []byte, v string, n int) []byte {
	b = slices.Grow(b, n)[:len(b)+n]
	scsi.PutASCII(b[len(b)-n:], v)
	return b
}
