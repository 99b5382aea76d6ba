package tape

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
)

// FuzzSSC sends an arbitrary CDB with arbitrary Data-Out (or a Data-In
// buffer of inLen bytes) to a drive whose cartridge holds blocks,
// filemarks and a setmark, then the same command again and a READ
// POSITION: nothing panics, Written never exceeds Len, the status is GOOD
// or CHECK CONDITION, and the sense fits TCMU's buffer. Seeds are in
// testdata/fuzz/FuzzSSC.
//
// The cartridge is written once, through a drive, before fuzzing starts;
// each input gets a new drive on its own copy of it. Writing it for every
// input cost seven commands and a 64 KiB buffer, most of an input's time.
func FuzzSSC(f *testing.F) {
	f.Add([]byte{0x08, 0x00, 0x00, 0x10, 0x00, 0x00}, []byte{}, uint16(4096))
	f.Add([]byte{0x0a, 0x01, 0x00, 0x00, 0x02, 0x00}, make([]byte, 2048), uint16(0))
	f.Add([]byte{0x11, 0x01, 0xff, 0xff, 0xff, 0x00}, []byte{}, uint16(0))
	f.Add([]byte{0x1d, 0x10, 0x00, 0x00, 0x08, 0x00}, []byte{0x80, 0, 0, 4, 0x01, 0x60, 0, 0}, uint16(0))
	f.Add([]byte{0x1d, 0x04, 0x00, 0x00, 0x00, 0x00}, []byte{}, uint16(0))
	f.Add([]byte{0x0b, 0x00, 0x00, 0x80, 0x00, 0x00}, []byte{}, uint16(0))
	f.Add([]byte{0x0b, 0x01, 0x00, 0x00, 0x00, 0x00}, []byte{}, uint16(0))
	// READ(16), WRITE(16) and WRITE FILEMARKS(16) at objects 2 and 5.
	f.Add([]byte{0x88, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 1, 0}, []byte{}, uint16(2048))
	f.Add([]byte{0x8a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0x10, 0}, make([]byte, 16), uint16(0))
	f.Add([]byte{0x80, 0x01, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0}, []byte{}, uint16(0))
	cfg, err := ParseConfig("memory=1;barcode=FUZZ01;capacity=1M;early_warning=64K;personality=dat72;max_block=65536;min_block=1")
	if err != nil {
		f.Fatal(err)
	}
	// B B F B S B F F (fixed 1024-byte blocks and a 100-byte one), rewound.
	cart := fuzzCartridge(f, cfg, func(h *harness) {
		blk := make([]byte, 2048)
		h.ok(write6(true, 2), blk, 0)
		h.ok(weof(1), nil, 0)
		h.ok(write6(true, 1), blk[:1024], 0)
		h.ok(cdb(0x10, 0x02, 0, 0, 1, 0), nil, 0)
		h.ok(write6(false, 100), blk[:100], 0)
		h.ok(weof(2), nil, 0)
	})
	f.Fuzz(func(t *testing.T, c []byte, out []byte, inLen uint16) {
		d := fuzzDrive(t, cfg, cart)
		defer func() { _ = d.Close() }()
		fuzzCommands(t, d, [][]byte{c, c, readPos(0)}, out, inLen)
		d.Reset()
		if err := d.Unload(); err != nil && !errors.Is(err, ErrRemovalPrevented) && !errors.Is(err, ErrNoMedium) {
			t.Fatalf("unload after fuzzing: %v", err)
		}
	})
}

// fuzzCartridge returns the cartridge cfg's drive holds after write has
// run on it, unloaded.
func fuzzCartridge(tb testing.TB, cfg Config, write func(*harness)) *MemoryMedium {
	tb.Helper()
	d, err := New("fuzz", cfg, nil, zap.NewNop())
	if err != nil {
		tb.Fatal(err)
	}
	h := &harness{t: tb, d: d}
	h.clearUA()
	write(h)
	if err := d.Unload(); err != nil {
		tb.Fatal(err)
	}
	m := d.lib.(*MemoryLibrary).carts[cfg.Barcode]
	if m == nil || len(m.parts[0].objs) == 0 {
		tb.Fatalf("no cartridge %s written", cfg.Barcode)
	}
	return m
}

