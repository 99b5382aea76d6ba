package tape

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func TestMemoryMedium(t *testing.T) {
	m, err := NewMemoryMedium(MediumInfo{Barcode: "M1", Capacity: []int64{1000}, EarlyWarning: []int64{100}})
	if err != nil {
		t.Fatal(err)
	}
	mustOK := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mustOK(errOf(m.WriteBlock(bytes.NewReader([]byte("hello")), 5, Encoding{})))
	mustOK(m.WriteMark(KindFilemark))
	mustOK(errOf(m.WriteBlock(bytes.NewReader([]byte("world!")), 6, Encoding{})))
	mustOK(m.WriteMark(KindSetmark))
	if p := m.Pos(); p.Object != 4 || p.File != 1 || p.Set != 1 {
		t.Fatalf("pos %+v", p)
	}
	if o, err := m.Peek(); err != nil || o.Kind != KindEOD {
		t.Fatalf("peek at EOD: %+v %v", o, err)
	}
	if err := m.Next(); !errors.Is(err, ErrEndOfData) {
		t.Fatalf("Next at EOD: %v", err)
	}
	if m.Used(0) != 11+4*MemoryObjectOverhead {
		t.Fatalf("used %d", m.Used(0))
	}
	mustOK(m.Locate(0, 2))
	if p := m.Pos(); p.Object != 2 || p.File != 1 {
		t.Fatalf("pos after locate %+v", p)
	}
	buf := make([]byte, 10)
	n, err := m.ReadAt(buf, 2)
	if n != 4 || err != io.EOF || string(buf[:4]) != "rld!" { //nolint:errorlint // io.ReaderAt's contract: io.EOF itself, unwrapped (callers compare with ==)
		t.Fatalf("ReadAt: %d %v %q", n, err, buf[:n])
	}
	o, err := m.Prev()
	if err != nil || o.Kind != KindFilemark {
		t.Fatalf("Prev: %+v %v", o, err)
	}
	if err := m.Locate(0, 99); !errors.Is(err, ErrEndOfData) || m.Pos().Object != 4 {
		t.Fatalf("Locate past EOD: %v %+v", err, m.Pos())
	}
	if err := m.Locate(1, 0); !errors.Is(err, ErrNoPartition) {
		t.Fatalf("Locate partition 1: %v", err)
	}
	// Truncation: a block written at object 1 discards the rest.
	mustOK(m.Locate(0, 1))
	mustOK(errOf(m.WriteBlock(bytes.NewReader([]byte("X")), 1, Encoding{})))
	if m.Used(0) != 6+2*MemoryObjectOverhead || m.Pos().Object != 2 {
		t.Fatalf("after truncation: used %d pos %+v", m.Used(0), m.Pos())
	}
	if o, _ := m.Peek(); o.Kind != KindEOD {
		t.Fatalf("after truncation: %+v", o)
	}
	// The physical end: nothing is written, nothing is truncated.
	mustOK(m.Locate(0, 0))
	if _, err := m.WriteBlock(bytes.NewReader(make([]byte, 1001)), 1001, Encoding{}); !errors.Is(err, ErrEndOfMedium) {
		t.Fatalf("oversize block: %v", err)
	}
	if m.Used(0) != 6+2*MemoryObjectOverhead {
		t.Fatalf("overflow changed the tape: used %d", m.Used(0))
	}
	// A short reader fails the write; end of data is at the position.
	if _, err := m.WriteBlock(bytes.NewReader([]byte("ab")), 5, Encoding{}); err == nil {
		t.Fatal("short reader accepted")
	}
	if o, _ := m.Peek(); o.Kind != KindEOD || m.Used(0) != 0 {
		t.Fatalf("after a failed write: %+v used %d", o, m.Used(0))
	}
	// Format into two partitions.
	mustOK(m.Format([]int64{300, 0}))
	info := m.Info()
	if info.Partitions != 2 || info.Capacity[1] != 700 || info.EarlyWarning[0] != 100 {
		t.Fatalf("after format: %+v", info)
	}
	if err := m.Format([]int64{2000}); err == nil {
		t.Fatal("format larger than the capacity accepted")
	}
	mustOK(m.SetAttribute(0x0800, []byte("v")))
	if v, ok := m.Attribute(0x0800); !ok || string(v) != "v" {
		t.Fatal("attribute")
	}
	mustOK(m.SetAttribute(0x0800, nil))
	if _, ok := m.Attribute(0x0800); ok {
		t.Fatal("attribute not deleted")
	}
	// Marks fill a cartridge too.
	if err := m.Locate(0, 0); !errors.Is(err, ErrEndOfData) {
		t.Fatalf("Locate at the EOD of an empty partition: %v", err)
	}
	var marks int
	for m.WriteMark(KindFilemark) == nil {
		marks++
	}
	if marks != 300/MemoryObjectOverhead {
		t.Fatalf("%d filemarks fit in 300 bytes", marks)
	}
	mustOK(m.Close())
	if _, err := m.Peek(); err == nil {
		t.Fatal("Peek after Close")
	}
}

