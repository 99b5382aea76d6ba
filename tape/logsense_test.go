package tape

import (
	"encoding/binary"
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
	h := newHarness(t, "personality=lto8;capacity=1G")
	h.writeBlocks(1<<20, 1<<20) // the default max_block is 1 MiB
	in := h.ok(logSenseCDB(0x00, 0, 0), nil, 4096)
	wantBytes(t, "supported pages", in, hexBytes("00 00 00 07 00 0c 10 17 2e 31 37"))
	in = h.ok(logSenseCDB(0x00, 0xff, 0), nil, 4096)
	wantBytes(t, "supported subpages", in, hexBytes("40 ff 00 12 00 00 00 ff 0c 00 10 00 17 00 2e 00 31 00 37 00 37 64"))

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
