package tape

import (
	"slices"
	"strings"
	"testing"

	"github.com/vscsid/vscsid/scsi"
)

// The commands LTFS's IBM (sg) backend sends, byte for byte, and what it
// expects back.

// TestLTFSForcedDump: after an error LTFS forces a dump (SEND DIAGNOSTIC
// PF=1, page 80h diagnostic ID 0160h) and reads it back with READ BUFFER
// of buffer 01h (descriptor, then data); none of it may fail, or the dump
// recurses on its own errors.
func TestLTFSForcedDump(t *testing.T) {
	h := newHarness(t, "personality=lto6")
	h.ok(cdb(0x1d, 0x10, 0, 0, 0x08, 0), hexBytes("80 00 0004 0160 0000"), 0)
	in := h.ok(cdb(0x3c, 0x03, 0x01, 0, 0, 0, 0, 0, 4, 0), nil, 4)
	wantBytes(t, "dump descriptor", in, hexBytes("00 100000"))
	in = h.ok(cdb(0x3c, 0x02, 0x01, 0, 0, 0, 0x08, 0, 0, 0), nil, 512<<10)
	if len(in) != 512<<10 {
		t.Fatalf("dump data: %d bytes", len(in))
	}
	// Another diagnostic ID is refused at its byte.
	s, _ := h.fail(cdb(0x1d, 0x10, 0, 0, 0x08, 0), hexBytes("80 00 0004 0161 0000"), 0)
	if want := "700005000000000a00000000260000800004"; s != want {
		t.Fatalf("diagnostic 0161h: sense %s, want %s", s, want)
	}
	// The self-tests pass without a cartridge.
	h.ok(cdb(0x1b, 0, 0, 0, 0, 0), nil, 0) // unload
	h.ok(cdb(0x1d, 0x04, 0, 0, 0, 0), nil, 0)
}

// TestSendDiagnosticModels: the IBM vendor page exists on the IBM models
// only; every model lists SEND DIAGNOSTIC in REPORT SUPPORTED OPERATION
// CODES.
func TestSendDiagnosticModels(t *testing.T) {
	for _, tt := range []struct {
		model string
		dump  bool
	}{{"lto5", true}, {"lto9", true}, {"hp-lto8", false}, {"generic", false}, {"dat72", false}} {
		h := newHarness(t, "personality="+tt.model)
		r, _ := h.do(cdb(0x1d, 0x10, 0, 0, 0x08, 0), hexBytes("80 00 0004 0160 0000"), 0)
		if got := r.Status == 0; got != tt.dump {
			t.Errorf("%s: forced dump accepted %v, want %v", tt.model, got, tt.dump)
		}
		in := h.ok(cdb(0xa3, 0x0c, 0x01, 0x1d, 0, 0, 0, 0, 1, 0, 0, 0), nil, 256)
		wantBytes(t, tt.model+" rsoc 1dh", in, hexBytes("00 03 0006 1d f7 00 ffff 04"))
	}
}

// TestLTFSCartridgeType: LTFS's IBM backend reads the cartridge type from
// the medium type of MODE SENSE(10) page 3Fh (byte 2) and the density
// from the block descriptor (byte 8); an LTO drive reading an older
// generation reports that cartridge's type.
func TestLTFSCartridgeType(t *testing.T) {
	for _, tt := range []struct {
		cfg  string
		want string
	}{
		{"personality=lto6", "68 10 0000 0008 5a"},
		{"personality=lto6;worm=1", "6c 10 0000 0008 5a"},
		{"personality=lto8", "88 10 0000 0008 5e"},
		{"personality=lto10", "a8 10 0000 0008 62"},
		{"personality=hp-lto6", "00 10 0000 0008 5a"},
	} {
		h := newHarness(t, tt.cfg)
		in := h.ok(cdb(0x5a, 0, 0x3f, 0, 0, 0, 0, 0, 0xff, 0), nil, 0xff)
		wantBytes(t, tt.cfg, in[2:9], hexBytes(tt.want))
	}
	// An LTO-7 drive with an LTO-5 cartridge (it reads two generations
	// back).
	h := newHarness(t, "personality=lto7")
	h.d.info.Density = 0x58
	h.d.spc.Modes.MediumType = h.d.mediumType()
	in := h.ok(cdb(0x5a, 0, 0x3f, 0, 0, 0, 0, 0, 0xff, 0), nil, 0xff)
	wantBytes(t, "lto7 with an LTO-5 cartridge", in[2:9], hexBytes("58 90 0000 0008 58"))
	// An LTO-10 drive with the 40 TB cartridge (density 63h).
	h10 := newHarness(t, "personality=lto10")
	h10.d.info.Density = 0x63
	h10.d.spc.Modes.MediumType = h10.d.mediumType()
	in = h10.ok(cdb(0x5a, 0, 0x3f, 0, 0, 0, 0, 0, 0xff, 0), nil, 0xff)
	wantBytes(t, "lto10 with the 40 TB cartridge", in[2:9], hexBytes("a9 10 0000 0008 63"))
	// Without a cartridge: 00h.
	h.ok(cdb(0x1b, 0, 0, 0, 0, 0), nil, 0)
	in = h.ok(cdb(0x5a, 0x08, 0x3f, 0, 0, 0, 0, 0, 0xff, 0), nil, 0xff)
	if in[2] != 0 {
		t.Fatalf("empty drive: medium type %#x", in[2])
	}
}

