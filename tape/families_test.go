package tape

import (
	"fmt"
	"slices"
	"testing"

	"go.uber.org/zap/zaptest"
)

// TestLTFS3592Load walks what LTFS's IBM backend sends an enterprise
// (3592) drive at every load, in its order, with its buffer sizes (the
// 8-byte MODE SENSE(10) header and the 8-byte block descriptor before
// each page): page 3Fh for the cartridge type and the density, which
// must be among those it supports; page 25h written back with byte 8 set
// to 0Ch (reading across end of data off), a refusal of which fails the
// load; page 24h, whose byte 2 chooses the LBP method LTFS then selects
// in page 0Ah/F0h; page 23h, whose byte 10 is the write protection.
func TestLTFS3592Load(t *testing.T) {
	for _, tc := range []struct {
		model    string
		cartType byte // data cartridge of the drive's own format
		density  byte
		lbp      byte // page 24h byte 2
	}{
		{"ts1140", 0x93, 0x54, 0x40},
		{"ts1150", 0x94, 0x55, 0x60},
		{"ts1155", 0x94, 0x56, 0x60},
		{"ts1160", 0x95, 0x57, 0x60},
		{"ts1170", 0x96, 0x59, 0x60},
	} {
		t.Run(tc.model, func(t *testing.T) {
			h := newHarness(t, "personality="+tc.model)
			inq := h.ok(cdb(0x12, 0, 0, 0, 96, 0), nil, 96)
			if v, p := string(inq[8:16]), string(inq[16:32]); v != "IBM     " || p[:8] != productOf(t, tc.model) {
				t.Fatalf("INQUIRY %q %q, want IBM %s", v, p, productOf(t, tc.model))
			}
			all := h.ok(cdb(0x5a, 0, 0x3f, 0, 0, 0, 0, 0, 0xff, 0), nil, 0xff)
			if all[2] != tc.cartType || all[8] != tc.density {
				t.Fatalf("page 3Fh: cartridge type %#x density %#x, want %#x %#x", all[2], all[8], tc.cartType, tc.density)
			}

			rw := h.ok(cdb(0x5a, 0, 0x25, 0, 0, 0, 0, 0, 48, 0), nil, 48)
			if rw[16] != 0x25 || rw[17] != 0x1e || rw[16+27] != 0x50 {
				t.Fatalf("page 25h % x", rw[16:])
			}
			list := slices.Clone(rw)
			list[0], list[1] = 0, 0
			list[24] = 0x0c
			h.ok(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, 48, 0), list, 0)
			if rw = h.ok(cdb(0x5a, 0, 0x25, 0, 0, 0, 0, 0, 48, 0), nil, 48); rw[24] != 0x0c {
				t.Fatalf("page 25h byte 8 after MODE SELECT: %#x, want 0Ch", rw[24])
			}
			// Only those two bits of byte 8 change; the rest is fixed.
			list[24] = 0x8c
			if s, _ := h.fail(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, 48, 0), list, 0); s != "700005000000000a000000002600008f0018" {
				t.Fatalf("page 25h byte 8 bit 7: sense %s, want 26/00 at byte 24 bit 7", s)
			}

			ext := h.ok(cdb(0x5a, 0, 0x24, 0, 0, 0, 0, 0, 40, 0), nil, 40)
			if ext[16] != 0x24 || ext[17] != 0x16 || ext[0x12] != tc.lbp {
				t.Fatalf("page 24h % x, want LBP byte %#x", ext[16:], tc.lbp)
			}
			method := byte(0x01)
			if ext[0x12]&0x20 != 0 {
				method = 0x02
			}
			dp := h.ok(cdb(0x5a, 0, 0x0a, 0xf0, 0, 0, 0, 0, 48, 0), nil, 48)
			dp[0], dp[1] = 0, 0
			dp[20], dp[21], dp[22] = method, 4, 0xc0
			h.ok(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, 48, 0), dp, 0)

			ms := h.ok(cdb(0x5a, 0, 0x23, 0, 0, 0, 0, 0, 76, 0), nil, 76)
			if ms[16] != 0x23 || ms[17] != 0x3a || ms[26] != 0 {
				t.Fatalf("page 23h % x", ms[16:])
			}
			// mkltfs resets the capacity scaling before it formats (full
			// capacity: byte 11 bit 0, value 0); a scaled one is refused.
			ms[0], ms[1] = 0, 0
			ms[27] |= 0x01
			ms[28] = 0
			h.ok(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, 76, 0), ms, 0)
			ms[28] = 0x35
			if s, _ := h.fail(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, 76, 0), ms, 0); s != "700005000000000a0000000026000080001c" {
				t.Fatalf("scaled capacity: sense %s, want 26/00 at byte 28", s)
			}
		})
	}
	// A write-protected cartridge: page 23h byte 10 bit 7 (LTFS's
	// physical write protection).
	h := newHarness(t, "personality=ts1160;wp=1")
	if ms := h.ok(cdb(0x5a, 0, 0x23, 0, 0, 0, 0, 0, 76, 0), nil, 76); ms[26] != 0x80 {
		t.Fatalf("write-protected: page 23h byte 10 %#x, want 80h", ms[26])
	}
	// A WORM cartridge reports the WORM type of its cartridge (JV).
	h = newHarness(t, "personality=ts1160;worm=1")
	if all := h.ok(cdb(0x5a, 0, 0x3f, 0, 0, 0, 0, 0, 0xff, 0), nil, 0xff); all[2] != 0xa5 {
		t.Fatalf("TS1160 WORM: cartridge type %#x, want A5h (JV)", all[2])
	}
	// The LTO models have neither page 23h nor 24h.
	h = newHarness(t, "personality=lto9")
	for _, pg := range []byte{0x23, 0x24} {
		if s, _ := h.fail(cdb(0x5a, 0, pg, 0, 0, 0, 0, 0, 76, 0), nil, 76); s != "700005000000000a00000000240000cd0002" {
			t.Errorf("lto9 page %#x: sense %s, want 24/00 at the page code", pg, s)
		}
	}
}

