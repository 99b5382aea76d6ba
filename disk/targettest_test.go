package disk_test

import (
	"bytes"
	"fmt"
	"testing"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/targettest"
)

// The disk names its commands for the metrics and fault rules.
var _ scsi.CommandNamer = (*disk.Disk)(nil)

// serveDisk serves disk0, made from cfg, through the fake kernel ring.
func serveDisk(t *testing.T, cfg string) *targettest.Kernel {
	t.Helper()
	c, err := disk.ParseConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := disk.New("disk0", c, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return targettest.Serve(t, d)
}

// TestThroughRing drives a vdisk through the fake kernel ring with the
// commands Linux's sd sends when it attaches a disk, then I/O: the ring, the
// iovecs, READ_LEN and the sense buffer all sit between the disk and the
// initiator here.
func TestThroughRing(t *testing.T) {
	k := serveDisk(t, "size=1G;mode=store;store_size=4M;pbexp=3;lbpu=1")

	goodData := func(cdb []byte, n int, want string) {
		t.Helper()
		cp := k.Submit(cdb, targettest.DataIn(n))
		if cp.Status != scsi.StatusGood {
			t.Fatalf("% x: status %v sense % x", cdb, cp.Status, cp.Sense)
		}
		if w := hx(want); !bytes.Equal(cp.Data, w) {
			t.Fatalf("% x:\n got % x\nwant % x", cdb, cp.Data, w)
		}
		if cp.Residual != n-len(cp.Data) {
			t.Fatalf("% x: residual %d for %d of %d bytes", cdb, cp.Residual, len(cp.Data), n)
		}
	}

	// Scan: INQUIRY (no unit attention), then VPD pages.
	goodData(inquiry(false, 0, 36), 36, `00 00 06 12 45 00 00 02 5653435349202020 56444953 4b202020 2020202020202020 30313030`)
	goodData(inquiry(true, 0, 255), 255, "00 00 00 06 00 80 83 b0 b1 b2")
	goodData(inquiry(true, 0x80, 255), 255, "00 80 00 05 "+hexOf("disk0"))
	// sd: TEST UNIT READY gets the power-on unit attention, in fixed
	// format through the 96-byte sense buffer.
	cp := k.Submit(tur(), targettest.NoData)
	if cp.Status != scsi.StatusCheckCondition || cp.SenseKey() != scsi.UnitAttention || cp.ASC() != scsi.PowerOnResetOrBusDeviceReset {
		t.Fatalf("first TUR: %v % x", cp.Status, cp.Sense)
	}
	if len(cp.Sense) != scsi.SenseBufferSize || !bytes.Equal(cp.Sense[:18], hx("70 00 06 00000000 0a 00000000 29 00 00 00 0000")) {
		t.Fatalf("sense buffer % x", cp.Sense)
	}
	if cp = k.Submit(tur(), targettest.NoData); cp.Status != scsi.StatusGood {
		t.Fatalf("second TUR: %v % x", cp.Status, cp.Sense)
	}
	goodData(readCapacity16(32), 32, "00000000001fffff 00000200 10 03 c000 00*16")
	goodData([]byte{0x1a, 0, 0x3f, 0, 0xff, 0}, 255, `37 00 10 08 00200000 00000200
		01 0a c0 00*9 08 12 00*18 0a 0a 02 00*9`)
	goodData([]byte{0xa3, 0x0c, 0x01, 0x12, 0, 0, 0, 0, 0x02, 0, 0, 0}, 512, "00 03 0006 12 01 ff ff ff 04")
	goodData(readCapacity10(), 8, "001fffff 00000200")
	goodData(inquiry(true, 0xb0, 64), 64, "00 b0 00 3c 01 ff 0008 00000000 00000400 00000000 ffffffff 00000100 00000008 80000000 000000000000ffff 00*20")

	// I/O scattered over several iovecs, across the 4 MiB store's wrap.
	data := pattern(64<<10, 11)
	wrap := uint64(4 << 20 / 512)
	cp = k.Submit(write16(wrap-64, 128), targettest.DataOut(data).Segments(5))
	if cp.Status != scsi.StatusGood {
		t.Fatalf("WRITE(16): %v % x", cp.Status, cp.Sense)
	}
	cp = k.Submit(read16(wrap-64, 128), targettest.DataIn(64<<10).Segments(7))
	if cp.Status != scsi.StatusGood || !bytes.Equal(cp.Data, data) {
		t.Fatalf("READ(16) back: %v, %d bytes, equal %v", cp.Status, len(cp.Data), bytes.Equal(cp.Data, data))
	}
	// A Data-In buffer shorter than the transfer: READ_LEN carries what
	// was returned and the initiator sees the residual.
	cp = k.Submit(read10(uint32(wrap-64), 8), targettest.DataIn(4096+1000))
	if cp.Status != scsi.StatusGood || len(cp.Data) != 4096 || cp.Residual != 1000 || !bytes.Equal(cp.Data, data[:4096]) {
		t.Fatalf("overlong buffer: %v, %d bytes, residual %d", cp.Status, len(cp.Data), cp.Residual)
	}
	// LBA OUT OF RANGE: CHECK CONDITION, no data.
	cp = k.Submit(read10(0x200000, 1), targettest.DataIn(512))
	if cp.Status != scsi.StatusCheckCondition || cp.SenseKey() != scsi.IllegalRequest || cp.ASC() != scsi.LBAOutOfRange || len(cp.Data) != 0 {
		t.Fatalf("out of range: %v % x, %d bytes", cp.Status, cp.Sense[:18], len(cp.Data))
	}
	// UNMAP through the ring (a Data-Out parameter list): the blocks read
	// as zeros afterwards, over the kernel's stale data-area pages.
	list := unmapList([2]uint64{wrap - 64, 128})
	if cp = k.Submit(unmapCDB(uint16(len(list))), targettest.DataOut(list)); cp.Status != scsi.StatusGood {
		t.Fatalf("UNMAP: %v % x", cp.Status, cp.Sense)
	}
	cp = k.Submit(read16(wrap-64, 128), targettest.DataIn(64<<10).Segments(3))
	if cp.Status != scsi.StatusGood || !bytes.Equal(cp.Data, make([]byte, 64<<10)) {
		t.Fatalf("read of unmapped blocks: %v, %d bytes", cp.Status, len(cp.Data))
	}
}

// BenchmarkThroughRing is a fake_rw READ(10) through the fake kernel ring
// and tcmu.Device: the whole per-command cost of the daemon except the
// syscalls (uio read/write). The data-area pages are the same from command
// to command, as the kernel's are, so after the first one the zero fill is
// skipped (scsi.ZeroPages).
func BenchmarkThroughRing(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			c, _ := disk.ParseConfig("size=1G")
			d, err := disk.New("bench", c, zap.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			d.UA.Clear()
			k := targettest.NewKernel(b, targettest.Config{})
			k.ServeLogger(d, zap.NewNop())
			cdb := read10(0x10, uint16(size/512))
			if bad, err := k.Pump(cdb, targettest.DataIn(size), 100); bad != 0 || err != nil {
				b.Fatalf("warm-up: %d bad, %v", bad, err)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			if bad, err := k.Pump(cdb, targettest.DataIn(size), b.N); bad != 0 || err != nil {
				b.Fatalf("%d bad, %v", bad, err)
			}
		})
	}
}

