package scsi_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/vscsid/vscsid/scsi"
)

func TestCDBLenPerGroup(t *testing.T) {
	for _, tt := range []struct {
		op    byte
		group uint8
		n     int
	}{
		{0x00, 0, 6}, {0x12, 0, 6}, {0x1f, 0, 6},
		{0x20, 1, 10}, {0x28, 1, 10}, {0x3f, 1, 10},
		{0x40, 2, 10}, {0x5a, 2, 10}, {0x5f, 2, 10},
		{0x60, 3, 0}, {0x7e, 3, 0},
		{0x80, 4, 16}, {0x88, 4, 16}, {0x9f, 4, 16},
		{0xa0, 5, 12}, {0xa3, 5, 12}, {0xbf, 5, 12},
		{0xc0, 6, 0}, {0xdf, 6, 0},
		{0xe0, 7, 0}, {0xff, 7, 0},
	} {
		c := scsi.CDB(make([]byte, 32))
		c[0] = tt.op
		if g := c.Group(); g != tt.group {
			t.Errorf("opcode %#02x: Group() = %d, want %d", tt.op, g, tt.group)
		}
		if n := c.Len(); n != tt.n {
			t.Errorf("opcode %#02x: Len() = %d, want %d", tt.op, n, tt.n)
		}
	}
}

func TestCDBVariableLength(t *testing.T) {
	// READ(32): 0x7f, control, ..., additional length 0x18, SA 0x0009.
	c := make(scsi.CDB, 40)
	c[0], c[1], c[7], c[8], c[9] = 0x7f, 0x04, 0x18, 0x00, 0x09
	if n := c.Len(); n != 32 {
		t.Errorf("READ(32) Len() = %d, want 32", n)
	}
	if sa := c.VariableServiceAction(); sa != 0x0009 {
		t.Errorf("VariableServiceAction() = %#04x, want 0x0009", sa)
	}
	if ctl := c.Control(); ctl != 0x04 {
		t.Errorf("variable-length Control() = %#02x, want byte 1 (0x04)", ctl)
	}
	got, err := scsi.ParseCDB(c)
	if err != nil || len(got) != 32 {
		t.Fatalf("ParseCDB(READ(32)) = %d bytes, %v; want 32 bytes", len(got), err)
	}
	if scsi.CDB(c[:7]).Len() != 0 {
		t.Errorf("7-byte 0x7f CDB: Len() should be 0 (unknown)")
	}
	if (scsi.CDB{0x28, 0, 0, 0, 0, 0, 0, 0, 0x12, 0}).VariableServiceAction() != 0 {
		t.Errorf("VariableServiceAction of READ(10) should be 0")
	}
}

func TestParseCDB(t *testing.T) {
	varlen := func(add byte, total int) []byte {
		b := make([]byte, total)
		b[0], b[7] = 0x7f, add
		return b
	}
	for _, tt := range []struct {
		name    string
		in      []byte
		wantLen int // -1: error
	}{
		{"empty", nil, -1},
		{"inquiry", []byte{0x12, 0, 0, 0, 36, 0}, 6},
		{"inquiry trailing bytes trimmed", []byte{0x12, 0, 0, 0, 36, 0, 0xaa, 0xbb}, 6},
		{"inquiry short", []byte{0x12, 0, 0, 0, 36}, -1},
		{"read10", make10(0x28), 10},
		{"read10 short", make10(0x28)[:9], -1},
		{"write16", append([]byte{0x8a}, make([]byte, 15)...), 16},
		{"write16 short", append([]byte{0x8a}, make([]byte, 14)...), -1},
		{"report luns", append([]byte{0xa0}, make([]byte, 11)...), 12},
		{"report luns short", []byte{0xa0, 0, 0}, -1},
		{"vendor group 6 kept as is", []byte{0xc0, 1, 2}, 3},
		{"vendor group 7 kept as is", []byte{0xff}, 1},
		{"reserved group 3 kept as is", []byte{0x60, 1, 2, 3}, 4},
		{"varlen too short for header", []byte{0x7f, 0, 0, 0, 0, 0, 0}, -1},
		{"varlen add 0", varlen(0, 8), 8},
		{"varlen add 24", varlen(24, 32), 32},
		{"varlen add 24 trimmed", varlen(24, 40), 32},
		{"varlen add 24 truncated", varlen(24, 31), -1},
		{"varlen add not multiple of 4", varlen(22, 32), -1},
		{"varlen add 252 max", varlen(252, 260), 260},
		{"varlen add 255 too long", varlen(255, 263), -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := scsi.ParseCDB(tt.in)
			if tt.wantLen < 0 {
				if err == nil {
					t.Fatalf("ParseCDB(% x) = % x, want an error", tt.in, []byte(c))
				}
				if c != nil {
					t.Errorf("ParseCDB error with non-nil CDB")
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseCDB(% x): %v", tt.in, err)
			}
			if len(c) != tt.wantLen || !bytes.Equal(c, tt.in[:tt.wantLen]) {
				t.Errorf("ParseCDB(% x) = % x, want the first %d bytes", tt.in, []byte(c), tt.wantLen)
			}
		})
	}
}

