package cartridge

import (
	"errors"
	"testing"

	"github.com/vscsid/vscsid/tape"
)

// WriteMarks writes what as many WriteMark calls would, across its
// 16,384-mark pwrites: the marks read back after a reopen, numbered, and
// SpaceFilemarks crosses them both ways.
func TestWriteMarks(t *testing.T) {
	m, _ := newCart(t, Options{Capacity: 64 << 20})
	g := newGen(3, 64)
	mustPut(t, m, g.block(16))
	const n = 40_000
	if got, err := m.WriteMarks(tape.KindFilemark, n); got != n || err != nil {
		t.Fatalf("WriteMarks(%d) = %d, %v", n, got, err)
	}
	mustPut(t, m, g.block(16))
	if p := m.Pos(); p.Object != n+2 || p.File != n {
		t.Fatalf("after the marks and a block: %+v", p)
	}
	// Back and forth beyond what the filemark index keeps (8,192), through
	// its checkpoints: filemark k is object k+1.
	if got, err := m.SpaceFilemarks(-30_000); got != 30_000 || err != nil || m.Pos().Object != 10_001 || m.Pos().File != 10_000 {
		t.Fatalf("SpaceFilemarks(-30000) = %d, %v at %+v, want before filemark 10000 (object 10001)", got, err, m.Pos())
	}
	if got, err := m.SpaceFilemarks(20_000); got != 20_000 || err != nil || m.Pos().Object != 30_001 || m.Pos().File != 30_000 {
		t.Fatalf("SpaceFilemarks(20000) = %d, %v at %+v, want after filemark 29999 (object 30001)", got, err, m.Pos())
	}
	m = reopen(t, m)
	if err := m.Locate(0, 1); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if o, err := m.Peek(); err != nil || o.Kind != tape.KindFilemark {
			t.Fatalf("object %d: %+v, %v", i+1, o, err)
		}
		if err := m.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := m.SpaceFilemarks(n - 3); got != n-3 || err != nil || m.Pos().Object != n+1 {
		t.Fatalf("SpaceFilemarks(%d) = %d, %v at %+v", n-3, got, err, m.Pos())
	}
	if o, err := m.Peek(); err != nil || o.Kind != tape.KindBlock {
		t.Fatalf("after the last mark: %+v, %v", o, err)
	}
	if got, err := m.SpaceFilemarks(-n - 1); got != n || !errors.Is(err, tape.ErrBeginningOfPart) || m.Pos().Object != 0 {
		t.Fatalf("back over all: %d, %v at %+v", got, err, m.Pos())
	}
}

// WriteMarks stops at the end of the medium with every mark before it
// written, and says how many.
func TestWriteMarksEndOfMedium(t *testing.T) {
	m, _ := newCart(t, Options{Capacity: MinPartitionSize})
	got, err := m.WriteMarks(tape.KindFilemark, 1<<24-1)
	if !errors.Is(err, tape.ErrEndOfMedium) || got == 0 || got >= 1<<24-1 {
		t.Fatalf("WriteMarks past the end: %d, %v", got, err)
	}
	m = reopen(t, m)
	if n, err := m.SpaceFilemarks(int64(got) + 1); n != int64(got) || !errors.Is(err, tape.ErrEndOfData) {
		t.Errorf("marks after a reopen: %d, %v; wrote %d", n, err, got)
	}
}

// BenchmarkWriteMarks: WRITE FILEMARKS of the largest count WRITE
// FILEMARKS(6) takes went out one pwrite per mark (56 s); per mark now.
func BenchmarkWriteMarks(b *testing.B) {
	m, _ := newCart(b, Options{Capacity: 4 << 30})
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Locate(0, 0); err != nil && !errors.Is(err, tape.ErrEndOfData) {
			b.Fatal(err)
		}
		if _, err := m.WriteMarks(tape.KindFilemark, 100_000); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100_000, "ns/mark")
}
