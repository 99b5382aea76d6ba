package main

import (
	"encoding/binary"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/targettest"
)

// TestReconfigThroughWrappers builds devices through the factory chain of
// serve (the fault wrapper around the handler) and changes them as target
// does on a RECONFIG event: through the optional interfaces of the handler
// the Factory returned, while the device serves commands from the ring.
func TestReconfigThroughWrappers(t *testing.T) {
	log := zaptest.NewLogger(t)

	// targetcli: create tc1 64M "lbs=4096": the capacity is dev_size.
	h, err := (&testRegistry{}).served("vdisk")(target.DeviceConfig{Name: "tc1", Subtype: "vdisk", Config: "lbs=4096", Size: 64 << 20}, log)
	if err != nil {
		t.Fatal(err)
	}
	rs, ok := scsi.As[scsi.Resizer](h)
	wc, ok2 := scsi.As[scsi.WriteCacher](h)
	rc, ok3 := scsi.As[scsi.Reconfigurer](h)
	if !ok || !ok2 || !ok3 {
		t.Fatalf("%T hides the optional interfaces (Resizer %v, WriteCacher %v, Reconfigurer %v)", h, ok, ok2, ok3)
	}
	k := targettest.Serve(t, h)
	tur := func() targettest.Completion { return k.Submit([]byte{0, 0, 0, 0, 0, 0}, targettest.NoData) }
	wantUA := func(asc scsi.ASC) {
		t.Helper()
		if c := tur(); c.Status != scsi.StatusCheckCondition || c.SenseKey() != scsi.UnitAttention || c.ASC() != asc {
			t.Fatalf("TEST UNIT READY: %v %v %v, want UNIT ATTENTION %v", c.Status, c.SenseKey(), c.ASC(), asc)
		}
		if c := tur(); c.Status != scsi.StatusGood {
			t.Fatalf("second TEST UNIT READY: %v %v, want GOOD: the UA is reported once", c.Status, c.ASC())
		}
	}
	capacity := func() (uint64, uint64) {
		t.Helper()
		c10 := k.Submit([]byte{0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0}, targettest.DataIn(8))
		c16 := k.Submit([]byte{0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0}, targettest.DataIn(32))
		if c10.Status != scsi.StatusGood || c16.Status != scsi.StatusGood {
			t.Fatalf("READ CAPACITY: %v %v", c10.Status, c16.Status)
		}
		return uint64(binary.BigEndian.Uint32(c10.Data)) + 1, binary.BigEndian.Uint64(c16.Data) + 1
	}
	diskStats := func() disk.Stats {
		inner, _ := scsi.As[*disk.Disk](h)
		return inner.Stats()
	}
	wantUA(scsi.PowerOnResetOrBusDeviceReset)
	if c10, c16 := capacity(); c10 != 16384 || c16 != 16384 {
		t.Fatalf("capacity: %d/%d", c10, c16)
	}

	if err := rs.Resize(256 << 20); err != nil {
		t.Fatal(err)
	}
	if s := diskStats(); s.Blocks != 65536 { // what /metrics reports
		t.Errorf("metrics see %d blocks after the resize", s.Blocks)
	}
	wantUA(scsi.CapacityDataHasChanged)
	if c10, c16 := capacity(); c10 != 65536 || c16 != 65536 {
		t.Fatalf("capacity after Resize(256M): %d/%d", c10, c16)
	}
	// I/O past the old end.
	if c := k.Submit([]byte{0x2a, 0, 0, 0, 0xff, 0, 0, 0, 1, 0}, targettest.DataOut(make([]byte, 4096))); c.Status != scsi.StatusGood {
		t.Fatalf("WRITE(10) at LBA 65280: %v %v", c.Status, c.ASC())
	}

	if err := wc.SetWriteCache(true); err != nil {
		t.Fatal(err)
	}
	wantUA(scsi.ModeParametersChanged)
	ms := k.Submit([]byte{0x1a, 0x08, 0x08, 0, 0xff, 0}, targettest.DataIn(255))
	if ms.Status != scsi.StatusGood || len(ms.Data) < 7 || ms.Data[6]&0x04 == 0 || !diskStats().WriteCache {
		t.Fatalf("MODE SENSE page 08h after SetWriteCache(true): %v % x", ms.Status, ms.Data)
	}
	if err := rc.Reconfigure("lbs=512"); err == nil {
		t.Error("Reconfigure changing lbs accepted")
	}

	// A tape drive behind its wrapper: it takes no change (the transport
	// answers EOPNOTSUPP).
	tp, err := (&testRegistry{}).served("vtape")(target.DeviceConfig{Name: "t0", Subtype: "vtape", Config: "memory=1"}, log)
	if err != nil {
		t.Fatal(err)
	}
	_, ok = scsi.As[scsi.Resizer](tp)
	_, ok2 = scsi.As[scsi.WriteCacher](tp)
	_, ok3 = scsi.As[scsi.Reconfigurer](tp)
	if ok || ok2 || ok3 {
		t.Errorf("a tape drive takes a change: Resizer %v, WriteCacher %v, Reconfigurer %v", ok, ok2, ok3)
	}
}
