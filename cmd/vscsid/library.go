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
	out := control.Library{Name: name, Personality: c.Personality().Name, Serial: c.UnitSerial(),
		Outside: append([]string{}, c.Inventory().Outside...)}
	for _, e := range c.Elements() {
		out.Elements = append(out.Elements, elementOf(e))
	}
	return out, nil
}

// elementOf is an element as the control socket reports it.
func elementOf(e changer.Element) control.Element {
	ce := control.Element{ElementRef: control.ElementRef{Type: e.Type.String(), Index: e.Index}, Address: e.Address,
		Barcode: e.Barcode, ImpExp: e.ImpExp, Device: e.Device}
	if e.Source != nil {
		ce.Source = &control.ElementRef{Type: e.Source.Type.String(), Index: e.Source.Index}
	}
	return ce
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
	return elementOf(changer.Element{Loc: l, Address: c.Address(l), Slot: c.Inventory().Mail[i]}), nil
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
	l := changer.Loc{Type: changer.ImportExport, Index: index}
	return elementOf(changer.Element{Loc: l, Address: c.Address(l), Slot: changer.Slot{Barcode: b}}), nil
}
