package tape

import (
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// rsRemainder is the ECMA-319 Reed-Solomon CRC computed the slow way, by
// long division of data(x)*x^4 by the generator over GF(2^8), as an
// independent check of the table-driven lbpSum.
func rsRemainder(data []byte) uint32 {
	gen := [5]uint8{0x01, 0x38, 0xcf, 0x38, 0x01} // x^4 first
	r := make([]uint8, len(data)+4)
	copy(r, data)
	for i := range data {
		c := r[i]
		if c == 0 {
			continue
		}
		for j, g := range gen {
			r[i+j] ^= gfMul(c, g)
		}
	}
	return binary.BigEndian.Uint32(r[len(data):])
}

func TestLBPChecksums(t *testing.T) {
	// The generator's roots are a^126..a^129 (a = 02h).
	pow := func(n int) uint8 {
		v := uint8(1)
		for range n {
			v = gfMul(v, 2)
		}
		return v
	}
	for k := 126; k <= 129; k++ {
		x, acc := pow(k), uint8(0)
		for _, g := range []uint8{0x01, 0x38, 0xcf, 0x38, 0x01} {
			acc = gfMul(acc, x) ^ g
		}
		if acc != 0 {
			t.Fatalf("a^%d is not a root of the generator", k)
		}
	}
	// Table entries LTFS's encoder uses too.
	for v, want := range map[int]uint32{0x01: 0x38cf3801, 0x02: 0x70837002, 0x80: 0x51475180, 0xff: 0x763f76ff} {
		if rsTable[v] != want {
			t.Errorf("rsTable[%#x] = %#08x, want %#08x", v, rsTable[v], want)
		}
	}
	for _, data := range [][]byte{[]byte("123456789"), block(3, 65536), {0}, {0xff, 0, 0x80}} {
		s := newLBPSum(lbpRSCRC)
		s.update(data[:len(data)/2])
		s.update(data[len(data)/2:])
		if want := rsRemainder(data); s.v != want {
			t.Errorf("RS-CRC of %d bytes = %#08x, long division %#08x", len(data), s.v, want)
		}
		c := newLBPSum(lbpCRC32C)
		c.update(data)
		if want := crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)); c.v != want {
			t.Errorf("CRC32C = %#08x, want %#08x", c.v, want)
		}
	}
	c := newLBPSum(lbpCRC32C)
	c.update([]byte("123456789"))
	var b [4]byte
	c.put(b[:])
	wantBytes(t, "CRC32C check value, little-endian", b[:], hexBytes("83 92 06 e3"))
}

// protect returns data followed by its protection information.
func protect(method uint8, data []byte) []byte {
	s := newLBPSum(method)
	s.update(data)
	out := append([]byte(nil), data...)
	out = append(out, 0, 0, 0, 0)
	s.put(out[len(data):])
	return out
}

// TestLogicalBlockProtection: with a method and LBP_W, WRITE's transfer is
// each block and its protection information, checked before the block is
// written (a bad one is HARDWARE ERROR 10/01 and writes nothing); with
// LBP_R, READ returns each block with its protection information, also for
// blocks written unprotected.
func TestLogicalBlockProtection(t *testing.T) {
	for _, tt := range []struct {
		pers   string
		method uint8
	}{{"lto6", lbpRSCRC}, {"lto8", lbpCRC32C}, {"lto8", lbpRSCRC}} {
		h := newHarness(t, "personality="+tt.pers)
		h.writeBlocks(300) // block 0, unprotected
		page := h.ok(cdb(0x5a, 0, 0x0a, 0xf0, 0, 0, 0, 0, 48, 0), nil, 48)
		page[0], page[1] = 0, 0
		page[20], page[21], page[22] = tt.method, 4, 0xc0
		h.ok(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, 48, 0), page, 0)

		b1 := block(1, 1000)
		h.ok(write6(false, 1004), protect(tt.method, b1), 0)
		bad := protect(tt.method, block(2, 500))
		bad[100] ^= 1
		s, _ := h.fail(write6(false, 504), bad, 0)
		if want := "f00004000001f80a00000000100100000000"; s != want {
			t.Fatalf("%s method %d bad CRC: sense %s, want %s", tt.pers, tt.method, s, want)
		}
		h.wantPos(0, 2, 0)
		// Fixed blocks: each one with its own information.
		h.ok(cdb(0x15, 0x10, 0, 0, 12, 0), append(hexBytes("00 00 00 08 00 00 00 00 00 00 01 00"), nil...), 0) // block size 256
		h.ok(write6(true, 2), append(protect(tt.method, block(3, 256)), protect(tt.method, block(4, 256))...), 0)
		h.ok(cdb(0x15, 0x10, 0, 0, 12, 0), hexBytes("00 00 00 08 00 00 00 00 00 00 00 00"), 0) // variable

		h.ok(rewindCDB(), nil, 0)
		in := h.ok(read6(false, false, 304), nil, 304)
		wantBytes(t, "unprotected block read protected", in, protect(tt.method, block(0, 300)))
		in = h.ok(read6(false, false, 1004), nil, 1004)
		wantBytes(t, "protected block", in, protect(tt.method, b1))
		// A longer request: ILI with the residue of block and information.
		h.ok(cdb(0x15, 0x10, 0, 0, 12, 0), hexBytes("00 00 00 08 00 00 00 00 00 00 01 00"), 0)
		in = h.ok(read6(true, false, 2), nil, 520)
		wantBytes(t, "fixed blocks", in, append(protect(tt.method, block(3, 256)), protect(tt.method, block(4, 256))...))
		h.ok(cdb(0x15, 0x10, 0, 0, 12, 0), hexBytes("00 00 00 08 00 00 00 00 00 00 00 00"), 0)
		h.ok(rewindCDB(), nil, 0)
		s, in = h.fail(read6(false, false, 1000), nil, 1000)
		if want := "f00020000002b80a00000000000000000000"; s != want { // ILI, 1000-304 = 696 left
			t.Fatalf("long read: sense %s, want %s", s, want)
		}
		wantBytes(t, "long read", in, protect(tt.method, block(0, 300)))
		// LBP_R off: the block alone.
		page[22] = 0x80
		h.ok(cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, 48, 0), page, 0)
		in = h.ok(read6(false, false, 1000), nil, 1000)
		wantBytes(t, "LBP_R off", in, b1)
	}
}
