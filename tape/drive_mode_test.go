package tape

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/vscsid/vscsid/scsi"
)

// modeSense6 is what st sends at open: header and block descriptor.
var stModeSense = cdb(0x1a, 0, 0, 0, 12, 0)

func TestModeSenseAtOpen(t *testing.T) {
	for _, tt := range []struct {
		cfg  string
		want string
	}{
		{"", "0b 00 10 08  80 000000 00 000000"},
		{"personality=lto9", "0b 98 10 08  60 000000 00 000000"},        // IBM: LTO-9 data cartridge
		{"personality=lto5;worm=1", "0b 5c 10 08  58 000000 00 000000"}, // LTO-5 WORM cartridge
		{"personality=hp-lto8;worm=1", "0b 01 10 08  5e 000000 00 000000"},
		{"personality=dat72;worm=1", "0b 00 10 08  47 000000 00 000400"}, // no WORM DDS
		{"personality=dat72", "0b 00 10 08  47 000000 00 000400"},        // fixed 1024 at power-on, as DDS drives
		{"wp=1", "0b 00 90 08  80 000000 00 000000"},                     // WP bit: st opens read-only
		{"personality=hp-lto6;blksize=512", "0b 00 10 08  5a 000000 00 000200"},
	} {
		h := newHarness(t, tt.cfg)
		in := h.ok(stModeSense, nil, 12)
		wantBytes(t, tt.cfg, in, hexBytes(tt.want))
	}
}

// TestDAT72FixedMode: the DDS profile starts in fixed 1024-byte mode, so
// st's default open reads and writes 1 KiB blocks without MODE SELECT.
func TestDAT72FixedMode(t *testing.T) {
	h := newHarness(t, "personality=dat72")
	data := append(block(0, 1024), block(1, 1024)...)
	h.ok(write6(true, 2), data, 0)
	h.ok(rewindCDB(), nil, 0)
	in := h.ok(read6(true, false, 2), nil, 2048)
	wantBytes(t, "fixed read", in, data)
	// Reset returns to the power-on block size after mt setblk 0.
	h.ok(cdb(0x15, 0x10, 0, 0, 12, 0), hexBytes("00 00 10 08 00 000000 00 000000"), 0)
	in = h.ok(stModeSense, nil, 12)
	if in[11] != 0 || in[10] != 0 {
		t.Fatalf("after setblk 0: % x", in)
	}
	h.d.Reset()
	h.clearUA()
	in = h.ok(stModeSense, nil, 12)
	wantBytes(t, "after reset", in, hexBytes("0b 00 10 08 47 000000 00 000400"))
}

func TestModeSelectBlockSize(t *testing.T) {
	h := newHarness(t, "")
	// mt setblk 1024: MODE SELECT(6) "15 10 00 00 0c 00" with a descriptor.
	h.ok(cdb(0x15, 0x10, 0, 0, 12, 0), hexBytes("00 00 10 08 00 000000 00 000400"), 0)
	in := h.ok(stModeSense, nil, 12)
	wantBytes(t, "mode sense", in, hexBytes("0b 00 10 08 80 000000 00 000400"))
	var data []byte
	for i := range 8 {
		data = append(data, block(i, 1024)...)
	}
	h.ok(write6(true, 8), data, 0) // "0a 01 00 00 08 00" carries 8192 bytes
	h.ok(rewindCDB(), nil, 0)
	in = h.ok(read6(true, false, 8), nil, 8192)
	wantBytes(t, "fixed read", in, data)
	h.wantPos(0, 8, 0)
	// A block size outside the block limits is refused, pointing at the
	// block length in the parameter list (header 4 + 5).
	s, _ := h.fail(cdb(0x15, 0x10, 0, 0, 12, 0), hexBytes("00 00 10 08 00 000000 00 200000"), 0)
	wantBytes(t, "too large", hexBytes(s), hexBytes("70 00 05 00 00 00 00 0a 00 00 00 00 26 00 00 80 00 09"))
	// So is an unknown density.
	s, _ = h.fail(cdb(0x15, 0x10, 0, 0, 12, 0), hexBytes("00 00 10 08 42 000000 00 000400"), 0)
	wantBytes(t, "density", hexBytes(s), hexBytes("70 00 05 00 00 00 00 0a 00 00 00 00 26 00 00 80 00 04"))
	// Variable writes outside the limits are refused at the CDB.
	s, _ = h.fail(write6(false, 2<<20), make([]byte, 2<<20), 0)
	wantBytes(t, "variable too large", hexBytes(s), hexBytes("70 00 05 00 00 00 00 0a 00 00 00 00 24 00 00 c0 00 02"))
	// More transfer length than Data-Out, or than Data-In in fixed mode.
	h.fail(write6(false, 100), make([]byte, 50), 0)
	h.ok(cdb(0x15, 0x10, 0, 0, 12, 0), hexBytes("00 00 10 08 00 000000 00 000400"), 0)
	h.ok(rewindCDB(), nil, 0)
	s, _ = h.fail(read6(true, false, 2), nil, 1024)
	wantBytes(t, "fixed read larger than the buffer", hexBytes(s), hexBytes("70 00 05 00 00 00 00 0a 00 00 00 00 24 00 00 c0 00 02"))
	h.wantPos(0, 0, 0)
}

