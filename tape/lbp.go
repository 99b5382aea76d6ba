package tape

import (
	"encoding/binary"
	"hash/crc32"
)

// Logical block protection (SSC-5 4.2.24, the control data protection mode
// page 0Ah/F0h): with a method selected and LBP_W set, every logical block
// of a WRITE carries 4 bytes of protection information after its data,
// which the drive checks before it writes the block; with LBP_R set, every
// block a READ returns carries them. The TRANSFER LENGTH counts them (LTFS
// writes and reads count+4). The drive computes the information from the
// data on the medium, as a real drive keeps it with every block, so blocks
// written without protection read back protected too.

// LBP METHOD values.
const (
	lbpNone   = 0x00
	lbpRSCRC  = 0x01 // Reed-Solomon CRC (ECMA-319), big-endian
	lbpCRC32C = 0x02 // CRC32C (Castagnoli), little-endian
	lbpLen    = 4    // LBP INFORMATION LENGTH of both methods
)

// LBP methods a personality supports, as a mask of 1<<method.
const (
	lbpMaskRS     = 1 << lbpRSCRC
	lbpMaskCRC32C = 1 << lbpCRC32C
)

// lbpState is the control data protection page as MODE SELECT left it.
type lbpState struct {
	method uint8
	write  bool // LBP_W
	read   bool // LBP_R
	rbdp   bool // RBDP (recover buffered data: no buffered data here)
}

// onWrite and onRead say whether WRITE and READ transfers carry
// protection information.
func (l lbpState) onWrite() bool { return l.method != lbpNone && l.write }
func (l lbpState) onRead() bool  { return l.method != lbpNone && l.read }

// extra is the protection information bytes per block of a transfer.
func (l lbpState) extra(write bool) int {
	if (write && l.onWrite()) || (!write && l.onRead()) {
		return lbpLen
	}
	return 0
}

// rsTable is the Reed-Solomon CRC of ECMA-319 as a byte-at-a-time table:
// the remainder of the data, as a polynomial over GF(2^8) (field
// polynomial x^8+x^4+x^3+x^2+1), divided by the generator
// (x+a^126)(x+a^127)(x+a^128)(x+a^129) = x^4 + 38h x^3 + CFh x^2 + 38h x + 01h.
// rsTable[v] is v times the generator's low four coefficients, packed
// high degree first.
var rsTable = func() (t [256]uint32) {
	gen := [4]uint8{0x38, 0xcf, 0x38, 0x01}
	for v := range 256 {
		var e uint32
		for _, g := range gen {
			e = e<<8 | uint32(gfMul(uint8(v), g))
		}
		t[v] = e
	}
	return t
}()

// gfMul multiplies in GF(2^8) modulo x^8+x^4+x^3+x^2+1 (11Dh).
func gfMul(a, b uint8) uint8 {
	var p uint8
	for ; b != 0; b >>= 1 {
		if b&1 != 0 {
			p ^= a
		}
		carry := a & 0x80
		a <<= 1
		if carry != 0 {
			a ^= 0x1d
		}
	}
	return p
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// lbpSum accumulates one block's protection information.
type lbpSum struct {
	method uint8
	v      uint32
}

func newLBPSum(method uint8) lbpSum {
	return lbpSum{method: method}
}

func (s *lbpSum) update(p []byte) {
	switch s.method {
	case lbpRSCRC:
		v := s.v
		for _, c := range p {
			v = v<<8 ^ rsTable[c^byte(v>>24)]
		}
		s.v = v
	case lbpCRC32C:
		s.v = crc32.Update(s.v, castagnoli, p)
	}
}

// put stores the protection information in b[:4] as the method orders it.
func (s *lbpSum) put(b []byte) {
	if s.method == lbpCRC32C {
		binary.LittleEndian.PutUint32(b, s.v)
		return
	}
	binary.BigEndian.PutUint32(b, s.v)
}
