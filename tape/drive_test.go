package tape

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/scsi"
)

func locate10(obj uint32) []byte {
	return []byte{0x2b, 0x04, 0, byte(obj >> 24), byte(obj >> 16), byte(obj >> 8), byte(obj), 0, 0, 0}
}

// TestDataTransferTable is the data-transfer table of SSC-5 4.2 (the
// conditions errors.go builds), row by row, with the exact fixed-format sense bytes st decodes and
// the position st must see afterwards.
func TestDataTransferTable(t *testing.T) {
	const (
		// VALID FM EOM ILI | key, INFORMATION, ... ASC ASCQ, SKS
		iliShort   = "f0 00 20 00 00 03 e8 0a 00 00 00 00 00 00 00 00 00 00" // +1000
		iliLong    = "f0 00 20 ff ff fe 0c 0a 00 00 00 00 00 00 00 00 00 00" // -500
		iliFixed   = "f0 00 20 00 00 00 02 0a 00 00 00 00 00 00 00 00 00 00" // 2 blocks
		fmVar      = "f0 00 80 00 00 03 e8 0a 00 00 00 00 00 01 00 00 00 00"
		fmFixed    = "f0 00 80 00 00 00 03 0a 00 00 00 00 00 01 00 00 00 00"
		fmSpace2   = "f0 00 80 00 00 00 02 0a 00 00 00 00 00 01 00 00 00 00"
		eodVar     = "f0 00 08 00 00 03 e8 0a 00 00 00 00 00 05 00 00 00 00"
		eod3       = "f0 00 08 00 00 00 03 0a 00 00 00 00 00 05 00 00 00 00"
		bop3       = "f0 00 40 00 00 00 03 0a 00 00 00 00 00 04 00 00 00 00"
		earlyWarn  = "70 00 40 00 00 00 00 0a 00 00 00 00 00 02 00 00 00 00"
		overflowV  = "f0 00 4d 00 01 00 00 0a 00 00 00 00 00 02 00 00 00 00" // 65536 bytes
		overflowF  = "f0 00 4d 00 00 00 03 0a 00 00 00 00 00 02 00 00 00 00" // 3 blocks
		wp         = "70 00 07 00 00 00 00 0a 00 00 00 00 27 00 00 00 00 00"
		worm       = "70 00 07 00 00 00 00 0a 00 00 00 00 30 0c 00 00 00 00"
		locEOD     = "70 00 08 00 00 00 00 0a 00 00 00 00 00 05 00 00 00 00"
		fixedSili  = "70 00 05 00 00 00 00 0a 00 00 00 00 24 00 00 c9 00 01"
		fixedNoBS  = "70 00 05 00 00 00 00 0a 00 00 00 00 24 00 00 c8 00 01"
		iliShortDS = "72 00 00 00 00 00 00 10 00 0a 80 00 00 00 00 00 00 00 03 e8 04 02 00 20"
	)
	const k64 = 64 << 10
	tests := []struct {
		name  string
		cfg   string
		setup func(h *harness)
		cmd   []byte
		out   []byte
		inLen int
		sense string // "" = GOOD
		data  []byte // expected Data-In (nil: none)
		obj   uint64 // position afterwards
		file  uint64
	}{
		{
			name:  "variable read of a shorter block, SILI=0: ILI, INFORMATION=requested-actual, the block arrives",
			setup: func(h *harness) { h.writeBlocks(1000); h.ok(rewindCDB(), nil, 0) },
			cmd:   read6(false, false, 2000), inLen: 2000,
			sense: iliShort, data: block(0, 1000), obj: 1,
		},
		{
			name:  "variable read of a shorter block, SILI=1: GOOD with the short length",
			setup: func(h *harness) { h.writeBlocks(1000); h.ok(rewindCDB(), nil, 0) },
			cmd:   read6(false, true, 2000), inLen: 2000,
			data: block(0, 1000), obj: 1,
		},
		{
			name:  "variable read of a longer block: ILI, negative INFORMATION, first bytes, position after the block",
			setup: func(h *harness) { h.writeBlocks(1000); h.ok(rewindCDB(), nil, 0) },
			cmd:   read6(false, false, 500), inLen: 500,
			sense: iliLong, data: block(0, 1000)[:500], obj: 1,
		},
		{
			name:  "variable read of a longer block, SILI=1 in variable mode: GOOD, truncated",
			setup: func(h *harness) { h.writeBlocks(1000); h.ok(rewindCDB(), nil, 0) },
			cmd:   read6(false, true, 500), inLen: 500,
			data: block(0, 1000)[:500], obj: 1,
		},
		{
			name:  "descriptor sense (dsense=1): information and stream commands descriptors",
			cfg:   "dsense=1",
			setup: func(h *harness) { h.writeBlocks(1000); h.ok(rewindCDB(), nil, 0) },
			cmd:   read6(false, false, 2000), inLen: 2000,
			sense: iliShortDS, data: block(0, 1000), obj: 1,
		},
		{
			name: "fixed read hits a wrong-length block: ILI, INFORMATION=blocks not read, good blocks transferred",
			cfg:  "blksize=512",
			setup: func(h *harness) {
				h.ok(write6(true, 2), append(block(0, 512), block(1, 512)...), 0)
				h.ok(write6(false, 1000), block(2, 1000), 0)
				h.ok(rewindCDB(), nil, 0)
			},
			cmd: read6(true, false, 4), inLen: 2048,
			sense: iliFixed, data: append(block(0, 512), block(1, 512)...), obj: 3,
		},
		{
			name: "variable read hits a filemark: FM, INFORMATION=requested length, position after the mark",
			setup: func(h *harness) {
				h.writeBlocks(100)
				h.ok(weof(1), nil, 0)
				h.ok(rewindCDB(), nil, 0)
				h.ok(space6(0, 1), nil, 0)
			},
			cmd: read6(false, false, 1000), inLen: 1000,
			sense: fmVar, obj: 2, file: 1,
		},
		{
			name: "fixed read hits a filemark after 5 of 8 blocks: 5 blocks arrive, INFORMATION=3",
			cfg:  "blksize=1024",
			setup: func(h *harness) {
				var b []byte
				for i := range 5 {
					b = append(b, block(i, 1024)...)
				}
				h.ok(write6(true, 5), b, 0)
				h.ok(weof(1), nil, 0)
				h.ok(rewindCDB(), nil, 0)
			},
			cmd: read6(true, false, 8), inLen: 8192,
			sense: fmFixed, data: func() []byte {
				var b []byte
				for i := range 5 {
					b = append(b, block(i, 1024)...)
				}
				return b
			}(), obj: 6, file: 1,
		},
		{
			name:  "variable read at end of data: BLANK CHECK 00/05, INFORMATION=requested, position stays",
			setup: func(h *harness) { h.writeBlocks(100) },
			cmd:   read6(false, false, 1000), inLen: 1000,
			sense: eodVar, obj: 1,
		},
		{
			name:  "fixed read reaches end of data after 2 blocks: INFORMATION=3",
			cfg:   "blksize=512",
			setup: func(h *harness) { h.ok(write6(true, 2), make([]byte, 1024), 0); h.ok(rewindCDB(), nil, 0) },
			cmd:   read6(true, false, 5), inLen: 5 * 512,
			sense: eod3, data: make([]byte, 1024), obj: 2,
		},
		{
			name:  "space backward reaches BOP: NO SENSE 00/04 EOM, INFORMATION=count not spaced",
			setup: func(h *harness) { h.writeBlocks(10, 10) },
			cmd:   space6(0, -5),
			sense: bop3, obj: 0,
		},
		{
			name:  "space forward reaches end of data: BLANK CHECK, INFORMATION=count not spaced",
			setup: func(h *harness) { h.writeBlocks(10, 10); h.ok(rewindCDB(), nil, 0) },
			cmd:   space6(0, 5),
			sense: eod3, obj: 2,
		},
		{
			name: "space forward over blocks stops after a filemark",
			setup: func(h *harness) {
				h.writeBlocks(10)
				h.ok(weof(1), nil, 0)
				h.writeBlocks(10)
				h.ok(rewindCDB(), nil, 0)
			},
			cmd:   space6(0, 3),
			sense: fmSpace2, obj: 2, file: 1,
		},
		{
			name: "space backward over blocks stops before a filemark",
			setup: func(h *harness) {
				h.writeBlocks(10)
				h.ok(weof(1), nil, 0)
				h.writeBlocks(10)
			},
			cmd:   space6(0, -3),
			sense: fmSpace2, obj: 1, file: 0,
		},
		{
			name:  "write into the early-warning zone: succeeds, NO SENSE 00/02 EOM, VALID=0",
			cfg:   "capacity=1M;early_warning=512K;compression=0",
			setup: func(h *harness) { h.writeBlocks(k64, k64, k64, k64, k64, k64, k64) },
			cmd:   write6(false, k64), out: block(7, k64),
			sense: earlyWarn, obj: 8,
		},
		{
			name: "variable write at the physical end: VOLUME OVERFLOW 00/02 EOM, INFORMATION=bytes not written",
			cfg:  "capacity=1M;early_warning=512K;compression=0",
			setup: func(h *harness) {
				for i := range 16 { // 15 fit: each costs 64 KiB + MemoryObjectOverhead
					h.do(write6(false, k64), block(i, k64), 0)
				}
			},
			cmd: write6(false, k64), out: block(16, k64),
			sense: overflowV, obj: 15,
		},
		{
			name:  "fixed write crossing the physical end: VOLUME OVERFLOW, INFORMATION=blocks not written",
			cfg:   "capacity=1M;early_warning=512K;blksize=65472;compression=0", // + 64 bytes overhead = 64 KiB a block
			setup: func(h *harness) { h.do(write6(true, 15), make([]byte, 15*(k64-64)), 0) },
			cmd:   write6(true, 4), out: make([]byte, 4*(k64-64)),
			sense: overflowF, obj: 16,
		},
		{
			name: "write on a write-protected cartridge: DATA PROTECT 27/00",
			cfg:  "wp=1",
			cmd:  write6(false, 10), out: make([]byte, 10),
			sense: wp,
		},
		{
			name:  "write filemarks on a write-protected cartridge: DATA PROTECT 27/00",
			cfg:   "wp=1",
			cmd:   weof(1),
			sense: wp,
		},
		{
			name:  "overwrite on a WORM cartridge: DATA PROTECT 30/0C",
			cfg:   "worm=1",
			setup: func(h *harness) { h.writeBlocks(10, 10); h.ok(rewindCDB(), nil, 0) },
			cmd:   write6(false, 10), out: make([]byte, 10),
			sense: worm,
		},
		{
			name:  "append on a WORM cartridge at end of data: GOOD",
			cfg:   "worm=1",
			setup: func(h *harness) { h.writeBlocks(10, 10) },
			cmd:   write6(false, 10), out: make([]byte, 10),
			obj: 3,
		},
		{
			name:  "locate past end of data: BLANK CHECK 00/05, position at EOD",
			setup: func(h *harness) { h.writeBlocks(10, 10); h.ok(rewindCDB(), nil, 0) },
			cmd:   locate10(10),
			sense: locEOD, obj: 2,
		},
		{
			name: "FIXED with SILI: ILLEGAL REQUEST 24/00, field pointer byte 1 bit 1",
			cfg:  "blksize=512",
			cmd:  read6(true, true, 1), inLen: 512,
			sense: fixedSili,
		},
		{
			name: "FIXED in variable-block mode: ILLEGAL REQUEST 24/00, field pointer byte 1 bit 0",
			cmd:  read6(true, false, 1), inLen: 512,
			sense: fixedNoBS,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.cfg)
			if tt.setup != nil {
				tt.setup(h)
			}
			r, in := h.do(tt.cmd, tt.out, tt.inLen)
			if tt.sense == "" {
				if r.Status != scsi.StatusGood {
					t.Fatalf("status %v sense %s, want GOOD", r.Status, senseHex(r.Sense))
				}
			} else {
				if r.Status != scsi.StatusCheckCondition {
					t.Fatalf("status %v, want CHECK CONDITION", r.Status)
				}
				wantBytes(t, "sense", hexBytes(senseHex(r.Sense)), hexBytes(tt.sense))
			}
			wantBytes(t, "data-in", in, tt.data)
			if tt.cfg != "wp=1" {
				h.wantPos(0, tt.obj, tt.file)
			}
		})
	}
}

