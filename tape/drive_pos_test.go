package tape

import (
	"encoding/binary"
	"strings"
	"testing"
)

func readPos(sa byte) []byte { return []byte{0x34, sa, 0, 0, 0, 0, 0, 0, 0, 0} }

func locate16(destType byte, cp bool, part byte, id uint64) []byte {
	c := make([]byte, 16)
	c[0] = 0x92
	c[1] = destType << 3
	if cp {
		c[1] |= 0x02
	}
	c[3] = part
	binary.BigEndian.PutUint64(c[4:], id)
	return c
}

func space16(code byte, n int64) []byte {
	c := make([]byte, 16)
	c[0], c[1] = 0x91, code
	binary.BigEndian.PutUint64(c[4:], uint64(n))
	return c
}

// tapeWithFiles writes three files of 2, 3 and 1 blocks, each closed by a
// filemark: objects B B F B B B F B F, EOD at object 9.
func tapeWithFiles(h *harness) {
	h.writeBlocks(10, 11)
	h.ok(weof(1), nil, 0)
	h.writeBlocks(20, 21, 22)
	h.ok(weof(1), nil, 0)
	h.writeBlocks(30)
	h.ok(weof(1), nil, 0)
}

func TestReadPosition(t *testing.T) {
	h := newHarness(t, "")
	// At BOP of an empty tape.
	in := h.ok(readPos(0x01), nil, 20) // what st sends ("34 01")
	wantBytes(t, "short at BOP", in, hexBytes("80 00 00 00 00000000 00000000 00 000000 00000000"))
	tapeWithFiles(h)
	in = h.ok(readPos(0x00), nil, 20)
	wantBytes(t, "short at EOD", in, hexBytes("00 00 00 00 00000009 00000009 00 000000 00000000"))
	in = h.ok(readPos(0x06), nil, 32)
	wantBytes(t, "long at EOD", in, hexBytes("00 000000 00000000 0000000000000009 0000000000000003 0000000000000000"))
	c := readPos(0x08)
	c[8] = 32
	in = h.ok(c, nil, 32)
	wantBytes(t, "extended at EOD", in, hexBytes("00 00 001c 00 000000 0000000000000009 0000000000000009 0000000000000000"))
	// The extended form honours the allocation length.
	c[8] = 8
	in = h.ok(c, nil, 32)
	if len(in) != 8 {
		t.Fatalf("extended with allocation 8: %d bytes", len(in))
	}
	h.fail(readPos(0x02), nil, 32)
}

func TestSpaceFilemarksAndFiles(t *testing.T) {
	h := newHarness(t, "")
	tapeWithFiles(h)
	h.ok(rewindCDB(), nil, 0)
	// mt fsf 2: after the second filemark, file 2 block 0.
	h.ok(space6(1, 2), nil, 0)
	h.wantPos(0, 7, 2)
	// mt bsf 1: before the second filemark (st then spaces forward one).
	h.ok(space6(1, -1), nil, 0)
	h.wantPos(0, 6, 1)
	// mt eod the st way: SPACE 32767 filemarks → BLANK CHECK with the
	// residue st turns into the file number: 32767 - (3 - 1) crossed.
	s, _ := h.fail(space6(1, 32767), nil, 0)
	wantBytes(t, "fsf to EOD", hexBytes(s), hexBytes("f0 00 08 00 00 7f fd 0a 00 00 00 00 00 05 00 00 00 00"))
	h.wantPos(0, 9, 3)
	// Backward over more filemarks than there are: BOP, residue.
	s, _ = h.fail(space6(1, -5), nil, 0)
	wantBytes(t, "bsf to BOP", hexBytes(s), hexBytes("f0 00 40 00 00 00 02 0a 00 00 00 00 00 04 00 00 00 00"))
	h.wantPos(0, 0, 0)
	// SPACE(16) with a 64-bit count behaves the same.
	h.ok(space16(1, 3), nil, 0)
	h.wantPos(0, 9, 3)
	h.fail(space16(0, -1), nil, 0) // bsr 1 from EOD meets the last filemark
	h.wantPos(0, 8, 2)
}

