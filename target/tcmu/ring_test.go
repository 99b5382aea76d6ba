package tcmu

import (
	"errors"
	"strings"
	"testing"
	"unsafe"
)

// mapping returns an 8-byte aligned mapping with a valid mailbox.
func mapping(cmdrSize, dataSize int) []byte {
	words := make([]uint64, (mbSize+cmdrSize+dataSize+7)/8)
	mem := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), mbSize+cmdrSize+dataSize)
	ne.PutUint16(mem[mbVersionOff:], MailboxVersion)
	ne.PutUint16(mem[mbFlagsOff:], FlagReadLen)
	ne.PutUint32(mem[mbCmdrOffOff:], mbSize)
	ne.PutUint32(mem[mbCmdrSizeOff:], uint32(cmdrSize))
	return mem
}

func TestNewRingValidates(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(mem []byte) []byte
		want string // "" = valid
	}{
		{"valid", func(m []byte) []byte { return m }, ""},
		{"short", func(m []byte) []byte { return m[:100] }, "smaller than"},
		{"version 1", func(m []byte) []byte { ne.PutUint16(m, 1); return m }, "version 1"},
		{"cmdr_off in mailbox", func(m []byte) []byte { ne.PutUint32(m[mbCmdrOffOff:], 64); return m }, "overlaps the mailbox"},
		{"cmdr_off misaligned", func(m []byte) []byte { ne.PutUint32(m[mbCmdrOffOff:], 132); return m }, "aligned"},
		{"cmdr_size tiny", func(m []byte) []byte { ne.PutUint32(m[mbCmdrSizeOff:], 8); return m }, "too small"},
		{"cmdr_size misaligned", func(m []byte) []byte { ne.PutUint32(m[mbCmdrSizeOff:], 1001); return m }, "aligned"},
		{"ring past mapping", func(m []byte) []byte { ne.PutUint32(m[mbCmdrSizeOff:], 1<<30); return m }, "exceeds"},
		{"huge cmdr_off", func(m []byte) []byte { ne.PutUint32(m[mbCmdrOffOff:], 0xfffffff8); return m }, "exceeds"},
		{"head outside", func(m []byte) []byte { ne.PutUint32(m[mbCmdHeadOff:], 1000); return m }, "cmd_head"},
		{"head misaligned", func(m []byte) []byte { ne.PutUint32(m[mbCmdHeadOff:], 12); return m }, "cmd_head"},
		{"tail outside", func(m []byte) []byte { ne.PutUint32(m[mbCmdTailOff:], 4096); return m }, "cmd_tail"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := newRing(c.edit(mapping(1000, 4096)))
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if r.cmdrSize != 1000 || r.dataOff != mbSize+1000 || r.flags != FlagReadLen {
					t.Fatalf("ring %+v", r)
				}
				return
			}
			if !errors.Is(err, ErrRingCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want ErrRingCorrupt mentioning %q", err, c.want)
			}
		})
	}
}

func TestHeaderValidates(t *testing.T) {
	r, err := newRing(mapping(1000, 4096))
	if err != nil {
		t.Fatal(err)
	}
	put := func(pos, lenOp uint32) { ne.PutUint32(r.mem[r.abs(pos):], lenOp) }

	put(0, 128|opCmd)
	if op, n, err := r.header(0, 200); err != nil || op != opCmd || n != 128 {
		t.Errorf("good header: %d %d %v", op, n, err)
	}
	if _, _, err := r.header(0, 120); err == nil || !strings.Contains(err.Error(), "past cmd_head") {
		t.Errorf("entry past head: %v", err)
	}
	if _, _, err := r.header(0, 4); err == nil {
		t.Error("header with 4 bytes queued accepted")
	}
	put(0, opCmd)
	if _, _, err := r.header(0, 200); err == nil || !strings.Contains(err.Error(), "zero length") {
		t.Errorf("zero length: %v", err)
	}
	put(992, 16|opPad)
	if _, _, err := r.header(992, 16); err == nil || !strings.Contains(err.Error(), "crosses the end") {
		t.Errorf("entry across the end: %v", err)
	}
	put(992, 8|opPad)
	if op, n, err := r.header(992, 8); err != nil || op != opPad || n != 8 {
		t.Errorf("pad to the end: %d %d %v", op, n, err)
	}
	if got := r.next(992, 8); got != 0 {
		t.Errorf("next wraps to %d", got)
	}
	if got := r.used(992, 16); got != 24 {
		t.Errorf("used across the wrap: %d", got)
	}
}

