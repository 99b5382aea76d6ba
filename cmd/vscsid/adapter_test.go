package main

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

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

	d := reg.add(t, deviceSpec(cfg, cfg.Devices[0], devParams{}).Factory, target.DeviceConfig{Name: "d0", Subtype: "vdisk", Config: "size=1M"})
	d.HandleCommand(ctx, read10(20)) // the power-on UNIT ATTENTION
	if r := d.HandleCommand(ctx, read10(11)); r.Sense.Key != scsi.MediumError {
		t.Fatalf("READ at LBA 11: %+v, want the injected MEDIUM ERROR", r)
	}
	d.HandleCommand(ctx, read10(20))

	tp := reg.add(t, served("vtape"), target.DeviceConfig{Name: "t0", Subtype: "vtape", Config: "memory=1;barcode=VSC001"})
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

// What a scrape shows of the adapted snapshot.
func TestSnapshotExposition(t *testing.T) {
	st, cfg := adapterFixture(t)
	c := metrics.NewCollector(metrics.SourceFunc(func() []metrics.Device { return snapshotDevices(st, cfg) }))
	want := `# HELP vscsi_fault_injected_total Times an installed fault rule applied its action, by rule ID and action.
# TYPE vscsi_fault_injected_total counter
vscsi_fault_injected_total{action="busy",device="t0",rule="1"} 1
vscsi_fault_injected_total{action="sense",device="d0",rule="1"} 1
# HELP vscsi_scsi_sense_codes_total Commands completed with CHECK CONDITION, by additional sense code (a fixed set of names; others are "other").
# TYPE vscsi_scsi_sense_codes_total counter
vscsi_scsi_sense_codes_total{asc="power_on_reset_or_bus_device_reset",device="d0"} 1
vscsi_scsi_sense_codes_total{asc="unrecovered_read_error",device="d0"} 1
# HELP vscsi_fault_held_total Commands a timeout rule held without completing them (the kernel times them out).
# TYPE vscsi_fault_held_total counter
vscsi_fault_held_total{device="d0"} 0
vscsi_fault_held_total{device="t0"} 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want),
		"vscsi_fault_injected_total", "vscsi_scsi_sense_codes_total", "vscsi_fault_held_total"); err != nil {
		t.Error(err)
	}
	if probs, err := testutil.CollectAndLint(c); err != nil || len(probs) > 0 {
		t.Errorf("lint: %v %+v", err, probs)
	}
}