func TestReadBlockLimits(t *testing.T) {
	h := newHarness(t, "max_block=262144;min_block=2")
	in := h.ok(cdb(0x05, 0, 0, 0, 0, 0), nil, 6)
	wantBytes(t, "limits", in, hexBytes("00 040000 0002"))
	h.fail(cdb(0x05, 1, 0, 0, 0, 0), nil, 20)
	h = newHarness(t, "")
	in = h.ok(cdb(0x05, 0, 0, 0, 0, 0), nil, 6)
	wantBytes(t, "defaults", in, hexBytes("00 100000 0001"))
}

func TestDescriptorSenseViaControlPage(t *testing.T) {
	h := newHarness(t, "")
	in := h.ok(cdb(0x1a, 0x08, 0x0a, 0, 255, 0), nil, 255) // DBD, control page
	wantBytes(t, "control page", in, hexBytes("0f 00 10 00 0a 0a 00 00 00 00 00 00 00 00 00 00"))
	in = h.ok(cdb(0x1a, 0x08, 0x4a, 0, 255, 0), nil, 255) // changeable
	wantBytes(t, "changeable", in, hexBytes("0f 00 10 00 0a 0a 04 00 00 00 00 00 00 00 00 00"))
	h.ok(cdb(0x15, 0x10, 0, 0, 16, 0), hexBytes("00 00 00 00 0a 0a 04 00 00 00 00 00 00 00 00 00"), 0)
	s, _ := h.fail(read6(false, false, 10), nil, 10) // EOD, descriptor format now
	wantBytes(t, "descriptor sense", hexBytes(s), hexBytes("72 08 00 05 00 00 00 0c 00 0a 80 00 00 00 00 00 00 00 00 0a"))
	// Reset restores fixed format.
	h.d.Reset()
	h.clearUA()
	s, _ = h.fail(read6(false, false, 10), nil, 10)
	if !strings.HasPrefix(s, "f0") {
		t.Fatalf("after reset: %s", s)
	}
}

func TestCompressionPage(t *testing.T) {
	h := newHarness(t, "personality=lto7")
	// st_compression: read page 0x0F with block descriptors, clear DCE,
	// write it back with MODE SELECT(6), PF.
	in := h.ok(cdb(0x1a, 0, 0x0f, 0, 255, 0), nil, 255)
	wantBytes(t, "compression page", in, hexBytes("1b 78 10 08 5c 000000 00 000000 0f 0e c0 80 00000001 00000001 00000000"))
	in[0], in[1] = 0, 0
	in[14] &^= 0x80
	h.ok(cdb(0x15, 0x10, 0, 0, byte(len(in)), 0), in, 0)
	in = h.ok(cdb(0x1a, 0x08, 0x0f, 0, 255, 0), nil, 255)
	if in[6] != 0x40 {
		t.Fatalf("DCE still set: % x", in)
	}
	// DCC is not changeable.
	in[0] = 0
	in[6] = 0x80
	h.fail(cdb(0x15, 0x10, 0, 0, byte(len(in)), 0), in, 0)
}