func TestUnitAttentions(t *testing.T) {
	cfg, err := ParseConfig("memory=1;barcode=T1")
	if err != nil {
		t.Fatal(err)
	}
	d, err := New("tape0", cfg, nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	h := &harness{t: t, d: d}
	tur := cdb(0, 0, 0, 0, 0, 0)
	// Power on, then the cartridge loaded at start.
	s, _ := h.fail(tur, nil, 0)
	wantBytes(t, "power-on UA", hexBytes(s), hexBytes("70 00 06 00 00 00 00 0a 00 00 00 00 29 00 00 00 00 00"))
	s, _ = h.fail(tur, nil, 0)
	wantBytes(t, "load UA", hexBytes(s), hexBytes("70 00 06 00 00 00 00 0a 00 00 00 00 28 00 00 00 00 00"))
	h.ok(tur, nil, 0)

	// INQUIRY does not take a unit attention.
	d.Reset()
	h.ok(cdb(0x12, 0, 0, 0, 36, 0), nil, 36)
	s, _ = h.fail(tur, nil, 0)
	wantBytes(t, "reset UA", hexBytes(s), hexBytes("70 00 06 00 00 00 00 0a 00 00 00 00 29 00 00 00 00 00"))
	h.ok(tur, nil, 0)

	// Operator unload and load of another cartridge.
	if err := d.Unload(); err != nil {
		t.Fatal(err)
	}
	s, _ = h.fail(tur, nil, 0)
	wantBytes(t, "empty", hexBytes(s), hexBytes("70 00 02 00 00 00 00 0a 00 00 00 00 3a 00 00 00 00 00"))
	if err := d.Load("T2"); err != nil {
		t.Fatal(err)
	}
	s, _ = h.fail(tur, nil, 0)
	wantBytes(t, "new medium UA", hexBytes(s), hexBytes("70 00 06 00 00 00 00 0a 00 00 00 00 28 00 00 00 00 00"))
	h.ok(tur, nil, 0)
	if err := d.Load("T3"); err == nil {
		t.Fatal("Load with a cartridge in the drive succeeded")
	}
}

func TestNoMedium(t *testing.T) {
	cfg, _ := ParseConfig("memory=1")
	d, err := New("tape0", cfg, nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, d: d}
	h.clearUA()
	notPresent := hexBytes("70 00 02 00 00 00 00 0a 00 00 00 00 3a 00 00 00 00 00")
	for _, c := range [][]byte{
		cdb(0, 0, 0, 0, 0, 0), read6(false, false, 10), write6(false, 10), weof(1), rewindCDB(),
		space6(1, 1), locate10(0), cdb(0x34, 0, 0, 0, 0, 0, 0, 0, 0, 0), cdb(0x19, 0, 0, 0, 0, 0),
	} {
		var out []byte
		if c[0] == 0x0a {
			out = make([]byte, 10)
		}
		s, _ := h.fail(c, out, 64)
		wantBytes(t, "sense", hexBytes(s), notPresent)
	}
	// REQUEST SENSE reports it as parameter data, GOOD status.
	in := h.ok(cdb(0x03, 0, 0, 0, 18, 0), nil, 18)
	wantBytes(t, "request sense", in, notPresent)
	// Commands that work without a cartridge.
	h.ok(cdb(0x05, 0, 0, 0, 0, 0), nil, 6)
	h.ok(cdb(0x12, 0, 0, 0, 36, 0), nil, 36)
	h.ok(cdb(0x1a, 0, 0, 0, 12, 0), nil, 12)
	if err := d.Unload(); !errors.Is(err, ErrNoMedium) {
		t.Fatalf("Unload of an empty drive: %v", err)
	}
	if !strings.Contains(d.String(), "generic") {
		t.Fatalf("String() = %q", d.String())
	}
}

func TestUnsupportedOpcode(t *testing.T) {
	h := newHarness(t, "")
	for _, op := range []byte{0x28, 0x2a, 0x25, 0x9e, 0xff, 0x0c} {
		c := make([]byte, 16)
		c[0] = op
		s, _ := h.fail(c, nil, 0)
		wantBytes(t, "sense", hexBytes(s), hexBytes("70 00 05 00 00 00 00 0a 00 00 00 00 20 00 00 00 00 00"))
		if h.d.CommandName(scsi.CommandID(op)) != "" {
			t.Fatalf("CommandName(%#x) = %q", op, h.d.CommandName(scsi.CommandID(op)))
		}
	}
	// A CDB shorter than its command.
	s, _ := h.fail(cdb(0x2b, 0, 0), nil, 0)
	if !strings.Contains(s, "2400") {
		t.Fatalf("short CDB sense %s", s)
	}
}

func TestCommandNames(t *testing.T) {
	h := newHarness(t, "")
	want := map[byte]string{
		0x08: "read_6", 0x0a: "write_6", 0x10: "write_filemarks_6", 0x11: "space_6", 0x91: "space_16",
		0x2b: "locate_10", 0x92: "locate_16", 0x34: "read_position", 0x01: "rewind", 0x1b: "load_unload",
		0x19: "erase_6", 0x04: "format_medium", 0x44: "report_density_support", 0x4d: "log_sense",
		0x8c: "read_attribute", 0x8d: "write_attribute", 0x3c: "read_buffer_10", 0xa3: "report_supported_opcodes",
	}
	for op, name := range want {
		if got := h.d.CommandName(scsi.CommandID(op)); got != name {
			t.Errorf("CommandName(%#x) = %q, want %q", op, got, name)
		}
	}
	for id, c := range driveCommands.All() {
		op := c.OpCode
		name := h.d.CommandName(id)
		if name == "" || strings.HasPrefix(name, "0x") {
			t.Errorf("opcode %#x: no name in scsi's table (%q)", op, name)
		}
		for _, r := range name {
			if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
				t.Errorf("%s: not snake_case", name)
			}
		}
	}
}

