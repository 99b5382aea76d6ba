package main

import (
	"fmt"
	"slices"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/cmd/internal/control"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape/changer"
)

// The library's side of the control socket (vscsictl library).

func (d *daemon) library(name string) (*changer.Changer, error) {
	return handlerAs[*changer.Changer](d, name, "is not a library (vlibrary)")
}

// libraryOf returns the library whose drives= names the drive, "" if
// none: such a drive is loaded only through its library.
func (d *daemon) libraryOf(drive string) string {
	for _, ds := range d.tgt.Devices() {
		if c, ok := scsi.As[*changer.Changer](ds.Handler); ok && slices.Contains(c.Drives(), drive) {
			return ds.Info.Name
		}
	}
	return ""
}

// notInLibrary refuses an operator's direct load or unload of a drive
// that belongs to a library: the library's inventory would no longer say
// where the cartridge is.
func (d *daemon) notInLibrary(drive string) error {
	if lib := d.libraryOf(drive); lib != "" {
		return fmt.Errorf("%w: drive %s belongs to library %s: move cartridges with the library (mtx, vscsictl library move %s)", unix.EBUSY, drive, lib, lib)
	}
	return nil
}

// Library lists a library's elements: drives, storage slots, mail slots.
func (d *daemon) Library(name string) (control.Library, error) {
	c, err := d.library(name)
	if err != nil {
		return control.Library{}, err
	}
	inv := c.Inventory()
	drives := c.Drives()
	out := control.Library{Name: name, Personality: c.Personality().Name, Serial: c.UnitSerial(), Outside: append([]string{}, inv.Outside...)}
	for _, t := range [...]changer.ElementType{changer.DataTransfer, changer.Storage, changer.ImportExport} {
		for i, s := range inv.Slots(t) {
			e := elementOf(c, changer.Loc{Type: t, Index: i}, s)
			if t == changer.DataTransfer {
				e.Device = drives[i]
			}
			out.Elements = append(out.Elements, e)
		}
	}
	return out, nil
}

func elementOf(c *changer.Changer, l changer.Loc, s changer.Slot) control.Element {
	e := control.Element{ElementRef: control.ElementRef{Type: l.Type.String(), Index: l.Index}, Address: c.Address(l),
		Barcode: s.Barcode, ImpExp: s.ImpExp}
	if s.Source != nil {
		e.Source = &control.ElementRef{Type: s.Source.Type.String(), Index: s.Source.Index}
	}
	return e
}

func locOf(r control.ElementRef) (changer.Loc, error) {
	var t changer.ElementType
	if err := t.UnmarshalText([]byte(r.Type)); err != nil {
		return changer.Loc{}, fmt.Errorf("%w: %w", unix.EINVAL, err)
	}
	return changer.Loc{Type: t, Index: r.Index}, nil
}

// Move moves a cartridge as the library's front panel does.
func (d *daemon) Move(name string, m control.Move) error {
	c, err := d.library(name)
	if err != nil {
		return err
	}
	src, err := locOf(m.From)
	if err != nil {
		return err
	}
	dst, err := locOf(m.To)
	if err != nil {
		return err
	}
	if err := c.Move(src, dst); err != nil {
		return withErrno(err, unix.EIO)
	}
	d.log.Info("cartridge moved (vscsictl)", zap.String("device", name), zap.Any("from", m.From), zap.Any("to", m.To))
	return nil
}

// Import puts a cartridge of the media directory into a free mail slot.
func (d *daemon) Import(name, barcode string) (control.Element, error) {
	c, err := d.library(name)
	if err != nil {
		return control.Element{}, err
	}
	i, err := c.Import(barcode)
	if err != nil {
		return control.Element{}, withErrno(err, unix.EINVAL)
	}
	l := changer.Loc{Type: changer.ImportExport, Index: i}
	inv := c.Inventory()
	return elementOf(c, l, inv.Mail[i]), nil
}

// Export takes the cartridge out of a mail slot.
func (d *daemon) Export(name string, index int) (control.Element, error) {
	c, err := d.library(name)
	if err != nil {
		return control.Element{}, err
	}
	b, err := c.Export(index)
	if err != nil {
		return control.Element{}, withErrno(err, unix.EINVAL)
	}
	return elementOf(c, changer.Loc{Type: changer.ImportExport, Index: index}, changer.Slot{Barcode: b}), nil
}
