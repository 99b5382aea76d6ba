package targettest

import "encoding/binary"

// CDB builders for the READ/WRITE/VERIFY family that tests of the
// handlers send through the fake kernel or straight to a handler.

// RW10 builds a 10-byte CDB: opcode op, LBA lba, transfer length n.
func RW10(op byte, lba uint32, n uint16) []byte {
	c := make([]byte, 10)
	c[0] = op
	binary.BigEndian.PutUint32(c[2:], lba)
	binary.BigEndian.PutUint16(c[7:], n)
	return c
}

// RW12 builds a 12-byte CDB.
func RW12(op byte, lba, n uint32) []byte {
	c := make([]byte, 12)
	c[0] = op
	binary.BigEndian.PutUint32(c[2:], lba)
	binary.BigEndian.PutUint32(c[6:], n)
	return c
}

// RW16 builds a 16-byte CDB.
func RW16(op byte, lba uint64, n uint32) []byte {
	c := make([]byte, 16)
	c[0] = op
	binary.BigEndian.PutUint64(c[2:], lba)
	binary.BigEndian.PutUint32(c[10:], n)
	return c
}