// TestReportSupportedOpCodes checks RSOC (via scsi.SPC) lists every
// command of the command table with its usage bitmap.
func TestReportSupportedOpCodes(t *testing.T) {
	h := newHarness(t, "")
	in := h.ok(cdb(0xa3, 0x0c, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0), nil, 4096)
	n := int(in[0])<<24 | int(in[1])<<16 | int(in[2])<<8 | int(in[3])
	if n != len(in)-4 || n%8 != 0 {
		t.Fatalf("RSOC length %d for %d bytes", n, len(in))
	}
	seen := map[byte]bool{}
	for off := 4; off < len(in); off += 8 {
		op := in[off]
		seen[op] = true
		cdbLen := int(in[off+6])<<8 | int(in[off+7])
		if i := slices.IndexFunc(scsi.CoreCommands(), func(c scsi.CommandInfo) bool { return byte(c.OpCode) == op }); i >= 0 {
			if want := len(scsi.CoreCommands()[i].Usage); cdbLen != want {
				t.Errorf("core opcode %#x: CDB length %d, want %d", op, cdbLen, want)
			}
			continue
		}
		if c := driveCommands.Lookup(scsi.OpCode(op)); c == nil || cdbLen != len(c.Usage) {
			t.Errorf("opcode %#x: CDB length %d, not the table's (%v)", op, cdbLen, c)
		}
	}
	for id, c := range driveCommands.All() {
		if !seen[byte(c.OpCode)] {
			t.Errorf("opcode %#x (%s) missing", c.OpCode, driveCommands.CommandName(id))
		}
	}
	// One command: READ(6) with its usage bitmap.
	in = h.ok(cdb(0xa3, 0x0c, 0x01, 0x08, 0, 0, 0, 0, 0, 64, 0, 0), nil, 64)
	wantBytes(t, "read_6 usage", in, hexBytes("00 03 00 06 08 03 ff ff ff 04"))
}