func productOf(t *testing.T, model string) string {
	p, ok := LookupPersonality(model)
	if !ok {
		t.Fatalf("no personality %s", model)
	}
	return p.Product
}

// TestOtherFormats: what the 3592, T10000 and SDLT models do with a
// cartridge of another format. The TS1150 writes E07 (on JC); the TS1155
// and TS1160 read E07 but no longer write it (DATA PROTECT 30/05, and WP
// in the mode header so that st opens it read-only); the TS1170 reads
// nothing but its own 70F (MEDIUM ERROR 30/02), as in LTFS's table of
// them. The T10000C reads but does not write T1 formats, nor reads the
// D's; the SDLT600 reads SDLT320 only.
func TestOtherFormats(t *testing.T) {
	for _, tc := range []struct {
		model   string
		density byte
		read    bool
		write   bool
	}{
		{"ts1150", 0x54, true, true},
		{"ts1155", 0x54, true, false},
		{"ts1155", 0x55, true, true},
		{"ts1160", 0x54, true, false},
		{"ts1160", 0x56, true, true},
		{"ts1170", 0x57, false, false},
		{"ts1140", 0x55, false, false},
		{"t10000c", 0x4b, true, false},
		{"t10000c", 0x4d, false, false},
		{"t10000d", 0x4c, true, false},
		{"sdlt600", 0x49, true, false},
		{"sdlt600", 0x4b, false, false},
	} {
		name := fmt.Sprintf("%s with %#x", tc.model, tc.density)
		h := newHarness(t, "personality="+tc.model)
		h.d.info.Density = tc.density
		h.d.spc.Modes.MediumType = h.d.mediumType()
		r, _ := h.do(read6(false, true, 1024), nil, 1024)
		switch s := senseHex(r.Sense); {
		case tc.read && r.Sense.Key != 0x08:
			t.Errorf("%s: READ sense %s, want BLANK CHECK at end of data", name, s)
		case !tc.read && s != "700003000000000a00000000300200000000":
			t.Errorf("%s: READ sense %s, want 03/30/02", name, s)
		}
		r, _ = h.do(write6(false, 1024), make([]byte, 1024), 0)
		switch s := senseHex(r.Sense); {
		case tc.write && r.Status != 0:
			t.Errorf("%s: WRITE sense %s, want GOOD", name, s)
		case !tc.write && s != "700007000000000a00000000300500000000":
			t.Errorf("%s: WRITE sense %s, want 07/30/05", name, s)
		}
		if hdr := h.ok(cdb(0x1a, 0, 0x3f, 0, 0xff, 0), nil, 0xff); (hdr[2]&0x80 == 0) != tc.write {
			t.Errorf("%s: MODE SENSE header % x, WP want %v", name, hdr[:4], !tc.write)
		}
	}
	// An E07 cartridge in a TS1160 reports JC, the type of its format.
	h := newHarness(t, "personality=ts1160")
	h.d.info.Density = 0x54
	h.d.spc.Modes.MediumType = h.d.mediumType()
	if all := h.ok(cdb(0x5a, 0, 0x3f, 0, 0, 0, 0, 0, 0xff, 0), nil, 0xff); all[2] != 0x93 || all[8] != 0x54 {
		t.Fatalf("TS1160 with E07: cartridge type %#x density %#x, want 93h 54h", all[2], all[8])
	}
}

