package disk_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/vscsid/vscsid/scsi"
)

// COMPARE AND WRITE writes the second half of its Data-Out where the
// first half matches the medium, and otherwise writes nothing and
// reports the offset of the first differing byte.
func TestCompareAndWrite(t *testing.T) {
	td := newDisk(t, "size=1M;mode=store")
	old, next := pattern(2*512, 1), pattern(2*512, 2)
	good(t, td.out(write10(100, 2), old))
	good(t, td.out(cawCDB(100, 2), slices.Concat(old, next)))
	if r, got := td.in(read10(99, 4), 4*512); r.Status != scsi.StatusGood || !bytes.Equal(got[512:3*512], next) ||
		!bytes.Equal(got[:512], make([]byte, 512)) || !bytes.Equal(got[3*512:], make([]byte, 512)) {
		t.Fatal("COMPARE AND WRITE did not write exactly its two blocks")
	}
	// The same request again: the medium now holds next, not old. The
	// first difference is at byte 0 of the verify data unless the two
	// patterns agree there.
	r := td.out(cawCDB(100, 2), slices.Concat(old, pattern(2*512, 3)))
	wantSense(t, r, scsi.Miscompare, scsi.MiscompareDuringVerify)
	first := int64(0)
	for old[first] == next[first] {
		first++
	}
	if !r.Sense.Valid || r.Sense.Info != first {
		t.Fatalf("INFORMATION %d (valid %v), want %d", r.Sense.Info, r.Sense.Valid, first)
	}
	if _, got := td.in(read10(100, 2), 2*512); !bytes.Equal(got, next) {
		t.Fatal("a miscompare wrote")
	}
	// A difference in the last byte of the second block.
	verify := slices.Clone(next)
	verify[len(verify)-1] ^= 0xff
	r = td.out(cawCDB(100, 2), slices.Concat(verify, old))
	wantSense(t, r, scsi.Miscompare, scsi.MiscompareDuringVerify)
	if r.Sense.Info != 2*512-1 {
		t.Fatalf("INFORMATION %d, want %d", r.Sense.Info, 2*512-1)
	}
	// NUMBER OF LOGICAL BLOCKS 0: nothing compared or written.
	good(t, td.out(cawCDB(100, 0), nil))
	// Past the capacity, write protect, the limits, WRPROTECT.
	wantSense(t, td.out(cawCDB(2047, 2), make([]byte, 2048)), scsi.IllegalRequest, scsi.LBAOutOfRange)
	c := cawCDB(0, 1)
	c[1] = 0x20
	wantField(t, td.out(c, make([]byte, 1024)), true, 1, 7)
	small := newDisk(t, "size=1M;mode=store;max_blks=4;opt_blks=4")
	wantField(t, small.out(cawCDB(0, 5), make([]byte, 10*512)), true, 13, -1)
	good(t, small.out(cawCDB(0, 4), make([]byte, 8*512)))
	wp := newDisk(t, "size=1M;mode=store;wp=1")
	wantSense(t, wp.out(cawCDB(0, 1), make([]byte, 1024)), scsi.DataProtect, scsi.WriteProtected)
}

// COMPARE AND WRITE across the end of a wrapped store compares and writes
// the blocks the LBAs map to.
func TestCompareAndWriteAcrossWrap(t *testing.T) {
	td := newDisk(t, "size=1M;mode=store;store_size=64K") // 128-block store
	old, next := pattern(4*512, 4), pattern(4*512, 5)
	good(t, td.out(write10(126, 4), old)) // blocks 126, 127, 0, 1 of the store
	good(t, td.out(cawCDB(128+126, 4), slices.Concat(old, next)))
	if _, got := td.in(read10(126, 4), 4*512); !bytes.Equal(got, next) {
		t.Fatal("COMPARE AND WRITE across the wrap")
	}
}

// In fake_rw mode COMPARE AND WRITE, like VERIFY, compares nothing.
func TestCompareAndWriteFakeRW(t *testing.T) {
	td := newDisk(t, cfg512n)
	good(t, td.out(cawCDB(5, 1), pattern(1024, 6)))
}