func TestInquiry(t *testing.T) {
	h := newHarness(t, "personality=lto9;serial=ABC123")
	in := h.ok(cdb(0x12, 0, 0, 0, 96, 0), nil, 96)
	if in[0] != 0x01 || in[1]&0x80 == 0 {
		t.Fatalf("peripheral type %#x RMB %#x", in[0], in[1])
	}
	if got := string(in[8:36]); got != "IBM     ULT3580-TD9     Q3F0" {
		t.Fatalf("identity %q", got)
	}
	in = h.ok(cdb(0x12, 1, 0x80, 0, 64, 0), nil, 64)
	if string(in[4:]) != "ABC123" {
		t.Fatalf("serial VPD % x", in)
	}
	in = h.ok(cdb(0x12, 1, 0xb0, 0, 64, 0), nil, 64)
	wantBytes(t, "VPD B0", in, hexBytes("01 b0 00 02 01 00"))
	in = h.ok(cdb(0x12, 1, 0x00, 0, 64, 0), nil, 64)
	if !bytes.Contains(in[4:], []byte{0x80, 0x83, 0xb0}) {
		t.Fatalf("supported VPD pages % x", in)
	}
}

func TestPreventAllow(t *testing.T) {
	h := newHarness(t, "")
	h.ok(cdb(0x1e, 0, 0, 0, 1, 0), nil, 0)
	s, _ := h.fail(cdb(0x1b, 0, 0, 0, 0, 0), nil, 0)
	wantBytes(t, "unload while prevented", hexBytes(s), hexBytes("70 00 05 00 00 00 00 0a 00 00 00 00 53 02 00 00 00 00"))
	if err := h.d.Unload(); !errors.Is(err, ErrRemovalPrevented) {
		t.Fatalf("operator Unload while prevented: %v", err)
	}
	h.ok(cdb(0x1e, 0, 0, 0, 0, 0), nil, 0)
	h.ok(cdb(0x1b, 0, 0, 0, 0, 0), nil, 0) // eject
	s, _ = h.fail(cdb(0, 0, 0, 0, 0, 0), nil, 0)
	if !strings.Contains(s, "3a00") {
		t.Fatalf("after eject: %s", s)
	}
	if h.d.Stats().Loaded {
		t.Fatal("Stats().Loaded after eject")
	}
}

