package main

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/cartridge"
	"github.com/vscsid/vscsid/target"
)

// newTestDrive registers a file-backed drive named tape0 with cartridges
// A1 and B2, A1 loaded.
func newTestDrive(t *testing.T) (*testRegistry, string) {
	t.Helper()
	media := t.TempDir()
	for _, b := range []string{"A1", "B2"} {
		if err := cartridge.Create(media, b, cartridge.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	reg := &testRegistry{}
	reg.add(t, reg.served("vtape"), target.DeviceConfig{Name: "tape0", Subtype: "vtape", Config: "media=" + media + ";barcode=A1"})
	return reg, media
}

func savedBarcode(t *testing.T, media string) string {
	t.Helper()
	lib, err := cartridge.NewLibrary(media)
	if err != nil {
		t.Fatal(err)
	}
	s, ok, err := lib.LoadDriveState("tape0")
	if err != nil || !ok {
		t.Fatalf("no saved drive state: %v", err)
	}
	return s.Barcode
}

func TestChangeMediumOverDBusHandlers(t *testing.T) {
	reg, media := newTestDrive(t)
	hd := dbusHandlers(reg.daemon(t))
	if len(hd) != 3 || hd[0].Subtype != "vdisk" || hd[1].Subtype != "vlibrary" || hd[2].Subtype != "vtape" ||
		hd[0].ChangeMedium != nil || hd[1].ChangeMedium != nil || hd[2].ConfigDesc != tape.ConfigDesc {
		t.Fatalf("handlers %+v", hd)
	}
	if err := hd[0].CheckConfig("size=1G;lbs=4096"); err != nil {
		t.Errorf("CheckConfig of a good vdisk cfgstring: %v", err)
	}
	if err := hd[0].CheckConfig("size=1G;colour=red"); err == nil {
		t.Error("CheckConfig accepted an unknown key")
	}
	// targetcli gives the capacity as the backstore's size=, apart from
	// the cfgstring: a vdisk cfgstring without size is valid there.
	if err := hd[0].CheckConfig("lbs=4096"); err != nil {
		t.Errorf("CheckConfig of a vdisk cfgstring without size: %v", err)
	}
	if err := hd[0].CheckConfig("lbs=999"); err == nil || !strings.Contains(err.Error(), "lbs") {
		t.Errorf("CheckConfig of lbs=999: %v, want an error naming lbs", err)
	}
	vt := hd[2]
	if err := vt.ChangeMedium("tape0", 0, "barcode=B2"); err != nil {
		t.Fatal(err)
	}
	d, _ := reg.daemon(t).drive("tape0")
	if got := d.Stats().Barcode; got != "B2" {
		t.Errorf("drive holds %q after changemedium B2", got)
	}
	if s := savedBarcode(t, media); s != "B2" {
		t.Errorf("saved state %q, want B2", s)
	}
	for _, tc := range []struct {
		dev, cfg string
		errno    unix.Errno
	}{
		{"tape0", "barcode=NOPE", unix.ENOENT},
		{"nodev", "barcode=B2", unix.ENODEV},
		{"tape0", "barcode=bad/name", unix.EINVAL},
	} {
		err := vt.ChangeMedium(tc.dev, 0, tc.cfg)
		var en unix.Errno
		if !errors.As(err, &en) || en != tc.errno {
			t.Errorf("ChangeMedium(%s, %s) = %v, want errno %v", tc.dev, tc.cfg, err, tc.errno)
		}
	}
	if got := d.Stats().Barcode; got != "B2" {
		t.Errorf("a refused changemedium left the drive with %q, want B2 still loaded", got)
	}
	if err := vt.ChangeMedium("tape0", 0, ""); err != nil {
		t.Fatal(err)
	}
	if got := d.Stats().Barcode; got != "" {
		t.Errorf("drive holds %q after changemedium to nothing", got)
	}
	if err := reg.daemon(t).Unload("tape0"); !errors.Is(err, enomedium) {
		t.Errorf("unload of an empty drive: %v, want ENOMEDIUM", err)
	}
}