// WRITE AND VERIFY(10/12/16) write like WRITE; BYTCHK 1xb is reserved.
func TestWriteAndVerify(t *testing.T) {
	td := newDisk(t, "size=1M;mode=store")
	for i, cdb := range [][]byte{rw10(0x2e, 10, 2), rw12(0xae, 20, 2), rw16(0x8e, 30, 2)} {
		p := pattern(1024, byte(10+i))
		cdb[1] = 0x02 // BYTCHK 01b
		good(t, td.out(cdb, p))
		lba := binary.BigEndian.Uint32(cdb[2:])
		if len(cdb) == 16 {
			lba = uint32(binary.BigEndian.Uint64(cdb[2:]))
		}
		if _, got := td.in(read10(lba, 2), 1024); !bytes.Equal(got, p) {
			t.Fatalf("% x did not write", cdb)
		}
		cdb[1] = 0x04 // BYTCHK 10b
		wantField(t, td.out(cdb, p), true, 1, 2)
		cdb[1] = 0x20 // WRPROTECT
		wantField(t, td.out(cdb, p), true, 1, 7)
	}
	wantSense(t, td.out(rw10(0x2e, 2047, 2), make([]byte, 1024)), scsi.IllegalRequest, scsi.LBAOutOfRange)
}

// PRE-FETCH answers CONDITION MET for a range on the medium, 0 blocks
// meaning to the end, and LBA OUT OF RANGE past it.
func TestPreFetch(t *testing.T) {
	td := newDisk(t, "size=1M") // 2048 blocks
	for _, c := range []struct {
		cdb  []byte
		want scsi.Status
	}{
		{rw10(0x34, 0, 2048), scsi.StatusConditionMet},
		{rw10(0x34, 2047, 0), scsi.StatusConditionMet},
		{rw16(0x90, 100, 8), scsi.StatusConditionMet},
		{rw10(0x34, 2047, 2), scsi.StatusCheckCondition},
		{rw16(0x90, 2048, 0), scsi.StatusCheckCondition},
	} {
		r := td.do(c.cdb, nil)
		if r.Status != c.want {
			t.Fatalf("% x: %v %v, want %v", c.cdb, r.Status, r.Sense.ASC, c.want)
		}
		if c.want == scsi.StatusCheckCondition && r.Sense.ASC != scsi.LBAOutOfRange {
			t.Fatalf("% x: %v, want LBA OUT OF RANGE", c.cdb, r.Sense.ASC)
		}
	}
	immed := rw10(0x34, 0, 1)
	immed[1] = 0x02
	if r := td.do(immed, nil); r.Status != scsi.StatusConditionMet {
		t.Fatalf("IMMED: %v", r.Status)
	}
	td.do(hx("1b 00 00 00 00 00"), nil) // stop
	wantSense(t, td.do(rw10(0x34, 0, 1), nil), scsi.NotReady, scsi.LogicalUnitNotReadyInitCmd)
}

// Every disk command reports a timeout with RCTD.
func TestCommandTimeouts(t *testing.T) {
	td := newDisk(t, cfg512n)
	// COMPARE AND WRITE, one command with RCTD: usage data, then a
	// command timeouts descriptor of nominal and recommended 30 s.
	td.golden(hx("a3 0c 81 89 0000 00000100 00 00"), 256,
		"00 83 0010 89 f8 ffffffffffffffff 000000 ff 00 04 000a 0000 0000001e 0000001e")
}

// Zeroing part of a store chunk frees the chunk when nothing else in it
// holds data, so many small UNMAPs release memory as one large one does.
func TestUnmapPiecesFreesChunk(t *testing.T) {
	td := newDisk(t, "size=1M;mode=store;lbpu=1") // 64 KiB chunks: 128 blocks
	good(t, td.out(write10(128, 128), pattern(64<<10, 7)))
	if a := td.d.Stats().StoreAllocated; a != 64<<10 {
		t.Fatalf("after the write: %d allocated", a)
	}
	for lba := uint64(128); lba < 256; lba += 32 {
		list := unmapList([2]uint64{lba, 32})
		good(t, td.out(unmapCDB(uint16(len(list))), list))
		if a, last := td.d.Stats().StoreAllocated, lba == 224; (a == 0) != last {
			t.Fatalf("after unmapping %d+32: %d allocated", lba, a)
		}
	}
}

// lbaStatus runs GET LBA STATUS from lba and returns its descriptors as
// "LBA+N:status".
func (td *tdisk) lbaStatus(lba uint64) []string {
	td.t.Helper()
	return td.lbaStatusType(lba, 0)
}

