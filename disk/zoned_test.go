package disk_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/scsi"
)

// zoneCDB is ZBC OUT service action sa on the zone at id (all: ALL=1).
func zoneCDB(sa byte, id uint64, all bool) []byte {
	c := make([]byte, 16)
	c[0], c[1] = 0x94, sa
	binary.BigEndian.PutUint64(c[2:], id)
	if all {
		c[14] = 0x01
	}
	return c
}

const (
	closeZone  = 0x01
	finishZone = 0x02
	openZone   = 0x03
	resetWP    = 0x04
)

// reportZonesCDB is REPORT ZONES from start with the allocation length,
// reporting options and PARTIAL given.
func reportZonesCDB(start uint64, alloc uint32, opts byte, partial bool) []byte {
	c := make([]byte, 16)
	c[0] = 0x95
	binary.BigEndian.PutUint64(c[2:], start)
	binary.BigEndian.PutUint32(c[10:], alloc)
	c[14] = opts
	if partial {
		c[14] |= 0x80
	}
	return c
}

// zones runs REPORT ZONES and returns the zone list length and each
// descriptor as "type/cond start+size@wp" (wp "-" in a conventional
// zone, "!" after it when NON_SEQ is set).
func (td *tdisk) zones(start uint64, alloc uint32, opts byte, partial bool) (listLen uint32, descs []string) {
	td.t.Helper()
	r, got := td.in(reportZonesCDB(start, alloc, opts, partial), int(alloc))
	good(td.t, r)
	if len(got) < 64 {
		return 0, nil
	}
	listLen = binary.BigEndian.Uint32(got)
	for i := 64; i+64 <= len(got); i += 64 {
		d := got[i : i+64]
		wp := fmt.Sprint(binary.BigEndian.Uint64(d[24:]))
		if wp == fmt.Sprint(^uint64(0)) && (d[0] == 1 || d[0] == 5) { // no write pointer: conventional, gap
			wp = "-"
		}
		s := fmt.Sprintf("%d/%x %d+%d@%s", d[0], d[1]>>4, binary.BigEndian.Uint64(d[16:]), binary.BigEndian.Uint64(d[8:]), wp)
		if d[1]&0x02 != 0 {
			s += "!"
		}
		descs = append(descs, s)
	}
	return listLen, descs
}

func (td *tdisk) wantZones(want ...string) {
	td.t.Helper()
	if _, got := td.zones(0, 64*uint32(len(want)+1), 0, false); !slices.Equal(got, want) {
		td.t.Fatalf("zones\n got %v\nwant %v", got, want)
	}
}

// A host-managed disk of 64 MiB gets four 16 MiB zones (32,768 blocks),
// the first conventional; INQUIRY says it is a host-managed zoned device
// and VPD B6 reports unrestricted reads and the open-zone limit.
func TestZonedIdentity(t *testing.T) {
	td := newDisk(t, "size=64M;mode=store;zoned=host-managed")
	r, got := td.in(inquiry(false, 0, 36), 36)
	good(t, r)
	if got[0] != 0x14 {
		t.Fatalf("peripheral device type %#x, want 14h", got[0])
	}
	td.golden(inquiry(true, 0, 64), 64, "14 00 00 06 00 80 83 b0 b1 b6")
	td.golden(inquiry(true, 0xb6, 64), 64, "14 b6 00 3c 01 000000 ffffffff ffffffff 00000008 00*44")
	td.wantZones("1/0 0+32768@-", "2/1 32768+32768@32768", "2/1 65536+32768@65536", "2/1 98304+32768@98304")
	aware := newDisk(t, "size=64M;zoned=host-aware;zone_size=8M;zone_nr_conv=0;zone_max_open=0")
	r, got = aware.in(inquiry(true, 0xb1, 64), 64)
	good(t, r)
	if got[0] != 0x00 || got[8]>>4&3 != 1 {
		t.Fatalf("host-aware: PDT %#x, ZONED %d; want 0 and 01b", got[0], got[8]>>4&3)
	}
	aware.golden(inquiry(true, 0xb6, 64), 64, "00 b6 00 3c 01 000000 ffffffff ffffffff ffffffff 00*44")
	if n, _ := aware.zones(0, 64, 0, false); n != 8*64 {
		t.Fatalf("host-aware zone list length %d, want 8 zones", n)
	}
	plain := newDisk(t, "size=64M")
	wantSense(t, plain.do(reportZonesCDB(0, 128, 0, false), scsi.NewBuffer(make([]byte, 128))), scsi.IllegalRequest, scsi.InvalidCommandOperationCode)
}

