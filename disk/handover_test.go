package disk_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/scsi"
)

// A disk that takes over from a planned restart raises no power-on unit
// attention when the initiator's view of it survived (fake_rw reads zeros
// before and after), and keeps it when it did not (a RAM store whose data
// was not carried over starts empty; a zoned disk's write pointers start
// at their zones' starts).
func TestResumeHandOver(t *testing.T) {
	for _, tc := range []struct {
		cfg    string
		silent bool
	}{
		{"size=1M;mode=fake_rw", true},
		{"size=1M;mode=store", false},
		{"size=64M;mode=fake_rw;zoned=host-managed", false},
	} {
		d := built(t, tc.cfg)
		if got := d.ResumeHandOver(); got != tc.silent {
			t.Errorf("%s: ResumeHandOver = %v, want %v", tc.cfg, got, tc.silent)
		}
		if ua := powerOnUA(d); ua == tc.silent {
			t.Errorf("%s: power-on unit attention after a hand-over: %v, want %v", tc.cfg, ua, !tc.silent)
		}
	}
}

// built is a disk as the next daemon builds it: not yet serving, its
// power-on unit attention pending.
func built(t *testing.T, cfg string) *disk.Disk {
	t.Helper()
	c, err := disk.ParseConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := disk.New("disk0", c, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// powerOnUA reports whether d's next command gets the power-on unit
// attention.
func powerOnUA(d *disk.Disk) bool {
	r := d.HandleCommand(context.Background(), &scsi.Command{CDB: tur(), Data: scsi.NewBuffer()})
	return r.Status == scsi.StatusCheckCondition && r.Sense.Key == scsi.UnitAttention && r.Sense.ASC == scsi.PowerOnResetOrBusDeviceReset
}

// handOver saves td's state and loads it into a new disk of cfg.
func handOver(t *testing.T, td *tdisk, cfg string) (*disk.Disk, error) {
	t.Helper()
	var state bytes.Buffer
	if err := td.d.SaveHandOver(&state); err != nil {
		t.Fatal(err)
	}
	next := built(t, cfg)
	return next, next.LoadHandOver(&state)
}

// A RAM store disk's data, its write-cache and sense-format settings
// and its stopped state cross a planned restart: the next daemon's disk
// reads what was written, holds as much memory, and raises no unit
// attention.
func TestHandOverCarriesStore(t *testing.T) {
	const cfg = "size=4M;mode=store;store_size=1M"
	td := newDisk(t, cfg)
	good(t, td.out(write10(0, 8), pattern(8*512, 1)))
	good(t, td.out(write10(1000, 3), pattern(3*512, 2)))
	good(t, td.out(write10(2048+5, 1), pattern(512, 3))) // past store_size: wraps onto block 5
	if err := td.d.SetWriteCache(false); err != nil {
		t.Fatal(err)
	}
	td.do(tur(), nil) // applies the change (MODE PARAMETERS CHANGED)
	before := td.d.Stats().StoreAllocated

	next, err := handOver(t, td, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !next.ResumeHandOver() || powerOnUA(next) {
		t.Fatal("the carried disk raises the power-on unit attention")
	}
	nd := &tdisk{t: t, d: next}
	for _, c := range []struct {
		lba  uint32
		n    uint16
		want []byte
	}{
		{0, 5, pattern(8*512, 1)[:5*512]},
		{5, 1, pattern(512, 3)},
		{6, 2, pattern(8*512, 1)[6*512:]},
		{1000, 3, pattern(3*512, 2)},
		{3000, 1, make([]byte, 512)},
	} {
		r, got := nd.in(read10(c.lba, c.n), int(c.n)*512)
		good(t, r)
		if !bytes.Equal(got, c.want) {
			t.Errorf("LBA %d: the carried disk reads other data", c.lba)
		}
	}
	if got := next.Stats().StoreAllocated; got != before {
		t.Errorf("store memory %d after the hand-over, %d before", got, before)
	}
	_, page := nd.in([]byte{0x1a, 0x08, 0x08, 0, 0xff, 0}, 0xff) // MODE SENSE(6), DBD, caching page
	if len(page) < 7 || page[4+2]&0x04 != 0 {
		t.Errorf("WCE is back on after the hand-over: % x", page)
	}
}

// A zoned disk's conditions and write pointers cross a planned restart,
// in fake_rw mode too, and the open counts follow them: REPORT ZONES
// answers the same, and the next write goes on at the write pointer.
func TestHandOverCarriesZones(t *testing.T) {
	for _, cfg := range []string{"size=64M;mode=store;zoned=host-managed", "size=80M;mode=fake_rw;zoned=host-managed;zone_max_open=2"} {
		td := newDisk(t, cfg)
		z1, z2, z3 := uint64(32768), uint64(65536), uint64(98304)
		good(t, td.out(write16(z1, 8), pattern(8*512, 1)))
		good(t, td.do(zoneCDB(finishZone, z2, false), nil))
		good(t, td.do(zoneCDB(openZone, z3, false), nil))
		_, want := td.zones(0, 64*6, 0, false)

		next, err := handOver(t, td, cfg)
		if err != nil {
			t.Fatalf("%s: %v", cfg, err)
		}
		if !next.ResumeHandOver() {
			t.Fatalf("%s: the carried zoned disk keeps its unit attention", cfg)
		}
		nd := &tdisk{t: t, d: next}
		nd.wantZones(want...)
		wantSense(t, nd.out(write16(z1, 1), pattern(512, 2)), scsi.IllegalRequest, scsi.UnalignedWriteCommand)
		good(t, nd.out(write16(z1+8, 1), pattern(512, 2)))
		if strings.Contains(cfg, "zone_max_open=2") {
			// Zones 1 and 3 are open, now both explicitly: the limit is
			// reached, which the counts know only if they were rebuilt.
			good(t, nd.do(zoneCDB(openZone, z1, false), nil))
			wantSense(t, nd.do(zoneCDB(openZone, 131072, false), nil), scsi.DataProtect, scsi.InsufficientZoneResources)
		}
	}
}

// State of another disk, or damaged state, is refused and leaves the
// disk at power-on: empty, zones reset, the unit attention kept.
func TestHandOverRefused(t *testing.T) {
	const cfg = "size=64M;mode=store;zoned=host-managed"
	td := newDisk(t, cfg)
	good(t, td.out(write16(32768, 8), pattern(8*512, 1)))
	good(t, td.out(write16(65536, 8), pattern(8*512, 2))) // a second chunk, after which the data is cut
	var state bytes.Buffer
	if err := td.d.SaveHandOver(&state); err != nil {
		t.Fatal(err)
	}
	full := state.Bytes()
	for _, tc := range []struct {
		name, cfg string
		state     []byte
		want      string
	}{
		{"another size", "size=128M;mode=store;zoned=host-managed", full, "this one has"},
		{"not zoned", "size=64M;mode=store", full, "this one has"},
		{"truncated in the data", cfg, full[:len(full)-1000], "chunk"},
		{"truncated in the zones", cfg, full[:40+10], "zone"},
		{"a zone state no rule reaches", cfg, zoneCorrupted(full), "not a state of zone type"},
		{"bad magic", cfg, append([]byte("XXXXXXXX"), full[8:]...), "bad magic"},
	} {
		next := built(t, tc.cfg)
		err := next.LoadHandOver(bytes.NewReader(tc.state))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
			continue
		}
		if next.ResumeHandOver() || !powerOnUA(next) {
			t.Errorf("%s: a refused state drops the unit attention", tc.name)
		}
		nd := &tdisk{t: t, d: next}
		r, got := nd.in(read16(32768, 8), 8*512)
		good(t, r)
		if !slices.Equal(got, make([]byte, 8*512)) {
			t.Errorf("%s: a refused state left data", tc.name)
		}
		if next.Stats().StoreAllocated != 0 {
			t.Errorf("%s: a refused state holds %d bytes of store", tc.name, next.Stats().StoreAllocated)
		}
	}
}

// zoneCorrupted is state whose second zone is empty with its write
// pointer past the zone's start.
func zoneCorrupted(state []byte) []byte {
	b := slices.Clone(state)
	const header, zoneRec = 40, 10
	off := header + zoneRec // zone 1's record: write pointer, condition
	b[off+8] = 0x01         // EMPTY, with the write pointer at start+8
	return b
}