// TestDeviceConfigurationLong: LTFS sends a device configuration page
// longer than 0Eh (mhvtl 7b2a6c8); it must be accepted.
func TestDeviceConfigurationLong(t *testing.T) {
	h := newHarness(t, "personality=lto6")
	in := h.ok(cdb(0x5a, 0x08, 0x10, 0, 0, 0, 0, 0, 255, 0), nil, 255)
	page := in[8:]
	if page[0] != 0x10 || page[1] != 0x0e || len(page) != 16 {
		t.Fatalf("device configuration page % x", page)
	}
	long := append(append([]byte{}, page...), 0, 0)
	long[1] = 0x10
	list := append(make([]byte, 8), long...)
	h.ok(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, byte(len(list)), 0), list, 0)
	// Fields the drive does not model are accepted at 0Eh too (WRITE
	// DELAY TIME, bytes 6-7; REWIND ON RESET, byte 15).
	exact := append([]byte{}, page...)
	exact[6], exact[7], exact[15] = 0x01, 0x00, 0x08
	list = append(make([]byte, 8), exact...)
	h.ok(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, byte(len(list)), 0), list, 0)
	// A short one is not.
	short := append([]byte{}, page[:12]...)
	short[1] = 10
	list = append(make([]byte, 8), short...)
	s, _ := h.fail(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, byte(len(list)), 0), list, 0)
	wantBytes(t, "short page", hexBytes(s), hexBytes("70 00 05 00 00 00 00 0a 00 00 00 00 26 00 00 80 00 09"))
	// RSMK set through the long page sticks.
	long[8] |= 0x20
	list = append(make([]byte, 8), long...)
	h.ok(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, byte(len(list)), 0), list, 0)
	if !h.d.mode.rsmk {
		t.Fatal("RSMK not applied")
	}
	// A bad page after it makes the whole command fail, and the pointer
	// points into the original list.
	bad := append(append([]byte{}, list...), 0x0a, 0x0a, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	r, _ := h.do(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, byte(len(bad)), 0), bad, 0)
	if r.Status != scsi.StatusCheckCondition || r.Sense.ASC != scsi.InvalidFieldInParameterList || int(r.Sense.Pointer.Field) < len(list) {
		t.Fatalf("bad control page after the long page: %v %s", r.Status, senseHex(r.Sense))
	}
}