func TestSpaceBlocksBackwardOverFilemark(t *testing.T) {
	h := newHarness(t, "")
	tapeWithFiles(h)
	// At EOD (after the last filemark) bsr 1 meets the filemark at once.
	s, _ := h.fail(space6(0, -1), nil, 0)
	wantBytes(t, "bsr over filemark", hexBytes(s), hexBytes("f0 00 80 00 00 00 01 0a 00 00 00 00 00 01 00 00 00 00"))
	h.wantPos(0, 8, 2)
	h.ok(space6(0, -1), nil, 0)
	h.wantPos(0, 7, 2)
}

func TestSpaceEODAndSequential(t *testing.T) {
	h := newHarness(t, "")
	h.writeBlocks(10)
	h.ok(weof(1), nil, 0)
	h.writeBlocks(10)
	h.ok(weof(2), nil, 0) // double filemark: B F B F F
	h.writeBlocks(10)     // B F B F F B
	h.ok(rewindCDB(), nil, 0)
	h.ok(space6(3, 0), nil, 0) // SPACE to end of data (MT_ST_FAST_EOM)
	h.wantPos(0, 6, 3)
	h.ok(rewindCDB(), nil, 0)
	h.ok(space6(2, 2), nil, 0) // two consecutive filemarks: after the pair
	h.wantPos(0, 5, 3)
	h.ok(space6(3, 0), nil, 0)
	h.ok(space6(2, -2), nil, 0) // backward: before the pair
	h.wantPos(0, 3, 1)
	h.ok(rewindCDB(), nil, 0)
	s, _ := h.fail(space6(2, 3), nil, 0) // no run of three
	wantBytes(t, "sequential to EOD", hexBytes(s), hexBytes("70 00 08 00 00 00 00 0a 00 00 00 00 00 05 00 00 00 00"))
	h.wantPos(0, 6, 3)
	// SPACE(16) with a parameter length is refused; setmarks need DDS.
	c := space16(0, 1)
	c[13] = 1
	h.fail(c, nil, 0)
	s, _ = h.fail(space6(4, 1), nil, 0)
	wantBytes(t, "setmarks on LTO/generic", hexBytes(s), hexBytes("70 00 05 00 00 00 00 0a 00 00 00 00 24 00 00 cb 00 01"))
	// Zero counts do not move.
	h.ok(space6(0, 0), nil, 0)
	h.wantPos(0, 6, 3)
}

func TestSetmarksDAT72(t *testing.T) {
	h := newHarness(t, "personality=dat72;blksize=0")
	h.writeBlocks(10)
	h.ok(cdb(0x10, 0x02, 0, 0, 1, 0), nil, 0) // WSMK
	h.writeBlocks(10)
	h.ok(weof(1), nil, 0)
	h.writeBlocks(10) // B S B F B
	h.ok(rewindCDB(), nil, 0)
	h.ok(space6(4, 1), nil, 0) // over one setmark
	h.wantPos(0, 2, 0)
	// Reading across a setmark with RSMK=0 does not report it.
	h.ok(rewindCDB(), nil, 0)
	h.ok(read6(false, false, 10), nil, 10)
	in := h.ok(read6(false, false, 10), nil, 10)
	wantBytes(t, "block after the setmark", in, block(0, 10))
	// Spacing setmarks crosses filemarks; at EOD: BLANK CHECK.
	h.ok(rewindCDB(), nil, 0)
	s, _ := h.fail(space6(4, 2), nil, 0)
	if !strings.HasPrefix(s, "f0000800000001") {
		t.Fatalf("space 2 setmarks: %s", s)
	}
}

