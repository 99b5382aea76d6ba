package disk_test

import (
	"bytes"
	"encoding/binary"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/scsi"
)

// newDevSizeDisk builds a disk whose capacity is the backstore's dev_size
// (a targetcli cfgstring without size=), past its power-on UA.
func newDevSizeDisk(t *testing.T, cfg string, devSize uint64) *tdisk {
	t.Helper()
	c, err := disk.ParseConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := disk.New("disk0", c.WithDefaultSize(devSize), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	td := &tdisk{t: t, d: d}
	td.do(tur(), nil) // 29/00
	good(t, td.do(tur(), nil))
	return td
}

// capacity returns READ CAPACITY(10)'s and (16)'s block counts.
func (td *tdisk) capacity() (c10, c16 uint64) {
	td.t.Helper()
	r, b := td.in(readCapacity10(), 8)
	good(td.t, r)
	c10 = uint64(binary.BigEndian.Uint32(b)) + 1
	r, b = td.in(readCapacity16(32), 32)
	good(td.t, r)
	return c10, binary.BigEndian.Uint64(b) + 1
}

// wce returns the current WCE bit of MODE SENSE(6) page 08h.
func (td *tdisk) wce() bool {
	td.t.Helper()
	r, b := td.in([]byte{0x1a, 0x08, 0x08, 0, 0xff, 0}, 255)
	good(td.t, r)
	return b[4+2]&0x04 != 0
}

func TestResize(t *testing.T) {
	td := newDevSizeDisk(t, "mode=store;store_size=2M", 1<<20)
	data := pattern(4096, 3)
	good(t, td.out(write10(0, 8), data))
	if err := td.d.Resize(4 << 20); err != nil {
		t.Fatal(err)
	}
	// Bookkeeping follows at once, before any command.
	if s := td.d.Stats(); s.Blocks != 8192 || s.StoreSize != 2<<20 {
		t.Errorf("Stats after Resize: %d blocks, store %d", s.Blocks, s.StoreSize)
	}
	if c := td.d.Config(); c.Size != 4<<20 || !c.SizeFromDevSize || c.String() != "mode=store;store_size=2MiB" {
		t.Errorf("Config after Resize: %+v (%q)", c, c.String())
	}
	// The next command (INQUIRY excepted) reports the change, once.
	r, _ := td.in(inquiry(false, 0, 36), 36)
	good(t, r)
	wantSense(t, td.do(read10(0, 1), nil), scsi.UnitAttention, scsi.CapacityDataHasChanged)
	if c10, c16 := td.capacity(); c10 != 8192 || c16 != 8192 {
		t.Fatalf("READ CAPACITY after growing to 4 MiB: %d/%d blocks", c10, c16)
	}
	// Old data kept; the new blocks past the old end work, and past the
	// 2 MiB store they wrap across it, as at creation.
	r, got := td.in(read10(0, 8), 4096)
	good(t, r)
	if !bytes.Equal(got, data) {
		t.Fatal("data below the old end changed")
	}
	r, got = td.in(read10(3000, 8), 4096)
	good(t, r)
	if !bytes.Equal(got, make([]byte, 4096)) {
		t.Fatal("a new block does not read zeros")
	}
	good(t, td.out(write10(8191, 1), data[:512]))
	wantSense(t, td.do(read10(8192, 1), nil), scsi.IllegalRequest, scsi.LBAOutOfRange)

	// Shrinking discards what lies past the new end of the store.
	good(t, td.out(write10(1500, 8), data))
	if err := td.d.Resize(512 << 10); err != nil {
		t.Fatal(err)
	}
	wantSense(t, td.do(tur(), nil), scsi.UnitAttention, scsi.CapacityDataHasChanged)
	if c10, c16 := td.capacity(); c10 != 1024 || c16 != 1024 {
		t.Fatalf("READ CAPACITY after shrinking: %d/%d", c10, c16)
	}
	wantSense(t, td.do(read10(1500, 1), nil), scsi.IllegalRequest, scsi.LBAOutOfRange)
	if err := td.d.Resize(1 << 20); err != nil {
		t.Fatal(err)
	}
	td.do(tur(), nil)
	r, got = td.in(read10(1500, 8), 4096)
	good(t, r)
	if !bytes.Equal(got, make([]byte, 4096)) {
		t.Fatal("data written past the end before a shrink came back after growing")
	}
	r, got = td.in(read10(0, 8), 4096)
	good(t, r)
	if !bytes.Equal(got, data) {
		t.Fatal("data below the new end lost by the shrink")
	}

	// The same size again changes nothing and raises nothing.
	if err := td.d.Resize(1 << 20); err != nil {
		t.Fatal(err)
	}
	good(t, td.do(tur(), nil))
}

func TestResizeRefused(t *testing.T) {
	td := newDevSizeDisk(t, "lbs=4096", 1<<20)
	for _, tc := range []struct {
		size uint64
		want string
	}{
		{0, "multiple"},
		{4095, "multiple"},
		{(1 << 20) + 512, "multiple"},
	} {
		if err := td.d.Resize(tc.size); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resize(%d) = %v, want an error with %q", tc.size, err, tc.want)
		}
	}
	good(t, td.do(tur(), nil)) // nothing changed: no UA
	// A capacity from the cfgstring is the cfgstring's to change.
	sized := newDisk(t, "size=1M")
	if err := sized.d.Resize(2 << 20); err == nil || !strings.Contains(err.Error(), "size=1M") {
		t.Errorf("Resize of a size= disk = %v, want a refusal naming size=1M", err)
	}
	if c10, _ := sized.capacity(); c10 != 2048 {
		t.Errorf("capacity after a refused Resize: %d", c10)
	}
}