// TestPartitionLikeST replays st's partition_tape (MTMKPART 100): MODE
// SENSE page 11h with block descriptors, the same page back with IDP, PSUM
// MB and two descriptors (FFFFh, 100), MODE SELECT(6), FORMAT MEDIUM 1;
// then MTSETPART 1 as LOCATE(10) with CP.
func TestPartitionLikeST(t *testing.T) {
	h := newHarness(t, "personality=lto6;capacity=1G")
	h.writeBlocks(10, 10)
	h.ok(rewindCDB(), nil, 0)
	bp := h.ok(cdb(0x1a, 0, 0x11, 0, 255, 0), nil, 255)
	pgo := 4 + int(bp[3])
	if bp[pgo] != 0x11 || bp[pgo+2] != 3 || bp[pgo+3] != 0 || bp[pgo+4]&0x04 == 0 {
		t.Fatalf("partition page % x", bp[pgo:])
	}
	size := 100
	psdo := pgo + 8
	bp[psdo], bp[psdo+1] = 0xff, 0xff
	psdo += 2
	bp[psdo], bp[psdo+1] = byte(size>>8), byte(size)
	bp[pgo+3] = 1
	bp[pgo+6], bp[pgo+7] = 0, 0
	bp[pgo+4] = 0x20 | 0x10 | bp[pgo+4]&0x07
	bp[pgo+1] = 6 + 2*2
	n := pgo + int(bp[pgo+1]) + 2
	bp[0], bp[1], bp[2] = 0, 0, bp[2]&^0x80
	h.ok(cdb(0x15, 0x10, 0, 0, byte(n), 0), bp[:n], 0)
	// Not yet formatted: the data is still there.
	h.ok(read6(false, false, 10), nil, 10)
	// FORMAT MEDIUM away from BOP of partition 0 is refused.
	s, _ := h.fail(cdb(0x04, 0, 1, 0, 0, 0), nil, 0)
	wantBytes(t, "format not at BOP", hexBytes(s), hexBytes("70 00 05 00 00 00 00 0a 00 00 00 00 3b 0c 00 00 00 00"))
	h.ok(rewindCDB(), nil, 0)
	h.ok(cdb(0x04, 0, 1, 0, 0, 0), nil, 0)
	info := h.d.med.Info()
	if info.Partitions != 2 || info.Capacity[1] != 100e6 || info.Capacity[0] != 1<<30-100e6 {
		t.Fatalf("after format: %+v", info)
	}
	// nbr_partitions: page 11h, DBD.
	pg := h.ok(cdb(0x1a, 0x08, 0x11, 0, 255, 0), nil, 255)[4:]
	if pg[3]+1 != 2 {
		t.Fatalf("partitions reported %d", pg[3]+1)
	}
	// The data is gone.
	s, _ = h.fail(read6(false, false, 10), nil, 10)
	if !strings.Contains(s, "0005") {
		t.Fatalf("after format: %s", s)
	}
	// mt setpart 1; mt seek 0 → LOCATE(10) BT CP, partition 1.
	h.ok(cdb(0x2b, 0x06, 0, 0, 0, 0, 0, 0, 1, 0), nil, 0)
	h.writeBlocks(77)
	in := h.ok(readPos(1), nil, 20)
	wantBytes(t, "position in partition 1", in, hexBytes("00 01 0000 00000001 00000001 00 000000 00000000"))
	in = h.ok(readPos(6), nil, 32)
	if binary.BigEndian.Uint32(in[4:]) != 1 {
		t.Fatalf("long form partition % x", in)
	}
	// Partition 0 is empty, partition 1 holds the block.
	h.ok(cdb(0x2b, 0x02, 0, 0, 0, 0, 0, 0, 0, 0), nil, 0)
	h.fail(read6(false, false, 77), nil, 77)
	h.ok(locate16(destObject, true, 1, 0), nil, 0)
	in = h.ok(read6(false, false, 77), nil, 77)
	wantBytes(t, "block in partition 1", in, block(0, 77))
	// The volume statistics report both partitions.
	if st := h.d.Stats(); st.Partition != 1 || st.Object != 1 {
		t.Fatalf("stats position %+v", st)
	}
	// Back to one partition: FORMAT MEDIUM 0.
	h.ok(rewindCDB(), nil, 0)
	h.ok(cdb(0x04, 0, 0, 0, 0, 0), nil, 0)
	if info := h.d.med.Info(); info.Partitions != 1 || info.Capacity[0] != 1<<30 {
		t.Fatalf("after format 0: %+v", info)
	}
}