func TestLocate(t *testing.T) {
	h := newHarness(t, "")
	tapeWithFiles(h)
	h.ok(locate10(4), nil, 0) // mt seek 4
	h.wantPos(0, 4, 1)
	in := h.ok(read6(false, true, 100), nil, 100)
	wantBytes(t, "block at 4", in, block(1, 21))
	h.ok(locate10(9), nil, 0) // exactly end of data
	h.wantPos(0, 9, 3)
	h.ok(locate16(destFile, false, 0, 2), nil, 0) // file 2 starts after filemark 2
	h.wantPos(0, 7, 2)
	h.ok(locate16(destFile, false, 0, 0), nil, 0)
	h.wantPos(0, 0, 0)
	h.ok(locate16(destEOD, false, 0, 0), nil, 0)
	h.wantPos(0, 9, 3)
	h.ok(locate16(destObject, false, 0, 3), nil, 0)
	h.wantPos(0, 3, 1)
	s, _ := h.fail(locate16(destFile, false, 0, 7), nil, 0)
	if !strings.Contains(s, "0005") {
		t.Fatalf("locate to a missing file: %s", s)
	}
	h.wantPos(0, 9, 3)
	// Bad DEST_TYPE, partition that does not exist.
	s, _ = h.fail(locate16(2, false, 0, 0), nil, 0)
	wantBytes(t, "dest type", hexBytes(s), hexBytes("70 00 05 00 00 00 00 0a 00 00 00 00 24 00 00 cd 00 01"))
	s, _ = h.fail(locate16(destObject, true, 1, 0), nil, 0)
	wantBytes(t, "partition", hexBytes(s), hexBytes("70 00 05 00 00 00 00 0a 00 00 00 00 24 00 00 c0 00 03"))
	c := locate10(0)
	c[1] |= 0x02
	c[8] = 2
	s, _ = h.fail(c, nil, 0)
	wantBytes(t, "locate(10) partition", hexBytes(s), hexBytes("70 00 05 00 00 00 00 0a 00 00 00 00 24 00 00 c0 00 08"))
}

// TestTruncation: a write in the middle discards everything after it.
func TestTruncation(t *testing.T) {
	h := newHarness(t, "")
	h.writeBlocks(100, 200, 300)
	h.ok(weof(1), nil, 0)
	h.ok(rewindCDB(), nil, 0)
	h.ok(space6(0, 1), nil, 0)
	h.ok(write6(false, 50), block(9, 50), 0)
	h.ok(rewindCDB(), nil, 0)
	in := h.ok(read6(false, false, 100), nil, 100)
	wantBytes(t, "block 0", in, block(0, 100))
	in = h.ok(read6(false, false, 50), nil, 50)
	wantBytes(t, "new block 1", in, block(9, 50))
	s, _ := h.fail(read6(false, false, 10), nil, 10)
	if !strings.Contains(s, "0005") {
		t.Fatalf("after the new block: %s, want end of data", s)
	}
	h.wantPos(0, 2, 0)
	if st := h.d.Stats(); st.UsedBytes != 150+2*MemoryObjectOverhead {
		t.Fatalf("used %d, want 150 + 2 objects", st.UsedBytes)
	}
}

// TestEarlyWarningThenOverflow walks st's EOM sequence: writes succeed
// with early warning (EOM, VALID=0) until the physical end, then VOLUME
// OVERFLOW with nothing written; everything written reads back.
func TestEarlyWarningThenOverflow(t *testing.T) {
	h := newHarness(t, "capacity=1M;early_warning=256K;compression=0")
	const bs = 64<<10 - MemoryObjectOverhead // a block costs exactly 64 KiB
	var ew, good, overflow int
	for i := range 15 {
		r, _ := h.do(write6(false, bs), block(i, bs), 0)
		switch {
		case r.Status == 0:
			good++
		case r.Sense.Key == 0 && r.Sense.EOM && !r.Sense.Valid:
			ew++
		default:
			t.Fatalf("write %d: %s", i, senseHex(r.Sense))
		}
	}
	// Early warning from 768 KiB on: the 12th block is the first.
	if good != 11 || ew != 4 {
		t.Fatalf("good %d, early warning %d; want 11, 4", good, ew)
	}
	s, _ := h.fail(weof(1), nil, 0) // in the zone: success with EOM
	wantBytes(t, "filemark at early warning", hexBytes(s), hexBytes("70 00 40 00 00 00 00 0a 00 00 00 00 00 02 00 00 00 00"))
	for range 3 {
		r, _ := h.do(write6(false, bs), block(15, bs), 0)
		if r.Sense.Key == 0x0d && r.Sense.EOM && r.Sense.Valid && r.Sense.Info == bs {
			overflow++
		}
	}
	if overflow != 3 {
		t.Fatalf("%d overflows, want 3", overflow)
	}
	st := h.d.Stats()
	if st.EarlyWarnings != 5 || st.UsedBytes != 15<<16+MemoryObjectOverhead || st.CapacityBytes != 1<<20 || st.FilemarksWritten != 1 {
		t.Fatalf("stats %+v", st)
	}
	// READ POSITION reports EOP between early warning and the end.
	in := h.ok(readPos(0), nil, 20)
	if in[0] != 0x40 {
		t.Fatalf("READ POSITION flags %#x, want EOP", in[0])
	}
	h.ok(rewindCDB(), nil, 0)
	for i := range 15 {
		in := h.ok(read6(false, false, bs), nil, bs)
		wantBytes(t, "block", in, block(i, bs))
	}
	h.fail(read6(false, false, bs), nil, bs) // the filemark
}

