package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/cmd/internal/config"
	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/internal/device"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target"
)

func TestFaultConfig(t *testing.T) {
	good := `cmd_time_out: 60
devices:
  - name: d0
    type: vdisk
    config: "size=1M"
    fault:
      seed: 7
      timing: "latency=1ms"
      rules: ["op=read;lba=10+2;sense=medium_error", "every=100;busy"]
`
	c, err := config.Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if f := c.Devices[0].Fault; f == nil || f.Seed != 7 || f.Timing != "latency=1ms" || len(f.Rules) != 2 {
		t.Fatalf("fault block %+v", c.Devices[0].Fault)
	}
	for _, tc := range []struct{ old, new, want string }{
		{`sense=medium_error"`, `sense=nonsense"`, "fault rules[0]"},
		{`latency=1ms`, `latency=fast`, "fault timing"},
		{`rules:`, `rule:`, `unknown key "rule" in fault (did you mean "rules"?)`},
	} {
		bad := strings.Replace(good, tc.old, tc.new, 1)
		if _, err := config.Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s → %s: %v, want an error about %q", tc.old, tc.new, err, tc.want)
		}
	}
}

func read10(lba uint32) *scsi.Command {
	cdb := scsi.CDB{0x28, 0, byte(lba >> 24), byte(lba >> 16), byte(lba >> 8), byte(lba), 0, 0, 1, 0}
	return &scsi.Command{CDB: cdb, Data: scsi.NewBuffer(make([]byte, 512))}
}

func TestFaultWrapper(t *testing.T) {
	cfg := &config.Config{CmdTimeOut: 60, Devices: []config.Device{{Name: "d0", Type: "vdisk", Config: "size=1M", Fault: &config.Fault{Rules: []string{"op=read;lba=10+2;sense=medium_error"}}}}}
	reg := &testRegistry{}
	h := reg.add(t, deviceSpec(cfg, nil, cfg.Devices[0], device.Params{}).Factory, target.DeviceConfig{Name: "d0", Subtype: "vdisk", Config: "size=1M"})
	ctx := context.Background()
	h.HandleCommand(ctx, read10(20)) // takes the power-on UNIT ATTENTION
	if r := h.HandleCommand(ctx, read10(11)); r.Status != scsi.StatusCheckCondition || r.Sense.Key != scsi.MediumError {
		t.Errorf("READ at LBA 11: %+v, want the configured MEDIUM ERROR", r)
	}
	if r := h.HandleCommand(ctx, read10(20)); r.Status != scsi.StatusGood {
		t.Errorf("READ at LBA 20: %+v", r)
	}
	if fd, _ := reg.daemon(t).faults("d0"); fd.MaxDelay() != 59*time.Second {
		t.Errorf("delay cap %v, want cmd_time_out 60 s minus 1 s", fd.MaxDelay())
	}
	// The metrics still see the disk itself.
	if _, ok := scsi.As[*disk.Disk](h); !ok {
		t.Errorf("no disk behind %T", h)
	}

	// Runtime rules, on a device made with targetcli (no fault block, the
	// kernel's cmd_time_out).
	h2 := reg.add(t, reg.served("vdisk"), target.DeviceConfig{Name: "tc0", Subtype: "vdisk", Config: "size=1M"})
	if fd, _ := reg.daemon(t).faults("tc0"); fd.MaxDelay() != 29*time.Second {
		t.Errorf("targetcli device's delay cap %v, want the kernel's 30 s minus 1 s", fd.MaxDelay())
	}
	id, err := reg.daemon(t).AddFault("tc0", "op=read;busy")
	if err != nil {
		t.Fatal(err)
	}
	if r := h2.HandleCommand(ctx, read10(0)); r.Status != scsi.StatusBusy {
		t.Errorf("READ after fault add busy: %+v", r)
	}
	l, err := reg.daemon(t).Faults("tc0")
	if err != nil || len(l.Rules) != 1 || l.Rules[0].ID != id || l.Rules[0].Injected != 1 || l.Rules[0].Action != "busy" {
		t.Errorf("list: %+v %v", l, err)
	}
	if err := reg.daemon(t).RemoveFault("tc0", id); err != nil {
		t.Fatal(err)
	}
	if err := reg.daemon(t).RemoveFault("tc0", id); !errors.Is(err, unix.ENOENT) {
		t.Errorf("second remove: %v", err)
	}
	if _, err := reg.daemon(t).AddFault("tc0", "sense=bogus"); !errors.Is(err, unix.EINVAL) {
		t.Errorf("bad rule: %v", err)
	}
	if err := reg.daemon(t).SetTiming("tc0", "latency=1ms"); err != nil {
		t.Fatal(err)
	}
	if l, _ := reg.daemon(t).Faults("tc0"); l.Timing != "latency=1ms" {
		t.Errorf("timing %q", l.Timing)
	}
	if _, err := reg.daemon(t).Faults("nope"); !errors.Is(err, unix.ENODEV) {
		t.Errorf("unknown device: %v", err)
	}
	// A rule the device cannot take (a tape filter on a disk) fails the
	// device at creation, with the reason.
	cfg.Devices[0].Fault.Rules = []string{"file=1;busy"}
	if _, err := deviceSpec(cfg, nil, cfg.Devices[0], device.Params{}).Factory(target.DeviceConfig{Name: "d0", Subtype: "vdisk", Config: "size=1M"}, zaptest.NewLogger(t)); err == nil {
		t.Error("a tape rule was accepted on a disk")
	}
}

