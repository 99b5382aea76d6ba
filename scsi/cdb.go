package scsi

import (
	"encoding/binary"
	"fmt"
)

// CDB is a command descriptor block as sent by the initiator.
type CDB []byte

// OpCode is the first byte of the CDB (0 for an empty CDB).
func (c CDB) OpCode() OpCode {
	if len(c) == 0 {
		return 0
	}
	return OpCode(c[0])
}

// Group is the group code: bits 7..5 of the operation code (SPC-5 4.2.5.1).
func (c CDB) Group() uint8 { return uint8(c.OpCode()) >> 5 }

// ServiceAction is the 5-bit service action in byte 1 for the opcodes that
// carry one (MAINTENANCE IN/OUT, SERVICE ACTION IN(16)), else 0.
func (c CDB) ServiceAction() uint8 {
	if len(c) < 2 {
		return 0
	}
	return c[1] & 0x1f
}

// Len returns the CDB length implied by the group code, or 0 when the group
// is reserved or vendor specific and the length cannot be known (groups 3, 6,
// 7; variable-length CDBs of opcode 0x7f return 8+additional length).
func (c CDB) Len() int {
	switch c.Group() {
	case 0:
		return 6
	case 1, 2:
		return 10
	case 4:
		return 16
	case 5:
		return 12
	case 3:
		if c.OpCode() == 0x7f && len(c) >= 8 {
			return 8 + int(c[7])
		}
	}
	return 0
}

// Control returns the CONTROL byte (last byte of the CDB).
func (c CDB) Control() uint8 {
	n := c.Len()
	if n == 0 || n > len(c) {
		return 0
	}
	return c[n-1]
}

// ParseCDB validates that b holds a complete CDB for its group code and
// returns it trimmed to that length. It never panics.
func ParseCDB(b []byte) (CDB, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("empty cdb")
	}
	c := CDB(b)
	n := c.Len()
	if n == 0 {
		// Unknown length (vendor groups 6/7, reserved group 3): keep what we
		// have; the opcode will be rejected as unsupported.
		return c, nil
	}
	if len(b) < n {
		return nil, fmt.Errorf("cdb opcode %#02x: %d bytes, group %d needs %d", b[0], len(b), c.Group(), n)
	}
	return c[:n], nil
}

// Uint16 reads a big-endian uint16 at off, 0 if out of range.
func (c CDB) Uint16(off int) uint16 {
	if off < 0 || off+2 > len(c) {
		return 0
	}
	return binary.BigEndian.Uint16(c[off:])
}

// Uint24 reads a big-endian 24-bit value at off, 0 if out of range.
func (c CDB) Uint24(off int) uint32 {
	if off < 0 || off+3 > len(c) {
		return 0
	}
	return uint32(c[off])<<16 | uint32(c[off+1])<<8 | uint32(c[off+2])
}

// Uint32 reads a big-endian uint32 at off, 0 if out of range.
func (c CDB) Uint32(off int) uint32 {
	if off < 0 || off+4 > len(c) {
		return 0
	}
	return binary.BigEndian.Uint32(c[off:])
}

// Uint64 reads a big-endian uint64 at off, 0 if out of range.
func (c CDB) Uint64(off int) uint64 {
	if off < 0 || off+8 > len(c) {
		return 0
	}
	return binary.BigEndian.Uint64(c[off:])
}

// Byte returns c[off], 0 if out of range.
func (c CDB) Byte(off int) uint8 {
	if off < 0 || off >= len(c) {
		return 0
	}
	return c[off]
}