func TestEraseAndFilemarkSync(t *testing.T) {
	h := newHarness(t, "")
	h.writeBlocks(10, 10, 10)
	h.ok(rewindCDB(), nil, 0)
	h.ok(space6(0, 1), nil, 0)
	h.ok(cdb(0x19, 0x01, 0, 0, 0, 0), nil, 0) // long erase from here
	h.wantPos(0, 1, 0)
	h.ok(rewindCDB(), nil, 0)
	h.ok(space6(3, 0), nil, 0)
	h.wantPos(0, 1, 0)
	// WRITE FILEMARKS 0 with IMMED=0 is a sync point; with IMMED=1 too
	// (nothing pending).
	h.ok(weof(0), nil, 0)
	h.ok(cdb(0x10, 0x01, 0, 0, 1, 0), nil, 0)
	h.wantPos(0, 2, 1)
}

// cdb16 builds READ(16), WRITE(16) or WRITE FILEMARKS(16).
func cdb16(op, b1 byte, part int, obj uint64, n int) []byte {
	c := make([]byte, 16)
	c[0], c[1], c[3] = op, b1, byte(part)
	binary.BigEndian.PutUint64(c[4:], obj)
	c[12], c[13], c[14] = byte(n>>16), byte(n>>8), byte(n)
	return c
}

// TestSixteenByteReadWrite: READ(16), WRITE(16) and WRITE FILEMARKS(16)
// start at the partition and logical object their CDB names, locating
// first when the drive is elsewhere; at the current position they do what
// the 6-byte forms do.
func TestSixteenByteReadWrite(t *testing.T) {
	h := newHarness(t, "")
	// Three blocks, then a filemark, at the current position.
	for i := range 3 {
		h.ok(cdb16(0x8a, 0, 0, uint64(i), 100), block(i, 100), 0)
	}
	h.ok(cdb16(0x80, 0, 0, 3, 1), nil, 0)
	h.wantPos(0, 4, 1)
	// Read block 1 from elsewhere: READ(16) locates first.
	in := h.ok(cdb16(0x88, 0, 0, 1, 100), nil, 100)
	wantBytes(t, "block 1", in, block(1, 100))
	h.wantPos(0, 2, 0)
	// A fixed read of 0 blocks at object 0 still moves there.
	h.ok(cdb16(0x88, 0, 0, 0, 0), nil, 0)
	h.wantPos(0, 0, 0)
	// WRITE(16) at object 2 replaces block 2 and everything after it.
	h.ok(cdb16(0x8a, 0, 0, 2, 50), block(9, 50), 0)
	h.wantPos(0, 3, 0)
	s, _ := h.fail(cdb16(0x88, 0x02, 0, 3, 100), nil, 100)
	if want := "f00008000000640a00000000000500000000"; s != want { // BLANK CHECK, EOD, residue 100
		t.Fatalf("read past the rewrite: sense %s, want %s", s, want)
	}
	// A partition the cartridge does not have: 24/00 at byte 3.
	s, _ = h.fail(cdb16(0x8a, 0, 1, 0, 10), block(0, 10), 0)
	if want := "700005000000000a00000000240000c00003"; s != want {
		t.Fatalf("partition 1: sense %s, want %s", s, want)
	}
	// Past end of data: BLANK CHECK 00/05, at EOD, nothing written.
	s, _ = h.fail(cdb16(0x80, 0, 0, 10, 1), nil, 0)
	if want := "700008000000000a00000000000500000000"; s != want {
		t.Fatalf("filemarks past EOD: sense %s, want %s", s, want)
	}
	h.wantPos(0, 3, 0)
	// WRITE FILEMARKS(16) has no setmarks.
	s, _ = h.fail(cdb16(0x80, 0x02, 0, 3, 1), nil, 0)
	if want := "700005000000000a00000000240000c90001"; s != want {
		t.Fatalf("WSMK: sense %s, want %s", s, want)
	}
}
