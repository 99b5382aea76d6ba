package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/cmd/internal/control"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target"
)

// TestLibraryThroughDaemon: a vlibrary built by the daemon's factory
// finds the vtape drives of the same registry by name, the operator's
// moves load them, and a direct load of a library drive is refused with a
// message naming the library.
func TestLibraryThroughDaemon(t *testing.T) {
	media := t.TempDir()
	reg := &testRegistry{}
	reg.add(t, reg.served("vtape"), target.DeviceConfig{Name: "tape0", Subtype: "vtape", Config: "media=" + media})
	lib := reg.add(t, reg.served("vlibrary"), target.DeviceConfig{Name: "lib0", Subtype: "vlibrary",
		Config: "media=" + media + ";slots=4;mailslots=1;drives=tape0;cartridges=3;first=E01001L8;capacity=4M"})
	d := reg.daemon(t)

	l, err := d.Library("lib0")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Elements) != 6 || l.Elements[0].Device != "tape0" || l.Elements[0].Address != 1 || l.Elements[1].Barcode != "E01001L8" ||
		l.Elements[3].Barcode != "E01003L8" || l.Elements[5].Type != "mail" || l.Elements[5].Address != 0x10 {
		t.Fatalf("Library = %+v", l)
	}
	if err := d.Move("lib0", control.Move{From: control.ElementRef{Type: "storage", Index: 1}, To: control.ElementRef{Type: "drive"}}); err != nil {
		t.Fatalf("Move: %v", err)
	}
	devs := d.Devices()
	if devs[0].Barcode != "E01002L8" || devs[1].Type != "changer" || devs[1].Subtype != "vlibrary" {
		t.Fatalf("Devices = %+v", devs)
	}
	for _, err := range []error{d.Load("tape0", "E01001L8"), d.Unload("tape0"), d.changeMedium("tape0", "", "targetcli changemedium")} {
		if !errors.Is(err, unix.EBUSY) || !strings.Contains(err.Error(), "belongs to library lib0") {
			t.Errorf("direct load of a library drive: %v", err)
		}
	}
	for _, tc := range []struct {
		m     control.Move
		errno unix.Errno
		want  string
	}{
		{control.Move{From: control.ElementRef{Type: "storage", Index: 0}, To: control.ElementRef{Type: "drive"}}, unix.EBUSY, "0x3b/0x0d (MEDIUM DESTINATION ELEMENT FULL)"},
		{control.Move{From: control.ElementRef{Type: "storage", Index: 1}, To: control.ElementRef{Type: "mail"}}, unix.ENOENT, "0x3b/0x0e (MEDIUM SOURCE ELEMENT EMPTY)"},
		{control.Move{From: control.ElementRef{Type: "storage", Index: 9}, To: control.ElementRef{Type: "mail"}}, unix.EINVAL, "no such element"},
		{control.Move{From: control.ElementRef{Type: "slot", Index: 0}, To: control.ElementRef{Type: "mail"}}, unix.EINVAL, "want transport, storage, mail or drive"},
	} {
		if err := d.Move("lib0", tc.m); !errors.Is(err, tc.errno) || !strings.Contains(strings.ToUpper(err.Error()), strings.ToUpper(tc.want)) {
			t.Errorf("Move %+v: %v, want %v containing %q", tc.m, err, tc.errno, tc.want)
		}
	}
	if _, err := d.Library("tape0"); !errors.Is(err, unix.ENOTSUP) {
		t.Errorf("Library of a drive: %v", err)
	}
	// Back out through the mail slot, exported, imported again.
	if err := d.Move("lib0", control.Move{From: control.ElementRef{Type: "drive"}, To: control.ElementRef{Type: "mail"}}); err != nil {
		t.Fatal(err)
	}
	if e, err := d.Export("lib0", 0); err != nil || e.Barcode != "E01002L8" {
		t.Fatalf("Export = %+v, %v", e, err)
	}
	if _, err := d.Export("lib0", 0); !errors.Is(err, unix.ENOENT) {
		t.Errorf("Export of an empty mail slot: %v", err)
	}
	if l, _ := d.Library("lib0"); len(l.Outside) != 1 || l.Outside[0] != "E01002L8" {
		t.Errorf("Outside = %v", l.Outside)
	}
	if e, err := d.Import("lib0", "E01002L8"); err != nil || !e.ImpExp || e.Address != 0x10 {
		t.Fatalf("Import = %+v, %v", e, err)
	}
	if _, err := d.Import("lib0", "E01001L8"); !errors.Is(err, unix.EEXIST) {
		t.Errorf("Import of a cartridge in the library: %v", err)
	}
	// The changer answers through the fault wrapper the daemon put it in.
	r := lib.HandleCommand(context.Background(), &scsi.Command{CDB: scsi.CDB{0, 0, 0, 0, 0, 0}})
	if r.Status != scsi.StatusCheckCondition || r.Sense.Key != scsi.UnitAttention {
		t.Errorf("first command: %+v, want the power-on unit attention", r)
	}
}