func TestReconfigure(t *testing.T) {
	td := newDisk(t, "size=1M;lbs=512;mode=fake_rw;serial=S1")
	if err := td.d.Reconfigure("size=3M;serial=S1"); err != nil {
		t.Fatal(err)
	}
	wantSense(t, td.do(tur(), nil), scsi.UnitAttention, scsi.CapacityDataHasChanged)
	good(t, td.do(tur(), nil))
	if c10, c16 := td.capacity(); c10 != 6144 || c16 != 6144 {
		t.Fatalf("capacity after size=3M: %d/%d", c10, c16)
	}
	if err := td.d.Reconfigure("blocks=100;serial=S1"); err != nil {
		t.Fatal(err)
	}
	td.do(tur(), nil)
	if c10, _ := td.capacity(); c10 != 100 {
		t.Fatalf("capacity after blocks=100: %d", c10)
	}
	for _, tc := range []struct{ cfg, want string }{
		{"size=1M;lbs=4096;serial=S1", "lbs: cannot change on a live disk"},
		{"size=1M;mode=store;serial=S1", "mode: cannot"},
		{"size=1M", "serial: cannot"},
		{"size=1M;serial=S1;wce=1;pbexp=3", "pbexp, wce: cannot"},
		{"serial=S1", "cannot switch to dev_size"},
		{"size=lots", "size:"},
	} {
		if err := td.d.Reconfigure(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Reconfigure(%q) = %v, want an error with %q", tc.cfg, err, tc.want)
		}
	}
	good(t, td.do(tur(), nil))
	if c := td.d.Config(); c.Blocks != 100 || c.LBS != 512 {
		t.Errorf("a refused Reconfigure changed the config: %+v", c)
	}

	// A disk sized by dev_size keeps it without size=, and takes one.
	ds := newDevSizeDisk(t, "serial=S2", 1<<20)
	if err := ds.d.Reconfigure("serial=S2"); err != nil {
		t.Fatal(err)
	}
	good(t, ds.do(tur(), nil))
	if err := ds.d.Reconfigure("size=2M;serial=S2"); err != nil {
		t.Fatal(err)
	}
	ds.do(tur(), nil)
	if c10, _ := ds.capacity(); c10 != 4096 {
		t.Fatalf("capacity after size=2M: %d", c10)
	}
	if err := ds.d.Resize(8 << 20); err == nil {
		t.Error("Resize after the cfgstring took the capacity over: accepted")
	}
}

func TestSetWriteCache(t *testing.T) {
	td := newDisk(t, "size=1M")
	if td.wce() {
		t.Fatal("WCE set by default")
	}
	if err := td.d.SetWriteCache(true); err != nil {
		t.Fatal(err)
	}
	wantSense(t, td.do(tur(), nil), scsi.UnitAttention, scsi.ModeParametersChanged)
	if !td.wce() || !td.d.Stats().WriteCache {
		t.Fatal("WCE not set by SetWriteCache(true)")
	}
	// The default page keeps the cfgstring's value.
	td.golden([]byte{0x1a, 0x08, 0x88, 0, 0xff, 0}, 255, "17 00 10 00 08 12 00 00*17")
	// Unchanged: no unit attention.
	if err := td.d.SetWriteCache(true); err != nil {
		t.Fatal(err)
	}
	good(t, td.do(tur(), nil))
	// MODE SELECT changes the same bit.
	page := hx("00 00 00 00 08 12 00 00*17")
	good(t, td.out([]byte{0x15, 0x10, 0, 0, byte(len(page)), 0}, page))
	if td.wce() {
		t.Fatal("MODE SELECT WCE=0 not in force")
	}
	if err := td.d.SetWriteCache(true); err != nil {
		t.Fatal(err)
	}
	td.do(tur(), nil)
	if !td.wce() {
		t.Fatal("SetWriteCache after MODE SELECT not in force")
	}
}

// TestReconfigureConcurrent runs resizes against I/O: under -race, the
// command path and the event side share nothing unsynchronised, and every
// command sees one whole geometry.
func TestReconfigureConcurrent(t *testing.T) {
	td := newDevSizeDisk(t, "mode=store;store_size=1M", 1<<20)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 200 {
			if err := td.d.Resize(uint64(1+i%4) << 19); err != nil {
				t.Error(err)
				return
			}
			if err := td.d.SetWriteCache(i%2 == 0); err != nil {
				t.Error(err)
				return
			}
			_ = td.d.Stats()
		}
	}()
	buf := make([]byte, 512)
	for range 2000 {
		r := td.d.HandleCommand(t.Context(), &scsi.Command{CDB: write10(1000, 1), Data: scsi.NewBuffer(buf)})
		if r.Status != scsi.StatusGood && r.Sense.Key != scsi.UnitAttention && r.Sense.ASC != scsi.LBAOutOfRange {
			t.Fatalf("WRITE during resizes: %+v", r)
		}
	}
	wg.Wait()
}