// TestLTFSDataProtectionPage: LTFS's IBM backend reads page 0Ah subpage
// F0h (48 bytes with the block descriptor) and writes it back with LBP
// METHOD, LENGTH and LBP_W/LBP_R at bytes 20-22 of the list: 00h (off)
// always, 01h (Reed-Solomon CRC) from LTO-5, 02h (CRC32C) from LTO-7.
func TestLTFSDataProtectionPage(t *testing.T) {
	h := newHarness(t, "personality=lto6")
	in := h.ok(cdb(0x5a, 0, 0x0a, 0xf0, 0, 0, 0, 0, 48, 0), nil, 48)
	want := "002e 68 10 0000 0008 5a000000 00000000 4a f0 001c" + strings.Repeat("00", 28)
	wantBytes(t, "page 0Ah/F0h", in, hexBytes(want))
	in = h.ok(cdb(0x5a, 0x08, 0x4a, 0xf0, 0, 0, 0, 0, 48, 0), nil, 48) // changeable, no descriptor
	wantBytes(t, "changeable", in, hexBytes("0026 68 10 0000 0000 4a f0 001c ff ff e0"+strings.Repeat("00", 25)))

	selectDP := func(h *harness, method, length, bits byte) (string, bool) {
		l := h.ok(cdb(0x5a, 0, 0x0a, 0xf0, 0, 0, 0, 0, 48, 0), nil, 48)
		l[0], l[1] = 0, 0
		l[20], l[21], l[22] = method, length, bits
		r, _ := h.do(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, 48, 0), l, 0)
		return senseHex(r.Sense), r.Status == scsi.StatusGood
	}
	if s, ok := selectDP(h, 0x02, 0x04, 0xc0); ok || s != "700005000000000a00000000260000800014" {
		t.Fatalf("lto6 CRC32C: sense %s, want 26/00 at byte 20", s)
	}
	if s, ok := selectDP(h, 0x01, 0x08, 0xc0); ok || s != "700005000000000a00000000260000800015" {
		t.Fatalf("lto6 length 8: sense %s, want 26/00 at byte 21", s)
	}
	if s, ok := selectDP(h, 0x01, 0x04, 0xc0); !ok {
		t.Fatalf("lto6 Reed-Solomon: sense %s", s)
	}
	in = h.ok(cdb(0x5a, 0, 0x0a, 0xf0, 0, 0, 0, 0, 48, 0), nil, 48)
	wantBytes(t, "LBP on", in[20:23], hexBytes("01 04 c0"))
	if s, ok := selectDP(h, 0, 0, 0); !ok {
		t.Fatalf("lto6 off: sense %s", s)
	}
	in = h.ok(cdb(0x5a, 0, 0x0a, 0xf0, 0, 0, 0, 0, 48, 0), nil, 48)
	wantBytes(t, "LBP off", in[20:23], hexBytes("00 00 00"))

	h = newHarness(t, "personality=lto7")
	if s, ok := selectDP(h, 0x02, 0x04, 0xc0); !ok {
		t.Fatalf("lto7 CRC32C: sense %s", s)
	}
	h = newHarness(t, "personality=dat72")
	if s, ok := selectDP(h, 0x01, 0x04, 0xc0); ok || s != "700005000000000a00000000260000880014" {
		t.Fatalf("dat72 Reed-Solomon: sense %s, want 26/00 at byte 20", s)
	}
}

