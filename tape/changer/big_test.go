package changer

import (
	"encoding/binary"
	"fmt"
	"testing"
)

// bigSlots is the most storage slots the generic model's address space
// holds: storage elements from 1000h to FFFFh (SMC element addresses are
// 16-bit).
const bigSlots = 0x10000 - 0x1000

// TestBigLibrary: a generic library with every storage address in use
// (61,440 slots) reports them all in one READ ELEMENT STATUS, as mtx asks
// (it reads storage in chunks of 10,000), moves a cartridge from its last
// slot to its first and back, and keeps the inventory across a restart.
func TestBigLibrary(t *testing.T) {
	l := newLab(t, fmt.Sprintf("slots=%d;mailslots=4", bigSlots), "BIG001L8")
	// The cartridge the lab created went into the first slot; move it to
	// the last.
	last := uint16(0x1000 + bigSlots - 1)
	l.ok(move(0x1000, last), 0)
	for _, chunk := range []struct{ start, n uint16 }{{0x1000, 10000}, {0x1000 + 50000, 10000}, {last - 4, 5}} {
		alloc := 8 + 8 + int(chunk.n)*52
		in := l.ok(res(2, true, chunk.start, chunk.n, false, alloc), alloc)
		n := int(binary.BigEndian.Uint16(in[2:]))
		want := min(int(chunk.n), int(last)-int(chunk.start)+1)
		if binary.BigEndian.Uint16(in) != chunk.start || n != want {
			t.Fatalf("RES from %#x: first %#x, %d elements, want %d", chunk.start, binary.BigEndian.Uint16(in), n, want)
		}
	}
	// The last descriptor is the full one.
	in := l.ok(res(2, true, last, 1, false, 64), 64)
	if binary.BigEndian.Uint16(in[16:]) != last || in[18]&0x01 == 0 || string(in[28:36]) != "BIG001L8" {
		t.Fatalf("last slot: % x", in[16:])
	}
	l.ok(move(last, 0x1000), 0)
	l.open() // restart: the inventory is read back
	in = l.ok(res(2, true, 0x1000, 1, false, 64), 64)
	if in[18]&0x01 == 0 || string(in[28:36]) != "BIG001L8" {
		t.Fatalf("first slot after a restart: % x", in[16:])
	}
	if _, err := ParseConfig(fmt.Sprintf("media=/x;slots=%d", bigSlots+1)); err == nil {
		t.Errorf("%d slots accepted: storage addresses past FFFFh", bigSlots+1)
	}
}

// BenchmarkLibraryStatus is READ ELEMENT STATUS of every storage element
// with its barcode (VOLTAG), as mtx status reads them (in chunks of at
// most 10,000), on libraries of 50, 5,000 and 61,440 slots with a
// cartridge in every slot.
func BenchmarkLibraryStatus(b *testing.B) {
	for _, slots := range []int{50, 5000, bigSlots} {
		b.Run(fmt.Sprintf("slots=%d", slots), func(b *testing.B) {
			l := newLab(b, fmt.Sprintf("slots=%d;cartridges=%d;first=B00001L8;capacity=4M", slots, min(slots, 5000)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for start := 0; start < slots; start += 10000 {
					n := min(10000, slots-start)
					l.ok(res(2, true, uint16(0x1000+start), uint16(n), false, 8+8+n*52), 8+8+n*52)
				}
			}
		})
	}
}

// BenchmarkLibraryMove is a MOVE MEDIUM between two slots of libraries of
// 50, 5,000 and 61,440 slots: the inventory is written and synced.
func BenchmarkLibraryMove(b *testing.B) {
	for _, slots := range []int{50, 5000, bigSlots} {
		b.Run(fmt.Sprintf("slots=%d", slots), func(b *testing.B) {
			l := newLab(b, fmt.Sprintf("slots=%d", slots), "BIG001L8")
			at, other := uint16(0x1000), uint16(0x1000+slots-1)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				l.ok(move(at, other), 0)
				at, other = other, at
			}
		})
	}
}