// fuzzDrive returns a new drive of cfg with a copy of cart loaded and its
// unit attentions consumed.
func fuzzDrive(t *testing.T, cfg Config, cart *MemoryMedium) *Drive {
	t.Helper()
	m := *cart
	m.codec, m.key, m.dec, m.decAt, m.plain = Codec{}, nil, nil, 0, nil
	m.info.Capacity = slices.Clone(m.info.Capacity)
	m.info.EarlyWarning = slices.Clone(m.info.EarlyWarning)
	m.parts = make([]memPart, len(cart.parts))
	for i, p := range cart.parts {
		m.parts[i] = memPart{objs: slices.Clone(p.objs), data: slices.Clone(p.data)}
	}
	m.attrs = make(map[uint16][]byte, len(cart.attrs))
	for id, v := range cart.attrs {
		m.attrs[id] = slices.Clone(v)
	}
	lib, err := NewMemoryLibrary(cart.info)
	if err == nil {
		err = lib.Add(&m)
	}
	if err != nil {
		t.Fatal(err)
	}
	d, err := New("fuzz", cfg, lib, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, d: d}
	h.clearUA()
	return d
}

// fuzzCommands sends each CDB with Data-Out out (or a Data-In buffer of
// inLen bytes in two segments) and checks what every fuzz target checks.
func fuzzCommands(t *testing.T, d *Drive, cmds [][]byte, out []byte, inLen uint16) {
	t.Helper()
	for _, cmd := range cmds {
		var buf *scsi.Buffer
		if len(out) > 0 {
			buf = scsi.NewBuffer(out)
		} else {
			buf = scsi.NewBuffer(make([]byte, int(inLen)/2), make([]byte, int(inLen)-int(inLen)/2))
		}
		r := d.HandleCommand(context.Background(), &scsi.Command{CDB: cmd, Data: buf})
		if buf.Written() > buf.Len() {
			t.Fatalf("% x: Written %d > Len %d", cmd, buf.Written(), buf.Len())
		}
		switch r.Status {
		case scsi.StatusGood:
		case scsi.StatusCheckCondition:
			if n := len(r.Sense.Append(nil)); n > scsi.SenseBufferSize {
				t.Fatalf("% x: sense of %d bytes", cmd, n)
			}
		default:
			t.Fatalf("% x: status %v", cmd, r.Status)
		}
	}
}

// FuzzLBP is FuzzSSC on an LTO-7 drive with logical block protection on
// (CRC32C or Reed-Solomon, LBP_W and LBP_R, as the seed's first byte
// picks): WRITE and READ transfers carry the protection bytes, which the
// drive checks and appends.
func FuzzLBP(f *testing.F) {
	good := protect(lbpCRC32C, make([]byte, 100))
	f.Add(byte(2), []byte{0x0a, 0, 0, 0, 104, 0}, good, uint16(0))
	f.Add(byte(1), []byte{0x0a, 0, 0, 0, 104, 0}, make([]byte, 104), uint16(0))
	f.Add(byte(2), []byte{0x08, 0, 0, 0x10, 0, 0}, []byte{}, uint16(4096))
	f.Add(byte(1), []byte{0x08, 0x01, 0, 0, 2, 0}, []byte{}, uint16(2100))
	f.Add(byte(2), []byte{0x8a, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 1, 0}, make([]byte, 1028), uint16(0))
	cfg, err := ParseConfig("memory=1;barcode=FUZZ02;capacity=1M;early_warning=64K;personality=lto7;min_block=1")
	if err != nil {
		f.Fatal(err)
	}
	// The drive's state: LBP on with the method given (its Control Data
	// Protection mode page) and fixed 1024-byte blocks.
	setup := func(h *harness, method byte) []byte {
		page := h.ok(cdb(0x5a, 0, 0x0a, 0xf0, 0, 0, 0, 0, 48, 0), nil, 48)
		page[0], page[1] = 0, 0
		page[20], page[21], page[22] = method, 4, 0xc0
		h.ok(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, 48, 0), page, 0)
		h.do(cdb(0x15, 0x10, 0, 0, 12, 0), hexBytes("00 00 00 08 00 00 00 00 00 00 04 00"), 0)
		return page
	}
	// Cartridges (one per method): blocks of 100 and 1024 bytes, protected.
	var carts [2]*MemoryMedium
	for i := range carts {
		method := byte(1 + i)
		carts[i] = fuzzCartridge(f, cfg, func(h *harness) {
			setup(h, method)
			h.ok(write6(false, 104), protect(method, make([]byte, 100)), 0)
			h.ok(write6(true, 1), protect(method, make([]byte, 1024)), 0)
		})
	}
	f.Fuzz(func(t *testing.T, method byte, c []byte, out []byte, inLen uint16) {
		d := fuzzDrive(t, cfg, carts[method%2])
		defer func() { _ = d.Close() }()
		setup(&harness{t: t, d: d}, 1+method%2)
		fuzzCommands(t, d, [][]byte{c, c, readPos(0)}, out, inLen)
	})
}

