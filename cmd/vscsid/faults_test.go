package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"

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
	c, err := parseConfig([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if f := c.Devices[0].Fault; f == nil || f.Seed != 7 || f.Timing != "latency=1ms" || len(f.Rules) != 2 {
		t.Fatalf("fault block %+v", c.Devices[0].Fault)
	}
	for _, tc := range []struct{ old, new, want string }{
		{`sense=medium_error"`, `sense=nonsense"`, "fault rules[0]"},
		{`latency=1ms`, `latency=fast`, "fault timing"},
		{`rules:`, `rule:`, "field rule not found in fault"},
	} {
		bad := strings.Replace(good, tc.old, tc.new, 1)
		if _, err := parseConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s → %s: %v, want an error about %q", tc.old, tc.new, err, tc.want)
		}
	}
}

func read10(lba uint32) *scsi.Command {
	cdb := scsi.CDB{0x28, 0, byte(lba >> 24), byte(lba >> 16), byte(lba >> 8), byte(lba), 0, 0, 1, 0}
	return &scsi.Command{CDB: cdb, Data: scsi.NewBuffer(make([]byte, 512))}
}

func TestFaultWrapper(t *testing.T) {
	cfg := &Config{CmdTimeOut: 60, Devices: []DeviceConfig{{Name: "d0", Fault: &FaultConfig{Rules: []string{"op=read;lba=10+2;sense=medium_error"}}}}}
	fs := newFaults(cfg)
	hs := &handlers{m: map[string]target.Handler{}, tapes: map[string]trackedTape{}}
	log := zaptest.NewLogger(t)
	f := fs.wrap(hs.wrap(newDisk))
	h, err := f(target.DeviceConfig{Name: "d0", Subtype: "vdisk", Config: "size=1M"}, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h.HandleCommand(ctx, read10(20)) // takes the power-on UNIT ATTENTION
	if r := h.HandleCommand(ctx, read10(11)); r.Status != scsi.StatusCheckCondition || r.Sense.Key != scsi.MediumError {
		t.Errorf("READ at LBA 11: %+v, want the configured MEDIUM ERROR", r)
	}
	if r := h.HandleCommand(ctx, read10(20)); r.Status != scsi.StatusGood {
		t.Errorf("READ at LBA 20: %+v", r)
	}
	if fd, _ := fs.get("d0"); fd.MaxDelay() != 59*time.Second {
		t.Errorf("delay cap %v, want cmd_time_out 60 s minus 1 s", fd.MaxDelay())
	}
	// The metrics still see the disk itself.
	if _, ok := hs.get("d0").(interface{ CommandName(scsi.OpCode) string }); !ok {
		t.Errorf("handlers recorded %T", hs.get("d0"))
	}

	// Runtime rules, on a device made with targetcli (no fault block).
	h2, err := f(target.DeviceConfig{Name: "tc0", Subtype: "vdisk", Config: "size=1M"}, log)
	if err != nil {
		t.Fatal(err)
	}
	id, err := fs.add("tc0", "op=read;busy")
	if err != nil {
		t.Fatal(err)
	}
	if r := h2.HandleCommand(ctx, read10(0)); r.Status != scsi.StatusBusy {
		t.Errorf("READ after fault add busy: %+v", r)
	}
	l, err := fs.list("tc0")
	if err != nil || len(l.Rules) != 1 || l.Rules[0].ID != id || l.Rules[0].Injected != 1 || l.Rules[0].Action != "busy" {
		t.Errorf("list: %+v %v", l, err)
	}
	if err := fs.remove("tc0", id); err != nil {
		t.Fatal(err)
	}
	if err := fs.remove("tc0", id); !errors.Is(err, unix.ENOENT) {
		t.Errorf("second remove: %v", err)
	}
	if _, err := fs.add("tc0", "sense=bogus"); !errors.Is(err, unix.EINVAL) {
		t.Errorf("bad rule: %v", err)
	}
	if err := fs.setTiming("tc0", "latency=1ms"); err != nil {
		t.Fatal(err)
	}
	if l, _ := fs.list("tc0"); l.Timing != "latency=1ms" {
		t.Errorf("timing %q", l.Timing)
	}
	if _, err := fs.list("nope"); !errors.Is(err, unix.ENODEV) {
		t.Errorf("unknown device: %v", err)
	}
	// A rule the device cannot take (a tape filter on a disk) fails the
	// device at creation, with the reason.
	cfg.Devices[0].Fault.Rules = []string{"file=1;busy"}
	if _, err := newFaults(cfg).wrap(newDisk)(target.DeviceConfig{Name: "d0", Subtype: "vdisk", Config: "size=1M"}, log); err == nil {
		t.Error("a tape rule was accepted on a disk")
	}
}

func TestFaultWrapperKeepsTapeReset(t *testing.T) {
	fs := newFaults(&Config{})
	h, err := fs.wrap(newTape)(target.DeviceConfig{Name: "t0", Subtype: "vtape", Config: "memory=1;barcode=M1"}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer h.(interface{ Close() error }).Close()
	if _, ok := h.(target.Resetter); !ok {
		t.Fatalf("%T hides the drive's Reset from the transport", h)
	}
	// Position rules bind: the wrapper asks the drive where it is.
	if _, err := fs.add("t0", "op=read;file=1;block=10+2;sense=medium_error"); err != nil {
		t.Errorf("tape position rule: %v", err)
	}
}
