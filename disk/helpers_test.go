package disk_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/targettest"
)

// tdisk wraps a Disk under test.
type tdisk struct {
	t *testing.T
	d *disk.Disk
}

// newDisk builds a disk from a cfgstring and consumes the power-on unit
// attention, checking that it is reported exactly once.
// The CDB builders shared with the other handler tests.
var (
	rw10 = targettest.RW10
	rw12 = targettest.RW12
	rw16 = targettest.RW16
)

func newDisk(t *testing.T, cfg string) *tdisk {
	t.Helper()
	c, err := disk.ParseConfig(cfg)
	if err != nil {
		t.Fatalf("ParseConfig(%q): %v", cfg, err)
	}
	d, err := disk.New("disk0", c, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	td := &tdisk{t: t, d: d}
	r := td.do(tur(), nil)
	if r.Status != scsi.StatusCheckCondition || r.Sense.Key != scsi.UnitAttention || r.Sense.ASC != scsi.PowerOnResetOrBusDeviceReset {
		t.Fatalf("first TEST UNIT READY = %+v, want UNIT ATTENTION 29/00", r)
	}
	good(t, td.do(tur(), nil))
	return td
}

func (td *tdisk) do(cdb []byte, buf *scsi.Buffer) scsi.Response {
	td.t.Helper()
	if buf == nil {
		buf = scsi.NewBuffer()
	}
	r := td.d.HandleCommand(context.Background(), &scsi.Command{CDB: cdb, Data: buf})
	if buf.Written() > buf.Len() || buf.Consumed() > buf.Len() {
		td.t.Fatalf("% x: Written %d / Consumed %d > Len %d", cdb, buf.Written(), buf.Consumed(), buf.Len())
	}
	if r.Status == scsi.StatusGood && r.Sense != (scsi.Sense{}) {
		td.t.Fatalf("% x: GOOD with sense %+v", cdb, r.Sense)
	}
	return r
}

// in runs a Data-In command with an n-byte buffer full of garbage (as the
// TCMU data area is between commands) and returns the bytes written.
func (td *tdisk) in(cdb []byte, n int) (scsi.Response, []byte) {
	td.t.Helper()
	p := bytes.Repeat([]byte{0xee}, n)
	buf := scsi.NewBuffer(p)
	r := td.do(cdb, buf)
	return r, p[:buf.Written()]
}

// out runs a Data-Out command.
func (td *tdisk) out(cdb []byte, data []byte) scsi.Response {
	td.t.Helper()
	return td.do(cdb, scsi.NewBuffer(data))
}

// golden runs a Data-In command that must succeed and compares its data.
func (td *tdisk) golden(cdb []byte, n int, want string) {
	td.t.Helper()
	r, got := td.in(cdb, n)
	good(td.t, r)
	if w := hx(want); !bytes.Equal(got, w) {
		td.t.Fatalf("% x:\n got % x\nwant % x", cdb, got, w)
	}
}

// hx parses hex with optional spaces; "*N" after a byte repeats it N times
// in total ("00*20" is twenty zero bytes).
func hx(s string) []byte {
	var out []byte
	for _, f := range strings.Fields(s) {
		rep := 1
		if i := strings.IndexByte(f, '*'); i >= 0 {
			n := 0
			for _, c := range f[i+1:] {
				n = n*10 + int(c-'0')
			}
			rep, f = n, f[:i]
		}
		b, err := hex.DecodeString(f)
		if err != nil {
			panic(err)
		}
		for range rep {
			out = append(out, b...)
		}
	}
	return out
}

func good(t *testing.T, r scsi.Response) {
	t.Helper()
	if r.Status != scsi.StatusGood {
		t.Fatalf("status %v, sense %v %v (pointer %+v), want GOOD", r.Status, r.Sense.Key, r.Sense.ASC, r.Sense.Pointer)
	}
}

// wantSense checks a CHECK CONDITION's key and ASC.
func wantSense(t *testing.T, r scsi.Response, key scsi.SenseKey, asc scsi.ASC) {
	t.Helper()
	if r.Status != scsi.StatusCheckCondition || r.Sense.Key != key || r.Sense.ASC != asc {
		t.Fatalf("got %v %v %v, want CHECK CONDITION %v %v", r.Status, r.Sense.Key, r.Sense.ASC, key, asc)
	}
}

// wantField checks ILLEGAL REQUEST / INVALID FIELD IN CDB (or PARAMETER
// LIST when cdb is false) pointing at field (and bit, if >= 0).
func wantField(t *testing.T, r scsi.Response, cdb bool, field, bit int) {
	t.Helper()
	asc := scsi.InvalidFieldInCDB
	if !cdb {
		asc = scsi.InvalidFieldInParameterList
	}
	wantSense(t, r, scsi.IllegalRequest, asc)
	p := r.Sense.Pointer
	want := scsi.FieldPointer{Valid: true, CDB: cdb, Field: uint16(field)}
	if bit >= 0 {
		want.BitValid, want.Bit = true, uint8(bit)
	}
	if p != want {
		t.Fatalf("field pointer %+v, want %+v", p, want)
	}
}

// CDB builders.

func tur() []byte { return []byte{0x00, 0, 0, 0, 0, 0} }

func rw6(op byte, lba uint32, n uint8) []byte {
	return []byte{op, byte(lba>>16) & 0x1f, byte(lba >> 8), byte(lba), n, 0}
}

func read10(lba uint32, n uint16) []byte  { return rw10(0x28, lba, n) }
func write10(lba uint32, n uint16) []byte { return rw10(0x2a, lba, n) }
func read16(lba uint64, n uint32) []byte  { return rw16(0x88, lba, n) }
func write16(lba uint64, n uint32) []byte { return rw16(0x8a, lba, n) }

func inquiry(evpd bool, page byte, alloc uint16) []byte {
	c := []byte{0x12, 0, page, byte(alloc >> 8), byte(alloc), 0}
	if evpd {
		c[1] = 1
	}
	return c
}

func readCapacity10() []byte { return []byte{0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0} }

func readCapacity16(alloc uint32) []byte {
	c := make([]byte, 16)
	c[0], c[1] = 0x9e, 0x10
	binary.BigEndian.PutUint32(c[10:], alloc)
	return c
}

func unmapCDB(plen uint16) []byte {
	c := []byte{0x42, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint16(c[7:], plen)
	return c
}

// unmapList builds an UNMAP parameter list from (lba, count) pairs.
func unmapList(descs ...[2]uint64) []byte {
	p := make([]byte, 8+16*len(descs))
	binary.BigEndian.PutUint16(p[0:], uint16(len(p)-2))
	binary.BigEndian.PutUint16(p[2:], uint16(16*len(descs)))
	for i, d := range descs {
		binary.BigEndian.PutUint64(p[8+16*i:], d[0])
		binary.BigEndian.PutUint32(p[8+16*i+8:], uint32(d[1]))
	}
	return p
}

// pattern returns n bytes of a recognisable pattern seeded by seed.
func pattern(n int, seed byte) []byte {
	p := make([]byte, n)
	x := uint32(seed) + 1
	for i := range p {
		x = x*1664525 + 1013904223
		p[i] = byte(x >> 24)
	}
	return p
}

// cawCDB is COMPARE AND WRITE of n blocks at lba.
func cawCDB(lba uint64, n uint8) []byte {
	c := make([]byte, 16)
	c[0] = 0x89
	binary.BigEndian.PutUint64(c[2:], lba)
	c[13] = n
	return c
}

// getLBAStatus is GET LBA STATUS(16) from lba with allocation length alloc.
func getLBAStatus(lba uint64, alloc uint32) []byte {
	c := make([]byte, 16)
	c[0], c[1] = 0x9e, 0x12
	binary.BigEndian.PutUint64(c[2:], lba)
	binary.BigEndian.PutUint32(c[10:], alloc)
	return c
}
