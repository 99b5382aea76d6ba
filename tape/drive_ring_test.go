package tape_test

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/targettest"
	"github.com/vscsid/vscsid/target/tcmu"
)

func hx(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

func memoryDrive(t *testing.T, cfg string) *tape.Drive {
	t.Helper()
	c, err := tape.ParseConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := tape.New("tape0", c, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// The drive satisfies the transport's interfaces without importing it.
var (
	_ target.Handler    = (*tape.Drive)(nil)
	_ scsi.CommandNamer = (*tape.Drive)(nil)
)

// TestThroughRing sends what st sends through the fake kernel ring and
// checks what the initiator receives: the unit attentions at open, and an
// incorrect-length read whose short block arrives because the drive's
// Written() becomes READ_LEN (in the VM, dd then reports "0+100 records
// in": the residual reaches the initiator).
func TestThroughRing(t *testing.T) {
	d := memoryDrive(t, "memory=1;barcode=RING01")
	k := targettest.Serve(t, d)

	// Scan: INQUIRY takes no unit attention.
	cp := k.Submit([]byte{0x12, 0, 0, 0, 36, 0}, targettest.DataIn(36))
	if cp.Status != scsi.StatusGood || !bytes.Equal(cp.Data[:2], []byte{0x01, 0x80}) {
		t.Fatalf("INQUIRY: %v % x", cp.Status, cp.Data)
	}
	// st's open: TEST UNIT READY sees power-on, then the new cartridge.
	for _, asc := range []scsi.ASC{scsi.PowerOnResetOrBusDeviceReset, scsi.NotReadyToReadyChange} {
		cp = k.Submit([]byte{0, 0, 0, 0, 0, 0}, targettest.NoData)
		if cp.Status != scsi.StatusCheckCondition || cp.SenseKey() != scsi.UnitAttention || cp.ASC() != asc {
			t.Fatalf("TEST UNIT READY: %v % x, want UA %v", cp.Status, cp.Sense, asc)
		}
	}
	if cp = k.Submit([]byte{0, 0, 0, 0, 0, 0}, targettest.NoData); cp.Status != scsi.StatusGood {
		t.Fatalf("TEST UNIT READY: %v % x", cp.Status, cp.Sense)
	}
	cp = k.Submit([]byte{0x05, 0, 0, 0, 0, 0}, targettest.DataIn(6))
	if !bytes.Equal(cp.Data, hx("00 100000 0001")) {
		t.Fatalf("READ BLOCK LIMITS % x", cp.Data)
	}
	cp = k.Submit([]byte{0x1a, 0, 0, 0, 12, 0}, targettest.DataIn(12))
	if !bytes.Equal(cp.Data, hx("0b 00 10 08 80 000000 00 000000")) {
		t.Fatalf("MODE SENSE % x", cp.Data)
	}

	// A 1000-byte record, then filemark, rewind.
	rec := bytes.Repeat([]byte("0123456789"), 100)
	if cp = k.Submit([]byte{0x0a, 0, 0, 0x03, 0xe8, 0}, targettest.DataOut(rec)); cp.Status != scsi.StatusGood {
		t.Fatalf("WRITE: %v % x", cp.Status, cp.Sense)
	}
	k.Submit([]byte{0x10, 0, 0, 0, 1, 0}, targettest.NoData)
	k.Submit([]byte{0x01, 0, 0, 0, 0, 0}, targettest.NoData)

	// sg_raw -r 65536 /dev/sg1 08 00 01 00 00 00: CHECK CONDITION, ILI,
	// INFORMATION 64536, and the 1000 bytes.
	cp = k.Submit([]byte{0x08, 0, 0x01, 0, 0, 0}, targettest.DataIn(65536).Segments(4))
	if cp.Status != scsi.StatusCheckCondition || cp.ReadLen != 1000 || !bytes.Equal(cp.Data, rec) || cp.Residual != 64536 {
		t.Fatalf("short read: %v read_len %d residual %d data %d bytes", cp.Status, cp.ReadLen, cp.Residual, len(cp.Data))
	}
	if len(cp.Sense) != scsi.SenseBufferSize || !bytes.Equal(cp.Sense[:18], hx("f0 00 20 0000fc18 0a 00000000 00 00 00 000000")) {
		t.Fatalf("sense % x", cp.Sense)
	}
	// Next read meets the filemark: no data, FM, INFORMATION = request.
	cp = k.Submit([]byte{0x08, 0, 0x01, 0, 0, 0}, targettest.DataIn(65536))
	if cp.Status != scsi.StatusCheckCondition || len(cp.Data) != 0 || !bytes.Equal(cp.Sense[:18], hx("f0 00 80 00010000 0a 00000000 00 01 00 000000")) {
		t.Fatalf("filemark read: %v % x data %d", cp.Status, cp.Sense[:18], len(cp.Data))
	}

	// SILI: GOOD, read_len 1000.
	k.Submit([]byte{0x01, 0, 0, 0, 0, 0}, targettest.NoData)
	cp = k.Submit([]byte{0x08, 0x02, 0x01, 0, 0, 0}, targettest.DataIn(65536))
	if cp.Status != scsi.StatusGood || cp.ReadLen != 1000 || !bytes.Equal(cp.Data, rec) {
		t.Fatalf("SILI read: %v read_len %d data %d", cp.Status, cp.ReadLen, len(cp.Data))
	}

	// Fixed mode (mt setblk 1024): 5 blocks and a filemark, READ of 8
	// blocks returns 5120 bytes, FM, INFORMATION 3.
	k.Submit([]byte{0x15, 0x10, 0, 0, 12, 0}, targettest.DataOut(hx("00 00 10 08 00 000000 00 000400")))
	k.Submit([]byte{0x01, 0, 0, 0, 0, 0}, targettest.NoData)
	five := bytes.Repeat([]byte{0xab}, 5*1024)
	if cp = k.Submit([]byte{0x0a, 0x01, 0, 0, 5, 0}, targettest.DataOut(five)); cp.Status != scsi.StatusGood {
		t.Fatalf("fixed WRITE: %v % x", cp.Status, cp.Sense)
	}
	k.Submit([]byte{0x10, 0, 0, 0, 1, 0}, targettest.NoData)
	k.Submit([]byte{0x01, 0, 0, 0, 0, 0}, targettest.NoData)
	cp = k.Submit([]byte{0x08, 0x01, 0, 0, 8, 0}, targettest.DataIn(8192))
	if cp.ReadLen != 5120 || !bytes.Equal(cp.Data, five) || !bytes.Equal(cp.Sense[:7], hx("f0 00 80 00000003")) {
		t.Fatalf("fixed read to filemark: read_len %d sense % x", cp.ReadLen, cp.Sense[:18])
	}
	if st := d.Stats(); st.ILIEvents != 1 || st.FilemarkEvents != 2 || st.FilemarksWritten != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// TestThroughRingWithoutReadLen shows why READ_LEN matters: a kernel that
// does not offer it returns no data with a CHECK CONDITION read, so the
// short block is lost (tcmu_handle_completion skips the gather).
func TestThroughRingWithoutReadLen(t *testing.T) {
	d := memoryDrive(t, "memory=1;barcode=RING02")
	k := targettest.NewKernel(t, targettest.Config{NoFlags: tcmu.FlagReadLen})
	k.Serve(d)
	for range 2 {
		k.Submit([]byte{0, 0, 0, 0, 0, 0}, targettest.NoData)
	}
	k.Submit([]byte{0x0a, 0, 0, 0, 10, 0}, targettest.DataOut(make([]byte, 10)))
	k.Submit([]byte{0x01, 0, 0, 0, 0, 0}, targettest.NoData)
	cp := k.Submit([]byte{0x08, 0, 0, 0x01, 0, 0}, targettest.DataIn(256))
	if cp.Status != scsi.StatusCheckCondition || len(cp.Data) != 0 || cp.Sense[2] != 0x20 {
		t.Fatalf("without READ_LEN: %v data %d sense % x", cp.Status, len(cp.Data), cp.Sense[:18])
	}
}