// TestPartitionLTFSStyle: MODE SELECT(10) with PSUM 11b, units 10^6 and
// four partitions, then FORMAT MEDIUM 2; invalid layouts are refused.
func TestPartitionLTFSStyle(t *testing.T) {
	h := newHarness(t, "personality=lto9;capacity=2G")
	page := hexBytes("11 0e 03 03 3c 03 06 00 0064 00c8 012c ffff")
	list := append(make([]byte, 8), page...)
	h.ok(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, byte(len(list)), 0), list, 0)
	// MODE SENSE shows the pending layout.
	pg := h.ok(cdb(0x5a, 0x08, 0x11, 0, 0, 0, 0, 0, 255, 0), nil, 255)[8:]
	if pg[3] != 3 {
		t.Fatalf("pending page % x", pg)
	}
	h.ok(cdb(0x04, 0, 2, 0, 0, 0), nil, 0)
	info := h.d.med.Info()
	want := []int64{100e6, 200e6, 300e6, 2<<30 - 600e6}
	for i, c := range want {
		if info.Capacity[i] != c {
			t.Fatalf("partition %d: %d, want %d (%+v)", i, info.Capacity[i], c, info)
		}
	}
	for _, bad := range []struct {
		page string
		why  string
	}{
		{"11 0e 03 04 3c 03 06 00 0064 00c8 012c ffff", "five partitions"},
		{"11 0a 03 01 3c 03 06 00 ffff ffff", "two rest partitions"},
		{"11 0a 03 01 3c 03 06 00 0000 ffff", "zero size"},
		{"11 0a 03 01 3c 03 0c 00 0064 ffff", "too large (10^12 units)"},
		{"11 0a 03 01 e4 03 00 00 0064 ffff", "FDP and SDP and IDP"},
	} {
		list := append(make([]byte, 8), hexBytes(bad.page)...)
		r, _ := h.do(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, byte(len(list)), 0), list, 0)
		if r.Status != scsi.StatusCheckCondition || r.Sense.ASC != scsi.InvalidFieldInParameterList {
			t.Errorf("%s: %v %s", bad.why, r.Status, senseHex(r.Sense))
		}
	}
	// LTO-5 has two partitions at most.
	h = newHarness(t, "personality=lto5;capacity=2G")
	list = append(make([]byte, 8), hexBytes("11 0a 01 02 3c 03 06 00 0064 ffff")...)
	h.fail(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, byte(len(list)), 0), list, 0)
}

func TestFormatMediumChecks(t *testing.T) {
	h := newHarness(t, "wp=1")
	s, _ := h.fail(cdb(0x04, 0, 0, 0, 0, 0), nil, 0)
	if !strings.Contains(s, "2700") {
		t.Fatalf("format write protected: %s", s)
	}
	h = newHarness(t, "")
	h.fail(cdb(0x04, 0, 3, 0, 0, 0), nil, 0)
	h.fail(cdb(0x04, 0, 0, 0, 4, 0), nil, 0)
	h = newHarness(t, "worm=1")
	h.writeBlocks(10)
	h.ok(rewindCDB(), nil, 0)
	s, _ = h.fail(cdb(0x04, 0, 0, 0, 0, 0), nil, 0)
	if !strings.Contains(s, "300c") {
		t.Fatalf("format WORM with data: %s", s)
	}
}

func TestReportDensitySupport(t *testing.T) {
	h := newHarness(t, "personality=lto9")
	in := h.ok(cdb(0x44, 0, 0, 0, 0, 0, 0, 0x10, 0, 0), nil, 4096)
	if int(binary.BigEndian.Uint16(in)) != len(in)-2 || len(in) != 4+2*52 {
		t.Fatalf("length % x", in[:4])
	}
	d0, d1 := in[4:56], in[56:108]
	wantBytes(t, "LTO-8 descriptor", d0[:16], hexBytes("5e 5e 80 00 00 0050bd 007f 1a00 00b71b00"))
	wantBytes(t, "LTO-9 descriptor", d1[:16], hexBytes("60 60 a0 00 00 0059f7 007f 2300 0112a880"))
	if string(d1[16:52]) != "LTO-CVE U-932   Ultrium 9/32T       " {
		t.Fatalf("names %q", d1[16:52])
	}
	// MEDIA=1: the loaded cartridge, with its capacity (64 MiB memory).
	in = h.ok(cdb(0x44, 1, 0, 0, 0, 0, 0, 0x10, 0, 0), nil, 4096)
	if len(in) != 56 || in[4] != 0x60 || binary.BigEndian.Uint32(in[16:]) != 67 {
		t.Fatalf("media: % x", in)
	}
	// Medium types: data and WORM for each density.
	in = h.ok(cdb(0x44, 2, 0, 0, 0, 0, 0, 0x10, 0, 0), nil, 4096)
	if len(in) != 4+4*56 || string(in[4+56+28:4+56+36]) != "LTO8WORM" || in[4+56] != 1 {
		t.Fatalf("medium types % x", in)
	}
	// Allocation length truncates.
	in = h.ok(cdb(0x44, 0, 0, 0, 0, 0, 0, 0, 10, 0), nil, 4096)
	if len(in) != 10 {
		t.Fatalf("allocation 10: %d bytes", len(in))
	}
	// LTO-5 reads LTO-3 but does not write it.
	h = newHarness(t, "personality=lto5")
	in = h.ok(cdb(0x44, 0, 0, 0, 0, 0, 0, 0x10, 0, 0), nil, 4096)
	if in[4] != 0x44 || in[6] != 0 || in[56] != 0x46 || in[58] != 0x80 || in[108] != 0x58 || in[110] != 0xa0 {
		t.Fatalf("LTO-5 table % x", in)
	}
}

