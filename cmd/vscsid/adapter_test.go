package main

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/metrics"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/fault"
)

var testUnitReady = &scsi.Command{CDB: scsi.CDB{0x00, 0, 0, 0, 0, 0}, Data: scsi.NewBuffer(nil)}

// adapterFixture builds a disk d0 (a config fault rule) and a memory tape
// drive t0 (a runtime rule, as vscsictl fault adds it) through the real
// factories, chained by chain, and runs a few commands through them.
func adapterFixture(t *testing.T, chain func(fs *faults, hs *handlers, f target.Factory) target.Factory) (*handlers, *faults, *Config) {
	t.Helper()
	cfg := &Config{CmdTimeOut: 60, Devices: []DeviceConfig{{Name: "d0", Fault: &FaultConfig{Rules: []string{"op=read;lba=10+2;sense=medium_error"}}}}}
	fs := newFaults(cfg)
	hs := &handlers{m: map[string]target.Handler{}, tapes: map[string]trackedTape{}}
	log := zaptest.NewLogger(t)
	ctx := context.Background()

	d, err := chain(fs, hs, newDisk)(target.DeviceConfig{Name: "d0", Subtype: "vdisk", Config: "size=1M"}, log)
	if err != nil {
		t.Fatal(err)
	}
	d.HandleCommand(ctx, read10(20)) // the power-on UNIT ATTENTION
	if r := d.HandleCommand(ctx, read10(11)); r.Sense.Key != scsi.MediumError {
		t.Fatalf("READ at LBA 11: %+v, want the injected MEDIUM ERROR", r)
	}
	d.HandleCommand(ctx, read10(20))

	tp, err := chain(fs, hs, newTape)(target.DeviceConfig{Name: "t0", Subtype: "vtape", Config: "memory=1;barcode=VSC001"}, log)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := fs.get("t0")
	if err != nil {
		t.Fatal(err)
	}
	r, err := fault.ParseRule("busy")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fd.AddRule(r); err != nil {
		t.Fatal(err)
	}
	if r := tp.HandleCommand(ctx, testUnitReady); r.Status != scsi.StatusBusy {
		t.Fatalf("TEST UNIT READY with a busy rule: %+v", r)
	}
	return hs, fs, cfg
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

// As serve wires it: handlers records the disk and drive themselves, the
// fault wrappers are in the faults registry.
func TestSnapshotFaultsRegistry(t *testing.T) {
	hs, fs, cfg := adapterFixture(t, func(fs *faults, hs *handlers, f target.Factory) target.Factory { return fs.wrap(hs.wrap(f)) })
	checkAdapted(t, snapshotDevices(adapterStatus(), hs, fs, cfg))

	// Without the registry the disk and tape sections are still there;
	// there is no fault section to give.
	got := snapshotDevices(adapterStatus(), hs, nil, cfg)
	if got[0].Disk == nil || got[1].Tape == nil || got[0].Fault != nil || got[1].Fault != nil {
		t.Errorf("without faults: %+v", got)
	}
}

// If handlers records the wrappers (faultedTape, *fault.Device), the
// adapter looks through them: the disk and tape sections do not vanish, and
// the fault section comes from the wrapper itself.
func TestSnapshotBehindWrapper(t *testing.T) {
	hs, _, cfg := adapterFixture(t, func(fs *faults, hs *handlers, f target.Factory) target.Factory { return hs.wrap(fs.wrap(f)) })
	if _, ok := hs.get("t0").(faultedTape); !ok {
		t.Fatalf("handlers recorded %T for the tape, want the faultedTape wrapper", hs.get("t0"))
	}
	if _, ok := hs.get("d0").(*fault.Device); !ok {
		t.Fatalf("handlers recorded %T for the disk, want *fault.Device", hs.get("d0"))
	}
	checkAdapted(t, snapshotDevices(adapterStatus(), hs, nil, cfg))
}

// What a scrape shows of the adapted snapshot.
func TestSnapshotExposition(t *testing.T) {
	hs, fs, cfg := adapterFixture(t, func(fs *faults, hs *handlers, f target.Factory) target.Factory { return fs.wrap(hs.wrap(f)) })
	c := metrics.NewCollector(metrics.SourceFunc(func() []metrics.Device { return snapshotDevices(adapterStatus(), hs, fs, cfg) }))
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

func TestUnwrapPlainHandler(t *testing.T) {
	h := target.HandlerFunc(func(context.Context, *scsi.Command) scsi.Response { return scsi.Response{} })
	if got, fd := unwrap(h); fd != nil || got == nil {
		t.Errorf("unwrap(plain) = %T, %v", got, fd)
	}
	if got, fd := unwrap(nil); got != nil || fd != nil {
		t.Errorf("unwrap(nil) = %T, %v", got, fd)
	}
}
