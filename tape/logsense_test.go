package tape

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"
)

type logParam struct {
	code uint16
	ctl  byte
	val  []byte
}

// parseLogPage checks a LOG SENSE page's framing and returns its
// parameters.
func parseLogPage(t *testing.T, b []byte, page byte) []logParam {
	t.Helper()
	if len(b) < 4 || b[0]&0x3f != page {
		t.Fatalf("page %#x: header % x", page, b[:min(len(b), 4)])
	}
	n := int(binary.BigEndian.Uint16(b[2:]))
	if n != len(b)-4 {
		t.Fatalf("page %#x: PAGE LENGTH %d, %d bytes follow", page, n, len(b)-4)
	}
	var ps []logParam
	for off := 4; off < len(b); {
		if off+4 > len(b) {
			t.Fatalf("page %#x: truncated parameter at %d", page, off)
		}
		l := int(b[off+3])
		if off+4+l > len(b) {
			t.Fatalf("page %#x: parameter %#x overruns", page, binary.BigEndian.Uint16(b[off:]))
		}
		ps = append(ps, logParam{binary.BigEndian.Uint16(b[off:]), b[off+2], b[off+4 : off+4+l]})
		off += 4 + l
	}
	return ps
}

func logSenseCDB(page, sub byte, ptr uint16) []byte {
	return []byte{0x4d, 0, 0x40 | page, sub, 0, byte(ptr >> 8), byte(ptr), 0x10, 0, 0}
}

func findParam(ps []logParam, code uint16) (logParam, bool) {
	for _, p := range ps {
		if p.code == code {
			return p, true
		}
	}
	return logParam{}, false
}

func TestLogSensePages(t *testing.T) {
	h := newHarness(t, "personality=lto8;capacity=1G;compression=0")
	h.writeBlocks(1<<20, 1<<20) // the default max_block is 1 MiB
	in := h.ok(logSenseCDB(0x00, 0, 0), nil, 4096)
	wantBytes(t, "supported pages", in, hexBytes("00 00 00 09 00 0c 10 17 1b 2e 31 32 37"))
	in = h.ok(logSenseCDB(0x00, 0xff, 0), nil, 4096)
	wantBytes(t, "supported subpages", in, hexBytes("40 ff 00 16 00 00 00 ff 0c 00 10 00 17 00 1b 00 2e 00 31 00 32 00 37 00 37 64"))

	ta := parseLogPage(t, h.ok(logSenseCDB(0x2e, 0, 0), nil, 4096), 0x2e)
	if len(ta) != 64 || ta[0].code != 1 || ta[63].code != 64 {
		t.Fatalf("TapeAlert: %d flags", len(ta))
	}
	for _, p := range ta {
		if len(p.val) != 1 || p.val[0] != 0 {
			t.Fatalf("TapeAlert flag %d = % x", p.code, p.val)
		}
	}

	sa := parseLogPage(t, h.ok(logSenseCDB(0x0c, 0, 0), nil, 4096), 0x0c)
	if p, _ := findParam(sa, 0); binary.BigEndian.Uint64(p.val) != 2<<20 {
		t.Fatalf("bytes written %d", binary.BigEndian.Uint64(p.val))
	}
	if p, _ := findParam(sa, 5); binary.BigEndian.Uint32(p.val) != 1023 { // BOP to early warning, MiB
		t.Fatalf("BOP to EW %d", binary.BigEndian.Uint32(p.val))
	}

	vs := parseLogPage(t, h.ok(logSenseCDB(0x17, 0, 0), nil, 4096), 0x17)
	p, ok := findParam(vs, 0x0202)
	if !ok || len(p.val) != 8 || p.val[0] != 7 || binary.BigEndian.Uint32(p.val[4:]) != 1073 { // 1 GiB in MB
		t.Fatalf("native capacity of partitions % x", p.val)
	}
	p, _ = findParam(vs, 0x0203)
	if binary.BigEndian.Uint32(p.val[4:]) != 2 {
		t.Fatalf("used capacity % x", p.val)
	}
	p, _ = findParam(vs, 0x0040)
	if string(p.val[:6]) != "T00001" {
		t.Fatalf("volume serial %q", p.val)
	}

	tc := parseLogPage(t, h.ok(logSenseCDB(0x31, 0, 0), nil, 4096), 0x31)
	want := map[uint16]uint32{1: 1021, 2: 0, 3: 1024, 4: 0} // 2 MiB and 2 objects used
	for code, v := range want {
		p, ok := findParam(tc, code)
		if !ok || binary.BigEndian.Uint32(p.val) != v {
			t.Fatalf("tape capacity %d = % x, want %d", code, p.val, v)
		}
	}

	// PARAMETER POINTER skips lower codes.
	ta = parseLogPage(t, h.ok(logSenseCDB(0x2e, 0, 60), nil, 4096), 0x2e)
	if len(ta) != 5 || ta[0].code != 60 {
		t.Fatalf("parameter pointer 60: %d params", len(ta))
	}
	// Errors: unknown page, subpage, PPC, SP.
	h.fail(logSenseCDB(0x33, 0, 0), nil, 4096)
	h.fail(logSenseCDB(0x17, 1, 0), nil, 4096)
	h.fail([]byte{0x4d, 0x02, 0x40, 0, 0, 0, 0, 0x10, 0, 0}, nil, 4096)
	h.fail([]byte{0x4d, 0x01, 0x40, 0, 0, 0, 0, 0x10, 0, 0}, nil, 4096)
	// LOG SELECT: reset only.
	h.ok([]byte{0x4c, 0x02, 0xc0, 0, 0, 0, 0, 0, 0, 0}, nil, 0)
	h.fail([]byte{0x4c, 0x02, 0xc0, 0, 0, 0, 0, 0, 8, 0}, make([]byte, 8), 0)
}

