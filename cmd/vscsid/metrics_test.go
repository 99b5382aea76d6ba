package main

import (
	"context"
	"strings"
	"testing"

	"github.com/vscsid/vscsid/cmd/internal/config"
	"github.com/vscsid/vscsid/internal/device"
	"github.com/vscsid/vscsid/metrics"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target"
)

var testUnitReady = &scsi.Command{CDB: scsi.CDB{0x00, 0, 0, 0, 0, 0}, Data: scsi.NewBuffer(nil)}

// metricsFixture builds a disk d0 (a config fault rule) and a memory tape
// drive t0 (a runtime rule, as vscsictl fault adds it) through the real
// factories, runs a few commands through them, and returns their status
// as the Target would give it.
func metricsFixture(t *testing.T) ([]target.DeviceStatus, *config.Config) {
	t.Helper()
	cfg := &config.Config{CmdTimeOut: 60, Devices: []config.Device{{Name: "d0", Type: "vdisk", Config: "size=1M", Fault: &config.Fault{Rules: []string{"op=read;lba=10+2;sense=medium_error"}}}}}
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
	st := []target.DeviceStatus{
		{Info: target.DeviceInfo{DeviceConfig: target.DeviceConfig{Name: "d0", Subtype: "vdisk", HBA: 1, UIO: "uio0"}}},
		{Info: target.DeviceInfo{DeviceConfig: target.DeviceConfig{Name: "t0", Subtype: "vtape", HBA: 2, UIO: "uio1"}}},
	}
	for i := range st {
		st[i].Handler = reg.devs[i].Handler
	}
	return st, cfg
}

// gathered returns the value of every vscsi_ series a registry over c
// gathers, by "name{label=value,...}" with the labels in order.
func gathered(t *testing.T, c *metrics.Collector) map[string]float64 {
	t.Helper()
	reg, err := metrics.NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "vscsi_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			var l []string
			for _, lp := range m.GetLabel() {
				l = append(l, lp.GetName()+"="+lp.GetValue())
			}
			key := mf.GetName() + "{" + strings.Join(l, ",") + "}"
			switch {
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

// The collector finds the disk, the drive and the fault wrapper the real
// factories build behind each device's handler, and reads the config's
// cmd_time_out.
func TestMetricsOfRealDevices(t *testing.T) {
	st, cfg := metricsFixture(t)
	c := metrics.NewCollector(metrics.SourceFunc(func() []target.DeviceStatus { return st }), metricsOptions(cfg))
	got := gathered(t, c)
	for key, want := range map[string]float64{
		"vscsi_disk_capacity_bytes{device=d0}":                      1 << 20,
		"vscsi_tape_medium_info{barcode=VSC001,device=t0}":          1,
		"vscsi_fault_injected_total{action=busy,device=t0,rule=1}":  1,
		"vscsi_fault_injected_total{action=sense,device=d0,rule=1}": 1,
		"vscsi_fault_held_total{device=d0}":                         0,
		"vscsi_fault_held_total{device=t0}":                         0,
		"vscsi_device_command_timeout_seconds{device=d0}":           60,
		"vscsi_device_command_timeout_seconds{device=t0}":           60,
		"vscsi_devices{type=disk}":                                  1,
		"vscsi_devices{type=tape}":                                  1,
		"vscsi_devices{type=changer}":                               0,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", key, v, ok, want)
		}
	}
	// The INQUIRY identification and the type come from the emulations.
	n := 0
	for key := range got {
		if strings.HasPrefix(key, "vscsi_device_info{") {
			n++
			if strings.Contains(key, "vendor=,") || strings.Contains(key, "type=,") {
				t.Errorf("%s: no vendor or type", key)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d vscsi_device_info series, want 2", n)
	}

	// A device whose handler is not one of ours has no disk, tape or
	// fault series, and no panic.
	st[0].Handler = scsi.HandlerFunc(func(context.Context, *scsi.Command) scsi.Response { return scsi.Response{} })
	st[1].Handler = nil
	for key := range gathered(t, c) {
		for _, p := range []string{"vscsi_disk_", "vscsi_tape_", "vscsi_fault_"} {
			if strings.HasPrefix(key, p) {
				t.Errorf("foreign handlers: %s", key)
			}
		}
	}
}