// Writes to a sequential write required zone start at its write pointer
// and stay in the zone; the zone opens implicitly and is full at its end.
func TestZonedWriteRules(t *testing.T) {
	td := newDisk(t, "size=64M;mode=store;zoned=host-managed")
	z1 := uint64(32768)
	good(t, td.out(write16(z1, 8), pattern(8*512, 1)))
	td.wantZones("1/0 0+32768@-", "2/2 32768+32768@32776", "2/1 65536+32768@65536", "2/1 98304+32768@98304")
	wantSense(t, td.out(write16(z1, 8), pattern(8*512, 2)), scsi.IllegalRequest, scsi.UnalignedWriteCommand)
	wantSense(t, td.out(write16(z1+16, 8), pattern(8*512, 2)), scsi.IllegalRequest, scsi.UnalignedWriteCommand)
	wantSense(t, td.out(write16(z1+32768-4, 8), pattern(8*512, 2)), scsi.IllegalRequest, scsi.WriteBoundaryViolation)
	// The conventional zone takes writes anywhere, but not into the next.
	good(t, td.out(write16(100, 8), pattern(8*512, 3)))
	wantSense(t, td.out(write16(z1-4, 8), pattern(8*512, 3)), scsi.IllegalRequest, scsi.WriteBoundaryViolation)
	// A read may not run from the conventional zone into a sequential one;
	// past the write pointer it reads zeros (URSWRZ).
	r, _ := td.in(read16(z1-4, 8), 8*512)
	wantSense(t, r, scsi.IllegalRequest, scsi.AttemptToReadInvalidData)
	r, got := td.in(read16(z1, 16), 16*512)
	good(t, r)
	if !bytes.Equal(got[:8*512], pattern(8*512, 1)) || !bytes.Equal(got[8*512:], make([]byte, 8*512)) {
		t.Fatal("read of the zone: not the data, then zeros")
	}
	// Writing the rest of the zone makes it full (and no longer open).
	good(t, td.out(write16(z1+8, 32760), make([]byte, 32760*512)))
	td.wantZones("1/0 0+32768@-", "2/e 32768+32768@65536", "2/1 65536+32768@65536", "2/1 98304+32768@98304")
	wantSense(t, td.out(write16(z1+32768-8, 8), make([]byte, 8*512)), scsi.IllegalRequest, scsi.InvalidFieldInCDB)
	// WRITE SAME and COMPARE AND WRITE follow the same rules.
	z2 := uint64(65536)
	wantSense(t, td.out(rw16(0x93, z2+1, 4), make([]byte, 512)), scsi.IllegalRequest, scsi.UnalignedWriteCommand)
	good(t, td.out(rw16(0x93, z2, 4), pattern(512, 4)))
	good(t, td.out(cawCDB(z2+4, 1), make([]byte, 1024)))
	wantSense(t, td.out(cawCDB(z2+4, 1), make([]byte, 1024)), scsi.IllegalRequest, scsi.UnalignedWriteCommand)
	if _, descs := td.zones(z2, 128, 0, false); descs[0] != "2/2 65536+32768@65541" {
		t.Fatalf("after WRITE SAME and COMPARE AND WRITE: %v", descs)
	}
}

// RESET WRITE POINTER empties a zone and zeroes it; FINISH fills it;
// CLOSE of a zone with nothing written leaves it empty; a ZONE ID that is
// not the start of a sequential zone is refused.
func TestZoneManagement(t *testing.T) {
	td := newDisk(t, "size=64M;mode=store;zoned=host-managed")
	z1, z2, z3 := uint64(32768), uint64(65536), uint64(98304)
	good(t, td.out(write16(z1, 8), pattern(8*512, 1)))
	good(t, td.do(zoneCDB(resetWP, z1, false), nil))
	r, got := td.in(read16(z1, 8), 8*512)
	good(t, r)
	if !bytes.Equal(got, make([]byte, 8*512)) {
		t.Fatal("RESET WRITE POINTER left data")
	}
	good(t, td.out(write16(z1, 8), pattern(8*512, 2))) // at the reset write pointer
	good(t, td.do(zoneCDB(finishZone, z2, false), nil))
	good(t, td.do(zoneCDB(openZone, z3, false), nil))
	td.wantZones("1/0 0+32768@-", "2/2 32768+32768@32776", "2/e 65536+32768@98304", "2/3 98304+32768@98304")
	good(t, td.do(zoneCDB(closeZone, z3, false), nil)) // nothing written: empty
	good(t, td.do(zoneCDB(closeZone, 0, true), nil))   // zone 1 closes
	td.wantZones("1/0 0+32768@-", "2/4 32768+32768@32776", "2/e 65536+32768@98304", "2/1 98304+32768@98304")
	good(t, td.do(zoneCDB(resetWP, 0, true), nil))
	td.wantZones("1/0 0+32768@-", "2/1 32768+32768@32768", "2/1 65536+32768@65536", "2/1 98304+32768@98304")
	for _, id := range []uint64{0, z1 + 1} {
		wantField(t, td.do(zoneCDB(openZone, id, false), nil), true, 2, -1)
	}
	wantSense(t, td.do(zoneCDB(resetWP, 1<<30, false), nil), scsi.IllegalRequest, scsi.LBAOutOfRange)
}

