package changer

import (
	"context"
	"slices"
	"testing"

	"github.com/vscsid/vscsid/scsi"
)

// FuzzSMC sends an arbitrary CDB twice with a Data-In buffer of inLen
// bytes (or Data-Out) to a library with drives and cartridges: nothing
// panics, Written never exceeds Len, the status is GOOD or CHECK
// CONDITION with sense that fits TCMU's buffer, and afterwards every
// cartridge is in exactly one element.
func FuzzSMC(f *testing.F) {
	f.Add([]byte{0xb8, 0x10, 0, 0, 0xff, 0xff, 0x01, 0, 0x10, 0, 0, 0}, []byte{}, uint16(4096))
	f.Add([]byte{0xa5, 0, 0, 0, 0x10, 0, 0, 1, 0, 0, 0, 0}, []byte{}, uint16(0))
	f.Add([]byte{0xa6, 0, 0, 0, 0x10, 0, 0, 1, 0x10, 0, 0, 0}, []byte{}, uint16(0)) // EXCHANGE MEDIUM
	f.Add([]byte{0x4d, 0, 0x50, 0, 0, 0, 2, 0x10, 0, 0}, []byte{}, uint16(4096))    // LOG SENSE 10h from parameter 2
	f.Add([]byte{0x1a, 0x08, 0x3f, 0, 0xff, 0}, []byte{}, uint16(255))
	f.Add([]byte{0x15, 0x10, 0, 0, 12, 0}, []byte{0, 0, 0, 0, 0x0a, 10, 0x06, 0, 0, 0, 0, 0}, uint16(0))
	f.Add([]byte{0x37, 0x01, 0x10, 0, 0, 0, 0, 2, 0, 0}, []byte{}, uint16(0))
	f.Add([]byte{0x1b, 0, 0, 0x10, 0, 0}, []byte{}, uint16(0)) // OPEN IMPORT/EXPORT ELEMENT
	f.Add([]byte{0x1b, 0, 0, 0x10, 1, 0}, []byte{}, uint16(0)) // CLOSE
	barcodes := []string{"F00001", "F00002", "F00003"}
	l := newLab(f, "slots=3;mailslots=1;drives=tape0", barcodes...)
	f.Fuzz(func(t *testing.T, c []byte, out []byte, inLen uint16) {
		for range 2 {
			var buf *scsi.Buffer
			if len(out) > 0 {
				buf = scsi.NewBuffer(out)
			} else {
				buf = scsi.NewBuffer(make([]byte, int(inLen)/2), make([]byte, int(inLen)-int(inLen)/2))
			}
			r := l.c.HandleCommand(context.Background(), &scsi.Command{CDB: c, Data: buf})
			if buf.Written() > buf.Len() {
				t.Fatalf("% x: Written %d > Len %d", c, buf.Written(), buf.Len())
			}
			switch r.Status {
			case scsi.StatusGood:
			case scsi.StatusCheckCondition:
				if n := len(r.Sense.Append(nil)); n > scsi.SenseBufferSize {
					t.Fatalf("% x: sense of %d bytes", c, n)
				}
			default:
				t.Fatalf("% x: status %v", c, r.Status)
			}
		}
		inv := l.c.Inventory()
		got := inv.Barcodes()
		slices.Sort(got)
		if !slices.Equal(got, barcodes) {
			t.Fatalf("% x: cartridges %v", c, got)
		}
	})
}

// TestBadCDBs: malformed CDBs of supported commands are ILLEGAL REQUEST
// INVALID FIELD IN CDB, unsupported opcodes INVALID COMMAND OPERATION
// CODE.
func TestBadCDBs(t *testing.T) {
	l := newLab(t, "slots=2;mailslots=1;drives=tape0", "A00001")
	for _, c := range [][]byte{
		{0xa5, 0, 0, 0, 0x10, 0},                      // short MOVE MEDIUM
		{0xb8, 0x0f, 0, 0, 0, 1, 0, 0, 0, 64, 0, 0},   // element type 0Fh
		{0x12, 0x02, 0, 0, 36, 0},                     // CMDDT
		{0x12, 0x01, 0xc7, 0, 255, 0},                 // no such VPD page
		{0x1e, 0, 0, 0, 3, 0},                         // PREVENT 11b
		{0x1b, 0, 0, 0x10, 0x1f, 0},                   // OPEN/CLOSE, reserved action
		{0xa3, 0x05, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0},    // MAINTENANCE IN, another service action
		{0xa5, 0, 0, 0, 0x10, 0, 0, 1, 0, 0, 1, 0},    // INVERT
		{0x2b, 0, 0, 0, 0x10, 0, 0, 0, 1, 0},          // POSITION TO ELEMENT, INVERT
		{0x1a, 0, 0x05, 0, 255, 0},                    // no such mode page
		{0xa3, 0x0c, 0x07, 0, 0, 0, 0, 0, 1, 0, 0, 0}, // reserved reporting option
		{0x5a, 0, 0x3f, 0x05, 0, 0, 0, 0, 255, 0},     // 3Fh with a reserved subpage
		{0x15, 0x11, 0, 0, 4, 0},                      // MODE SELECT SP (saved pages)
	} {
		l.wantSense(c, scsi.IllegalRequest, scsi.InvalidFieldInCDB)
	}
	for _, op := range []byte{0x01, 0x08, 0x0a, 0x28, 0x88, 0xff} {
		l.wantSense([]byte{op, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, scsi.IllegalRequest, scsi.InvalidCommandOperationCode)
	}
	l.wantSense(nil, scsi.IllegalRequest, scsi.InvalidCommandOperationCode) // empty CDB: no opcode
}
