package cartridge

import (
	"errors"
	"testing"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
)

// The benchmarks stream 256 KiB blocks the way the drive does: data
// arrives in a scsi.Buffer of 4 KiB segments (TCMU iovecs) and leaves with
// Buffer.WriteFromAt. They measure the page-cache path (no Sync).

const benchBlock = 256 << 10

func benchImage(b *testing.B) (*Image, *scsi.Buffer, [][]byte) {
	m, _ := newCart(b, Options{Capacity: 4 << 30})
	data := make([]byte, benchBlock)
	for i := range data {
		data[i] = byte(i * 7)
	}
	segs := segments(data, 4096)
	return m, scsi.NewBuffer(segs...), segs
}

// BenchmarkImageWrite256K rewinds every 1 GiB so the file stays bounded
// (the rewrite truncates: ftruncate of the last region).
func BenchmarkImageWrite256K(b *testing.B) {
	m, buf, segs := benchImage(b)
	const wrap = (1 << 30) / benchBlock
	b.SetBytes(benchBlock)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%wrap == 0 && i > 0 {
			if err := m.Locate(0, 0); err != nil {
				b.Fatal(err)
			}
		}
		buf.Reset(segs)
		if _, err := m.WriteBlock(buf, benchBlock, tape.Encoding{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkImageRead256K(b *testing.B) {
	m, buf, segs := benchImage(b)
	const blocks = 1024 // 256 MiB
	for range blocks {
		buf.Reset(segs)
		if _, err := m.WriteBlock(buf, benchBlock, tape.Encoding{}); err != nil {
			b.Fatal(err)
		}
	}
	if err := m.Locate(0, 0); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(benchBlock)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%blocks == 0 {
			if err := m.Locate(0, 0); err != nil {
				b.Fatal(err)
			}
		}
		o, err := m.Peek()
		if err != nil || o.Kind != tape.KindBlock {
			b.Fatal(o, err)
		}
		buf.Reset(segs)
		if _, err := buf.WriteFromAt(m, 0, o.Len); err != nil {
			b.Fatal(err)
		}
		if err := m.Next(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImageLocate measures a random LOCATE on a tape of 100k small
// objects once the index is warm.
func BenchmarkImageLocate(b *testing.B) {
	m, _ := newCart(b, Options{Capacity: 1 << 30})
	g := newGen(50, 1)
	o := g.block(512)
	data := o.content()
	for range 100_000 {
		buf := scsi.NewBuffer(data)
		if _, err := m.WriteBlock(buf, len(data), tape.Encoding{}); err != nil {
			b.Fatal(err)
		}
	}
	r := newGen(51, 1).r
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := m.Locate(0, r.Uint64N(100_000)); err != nil && !errors.Is(err, tape.ErrEndOfData) {
			b.Fatal(err)
		}
	}
}