// TestLTFSReadWriteControlPage: LTFS reads IBM's page 25h (48 bytes with
// the block descriptor) at every mount for the encryption state; a refusal
// sends it into a drive dump. The HP models have no such page.
func TestLTFSReadWriteControlPage(t *testing.T) {
	h := newHarness(t, "personality=lto8")
	in := h.ok(cdb(0x5a, 0, 0x25, 0, 0, 0, 0, 0, 48, 0), nil, 48)
	// Byte 27: application-managed encryption (50h), which LTFS's IBM
	// backends require before they set a key; encryption off, and the
	// cartridge holds no encrypted data.
	wantBytes(t, "page 25h", in, hexBytes("002e 88 10 0000 0008 5e000000 00000000 25 1e"+strings.Repeat("00", 25)+"50"+strings.Repeat("00", 4)))
	// Not changeable: the page as sensed is accepted back, a change is not.
	list := slices.Clone(in)
	list[0], list[1] = 0, 0
	h.ok(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, 48, 0), list, 0)
	list[16+20] = 0x01
	h.fail(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, 48, 0), list, 0)

	h = newHarness(t, "personality=hp-lto8")
	s, _ := h.fail(cdb(0x5a, 0, 0x25, 0, 0, 0, 0, 0, 48, 0), nil, 48)
	if want := "700005000000000a00000000240000cd0002"; s != want {
		t.Fatalf("hp page 25h: sense %s, want %s", s, want)
	}
}

// logValue returns the value of parameter code of LOG SENSE page data.
func logValue(t *testing.T, data []byte, page byte, code uint16) []byte {
	t.Helper()
	p, ok := findParam(parseLogPage(t, data, page), code)
	if !ok {
		t.Fatalf("page %#x: no parameter %04x", page, code)
	}
	return p.val
}

// TestSetCapacity: LTFS resets the capacity proportion (SET CAPACITY
// FFFFh) at BOP 0 before it formats; a smaller proportion leaves one
// partition of that share of the native capacity, which LOG SENSE 31h and
// REPORT DENSITY SUPPORT (MEDIA=1) report.
func TestSetCapacity(t *testing.T) {
	h := newHarness(t, "personality=lto5;capacity=100M")
	capacity := func() (maxMiB []byte, densityMB []byte) {
		in := h.ok(logSenseCDB(0x31, 0, 0), nil, 4096)
		rds := h.ok(cdb(0x44, 0x01, 0, 0, 0, 0, 0, 0x10, 0, 0), nil, 4096)
		return logValue(t, in, 0x31, 0x0003), rds[4+12 : 4+16]
	}
	h.ok(cdb(0x0b, 0, 0, 0xff, 0xff, 0), nil, 0)
	m, mb := capacity()
	wantBytes(t, "full: 31h max", m, hexBytes("00000064"))
	wantBytes(t, "full: density capacity", mb, hexBytes("00000068")) // 104857600 bytes = 104 MB
	h.writeBlocks(1000)
	s, _ := h.fail(cdb(0x0b, 0x01, 0, 0x80, 0x00, 0), nil, 0) // not at BOP 0
	if want := "700005000000000a000000003b0c00000000"; s != want {
		t.Fatalf("past BOP: sense %s, want %s", s, want)
	}
	h.ok(rewindCDB(), nil, 0)
	h.ok(cdb(0x0b, 0x01, 0, 0x40, 0x00, 0), nil, 0) // a quarter, IMMED
	m, mb = capacity()
	wantBytes(t, "quarter: 31h max", m, hexBytes("00000019"))
	wantBytes(t, "quarter: density capacity", mb, hexBytes("0000001a"))
	if p := h.pos(); p.Partition != 0 || p.Object != 0 {
		t.Fatalf("position after SET CAPACITY %+v", p)
	}
	if h.d.med.Used(0) != 0 {
		t.Fatal("SET CAPACITY kept the data")
	}
	h.ok(cdb(0x0b, 0, 0, 0xff, 0xff, 0), nil, 0) // and back
	m, _ = capacity()
	wantBytes(t, "reset: 31h max", m, hexBytes("00000064"))
	h.ok(cdb(0x0b, 0, 0, 0, 0, 0), nil, 0) // the least capacity there is
	if c := h.d.totalCapacity(); c <= 0 || c > 100<<20/0xffff+1 {
		t.Fatalf("proportion 0: capacity %d", c)
	}

	h = newHarness(t, "personality=lto5;wp=1")
	s, _ = h.fail(cdb(0x0b, 0, 0, 0xff, 0xff, 0), nil, 0)
	if want := "700007000000000a00000000270000000000"; s != want {
		t.Fatalf("write protected: sense %s, want %s", s, want)
	}
}