func TestLogSenseWithoutCartridge(t *testing.T) {
	cfg, _ := ParseConfig("memory=1")
	d, err := New("tape0", cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, d: d}
	h.clearUA()
	for _, page := range logPages {
		in := h.ok(logSenseCDB(page, 0, 0), nil, 4096)
		if page != 0 {
			parseLogPage(t, in, page)
		}
	}
	tc := parseLogPage(t, h.ok(logSenseCDB(0x31, 0, 0), nil, 4096), 0x31)
	for _, p := range tc {
		if binary.BigEndian.Uint32(p.val) != 0 {
			t.Fatalf("capacity without a cartridge: %+v", p)
		}
	}
}

// TestSelfTestResultsPage: the self-tests SEND DIAGNOSTIC runs are on LOG
// SENSE page 10h, most recent first, in 20 parameters of 16 bytes.
func TestSelfTestResultsPage(t *testing.T) {
	h := newHarness(t, "personality=lto8")
	in := h.ok(logSenseCDB(0x10, 0, 0), nil, 4096)
	if len(in) != 4+20*20 {
		t.Fatalf("page 10h: %d bytes", len(in))
	}
	wantBytes(t, "no self-test yet", in[4:24], hexBytes("0001 03 10"+strings.Repeat("00", 16)))
	h.ok(cdb(0x1d, 0xa0, 0, 0, 0, 0), nil, 0) // foreground short (101b)
	h.ok(cdb(0x1d, 0x40, 0, 0, 0, 0), nil, 0) // background extended (010b)
	h.ok(cdb(0x1d, 0x04, 0, 0, 0, 0), nil, 0) // default self-test: not logged
	in = h.ok(logSenseCDB(0x10, 0, 0), nil, 4096)
	wantBytes(t, "most recent", in[4:24], hexBytes("0001 03 10 40 00 0000 ffffffffffffffff 00 00 00 00"))
	wantBytes(t, "before it", in[24:44], hexBytes("0002 03 10 a0 00 0000 ffffffffffffffff 00 00 00 00"))
	wantBytes(t, "unused", in[44:64], hexBytes("0003 03 10"+strings.Repeat("00", 16)))
	// PARAMETER POINTER 2: from the second on.
	in = h.ok(cdb(0x4d, 0, 0x50, 0, 0, 0, 2, 0x10, 0, 0), nil, 4096)
	wantBytes(t, "from 0002h", in[:9], hexBytes("10 00 017c 0002 03 10 a0"))
	h.fail(cdb(0x1d, 0x80, 0, 0, 0, 0), nil, 0) // abort background: none running
}

// compressionCounts reads the data compression page (1Bh, or IBM's 32h)
// into a map of parameter code to value.
func compressionCounts(t *testing.T, h *harness, page byte) map[uint16]uint64 {
	t.Helper()
	out := map[uint16]uint64{}
	for _, p := range parseLogPage(t, h.ok(logSenseCDB(page, 0, 0), nil, 4096), page) {
		var v uint64
		for _, b := range p.val {
			v = v<<8 | uint64(b)
		}
		out[p.code] = v
	}
	return out
}