// TestFakeReadsNeverReturnStaleData drives a fake_rw disk through the fake
// kernel's data area as the kernel uses it: lowest free blocks first, so
// every command here lands on the same data-area pages, which start full
// of a stale byte (a ring taken over from an earlier daemon). The disk
// skips zero fills of pages it knows to be zero; no byte of an earlier
// command's Data-Out or of the stale start may reach a READ.
func TestFakeReadsNeverReturnStaleData(t *testing.T) {
	c, err := disk.ParseConfig("size=1G")
	if err != nil {
		t.Fatal(err)
	}
	d, err := disk.New("fake0", c, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	d.UA.Clear()
	k := targettest.NewKernel(t, targettest.Config{Stale: 0xa5})
	dev := k.Serve(d)
	const n = 64 << 10
	zeros := make([]byte, n)
	read := func(what string, segs int) {
		t.Helper()
		cp := k.Submit(read10(0, n/512), targettest.DataIn(n).Segments(segs))
		if cp.Status != scsi.StatusGood || !bytes.Equal(cp.Data, zeros) {
			t.Fatalf("READ %s: %v, %d bytes, first non-zero at %d", what, cp.Status, len(cp.Data), bytes.IndexFunc(cp.Data, func(r rune) bool { return r != 0 }))
		}
	}
	skipped := func() uint64 { return dev.Stats().ZeroFillSkippedBytes }

	read("over stale pages", 1)
	if s := skipped(); s != 0 {
		t.Fatalf("skipped %d bytes of pages nobody had zeroed", s)
	}
	read("of pages zeroed by the last READ", 1)
	if s := skipped(); s != n {
		t.Fatalf("skipped %d bytes, want the whole %d-byte transfer", s, n)
	}
	// Data-Out of a pattern into the same pages, then READs.
	for i, wr := range []struct {
		name string
		cdb  []byte
		len  int
	}{
		{"WRITE(10) of the whole range", write10(0, n/512), n},
		{"WRITE(10) of 8 KiB", write10(7, 16), 8 << 10},
		{"WRITE(16) refused (LBA out of range)", write16(1<<40, 2), 1 << 10},
		{"WRITE(10) with 1000 bytes for 2 blocks (refused)", write10(0, 2), 1000},
	} {
		before := skipped()
		cp := k.Submit(wr.cdb, targettest.DataOut(pattern(wr.len, byte(i+1))).Segments(2))
		if cp.Status == scsi.StatusCheckCondition && i < 2 { // the last two are refused
			t.Fatalf("%s: % x", wr.name, cp.Sense)
		}
		read("after "+wr.name, 3)
		read("again after "+wr.name, 3)
		if skipped()-before < n {
			t.Errorf("%s: the second READ skipped %d bytes, want %d", wr.name, skipped()-before, n)
		}
	}
	// A READ(10) sent with Data-Out (SG_IO's dxfer_direction is the
	// initiator's choice; LIO passes it on, the kernel having copied the
	// data into the pages): the READ that follows still sees zeros.
	k.Submit(read10(0, n/512), targettest.DataOut(pattern(n, 9)).Segments(3))
	read("after a READ(10) that carried Data-Out", 3)
	// Non-zero Data-In of another command (INQUIRY) in the first page.
	if cp := k.Submit(inquiry(false, 0, 96), targettest.DataIn(96)); cp.Status != scsi.StatusGood {
		t.Fatalf("INQUIRY: %v", cp.Status)
	}
	read("after INQUIRY data", 1)
}

// Through the ring, READ CAPACITY(16) and GET LBA STATUS (two service
// actions of one opcode) are counted as two commands, PRE-FETCH's
// CONDITION MET reaches the initiator, and a WRITE with more Data-Out than
// its transfer length is refused with 0E/03.
func TestThroughRingNewCommands(t *testing.T) {
	k := serveDisk(t, "size=1M;mode=store;lbpu=1")
	k.Submit(tur(), targettest.NoData) // the power-on unit attention
	for range 2 {
		if cp := k.Submit(readCapacity16(32), targettest.DataIn(32)); cp.Status != scsi.StatusGood {
			t.Fatalf("READ CAPACITY(16): %v", cp.Status)
		}
	}
	if cp := k.Submit(getLBAStatus(0, 24), targettest.DataIn(24)); cp.Status != scsi.StatusGood || !bytes.Equal(cp.Data, hx("00000014 00000000 0000000000000000 00000800 01 000000")) {
		t.Fatalf("GET LBA STATUS: %v % x", cp.Status, cp.Data)
	}
	if cp := k.Submit(rw10(0x34, 0, 8), targettest.NoData); cp.Status != scsi.StatusConditionMet {
		t.Fatalf("PRE-FETCH(10): %v, want CONDITION MET", cp.Status)
	}
	if cp := k.Submit(write10(0, 1), targettest.DataOut(make([]byte, 1024))); cp.Status != scsi.StatusCheckCondition || cp.ASC() != scsi.InvalidFieldInCommandIU {
		t.Fatalf("WRITE(10) of 1 block with 1024 bytes: %v %v", cp.Status, cp.ASC())
	}
	got := map[string]uint64{}
	for _, cs := range k.Device().Stats().Commands {
		got[cs.Name] = cs.Count
	}
	if got["read_capacity_16"] != 2 || got["get_lba_status"] != 1 || got["pre_fetch_10"] != 1 || got["service_action_in_16"] != 0 {
		t.Fatalf("commands counted: %v", got)
	}
}