func TestMemoryMediumProtection(t *testing.T) {
	wp, _ := NewMemoryMedium(MediumInfo{Capacity: []int64{1 << 20}, WriteProtected: true})
	if err := wp.WriteMark(KindFilemark); !errors.Is(err, ErrWriteProtected) {
		t.Fatalf("write protected: %v", err)
	}
	if err := wp.Erase(); !errors.Is(err, ErrWriteProtected) {
		t.Fatalf("erase write protected: %v", err)
	}
	worm, _ := NewMemoryMedium(MediumInfo{Capacity: []int64{1 << 20}, WORM: true})
	if err := worm.WriteMark(KindFilemark); err != nil {
		t.Fatal(err)
	}
	if err := worm.Locate(0, 0); err != nil {
		t.Fatal(err)
	}
	if err := worm.WriteMark(KindFilemark); !errors.Is(err, ErrWORMOverwrite) {
		t.Fatalf("WORM overwrite: %v", err)
	}
	if err := worm.Format([]int64{0}); !errors.Is(err, ErrWORMOverwrite) {
		t.Fatalf("WORM format: %v", err)
	}
	for _, bad := range []MediumInfo{{}, {Capacity: []int64{0}}, {Capacity: []int64{10}, EarlyWarning: []int64{10}}, {Capacity: make([]int64, 5)}} {
		if _, err := NewMemoryMedium(bad); err == nil {
			t.Errorf("NewMemoryMedium(%+v) accepted", bad)
		}
	}
}

func TestMemoryLibrary(t *testing.T) {
	lib, err := NewMemoryLibrary(MediumInfo{Capacity: []int64{1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := lib.Open("A")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Open("A"); err == nil {
		t.Fatal("opened twice")
	}
	if err := m.WriteMark(KindFilemark); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m, err = lib.Open("A")
	if err != nil {
		t.Fatal(err)
	}
	if m.Pos().Object != 0 {
		t.Fatal("reopened cartridge not at BOP")
	}
	if o, _ := m.Peek(); o.Kind != KindFilemark {
		t.Fatal("contents lost")
	}
	prepared, _ := NewMemoryMedium(MediumInfo{Barcode: "B", Capacity: []int64{1 << 20}, WriteProtected: true})
	if err := lib.Add(prepared); err != nil {
		t.Fatal(err)
	}
	b, err := lib.Open("B")
	if err != nil || !b.Info().WriteProtected {
		t.Fatalf("prepared cartridge: %v %+v", err, b.Info())
	}
	if err := lib.Add(prepared); err == nil {
		t.Fatal("replaced a cartridge in use")
	}
}

// errOf drops WriteBlock's stored size.
func errOf(_ int, err error) error { return err }
