package cartridge

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/vscsid/vscsid/scsi"
)

// WRITE FILEMARKS and SPACE over filemarks with counts in the hundreds of
// thousands go through the image's batched marks and its filemark index,
// with the answers the one-by-one loop gave: GOOD, then BLANK CHECK at
// end of data and BOP detected, each with the count not done.
func TestDriveManyFilemarks(t *testing.T) {
	media := filepath.Join(t.TempDir(), "media")
	d := openDrive(t, media, "media="+media+";barcode=MANY01L8;personality=lto8")
	defer func() { _ = d.Close() }()
	run := func(cdb ...byte) scsi.Response {
		return d.HandleCommand(context.Background(), &scsi.Command{CDB: cdb, Data: scsi.NewBuffer()})
	}
	for range 4 { // the power-on and load attentions
		if r := run(0, 0, 0, 0, 0, 0); r.Status == scsi.StatusGood {
			break
		}
	}
	const n = 200_000
	u24 := func(v int) (byte, byte, byte) { return byte(v >> 16), byte(v >> 8), byte(v) }
	a, b, c := u24(n)
	if r := run(0x10, 0, a, b, c, 0); r.Status != scsi.StatusGood {
		t.Fatalf("WRITE FILEMARKS %d: %+v", n, r)
	}
	if r := run(0x01, 0, 0, 0, 0, 0); r.Status != scsi.StatusGood {
		t.Fatalf("REWIND: %+v", r)
	}
	a, b, c = u24(n - 1)
	if r := run(0x11, 1, a, b, c, 0); r.Status != scsi.StatusGood {
		t.Fatalf("SPACE %d filemarks: %+v", n-1, r)
	}
	if r := run(0x11, 1, 0, 0, 2, 0); r.Status != scsi.StatusCheckCondition || r.Sense.Key != scsi.BlankCheck ||
		r.Sense.ASC != scsi.EndOfDataDetected || !r.Sense.Valid || r.Sense.Info != 1 {
		t.Fatalf("SPACE 2 filemarks before the last: %+v, want BLANK CHECK 00/05 with 1 not spaced", r)
	}
	a, b, c = u24(-(n + 1) & 0xffffff)
	if r := run(0x11, 1, a, b, c, 0); r.Status != scsi.StatusCheckCondition || r.Sense.ASC != scsi.BeginningOfPartitionDetected ||
		!r.Sense.EOM || r.Sense.Info != 1 {
		t.Fatalf("SPACE -%d filemarks: %+v, want BOP detected with 1 not spaced", n+1, r)
	}
}