// lbaStatusType is lbaStatus with REPORT TYPE rt.
func (td *tdisk) lbaStatusType(lba uint64, rt byte) []string {
	td.t.Helper()
	c := getLBAStatus(lba, 4096)
	c[14] = rt
	r, got := td.in(c, 4096)
	good(td.t, r)
	if n := binary.BigEndian.Uint32(got); int(n) != len(got)-4 || (len(got)-8)%16 != 0 {
		td.t.Fatalf("PARAMETER DATA LENGTH %d for %d bytes", n, len(got))
	}
	var out []string
	for i := 8; i < len(got); i += 16 {
		out = append(out, fmt.Sprintf("%d+%d:%d", binary.BigEndian.Uint64(got[i:]), binary.BigEndian.Uint32(got[i+8:]), got[i+12]))
	}
	return out
}

// GET LBA STATUS reports what writes mapped and UNMAP deallocated, to the
// store's 64 KiB chunk (128 blocks of 512 bytes).
func TestGetLBAStatus(t *testing.T) {
	td := newDisk(t, "size=1M;mode=store;lbpu=1") // 2048 blocks, 16 chunks
	want := func(lba uint64, w ...string) {
		t.Helper()
		if got := td.lbaStatus(lba); !slices.Equal(got, w) {
			t.Fatalf("from %d: %v, want %v", lba, got, w)
		}
	}
	want(0, "0+2048:1")
	good(t, td.out(write10(128, 128), pattern(128*512, 1)))
	good(t, td.out(write10(300, 1), pattern(512, 2)))
	want(0, "0+128:1", "128+256:0", "384+1664:1")
	want(130, "130+254:0", "384+1664:1")
	want(2047, "2047+1:1")
	list := unmapList([2]uint64{128, 128})
	good(t, td.out(unmapCDB(uint16(len(list))), list))
	want(0, "0+256:1", "256+128:0", "384+1664:1")
	// Unmapping part of a chunk that holds data elsewhere keeps it mapped.
	list = unmapList([2]uint64{256, 8})
	good(t, td.out(unmapCDB(uint16(len(list))), list))
	want(0, "0+256:1", "256+128:0", "384+1664:1")
	wantSense(t, td.do(getLBAStatus(2048, 64), nil), scsi.IllegalRequest, scsi.LBAOutOfRange)
	// REPORT TYPE: mapped only, deallocated only, non-zero status,
	// anchored (none), and a type the disk does not know.
	for rt, w := range map[byte][]string{2: {"256+128:0"}, 3: {"0+256:1", "384+1664:1"}, 1: {"0+256:1", "384+1664:1"}, 4: nil} {
		if descs := td.lbaStatusType(0, rt); !slices.Equal(descs, w) {
			t.Fatalf("REPORT TYPE %d: %v, want %v", rt, descs, w)
		}
	}
	c := getLBAStatus(0, 64)
	c[14] = 0x10
	wantField(t, td.do(c, nil), true, 14, -1)
	// An allocation length that holds only the header still learns of one
	// descriptor from PARAMETER DATA LENGTH.
	td.golden(getLBAStatus(0, 8), 8, "00000014 00000000")
	td.golden(getLBAStatus(0, 24), 24, "00000014 00000000 0000000000000000 00000100 01 000000")
	td.do(hx("1b 00 00 00 00 00"), nil) // stop
	wantSense(t, td.do(getLBAStatus(0, 64), nil), scsi.NotReady, scsi.LogicalUnitNotReadyInitCmd)
}

// The status of a wrapped store repeats with the store; a run that goes
// once round it unchanged reaches the end of the capacity, and at most
// lbaStatusMaxDesc (128) descriptors come back.
func TestGetLBAStatusWrapped(t *testing.T) {
	one := newDisk(t, "size=64M;mode=store;store_size=64K;lbpu=1") // one chunk, 131072 blocks
	if got := one.lbaStatus(7); !slices.Equal(got, []string{"7+131065:1"}) {
		t.Fatalf("empty: %v", got)
	}
	good(t, one.out(write10(5, 1), pattern(512, 3)))
	if got := one.lbaStatus(7); !slices.Equal(got, []string{"7+131065:0"}) {
		t.Fatalf("written: %v", got)
	}
	two := newDisk(t, "size=64M;mode=store;store_size=128K;lbpu=1") // two chunks
	good(t, two.out(write10(0, 1), pattern(512, 4)))
	got := two.lbaStatus(0)
	if len(got) != 128 || got[0] != "0+128:0" || got[1] != "128+128:1" || got[127] != "16256+128:1" {
		t.Fatalf("%d descriptors: %v ... %v", len(got), got[:2], got[len(got)-1])
	}
}