func TestLoadUnloadHold(t *testing.T) {
	h := newHarness(t, "")
	h.writeBlocks(10, 10)
	h.ok(cdb(0x1b, 0, 0, 0, 0x08, 0), nil, 0) // unload, HOLD
	s, _ := h.fail(cdb(0, 0, 0, 0, 0, 0), nil, 0)
	wantBytes(t, "held", hexBytes(s), hexBytes("70 00 02 00 00 00 00 0a 00 00 00 00 04 02 00 00 00 00"))
	h.ok(cdb(0x1b, 0, 0, 0, 0x01, 0), nil, 0) // load
	s, _ = h.fail(cdb(0, 0, 0, 0, 0, 0), nil, 0)
	if !strings.Contains(s, "2800") {
		t.Fatalf("after LOAD: %s, want UA 28/00", s)
	}
	h.ok(cdb(0, 0, 0, 0, 0, 0), nil, 0)
	h.wantPos(0, 0, 0)
	// The data survived.
	in := h.ok(read6(false, false, 10), nil, 10)
	wantBytes(t, "block 0", in, block(0, 10))
	// LOAD with EOT is invalid; retension rewinds.
	h.fail(cdb(0x1b, 0, 0, 0, 0x05, 0), nil, 0)
	h.ok(cdb(0x1b, 0, 0, 0, 0x03, 0), nil, 0)
	h.wantPos(0, 0, 0)
}