// TestReadBuffer: every mode LTFS's dump path uses succeeds.
func TestReadBuffer(t *testing.T) {
	h := newHarness(t, "")
	in := h.ok(cdb(0x3c, 0x03, 0, 0, 0, 0, 0, 0, 4, 0), nil, 4) // descriptor
	wantBytes(t, "descriptor", in, hexBytes("00 100000"))
	in = h.ok(cdb(0x3c, 0x02, 0, 0, 0, 0, 0x08, 0, 0, 0), nil, 1<<20) // 512 KiB of data
	if len(in) != 512<<10 {
		t.Fatalf("data mode: %d bytes", len(in))
	}
	in = h.ok(cdb(0x3c, 0x02, 0, 0x0f, 0xff, 0, 0x08, 0, 0, 0), nil, 1<<20) // near the end
	if len(in) != 1<<20-0x0fff00 {
		t.Fatalf("data at offset: %d bytes", len(in))
	}
	in = h.ok(cdb(0x3c, 0x00, 0, 0, 0, 0, 0, 0, 16, 0), nil, 16)
	wantBytes(t, "header+data", in, hexBytes("00 100000 00000000 00000000 00000000"))
	in = h.ok(cdb(0x3c, 0x0b, 0, 0, 0, 0, 0, 0, 4, 0), nil, 4)
	wantBytes(t, "echo descriptor", in, hexBytes("00 00 1000"))
	in = h.ok(cdb(0x3c, 0x0a, 0, 0, 0, 0, 0, 0x10, 0, 0), nil, 8192)
	if len(in) != 4096 {
		t.Fatalf("echo: %d", len(in))
	}
	h.fail(cdb(0x3c, 0x02, 0, 0x20, 0, 0, 0, 0, 4, 0), nil, 4) // offset past the end
	h.fail(cdb(0x3c, 0x1c, 0, 0, 0, 0, 0, 0, 4, 0), nil, 4)
}

func TestPartitionSizes(t *testing.T) {
	const total = 1000e6
	for _, tt := range []struct {
		page string
		want []int64
		err  bool
	}{
		{"11 06 03 00 00 03 00 00", []int64{0}, false},
		{"11 08 03 00 00 03 00 00 0000", []int64{0}, false},                 // descriptors ignored without IDP
		{"11 08 01 01 30 03 00 00 0064", []int64{900e6, 100e6}, false},      // SCSI-2 form: the descriptor sizes partition 1
		{"11 0a 03 01 30 03 00 00 0064 ffff", []int64{100e6, 900e6}, false}, // MB
		{"11 0a 03 01 38 03 09 00 0001 ffff", []int64{1e9, 0}, true},        // 1 GB leaves nothing
		{"11 0a 03 01 28 03 00 00 0064 ffff", []int64{100e3, total - 100e3}, false},
		{"11 0a 03 01 80 03 00 00 0000 0000", []int64{500e6, 0}, false}, // FDP
		{"11 0a 03 02 40 03 00 00 0000 0000", []int64{333333333, 333333333, 0}, false},
		{"11 0a 03 01 30 03 00 00 0064 0064", []int64{100e6, 100e6}, false}, // explicit, not filling
		{"11 0a 03 01 00 03 00 00 0064 0064", nil, true},                    // additional partitions without a mode
		{"11 06", nil, true},
	} {
		got, _, err := partitionSizes(hexBytes(tt.page), total, 4)
		if (err != nil) != tt.err {
			t.Errorf("%s: error %v", tt.page, err)
			continue
		}
		if err == nil && !equalInt64(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.page, got, tt.want)
		}
	}
}

func equalInt64(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