// The open-zone limit: writes close an implicitly open zone to open
// another; when every open zone was opened explicitly, a write to an
// empty zone or another OPEN ZONE gets DATA PROTECT, INSUFFICIENT ZONE
// RESOURCES.
func TestZoneOpenLimit(t *testing.T) {
	td := newDisk(t, "size=64M;zoned=host-managed;zone_size=4M;zone_max_open=2") // fake_rw keeps write pointers too
	zone := func(i uint64) uint64 { return i * 8192 }
	good(t, td.out(write16(zone(1), 1), make([]byte, 512)))
	good(t, td.out(write16(zone(2), 1), make([]byte, 512)))
	good(t, td.out(write16(zone(3), 1), make([]byte, 512))) // closes zone 1
	if _, d := td.zones(zone(1), 64*4, 0, false); d[0] != "2/4 8192+8192@8193" || d[1] != "2/2 16384+8192@16385" || d[2] != "2/2 24576+8192@24577" {
		t.Fatalf("after three writes with two open zones: %v", d)
	}
	good(t, td.do(zoneCDB(openZone, zone(4), false), nil))
	good(t, td.do(zoneCDB(openZone, zone(5), false), nil))
	wantSense(t, td.do(zoneCDB(openZone, zone(6), false), nil), scsi.DataProtect, scsi.InsufficientZoneResources)
	wantSense(t, td.out(write16(zone(7), 1), make([]byte, 512)), scsi.DataProtect, scsi.InsufficientZoneResources)
	good(t, td.out(write16(zone(4), 1), make([]byte, 512))) // an open zone takes writes
	if n, _ := td.zones(0, 64, 0x02, false); n != 0 {
		t.Fatalf("%d bytes of implicitly open zones, want none left", n)
	}
	if n, _ := td.zones(0, 64, 0x03, false); n != 2*64 {
		t.Fatalf("%d bytes of explicitly open zones, want 2", n)
	}
}

// REPORT ZONES: reporting options select, ZONE LIST LENGTH counts every
// selected zone unless PARTIAL, and a start LBA inside a zone reports
// from that zone.
func TestReportZonesOptions(t *testing.T) {
	td := newDisk(t, "size=64M;zoned=host-managed;zone_size=4M") // 16 zones
	good(t, td.do(zoneCDB(finishZone, 8192, false), nil))
	good(t, td.out(write16(16384, 1), make([]byte, 512)))
	if n, d := td.zones(100, 64*3, 0, false); n != 16*64 || len(d) != 2 || d[0] != "1/0 0+8192@-" {
		t.Fatalf("from LBA 100: list length %d, %v", n, d)
	}
	if n, d := td.zones(0, 64*3, 0, true); n != 2*64 || len(d) != 2 {
		t.Fatalf("PARTIAL: list length %d, %d descriptors", n, len(d))
	}
	for opts, want := range map[byte]uint32{0x01: 13, 0x02: 1, 0x05: 1, 0x3f: 1, 0x11: 0, 0x06: 0} {
		if n, _ := td.zones(0, 64, opts, false); n != want*64 {
			t.Errorf("reporting option %#x: %d zones, want %d", opts, n/64, want)
		}
	}
	r, _ := td.in(reportZonesCDB(0, 64, 0x08, false), 64)
	wantField(t, r, true, 14, 5)
	r, _ = td.in(reportZonesCDB(1<<30, 64, 0, false), 64)
	wantSense(t, r, scsi.IllegalRequest, scsi.LBAOutOfRange)
}