func make10(op byte) []byte {
	b := make([]byte, 10)
	b[0] = op
	return b
}

func TestCDBFieldHelpers(t *testing.T) {
	c := scsi.CDB{0x88, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f}
	if v := c.Uint16(2); v != 0x0203 {
		t.Errorf("Uint16(2) = %#x", v)
	}
	if v := c.Uint24(2); v != 0x020304 {
		t.Errorf("Uint24(2) = %#x", v)
	}
	if v := c.Uint32(2); v != 0x02030405 {
		t.Errorf("Uint32(2) = %#x", v)
	}
	if v := c.Uint64(2); v != 0x0203040506070809 {
		t.Errorf("Uint64(2) = %#x", v)
	}
	if v := c.Byte(15); v != 0x0f {
		t.Errorf("Byte(15) = %#x", v)
	}
	if v := c.Control(); v != 0x0f {
		t.Errorf("Control() = %#x", v)
	}
	if v := c.ServiceAction(); v != 0x01 {
		t.Errorf("ServiceAction() = %#x", v)
	}
	// Out of range: zero, never a panic.
	for _, off := range []int{-1, 16, 1 << 30, -1 << 62, math.MaxInt, math.MaxInt - 3} {
		if c.Uint16(off) != 0 || c.Uint24(off) != 0 || c.Uint32(off) != 0 || c.Uint64(off) != 0 || c.Byte(off) != 0 {
			t.Errorf("reads at offset %d not 0", off)
		}
	}
	if c.Uint16(15) != 0 || c.Uint24(14) != 0 || c.Uint32(13) != 0 || c.Uint64(9) != 0 || c.Byte(16) != 0 || c.Byte(-1) != 0 {
		t.Errorf("reads past the end must return 0")
	}
	var empty scsi.CDB
	if empty.OpCode() != 0 || empty.ServiceAction() != 0 || empty.Control() != 0 || empty.Len() != 6 {
		t.Errorf("empty CDB: opcode %v sa %v control %v len %d", empty.OpCode(), empty.ServiceAction(), empty.Control(), empty.Len())
	}
	// A CDB shorter than its group length has no CONTROL byte.
	if (scsi.CDB{0x28, 0, 0}).Control() != 0 {
		t.Errorf("Control of a truncated CDB should be 0")
	}
}

// FuzzParseCDB: any bytes give an error or a CDB whose length matches its
// group code, a prefix of the input; never a panic.
func FuzzParseCDB(f *testing.F) {
	f.Add([]byte{0x12, 0x00, 0x00, 0x00, 0x24, 0x00})
	f.Add([]byte{0xa3, 0x0c, 0x01, 0x12, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00})
	f.Add([]byte{0x7f, 0x00, 0, 0, 0, 0, 0, 0x18, 0x00, 0x09})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := scsi.ParseCDB(b)
		if err != nil {
			if c != nil {
				t.Fatalf("error %v with a CDB", err)
			}
			return
		}
		if len(c) == 0 || len(c) > len(b) || !bytes.Equal(c, b[:len(c)]) {
			t.Fatalf("ParseCDB(% x) = % x: not a non-empty prefix", b, []byte(c))
		}
		if n := c.Len(); n != 0 && n != len(c) {
			t.Fatalf("ParseCDB(% x) = %d bytes, Len() says %d", b, len(c), n)
		}
		if c.OpCode() == scsi.VariableLength && (len(c) < 8 || len(c) > scsi.MaxCDBLen || len(c)%4 != 0) {
			t.Fatalf("variable-length CDB of %d bytes accepted", len(c))
		}
		_ = c.Control()
		_ = c.ServiceAction()
		_ = c.VariableServiceAction()
		_ = c.OpCode().String()
	})
}
