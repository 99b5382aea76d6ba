package fault_test

import (
	"bytes"
	"testing"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/targettest"
)

// The wrapper is what the transport serves.
var (
	_ target.Handler = (*fault.Device)(nil)
	_ fault.Handler  = target.Handler(nil)
)

// TestThroughRing serves a faulty disk through the fake TCMU kernel: the
// initiator gets the good blocks before a medium error (READ_LEN with
// CHECK CONDITION, residual for the rest) and the sense with the first bad
// LBA in the 96-byte buffer; the transport counts the CHECK CONDITION.
func TestThroughRing(t *testing.T) {
	dk := storeDisk(t)
	fd, err := fault.New(dk, fault.Options{Commands: diskCmds, Rules: []fault.Rule{fault.MustParseRule("op=read;lba=0x24+4;sense=medium_error")}})
	if err != nil {
		t.Fatal(err)
	}
	k := targettest.NewKernel(t, targettest.Config{})
	dev := k.Serve(fd)
	k.Submit(tur, targettest.NoData) // power-on unit attention
	data := make([]byte, 64*512)
	for i := range data {
		data[i] = byte(i / 512)
	}
	if cp := k.Submit(rw10(0x2a, 0x20, 64), targettest.DataOut(data)); cp.Status != scsi.StatusGood {
		t.Fatalf("write: %v % x", cp.Status, cp.Sense)
	}
	cp := k.Submit(rw10(0x28, 0x20, 64), targettest.DataIn(64*512).Segments(5))
	if cp.Status != scsi.StatusCheckCondition {
		t.Fatalf("read: %v", cp.Status)
	}
	if want := unhex(t, "f0 00 03 00000024 0a 00000000 11 00 00 000000"); !bytes.Equal(cp.Sense[:18], want) {
		t.Errorf("sense % x, want % x", cp.Sense[:18], want)
	}
	if !bytes.Equal(cp.Data, data[:4*512]) || cp.Residual != 60*512 || cp.ReadLen != 4*512 {
		t.Errorf("got %d bytes (read_len %d, residual %d), want the 4 good blocks", len(cp.Data), cp.ReadLen, cp.Residual)
	}
	if st := dev.Stats(); st.CheckConditions[scsi.MediumError] != 1 {
		t.Errorf("transport check conditions %v", st.CheckConditions)
	}
	if st := fd.Injected(); st[0].Injected != 1 {
		t.Errorf("injected %+v", st)
	}
}

// TestDepthThroughRing: a disk with Depth 4 is served by four workers with
// out-of-order completion, and four queued READs are in their latency at
// the same time (the barrier clock lets none finish before all four
// sleep). Each returns its own data.
func TestDepthThroughRing(t *testing.T) {
	dk := storeDisk(t)
	clk := &barrierClock{n: 4, release: make(chan struct{})}
	fd, err := fault.New(dk, fault.Options{Commands: diskCmds, Depth: 4, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	k := targettest.NewKernel(t, targettest.Config{})
	dev := k.Serve(fd)
	if w := dev.Info().Workers; w != 4 {
		t.Fatalf("workers %d, want 4", w)
	}
	k.Submit(tur, targettest.NoData) // power-on unit attention
	for lba := range 4 {
		blk := bytes.Repeat([]byte{byte(lba + 1)}, 512)
		if cp := k.Submit(rw10(0x2a, uint32(lba), 1), targettest.DataOut(blk)); cp.Status != scsi.StatusGood {
			t.Fatalf("write %d: %v", lba, cp.Status)
		}
	}
	if err := fd.SetTiming(fault.MustParseTiming("latency=1ms")); err != nil {
		t.Fatal(err)
	}
	var reqs []targettest.Request
	for lba := range 4 {
		reqs = append(reqs, targettest.Request{CDB: rw10(0x28, uint32(lba), 1), Data: targettest.DataIn(512)})
	}
	for lba, cp := range k.SubmitAll(reqs...) {
		if cp.Status != scsi.StatusGood || !bytes.Equal(cp.Data, bytes.Repeat([]byte{byte(lba + 1)}, 512)) {
			t.Errorf("read %d: %v, data % x…", lba, cp.Status, cp.Data[:min(4, len(cp.Data))])
		}
	}
}

// storeDisk is a 64 MiB disk whose data reads back (1 MiB of RAM).
func storeDisk(t *testing.T) *disk.Disk {
	t.Helper()
	c, err := disk.ParseConfig("size=64M;mode=store;store_size=1M")
	if err != nil {
		t.Fatal(err)
	}
	dk, err := disk.New("disk0", c, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return dk
}