// TestReloadKeepsData: a memory cartridge keeps its contents across eject
// and load, like a real one.
func TestReloadKeepsData(t *testing.T) {
	h := newHarness(t, "")
	h.writeBlocks(100, 200)
	h.ok(weof(1), nil, 0)
	if err := h.d.Unload(); err != nil {
		t.Fatal(err)
	}
	if err := h.d.Load("T00001"); err != nil {
		t.Fatal(err)
	}
	h.clearUA()
	in := h.ok(read6(false, false, 100), nil, 100)
	wantBytes(t, "block", in, block(0, 100))
	h.ok(space6(1, 1), nil, 0)
	h.wantPos(0, 3, 1)
}

func TestCloseRefusesCommands(t *testing.T) {
	h := newHarness(t, "")
	if err := h.d.Close(); err != nil {
		t.Fatal(err)
	}
	s, _ := h.fail(cdb(0x12, 0, 0, 0, 36, 0), nil, 36)
	if !strings.Contains(s, "0400") {
		t.Fatalf("after Close: %s", s)
	}
	if err := h.d.Load("X"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Load after Close: %v", err)
	}
	if err := h.d.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestHandleCommandNilData(t *testing.T) {
	h := newHarness(t, "")
	r := h.d.HandleCommand(context.Background(), &scsi.Command{CDB: cdb(0x03, 0, 0, 0, 18, 0)})
	if r.Status != scsi.StatusGood {
		t.Fatalf("REQUEST SENSE with nil Data: %v", r.Status)
	}
}