func TestCompressionLogPage(t *testing.T) {
	h := newHarness(t, "personality=lto8;capacity=64M")
	const bs = 256 << 10
	zeros := make([]byte, bs)
	random := make([]byte, bs)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(random)
	for range 4 {
		h.ok(write6(false, bs), zeros, 0)
	}
	c := compressionCounts(t, h, 0x1b)
	if c[0x0100] != 1 {
		t.Errorf("compression enabled = %d, want 1 (DCE on at power-on)", c[0x0100])
	}
	// 1 MiB from the initiator: 1 MiB and 0 bytes.
	if c[0x0006] != 1 || c[0x0007] != 0 {
		t.Errorf("from the initiator: %d MiB + %d, want 1 MiB", c[0x0006], c[0x0007])
	}
	medium := c[0x0008]<<20 + c[0x0009]
	if medium == 0 || medium > 1<<20/50 {
		t.Errorf("zeros: %d bytes reached the medium for 1 MiB, want far fewer", medium)
	}
	if want := uint64(1<<20) * 100 / medium; c[0x0001] != want {
		t.Errorf("write ratio ×100 = %d, want %d", c[0x0001], want)
	}
	if c[0x0000] != 0 {
		t.Errorf("read ratio ×100 = %d before any read, want 0", c[0x0000])
	}
	// IBM's page 32h has the same parameters.
	if c32 := compressionCounts(t, h, 0x32); c32[0x0001] != c[0x0001] || c32[0x0009] != c[0x0009] {
		t.Errorf("page 32h %v differs from 1Bh %v", c32, c)
	}
	used := h.d.Stats().UsedBytes

	// Random data does not compress: stored as written, ratio 1.00.
	h.ok([]byte{0x4c, 0x02, 0xc0, 0, 0, 0, 0, 0, 0, 0}, nil, 0) // LOG SELECT PCR: counts restart
	for range 4 {
		h.ok(write6(false, bs), random, 0)
	}
	c = compressionCounts(t, h, 0x1b)
	if c[0x0001] != 100 || c[0x0008] != 1 || c[0x0009] != 0 {
		t.Errorf("random: write ratio %d, %d MiB + %d to the medium; want 100 and 1 MiB", c[0x0001], c[0x0008], c[0x0009])
	}
	if grew := h.d.Stats().UsedBytes - used; grew < 1<<20 {
		t.Errorf("random: the cartridge grew %d bytes for 1 MiB", grew)
	}

	// Reading back: the host gets the logical blocks.
	h.ok(cdb(0x01, 0, 0, 0, 0, 0), nil, 0) // REWIND
	for i := range 8 {
		in := h.ok(read6(false, false, bs), nil, bs)
		want := zeros
		if i >= 4 {
			want = random
		}
		if !bytes.Equal(in, want) {
			t.Fatalf("block %d reads back different", i)
		}
	}
	c = compressionCounts(t, h, 0x1b)
	if c[0x0002] != 2 || c[0x0003] != 0 {
		t.Errorf("to the initiator: %d MiB + %d, want 2 MiB", c[0x0002], c[0x0003])
	}
	if read := c[0x0004]<<20 + c[0x0005]; c[0x0000] != 2<<20*100/read {
		t.Errorf("read ratio ×100 = %d, want %d", c[0x0000], 2<<20*100/read)
	}

	// DCE off (MODE SELECT page 0Fh): zeros are stored as written.
	h.ok(cdb(0x01, 0, 0, 0, 0, 0), nil, 0)
	page := h.ok([]byte{0x1a, 0x08, 0x0f, 0, 0xff, 0}, nil, 0xff) // MODE SENSE(6), DBD
	page[0] = 0
	page[4+2] &^= 0x80 // DCE
	h.ok([]byte{0x15, 0x10, 0, 0, byte(len(page)), 0}, page, 0)
	h.ok([]byte{0x4c, 0x02, 0xc0, 0, 0, 0, 0, 0, 0, 0}, nil, 0)
	h.ok(write6(false, bs), zeros, 0)
	c = compressionCounts(t, h, 0x1b)
	if c[0x0100] != 0 || c[0x0001] != 100 || c[0x0009] != bs {
		t.Errorf("DCE off: enabled %d, write ratio %d, %d bytes to the medium; want 0, 100, %d", c[0x0100], c[0x0001], c[0x0009], bs)
	}
}