// Without provisioning every LBA is mapped; fake_rw stores nothing, so a
// thin fake_rw disk has every LBA deallocated. A descriptor covers at most
// 2^32-1 blocks.
func TestGetLBAStatusWithoutStore(t *testing.T) {
	if got := newDisk(t, cfg512n).lbaStatus(0); !slices.Equal(got, []string{"0+2097152:0"}) {
		t.Fatalf("not thin: %v", got)
	}
	if got := newDisk(t, cfg512n+";lbpu=1").lbaStatus(100); !slices.Equal(got, []string{"100+2097052:1"}) {
		t.Fatalf("thin fake_rw: %v", got)
	}
	big := newDisk(t, "size=4TiB;lbpws=1") // 2^33 blocks
	if got := big.lbaStatus(1); !slices.Equal(got, []string{"1+4294967295:1", "4294967296+4294967295:1", "8589934591+1:1"}) {
		t.Fatalf("4 TiB: %v", got)
	}
}

func writeAtomic16(lba uint64, n uint16) []byte {
	c := make([]byte, 16)
	c[0] = 0x9c
	binary.BigEndian.PutUint64(c[2:], lba)
	binary.BigEndian.PutUint16(c[12:], n)
	return c
}

// WRITE ATOMIC(16) writes within the limits the Block Limits page reports
// and refuses, writing nothing, what is outside them.
func TestWriteAtomic(t *testing.T) {
	td := newDisk(t, "size=1M;mode=store;pbexp=3;atomic_wr=1;atomic_wr_max_length=32") // align and granularity 8
	td.golden(inquiry(true, 0xb0, 64), 64,
		"00 b0 00 3c 01 ff 0008 00000000 00000400 00000000 00000000 00000000 00000000 00000000 000000000000ffff 00000020 00000008 00000008 00000000 00000000")
	p := pattern(32*512, 5)
	good(t, td.out(writeAtomic16(64, 32), p))
	if _, got := td.in(read10(64, 32), 32*512); !bytes.Equal(got, p) {
		t.Fatal("WRITE ATOMIC(16) did not write")
	}
	boundary := writeAtomic16(0, 8)
	boundary[11] = 8
	for _, c := range []struct {
		cdb   []byte
		n     int
		field int
	}{
		{writeAtomic16(0, 40), 40, 12}, // over the maximum
		{writeAtomic16(0, 12), 12, 12}, // not a multiple of the granularity
		{writeAtomic16(4, 8), 8, 2},    // not aligned
		{boundary, 8, 10},              // a boundary; none reported
	} {
		wantField(t, td.out(c.cdb, make([]byte, c.n*512)), true, c.field, -1)
	}
	if _, got := td.in(read10(64, 32), 32*512); !bytes.Equal(got, p) {
		t.Fatal("a refused WRITE ATOMIC(16) wrote")
	}
	wantSense(t, td.out(writeAtomic16(64, 8), make([]byte, 8192)), scsi.IllegalRequest, scsi.InvalidFieldInCommandIU)
	// Without atomic_wr there is no such command, and no limits.
	plain := newDisk(t, "size=1M;mode=store")
	wantSense(t, plain.out(writeAtomic16(0, 8), make([]byte, 4096)), scsi.IllegalRequest, scsi.InvalidCommandOperationCode)
	if plain.d.CommandName(0x9c) != "" || td.d.CommandName(0x9c) != "write_atomic_16" {
		t.Fatal("write_atomic_16 named on the wrong disk")
	}
}

// An allocation length between two descriptors gets the whole ones that
// fit, and PARAMETER DATA LENGTH says what was returned.
func TestGetLBAStatusWholeDescriptors(t *testing.T) {
	td := newDisk(t, "size=1M;mode=store;lbpu=1")
	good(t, td.out(write10(128, 1), pattern(512, 1)))
	td.golden(getLBAStatus(0, 50), 50, "00000024 00000000 0000000000000000 00000080 01 000000 0000000000000080 00000080 00 000000")
}
