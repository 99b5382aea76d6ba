package scsi_test

import (
	"bytes"
	"testing"

	"github.com/vscsid/vscsid/scsi"
)

// area is a data area of n pages full of stale bytes, and a tracked
// buffer over pages [first, first+count) of it.
func tracked(area []byte, z *scsi.ZeroPages, first, count int) *scsi.Buffer {
	off := first * scsi.ZeroPageSize
	b := &scsi.Buffer{}
	b.ResetTracked([][]byte{area[off : off+count*scsi.ZeroPageSize]}, []int{off}, z)
	return b
}

func stale(n int) []byte { return bytes.Repeat([]byte{0xa5}, n*scsi.ZeroPageSize) }

func TestZeroPagesFillSkipsKnownPages(t *testing.T) {
	area := stale(8)
	z := scsi.NewZeroPages(len(area))
	b := tracked(area, z, 0, 4)
	if n := b.WriteZeros(4 * scsi.ZeroPageSize); n != 4*scsi.ZeroPageSize {
		t.Fatalf("WriteZeros = %d", n)
	}
	b.Settle()
	if !allZero(area[:4*scsi.ZeroPageSize]) || area[4*scsi.ZeroPageSize] != 0xa5 {
		t.Fatal("fill did not zero exactly its pages")
	}
	for p := range 8 {
		if z.Known(p*scsi.ZeroPageSize) != (p < 4) {
			t.Errorf("page %d known %v", p, p >= 4)
		}
	}
	// The second fill of the same pages writes nothing.
	b = tracked(area, z, 0, 4)
	b.WriteZeros(4 * scsi.ZeroPageSize)
	b.Settle()
	if skipped, filled := z.FillStats(); skipped != 4*scsi.ZeroPageSize || filled != 4*scsi.ZeroPageSize {
		t.Errorf("skipped %d filled %d, want one page set each", skipped, filled)
	}
	if b.Written() != 4*scsi.ZeroPageSize {
		t.Errorf("Written %d after a skipped fill", b.Written())
	}
}

func TestZeroPagesPartialFillNotKnown(t *testing.T) {
	area := stale(2)
	z := scsi.NewZeroPages(len(area))
	b := tracked(area, z, 0, 2)
	b.WriteZeros(scsi.ZeroPageSize + 512) // page 0 whole, 512 bytes of page 1
	b.Settle()
	if !z.Known(0) || z.Known(scsi.ZeroPageSize) {
		t.Fatalf("known: page 0 %v page 1 %v", z.Known(0), z.Known(scsi.ZeroPageSize))
	}
	if area[scsi.ZeroPageSize+511] != 0 || area[scsi.ZeroPageSize+512] != 0xa5 {
		t.Fatal("partial fill wrote the wrong bytes")
	}
}

func TestZeroPagesForgotten(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmd  func(b *scsi.Buffer)
		want []bool // known after, pages 0..3
	}{
		{"Data-In write forgets what it touches", func(b *scsi.Buffer) {
			b.WriteZeros(scsi.ZeroPageSize)
			_, _ = b.Write([]byte{1}) // first byte of page 1
		}, []bool{true, false, true, true}},
		{"WriteFromAt forgets what it touches", func(b *scsi.Buffer) {
			_, _ = b.WriteFromAt(bytes.NewReader(make([]byte, 9000)), 0, 9000)
		}, []bool{false, false, false, true}},
		{"Data-Out consumed forgets every page", func(b *scsi.Buffer) {
			b.Discard(512)
		}, []bool{false, false, false, false}},
		{"Data-Out consumed after a fill forgets every page", func(b *scsi.Buffer) {
			b.WriteZeros(scsi.ZeroPageSize)
			b.Discard(512)
		}, []bool{false, false, false, false}},
		{"a command that wrote nothing forgets every page", func(*scsi.Buffer) {
		}, []bool{false, false, false, false}},
		{"a pure zero fill keeps them", func(b *scsi.Buffer) {
			b.WriteZeros(2 * scsi.ZeroPageSize)
		}, []bool{true, true, true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			area := stale(4)
			z := scsi.NewZeroPages(len(area))
			b := tracked(area, z, 0, 4)
			b.WriteZeros(4 * scsi.ZeroPageSize)
			b.Settle()
			b = tracked(area, z, 0, 4)
			tc.cmd(b)
			b.Settle()
			for p, want := range tc.want {
				if got := z.Known(p * scsi.ZeroPageSize); got != want {
					t.Errorf("page %d known %v, want %v", p, got, want)
				}
			}
		})
	}
}

// TestZeroPagesForgetAcrossWords forgets a range spanning several bitmap
// words, edge pages included.
func TestZeroPagesForgetAcrossWords(t *testing.T) {
	const pages = 200
	area := stale(pages)
	z := scsi.NewZeroPages(len(area))
	b := tracked(area, z, 0, pages)
	b.WriteZeros(len(area))
	b.Settle()
	b = tracked(area, z, 0, pages)
	b.WriteZeros(63 * scsi.ZeroPageSize)
	_, _ = b.Write(make([]byte, 70*scsi.ZeroPageSize+1)) // pages 63..133
	b.WriteZeros(len(area))
	b.Settle()
	for p := range pages {
		want := p < 63 || p > 133
		if z.Known(p*scsi.ZeroPageSize) != want {
			t.Fatalf("page %d known %v, want %v", p, !want, want)
		}
	}
}

func TestUntrackedBufferSettles(t *testing.T) {
	b := scsi.NewBuffer(make([]byte, 10))
	b.Settle() // no ZeroPages: nothing to do, no panic
	if n := b.WriteZeros(20); n != 10 {
		t.Fatalf("WriteZeros = %d", n)
	}
}

func allZero(p []byte) bool {
	for _, c := range p {
		if c != 0 {
			return false
		}
	}
	return true
}
