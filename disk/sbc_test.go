package disk_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"regexp"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/scsi"
)

func TestErrorSenseGolden(t *testing.T) {
	td := newDisk(t, cfg512n)
	tests := []struct {
		name string
		cdb  []byte
		want string // fixed-format sense
	}{
		// ILLEGAL REQUEST 24/00, SKSV|C/D|BPV, bit 7 of byte 1 (RDPROTECT).
		{"rdprotect", []byte{0x28, 0x20, 0, 0, 0, 0, 0, 0, 1, 0}, "70 00 05 00000000 0a 00000000 24 00 00 cf 0001"},
		// FUA_NV (obsolete), bit 1 of byte 1.
		{"fua_nv", []byte{0x28, 0x02, 0, 0, 0, 0, 0, 0, 1, 0}, "70 00 05 00000000 0a 00000000 24 00 00 c9 0001"},
		// WRITE(10) reserved bit 2 of byte 1.
		{"write-reserved", []byte{0x2a, 0x04, 0, 0, 0, 0, 0, 0, 0, 0}, "70 00 05 00000000 0a 00000000 24 00 00 ca 0001"},
		// NACA in the CONTROL byte (byte 9 bit 2): ACA is not supported.
		{"naca", []byte{0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0x04}, "70 00 05 00000000 0a 00000000 24 00 00 ca 0009"},
		// READ(6) reserved (old LUN) bits.
		{"read6-lun", []byte{0x08, 0x20, 0, 0, 1, 0}, "70 00 05 00000000 0a 00000000 24 00 00 cf 0001"},
		// LBA OUT OF RANGE has no field pointer.
		{"lba", read10(0x200000, 1), "70 00 05 00000000 0a 00000000 21 00 00 00 0000"},
		// Unknown opcode (FORMAT UNIT is not emulated).
		{"opcode", []byte{0x04, 0, 0, 0, 0, 0}, "70 00 05 00000000 0a 00000000 20 00 00 00 0000"},
		// Vendor-specific group 7 opcode.
		{"vendor", []byte{0xff, 0, 0, 0, 0, 0}, "70 00 05 00000000 0a 00000000 20 00 00 00 0000"},
		// START STOP UNIT with LOEJ on a non-removable disk.
		{"loej", []byte{0x1b, 0, 0, 0, 0x02, 0}, "70 00 05 00000000 0a 00000000 24 00 00 c9 0004"},
		// START STOP UNIT with a reserved POWER CONDITION.
		{"power-condition", []byte{0x1b, 0, 0, 0, 0x51, 0}, "70 00 05 00000000 0a 00000000 24 00 00 cf 0004"},
		// MAINTENANCE IN with an unsupported service action (REPORT
		// TARGET PORT GROUPS).
		{"rtpg", []byte{0xa3, 0x0a, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, "70 00 05 00000000 0a 00000000 24 00 00 cc 0001"},
		// VERIFY with BYTCHK=10b (reserved).
		{"bytchk", []byte{0x2f, 0x04, 0, 0, 0, 0, 0, 0, 1, 0}, "70 00 05 00000000 0a 00000000 24 00 00 ca 0001"},
		// VERIFY with VRPROTECT.
		{"vrprotect", []byte{0x8f, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0}, "70 00 05 00000000 0a 00000000 24 00 00 cf 0001"},
		// WRITE SAME(10) with ANCHOR (ANC_SUP=0) and with UNMAP (lbpws10=0).
		{"ws-anchor", []byte{0x41, 0x10, 0, 0, 0, 0, 0, 0, 1, 0}, "70 00 05 00000000 0a 00000000 24 00 00 cc 0001"},
		{"ws-unmap", []byte{0x41, 0x08, 0, 0, 0, 0, 0, 0, 1, 0}, "70 00 05 00000000 0a 00000000 24 00 00 cb 0001"},
		// WRITE SAME(16) with NUMBER OF LOGICAL BLOCKS 0 (WSNZ=1).
		{"ws-zero", []byte{0x93, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "70 00 05 00000000 0a 00000000 24 00 00 c0 000a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := td.do(tt.cdb, nil)
			if r.Status != scsi.StatusCheckCondition {
				t.Fatalf("status %v, want CHECK CONDITION", r.Status)
			}
			if got, want := r.Sense.AppendFixed(nil), hx(tt.want); !bytes.Equal(got, want) {
				t.Fatalf("sense\n got % x\nwant % x", got, want)
			}
		})
	}
}

func TestDescriptorSenseByConfig(t *testing.T) {
	td := newDisk(t, cfg512n+";dsense=1")
	r := td.do(read10(0x200000, 1), nil)
	if got, want := r.Sense.Append(nil), hx("72 05 21 00 00 00 00 00"); !bytes.Equal(got, want) {
		t.Fatalf("sense\n got % x\nwant % x", got, want)
	}
}

func TestRangeChecks(t *testing.T) {
	for _, cfg := range []string{cfg512n, cfg4Kn, cfg512e, "size=1000000000", "size=1000000000;mode=store;store_size=1M"} {
		t.Run(cfg, func(t *testing.T) {
			td := newDisk(t, cfg)
			c, _ := disk.ParseConfig(cfg)
			last := c.Capacity() - 1
			lbs := int(c.LBS)
			oor := func(r scsi.Response) { t.Helper(); wantSense(t, r, scsi.IllegalRequest, scsi.LBAOutOfRange) }
			// The last block reads and writes; one past it, or two blocks
			// from the last, is LBA OUT OF RANGE, for every CDB size.
			r, _ := td.in(read10(uint32(last), 1), lbs)
			good(t, r)
			r, _ = td.in(read16(last, 1), lbs)
			good(t, r)
			r, _ = td.in(rw12(0xa8, uint32(last), 1), lbs)
			good(t, r)
			good(t, td.out(write10(uint32(last), 1), make([]byte, lbs)))
			good(t, td.out(write16(last, 1), make([]byte, lbs)))
			r, _ = td.in(read10(uint32(last), 2), 2*lbs)
			oor(r)
			r, _ = td.in(read16(last+1, 1), lbs)
			oor(r)
			oor(td.out(write10(uint32(last), 2), make([]byte, 2*lbs)))
			oor(td.out(rw12(0xaa, uint32(last+1), 1), make([]byte, lbs)))
			oor(td.out(write16(last+1, 1), make([]byte, lbs)))
			// Zero-length transfers: at the capacity is fine, past it not.
			good(t, td.do(read16(last+1, 0), nil))
			oor(td.do(read16(last+2, 0), nil))
			// LBA + length overflowing 64 bits.
			r, _ = td.in(read16(^uint64(0), 2), 2*lbs)
			oor(r)
			oor(td.out(write16(^uint64(0)-1, 4), make([]byte, 4*lbs)))
			// VERIFY, SYNCHRONIZE CACHE and WRITE SAME check the range too.
			good(t, td.do(rw16(0x8f, last, 1), nil))
			oor(td.do(rw16(0x8f, last, 2), nil))
			good(t, td.do(rw16(0x91, last, 1), nil))
			good(t, td.do(rw16(0x91, 0, 0), nil)) // 0 blocks = to the end
			oor(td.do(rw16(0x91, last+2, 0), nil))
			good(t, td.out(rw16(0x93, last, 1), make([]byte, lbs)))
			oor(td.out(rw16(0x93, last, 2), make([]byte, lbs)))
		})
	}
}

func TestRead6Write6(t *testing.T) {
	td := newDisk(t, "size=64M;mode=store")
	data := pattern(256*512, 6)
	// TRANSFER LENGTH 0 means 256 blocks.
	// The last 256 blocks of a 64 MiB (131072-block) disk.
	good(t, td.out(rw6(0x0a, 0x1ff00, 0), data[:256*512]))
	r, got := td.in(rw6(0x08, 0x1ff00, 0), 256*512)
	good(t, r)
	if !bytes.Equal(got, data) {
		t.Fatal("READ(6) of 256 blocks differs")
	}
	r, got = td.in(rw6(0x08, 0x1ff10, 1), 512)
	good(t, r)
	if !bytes.Equal(got, data[16*512:17*512]) {
		t.Fatal("READ(6) of one block differs")
	}
	r, _ = td.in(rw6(0x08, 131072, 1), 512)
	wantSense(t, r, scsi.IllegalRequest, scsi.LBAOutOfRange)
	// READ(6) addresses 21 bits: on a larger disk, LBA 1fffffh is the
	// highest it can reach.
	big := newDisk(t, cfg512n)
	r, _ = big.in(rw6(0x08, 0x1fffff, 1), 512)
	good(t, r)
}

func TestFakeRWReadReturnsZeros(t *testing.T) {
	td := newDisk(t, cfg4Kn)
	// The buffer holds garbage (TCMU reuses data pages): all of it must be
	// overwritten with zeros.
	r, got := td.in(read10(100, 4), 4*4096)
	good(t, r)
	if len(got) != 4*4096 || !bytes.Equal(got, make([]byte, 4*4096)) {
		t.Fatalf("fake_rw read: %d bytes, not all zero", len(got))
	}
	// Written data is discarded.
	good(t, td.out(write10(100, 1), bytes.Repeat([]byte{0xff}, 4096)))
	r, got = td.in(read10(100, 1), 4096)
	good(t, r)
	if !bytes.Equal(got, make([]byte, 4096)) {
		t.Fatal("fake_rw read back written data")
	}
	// Data-In shorter than the transfer: only what fits (READ_LEN tells
	// the initiator the residual). Longer: only the transfer is written,
	// the rest keeps its garbage.
	r, got = td.in(read10(0, 4), 5000)
	good(t, r)
	if len(got) != 5000 {
		t.Fatalf("short buffer: Written %d, want 5000", len(got))
	}
	p := bytes.Repeat([]byte{0xee}, 3*4096)
	buf := scsi.NewBuffer(p[:1000], p[1000:3*4096]) // two segments
	good(t, td.do(read10(0, 2), buf))
	if buf.Written() != 2*4096 || !bytes.Equal(p[:2*4096], make([]byte, 2*4096)) || p[2*4096] != 0xee {
		t.Fatalf("long buffer: Written %d", buf.Written())
	}
}

func TestStoreWrapRoundTrip(t *testing.T) {
	// 1 MiB store = 2048 blocks wrapped across a 1 GiB disk.
	td := newDisk(t, "size=1G;mode=store;store_size=1M")
	const wrap = 2048
	data := pattern(16*512, 1)
	// A write straddling the wrap boundary (blocks 2040..2055).
	good(t, td.out(write16(wrap-8, 16), data))
	r, got := td.in(read16(wrap-8, 16), 16*512)
	good(t, r)
	if !bytes.Equal(got, data) {
		t.Fatal("read-back across the wrap boundary differs")
	}
	// The store aliases: LBA 0 is the store block after 2047.
	r, got = td.in(read10(0, 8), 8*512)
	good(t, r)
	if !bytes.Equal(got, data[8*512:]) {
		t.Fatal("LBA 0 does not alias the wrapped blocks")
	}
	// ...and so does LBA 5*2048 + 0 far away in the virtual capacity.
	r, got = td.in(read16(5*wrap, 8), 8*512)
	good(t, r)
	if !bytes.Equal(got, data[8*512:]) {
		t.Fatal("LBA 5*wrap does not alias")
	}
	// A transfer larger than the whole store wraps more than once.
	big := pattern(3*wrap*512, 2)
	good(t, td.out(write16(100, 3*wrap), big))
	r, got = td.in(read16(100+wrap, wrap), wrap*512)
	good(t, r)
	if !bytes.Equal(got, big[2*wrap*512:]) {
		t.Fatal("the last pass of a multi-wrap write should win")
	}
}

func TestDiskStoreRandomAgainstModel(t *testing.T) {
	const wrap = 256 // blocks in a 128 KiB store
	td := newDisk(t, "size=8M;mode=store;store_size=128K")
	model := make([]byte, wrap*512)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 1000 {
		lba := rng.Uint64N(16384 - 64)
		n := rng.Uint64N(64) + 1
		switch rng.IntN(4) {
		case 0, 1:
			data := pattern(int(n)*512, byte(i))
			good(t, td.out(write16(lba, uint32(n)), data))
			for b := range n {
				s := (lba + b) % wrap
				copy(model[s*512:(s+1)*512], data[b*512:])
			}
		case 2:
			r, got := td.in(read16(lba, uint32(n)), int(n)*512)
			good(t, r)
			for b := range n {
				s := (lba + b) % wrap
				if !bytes.Equal(got[b*512:(b+1)*512], model[s*512:(s+1)*512]) {
					t.Fatalf("op %d: block %d (store %d) differs", i, lba+b, s)
				}
			}
		case 3:
			// VERIFY BYTCHK=1 against the model must be GOOD.
			buf := make([]byte, n*512)
			for b := range n {
				s := (lba + b) % wrap
				copy(buf[b*512:], model[s*512:(s+1)*512])
			}
			c := rw16(0x8f, lba, uint32(n))
			c[1] = 0x02
			good(t, td.out(c, buf))
		}
	}
}

// A WRITE whose Data-Out (the transport's expected length) is not the
// CDB's transfer length is refused with 0E/03, shorter or longer, and
// writes nothing; LIO's own backstores answer the same.
func TestDataOutLength(t *testing.T) {
	td := newDisk(t, "size=1M;mode=store")
	good(t, td.out(write10(0, 2), pattern(1024, 9)))
	for _, c := range []struct {
		cdb []byte
		n   int
	}{
		{write10(0, 8), 7 * 512}, {write16(0, 8), 7 * 512}, {rw6(0x0a, 0, 8), 7 * 512}, {rw12(0xaa, 0, 2), 200},
		{write10(0, 1), 0}, {write10(0, 1), 1024}, {write16(0, 1), 10000}, {write10(0, 0), 512},
		{rw10(0x2e, 0, 1), 1024}, {cawCDB(0, 1), 512}, {cawCDB(0, 1), 2048},
	} {
		wantSense(t, td.out(c.cdb, pattern(c.n, 3)), scsi.IllegalRequest, scsi.InvalidFieldInCommandIU)
	}
	r, got := td.in(read10(0, 2), 1024)
	good(t, r)
	if !bytes.Equal(got, pattern(1024, 9)) {
		t.Fatal("a refused write changed the data")
	}
	good(t, td.out(write10(0, 0), nil))
}

func TestMaxTransferLength(t *testing.T) {
	td := newDisk(t, cfg512n+";max_blks=8;opt_blks=8")
	r, _ := td.in(read10(0, 8), 8*512)
	good(t, r)
	r, _ = td.in(read10(0, 9), 9*512)
	wantField(t, r, true, 7, -1)
	wantField(t, td.out(write16(0, 9), make([]byte, 9*512)), true, 10, -1)
	r, _ = td.in(rw6(0x08, 0, 0), 256*512) // 256 blocks
	wantField(t, r, true, 4, -1)
}

func TestWriteProtect(t *testing.T) {
	td := newDisk(t, cfg512n+";wp=1;lbpu=1;lbpws=1;mode=store")
	dp := func(r scsi.Response) { t.Helper(); wantSense(t, r, scsi.DataProtect, scsi.WriteProtected) }
	dp(td.out(write10(0, 1), make([]byte, 512)))
	dp(td.out(rw6(0x0a, 0, 1), make([]byte, 512)))
	dp(td.out(rw12(0xaa, 0, 1), make([]byte, 512)))
	dp(td.out(write16(0, 1), make([]byte, 512)))
	dp(td.out(rw10(0x41, 0, 1), make([]byte, 512)))
	dp(td.out(rw16(0x93, 0, 1), make([]byte, 512)))
	list := unmapList([2]uint64{0, 8})
	dp(td.out(unmapCDB(uint16(len(list))), list))
	r, _ := td.in(read10(0, 1), 512)
	good(t, r)
	good(t, td.do(rw10(0x35, 0, 0), nil))
	if !td.d.Stats().WriteProtect {
		t.Fatal("Stats().WriteProtect false")
	}
	// Range errors come before write protection (like scsi_debug).
	wantSense(t, td.out(write10(0x200000, 1), make([]byte, 512)), scsi.IllegalRequest, scsi.LBAOutOfRange)
}

func TestUnmap(t *testing.T) {
	td := newDisk(t, "size=64M;mode=store;lbpu=1;unmap_max_desc=3;unmap_max_blocks=1000")
	data := pattern(128*512, 4)
	good(t, td.out(write10(0, 128), data))
	before := td.d.Stats().StoreAllocated
	if before != 64<<10 {
		t.Fatalf("StoreAllocated = %d after 64 KiB written", before)
	}
	check := func(lba, n int, want []byte) {
		t.Helper()
		r, got := td.in(read10(uint32(lba), uint16(n)), n*512)
		good(t, r)
		if !bytes.Equal(got, want) {
			t.Fatalf("blocks %d+%d differ", lba, n)
		}
	}
	send := func(list []byte, plen int) scsi.Response {
		return td.out(unmapCDB(uint16(plen)), list)
	}

	// Errors: nothing is unmapped by a list with a bad descriptor.
	list := unmapList([2]uint64{0, 8}, [2]uint64{0x20000, 1}) // 64 MiB = 0x20000 blocks
	wantSense(t, send(list, len(list)), scsi.IllegalRequest, scsi.LBAOutOfRange)
	check(0, 8, data[:8*512])
	// Too many descriptors: pointer at UNMAP BLOCK DESCRIPTOR DATA LENGTH.
	list = unmapList([2]uint64{0, 1}, [2]uint64{2, 1}, [2]uint64{4, 1}, [2]uint64{6, 1})
	wantField(t, send(list, len(list)), false, 2, -1)
	// More blocks than MAXIMUM UNMAP LBA COUNT in total: pointer at the
	// NUMBER OF LOGICAL BLOCKS of the descriptor that exceeds it.
	list = unmapList([2]uint64{0, 600}, [2]uint64{1000, 401})
	wantField(t, send(list, len(list)), false, 8+16+8, -1)
	check(0, 8, data[:8*512])
	// PARAMETER LIST LENGTH 1..7, or Data-Out shorter than the header.
	wantSense(t, send(make([]byte, 8), 7), scsi.IllegalRequest, scsi.ParameterListLengthError)
	wantSense(t, td.out(unmapCDB(24), make([]byte, 6)), scsi.IllegalRequest, scsi.ParameterListLengthError)
	// ANCHOR is not supported.
	c := unmapCDB(24)
	c[1] = 1
	wantField(t, td.out(c, unmapList([2]uint64{0, 1})), true, 1, 0)
	// PARAMETER LIST LENGTH 0: nothing to do.
	good(t, send(nil, 0))
	check(0, 8, data[:8*512])

	// A descriptor count larger than the list: only the descriptors the
	// PARAMETER LIST LENGTH covers are used (SBC-4 5.32.2).
	list = unmapList([2]uint64{8, 8}, [2]uint64{16, 8})
	good(t, send(list, 8+16))
	check(8, 8, make([]byte, 8*512))
	check(16, 8, data[16*512:24*512])
	// An incomplete last descriptor is ignored.
	list = unmapList([2]uint64{16, 8}, [2]uint64{24, 8})
	good(t, send(list, 8+16+15))
	check(16, 8, make([]byte, 8*512))
	check(24, 8, data[24*512:32*512])
	// Unmapping whole 64 KiB chunks frees the memory.
	list = unmapList([2]uint64{0, 128})
	good(t, send(list, len(list)))
	check(0, 128, make([]byte, 128*512))
	if a := td.d.Stats().StoreAllocated; a != 0 {
		t.Fatalf("StoreAllocated = %d after unmapping everything", a)
	}
	// Zero-length descriptors are allowed, even at the capacity.
	list = unmapList([2]uint64{0x20000, 0})
	good(t, send(list, len(list)))
}

func TestUnmapUnsupportedWithoutLBPU(t *testing.T) {
	td := newDisk(t, cfg512n+";lbpws=1")
	list := unmapList([2]uint64{0, 8})
	wantSense(t, td.out(unmapCDB(uint16(len(list))), list), scsi.IllegalRequest, scsi.InvalidCommandOperationCode)
	if td.d.CommandName(scsi.CommandID(scsi.Unmap)) != "" {
		t.Fatal("CommandName(UNMAP) without lbpu")
	}
}

func TestWriteSame(t *testing.T) {
	td := newDisk(t, "size=64M;mode=store;lbpws=1;lbpws10=1;max_ws_blks=4096")
	blk := pattern(512, 5)
	good(t, td.out(rw16(0x93, 10, 100), blk))
	r, got := td.in(read10(9, 102), 102*512)
	good(t, r)
	if !bytes.Equal(got[:512], make([]byte, 512)) || !bytes.Equal(got[101*512:], make([]byte, 512)) {
		t.Fatal("WRITE SAME wrote outside its range")
	}
	for i := 1; i <= 100; i++ {
		if !bytes.Equal(got[i*512:(i+1)*512], blk) {
			t.Fatalf("block %d not the pattern", 9+i)
		}
	}
	good(t, td.out(write10(150, 1), blk)) // allocates the second chunk
	good(t, td.out(write10(220, 1), blk)) // ... which keeps data past the range
	// UNMAP=1 with a zero block deallocates.
	unmapWS := rw10(0x41, 0, 200)
	unmapWS[1] = 0x08
	good(t, td.out(unmapWS, make([]byte, 512)))
	r, got = td.in(read10(0, 200), 200*512)
	good(t, r)
	if !bytes.Equal(got, make([]byte, 200*512)) {
		t.Fatal("WRITE SAME(10) UNMAP did not zero")
	}
	if r, got := td.in(read10(220, 1), 512); r.Status != scsi.StatusGood || !bytes.Equal(got, blk) {
		t.Fatal("WRITE SAME(10) UNMAP zeroed past its range")
	}
	if a := td.d.Stats().StoreAllocated; a != 64<<10 {
		// blocks 0..199 span chunk 0 (freed) and part of chunk 1 (kept:
		// block 220 holds data).
		t.Fatalf("StoreAllocated = %d", a)
	}
	// NDOB: no Data-Out, zeros.
	good(t, td.out(rw16(0x93, 500, 4), blk))
	ndob := rw16(0x93, 500, 4)
	ndob[1] = 0x01
	good(t, td.do(ndob, nil))
	r, got = td.in(read10(500, 4), 4*512)
	good(t, r)
	if !bytes.Equal(got, make([]byte, 4*512)) {
		t.Fatal("NDOB did not zero")
	}
	// Limits: MAXIMUM WRITE SAME LENGTH, and one block of Data-Out.
	wantField(t, td.out(rw16(0x93, 0, 4097), blk), true, 10, -1)
	wantSense(t, td.out(rw16(0x93, 0, 1), blk[:511]), scsi.IllegalRequest, scsi.InvalidFieldInCDB)
	// WRPROTECT.
	c := rw16(0x93, 0, 1)
	c[1] = 0x20
	wantField(t, td.out(c, blk), true, 1, 7)
}

func TestWriteSameAcrossWrap(t *testing.T) {
	td := newDisk(t, "size=64M;mode=store;store_size=64K") // 128-block store
	blk := pattern(512, 8)
	good(t, td.out(rw16(0x93, 120, 16), blk)) // 120..135 wraps to 0..7
	r, got := td.in(read10(0, 128), 128*512)
	good(t, r)
	for i := range 128 {
		want := make([]byte, 512)
		if i < 8 || i >= 120 {
			want = blk
		}
		if !bytes.Equal(got[i*512:(i+1)*512], want) {
			t.Fatalf("store block %d wrong", i)
		}
	}
	// A zero WRITE SAME longer than the store clears all of it.
	good(t, td.out(rw16(0x93, 1000, 1000), make([]byte, 512)))
	if a := td.d.Stats().StoreAllocated; a != 0 {
		t.Fatalf("StoreAllocated = %d", a)
	}
}

func TestVerify(t *testing.T) {
	td := newDisk(t, "size=16M;mode=store")
	data := pattern(300*512, 3) // more than one 64 KiB compare chunk
	good(t, td.out(write16(1000, 300), data))
	// BYTCHK=0: medium verification only.
	good(t, td.do(rw10(0x2f, 1000, 300), nil))
	// BYTCHK=01b: equal data.
	c := rw16(0x8f, 1000, 300)
	c[1] = 0x02
	good(t, td.out(c, data))
	// A difference at byte 0x205 of the second compare chunk: MISCOMPARE
	// with INFORMATION = its offset in the Data-Out buffer.
	bad := bytes.Clone(data)
	off := 64<<10 + 0x205
	bad[off] ^= 1
	r := td.out(c, bad)
	wantSense(t, r, scsi.Miscompare, scsi.MiscompareDuringVerify)
	if got, want := r.Sense.AppendFixed(nil), hx("f0 00 0e 00010205 0a 00000000 1d 00 00 00 0000"); !bytes.Equal(got, want) {
		t.Fatalf("miscompare sense\n got % x\nwant % x", got, want)
	}
	// Short Data-Out for BYTCHK=01b.
	wantField(t, td.out(c, data[:299*512]), true, 10, -1)
	// BYTCHK=11b: one block compared with each block of the range.
	blk := pattern(512, 4)
	good(t, td.out(rw16(0x93, 5000, 50), blk))
	c = rw12(0xaf, 5000, 50)
	c[1] = 0x06
	good(t, td.out(c, blk))
	c = rw12(0xaf, 4999, 50) // block 4999 is zeros
	c[1] = 0x06
	wantSense(t, td.out(c, blk), scsi.Miscompare, scsi.MiscompareDuringVerify)
	// fake_rw: GOOD without comparing (scsi_debug fake_rw semantics).
	fake := newDisk(t, cfg512n)
	c = rw10(0x2f, 0, 1)
	c[1] = 0x02
	good(t, fake.out(c, bytes.Repeat([]byte{1}, 512)))
}

func TestStartStopUnit(t *testing.T) {
	td := newDisk(t, cfg512n)
	notReady := func(r scsi.Response) {
		t.Helper()
		wantSense(t, r, scsi.NotReady, scsi.LogicalUnitNotReadyInitCmd)
	}
	good(t, td.do([]byte{0x1b, 0, 0, 0, 0x00, 0}, nil)) // STOP
	if !td.d.Stats().Stopped {
		t.Fatal("Stats().Stopped false")
	}
	notReady(td.do(tur(), nil))
	r, _ := td.in(read10(0, 1), 512)
	notReady(r)
	notReady(td.out(write10(0, 1), make([]byte, 512)))
	notReady(td.do(rw10(0x35, 0, 0), nil))
	// INQUIRY, READ CAPACITY, MODE SENSE still work (sd's spin-up logic
	// sends START UNIT after TUR says 04/02).
	r, _ = td.in(inquiry(false, 0, 36), 36)
	good(t, r)
	r, _ = td.in(readCapacity16(32), 32)
	good(t, r)
	// REQUEST SENSE reports the condition as data.
	r, got := td.in([]byte{0x03, 0, 0, 0, 18, 0}, 18)
	good(t, r)
	if want := hx("70 00 02 00000000 0a 00000000 04 02 00 00 0000"); !bytes.Equal(got, want) {
		t.Fatalf("REQUEST SENSE\n got % x\nwant % x", got, want)
	}
	// Power conditions are accepted without changing readiness.
	good(t, td.do([]byte{0x1b, 0, 0, 0, 0x30, 0}, nil))    // STANDBY
	good(t, td.do([]byte{0x1b, 0x01, 0, 0, 0x01, 0}, nil)) // START, IMMED
	good(t, td.do(tur(), nil))
	r, got = td.in([]byte{0x03, 0, 0, 0, 18, 0}, 18)
	good(t, r)
	if want := hx("70 00 00 00000000 0a 00000000 00 00 00 00 0000"); !bytes.Equal(got, want) {
		t.Fatalf("REQUEST SENSE\n got % x\nwant % x", got, want)
	}
	good(t, td.do([]byte{0x1e, 0, 0, 0, 0x01, 0}, nil)) // PREVENT
	good(t, td.do([]byte{0x1e, 0, 0, 0, 0x00, 0}, nil)) // ALLOW
}

func TestUnitAttentionOnce(t *testing.T) {
	c, _ := disk.ParseConfig(cfg512n)
	d, err := disk.New("ua", c, nil)
	if err != nil {
		t.Fatal(err)
	}
	td := &tdisk{t: t, d: d}
	// INQUIRY does not consume the power-on unit attention.
	r, _ := td.in(inquiry(false, 0, 36), 36)
	good(t, r)
	r, _ = td.in(read10(0, 1), 512)
	wantSense(t, r, scsi.UnitAttention, scsi.PowerOnResetOrBusDeviceReset)
	r, _ = td.in(read10(0, 1), 512)
	good(t, r)
}

func TestMisalignedCounters(t *testing.T) {
	td := newDisk(t, cfg512e) // 8 logical per physical, LBA 1 aligned
	for _, io := range []struct {
		lba uint32
		n   uint16
	}{{1, 8}, {9, 16}, {0x1ffff1, 8}} { // aligned
		r, _ := td.in(read10(io.lba, io.n), int(io.n)*512)
		good(t, r)
		good(t, td.out(write10(io.lba, io.n), make([]byte, int(io.n)*512)))
	}
	if s := td.d.Stats(); s.MisalignedReads != 0 || s.MisalignedWrites != 0 {
		t.Fatalf("aligned I/O counted as misaligned: %+v", s)
	}
	for _, io := range []struct {
		lba uint32
		n   uint16
	}{{0, 8}, {1, 4}, {2, 8}, {1, 9}} {
		r, _ := td.in(read10(io.lba, io.n), int(io.n)*512)
		good(t, r)
	}
	good(t, td.out(write10(0, 8), make([]byte, 8*512)))
	s := td.d.Stats()
	if s.MisalignedReads != 4 || s.MisalignedWrites != 1 {
		t.Fatalf("misaligned reads %d writes %d, want 4 1", s.MisalignedReads, s.MisalignedWrites)
	}
	if s.PhysicalBlockSize != 4096 || s.LogicalBlockSize != 512 || s.LowestAlignedLBA != 1 || s.Blocks != 2097152 {
		t.Fatalf("geometry %+v", s)
	}
	// 512n never counts.
	n := newDisk(t, cfg512n)
	r, _ := n.in(read10(3, 5), 5*512)
	good(t, r)
	if n.d.Stats().MisalignedReads != 0 {
		t.Fatal("512n counted a misaligned read")
	}
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

func TestCommandNames(t *testing.T) {
	td := newDisk(t, cfg512n+";lbpu=1")
	seen := map[string]bool{}
	for op := range 256 {
		name := td.d.CommandName(scsi.CommandID(op))
		r := td.do([]byte{byte(op), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, scsi.NewBuffer(make([]byte, 512)))
		unsupported := r.Status == scsi.StatusCheckCondition && r.Sense.ASC == scsi.InvalidCommandOperationCode
		if name == "" {
			if !unsupported {
				t.Errorf("opcode %#02x has no name but is supported (%+v)", op, r)
			}
			continue
		}
		if unsupported {
			t.Errorf("opcode %#02x is named %q but rejected as unsupported", op, name)
		}
		if !snakeCase.MatchString(name) || seen[name] {
			t.Errorf("opcode %#02x: name %q not snake_case or duplicated", op, name)
		}
		seen[name] = true
	}
	for op, want := range map[scsi.CommandID]string{0x28: "read_10", 0x8a: "write_16", 0x12: "inquiry", 0x9e: "read_capacity_16",
		0xa3: "report_supported_opcodes", 0x42: "unmap", 0x93: "write_same_16", 0x35: "synchronize_cache_10"} {
		if got := td.d.CommandName(op); got != want {
			t.Errorf("CommandName(%#02x) = %q, want %q", op, got, want)
		}
	}
	if len(seen) != 35 {
		t.Errorf("%d named commands, want 35", len(seen))
	}
	// Two service actions of SERVICE ACTION IN(16), two commands.
	if rc, gls := td.d.CommandID(readCapacity16(32)), td.d.CommandID(getLBAStatus(0, 24)); rc != 0x9e || gls < 256 ||
		td.d.CommandName(rc) != "read_capacity_16" || td.d.CommandName(gls) != "get_lba_status" {
		t.Errorf("SERVICE ACTION IN(16): %#x %q, %#x %q", uint16(rc), td.d.CommandName(rc), uint16(gls), td.d.CommandName(gls))
	}
}

// RSOC usage data must describe the CDBs the disk decodes: byte 0 is the
// opcode and the length matches the group code.
func TestCommandUsageData(t *testing.T) {
	td := newDisk(t, cfg512n+";lbpu=1")
	for _, ci := range td.d.Commands {
		if len(ci.Usage) == 0 || ci.Usage[0] != byte(ci.OpCode) {
			t.Errorf("%#02x: usage does not start with the opcode", ci.OpCode)
			continue
		}
		if n := scsi.CDB(ci.Usage).Len(); n != len(ci.Usage) {
			t.Errorf("%#02x: usage is %d bytes, CDB is %d", ci.OpCode, len(ci.Usage), n)
		}
		if ci.Usage[len(ci.Usage)-1] != 0x04 {
			t.Errorf("%#02x: CONTROL byte usage %#02x, want NACA only", ci.OpCode, ci.Usage[len(ci.Usage)-1])
		}
		if ci.HasSA && byte(ci.ServiceAction) != ci.Usage[1]&0x1f {
			t.Errorf("%#02x: service action %#x not in usage byte 1", ci.OpCode, ci.ServiceAction)
		}
	}
}

func TestShortCDB(t *testing.T) {
	td := newDisk(t, cfg512n)
	for _, cdb := range [][]byte{{}, {0x28}, {0x28, 0, 0, 0, 0, 0, 0, 0, 0}, {0x88, 0, 0}, {0x9e, 0x10}} {
		r := td.do(cdb, nil)
		if r.Status != scsi.StatusCheckCondition || r.Sense.Key != scsi.IllegalRequest {
			t.Errorf("% x: %+v, want ILLEGAL REQUEST", cdb, r)
		}
	}
	// A nil Data buffer is tolerated.
	r := td.d.HandleCommand(context.Background(), &scsi.Command{CDB: read10(0, 1)})
	good(t, r)
}

// Per-command outcomes, including CHECK CONDITION, are never logged above
// Debug (they are metrics).
func TestNoPerCommandLogging(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	c, _ := disk.ParseConfig(cfg512n + ";mode=store;store_size=1M")
	d, err := disk.New("quiet", c, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	if logs.Len() != 1 || logs.All()[0].Message != "vdisk configured" {
		t.Fatalf("New logged %v", logs.All())
	}
	td := &tdisk{t: t, d: d}
	for i := range 100 {
		td.in(read10(uint32(i), 1), 512)
		td.in(read10(0x200000, 1), 512)
		td.do([]byte{0xff, 0, 0, 0, 0, 0}, nil)
	}
	if logs.Len() != 1 {
		t.Fatalf("commands logged at Info or above: %v", logs.All()[1:])
	}
}

func TestNewErrors(t *testing.T) {
	c := disk.DefaultConfig()
	if _, err := disk.New("d", c, nil); err == nil {
		t.Fatal("New without a size succeeded")
	}
	c.Size = 1 << 20
	c.LBS = 3
	if _, err := disk.New("d", c, nil); err == nil {
		t.Fatal("New with lbs=3 succeeded")
	}
	c.LBS = 512
	d, err := disk.New("name with spaces", c, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A name that is not a usable serial number gives a hash-based one.
	if s := d.Identity.Serial; s != "41b11e96f3c87c85" {
		t.Fatalf("serial %q", s)
	}
}