// A host-aware disk takes writes anywhere: out of order marks the zone
// non-sequential, and its write pointer is the highest block written.
func TestHostAwareWrites(t *testing.T) {
	td := newDisk(t, "size=64M;zoned=host-aware;zone_size=16M;zone_nr_conv=0")
	good(t, td.out(write16(100, 8), make([]byte, 8*512)))
	good(t, td.out(write16(32768-4, 8), make([]byte, 8*512))) // runs on into zone 1
	r, _ := td.in(read16(32768-4, 8), 8*512)
	good(t, r)
	td.wantZones("3/e 0+32768@32768!", "3/2 32768+32768@32772", "3/1 65536+32768@65536", "3/1 98304+32768@98304")
	if n, _ := td.zones(0, 64, 0x11, false); n != 64 {
		t.Fatalf("non-sequential zones: %d", n/64)
	}
	// zone_max_open is a host-managed limit: a host-aware disk opens
	// every zone written.
	ha := newDisk(t, "size=64M;zoned=host-aware;zone_size=4M;zone_nr_conv=0;zone_max_open=1")
	for i := range uint64(3) {
		good(t, ha.out(write16(i*8192, 1), make([]byte, 512)))
	}
	if n, _ := ha.zones(0, 64, 0x02, false); n != 3*64 {
		t.Fatalf("host-aware with zone_max_open=1: %d implicitly open zones, want 3", n/64)
	}
}

