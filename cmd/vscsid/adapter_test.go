package main

import (
	"context"
	"testing"

	"github.com/vscsid/vscsid/internal/device"
	"github.com/vscsid/vscsid/metrics"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/fault"
)

var testUnitReady = &scsi.Command{CDB: scsi.CDB{0x00, 0, 0, 0, 0, 0}, Data: scsi.NewBuffer(nil)}

// adapterFixture builds a disk d0 (a config fault rule) and a memory tape
// drive t0 (a runtime rule, as vscsictl fault adds it) through the real
// factories, runs a few commands through them, and returns their status
// as the Target would give it.
func adapterFixture(t *testing.T) ([]target.DeviceStatus, *Config) {
	t.Helper()
	cfg := &Config{CmdTimeOut: 60, Devices: []DeviceConfig{{Name: "d0", Type: "vdisk", Config: "size=1M", Fault: &FaultConfig{Rules: []string{"op=read;lba=10+2;sense=medium_error"}}}}}
	reg := &testRegistry{}
	ctx := context.Background()

	d := reg.add(t, deviceSpec(cfg, nil, cfg.Devices[0], device.Params{}).Factory, target.DeviceConfig{Name: "d0", Subtype: "vdisk", Config: "size=1M"})
	d.HandleCommand(ctx, read10(20)) // the power-on UNIT ATTENTION
	if r := d.HandleCommand(ctx, read10(11)); r.Sense.Key != scsi.MediumError {
		t.Fatalf("READ at LBA 11: %+v, want the injected MEDIUM ERROR", r)
	}
	d.HandleCommand(ctx, read10(20))

	tp := reg.add(t, reg.served("vtape"), target.DeviceConfig{Name: "t0", Subtype: "vtape", Config: "memory=1;barcode=VSC001"})
	if _, err := reg.daemon(t).AddFault("t0", "busy"); err != nil {
		t.Fatal(err)
	}
	if r := tp.HandleCommand(ctx, testUnitReady); r.Status != scsi.StatusBusy {
		t.Fatalf("TEST UNIT READY with a busy rule: %+v", r)
	}
	st := adapterStatus()
	for i := range st {
		st[i].Handler = reg.devs[i].Handler
	}
	return st, cfg
}

func adapterStatus() []target.DeviceStatus {
	d := target.DeviceStatus{Info: target.DeviceInfo{DeviceConfig: target.DeviceConfig{Name: "d0", Subtype: "vdisk", HBA: 1, UIO: "uio0"}}}
	d.Stats.CheckConditions[scsi.MediumError] = 1
	d.Stats.SenseCodes = []target.SenseCode{{ASC: 0x1100, Count: 1}, {ASC: 0x2900, Count: 1}}
	tp := target.DeviceStatus{Info: target.DeviceInfo{DeviceConfig: target.DeviceConfig{Name: "t0", Subtype: "vtape", HBA: 2, UIO: "uio1"}}}
	return []target.DeviceStatus{d, tp}
}

func checkAdapted(t *testing.T, got []metrics.Device) {
	t.Helper()
	if len(got) != 2 {
		t.Fatalf("%d devices, want 2", len(got))
	}
	d, tp := got[0], got[1]
	if d.Disk == nil || d.Disk.Blocks != 2048 || d.Tape != nil {
		t.Errorf("d0: Disk %+v, Tape %+v; want a 2048-block disk", d.Disk, d.Tape)
	}
	if d.Vendor == "" || d.Product == "" {
		t.Errorf("d0: no INQUIRY identification (%q %q)", d.Vendor, d.Product)
	}
	if tp.Tape == nil || !tp.Tape.Loaded || tp.Tape.Barcode != "VSC001" || tp.Disk != nil {
		t.Errorf("t0: Tape %+v, Disk %+v; want a loaded tape VSC001", tp.Tape, tp.Disk)
	}
	wantD := []metrics.FaultRule{{ID: 1, Action: "sense", Matched: 1, Injected: 1}}
	if d.Fault == nil || !equalRules(d.Fault.Rules, wantD) {
		t.Errorf("d0 fault %+v, want rules %+v", d.Fault, wantD)
	}
	wantT := []metrics.FaultRule{{ID: 1, Action: "busy", Matched: 1, Injected: 1}}
	if tp.Fault == nil || !equalRules(tp.Fault.Rules, wantT) {
		t.Errorf("t0 fault %+v, want rules %+v", tp.Fault, wantT)
	}
	for _, md := range got {
		if md.Fault != nil && (len(md.Fault.Delays.Bounds) != len(fault.DelayBounds) || len(md.Fault.Delays.Counts) != len(fault.DelayBounds)+1) {
			t.Errorf("%s: delay histogram %+v", md.Name, md.Fault.Delays)
		}
		if md.Fault != nil && md.Fault.Held != 0 {
			t.Errorf("%s: %d commands held, want 0", md.Name, md.Fault.Held)
		}
	}
	wantSC := []metrics.SenseCode{{Code: 0x1100, Count: 1}, {Code: 0x2900, Count: 1}}
	if sc := d.Transport.SenseCodes; len(sc) != 2 || sc[0] != wantSC[0] || sc[1] != wantSC[1] {
		t.Errorf("d0 sense codes %+v, want %+v", sc, wantSC)
	}
}

func equalRules(a, b []metrics.FaultRule) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The adapter finds the disk, the drive and the fault wrapper behind
// each device's handler, whatever the order of the wrappers.
func TestSnapshotDevices(t *testing.T) {
	st, cfg := adapterFixture(t)
	checkAdapted(t, snapshotDevices(st, cfg))

	// A device whose handler is not one of ours has no disk, tape or
	// fault section, and no panic.
	st[0].Handler = target.HandlerFunc(func(context.Context, *scsi.Command) scsi.Response { return scsi.Response{} })
	st[1].Handler = nil
	got := snapshotDevices(st, cfg)
	if got[0].Disk != nil || got[1].Tape != nil || got[0].Fault != nil || got[1].Fault != nil {
		t.Errorf("foreign handlers: %+v", got)
	}
}