// TestLTFSPerformancePage: LTFS's IBM backend reads LOG SENSE 37h
// parameter 0001h (media efficiency, 1 to 8 bytes) for the cartridge
// health and 37h subpage 64h parameter 7113h (4 bytes) for an extended
// attribute; the HP models have no page 37h.
func TestLTFSPerformancePage(t *testing.T) {
	h := newHarness(t, "personality=lto6")
	in := h.ok(logSenseCDB(0x37, 0, 0), nil, 0xffff)
	wantBytes(t, "37h", in, hexBytes("37 00 0005 0001 03 01 64"))
	in = h.ok(logSenseCDB(0x37, 0x64, 0), nil, 0xffff)
	wantBytes(t, "37h/64h", in, hexBytes("77 64 0008 7113 03 04 00000000"))
	in = h.ok(logSenseCDB(0x00, 0, 0), nil, 4096)
	wantBytes(t, "supported pages", in, hexBytes("00 00 0009 00 0c 10 17 1b 2e 31 32 37"))
	in = h.ok(logSenseCDB(0x00, 0xff, 0), nil, 4096)
	wantBytes(t, "supported subpages", in, hexBytes("40 ff 0016 0000 00ff 0c00 1000 1700 1b00 2e00 3100 3200 3700 3764"))
	h.fail(logSenseCDB(0x37, 0x65, 0), nil, 4096)

	h = newHarness(t, "personality=hp-lto6")
	s, _ := h.fail(logSenseCDB(0x37, 0, 0), nil, 4096)
	if want := "700005000000000a000000002400 00 cd 0002"; s != strings.ReplaceAll(want, " ", "") {
		t.Fatalf("hp 37h: sense %s", s)
	}
	h.fail(logSenseCDB(0x37, 0x64, 0), nil, 4096)
}

// TestLTFSVolumeStatistics: what LTFS's IBM backend parses from LOG SENSE
// 17h. Its parser stops at the first parameter that starts at or past
// PAGE LENGTH, so every parameter must be longer than its header. For the
// EOD status it wants parameter 203h of exactly 16 bytes (two partition
// records of length 07h) and reads FFFFFFFFh as a missing EOD; for the
// capacity (LTO-6 and later) 202h and 204h, in MB.
func TestLTFSVolumeStatistics(t *testing.T) {
	h := newHarness(t, "personality=lto6;capacity=100M;compression=0")
	if err := h.d.med.Format([]int64{10e6, 0}); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.d.reformatted(); !ok {
		t.Fatal("reformatted")
	}
	h.writeBlocks(1<<20, 1<<20, 1<<20)
	in := h.ok(logSenseCDB(0x17, 0, 0), nil, 0xffff)
	pageLen := int(in[2])<<8 | int(in[3])
	off := 4
	for _, p := range parseLogPage(t, in, 0x17) {
		if off >= pageLen {
			t.Errorf("parameter %04x at %d: LTFS stops at PAGE LENGTH %d", p.code, off, pageLen)
		}
		off += 4 + len(p.val)
	}
	wantBytes(t, "203h", logValue(t, in, 0x17, 0x0203), hexBytes("07 00 0000 00000003 07 00 0001 00000000"))
	wantBytes(t, "202h", logValue(t, in, 0x17, 0x0202), hexBytes("07 00 0000 0000000a 07 00 0001 0000005e"))
	// 204h: to early warning (1 MiB before the end of each partition).
	wantBytes(t, "204h", logValue(t, in, 0x17, 0x0204), hexBytes("07 00 0000 00000005 07 00 0001 0000005d"))
}

// TestIncompatibleGeneration: a drive neither reads nor writes a
// cartridge of a density it does not list (LTO-10 reads no LTO-9, LTO-8
// no LTO-6): READ is MEDIUM ERROR 30/02 (cannot read medium, incompatible
// format), WRITE DATA PROTECT 30/05, and MODE SENSE sets WP so that st
// refuses to open it for writing.
func TestIncompatibleGeneration(t *testing.T) {
	for _, tc := range []struct {
		cfg     string
		density uint8
	}{{"personality=lto10", 0x60}, {"personality=lto8", 0x5a}} {
		h := newHarness(t, tc.cfg)
		h.d.info.Density = tc.density
		if s, _ := h.fail(read6(false, false, 1024), nil, 1024); s != "700003000000000a00000000300200000000" {
			t.Errorf("%s, density %#x: READ sense %s, want 03/30/02", tc.cfg, tc.density, s)
		}
		if s, _ := h.fail(write6(false, 1024), make([]byte, 1024), 0); s != "700007000000000a00000000300500000000" {
			t.Errorf("%s, density %#x: WRITE sense %s, want 07/30/05", tc.cfg, tc.density, s)
		}
		if hdr := h.ok(cdb(0x1a, 0, 0x3f, 0, 0xff, 0), nil, 0xff); hdr[2]&0x80 == 0 {
			t.Errorf("%s, density %#x: MODE SENSE header % x, want WP", tc.cfg, tc.density, hdr[:4])
		}
	}
	// One generation back is still read on LTO-8: the blank cartridge's
	// end of data, not an incompatible format.
	h := newHarness(t, "personality=lto8")
	h.d.info.Density = 0x5c
	if r, _ := h.do(read6(false, true, 1024), nil, 1024); r.Sense.Key != scsi.BlankCheck {
		t.Errorf("lto8 with an LTO-7 cartridge: %s, want BLANK CHECK at end of data", senseHex(r.Sense))
	}
}