func TestZonedConfig(t *testing.T) {
	for in, want := range map[string]string{
		"size=64M;zone_size=4M":                      "zone_size: only meaningful with zoned=",
		"size=64M;zoned=drive-managed":               `zoned: "drive-managed" is not one of none, host-aware, host-managed`,
		"size=64M;zoned=host-managed;lbpu=1":         "zoned: a zoned disk has no thin provisioning",
		"size=64M;zoned=host-managed;atomic_wr=1":    "zoned: a zoned disk has no atomic writes",
		"size=64M;zoned=host-managed;zone_size=3M":   "zone_size: 3145728 bytes is not a power-of-two number",
		"size=64M;zoned=host-managed;zone_nr_conv=4": "zone_nr_conv: 4 conventional zones leave no sequential zone of the 4",
		"size=1T;zoned=host-managed;zone_size=512K":  "zone_size: 2097152 zones of 1024 blocks exceed",
	} {
		if _, err := disk.ParseConfig(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
	c, err := disk.ParseConfig("size=64M;zoned=host-managed;zone_size=4M;zone_nr_conv=2;zone_max_open=0")
	if err != nil {
		t.Fatal(err)
	}
	if s := c.String(); s != "size=64MiB;zoned=host-managed;zone_size=4MiB;zone_nr_conv=2;zone_max_open=0" {
		t.Fatalf("canonical %q", s)
	}
	td := newDisk(t, "size=64M;zoned=host-managed")
	if err := td.d.Reconfigure("size=128M;zoned=host-managed"); err == nil || !strings.Contains(err.Error(), "a zoned disk keeps its capacity") {
		t.Fatalf("Reconfigure to 128M: %v", err)
	}
}

// zone_cap below zone_size: each sequential zone of that capacity is
// followed by a gap zone (type 5) to the next zone-size boundary, as
// scsi_debug's zone_cap_mb lays them out; VPD B6 and REPORT ZONES give the
// zone starting LBA granularity that Linux's sd_zbc takes as the zone
// length. Writes cannot reach a gap zone (21/09); a sequential zone is full
// at its capacity; a read from a zone into its gap crosses zone types
// (21/06); reporting option 3Eh leaves the gap zones out, 3Fh keeps them
// (they have no write pointer); zone management refuses a gap zone's LBA.
func TestGapZones(t *testing.T) {
	td := newDisk(t, "size=64M;mode=store;zoned=host-managed;zone_size=16M;zone_cap=12M")
	const zb, capb = 32768, 24576
	td.golden(inquiry(true, 0xb6, 64), 64, "14 b6 00 3c 01 000000 ffffffff ffffffff 00000008 000000 08 0000000000008000 00*32")
	td.wantZones("1/0 0+32768@-",
		"2/1 32768+24576@32768", "5/0 57344+8192@-",
		"2/1 65536+24576@65536", "5/0 90112+8192@-",
		"2/1 98304+24576@98304", "5/0 122880+8192@-")
	r, head := td.in(reportZonesCDB(0, 64, 0, false), 64)
	good(t, r)
	if g := binary.BigEndian.Uint64(head[16:]); g != zb {
		t.Fatalf("REPORT ZONES zone starting LBA granularity %d, want %d", g, zb)
	}
	if _, descs := td.zones(0, 64*8, 0x3e, false); len(descs) != 4 {
		t.Fatalf("option 3Eh (no gap zones): %v", descs)
	}
	if _, descs := td.zones(0, 64*8, 0x3f, false); !slices.Equal(descs, []string{"1/0 0+32768@-", "5/0 57344+8192@-", "5/0 90112+8192@-", "5/0 122880+8192@-"}) {
		t.Fatalf("option 3Fh (no write pointer): %v", descs)
	}
	if _, descs := td.zones(90112, 64*8, 0, false); len(descs) != 3 || descs[0] != "5/0 90112+8192@-" {
		t.Fatalf("report from a gap zone's LBA: %v", descs)
	}

	z1 := uint64(zb)
	wantSense(t, td.out(write16(z1+capb, 8), make([]byte, 8*512)), scsi.IllegalRequest, scsi.AttemptToAccessGapZone)
	wantSense(t, td.out(write16(z1, capb+8), make([]byte, (capb+8)*512)), scsi.IllegalRequest, scsi.WriteBoundaryViolation)
	good(t, td.out(write16(z1, capb), make([]byte, capb*512)))
	td.wantZones("1/0 0+32768@-", "2/e 32768+24576@57344", "5/0 57344+8192@-",
		"2/1 65536+24576@65536", "5/0 90112+8192@-", "2/1 98304+24576@98304", "5/0 122880+8192@-")
	r, _ = td.in(read16(z1+capb-4, 8), 8*512)
	wantSense(t, r, scsi.IllegalRequest, scsi.AttemptToReadInvalidData)
	r, got := td.in(read16(z1+capb, 8), 8*512)
	good(t, r)
	if !bytes.Equal(got, make([]byte, 8*512)) {
		t.Fatal("a gap zone reads other than zeros")
	}
	for _, sa := range []byte{openZone, closeZone, finishZone, resetWP} {
		wantField(t, td.do(zoneCDB(sa, z1+capb, false), nil), true, 2, -1)
	}
	good(t, td.do(zoneCDB(resetWP, z1, false), nil))
	good(t, td.do(zoneCDB(finishZone, 0, true), nil))
	td.wantZones("1/0 0+32768@-", "2/1 32768+24576@32768", "5/0 57344+8192@-",
		"2/1 65536+24576@65536", "5/0 90112+8192@-", "2/1 98304+24576@98304", "5/0 122880+8192@-")

	// A host-aware write may run on into the next zone, but not into a gap.
	ha := newDisk(t, "size=64M;mode=store;zoned=host-aware;zone_size=16M;zone_cap=12M;zone_nr_conv=0")
	good(t, ha.out(write16(100, 8), pattern(8*512, 1)))
	wantSense(t, ha.out(write16(capb-4, 8), make([]byte, 8*512)), scsi.IllegalRequest, scsi.AttemptToAccessGapZone)

	// The gap zones' state crosses a planned restart like the others.
	next, err := handOver(t, td, "size=64M;mode=store;zoned=host-managed;zone_size=16M;zone_cap=12M")
	if err != nil {
		t.Fatal(err)
	}
	next.ResumeHandOver()
	(&tdisk{t: t, d: next}).wantZones("1/0 0+32768@-", "2/1 32768+24576@32768", "5/0 57344+8192@-",
		"2/1 65536+24576@65536", "5/0 90112+8192@-", "2/1 98304+24576@98304", "5/0 122880+8192@-")
}

func TestGapZonesConfig(t *testing.T) {
	for in, want := range map[string]string{
		"size=64M;zone_cap=4M": "zone_cap: only meaningful with zoned=",
		"size=64M;zoned=host-managed;zone_size=16M;zone_cap=32M": "zone_cap: 33554432 bytes exceeds the zone size, 16777216 bytes",
		"size=64M;zoned=host-managed;zone_cap=1000":              "zone_cap: 1000 bytes is not a whole number of 512-byte blocks",
		"size=64M;zoned=host-managed;zone_cap=0":                 "zone_cap: must be at least one block",
		"size=1T;zoned=host-managed;zone_size=1M;zone_cap=512K":  "(with the gap zones zone_cap adds) exceed",
	} {
		if _, err := disk.ParseConfig(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
	c, err := disk.ParseConfig("size=64M;zoned=host-managed;zone_size=16M;zone_cap=12M")
	if err != nil {
		t.Fatal(err)
	}
	if s := c.String(); s != "size=64MiB;zoned=host-managed;zone_size=16MiB;zone_cap=12MiB" {
		t.Fatalf("canonical %q", s)
	}
}
