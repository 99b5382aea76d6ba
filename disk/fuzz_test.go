package disk_test

import (
	"context"
	"testing"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/scsi"
)

// fuzzConfigs covers both backends, all block sizes, unaligned geometry,
// thin provisioning, write protect, descriptor sense, enforced limits and
// zoned disks (with gap zones and a last zone cut short).
var fuzzConfigs = []string{
	"size=1G",
	"size=64M;mode=store;store_size=256K;lbpu=1;lbpws=1;lbpws10=1;unmap_max_desc=8;unmap_max_blocks=100000",
	"size=1000000000;lbs=4096;pbexp=1;lowest_aligned=1;wp=1;dsense=1;max_blks=64;opt_blks=64",
	"size=4T;lbs=2048;mode=store;store_size=1M;lbpu=1;max_ws_blks=0",
	"blocks=1;lbs=1024;mode=store",
	"size=40M;mode=store;zoned=host-managed;zone_size=4M;zone_cap=3M;zone_max_open=2",
	"size=33M;zoned=host-aware;zone_size=8M;zone_cap=5M;zone_nr_conv=0",
	"size=64M;mode=store;zoned=host-managed",
}

// FuzzDisk feeds arbitrary CDB bytes, Data-Out and Data-In buffer shapes
// to HandleCommand. It must never panic, never claim more data than the
// buffer holds, and answer GOOD or CHECK CONDITION with valid sense; the
// disk must still answer afterwards.
func FuzzDisk(f *testing.F) {
	f.Add(uint8(0), []byte{0x28, 0, 0, 0, 0, 0, 0, 0, 8, 0}, []byte{}, uint16(4096), uint8(1))
	f.Add(uint8(1), []byte{0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0}, []byte{0, 22, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0}, uint16(0), uint8(0))
	f.Fuzz(func(t *testing.T, sel uint8, cdb, out []byte, inLen uint16, split uint8) {
		c, err := disk.ParseConfig(fuzzConfigs[int(sel)%len(fuzzConfigs)])
		if err != nil {
			t.Fatal(err)
		}
		d, err := disk.New("fuzz", c, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sel&0x80 != 0 {
			d.UA.Clear() // reach the commands, not only the unit attention
		}
		size := max(len(out), int(inLen))
		mem := make([]byte, size)
		copy(mem, out)
		for i := len(out); i < size; i++ {
			mem[i] = 0xee
		}
		// Up to four segments, cut where the fuzzer says.
		var segs [][]byte
		rest := mem
		for i := range int(split % 4) {
			cut := min(len(rest), int(split)*(i+7)%(len(rest)+1))
			segs = append(segs, rest[:cut])
			rest = rest[cut:]
		}
		segs = append(segs, rest)
		buf := scsi.NewBuffer(segs...)

		r := d.HandleCommand(context.Background(), &scsi.Command{CDB: cdb, Data: buf})
		check(t, cdb, r, buf)

		// The disk still works.
		buf = scsi.NewBuffer(make([]byte, 64))
		r = d.HandleCommand(context.Background(), &scsi.Command{CDB: scsi.CDB{0x12, 0, 0, 0, 64, 0}, Data: buf})
		if r.Status != scsi.StatusGood || buf.Written() != 64 {
			t.Fatalf("INQUIRY after % x: %+v, %d bytes", cdb, r, buf.Written())
		}
		r = d.HandleCommand(context.Background(), &scsi.Command{CDB: scsi.CDB{0x00, 0, 0, 0, 0, 0}, Data: scsi.NewBuffer()})
		check(t, cdb, r, buf)
	})
}

func check(t *testing.T, cdb []byte, r scsi.Response, buf *scsi.Buffer) {
	t.Helper()
	if buf.Written() > buf.Len() || buf.Consumed() > buf.Len() {
		t.Fatalf("% x: Written %d Consumed %d Len %d", cdb, buf.Written(), buf.Consumed(), buf.Len())
	}
	switch r.Status {
	case scsi.StatusConditionMet: // PRE-FETCH: the blocks fit the cache (SBC-4 5.10)
		if op := cdb[0]; op != 0x34 && op != 0x90 {
			t.Fatalf("% x: CONDITION MET from a command other than PRE-FETCH", cdb)
		}
		fallthrough
	case scsi.StatusGood:
		if r.Sense != (scsi.Sense{}) {
			t.Fatalf("% x: %v with sense %+v", cdb, r.Status, r.Sense)
		}
	case scsi.StatusCheckCondition:
		if r.Sense.Key == scsi.NoSense || r.Sense.ASC == 0 {
			t.Fatalf("% x: CHECK CONDITION without a sense key and ASC: %+v", cdb, r.Sense)
		}
		if n := len(r.Sense.Append(nil)); n > scsi.SenseBufferSize || n < 8 {
			t.Fatalf("% x: sense of %d bytes", cdb, n)
		}
		if p := r.Sense.Pointer; p.Valid && p.CDB && int(p.Field) >= len(cdb) {
			t.Fatalf("% x: field pointer %d past the CDB", cdb, p.Field)
		}
	default:
		t.Fatalf("% x: status %v", cdb, r.Status)
	}
}