// TestT10000: the T10000 models take blocks up to 2 MiB (max_block, which
// READ BLOCK LIMITS reports, may not exceed it) and have neither SECURITY
// PROTOCOL IN nor logical block protection (theirs are Oracle's own), so
// both are refused as on a drive without them.
func TestT10000(t *testing.T) {
	if _, err := ParseConfig("memory=1;personality=t10000c;max_block=4194304"); err == nil {
		t.Error("max_block 4 MiB accepted for the T10000C")
	}
	h := newHarness(t, "personality=t10000d;max_block=2097152")
	if rbl := h.ok(cdb(0x05, 0, 0, 0, 0, 0), nil, 6); rbl[1] != 0x20 || rbl[2] != 0 || rbl[3] != 0 {
		t.Fatalf("READ BLOCK LIMITS % x, want maximum 200000h", rbl)
	}
	if s, _ := h.fail(cdb(0xa2, 0x20, 0, 0x01, 0, 0, 0, 0, 0x10, 0, 0, 0), nil, 0x1000); s != "700005000000000a00000000200000000000" {
		t.Errorf("SECURITY PROTOCOL IN: sense %s, want 20/00", s)
	}
	dp := h.ok(cdb(0x5a, 0, 0x0a, 0xf0, 0, 0, 0, 0, 48, 0), nil, 48)
	dp[0], dp[1] = 0, 0
	dp[20], dp[21], dp[22] = 0x01, 4, 0xc0
	if s, _ := h.fail(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, 48, 0), dp, 0); s[24:28] != "2600" {
		t.Errorf("LBP on: sense %s, want 26/00", s)
	}
}

// TestLabelGeneration: a cartridge whose image records no density is of
// the generation its LTO media id names, as a real one's cartridge memory
// says: a blank LTO-9 cartridge in an LTO-10 drive is neither read nor
// written; a blank LTO-8 one in an LTO-9 drive is an LTO-8 cartridge (its
// type in the mode header); a label without an LTO media id, or a drive
// that is not LTO, takes the drive's default.
func TestLabelGeneration(t *testing.T) {
	// blank loads a cartridge labelled barcode whose image records no
	// density (as the daemon creates a missing one) into a drive.
	blank := func(pers, barcode string) *harness {
		cfg, err := ParseConfig("media=/unused;personality=" + pers + ";barcode=" + barcode)
		if err != nil {
			t.Fatal(err)
		}
		lib, err := NewMemoryLibrary(MediumInfo{Partitions: 1, Capacity: []int64{64 << 20}, EarlyWarning: []int64{1 << 20}})
		if err != nil {
			t.Fatal(err)
		}
		d, err := New("tape0", cfg, lib, zaptest.NewLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		h := &harness{t: t, d: d}
		h.clearUA()
		return h
	}
	h := blank("lto10", "BLANK1L9")
	if s, _ := h.fail(read6(false, false, 1024), nil, 1024); s != "700003000000000a00000000300200000000" {
		t.Errorf("lto10, blank L9: READ sense %s, want 03/30/02", s)
	}
	if !h.d.RefusesLoaded() {
		t.Error("lto10 does not refuse a blank L9 cartridge")
	}
	h = blank("lto9", "BLANK1L8")
	if all := h.ok(cdb(0x5a, 0, 0x3f, 0, 0, 0, 0, 0, 0xff, 0), nil, 0xff); all[2] != 0x88 || all[8] != 0x5e {
		t.Errorf("lto9, blank L8: cartridge type %#x density %#x, want 88h 5Eh", all[2], all[8])
	}
	for _, c := range [][2]string{{"lto9", "BLANK1"}, {"generic", "BLANK1L5"}, {"ts1160", "BLANK1L5"}, {"lto10", "BLANK1LA"}} {
		h = blank(c[0], c[1])
		if h.d.RefusesLoaded() || h.d.mediumDensity() != h.d.pers.DefaultDensity().Code {
			t.Errorf("%s with %s: refused %v, density %#x, want the drive's default", c[0], c[1], h.d.RefusesLoaded(), h.d.mediumDensity())
		}
	}
}
