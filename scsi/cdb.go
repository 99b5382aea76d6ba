package scsi

import (
	"encoding/binary"
	"errors"
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

// ServiceAction returns the SERVICE ACTION field of byte 1 (bits 4..0), as
// MAINTENANCE IN/OUT, SERVICE ACTION IN/OUT(16), PERSISTENT RESERVE IN/OUT
// and SSC READ POSITION carry it, or 0 for a CDB shorter than 2 bytes. It
// does not know which opcodes have a service action: the caller does. For a
// variable-length CDB (0x7f) use VariableServiceAction.
func (c CDB) ServiceAction() uint8 {
	if len(c) < 2 {
		return 0
	}
	return c[1] & 0x1f
}

// VariableServiceAction returns the 16-bit SERVICE ACTION of a
// variable-length CDB (opcode 0x7f, bytes 8..9; SPC-5 4.2.4), or 0 when c
// is not one or is too short.
func (c CDB) VariableServiceAction() uint16 {
	if c.OpCode() != VariableLength {
		return 0
	}
	return c.Uint16(8)
}

// Len returns the CDB length implied by the operation code (SPC-5 4.2.5.1,
// table 4): 6 bytes for group 0, 10 for groups 1 and 2, 16 for group 4, 12
// for group 5, and 8 + ADDITIONAL CDB LENGTH (byte 7) for a variable-length
// CDB (0x7f; 0 when fewer than 8 bytes are present). It returns 0 when the
// length cannot be known: reserved group 3 opcodes other than 0x7f, and the
// vendor-specific groups 6 and 7.
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
		if c.OpCode() == VariableLength && len(c) >= 8 {
			return 8 + int(c[7])
		}
	}
	return 0
}

// Control returns the CONTROL byte (the last byte of the CDB), 0 when the
// length is unknown or c is shorter than it. In a variable-length CDB the
// CONTROL byte is byte 1 (SPC-5 4.2.4).
func (c CDB) Control() uint8 {
	if c.OpCode() == VariableLength {
		return c.Byte(1)
	}
	n := c.Len()
	if n == 0 || n > len(c) {
		return 0
	}
	return c[n-1]
}

// MaxCDBLen is the longest CDB SAM-5 allows: a variable-length CDB with
// ADDITIONAL CDB LENGTH 252.
const MaxCDBLen = 260

// ParseCDB validates that b holds a complete CDB for its operation code and
// returns it trimmed to that length (sharing b's memory). Errors: an empty
// b, fewer bytes than the group code implies, a variable-length CDB (0x7f)
// shorter than 8 bytes, with an ADDITIONAL CDB LENGTH that is not a multiple
// of 4 or exceeds 252 (SPC-5 4.2.4), or that is truncated. For the reserved
// group 3 (other than 0x7f) and the vendor-specific groups 6 and 7, whose
// length is unknown, b is returned as is; the opcode will be rejected as
// unsupported by the handler. ParseCDB never panics.
func ParseCDB(b []byte) (CDB, error) {
	if len(b) == 0 {
		return nil, errors.New("empty cdb")
	}
	c := CDB(b)
	if c.OpCode() == VariableLength {
		if len(b) < 8 {
			return nil, fmt.Errorf("variable-length cdb: %d bytes, need at least 8", len(b))
		}
		if add := int(b[7]); add%4 != 0 || 8+add > MaxCDBLen {
			return nil, fmt.Errorf("variable-length cdb: additional cdb length %d is not a multiple of 4 up to 252", add)
		}
	}
	n := c.Len()
	if n == 0 {
		return c, nil
	}
	if len(b) < n {
		return nil, fmt.Errorf("cdb opcode %#02x: %d bytes, group %d needs %d", b[0], len(b), c.Group(), n)
	}
	return c[:n], nil
}

// Uint16 reads a big-endian uint16 at off, 0 if out of range.
func (c CDB) Uint16(off int) uint16 {
	if off < 0 || off > len(c)-2 { // no overflow for huge off
		return 0
	}
	return binary.BigEndian.Uint16(c[off:])
}

// Uint24 reads a big-endian 24-bit value at off, 0 if out of range.
func (c CDB) Uint24(off int) uint32 {
	if off < 0 || off > len(c)-3 { // no overflow for huge off
		return 0
	}
	return uint32(c[off])<<16 | uint32(c[off+1])<<8 | uint32(c[off+2])
}

// Uint32 reads a big-endian uint32 at off, 0 if out of range.
func (c CDB) Uint32(off int) uint32 {
	if off < 0 || off > len(c)-4 { // no overflow for huge off
		return 0
	}
	return binary.BigEndian.Uint32(c[off:])
}

// Uint64 reads a big-endian uint64 at off, 0 if out of range.
func (c CDB) Uint64(off int) uint64 {
	if off < 0 || off > len(c)-8 { // no overflow for huge off
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

// Extent is what a command's CDB addresses on the medium, as the command
// set that serves it decodes it. Handlers report it for the commands that
// move or check data (fault injection filters on it); the zero value
// addresses nothing.
type Extent struct {
	// LBA and Blocks are the logical blocks of a direct-access (SBC)
	// command; ToEnd means from LBA to the end of the medium (WRITE
	// SAME with NUMBER OF LOGICAL BLOCKS 0).
	LBA    uint64
	Blocks uint64
	ToEnd  bool
	// Count is the count field of a sequential-access (SSC) command: the
	// TRANSFER LENGTH of READ, WRITE or VERIFY (blocks when Fixed, else
	// bytes), the filemark count of WRITE FILEMARKS, or the signed count
	// of SPACE.
	Count int64
	Fixed bool
	// LengthAt and LengthSize locate the transfer length field in the
	// CDB (big-endian). Partial says the command may transfer a prefix
	// of its blocks, so that a shorter length in that field asks for the
	// blocks before a failing one (SBC READ and WRITE).
	LengthAt, LengthSize uint8
	Partial              bool
	// Elements are the element addresses a medium changer (SMC) command
	// names, NElements of them, in CDB order: MOVE MEDIUM's transport,
	// source and destination; EXCHANGE MEDIUM's transport, source, first
	// and second destination; POSITION TO ELEMENT's transport and
	// destination; READ ELEMENT STATUS's and INITIALIZE ELEMENT STATUS
	// WITH RANGE's starting address (the count is Count).
	Elements  [4]uint16
	NElements uint8
	// Locate marks a tape LOCATE's destination, which is not a count:
	// DestType (SSC-5: 0 logical object, 1 logical file, 3 end of data),
	// the logical identifier Object and, when HasPartition (CP=1), the
	// Partition.
	Locate       bool
	DestType     uint8
	Object       uint64
	Partition    uint8
	HasPartition bool
}

// WithLength writes cdb into dst with the transfer length field of e set
// to n, and returns it: the CDB of the first n blocks of a Partial
// command. n must fit the field; dst must be at least as long as cdb.
func (e *Extent) WithLength(dst []byte, cdb CDB, n uint64) CDB {
	out := dst[:copy(dst, cdb)]
	for i := int(e.LengthSize) - 1; i >= 0; i-- {
		if at := int(e.LengthAt) + i; at < len(out) {
			out[at] = byte(n)
		}
		n >>= 8
	}
	return CDB(out)
}
