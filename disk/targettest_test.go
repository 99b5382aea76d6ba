package disk_test

import (
	"bytes"
	"testing"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/targettest"
)

// TestThroughRing drives a vdisk through the fake kernel ring with the
// commands Linux's sd sends when it attaches a disk, then I/O: the ring, the
// iovecs, READ_LEN and the sense buffer all sit between the disk and the
// initiator here.
func TestThroughRing(t *testing.T) {
	c, err := disk.ParseConfig("size=1G;mode=store;store_size=4M;pbexp=3;lbpu=1")
	if err != nil {
		t.Fatal(err)
	}
	d, err := disk.New("disk0", c, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	k := targettest.Serve(t, d)

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
	goodData(inquiry(true, 0xb0, 64), 64, "00 b0 00 3c 01 00 0008 00000000 00000400 00000000 ffffffff 00000100 00000008 80000000 000000000000ffff 00*20")

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

// BenchmarkThroughRing4K is a 4 KiB fake_rw READ(10) through the fake
// kernel ring and target.Device: the whole per-command cost of the
// daemon except the syscalls (uio read/write).
func BenchmarkThroughRing4K(b *testing.B) {
	c, _ := disk.ParseConfig("size=1G")
	d, err := disk.New("bench", c, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	d.UA.Clear()
	k := targettest.NewKernel(b, targettest.Config{})
	k.ServeLogger(d, zap.NewNop())
	cdb := read10(0x10, 8)
	if bad, err := k.Pump(cdb, targettest.DataIn(4096), 100); bad != 0 || err != nil {
		b.Fatalf("warm-up: %d bad, %v", bad, err)
	}
	b.SetBytes(4096)
	b.ReportAllocs()
	b.ResetTimer()
	if bad, err := k.Pump(cdb, targettest.DataIn(4096), b.N); bad != 0 || err != nil {
		b.Fatalf("%d bad, %v", bad, err)
	}
}
