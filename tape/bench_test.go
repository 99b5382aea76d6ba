package tape

import (
	"context"
	"testing"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
)

const benchBlock = 256 << 10

// quietDrive is a drive on a 64 MiB memory cartridge with a no-op logger,
// its unit attentions consumed.
func quietDrive(tb testing.TB) *Drive {
	tb.Helper()
	cfg, err := ParseConfig("memory=1;barcode=BENCH1;capacity=64M")
	if err != nil {
		tb.Fatal(err)
	}
	d, err := New("bench", cfg, nil, zap.NewNop())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = d.Close() })
	h := &harness{t: tb, d: d}
	h.clearUA()
	return d
}

// streamer issues commands with preallocated CDBs and buffers, as the
// transport does, so the measurement is the drive's own cost.
type streamer struct {
	d       *Drive
	ctx     context.Context
	segs    [][]byte
	buf     scsi.Buffer
	cmd     scsi.Command
	wcdb    scsi.CDB
	rcdb    scsi.CDB
	rewind  scsi.CDB
	inTape  int // blocks written since the last rewind
	perPass int
}

func newStreamer(d *Drive, blockLen int) *streamer {
	data := make([]byte, blockLen)
	for i := range data {
		data[i] = byte(i)
	}
	// 64 KiB iovecs, like a 256 KiB st transfer arrives.
	var segs [][]byte
	for off := 0; off < len(data); off += 64 << 10 {
		segs = append(segs, data[off:min(off+64<<10, len(data))])
	}
	s := &streamer{d: d, ctx: context.Background(), segs: segs,
		wcdb:    scsi.CDB(write6(false, blockLen)),
		rcdb:    scsi.CDB(read6(false, false, blockLen)),
		rewind:  scsi.CDB(rewindCDB()),
		perPass: (32 << 20) / blockLen,
	}
	s.cmd.Data = &s.buf
	return s
}

func (s *streamer) run(c scsi.CDB) scsi.Response {
	s.buf.Reset(s.segs)
	s.cmd.CDB = c
	return s.d.HandleCommand(s.ctx, &s.cmd)
}

// write writes one block, rewinding every 32 MiB so the cartridge never
// fills: after the first pass the medium reuses its memory.
func (s *streamer) write(tb testing.TB) {
	if s.inTape == s.perPass {
		s.run(s.rewind)
		s.inTape = 0
	}
	if r := s.run(s.wcdb); r.Status != scsi.StatusGood {
		tb.Fatalf("write: %s", senseHex(r.Sense))
	}
	s.inTape++
}

// read reads one block, rewinding after the 32 MiB written by fill.
func (s *streamer) read(tb testing.TB) {
	if s.inTape == s.perPass {
		s.run(s.rewind)
		s.inTape = 0
	}
	if r := s.run(s.rcdb); r.Status != scsi.StatusGood {
		tb.Fatalf("read: %s", senseHex(r.Sense))
	}
	s.inTape++
}

func (s *streamer) fill(tb testing.TB) {
	s.run(s.rewind)
	s.inTape = 0
	for range s.perPass {
		s.write(tb)
	}
	s.run(s.rewind)
	s.inTape = 0
}

func BenchmarkWrite6(b *testing.B) {
	s := newStreamer(quietDrive(b), benchBlock)
	s.fill(b) // grow the cartridge's arena once
	b.SetBytes(benchBlock)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.write(b)
	}
}

func BenchmarkRead6(b *testing.B) {
	s := newStreamer(quietDrive(b), benchBlock)
	s.fill(b)
	b.SetBytes(benchBlock)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.read(b)
	}
}

// TestZeroAllocs pins the hot path: streaming READ(6) and WRITE(6), and
// the conditions st meets while streaming (short-block ILI, filemark),
// allocate nothing.
func TestZeroAllocs(t *testing.T) {
	d := quietDrive(t)
	s := newStreamer(d, benchBlock)
	s.fill(t)
	if n := testing.AllocsPerRun(200, func() { s.write(t) }); n != 0 {
		t.Errorf("WRITE(6): %v allocs per command", n)
	}
	s.fill(t)
	if n := testing.AllocsPerRun(100, func() { s.read(t) }); n != 0 {
		t.Errorf("READ(6): %v allocs per command", n)
	}
	// ILI (asking 256 KiB of 64 KiB blocks) and filemark reads.
	small := newStreamer(d, 64<<10)
	s.run(s.rewind)
	for range 50 {
		small.run(small.wcdb)
		small.run(scsi.CDB(weof(1)))
	}
	s.run(s.rewind)
	big := s.rcdb
	n := testing.AllocsPerRun(40, func() {
		if r := s.run(big); !r.Sense.ILI {
			t.Fatalf("want ILI: %s", senseHex(r.Sense))
		}
		if r := s.run(big); !r.Sense.Filemark {
			t.Fatalf("want filemark: %s", senseHex(r.Sense))
		}
	})
	if n != 0 {
		t.Errorf("READ(6) with ILI and filemark: %v allocs", n)
	}

	// Encrypted (and compressed: DCE is on) writes and reads.
	h := &harness{t: t, d: d}
	p := sdePage(0x40, 0, 2, 2, 1, keyA)
	h.ok(spoutCDB(len(p)), p, 0)
	s.run(s.rewind)
	s.inTape = 0
	s.fill(t)
	if n := testing.AllocsPerRun(200, func() { s.write(t) }); n != 0 {
		t.Errorf("encrypted WRITE(6): %v allocs per command", n)
	}
	s.fill(t)
	if n := testing.AllocsPerRun(100, func() { s.read(t) }); n != 0 {
		t.Errorf("encrypted READ(6): %v allocs per command", n)
	}
	if d.Stats().EncryptedBytes == 0 || d.Stats().DecryptedBytes == 0 {
		t.Error("nothing was encrypted")
	}
}
