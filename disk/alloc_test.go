package disk_test

import (
	"context"
	"testing"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/scsi"
)

// The READ/WRITE path must not allocate: the target calls HandleCommand
// for every command with a reused Buffer.
func TestReadWriteDoNotAllocate(t *testing.T) {
	for _, cfg := range []string{"size=1G", "size=1G;mode=store;store_size=16M", "size=1G;pbexp=3;lowest_aligned=1;dsense=1"} {
		t.Run(cfg, func(t *testing.T) {
			c, _ := disk.ParseConfig(cfg)
			d, err := disk.New("alloc", c, nil)
			if err != nil {
				t.Fatal(err)
			}
			d.UA.Clear()
			seg := [][]byte{make([]byte, 2048), make([]byte, 2048)}
			buf := scsi.NewBuffer(seg...)
			ctx := context.Background()
			for _, cdb := range [][]byte{
				{0x28, 0, 0, 0, 0x10, 0, 0, 0, 8, 0},                      // READ(10)
				{0x2a, 0, 0, 0, 0x10, 0, 0, 0, 8, 0},                      // WRITE(10)
				{0x88, 0, 0, 0, 0, 0, 0, 0, 0x10, 3, 0, 0, 0, 8, 0, 0},    // READ(16), misaligned
				{0x8a, 0x08, 0, 0, 0, 0, 0, 0, 0x10, 3, 0, 0, 0, 8, 0, 0}, // WRITE(16) FUA, misaligned
				{0x28, 0, 0, 0x20, 0, 0, 0, 0, 1, 0},                      // LBA OUT OF RANGE
				{0x00, 0, 0, 0, 0, 0},                                     // TEST UNIT READY
				{0x35, 0, 0, 0, 0, 0, 0, 0, 0, 0},                         // SYNCHRONIZE CACHE
			} {
				cmd := &scsi.Command{CDB: cdb, Data: buf}
				d.HandleCommand(ctx, cmd) // first use may allocate the store chunk
				allocs := testing.AllocsPerRun(100, func() {
					buf.Reset(seg)
					d.HandleCommand(ctx, cmd)
				})
				if allocs != 0 {
					t.Errorf("% x: %.1f allocs per command", cdb, allocs)
				}
			}
		})
	}
}