// FuzzEncryption sends an arbitrary Set Data Encryption page (SECURITY
// PROTOCOL OUT), then an arbitrary command, the next block encryption
// status page and a READ, to an LTO-6 drive whose cartridge holds
// encrypted blocks (with KAD), a filemark and a plain block: nothing
// panics, and every answer is GOOD or CHECK CONDITION with sense that
// fits.
func FuzzEncryption(f *testing.F) {
	on := sdePage(0x40, 0x40, 2, 2, 1, keyA, kad(0x00, 0x00, "Hello world!"))
	f.Add(on, []byte{0x08, 0, 0, 0x10, 0, 0}, []byte{}, uint16(4096))
	f.Add(sdePage(0x40, 0, 2, 3, 1, keyA, kad(0x01, 0, "ABC123456789")), spinCDB(0x20, 0x0020, 8192), []byte{}, uint16(8192))
	f.Add(sdePage(0x40, 0, 0, 0, 0, make([]byte, 32)), spinCDB(0x20, 0x0010, 4), []byte{}, uint16(4))
	f.Add(sdePage(0x40, 0x04, 0, 2, 1, keyB), []byte{0x0a, 0, 0, 0, 100, 0}, make([]byte, 100), uint16(0))
	f.Add([]byte{0, 0x10, 0xff, 0xff}, spinCDB(0x00, 0x0000, 100), []byte{}, uint16(100))
	cfg, err := ParseConfig("memory=1;barcode=FUZZ03;capacity=1M;early_warning=64K;personality=lto6;min_block=1")
	if err != nil {
		f.Fatal(err)
	}
	cart := fuzzCartridge(f, cfg, func(h *harness) {
		h.ok(spoutCDB(len(on)), on, 0)
		h.ok(write6(false, 100), bytes.Repeat([]byte{1}, 100), 0)
		h.ok(write6(false, 1024), bytes.Repeat([]byte("fuzz"), 256), 0)
		h.ok(weof(1), nil, 0)
		off := sdePage(0x40, 0, 0, 0, 0, nil)
		h.ok(spoutCDB(len(off)), off, 0)
		h.ok(write6(false, 10), make([]byte, 10), 0)
	})
	f.Fuzz(func(t *testing.T, page, c, out []byte, inLen uint16) {
		d := fuzzDrive(t, cfg, cart)
		defer func() { _ = d.Close() }()
		fuzzCommands(t, d, [][]byte{spoutCDB(len(page))}, page, 0)
		fuzzCommands(t, d, [][]byte{c, spinCDB(0x20, 0x0021, 4096)}, out, inLen)
		fuzzCommands(t, d, [][]byte{cdb(0x08, 0, 0, 0x10, 0, 0), spinCDB(0x20, 0x0020, 4096)}, nil, 4096)
	})
}