func TestLoadValidates(t *testing.T) {
	const entry = 128
	for _, c := range []struct {
		name string
		edit func(e []byte, abs uint64)
		want string
	}{
		{"valid", func([]byte, uint64) {}, ""},
		{"short entry", func(e []byte, _ uint64) { ne.PutUint32(e, 64|opCmd) }, "shorter than"},
		{"too many iovecs", func(e []byte, _ uint64) { ne.PutUint32(e[reqIovCntOff:], 0xffffffff) }, "do not fit"},
		{"bidi iovecs overflow", func(e []byte, _ uint64) { ne.PutUint32(e[reqIovBidiCntOff:], 0xffffffff) }, "do not fit"},
		{"cdb_off before iovecs end", func(e []byte, a uint64) { ne.PutUint64(e[reqCdbOffOff:], a+50) }, "cdb_off"},
		{"cdb_off past entry", func(e []byte, a uint64) { ne.PutUint64(e[reqCdbOffOff:], a+entry) }, "cdb_off"},
		{"cdb_off huge", func(e []byte, _ uint64) { ne.PutUint64(e[reqCdbOffOff:], 1<<63) }, "cdb_off"},
		{"cdb too long", func(e []byte, a uint64) { ne.PutUint64(e[reqCdbOffOff:], a+entry-8); e[entry-8] = 0x28 }, "does not fit"},
		{"varlen cdb too long", func(e []byte, _ uint64) { e[112] = 0x7f; e[119] = 200 }, "does not fit"},
		{"iov in ring", func(e []byte, a uint64) { ne.PutUint64(e[reqIovOff:], a) }, "outside the data area"},
		{"iov past end", func(e []byte, _ uint64) { ne.PutUint64(e[reqIovOff+8:], 4097) }, "outside the data area"},
		{"iov len overflow", func(e []byte, _ uint64) { ne.PutUint64(e[reqIovOff+8:], 1<<64-1) }, "outside the data area"},
		{"iov base huge", func(e []byte, _ uint64) { ne.PutUint64(e[reqIovOff:], 1<<64-16) }, "outside the data area"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := newRing(mapping(1000, 4096))
			if err != nil {
				t.Fatal(err)
			}
			a := r.abs(0)
			e := r.mem[a : a+entry]
			ne.PutUint32(e, entry|opCmd)
			ne.PutUint16(e[hdrCmdIDOff:], 7)
			ne.PutUint32(e[reqIovCntOff:], 1)
			ne.PutUint64(e[reqCdbOffOff:], a+112)
			ne.PutUint64(e[reqIovOff:], r.dataOff)
			ne.PutUint64(e[reqIovOff+8:], 4096)
			copy(e[112:], []byte{0x28, 0, 0, 0, 0, 1, 0, 0, 8, 0})
			c.edit(e, a)
			_, n := r.op(0)
			cc := newCmdCtx()
			err = r.load(cc, 0, n)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cc.id != 7 || len(cc.cmd.CDB) != 10 || cc.cmd.CDB.Uint32(2) != 1 || cc.buf.Len() != 4096 || cc.buf.Segments() != 1 {
					t.Fatalf("loaded id %d cdb % x len %d", cc.id, cc.cmd.CDB, cc.buf.Len())
				}
				return
			}
			if !errors.Is(err, ErrRingCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want ErrRingCorrupt mentioning %q", err, c.want)
			}
		})
	}
}

func TestBucketIndexes(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		want int
	}{
		{0, 0}, {1000, 0}, {1001, 1}, {4000, 1}, {4001, 2}, {16000, 2},
		{1_048_576_000, 10}, {16_777_216_000, 12}, {16_777_216_001, 13}, {1 << 62, 13},
	} {
		if got := durIndex(c.ns); got != c.want {
			t.Errorf("durIndex(%d) = %d, want %d", c.ns, got, c.want)
		}
		if c.want < durBuckets && float64(c.ns)/1e9 > DurationBounds[c.want] {
			t.Errorf("%dns above its bucket bound %v", c.ns, DurationBounds[c.want])
		}
	}
	for _, c := range []struct {
		v    uint64
		want int
	}{
		{0, 0}, {1, 0}, {512, 0}, {513, 1}, {1024, 1}, {4096, 3}, {4097, 4}, {1 << 20, 11}, {16 << 20, 15}, {16<<20 + 1, 16}, {1 << 40, 16},
	} {
		if got := pow2Index(c.v, 512, xferBuckets); got != c.want {
			t.Errorf("pow2Index(%d, 512) = %d, want %d", c.v, got, c.want)
		}
	}
	if SegmentBounds[8] != 256 || TransferBounds[15] != 16<<20 || len(DurationBounds) != durBuckets {
		t.Errorf("bounds: %v %v %v", SegmentBounds, TransferBounds, DurationBounds)
	}
}

func TestZeroFrom(t *testing.T) {
	segs := [][]byte{{1, 1, 1}, {1, 1}, {1, 1, 1, 1}}
	zeroFrom(segs, 4)
	want := [][]byte{{1, 1, 1}, {1, 0}, {0, 0, 0, 0}}
	for i := range segs {
		if string(segs[i]) != string(want[i]) {
			t.Fatalf("zeroFrom: %v", segs)
		}
	}
}
