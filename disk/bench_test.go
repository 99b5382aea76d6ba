package disk_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/scsi"
)

func benchDisk(b *testing.B, cfg string) *disk.Disk {
	b.Helper()
	c, err := disk.ParseConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	d, err := disk.New("bench", c, nil)
	if err != nil {
		b.Fatal(err)
	}
	d.UA.Clear()
	return d
}

var benchModes = []struct{ name, cfg string }{
	{"fake_rw", "size=1G"},
	{"store", "size=1G;mode=store"},
}

// BenchmarkRead4K is one 4 KiB READ(10) through HandleCommand into a
// single-segment buffer, as the target delivers it.
func BenchmarkRead4K(b *testing.B) {
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			d := benchDisk(b, m.cfg)
			seg := [][]byte{make([]byte, 4096)}
			buf := scsi.NewBuffer(seg...)
			cmd := &scsi.Command{CDB: scsi.CDB{0x28, 0, 0, 0, 0x10, 0, 0, 0, 8, 0}, Data: buf}
			if m.name == "store" { // read written data, not holes
				w := &scsi.Command{CDB: scsi.CDB{0x2a, 0, 0, 0, 0x10, 0, 0, 0, 8, 0}, Data: buf}
				d.HandleCommand(context.Background(), w)
			}
			ctx := context.Background()
			b.SetBytes(4096)
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset(seg)
				if r := d.HandleCommand(ctx, cmd); r.Status != scsi.StatusGood {
					b.Fatal(r)
				}
			}
		})
	}
}

// BenchmarkWrite4K is one 4 KiB WRITE(10).
func BenchmarkWrite4K(b *testing.B) {
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			d := benchDisk(b, m.cfg)
			seg := [][]byte{make([]byte, 4096)}
			buf := scsi.NewBuffer(seg...)
			cmd := &scsi.Command{CDB: scsi.CDB{0x2a, 0, 0, 0, 0x10, 0, 0, 0, 8, 0}, Data: buf}
			ctx := context.Background()
			b.SetBytes(4096)
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset(seg)
				if r := d.HandleCommand(ctx, cmd); r.Status != scsi.StatusGood {
					b.Fatal(r)
				}
			}
		})
	}
}

// BenchmarkRead1M is the largest command tcm_loop sends: 1 MiB in 256
// 4 KiB segments (tcm_loop's max_sectors and 256-entry sg_tablesize, as the
// VM harness sees it).
func BenchmarkRead1M(b *testing.B) {
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			d := benchDisk(b, m.cfg)
			seg := make([][]byte, 256)
			for i := range seg {
				seg[i] = make([]byte, 4096)
			}
			buf := scsi.NewBuffer(seg...)
			cmd := &scsi.Command{CDB: scsi.CDB{0x28, 0, 0, 0, 0, 0, 0, 0x08, 0, 0}, Data: buf}
			ctx := context.Background()
			b.SetBytes(1 << 20)
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset(seg)
				if r := d.HandleCommand(ctx, cmd); r.Status != scsi.StatusGood {
					b.Fatal(r)
				}
			}
		})
	}
}

// BenchmarkHandOver is what a planned restart adds for a RAM store disk
// with 64 MiB written: SaveHandOver in the old daemon and LoadHandOver in
// the new, through memory (the memory file's own copy is the kernel's
// page cache, of the same order). SetBytes makes it a rate: the pause a
// restart adds per GiB written.
func BenchmarkHandOver(b *testing.B) {
	const cfg = "size=64M;mode=store"
	d := benchDisk(b, cfg)
	seg := make([]byte, 1<<20)
	for i := range seg {
		seg[i] = byte(i)
	}
	for lba := uint32(0); lba < 64<<20/512; lba += 2048 {
		cdb := scsi.CDB{0x2a, 0, byte(lba >> 24), byte(lba >> 16), byte(lba >> 8), byte(lba), 0, 0x08, 0, 0}
		if r := d.HandleCommand(context.Background(), &scsi.Command{CDB: cdb, Data: scsi.NewBuffer(seg)}); r.Status != scsi.StatusGood {
			b.Fatalf("write at %d: %+v", lba, r)
		}
	}
	var state bytes.Buffer
	b.SetBytes(64 << 20)
	b.ResetTimer()
	for b.Loop() {
		state.Reset()
		if err := d.SaveHandOver(&state); err != nil {
			b.Fatal(err)
		}
		next := benchDisk(b, cfg)
		if err := next.LoadHandOver(&state); err != nil {
			b.Fatal(err)
		}
	}
}