// A device that was deleted is gone for vscsictl fault too: no stale
// wrapper answers "rule added" for it.
func TestFaultOnDeletedDevice(t *testing.T) {
	reg := &testRegistry{}
	reg.add(t, reg.served("vdisk"), target.DeviceConfig{Name: "d0", Subtype: "vdisk", Config: "size=1M"})
	if _, err := reg.daemon(t).AddFault("d0", "busy"); err != nil {
		t.Fatal(err)
	}
	if err := reg.Remove("d0"); err != nil {
		t.Fatal(err)
	}
	if id, err := reg.daemon(t).AddFault("d0", "busy"); !errors.Is(err, unix.ENODEV) || !strings.Contains(err.Error(), `no device "d0"`) {
		t.Errorf("fault add on a deleted device = %d, %v; want ENODEV saying no device \"d0\"", id, err)
	}
	for name, f := range map[string]func() error{
		"list":   func() error { _, err := reg.daemon(t).Faults("d0"); return err },
		"clear":  func() error { return reg.daemon(t).ClearFaults("d0") },
		"timing": func() error { return reg.daemon(t).SetTiming("d0", "latency=1ms") },
	} {
		if err := f(); !errors.Is(err, unix.ENODEV) {
			t.Errorf("fault %s on a deleted device: %v; want ENODEV", name, err)
		}
	}
}

func TestFaultWrapperKeepsTapeReset(t *testing.T) {
	reg := &testRegistry{}
	h := reg.add(t, reg.served("vtape"), target.DeviceConfig{Name: "t0", Subtype: "vtape", Config: "memory=1;barcode=M1"})
	rs, ok := scsi.As[scsi.Resetter](h)
	if !ok {
		t.Fatalf("%T hides the drive's Reset from the transport", h)
	}
	// The reset reaches the drive: it reports 29/00 again.
	ctx := context.Background()
	for range 3 {
		h.HandleCommand(ctx, testUnitReady)
	}
	rs.Reset()
	if r := h.HandleCommand(ctx, testUnitReady); r.Sense.Key != scsi.UnitAttention || r.Sense.ASC != scsi.PowerOnResetOrBusDeviceReset {
		t.Errorf("TEST UNIT READY after a LUN reset through the wrapper: %+v, want UNIT ATTENTION 29/00", r)
	}
	// Position rules bind: the wrapper asks the drive where it is.
	if _, err := reg.daemon(t).AddFault("t0", "op=read;file=1;block=10+2;sense=medium_error"); err != nil {
		t.Errorf("tape position rule: %v", err)
	}
}
